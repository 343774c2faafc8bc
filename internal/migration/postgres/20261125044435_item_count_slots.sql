-- Drop index "itemcount_user_id_status" from table: "item_counts"
DROP INDEX "itemcount_user_id_status";
-- Modify "item_counts" table: slot, one of the rows that share a count (the counters there become slot 0)
ALTER TABLE "item_counts" ADD COLUMN "slot" bigint NOT NULL DEFAULT 0;
-- Create index "itemcount_user_id_status_slot" to table: "item_counts"
CREATE UNIQUE INDEX "itemcount_user_id_status_slot" ON "item_counts" ("user_id", "status", "slot");
