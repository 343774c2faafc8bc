-- Modify "idempotency_keys" table
ALTER TABLE "idempotency_keys" ADD COLUMN "etag" character varying NULL;
