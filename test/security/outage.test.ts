// ClickHouse away for minutes under load, against the stand-alone redirector with its API, Redis and the
// chDB stand-in (test/support/stack.ts), the stand-in really stopped and started again on its data:
// 1. Two minutes of outage under a paced load (8 clients, ~400 requests/s): clicks wait in the spool on
//    disk, every redirect is answered, and once ClickHouse is back every answered click is stored exactly
//    once. Two minutes because that is the outage the issue names (about 2.5 minutes of test time).
//    CLICK_OUTAGE_TEST_S sets the outage in seconds instead: `npm test` and CI's embedded pass run the
//    full two minutes, CI's services pass sets it short (.ci/run's OUTAGE_SHORT_S), as may a quick
//    local run; the outage is ClickHouse's, which neither pass's PostgreSQL nor Redis changes.
// 2. The spool's bound (CLICK_SPOOL_MAX_BYTES at its 1 MiB minimum, rows padded with a long user agent):
//    it is announced when near, redirects go on without waiting once it is full, the clicks dropped are
//    counted and logged, and exactly the clicks that were logged arrive once ClickHouse is back.
import { describe, expect, test } from 'bun:test'
import { clickFigures, type ClickFigures } from '../support/metrics'
import { clickRowsOf, type ClickRows } from '../support/click-rows'
import { clickLoad, expectEachAnsweredClickOnce } from '../support/click-load'
import { eventually, redisServerBinary, shorten, startStack, type Stack } from '../support/stack'

const OUTAGE_S = Number(process.env.CLICK_OUTAGE_TEST_S || 120)

const clickStats = (stack: Stack): Promise<ClickFigures> => clickFigures(stack.redirector.url)

/** Polls ClickHouse until `rows` are stored and the spool is empty, then reads the rows once more. */
async function settled(stack: Stack, alias: string, rows: number): Promise<ClickRows> {
  await eventually(
    () => clickRowsOf(stack.clickhouse, alias),
    (r) => r.rows >= rows,
    60_000,
    { what: `${rows} rows of ${alias}` },
  )
  await eventually(
    () => clickStats(stack),
    (s) => s.spooledFiles === 0 && s.spoolBytes === 0,
    10_000,
    { what: 'the spool emptied' },
  )
  return clickRowsOf(stack.clickhouse, alias)
}

// The stack needs a real Redis (redis-server); .ci/run installs it, so CI runs this in both passes.
// Skipped only where no redis-server binary exists.
describe.skipIf(!redisServerBinary)('ClickHouse outage under load', () => {
  test(
    `${OUTAGE_S} s without ClickHouse: the clicks wait on disk and all arrive once, after`,
    async () => {
      const stack = await startStack({ prefix: 'outage-long-' })
      try {
        const link = await shorten(stack.api.url, 'https://example.com/outage-long')
        let stop = false
        const load = clickLoad(link.short_url, 8, { pauseMs: 15, until: () => stop })
        await Bun.sleep(2000)
        await stack.chdb.stop()
        await Bun.sleep(OUTAGE_S * 1000)
        const during = await clickStats(stack)
        expect(during.spooledFiles, 'segments waiting at the end of the outage').toBeGreaterThan(OUTAGE_S / 2)
        expect(during.failedAttempts).toBeGreaterThan(0)
        await stack.restartChdb()
        await Bun.sleep(2000)
        stop = true
        const result = await load
        expect(result.inFlight.size).toBe(0)
        const stored = await settled(stack, link.alias, result.received.size)
        expectEachAnsweredClickOnce(stored, result)
        expect(stored.rows).toBe(result.received.size)
        expect(stack.redirector.output()).toContain('ClickHouse takes batches again')
      } finally {
        await stack.stop()
      }
    },
    (OUTAGE_S + 120) * 1000,
  )

  test('at the spool bound redirects go on, the clicks dropped are counted, the logged ones arrive once', async () => {
    const stack = await startStack({ prefix: 'outage-full-', env: { CLICK_SPOOL_MAX_BYTES: '1M' } })
    try {
      const link = await shorten(stack.api.url, 'https://example.com/outage-full')
      await stack.chdb.stop()
      let stop = false
      // About 2 KB a row on disk: the 1 MiB bound is reached after ~500 clicks.
      const load = clickLoad(link.short_url, 8, { userAgent: `Mozilla/5.0 ${'x'.repeat(2000)}`, until: () => stop })
      await eventually(
        () => clickStats(stack),
        (s) => s.dropped > 100,
        30_000,
        { what: 'clicks dropped at the bound' },
      )
      stop = true
      const result = await load
      const full = await clickStats(stack)
      expect(result.inFlight.size).toBe(0) // every redirect was answered
      expect(full.spoolNearFull).toBe(1)
      expect(full.pushed + full.dropped).toBe(result.received.size)
      expect(stack.redirector.output()).toContain('CLICK_SPOOL_MAX_BYTES')
      expect(stack.redirector.output()).toContain('the spool is FULL')
      await stack.restartChdb()
      const stored = await settled(stack, link.alias, full.pushed)
      expect(stored.rows).toBe(full.pushed)
      expect(stored.ids).toBe(stored.rows)
      expect(Object.keys(stored.byReferrer).every((r) => result.received.has(r) && stored.byReferrer[r] === 1)).toBe(true)
      expect(stack.redirector.output()).toContain('back under 80 %')
    } finally {
      await stack.stop()
    }
  }, 120_000)
})
