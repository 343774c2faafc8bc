-- Disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- Create "new_items" table
CREATE TABLE `new_items` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `name` text NOT NULL, `description` text NOT NULL DEFAULT (''), `status` text NOT NULL DEFAULT ('active'), `version` integer NOT NULL DEFAULT (1), `user_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `items_users_items` FOREIGN KEY (`user_id`) REFERENCES `users` (`id`) ON DELETE NO ACTION);
-- Copy rows from old table "items" to new temporary table "new_items"
INSERT INTO `new_items` (`id`, `created_at`, `updated_at`, `name`, `description`, `status`, `user_id`) SELECT `id`, `created_at`, `updated_at`, `name`, `description`, `status`, `user_id` FROM `items`;
-- Drop "items" table after copying rows
DROP TABLE `items`;
-- Rename temporary table "new_items" to "items"
ALTER TABLE `new_items` RENAME TO `items`;
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
-- Enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;
