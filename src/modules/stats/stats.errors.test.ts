// GET /api/v1/links/{alias}/stats refused: Free (403 with basic totals), bad parameters, another
// account's or an unknown link, and tokens that are not an API key.
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, newGuestToken, show } from '../../../test/support/api'
import { newAccount } from '../../../test/support/fixtures'
import { api, createLink, DAY, insertClicks, setUp } from '../../../test/support/suites/stats'

beforeAll(setUp, 60_000) // the engines start in-process: seconds, more on a busy machine

describe('GET /api/v1/links/{alias}/stats: Free and errors', () => {
  test('Free: 403 STATS_REQUIRES_PRO with basic totals (all time, humans) in data and upgrade_url', async () => {
    const free = await newAccount(api.deps.db)
    const link = await createLink(api.app, free)
    await insertClicks(link.id, [{}, { msAgo: 60 * DAY }, { is_bot: 1 }])
    const res = await call(api.app, 'GET', `/api/v1/links/${link.alias}/stats`, { token: free.key })
    expect(res.status, show(res)).toBe(403)
    expect(res.body).toMatchObject({ success: false, error: 'STATS_REQUIRES_PRO', upgrade_url: 'https://api.sho.rt/api/v1/account/upgrade' })
    expect(res.body.data).toMatchObject({ alias: link.alias, domain: 'sho.rt', total_clicks: 2 })
    expect(typeof res.body.data.last_clicked_at).toBe('string')
    expect(res.body.data.timeseries).toBeUndefined()
    expect(res.body.meta.account_type).toBe('free')
  })

  test('bad period or include_bots: 400 VALIDATION_FAILED', async () => {
    const pro = await newAccount(api.deps.db, 'pro')
    const link = await createLink(api.app, pro)
    for (const q of ['period=1Y', 'period=7d', 'period=', 'include_bots=maybe']) {
      const res = await call(api.app, 'GET', `/api/v1/links/${link.alias}/stats?${q}`, { token: pro.key })
      expect(res.status, `${q}: ${show(res)}`).toBe(400)
      expect(res.body.error).toBe('VALIDATION_FAILED')
    }
  })

  test("security: another account's link and an unknown link are 404 alike, for Free and Pro", async () => {
    const owner = await newAccount(api.deps.db, 'pro')
    const link = await createLink(api.app, owner)
    await insertClicks(link.id, [{}])
    for (const plan of ['pro', 'free'] as const) {
      const stranger = await newAccount(api.deps.db, plan)
      const other = await call(api.app, 'GET', `/api/v1/links/${link.alias}/stats`, { token: stranger.key })
      expect(other.status, show(other)).toBe(404)
      expect(other.body.error).toBe('LINK_NOT_FOUND')
      expect(other.body.data).toBeUndefined()
      const unknown = await call(api.app, 'GET', '/api/v1/links/no-such-link-here/stats', { token: stranger.key })
      expect(unknown.status, show(unknown)).toBe(404)
      expect(unknown.body.error).toBe('LINK_NOT_FOUND')
    }
  })

  test('security: guest token, no token, malformed token: 401', async () => {
    const pro = await newAccount(api.deps.db, 'pro')
    const link = await createLink(api.app, pro)
    const gt = await newGuestToken(api.app)
    const path = `/api/v1/links/${link.alias}/stats`
    for (const res of [await call(api.app, 'GET', path, { token: gt }), await call(api.app, 'GET', path), await call(api.app, 'GET', path, { token: 'mk_not-a-real-key-0000000000' })]) {
      expect(res.status, show(res)).toBe(401)
      expect(res.body.error).toBe('UNAUTHORIZED')
      expect(res.text).not.toContain('total_clicks')
    }
  })
})
