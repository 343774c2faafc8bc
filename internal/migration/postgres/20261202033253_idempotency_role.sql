-- Modify "idempotency_keys" table
ALTER TABLE "idempotency_keys" ADD COLUMN "role" character varying NULL;
-- Drop the records whose response was kept sealed (anything but JSON): one
-- may hold a secret (a new API key's, a webhook's), which records no longer
-- keep. A retry of such a request runs as a new one.
DELETE FROM idempotency_keys WHERE body IS NOT NULL AND body NOT LIKE '{%';
