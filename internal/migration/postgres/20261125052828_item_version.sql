-- Modify "items" table
ALTER TABLE "items" ADD COLUMN "version" bigint NOT NULL DEFAULT 1;
