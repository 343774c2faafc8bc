-- Create index "delivery_endpoint_id_claimed_until" to table: "deliveries"
CREATE INDEX "delivery_endpoint_id_claimed_until" ON "deliveries" ("endpoint_id", "claimed_until");
-- Create index "delivery_endpoint_id_state_next_attempt_at" to table: "deliveries"
CREATE INDEX "delivery_endpoint_id_state_next_attempt_at" ON "deliveries" ("endpoint_id", "state", "next_attempt_at");
-- Modify "webhook_endpoints" table
ALTER TABLE "webhook_endpoints" ADD COLUMN "consecutive_failures" bigint NOT NULL DEFAULT 0, ADD COLUMN "backoff_until" timestamptz NULL;
