-- LiveKit webhook events already applied, so a replayed event changes nothing twice.
CREATE TABLE livekit_events (
    id           TEXT PRIMARY KEY NOT NULL,
    event        TEXT NOT NULL,
    received_at  TEXT NOT NULL
);
