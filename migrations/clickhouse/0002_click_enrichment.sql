-- Enriched clicks: what the click encoder derives from the request and the destination, off the
-- response path (core/clicks.ts, core/enrich*.ts). Adding columns with defaults is not a
-- breaking change, so clicks_v1 grows in place; rows written before this read the defaults.
ALTER TABLE clicks_v1 ADD COLUMN IF NOT EXISTS device_type LowCardinality(String) DEFAULT '' COMMENT 'desktop, mobile, tablet, bot or other, from the user agent' AFTER country;
ALTER TABLE clicks_v1 ADD COLUMN IF NOT EXISTS browser LowCardinality(String) DEFAULT '' COMMENT 'browser family from the user agent (ua-parser-js 1.x), or empty' AFTER device_type;
ALTER TABLE clicks_v1 ADD COLUMN IF NOT EXISTS os LowCardinality(String) DEFAULT '' COMMENT 'operating system family from the user agent, or empty' AFTER browser;
ALTER TABLE clicks_v1 ADD COLUMN IF NOT EXISTS is_bot UInt8 DEFAULT 0 COMMENT '1 when the user agent is a crawler, unfurler, monitor or HTTP library; stored, left out of statistics by default' AFTER os;
ALTER TABLE clicks_v1 ADD COLUMN IF NOT EXISTS bot_reason LowCardinality(String) DEFAULT '' COMMENT 'what made it a bot: the matched user-agent token, or empty-user-agent' AFTER is_bot;
ALTER TABLE clicks_v1 ADD COLUMN IF NOT EXISTS referrer_host LowCardinality(String) DEFAULT '' COMMENT 'lowercased host of an http(s) Referer, empty when absent or invalid' AFTER bot_reason;
ALTER TABLE clicks_v1 ADD COLUMN IF NOT EXISTS utm_source String DEFAULT '' COMMENT 'utm_source of the destination at click time' AFTER referrer_host;
ALTER TABLE clicks_v1 ADD COLUMN IF NOT EXISTS utm_medium String DEFAULT '' COMMENT 'utm_medium of the destination at click time' AFTER utm_source;
ALTER TABLE clicks_v1 ADD COLUMN IF NOT EXISTS utm_campaign String DEFAULT '' COMMENT 'utm_campaign of the destination at click time' AFTER utm_medium;
ALTER TABLE clicks_v1 ADD COLUMN IF NOT EXISTS utm_term String DEFAULT '' COMMENT 'utm_term of the destination at click time' AFTER utm_campaign;
ALTER TABLE clicks_v1 ADD COLUMN IF NOT EXISTS utm_content String DEFAULT '' COMMENT 'utm_content of the destination at click time' AFTER utm_term;
ALTER TABLE clicks_v1 COMMENT COLUMN country 'ISO 3166 alpha-2 from a trusted CDN header, else from the client IP (ip-location-db, data NRO CC BY 4.0), or empty';
