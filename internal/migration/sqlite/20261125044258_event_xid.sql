-- Disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- Create "new_events" table
CREATE TABLE `new_events` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `type` text NOT NULL, `user_id` text NOT NULL, `item_id` text NOT NULL, `data` text NOT NULL, `xid` integer NOT NULL DEFAULT (0), `seq` integer NOT NULL, `dispatched_at` datetime NULL, PRIMARY KEY (`id`));
-- Copy rows from old table "events" to new temporary table "new_events"
INSERT INTO `new_events` (`id`, `created_at`, `updated_at`, `type`, `user_id`, `item_id`, `data`, `seq`, `dispatched_at`) SELECT `id`, `created_at`, `updated_at`, `type`, `user_id`, `item_id`, `data`, `seq`, `dispatched_at` FROM `events`;
-- Drop "events" table after copying rows
DROP TABLE `events`;
-- Rename temporary table "new_events" to "events"
ALTER TABLE `new_events` RENAME TO `events`;
-- Create index "event_dispatched_at_created_at" to table: "events"
CREATE INDEX `event_dispatched_at_created_at` ON `events` (`dispatched_at`, `created_at`);
-- Create index "event_xid_seq" to table: "events"
CREATE UNIQUE INDEX `event_xid_seq` ON `events` (`xid`, `seq`);
-- Enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;
