-- Create "item_counts" table
CREATE TABLE `item_counts` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `user_id` text NOT NULL, `status` text NOT NULL, `count` integer NOT NULL DEFAULT (0));
-- Create index "itemcount_user_id_status" to table: "item_counts"
CREATE UNIQUE INDEX `itemcount_user_id_status` ON `item_counts` (`user_id`, `status`);
-- Backfill the counters from the items already there
INSERT INTO "item_counts" ("user_id", "status", "count") SELECT "user_id", "status", COUNT(*) FROM "items" GROUP BY "user_id", "status";
