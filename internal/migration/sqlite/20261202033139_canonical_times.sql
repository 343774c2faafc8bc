-- Times on SQLite were the text of Go's time.String() ("2026-12-02
-- 00:57:12.394196 +0000 UTC", with " m=+1.5" when the value carried a
-- monotonic reading, in the value's zone) or CURRENT_TIMESTAMP's
-- ("2026-12-02 00:57:12"), which do not sort as the times they name. Every
-- time column is rewritten in the one form the server writes from now on
-- (internal/database/sqlitetime.go): RFC 3339 in UTC with six fractional
-- digits, 2026-12-02T00:57:12.394196Z. Each distinct text is parsed once, in
-- steps: the fraction after the seconds, then the zone, which SQLite's
-- strftime applies; a text it cannot read is left as it was.
CREATE TEMP TABLE `canonical_times` (`old` text NOT NULL PRIMARY KEY, `rest` text NULL, `frac` text NULL, `zone` text NULL, `new` text NULL);
INSERT INTO `canonical_times` (`old`) SELECT `v` FROM (
  SELECT `created_at` AS `v` FROM `api_keys`
  UNION SELECT `updated_at` FROM `api_keys`
  UNION SELECT `last_used_at` FROM `api_keys`
  UNION SELECT `expires_at` FROM `api_keys`
  UNION SELECT `revoked_at` FROM `api_keys`
  UNION SELECT `created_at` FROM `audit_events`
  UNION SELECT `created_at` FROM `deliveries`
  UNION SELECT `updated_at` FROM `deliveries`
  UNION SELECT `next_attempt_at` FROM `deliveries`
  UNION SELECT `claimed_until` FROM `deliveries`
  UNION SELECT `created_at` FROM `delivery_attempts`
  UNION SELECT `updated_at` FROM `delivery_attempts`
  UNION SELECT `created_at` FROM `events`
  UNION SELECT `updated_at` FROM `events`
  UNION SELECT `dispatched_at` FROM `events`
  UNION SELECT `created_at` FROM `idempotency_keys`
  UNION SELECT `claimed_at` FROM `idempotency_keys`
  UNION SELECT `expires_at` FROM `idempotency_keys`
  UNION SELECT `created_at` FROM `items`
  UNION SELECT `updated_at` FROM `items`
  UNION SELECT `created_at` FROM `settings`
  UNION SELECT `updated_at` FROM `settings`
  UNION SELECT `created_at` FROM `users`
  UNION SELECT `updated_at` FROM `users`
  UNION SELECT `created_at` FROM `webhook_endpoints`
  UNION SELECT `updated_at` FROM `webhook_endpoints`
  UNION SELECT `previous_secret_expires_at` FROM `webhook_endpoints`
  UNION SELECT `backoff_until` FROM `webhook_endpoints`
) WHERE `v` IS NOT NULL;
-- After "YYYY-MM-DD HH:MM:SS": ".fraction" (any number of digits), then
-- " +hhmm ZONE[ m=...]", "+hh:mm", "Z" or nothing (UTC).
UPDATE `canonical_times` SET `rest` = substr(`old`, 20);
UPDATE `canonical_times` SET `frac` = CASE WHEN substr(`rest`, 1, 1) = '.' THEN substr(`rest`, 2, length(`rest`) - 1 - length(ltrim(substr(`rest`, 2), '0123456789'))) ELSE '' END;
UPDATE `canonical_times` SET `zone` = ltrim(CASE WHEN substr(`rest`, 1, 1) = '.' THEN substr(`rest`, length(`frac`) + 2) ELSE `rest` END);
UPDATE `canonical_times` SET `zone` = CASE WHEN `zone` = '' OR substr(`zone`, 1, 1) = 'Z' THEN 'Z' WHEN substr(`zone`, 4, 1) = ':' THEN substr(`zone`, 1, 6) ELSE substr(`zone`, 1, 3) || ':' || substr(`zone`, 4, 2) END;
UPDATE `canonical_times` SET `new` = strftime('%Y-%m-%dT%H:%M:%S', substr(`old`, 1, 19) || `zone`) || '.' || substr(`frac` || '000000', 1, 6) || 'Z';
UPDATE `api_keys` SET
  `created_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `api_keys`.`created_at`), `created_at`),
  `updated_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `api_keys`.`updated_at`), `updated_at`),
  `last_used_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `api_keys`.`last_used_at`), `last_used_at`),
  `expires_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `api_keys`.`expires_at`), `expires_at`),
  `revoked_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `api_keys`.`revoked_at`), `revoked_at`);
UPDATE `audit_events` SET
  `created_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `audit_events`.`created_at`), `created_at`);
UPDATE `deliveries` SET
  `created_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `deliveries`.`created_at`), `created_at`),
  `updated_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `deliveries`.`updated_at`), `updated_at`),
  `next_attempt_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `deliveries`.`next_attempt_at`), `next_attempt_at`),
  `claimed_until` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `deliveries`.`claimed_until`), `claimed_until`);
UPDATE `delivery_attempts` SET
  `created_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `delivery_attempts`.`created_at`), `created_at`),
  `updated_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `delivery_attempts`.`updated_at`), `updated_at`);
UPDATE `events` SET
  `created_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `events`.`created_at`), `created_at`),
  `updated_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `events`.`updated_at`), `updated_at`),
  `dispatched_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `events`.`dispatched_at`), `dispatched_at`);
UPDATE `idempotency_keys` SET
  `created_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `idempotency_keys`.`created_at`), `created_at`),
  `claimed_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `idempotency_keys`.`claimed_at`), `claimed_at`),
  `expires_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `idempotency_keys`.`expires_at`), `expires_at`);
UPDATE `items` SET
  `created_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `items`.`created_at`), `created_at`),
  `updated_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `items`.`updated_at`), `updated_at`);
UPDATE `settings` SET
  `created_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `settings`.`created_at`), `created_at`),
  `updated_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `settings`.`updated_at`), `updated_at`);
UPDATE `users` SET
  `created_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `users`.`created_at`), `created_at`),
  `updated_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `users`.`updated_at`), `updated_at`);
UPDATE `webhook_endpoints` SET
  `created_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `webhook_endpoints`.`created_at`), `created_at`),
  `updated_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `webhook_endpoints`.`updated_at`), `updated_at`),
  `previous_secret_expires_at` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `webhook_endpoints`.`previous_secret_expires_at`), `previous_secret_expires_at`),
  `backoff_until` = coalesce((SELECT `new` FROM `canonical_times` WHERE `old` = `webhook_endpoints`.`backoff_until`), `backoff_until`);
DROP TABLE `canonical_times`;
