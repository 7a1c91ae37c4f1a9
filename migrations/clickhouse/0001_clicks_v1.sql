-- One row per counted redirect (GET; HEAD is not counted). Sorted by link then time: every statistics
-- query filters on one link and a time range. Inserts carry insert_deduplication_token (one per frozen
-- batch), and the window below keeps enough block hashes for a retried batch to be dropped, not doubled.
CREATE TABLE IF NOT EXISTS clicks_v1
(
    click_id   String                   COMMENT 'unique id of the click (mu_click on Pro links)',
    link_id    String                   COMMENT 'link_… id from Postgres',
    domain     LowCardinality(String)   COMMENT 'domain that served the redirect',
    alias      String                   COMMENT 'alias as requested',
    timestamp  DateTime64(3, 'UTC')     COMMENT 'time the redirect was served, UTC',
    referrer   String                   COMMENT 'Referer header, truncated to 1024 characters',
    user_agent String                   COMMENT 'User-Agent header, truncated to 512 characters',
    ip_hash    String                   COMMENT 'keyed SHA-256 of the client IP (hex, 128 bits); never the IP itself',
    country    LowCardinality(String)   COMMENT 'ISO 3166 alpha-2 from a trusted CDN header, or empty'
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(timestamp)
ORDER BY (link_id, timestamp, click_id)
SETTINGS non_replicated_deduplication_window = 10000
