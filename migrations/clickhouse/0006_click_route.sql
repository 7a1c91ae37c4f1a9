-- The route of each click of a routed link (docs/routing.md): rule:<id> when a rule chose the
-- destination, ab:<id> for an A/B test's variant, default otherwise. Rows written before routing
-- existed read the default, so they count as the link's own destination.
ALTER TABLE clicks_v1 ADD COLUMN IF NOT EXISTS route LowCardinality(String) DEFAULT 'default' COMMENT 'how the destination was chosen: rule:<id>, ab:<variant id> or default' AFTER utm_content;
