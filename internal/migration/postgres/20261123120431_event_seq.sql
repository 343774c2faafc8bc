-- Modify "events" table: seq, the commit order event feeds resume from
ALTER TABLE "events" ADD COLUMN "seq" bigint NULL;
-- Backfill the events already there in the order they were written
UPDATE "events" SET "seq" = o."seq" FROM (SELECT "id", ROW_NUMBER() OVER (ORDER BY "created_at", "id") AS "seq" FROM "events") AS o WHERE "events"."id" = o."id";
ALTER TABLE "events" ALTER COLUMN "seq" SET NOT NULL;
-- Create index "event_seq" to table: "events"
CREATE UNIQUE INDEX "event_seq" ON "events" ("seq");
-- The counter writers take seqs from (ent/schema/itemevents.go), from the last one given
INSERT INTO "settings" ("id", "created_at", "updated_at", "value") SELECT 'event_seq', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, CAST(COALESCE(MAX("seq"), 0) AS text) FROM "events";
