-- Create "idempotency_keys" table
CREATE TABLE `idempotency_keys` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `user_id` text NOT NULL, `key` text NOT NULL, `fingerprint` text NOT NULL, `state` text NOT NULL, `claim` text NOT NULL, `status` integer NULL, `body` text NULL, `location` text NULL, `created_at` datetime NOT NULL, `claimed_at` datetime NOT NULL, `expires_at` datetime NOT NULL);
-- Create index "idempotencykey_user_id_key" to table: "idempotency_keys"
CREATE UNIQUE INDEX `idempotencykey_user_id_key` ON `idempotency_keys` (`user_id`, `key`);
-- Create index "idempotencykey_expires_at" to table: "idempotency_keys"
CREATE INDEX `idempotencykey_expires_at` ON `idempotency_keys` (`expires_at`);
