-- The audit trail of Agents (DESIGN.md "Machine access"): one row per at_ call, REST or MCP, refused
-- ones included, written by src/modules/audit/recorder.ts in batches from its spool on disk. Append-only:
-- nothing updates or deletes a row. Sorted for the one read there is: one Agent's events, newest first,
-- paged by (at, id). Each batch carries insert_deduplication_token (the name of its spool segment), and
-- the window below keeps enough block hashes for a retried or replayed batch to be dropped, not doubled.
-- ReplacingMergeTree on a key that ends in the event id also collapses a copy that slipped past the
-- window, at merge time; reads pick one row per id (LIMIT 1 BY id) until then.
-- Never stored: bodies, query strings, tokens or the client address (only its keyed hash).
CREATE TABLE IF NOT EXISTS agent_audit_v1
(
    id          String                          COMMENT 'aud_… id of the event, assigned when it is spooled',
    account_id  String                          COMMENT 'acct_… id of the account the Agent belongs to (reads are scoped by it)',
    agent_id    String                          COMMENT 'agt_… id of the Agent whose at_ token made the call',
    at          DateTime64(3, 'UTC')            COMMENT 'time the call arrived, UTC',
    via         LowCardinality(String)          COMMENT 'rest or mcp',
    operation   LowCardinality(String)          COMMENT 'operation named for policy (links.create, …) or the MCP tool; empty when none applies',
    method      LowCardinality(String)          COMMENT 'HTTP method of the call',
    path        String                          COMMENT 'URL path of the call without its query string, at most 1024 characters',
    status      UInt16                          COMMENT 'HTTP status answered (202 when held for approval)',
    outcome     LowCardinality(String)          COMMENT 'ok, held, refused or error (src/modules/audit/model.ts)',
    scopes_used Array(LowCardinality(String))   COMMENT 'scopes the route requires: those the call used, or lacked when refused',
    approval_id String                          COMMENT 'apr_… id of the approval that holds or ran the call; empty when none',
    dry_run     UInt8                           COMMENT '1 when the call asked for dry_run=true (nothing was written)',
    duration_ms Float64                         COMMENT 'time from arrival to the answer, milliseconds',
    ip_hash     String                          COMMENT 'keyed SHA-256 of the client IP (hex, 128 bits, IP_HASH_SECRET as clicks); never the IP itself'
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(at)
ORDER BY (account_id, agent_id, at, id)
SETTINGS non_replicated_deduplication_window = 10000
