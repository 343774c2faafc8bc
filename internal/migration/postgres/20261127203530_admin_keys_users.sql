-- Modify "api_keys" table
ALTER TABLE "api_keys" ADD COLUMN "label" character varying NOT NULL DEFAULT '', ADD COLUMN "scopes" jsonb NOT NULL DEFAULT '["read","write"]', ADD COLUMN "expires_at" timestamptz NULL, ADD COLUMN "rate_limit_per_minute" bigint NULL, ADD COLUMN "rate_limit_per_hour" bigint NULL;
-- Keys made before scopes existed may do everything, as they could; new
-- rows get theirs from ent, as the schema has no column default.
ALTER TABLE "api_keys" ALTER COLUMN "scopes" DROP DEFAULT;
-- Modify "users" table
ALTER TABLE "users" ADD COLUMN "disabled" boolean NOT NULL DEFAULT false;
