// Plan limits set by configuration (PLAN_*, TAGS_PER_ACCOUNT): enforced at the new figure on every way
// in (one link, bulk, an Agent token), shown by account status and meta, and the API document unchanged.
import { beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { DOCUMENT_FILE, documentText } from '../../../scripts/generate-client'
import { call, show, testApi, testConfig } from '../../../test/support/api'
import { agentToken, newAccount } from '../../../test/support/fixtures'
import { ConfigError, parseConfig } from '../../../core/config'
import { createServices } from '../../services'
import { cookieName } from '../signin/cookies'
import { createSession } from '../signin/service'
import { DEFAULT_LIMITS } from '../../lib/plans'

const ENV = {
  PLAN_FREE_LINKS_PER_MONTH: '3',
  PLAN_FREE_REQUESTS_PER_MINUTE: '7',
  PLAN_FREE_CUSTOM_DOMAINS: '0',
  PLAN_PRO_LINKS_PER_MONTH: '5',
  PLAN_PRO_REQUESTS_PER_MINUTE: '9',
  PLAN_PRO_CUSTOM_DOMAINS: '2',
  TAGS_PER_ACCOUNT: '2',
  SESSION_REQUESTS_PER_MINUTE: '11',
}

let api: Awaited<ReturnType<typeof testApi>>
beforeAll(async () => {
  api = await testApi({ config: testConfig(ENV) })
})

const shorten = (token: string, i: number) => call(api.app, 'POST', '/api/v1/shorten', { token, body: { url: `https://example.com/limits/${i}` } })

describe('configuration', () => {
  test('unset: the defaults; each variable sets its figure', () => {
    expect(parseConfig({}).limits).toEqual(DEFAULT_LIMITS)
    expect(testConfig(ENV).limits).toEqual({
      plans: { free: { linksPerMonth: 3, requestsPerMinute: 7, customDomains: 0 }, pro: { linksPerMonth: 5, requestsPerMinute: 9, customDomains: 2 } },
      tagsPerAccount: 2,
      sessionRequestsPerMinute: 11,
    })
  })

  test('a bad value stops the start with a ConfigError naming the variable', () => {
    const cases: [string, string, RegExp][] = [
      ['PLAN_FREE_LINKS_PER_MONTH', 'lots', /PLAN_FREE_LINKS_PER_MONTH must be a whole number/],
      ['PLAN_PRO_LINKS_PER_MONTH', '-1', /PLAN_PRO_LINKS_PER_MONTH must be a whole number/],
      ['PLAN_FREE_REQUESTS_PER_MINUTE', '0', /PLAN_FREE_REQUESTS_PER_MINUTE must be at least 1/],
      ['PLAN_PRO_CUSTOM_DOMAINS', '1.5', /PLAN_PRO_CUSTOM_DOMAINS must be a whole number/],
      ['TAGS_PER_ACCOUNT', '99999999999999999999', /TAGS_PER_ACCOUNT must be at most 1000000000/],
    ]
    for (const [name, value, message] of cases) {
      expect(() => parseConfig({ [name]: value })).toThrow(ConfigError)
      expect(() => parseConfig({ [name]: value })).toThrow(message)
    }
  })
})

describe('enforced and shown at the configured figure', () => {
  test('Free links a month = 3: the 4th is 429 LINK_QUOTA_EXCEEDED, bulk cannot get past it, status shows 3', async () => {
    const account = await newAccount(api.deps.db)
    for (let i = 0; i < 3; i++) {
      const ok = await shorten(account.key, i)
      expect(ok.status, show(ok)).toBe(200)
    }
    const fourth = await shorten(account.key, 3)
    expect(fourth.status, show(fourth)).toBe(429)
    expect(fourth.body, show(fourth)).toMatchObject({ error: 'LINK_QUOTA_EXCEEDED', limit: 3, remaining: 0, meta: { usage: { links_per_month: 3, links_remaining: 0 } } })
    const bulk = await call(api.app, 'POST', '/api/v1/links/bulk', { token: account.key, body: { links: [{ url: 'https://example.com/b1' }, { url: 'https://example.com/b2' }] } })
    const items = JSON.stringify(bulk.body).match(/"index":\d+,"success":(true|false)(,"error":"[A-Z_]+")?/g)
    expect(items, show(bulk)).toEqual(['"index":0,"success":false,"error":"LINK_QUOTA_EXCEEDED"', '"index":1,"success":false,"error":"LINK_QUOTA_EXCEEDED"'])

    const status = await call(api.app, 'GET', '/api/v1/account/status', { token: account.key })
    expect(status.status, show(status)).toBe(200)
    expect(status.body.data.plan.limits, show(status)).toMatchObject({ links_per_month: 3, requests_per_minute: 7, custom_domains: 0, tags: 2 })
    expect(status.body.data.usage, show(status)).toMatchObject({ links_this_month: 3, links_per_month: 3, links_remaining: 0, requests_per_minute: 7 })
    expect(status.body.meta.hint, show(status)).toContain('Free plan: 3 links a month, 7 requests a minute. Pro: 9 requests a minute, 5 links a month, 2 custom domains')
  })

  test('Free requests a minute = 7: the 8th request of a key is 429 RATE_LIMITED; an Agent token has its own 7', async () => {
    const account = await newAccount(api.deps.db)
    const statuses: number[] = []
    let last: Awaited<ReturnType<typeof call>> | undefined
    for (let i = 0; i < 8; i++) {
      last = await call(api.app, 'GET', '/api/v1/links', { token: account.key })
      statuses.push(last.status)
    }
    expect(statuses, show(last!)).toEqual([200, 200, 200, 200, 200, 200, 200, 429])
    expect(last!.body.error, show(last!)).toBe('RATE_LIMITED')
    expect(last!.headers.get('x-ratelimit-limit'), show(last!)).toBe('7')

    const human = await newAccount(api.deps.db)
    const { token } = await agentToken(api.app, human, ['links:read'])
    const agentStatuses: number[] = []
    for (let i = 0; i < 8; i++) agentStatuses.push((await call(api.app, 'GET', '/api/v1/links', { token })).status)
    expect(agentStatuses).toEqual([200, 200, 200, 200, 200, 200, 200, 429])
  })

  test("a signed-in session (the dashboard) gets SESSION_REQUESTS_PER_MINUTE = 11 when that is above its plan's 7; the keys of the same account keep 7", async () => {
    const account = await newAccount(api.deps.db)
    const services = createServices(api.deps)
    const session = await createSession(services, account.id, 'email-code')
    const cookie = `${cookieName(services.config, 'session')}=${session.token}`
    const statuses: number[] = []
    let last: Response | undefined
    for (let i = 0; i < 12; i++) {
      last = await api.app.handle(new Request('http://localhost/api/v1/links', { headers: { cookie } }))
      statuses.push(last.status)
    }
    expect(statuses).toEqual([...Array(11).fill(200), 429])
    expect(last!.headers.get('x-ratelimit-limit')).toBe('11')
    const byKey = await call(api.app, 'GET', '/api/v1/links', { token: account.key })
    expect(byKey.headers.get('x-ratelimit-limit'), show(byKey)).toBe('7')
  })

  test('tags = 2 and Free custom domains = 0: one more is refused with the configured limit', async () => {
    const account = await newAccount(api.deps.db)
    for (const name of ['one', 'two']) {
      const ok = await call(api.app, 'POST', '/api/v1/tags', { token: account.key, body: { name } })
      expect(ok.status, show(ok)).toBe(201)
      expect(ok.body.meta.usage, show(ok)).toMatchObject({ tags_limit: 2 })
    }
    const third = await call(api.app, 'POST', '/api/v1/tags', { token: account.key, body: { name: 'three' } })
    expect(third.status, show(third)).toBe(409)
    expect(third.body, show(third)).toMatchObject({ error: 'TAG_LIMIT_REACHED', limit: 2 })

    const domain = await call(api.app, 'POST', '/api/v1/domains', { token: account.key, body: { hostname: `limits-${crypto.randomUUID().slice(0, 8)}.example.com` } })
    expect(domain.status, show(domain)).toBe(403)
    expect(domain.body, show(domain)).toMatchObject({ error: 'DOMAIN_LIMIT_REACHED', limit: 0 })
  })

  test('Pro gets its own configured figures', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const status = await call(api.app, 'GET', '/api/v1/account/status', { token: account.key })
    expect(status.body.data.plan.limits, show(status)).toMatchObject({ links_per_month: 5, requests_per_minute: 9, custom_domains: 2 })
    expect(status.headers.get('x-ratelimit-limit'), show(status)).toBe('9')
  })

  test('the API document is built from the defaults: the same bytes as client/openapi.json', async () => {
    const response = await api.app.handle(new Request('http://localhost/swagger/json'))
    expect(response.status).toBe(200)
    expect(documentText(await response.json())).toBe(readFileSync(DOCUMENT_FILE, 'utf8'))
  })
})
