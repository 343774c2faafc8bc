-- Disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- Create "new_api_keys" table
CREATE TABLE `new_api_keys` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `key_hash` text NOT NULL, `prefix` text NOT NULL, `label` text NOT NULL DEFAULT (''), `scopes` json NOT NULL, `last_used_at` datetime NULL, `expires_at` datetime NULL, `revoked_at` datetime NULL, `rate_limit_per_minute` integer NULL, `rate_limit_per_hour` integer NULL, `user_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `api_keys_users_api_keys` FOREIGN KEY (`user_id`) REFERENCES `users` (`id`) ON DELETE NO ACTION);
-- Copy rows from old table "api_keys" to new temporary table "new_api_keys"
-- Keys made before scopes existed may do everything, as they could.
INSERT INTO `new_api_keys` (`id`, `created_at`, `updated_at`, `key_hash`, `prefix`, `scopes`, `last_used_at`, `revoked_at`, `user_id`) SELECT `id`, `created_at`, `updated_at`, `key_hash`, `prefix`, '["read","write"]', `last_used_at`, `revoked_at`, `user_id` FROM `api_keys`;
-- Drop "api_keys" table after copying rows
DROP TABLE `api_keys`;
-- Rename temporary table "new_api_keys" to "api_keys"
ALTER TABLE `new_api_keys` RENAME TO `api_keys`;
-- Create index "api_keys_key_hash_key" to table: "api_keys"
CREATE UNIQUE INDEX `api_keys_key_hash_key` ON `api_keys` (`key_hash`);
-- Create "new_users" table
CREATE TABLE `new_users` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `email` text NOT NULL, `name` text NOT NULL, `role` text NOT NULL DEFAULT ('user'), `disabled` bool NOT NULL DEFAULT (false), PRIMARY KEY (`id`));
-- Copy rows from old table "users" to new temporary table "new_users"
INSERT INTO `new_users` (`id`, `created_at`, `updated_at`, `email`, `name`, `role`) SELECT `id`, `created_at`, `updated_at`, `email`, `name`, `role` FROM `users`;
-- Drop "users" table after copying rows
DROP TABLE `users`;
-- Rename temporary table "new_users" to "users"
ALTER TABLE `new_users` RENAME TO `users`;
-- Create index "users_email_key" to table: "users"
CREATE UNIQUE INDEX `users_email_key` ON `users` (`email`);
-- Enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;
