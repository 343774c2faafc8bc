-- Create "delivery_attempts" table
CREATE TABLE `delivery_attempts` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `number` integer NOT NULL, `status_code` integer NULL, `error` text NOT NULL DEFAULT (''), `duration_ms` integer NOT NULL, `delivery_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `delivery_attempts_deliveries_attempt_log` FOREIGN KEY (`delivery_id`) REFERENCES `deliveries` (`id`) ON DELETE NO ACTION);
-- Create index "deliveryattempt_delivery_id_number" to table: "delivery_attempts"
CREATE INDEX `deliveryattempt_delivery_id_number` ON `delivery_attempts` (`delivery_id`, `number`);
