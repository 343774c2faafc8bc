-- Create "audit_events" table
CREATE TABLE "audit_events" ("id" character varying NOT NULL, "actor_id" character varying NULL, "action" character varying NOT NULL, "target_id" character varying NOT NULL, "changes" jsonb NOT NULL, "request_id" character varying NULL, "created_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- Create index "auditevent_action_created_at_id" to table: "audit_events"
CREATE INDEX "auditevent_action_created_at_id" ON "audit_events" ("action", "created_at", "id");
-- Create index "auditevent_actor_id_created_at_id" to table: "audit_events"
CREATE INDEX "auditevent_actor_id_created_at_id" ON "audit_events" ("actor_id", "created_at", "id");
-- Create index "auditevent_created_at_id" to table: "audit_events"
CREATE INDEX "auditevent_created_at_id" ON "audit_events" ("created_at", "id");
