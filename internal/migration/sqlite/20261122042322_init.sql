-- Create "api_keys" table
CREATE TABLE `api_keys` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `key_hash` text NOT NULL, `prefix` text NOT NULL, `last_used_at` datetime NULL, `revoked_at` datetime NULL, `user_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `api_keys_users_api_keys` FOREIGN KEY (`user_id`) REFERENCES `users` (`id`) ON DELETE NO ACTION);
-- Create index "api_keys_key_hash_key" to table: "api_keys"
CREATE UNIQUE INDEX `api_keys_key_hash_key` ON `api_keys` (`key_hash`);
-- Create "deliveries" table
CREATE TABLE `deliveries` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `state` text NOT NULL DEFAULT ('pending'), `attempts` integer NOT NULL DEFAULT (0), `next_attempt_at` datetime NOT NULL, `claimed_until` datetime NULL, `last_status_code` integer NULL, `last_error` text NULL, `last_duration_ms` integer NULL, `event_id` text NOT NULL, `endpoint_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `deliveries_events_deliveries` FOREIGN KEY (`event_id`) REFERENCES `events` (`id`) ON DELETE NO ACTION, CONSTRAINT `deliveries_webhook_endpoints_deliveries` FOREIGN KEY (`endpoint_id`) REFERENCES `webhook_endpoints` (`id`) ON DELETE NO ACTION);
-- Create index "delivery_state_next_attempt_at" to table: "deliveries"
CREATE INDEX `delivery_state_next_attempt_at` ON `deliveries` (`state`, `next_attempt_at`);
-- Create index "delivery_endpoint_id_created_at" to table: "deliveries"
CREATE INDEX `delivery_endpoint_id_created_at` ON `deliveries` (`endpoint_id`, `created_at`);
-- Create "events" table
CREATE TABLE `events` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `type` text NOT NULL, `user_id` text NOT NULL, `item_id` text NOT NULL, `data` text NOT NULL, `dispatched_at` datetime NULL, PRIMARY KEY (`id`));
-- Create index "event_dispatched_at_created_at" to table: "events"
CREATE INDEX `event_dispatched_at_created_at` ON `events` (`dispatched_at`, `created_at`);
-- Create "items" table
CREATE TABLE `items` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `name` text NOT NULL, `description` text NOT NULL DEFAULT (''), `status` text NOT NULL DEFAULT ('active'), `user_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `items_users_items` FOREIGN KEY (`user_id`) REFERENCES `users` (`id`) ON DELETE NO ACTION);
-- Create index "item_created_at_id" to table: "items"
CREATE INDEX `item_created_at_id` ON `items` (`created_at`, `id`);
-- Create index "item_updated_at_id" to table: "items"
CREATE INDEX `item_updated_at_id` ON `items` (`updated_at`, `id`);
-- Create index "item_name_id" to table: "items"
CREATE INDEX `item_name_id` ON `items` (`name`, `id`);
-- Create index "item_user_id_created_at_id" to table: "items"
CREATE INDEX `item_user_id_created_at_id` ON `items` (`user_id`, `created_at`, `id`);
-- Create index "item_user_id_updated_at_id" to table: "items"
CREATE INDEX `item_user_id_updated_at_id` ON `items` (`user_id`, `updated_at`, `id`);
-- Create index "item_user_id_name_id" to table: "items"
CREATE INDEX `item_user_id_name_id` ON `items` (`user_id`, `name`, `id`);
-- Create "settings" table
CREATE TABLE `settings` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `value` text NOT NULL, PRIMARY KEY (`id`));
-- Create "users" table
CREATE TABLE `users` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `email` text NOT NULL, `name` text NOT NULL, `role` text NOT NULL DEFAULT ('user'), PRIMARY KEY (`id`));
-- Create index "users_email_key" to table: "users"
CREATE UNIQUE INDEX `users_email_key` ON `users` (`email`);
-- Create "webhook_endpoints" table
CREATE TABLE `webhook_endpoints` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `url` text NOT NULL, `description` text NOT NULL DEFAULT (''), `events` json NOT NULL, `secret` text NOT NULL, `previous_secret` text NULL, `previous_secret_expires_at` datetime NULL, `active` bool NOT NULL DEFAULT (true), `user_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `webhook_endpoints_users_webhook_endpoints` FOREIGN KEY (`user_id`) REFERENCES `users` (`id`) ON DELETE NO ACTION);
