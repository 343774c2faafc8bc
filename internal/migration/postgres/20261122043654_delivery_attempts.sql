-- Create "delivery_attempts" table
CREATE TABLE "delivery_attempts" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "number" bigint NOT NULL, "status_code" bigint NULL, "error" character varying NOT NULL DEFAULT '', "duration_ms" bigint NOT NULL, "delivery_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "delivery_attempts_deliveries_attempt_log" FOREIGN KEY ("delivery_id") REFERENCES "deliveries" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- Create index "deliveryattempt_delivery_id_number" to table: "delivery_attempts"
CREATE INDEX "deliveryattempt_delivery_id_number" ON "delivery_attempts" ("delivery_id", "number");
