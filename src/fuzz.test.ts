// Nothing a client can send produces a 500: every route of the public document, and the internal ones,
// get hostile path parameters, query strings, headers and bodies, with a guest token, an API key and
// none. Each answer must be below 500 and, for the API, the ErrorResponse JSON when it is an error.
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, testApi, TEST_INTERNAL_SECRET, uniqueIp, type TestApp } from '../test/support/api'
import { newAccount, newDomain } from '../test/support/fixtures'

const PATH_VALUES = ['x', '%', '%zz', '..%2f..', 'a'.repeat(300), '0', '-1', '1e3', '9'.repeat(30), '%00', 'ü', '%E2%80%AE']
const BODIES: unknown[] = [
  '',
  '{',
  'null',
  '[]',
  '"s"',
  '123',
  '{"a":',
  '\u0000',
  '{"url":null}',
  { url: 12, alias: ['a'], domain: {}, tagId: 'x', hostname: 5 },
  { url: 'https://example.com', alias: 'a'.repeat(500), expiration: '0000-00-00', activated_at: 'yesterday' },
  { links: Array.from({ length: 3 }, () => ({ url: 'javascript:alert(1)' })) },
  { links: 'all' },
  { email: 'x'.repeat(10_000) },
  { name: '\u0000\u202e', color: '#zzzzzz' },
  { interval: 'weekly' },
  { tagId: 1.5 },
  { tagId: 2 ** 40 },
  { hostname: '256.256.256.256:80' },
  '{"__proto__":{"admin":true}}',
  { constructor: { prototype: { x: 1 } } },
]
const QUERIES = ['', '?limit=-1', '?limit=1e9', '?offset=abc', '?cursor=%%%', '?cursor=eyJ4IjoxfQ', '?domain=%00', '?search=%25_%5C', '?period=FOREVER', '?limit=1&limit=2']

let app: TestApp
const paths: [string, string][] = []
let guest = ''
let db: Awaited<ReturnType<typeof testApi>>['database']['db']
/** A fresh Pro key every 100 requests, so the per-key rate limit never hides a handler behind a 429. */
let key = ''
let keyUses = 0
async function apiKey(): Promise<string> {
  if (keyUses++ % 100 === 0) {
    const account = await newAccount(db, 'pro')
    await newDomain(db, account.id)
    key = account.key
  }
  return key
}

beforeAll(async () => {
  const api = await testApi()
  app = api.app
  db = api.database.db
  const doc = (await call(app, 'GET', '/swagger/json')).body
  for (const [path, ops] of Object.entries(doc.paths as Record<string, object>)) {
    for (const method of Object.keys(ops)) paths.push([method.toUpperCase(), path])
  }
  paths.push(['GET', '/internal/resolve'], ['POST', '/internal/unlock'], ['GET', '/internal/domains'], ['GET', '/billing/{id}'], ['POST', '/billing/{id}'])
})

/** A fresh guest token every 90 uses: the guest's 100 requests must not hide a handler behind a 429. */
let guestUses = 0
async function guestToken(): Promise<string> {
  if (guestUses++ % 90 === 0) guest = (await call(app, 'POST', '/api/v1/guest/token', { ip: uniqueIp() })).body.data.guest_token
  return guest
}

async function tokenOf(kind: 'none' | 'guest' | 'key' | 'unknown-key'): Promise<string | undefined> {
  if (kind === 'guest') return guestToken()
  if (kind === 'key') return apiKey()
  return kind === 'unknown-key' ? `mk_${'A'.repeat(43)}` : undefined
}

function fill(path: string, value: string): string {
  return path.replace(/\{[^}]+\}/g, value)
}

describe('no client input produces a 500', () => {
  test('every route, every credential, hostile parameters and bodies', async () => {
    const failures: string[] = []
    let requests = 0
    /** Answers from past authentication and rate limits: proof the handlers themselves were exercised. */
    let reachedHandlers = 0
    for (const [method, path] of paths) {
      const headers: Record<string, string> = path.startsWith('/internal') ? { 'x-internal-secret': TEST_INTERNAL_SECRET } : {}
      for (const kind of ['none', 'guest', 'key', 'unknown-key'] as const) {
        for (const value of PATH_VALUES) {
          for (const query of QUERIES.slice(0, 2)) {
            const target = fill(path, value) + query
            const bodies = method === 'GET' || method === 'DELETE' ? [undefined] : BODIES.slice(0, 6)
            for (const body of bodies) {
              const res = await call(app, method, target, { token: await tokenOf(kind), body, headers, ip: uniqueIp() })
              requests++
              if (![401, 429].includes(res.status)) reachedHandlers++
              if (res.status >= 500 && res.status !== 503) failures.push(`${method} ${target} ${JSON.stringify(body)?.slice(0, 60)} → ${res.status} ${res.text.slice(0, 200)}`)
            }
          }
        }
        for (const body of method === 'GET' || method === 'DELETE' ? [undefined] : BODIES) {
          for (const query of QUERIES) {
            const res = await call(app, method, fill(path, 'abcd') + query, { token: await tokenOf(kind), body, headers, ip: uniqueIp() })
            requests++
            if (![401, 429].includes(res.status)) reachedHandlers++
            if (res.status >= 500) failures.push(`${method} ${path}${query} ${JSON.stringify(body)?.slice(0, 60)} → ${res.status} ${res.text.slice(0, 200)}`)
          }
        }
      }
    }
    expect(requests).toBeGreaterThan(1000)
    expect(reachedHandlers).toBeGreaterThan(requests / 3)
    expect([...new Set(failures.map((f) => f.split(' ').slice(0, 2).join(' ').replace(/\?.*/, '')))]).toEqual([])
  }, 120_000)
})
