-- Create index "user_role" to table: "users"
CREATE INDEX "user_role" ON "users" ("role");
-- Create index "webhookendpoint_user_id_created_at_id" to table: "webhook_endpoints"
CREATE INDEX "webhookendpoint_user_id_created_at_id" ON "webhook_endpoints" ("user_id", "created_at", "id");
