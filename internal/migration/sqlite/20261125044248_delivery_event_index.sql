-- Create index "delivery_event_id" to table: "deliveries"
CREATE INDEX `delivery_event_id` ON `deliveries` (`event_id`);
