"""Partner webhooks: signed, ordered deliveries of every change, their log, and redelivery."""
