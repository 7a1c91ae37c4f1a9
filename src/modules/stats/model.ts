import { t } from 'elysia'
import { PERIODS } from '../../analytics/stats'
import { FreeForm, Int, Meta } from '../../plugins/errors'
import { Domain } from '../links/model'

export const StatsQuery = t.Object({
  period: t.Optional(
    t.Union([t.Literal(PERIODS[0]), t.Literal(PERIODS[1]), t.Literal(PERIODS[2]), t.Literal(PERIODS[3])], {
      default: '7D',
      description: '24H (24 hourly buckets), 7D or 30D (daily buckets), ALL (daily, or monthly past ~3 months); default 7D',
    }),
  ),
  domain: t.Optional(Domain),
  include_bots: t.Optional(t.Boolean({ default: false, description: 'Count clicks flagged as bots too (left out by default)' })),
})

const Count = <K extends string>(key: K, description: string) =>
  t.Array(t.Object({ [key]: t.String(), clicks: Int() } as { [P in K]: ReturnType<typeof t.String> } & { clicks: ReturnType<typeof Int> }), {
    description,
  })

export const StatsData = t.Object(
  {
    alias: t.String(),
    domain: t.String(),
    created_at: t.Union([t.String({ format: 'date-time' }), t.Null()]),
    total_clicks: Int({ description: 'Clicks in the period (humans only unless include_bots=true)' }),
    last_clicked_at: t.Union([t.String({ format: 'date-time' }), t.Null()], { description: 'Newest click in the period' }),
    period: t.String({ description: '24H, 7D, 30D or ALL' }),
    bucket: t.String({ description: 'Width of a timeseries bucket: hour, day or month' }),
    timeseries: t.Array(t.Object({ date: t.String({ format: 'date-time' }), clicks: Int() }), {
      description: 'Every bucket of the period, oldest first, empty buckets as 0; date is the bucket start (UTC)',
    }),
    countries: Count('country', 'Top 10 ISO country codes (empty when unknown)'),
    referrers: Count('referrer', 'Top 10 referrer hosts (empty string: direct)'),
    devices: Count('device', 'Top 10 device types'),
    browsers: Count('browser', 'Top 10 browsers'),
    os: Count('os', 'Top 10 operating systems'),
    routingStats: t.Array(FreeForm(), {
      description:
        "One item per route: each routing rule and A/B variant configured now, the default (the link's own URL), and any route clicked in the period: {route (rule:<id>, ab:<id>, default), kind (rule, variant, default), url (null when no longer configured), clicks, leads, sales, conversions}; bots left out, conversions counted through their click",
    }),
    routingSummary: FreeForm('{rules (count), ab: {status, winner_by, ends_at, winner, variants (count)} or null, routed_clicks, default_clicks}'),
    conversions: t.Optional(
      t.Array(t.Object({ type: t.String(), currency: t.Union([t.String(), t.Null()]), count: Int(), value: t.Number() }), {
        description: 'Conversions of the period by type and currency (currency null: reported without a value)',
      }),
    ),
    revenue: t.Optional(
      t.Array(t.Object({ currency: t.String(), gross: t.Number(), refunds: t.Number(), net: t.Number() }), {
        description: 'Per currency: gross of every non-refund conversion, refunds (positive values), net = gross - refunds',
      }),
    ),
  },
  { additionalProperties: true },
)

export const StatsResponse = t.Object(
  { success: t.Boolean(), data: StatsData, meta: Meta },
  {
    examples: [
      {
        success: true,
        data: {
          alias: 'spring-sale',
          domain: 'sho.rt',
          created_at: '2026-03-01T09:00:00.000Z',
          total_clicks: 42,
          last_clicked_at: '2026-03-07T18:12:45.120Z',
          period: '7D',
          bucket: 'day',
          timeseries: [
            { date: '2026-03-01T00:00:00.000Z', clicks: 10 },
            { date: '2026-03-02T00:00:00.000Z', clicks: 0 },
            { date: '2026-03-03T00:00:00.000Z', clicks: 5 },
            { date: '2026-03-04T00:00:00.000Z', clicks: 7 },
            { date: '2026-03-05T00:00:00.000Z', clicks: 0 },
            { date: '2026-03-06T00:00:00.000Z', clicks: 12 },
            { date: '2026-03-07T00:00:00.000Z', clicks: 8 },
          ],
          countries: [
            { country: 'US', clicks: 30 },
            { country: 'DE', clicks: 12 },
          ],
          referrers: [
            { referrer: 'news.ycombinator.com', clicks: 25 },
            { referrer: '', clicks: 17 },
          ],
          devices: [
            { device: 'desktop', clicks: 28 },
            { device: 'mobile', clicks: 14 },
          ],
          browsers: [
            { browser: 'Chrome', clicks: 30 },
            { browser: 'Firefox', clicks: 12 },
          ],
          os: [
            { os: 'Windows', clicks: 20 },
            { os: 'macOS', clicks: 22 },
          ],
          routingStats: [
            { route: 'rule:r1', kind: 'rule', url: 'https://apps.apple.com/app/id123', clicks: 14, leads: 2, sales: 0, conversions: 2 },
            { route: 'ab:a', kind: 'variant', url: 'https://example.com/a', clicks: 13, leads: 3, sales: 1, conversions: 4 },
            { route: 'ab:b', kind: 'variant', url: 'https://example.com/b', clicks: 15, leads: 1, sales: 0, conversions: 1 },
            { route: 'default', kind: 'default', url: 'https://example.com/launch', clicks: 0, leads: 0, sales: 0, conversions: 0 },
          ],
          routingSummary: { rules: 1, ab: { status: 'running', winner_by: 'leads', ends_at: '2026-03-31T00:00:00.000Z', winner: null, variants: 2 }, routed_clicks: 42, default_clicks: 0 },
          conversions: [
            { type: 'purchase', currency: 'EUR', count: 3, value: 149.7 },
            { type: 'refund', currency: 'EUR', count: 1, value: 49.9 },
            { type: 'signup', currency: null, count: 5, value: 0 },
          ],
          revenue: [{ currency: 'EUR', gross: 149.7, refunds: 49.9, net: 99.8 }],
        },
        meta: { account_type: 'pro', include_bots: false, notices: [] },
      },
    ],
  },
)

export const statsModels = { StatsResponse }
