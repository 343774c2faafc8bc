-- Modify "events" table
ALTER TABLE "events" ADD COLUMN "trace_parent" character varying NULL;
