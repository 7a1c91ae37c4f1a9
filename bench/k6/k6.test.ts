// The k6 scripts of bench/k6 without a k6 binary (none installs here): type-checked against @types/k6,
// then each one's setup() and scenario functions run under the stand-in of k6 (test/support/k6), which
// sends their requests with fetch to the API and redirector on one loopback port (as the embedded
// default serves them). A run passes when every check passed, every request got a status the script
// expects and the API document promises for that operation, and every threshold names a check or a
// scenario that ran. Copies with a drifted path, body or header must fail the same way.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { call, show } from '../../test/support/api'
import { insertTestClicks, testClickHouse } from '../../test/support/clickhouse'
import { newAccount, newLink, type TestAccount } from '../../test/support/fixtures'
import { runK6, type Exchange, type K6Run } from '../../test/support/k6/run'
import { startMcpStack, type McpStack } from '../../test/support/mcp'

const HERE = import.meta.dir
const ITERATIONS = 3
let stack: McpStack
let accounts: TestAccount[]
let document: { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }
const scratch = mkdtempSync(join(tmpdir(), 'k6-standin-'))

beforeAll(async () => {
  stack = await startMcpStack()
  accounts = [await newAccount(stack.deps.db, 'pro'), await newAccount(stack.deps.db, 'pro')]
  const served = await fetch(`${stack.origin}/swagger/json`)
  expect(served.status).toBe(200)
  document = (await served.json()) as typeof document
  // The first file of a run opens the embedded engines (PGlite, chDB): slow on a loaded machine.
}, 120_000)

afterAll(async () => {
  await stack?.stop()
  rmSync(scratch, { recursive: true, force: true })
})

/** The API document's operation for a request, by path template. */
function operationOf(method: string, path: string) {
  for (const [template, operations] of Object.entries(document.paths)) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`)
    if (pattern.test(path)) return operations[method.toLowerCase()]
  }
  return undefined
}

/** An API call must be an operation of the document answered with one of its documented statuses; a short link, a redirect. */
function contract({ request, response }: Exchange): string | undefined {
  const path = new URL(request.url).pathname
  if (path.startsWith('/api/') || path === '/mcp') {
    const operation = operationOf(request.method, path)
    if (!operation) return 'no such operation in the API document'
    if (!(String(response.status) in operation.responses)) return `status ${response.status} is not documented (${Object.keys(operation.responses).join(', ')})`
    return undefined
  }
  const location = response.headers.find(([name]) => name === 'location')?.[1] ?? ''
  if (request.method !== 'GET' || response.status !== 302 || !/^https?:\/\//.test(location)) return `a short link answered ${response.status} ${location}`
  return undefined
}

/** Everything that fails a stand-in run, one line each; empty when it passed. */
function problems(run: K6Run): string[] {
  return [
    ...run.errors,
    ...run.checks.filter((c) => c.fails > 0).map((c) => `check "${c.name}" failed ${c.fails} of ${c.passes + c.fails}`),
    ...run.failedRequests.map((r) => `failed request ${r}`),
    ...run.contractProblems,
    ...run.unguardedThresholds,
    ...(run.scenarios.length === 0 ? ['no scenario ran'] : []),
  ]
}

const base = (): Record<string, string> => ({ BASE_URL: stack.origin, RATE: '10', DURATION: '1s' })
const keys = () => accounts.map((a) => a.key).join(',')

async function standIn(script: string, env: Record<string, string>): Promise<K6Run> {
  return runK6(script, { env, iterations: ITERATIONS, inspect: contract })
}

/** A run that must pass: no problem, every scenario a constant arrival rate, a check made each iteration. */
async function passes(script: string, env: Record<string, string>): Promise<K6Run> {
  const run = await standIn(join(HERE, script), env)
  expect(problems(run), JSON.stringify(run.exchanges.slice(-3))).toEqual([])
  for (const scenario of Object.values(run.options.scenarios as Record<string, { executor: string }>)) expect(scenario.executor).toBe('constant-arrival-rate')
  expect(run.checks.length).toBeGreaterThan(0)
  for (const check of run.checks) expect(check.passes).toBeGreaterThanOrEqual(ITERATIONS)
  return run
}

async function shortened(key: string, url: string): Promise<string> {
  const res = await call(stack.app, 'POST', '/api/v1/shorten', { token: key, body: { url } })
  if (res.status !== 200) throw new Error(show(res))
  return res.body.data.alias as string
}

test('every script type-checks against @types/k6 (bench/k6/tsconfig.json)', () => {
  const checked = Bun.spawnSync([process.execPath, 'x', 'tsc', '-p', HERE], { cwd: join(HERE, '../..') })
  expect(checked.stdout.toString() + checked.stderr.toString()).toBe('')
  expect(checked.exitCode).toBe(0)
}, 60_000)

describe('each script passes its stand-in run', () => {
  test('redirect.js: every GET /{alias} a 302 to the destination, each one click', async () => {
    const aliases = [await shortened(accounts[0]!.key, 'https://example.com/k6-a'), await shortened(accounts[0]!.key, 'https://example.com/k6-b')]
    const file = join(scratch, 'aliases.txt')
    writeFileSync(file, `${aliases.join('\n')}\n`)
    const clicksBefore = stack.clicks.length
    const run = await passes('redirect.js', { ...base(), ALIAS_FILE: file })
    expect(run.requests).toBe(ITERATIONS)
    expect(stack.clicks.length - clicksBefore).toBe(ITERATIONS)
  })

  test('shorten.js with AUTH=key and AUTH=agent: one link created per iteration', async () => {
    for (const auth of ['key', 'agent']) {
      const run = await passes('shorten.js', { ...base(), KEYS: keys(), AUTH: auth })
      const shortens = run.exchanges.filter((e) => new URL(e.request.url).pathname === '/api/v1/shorten')
      expect(shortens.length).toBe(ITERATIONS)
      const bearer = shortens.map((e) => e.request.headers.Authorization?.slice(7, 10))
      expect(new Set(bearer)).toEqual(new Set(auth === 'key' ? ['mk_'] : ['at_']))
    }
  })

  test('mcp-create-link.js: create_link through /mcp with an at_ token, the link created', async () => {
    const run = await passes('mcp-create-link.js', { ...base(), KEYS: keys() })
    const created = run.exchanges.filter((e) => e.request.body && Buffer.from(e.request.body, 'base64').toString().includes('"tools/call"'))
    expect(created.length).toBe(ITERATIONS)
    const alias = JSON.parse(
      created[0]!.response.body
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .pop()
        ?.slice(5) ?? created[0]!.response.body,
    ).result.structuredContent.data.alias
    const redirect = await fetch(`${stack.origin}/${alias}`, { redirect: 'manual' })
    expect(redirect.status).toBe(302)
  })

  test('bulk.js: BULK_SIZE links a request, counted in links_created', async () => {
    const run = await passes('bulk.js', { ...base(), KEYS: keys(), BULK_SIZE: '5' })
    expect(run.metrics.links_created).toEqual([5, 5, 5])
  })

  test('list.js: the first page, and the deep page at the cursor setup() found', async () => {
    const owner = await newAccount(stack.deps.db, 'pro')
    for (const size of [100, 30]) {
      const links = Array.from({ length: size }, (_, i) => ({ url: `https://example.com/list/${size}/${i}` }))
      const res = await call(stack.app, 'POST', '/api/v1/links/bulk', { token: owner.key, body: { links } })
      expect(res.body?.data?.summary?.succeeded, show(res)).toBe(size)
    }
    const run = await passes('list.js', { ...base(), KEY: owner.key, MIN_LINKS: '130', DEEP_OFFSET: '100' })
    const deep = run.exchanges.filter((e) => e.request.url.includes('cursor='))
    expect(deep.length).toBe(ITERATIONS)
    // The cursor after link 101 (offset 100, limit 1) starts the page at link 102, as offset 101 does.
    const byOffset = await call(stack.app, 'GET', '/api/v1/links?limit=20&offset=101', { token: owner.key })
    const aliases = (body: string) => JSON.parse(body).data.links.map((l: { alias: string }) => l.alias)
    expect(aliases(deep[0]!.response.body)).toEqual(byOffset.body.data.links.map((l: { alias: string }) => l.alias))
  })

  test('stats.js: the statistics of a link with MIN_CLICKS clicks, each period', async () => {
    const owner = await newAccount(stack.deps.db, 'pro')
    const link = await newLink(stack.deps.db, owner.id, stack.deps.config.shortDomain)
    await insertTestClicks(
      await testClickHouse(),
      link.id,
      [1, 2, 3, 4].map((h) => ({ at: Date.now() - h * 3_600_000 })),
    )
    const run = await passes('stats.js', { ...base(), KEY: owner.key, ALIAS: link.alias, MIN_CLICKS: '4', PERIODS: '24H,ALL' })
    const totals = run.exchanges.slice(1).map((e) => JSON.parse(e.response.body).data.total_clicks)
    expect(totals).toEqual([4, 4, 4])
  })

  test('setup() refuses a run that could not measure the target: too few clicks', async () => {
    const owner = await newAccount(stack.deps.db, 'pro')
    const link = await newLink(stack.deps.db, owner.id, stack.deps.config.shortDomain)
    const run = await standIn(join(HERE, 'stats.js'), { ...base(), KEY: owner.key, ALIAS: link.alias, MIN_CLICKS: '1' })
    expect(run.errors).toEqual([expect.stringContaining('has 0 clicks, MIN_CLICKS is 1')])
  })
})

describe('a script that drifts from the API fails its stand-in run', () => {
  /** A copy of bench/k6 with `from` replaced by `to` in one file; the replacement must have happened. */
  function drifted(file: string, from: string, to: string): string {
    const dir = mkdtempSync(join(scratch, 'drift-'))
    cpSync(HERE, dir, { recursive: true, filter: (source) => !source.endsWith('.test.ts') })
    const source = readFileSync(join(dir, file), 'utf8')
    expect(source).toContain(from)
    writeFileSync(join(dir, file), source.replaceAll(from, to))
    return join(dir, file.endsWith('lib.js') ? 'shorten.js' : file)
  }

  // Each with the problem it must be caught by.
  const cases: [what: string, file: string, from: string, to: string, env: () => Record<string, string>, caught: string][] = [
    ['a path', 'shorten.js', '/api/v1/shorten`', '/api/v1/links/shorten`', () => ({ KEYS: keys(), AUTH: 'key' }), 'no such operation in the API document'],
    ['a body field', 'shorten.js', 'JSON.stringify({ url })', 'JSON.stringify({ destination: url })', () => ({ KEYS: keys(), AUTH: 'key' }), 'check "created" failed 3 of 3'],
    [
      'a JSON body sent as a k6 object (form-encoded)',
      'bulk.js',
      'JSON.stringify({ links })',
      '{ links: JSON.stringify(links) }',
      () => ({ KEYS: keys(), BULK_SIZE: '2' }),
      'check "every link created" failed 3 of 3',
    ],
    ['the Authorization scheme', 'lib.js', 'Authorization: `Bearer ${token}`', 'Authorization: `Token ${token}`', () => ({ KEYS: keys(), AUTH: 'key' }), ': 401 '],
    ['the MCP tool name', 'mcp-create-link.js', "name: 'create_link'", "name: 'shorten_link'", () => ({ KEYS: keys() }), 'check "tool result" failed 3 of 3'],
    ['the MCP Accept header', 'mcp-create-link.js', "Accept: 'application/json, text/event-stream'", "Accept: 'application/json'", () => ({ KEYS: keys() }), 'setup: initialize: 406'],
    ['a cursor parameter', 'list.js', '&cursor=${', '&after=${', () => ({}), 'check "the page asked for" failed 3 of 6'],
    ['a check renamed under its threshold', 'redirect.js', "'status is 302': (r)", "'is a redirect': (r)", () => ({}), 'threshold "checks{check:status is 302}" names a check no iteration made'],
  ]

  test.each(cases)('%s', async (_what, file, from, to, env, caught) => {
    const extra: Record<string, string> = {}
    if (file === 'list.js') {
      const owner = await newAccount(stack.deps.db, 'pro')
      const links = Array.from({ length: 30 }, (_, i) => ({ url: `https://example.com/drift/${i}` }))
      expect((await call(stack.app, 'POST', '/api/v1/links/bulk', { token: owner.key, body: { links } })).status).toBe(200)
      Object.assign(extra, { KEY: owner.key, MIN_LINKS: '30', DEEP_OFFSET: '5', PAGE_SIZE: '10' })
    }
    if (file === 'redirect.js') extra.ALIASES = await shortened(accounts[0]!.key, 'https://example.com/k6-drift')
    const run = await standIn(drifted(file, from, to), { ...base(), ...env(), ...extra })
    expect(problems(run).join('\n')).toContain(caught)
  })
})
