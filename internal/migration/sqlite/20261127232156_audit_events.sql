-- Create "audit_events" table
CREATE TABLE `audit_events` (`id` text NOT NULL, `actor_id` text NULL, `action` text NOT NULL, `target_id` text NOT NULL, `changes` json NOT NULL, `request_id` text NULL, `created_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- Create index "auditevent_created_at_id" to table: "audit_events"
CREATE INDEX `auditevent_created_at_id` ON `audit_events` (`created_at`, `id`);
-- Create index "auditevent_actor_id_created_at_id" to table: "audit_events"
CREATE INDEX `auditevent_actor_id_created_at_id` ON `audit_events` (`actor_id`, `created_at`, `id`);
-- Create index "auditevent_action_created_at_id" to table: "audit_events"
CREATE INDEX `auditevent_action_created_at_id` ON `audit_events` (`action`, `created_at`, `id`);
