-- Per-link hourly rollup of clicks_v1, one row per (link, hour, bot flag, breakdown, value). Statistics
-- read this instead of the raw rows: a link with 10 M clicks over 90 days is ~200 k rollup rows rather
-- than 10 M, which is what keeps the stats endpoint under 200 ms on two cores. Filled by the
-- materialized view on every insert into clicks_v1; hourly so 24H is exact.
CREATE TABLE IF NOT EXISTS clicks_hourly_v1
(
    link_id    String                                              COMMENT 'link_… id, as in clicks_v1',
    hour       DateTime('UTC')                                     COMMENT 'start of the hour of the clicks, UTC',
    is_bot     UInt8                                               COMMENT '1 for clicks flagged as bots',
    dim        LowCardinality(String)                              COMMENT 'total, countries, referrers, devices, browsers or os',
    value      String                                              COMMENT 'the breakdown value (country code, referrer host, …); empty for total',
    clicks     SimpleAggregateFunction(sum, UInt64)                COMMENT 'clicks in the hour with this value',
    last_click SimpleAggregateFunction(max, DateTime64(3, 'UTC'))  COMMENT 'newest click in the hour with this value'
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (link_id, hour, dim, value, is_bot)
-- With deduplicate_blocks_in_dependent_materialized_views = 1 on the insert, a retried clicks_v1 batch
-- (same insert_deduplication_token) is dropped here too, as it is in clicks_v1.
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS clicks_hourly_mv_v1 TO clicks_hourly_v1 AS
SELECT link_id, toStartOfHour(timestamp) AS hour, is_bot, d.1 AS dim, d.2 AS value,
       count() AS clicks, max(timestamp) AS last_click
FROM clicks_v1
ARRAY JOIN [('total', ''), ('countries', toString(country)), ('referrers', referrer_host),
            ('devices', toString(device_type)), ('browsers', toString(browser)), ('os', toString(os))] AS d
GROUP BY link_id, hour, is_bot, dim, value;

-- Backfill the clicks stored before the view existed; only into an empty rollup, so a rerun adds nothing.
INSERT INTO clicks_hourly_v1
SELECT link_id, toStartOfHour(timestamp) AS hour, is_bot, d.1 AS dim, d.2 AS value,
       count() AS clicks, max(timestamp) AS last_click
FROM clicks_v1
ARRAY JOIN [('total', ''), ('countries', toString(country)), ('referrers', referrer_host),
            ('devices', toString(device_type)), ('browsers', toString(browser)), ('os', toString(os))] AS d
WHERE (SELECT count() FROM clicks_hourly_v1) = 0
GROUP BY link_id, hour, is_bot, dim, value;
