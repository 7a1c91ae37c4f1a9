// Whatever a client sends to the links endpoints, the answer is never a 500.
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, show, testApi, type TestApp } from '../../../test/support/api'
import { newAccount, type TestAccount } from '../../../test/support/fixtures'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp
let account: TestAccount
let alias: string

/** A Pro account (120 requests a minute) with one link. */
async function accountWithLink(): Promise<{ account: TestAccount; alias: string }> {
  const account = await newAccount(api.deps.db, 'pro')
  const alias = `h-${crypto.randomUUID().slice(0, 10)}`
  const made = await call(app, 'POST', '/api/v1/shorten', { token: account.key, body: { url: 'https://example.com/h', alias } })
  if (made.status !== 200) throw new Error(show(made))
  return { account, alias }
}

beforeAll(async () => {
  api = await testApi()
  app = api.app
  ;({ account, alias } = await accountWithLink())
})

const values: unknown[] = [
  null,
  true,
  -1,
  1e308,
  '',
  '\u0000',
  'x'.repeat(5000),
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:59Z',
  '2026-02-30T00:00:00Z',
  '../../etc/passwd',
  "'; drop table links; --",
  'https://exa\u0000mple.com/',
  '🔗'.repeat(40),
  [],
  {},
  { __proto__: { polluted: true } },
]

const fields = ['url', 'alias', 'domain', 'password', 'expiration', 'activated_at']

describe('hostile input to the links endpoints', () => {
  test.each(fields)(
    'shorten, update and bulk answer 2xx or 4xx (not 429, not 5xx) for every odd value of %s',
    async (field) => {
      // One account per field keeps each under its rate limit, so every request reaches the handler.
      const { account, alias } = await accountWithLink()
      const problems: string[] = []
      const check = (what: string, res: { status: number; text: string }) => {
        if (res.status >= 500 || res.status === 429) problems.push(`${what}: ${res.status} ${res.text.slice(0, 200)}`)
      }
      const bodies = values.map((value) => ({ url: 'https://example.com/fuzz', [field]: value }))
      for (const body of bodies) {
        const label = JSON.stringify(body).slice(0, 80)
        check(`shorten ${label}`, await call(app, 'POST', '/api/v1/shorten', { token: account.key, body }))
        const { url: _url, ...patch } = body as Record<string, unknown>
        check(`patch ${label}`, await call(app, 'PATCH', `/api/v1/links/${alias}`, { token: account.key, body: field === 'url' ? body : patch }))
      }
      check('bulk', await call(app, 'POST', '/api/v1/links/bulk', { token: account.key, body: { links: bodies } }))
      // Deeply nested JSON (thousands of levels) is plugins/body.ts's to bound, for every route alike.
      check('nested', await call(app, 'POST', '/api/v1/shorten', { token: account.key, body: `{"url":${'['.repeat(500)}${']'.repeat(500)}}` }))
      expect(problems).toEqual([])
    },
    60_000,
  )

  test('paths and queries: odd aliases, domains and parameters', async () => {
    const problems: string[] = []
    const paths = [
      '/api/v1/links/%00',
      '/api/v1/links/..%2F..%2Fetc',
      `/api/v1/links/${alias}?domain=${'a'.repeat(300)}`,
      `/api/v1/links/${alias}?domain=%E2%80%AE`,
      `/api/v1/links/${alias}?domain[]=x`,
      '/api/v1/links?limit=9'.padEnd(400, '9'),
      '/api/v1/links?offset=99999999999999999999999',
      `/api/v1/links?cursor=${Buffer.from(JSON.stringify({ t: '1'.repeat(17), i: 'link_x' })).toString('base64url')}`,
      '/api/v1/links?search=%5C%25%5F',
      `/api/v1/links?search=${encodeURIComponent('\\')}`,
    ]
    for (const path of paths) {
      for (const method of ['GET', 'PATCH', 'DELETE']) {
        if (method !== 'GET' && !path.includes('/links/')) continue
        const res = await call(app, method, path, { token: account.key, body: method === 'PATCH' ? {} : undefined })
        if (res.status >= 500 || res.status === 429) problems.push(`${method} ${path}: ${res.status} ${res.text.slice(0, 200)}`)
      }
    }
    expect(problems).toEqual([])
  })
})
