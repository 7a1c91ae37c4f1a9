-- Mirror of the Postgres conversions table for analytics (DESIGN.md "Conversions"). Postgres stays the
-- source of truth (unique keys, duplicate and conflict answers, revenueForLink); this copy is written
-- after the Postgres insert commits, once per new conversion, with insert_deduplication_token = the
-- conversion id, so a retried write is dropped by the window below. ReplacingMergeTree on the sort key
-- (which ends in conversion_id) also collapses a copy that slips past the window, at merge time (FINAL).
-- value is Decimal(24, 6), the precision of Postgres numeric(24, 6): sums are exact, as in revenue.ts.
CREATE TABLE IF NOT EXISTS conversions_v1
(
    conversion_id   String                 COMMENT 'cv_… id from Postgres (also the insert_deduplication_token)',
    link_id         String                 COMMENT 'link_… id from Postgres: the link of the click',
    click_id        String                 COMMENT 'click id (mu_click) the conversion is attributed to',
    account_id      String                 COMMENT 'acct id from Postgres: owner of the link',
    conversion_type LowCardinality(String) COMMENT 'lower-cased conversionType: purchase, signup, lead, sale, refund, …',
    value           Decimal(24, 6)         COMMENT 'reported value, always >= 0 (a refund too); 0 when none was reported',
    currency        LowCardinality(String) COMMENT 'ISO 4217 code, upper case; empty when none was reported',
    is_refund       UInt8                  COMMENT '1 when conversion_type is refund: its value is subtracted from revenue',
    occurred_at     DateTime64(3, 'UTC')   COMMENT 'time of the conversion (occurredAt, default receipt time), UTC',
    created_at      DateTime64(3, 'UTC')   COMMENT 'time the service recorded it in Postgres, UTC'
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (link_id, occurred_at, conversion_id)
SETTINGS non_replicated_deduplication_window = 10000
