-- Drop index "event_seq" from table: "events"
DROP INDEX "event_seq";
-- Modify "events" table
ALTER TABLE "events" ADD COLUMN "xid" bigint NOT NULL DEFAULT 0;
-- Create index "event_xid_seq" to table: "events"
CREATE UNIQUE INDEX "event_xid_seq" ON "events" ("xid", "seq");
-- The sequence writers take seqs from (ent/schema/itemevents.go), past the last one the counter gave;
-- the events already there keep xid 0, so that they come first, in their seq order
CREATE SEQUENCE "events_seq" AS bigint;
SELECT setval('events_seq', GREATEST(COALESCE((SELECT CAST("value" AS bigint) FROM "settings" WHERE "id" = 'event_seq'), 0), COALESCE((SELECT MAX("seq") FROM "events"), 0)) + 1, false);
-- The counter is SQLite's alone from now on
DELETE FROM "settings" WHERE "id" = 'event_seq';
