// The worked examples of docs/routing.md, run as written: the section's first ```sh block is the start
// line (its variables become the environment of the entry package.json's start script names, beside a
// free port and a temporary DATA_DIR), and every later block goes, one by one, to one bash in the
// directory that holds DATA_DIR, as a reader pastes them beside `npm start`. Each comment in a block is
// a line the block prints (`…` stands for what differs between runs): the output must be those lines.
// After each block the test also asserts what the prose says it shows and the comments cannot pin: the
// clicks each route counted, and which variant of the A/B test wins.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { examplesOf, startDocWalk, startVariables, type BlockRun, type DocWalk } from './support/doc-examples'

/** A start, a request, a click reaching ClickHouse: far longer than any takes, short of a hang. */
const STEP_DEADLINE_MS = 60_000
/** The A/B block waits for its test's ends_at (half a minute) before it reads. */
const AB_END_DEADLINE_MS = 120_000

interface RouteItem {
  route: string
  clicks: number
  leads: number
}

describe('docs/routing.md: the worked examples, against npm start', () => {
  const { section, blocks } = examplesOf('docs/routing.md', 'Worked examples')
  let walk: DocWalk
  let apiKey = ''

  const runBlock = (index: number): Promise<BlockRun> => walk.run(blocks[index]!)

  /** The link's statistics of the last 24 hours: the status, and the body when it is JSON. */
  async function stats(alias: string) {
    const response = await fetch(`${walk.origin}/api/v1/links/${alias}/stats?period=24H`, { headers: { authorization: `Bearer ${apiKey}` } })
    const text = await response.text()
    const body = response.status === 200 ? (JSON.parse(text) as { data: { total_clicks: number; routingStats: RouteItem[] } }) : null
    return { status: response.status, text, body }
  }

  /**
   * The link's statistics once both queries behind them (the totals and the routes, run side by side)
   * count `clicks` human clicks: polled a few times a second, well inside the rate limit.
   */
  async function statsOnceCounted(alias: string, clicks: number) {
    const deadline = Date.now() + STEP_DEADLINE_MS
    for (;;) {
      const value = await stats(alias)
      const routed = value.body?.data.routingStats.reduce((sum, item) => sum + item.clicks, 0) ?? 0
      if (routed >= clicks && (value.body?.data.total_clicks ?? 0) >= clicks) return value
      if (Date.now() > deadline) throw new Error(`${clicks} clicks of ${alias} in the statistics: not within ${STEP_DEADLINE_MS} ms; last: ${value.status} ${value.text}`)
      await Bun.sleep(250)
    }
  }

  beforeAll(async () => {
    walk = await startDocWalk({ name: 'routing', env: () => startVariables(blocks[0]!) })
  }, 120_000)

  afterAll(() => walk?.stop())

  test('the examples are a start line trusting a country header and five shell blocks', () => {
    expect(blocks.length, section).toBe(6)
    expect(startVariables(blocks[0]!), blocks[0]).toEqual({ TRUSTED_COUNTRY_HEADER: 'CF-IPCountry' })
  })

  test(
    '1. sign-up through the outbox and the local checkout give a Pro key',
    async () => {
      await runBlock(1)
      const key = await walk.shell.run('printf "%s\\n" "$K"')
      expect(key.lines[0], key.shown).toMatch(/^mk_[A-Za-z0-9_-]+$/)
      apiKey = key.lines[0]!
    },
    STEP_DEADLINE_MS,
  )

  test(
    '2. iPhone to the App Store, Android to Google Play, a desktop to the website; HEAD routed but no click',
    async () => {
      await runBlock(2)
      // One click a GET, under its route; the HEAD was sent first, so once the GETs are counted a click of
      // it would be too. The totals and the routes are two queries run side by side: both must have them.
      const value = await statsOnceCounted('get-app', 3)
      expect(value.status, value.text).toBe(200)
      const clicks = Object.fromEntries(value.body!.data.routingStats.map((item) => [item.route, item.clicks]))
      expect(clicks, value.text).toEqual({ 'rule:r1': 1, 'rule:r2': 1, default: 1 })
      expect(value.body!.data.total_clicks, value.text).toBe(3)
    },
    STEP_DEADLINE_MS,
  )

  test(
    "3. the trusted country header takes Austria to the German page; the US and no header get the link's URL",
    async () => {
      await runBlock(3)
    },
    STEP_DEADLINE_MS,
  )

  let desktopVariant = ''
  let macVariant = ''

  test(
    '4. an A/B test on leads: two visitors each land in a variant, and a lead is reported for the second',
    async () => {
      const run = await runBlock(4)
      const variantOf = (line: string) => /^https:\/\/example\.com\/pricing-([ab])\?mu_click=/.exec(line)?.[1] ?? ''
      desktopVariant = variantOf(run.lines[2]!)
      macVariant = variantOf(run.lines[3]!)
      expect([desktopVariant, macVariant], run.shown).toEqual([expect.stringMatching(/^[ab]$/), expect.stringMatching(/^[ab]$/)])
    },
    STEP_DEADLINE_MS,
  )

  test(
    "5. after ends_at the read ends the test: the variant with the lead wins and becomes the link's URL",
    async () => {
      const run = await runBlock(5)
      const other = macVariant === 'a' ? 'b' : 'a'
      expect(run.lines[0], run.shown).toBe(`{"status":"completed","winner":"${macVariant}"}`)
      expect(run.lines[1], run.shown).toBe(`https://example.com/pricing-${macVariant}`)
      const items = run.lines.slice(2, 5).map((line) => JSON.parse(line) as RouteItem)
      const expected: RouteItem[] = [
        { route: `ab:${macVariant}`, clicks: desktopVariant === macVariant ? 2 : 1, leads: 1 },
        { route: `ab:${other}`, clicks: desktopVariant === macVariant ? 0 : 1, leads: 0 },
        { route: 'default', clicks: 0, leads: 0 },
      ]
      expect(
        items.sort((x, y) => x.route.localeCompare(y.route)),
        run.shown,
      ).toEqual(expected.sort((x, y) => x.route.localeCompare(y.route)))
      expect(run.lines[5], run.shown).toStartWith(`https://example.com/pricing-${macVariant}?mu_click=`)
    },
    AB_END_DEADLINE_MS,
  )
})
