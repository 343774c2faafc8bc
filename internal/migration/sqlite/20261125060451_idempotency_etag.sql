-- Add column "etag" to table: "idempotency_keys"
ALTER TABLE `idempotency_keys` ADD COLUMN `etag` text NULL;
