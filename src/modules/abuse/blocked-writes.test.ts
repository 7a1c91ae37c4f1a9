// Destinations on a block list or on a host an operator banned are refused on every write path, for
// guests and accounts, REST and MCP, with 400 DESTINATION_BLOCKED naming no list; a change of the lists
// disables the stored links it covers (a routed link's destinations too), written through to the cache.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { decodeCachedLink, linkCacheKey } from '../../../core/link-cache'
import { bannedHosts, links } from '../../db/schema'
import { createApi } from '../../app'
import { createServices } from '../../services'
import { call, newGuestToken, show, testApi, testConfig, type TestApp } from '../../../test/support/api'
import { agentToken, newAccount } from '../../../test/support/fixtures'
import { callTool, inProcessClient } from '../../../test/support/mcp'
import { parseMetrics } from '../../../test/support/metrics'
import { SUSPENSION_MARKS } from '../links/state'
import { createBlocklists, type Blocklists } from './blocklists'
import { takeDownListed } from './takedown'

const dir = mkdtempSync(join(tmpdir(), 'blocklist-'))
const listFile = join(dir, 'list.txt')
/** Hosts of this run: nothing else lists them. */
const run = crypto.randomUUID().slice(0, 8)
const LISTED = `phish-${run}.example`
const BANNED = `banned-${run}.example`
const LATER = `later-${run}.example`

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp
let lists: Blocklists
const listed = (href: string) => {
  const verdict = lists.check(href)
  return !verdict.allowed && verdict.code === 'DESTINATION_BLOCKED'
}

const METRICS_TOKEN = 'blocklist-metrics-token-0123456789abcdefgh'

beforeAll(async () => {
  writeFileSync(listFile, `# test list\n${LISTED}\n`)
  api = await testApi()
  const config = testConfig({ BLOCKLIST_FILES: listFile, ALLOWLIST_HOSTS: `ok.${LISTED}`, METRICS_TOKEN })
  lists = createBlocklists(config)
  await lists.start()
  app = createApi({ ...api.deps, config, destinationListed: listed, blocklistFigures: () => lists.status().sources })
  await api.deps.db.insert(bannedHosts).values({ host: BANNED, reason: 'test' })
}, 120_000)

afterAll(async () => {
  await lists?.stop()
})

const REFUSED = [`https://${LISTED}/login`, `https://www.${LISTED}/x`, `https://${LISTED.toUpperCase()}./x`, `https://${BANNED}/`, `https://a.b.${BANNED}/deep?q=1`]

function expectBlocked(answer: { status: number; body: { error?: string; hint?: string }; text: string }, what: string) {
  expect(answer.status, `${what}: ${show(answer as never)}`).toBe(400)
  expect(answer.body.error, what).toBe('DESTINATION_BLOCKED')
  expect(answer.text, 'the answer names no list').not.toContain('list.txt')
}

describe('every write path refuses a listed or banned destination', () => {
  test('shorten as a guest and as an account; an allowlisted subdomain and other hosts pass', async () => {
    const guest = await newGuestToken(app)
    const account = await newAccount(api.deps.db)
    for (const url of REFUSED) {
      expectBlocked(await call(app, 'POST', '/api/v1/shorten', { token: guest, body: { url } }), `guest ${url}`)
      expectBlocked(await call(app, 'POST', '/api/v1/shorten', { token: account.key, body: { url } }), `account ${url}`)
    }
    expect((await call(app, 'POST', '/api/v1/shorten', { token: account.key, body: { url: `https://ok.${LISTED}/fine` } })).status).toBe(200)
    expect((await call(app, 'POST', '/api/v1/shorten', { token: account.key, body: { url: `https://not${LISTED}/fine` } })).status).toBe(200)
  })

  test('bulk (each item alone), update, and routing rules and variants', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const bulk = await call(app, 'POST', '/api/v1/links/bulk', { token: account.key, body: { links: [{ url: 'https://example.com/fine' }, { url: REFUSED[0] }] } })
    expect(bulk.status, show(bulk)).toBe(200)
    expect(bulk.body.data.results.map((r: { success: boolean; error?: string }) => r.error ?? 'ok')).toEqual(['ok', 'DESTINATION_BLOCKED'])
    const made = await call(app, 'POST', '/api/v1/shorten', { token: account.key, body: { url: 'https://example.com/start' } })
    const alias = made.body.data.alias
    expectBlocked(await call(app, 'PATCH', `/api/v1/links/${alias}`, { token: account.key, body: { url: REFUSED[3] } }), 'update')
    const rule = await call(app, 'PUT', `/api/v1/links/${alias}/routing`, { token: account.key, body: { rules: [{ url: REFUSED[1], when: { device: ['ios'] } }] } })
    expectBlocked(rule, 'a rule')
    expect(rule.body.hint).toContain('body.rules.0.url')
    const variant = await call(app, 'PUT', `/api/v1/links/${alias}/routing`, {
      token: account.key,
      body: {
        ab: {
          variants: [
            { url: 'https://example.com/a', weight: 50 },
            { url: REFUSED[4], weight: 50 },
          ],
        },
      },
    })
    expectBlocked(variant, 'a variant')
  })

  test('MCP: create_link, update_link and set_link_routing come back as the same refusal', async () => {
    const human = await newAccount(api.deps.db, 'pro')
    const { token } = await agentToken(app, human, ['links:read', 'links:write'], { require_approval: [] })
    const client = await inProcessClient(app, token)
    try {
      const created = await callTool(client, 'create_link', { url: REFUSED[0] })
      expect(created.isError).toBe(true)
      expect(created.structuredContent?.error).toBe('DESTINATION_BLOCKED')
      const fine = await callTool(client, 'create_link', { url: 'https://example.com/mcp' })
      const alias = (fine.structuredContent as { data: { alias: string } }).data.alias
      expect((await callTool(client, 'update_link', { alias, url: REFUSED[3] })).structuredContent?.error).toBe('DESTINATION_BLOCKED')
      expect((await callTool(client, 'set_link_routing', { alias, rules: [{ url: REFUSED[2], when: { device: ['ios'] } }] })).structuredContent?.error).toBe('DESTINATION_BLOCKED')
    } finally {
      await client.close()
    }
  })
})

describe('stored links follow the lists', () => {
  test('a refresh that adds a host disables the links to it and to its subdomains, and a routed link leading there; others stay', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const make = async (body: Record<string, unknown>) => {
      const made = await call(app, 'POST', '/api/v1/shorten', { token: account.key, body })
      if (made.status !== 200) throw new Error(show(made))
      return made.body.data.alias as string
    }
    const direct = await make({ url: `https://${LATER}/x` })
    const sub = await make({ url: `https://cdn.${LATER}/y` })
    const routed = await make({ url: 'https://example.com/home', routing: { rules: [{ url: `https://${LATER}/ios`, when: { device: ['ios'] } }] } })
    const other = await make({ url: `https://other-${run}.example/` })
    // A link its account's suspension disabled: the list's reason replaces the mark, so a restore of the
    // account does not bring it back.
    const suspended = await make({ url: `https://${LATER}/kept` })
    await api.deps.db.update(links).set({ state: 'disabled', stateReason: SUSPENSION_MARKS.ok }).where(eq(links.alias, suspended))
    const changes: unknown[] = []
    lists.onChange((change) => void changes.push(change))
    writeFileSync(listFile, `# test list\n${LISTED}\n${LATER}\n`)
    await lists.refresh()
    expect(changes, 'the refresh reported what it added').toContainEqual(expect.objectContaining({ kind: 'added', hosts: [LATER] }))
    const services = createServices(api.deps)
    for (const change of changes) await takeDownListed(services, change as never, listed)
    const stateOf = async (alias: string) => (await api.deps.db.select().from(links).where(eq(links.alias, alias)))[0]!.state
    expect(await Promise.all([direct, sub, routed, other].map(stateOf))).toEqual(['disabled', 'disabled', 'disabled', 'ok'])
    const [marked] = await api.deps.db.select().from(links).where(eq(links.alias, suspended))
    expect([marked!.state, marked!.stateReason]).toEqual(['disabled', 'on a block list'])
    const record = decodeCachedLink((await api.adapters.kv.get(linkCacheKey('sho.rt', direct))) ?? '')
    expect(record, JSON.stringify(record)).toMatchObject({ v: 3, st: 'disabled' })
  })
})

describe('/metrics', () => {
  test("blocked creations by code, each list's entries and age, links moved to a state", async () => {
    const account = await newAccount(api.deps.db)
    expectBlocked(await call(app, 'POST', '/api/v1/shorten', { token: account.key, body: { url: REFUSED[0] } }), 'a blocked creation')
    const scrape = await call(app, 'GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    expect(scrape.status, show(scrape)).toBe(200)
    const samples = parseMetrics(scrape.text)
    expect(samples.get('linkservice_http_errors_total{code="DESTINATION_BLOCKED"}'), scrape.text.slice(0, 400)).toBeGreaterThanOrEqual(1)
    const list = `file:${listFile}`
    expect(samples.get(`linkservice_blocklist_entries{list="${list}"}`)).toBeGreaterThanOrEqual(1)
    expect(samples.get(`linkservice_blocklist_age_seconds{list="${list}"}`)).toBeGreaterThanOrEqual(0)
    expect(samples.get(`linkservice_blocklist_failures_total{list="${list}"}`)).toBe(0)
    expect(scrape.text).toContain('# TYPE linkservice_link_state_changes_total counter')
    expect(scrape.text).toContain('# TYPE linkservice_reports_total counter')
  })
})
