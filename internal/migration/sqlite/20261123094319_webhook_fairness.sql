-- Disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- Create index "delivery_endpoint_id_state_next_attempt_at" to table: "deliveries"
CREATE INDEX `delivery_endpoint_id_state_next_attempt_at` ON `deliveries` (`endpoint_id`, `state`, `next_attempt_at`);
-- Create index "delivery_endpoint_id_claimed_until" to table: "deliveries"
CREATE INDEX `delivery_endpoint_id_claimed_until` ON `deliveries` (`endpoint_id`, `claimed_until`);
-- Create "new_webhook_endpoints" table
CREATE TABLE `new_webhook_endpoints` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `url` text NOT NULL, `description` text NOT NULL DEFAULT (''), `events` json NOT NULL, `secret` text NOT NULL, `previous_secret` text NULL, `previous_secret_expires_at` datetime NULL, `active` bool NOT NULL DEFAULT (true), `consecutive_failures` integer NOT NULL DEFAULT (0), `backoff_until` datetime NULL, `user_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `webhook_endpoints_users_webhook_endpoints` FOREIGN KEY (`user_id`) REFERENCES `users` (`id`) ON DELETE NO ACTION);
-- Copy rows from old table "webhook_endpoints" to new temporary table "new_webhook_endpoints"
INSERT INTO `new_webhook_endpoints` (`id`, `created_at`, `updated_at`, `url`, `description`, `events`, `secret`, `previous_secret`, `previous_secret_expires_at`, `active`, `user_id`) SELECT `id`, `created_at`, `updated_at`, `url`, `description`, `events`, `secret`, `previous_secret`, `previous_secret_expires_at`, `active`, `user_id` FROM `webhook_endpoints`;
-- Drop "webhook_endpoints" table after copying rows
DROP TABLE `webhook_endpoints`;
-- Rename temporary table "new_webhook_endpoints" to "webhook_endpoints"
ALTER TABLE `new_webhook_endpoints` RENAME TO `webhook_endpoints`;
-- Enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;
