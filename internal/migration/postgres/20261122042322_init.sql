-- Create "settings" table
CREATE TABLE "settings" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "value" text NOT NULL, PRIMARY KEY ("id"));
-- Create "users" table
CREATE TABLE "users" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "email" character varying NOT NULL, "name" character varying NOT NULL, "role" character varying NOT NULL DEFAULT 'user', PRIMARY KEY ("id"));
-- Create index "users_email_key" to table: "users"
CREATE UNIQUE INDEX "users_email_key" ON "users" ("email");
-- Create "api_keys" table
CREATE TABLE "api_keys" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "key_hash" character varying NOT NULL, "prefix" character varying NOT NULL, "last_used_at" timestamptz NULL, "revoked_at" timestamptz NULL, "user_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "api_keys_users_api_keys" FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- Create index "api_keys_key_hash_key" to table: "api_keys"
CREATE UNIQUE INDEX "api_keys_key_hash_key" ON "api_keys" ("key_hash");
-- Create "events" table
CREATE TABLE "events" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "type" character varying NOT NULL, "user_id" character varying NOT NULL, "item_id" character varying NOT NULL, "data" text NOT NULL, "dispatched_at" timestamptz NULL, PRIMARY KEY ("id"));
-- Create index "event_dispatched_at_created_at" to table: "events"
CREATE INDEX "event_dispatched_at_created_at" ON "events" ("dispatched_at", "created_at");
-- Create "webhook_endpoints" table
CREATE TABLE "webhook_endpoints" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "url" text NOT NULL, "description" character varying NOT NULL DEFAULT '', "events" jsonb NOT NULL, "secret" character varying NOT NULL, "previous_secret" character varying NULL, "previous_secret_expires_at" timestamptz NULL, "active" boolean NOT NULL DEFAULT true, "user_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "webhook_endpoints_users_webhook_endpoints" FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- Create "deliveries" table
CREATE TABLE "deliveries" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "state" character varying NOT NULL DEFAULT 'pending', "attempts" bigint NOT NULL DEFAULT 0, "next_attempt_at" timestamptz NOT NULL, "claimed_until" timestamptz NULL, "last_status_code" bigint NULL, "last_error" character varying NULL, "last_duration_ms" bigint NULL, "event_id" character varying NOT NULL, "endpoint_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "deliveries_events_deliveries" FOREIGN KEY ("event_id") REFERENCES "events" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION, CONSTRAINT "deliveries_webhook_endpoints_deliveries" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- Create index "delivery_endpoint_id_created_at" to table: "deliveries"
CREATE INDEX "delivery_endpoint_id_created_at" ON "deliveries" ("endpoint_id", "created_at");
-- Create index "delivery_state_next_attempt_at" to table: "deliveries"
CREATE INDEX "delivery_state_next_attempt_at" ON "deliveries" ("state", "next_attempt_at");
-- Create "items" table
CREATE TABLE "items" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "name" character varying NOT NULL, "description" text NOT NULL DEFAULT '', "status" character varying NOT NULL DEFAULT 'active', "user_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "items_users_items" FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- Create index "item_created_at_id" to table: "items"
CREATE INDEX "item_created_at_id" ON "items" ("created_at", "id");
-- Create index "item_name_id" to table: "items"
CREATE INDEX "item_name_id" ON "items" ("name", "id");
-- Create index "item_updated_at_id" to table: "items"
CREATE INDEX "item_updated_at_id" ON "items" ("updated_at", "id");
-- Create index "item_user_id_created_at_id" to table: "items"
CREATE INDEX "item_user_id_created_at_id" ON "items" ("user_id", "created_at", "id");
-- Create index "item_user_id_name_id" to table: "items"
CREATE INDEX "item_user_id_name_id" ON "items" ("user_id", "name", "id");
-- Create index "item_user_id_updated_at_id" to table: "items"
CREATE INDEX "item_user_id_updated_at_id" ON "items" ("user_id", "updated_at", "id");
