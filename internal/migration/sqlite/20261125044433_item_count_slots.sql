-- Disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- Create "new_item_counts" table
CREATE TABLE `new_item_counts` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `user_id` text NOT NULL, `status` text NOT NULL, `slot` integer NOT NULL DEFAULT (0), `count` integer NOT NULL DEFAULT (0));
-- Copy rows from old table "item_counts" to new temporary table "new_item_counts" (the counters there become slot 0)
INSERT INTO `new_item_counts` (`id`, `user_id`, `status`, `count`) SELECT `id`, `user_id`, `status`, `count` FROM `item_counts`;
-- Drop "item_counts" table after copying rows
DROP TABLE `item_counts`;
-- Rename temporary table "new_item_counts" to "item_counts"
ALTER TABLE `new_item_counts` RENAME TO `item_counts`;
-- Create index "itemcount_user_id_status_slot" to table: "item_counts"
CREATE UNIQUE INDEX `itemcount_user_id_status_slot` ON `item_counts` (`user_id`, `status`, `slot`);
-- Enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;
