-- Outgoing webhooks: endpoints per user and the outbox of deliveries.
--
-- An endpoint's signing secret is never stored: it is derived from the instance key and
-- the endpoint's random `secret_nonce`, shown once when the endpoint is made.
CREATE TABLE webhook_endpoints (
    id             BLOB PRIMARY KEY NOT NULL,
    owner_id       BLOB NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    url            TEXT NOT NULL,
    description    TEXT NOT NULL,
    events         TEXT NOT NULL,
    secret_nonce   BLOB NOT NULL,
    status         TEXT NOT NULL,
    failing_since  TEXT,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);
CREATE INDEX webhook_endpoints_owner ON webhook_endpoints(owner_id, created_at);

-- One event for one endpoint, written in the same transaction as the change it tells
-- of, then delivered (and retried) from here. `payload` is the exact body, so every
-- attempt sends and signs the same bytes.
CREATE TABLE webhook_deliveries (
    id               BLOB PRIMARY KEY NOT NULL,
    endpoint_id      BLOB NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
    event_id         TEXT NOT NULL,
    event_type       TEXT NOT NULL,
    payload          TEXT NOT NULL,
    status           TEXT NOT NULL,
    attempts         INTEGER NOT NULL,
    next_attempt_at  TEXT NOT NULL,
    locked_until     TEXT,
    last_status      INTEGER,
    last_error       TEXT,
    created_at       TEXT NOT NULL,
    delivered_at     TEXT
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(status, next_attempt_at);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries(endpoint_id, created_at);
