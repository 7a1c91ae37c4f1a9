// No click lost to a crash: the redirector under load is killed with SIGKILL (no drain, no handler
// runs), started again on the same data directory, and every 302 a client received must be stored in
// ClickHouse exactly once: none lost (the click was in the log before its 302 left) and none twice (a
// segment shipped but not yet deleted is replayed under the same dedup token).
// 1. The embedded default, `bun one-process/main.ts` (chDB in the process, clicks shipped on the serving thread).
// 2. The stand-alone redirector, `bun redirect/main.ts`, with its API, Redis and the chDB stand-in
//    (clicks shipped by the worker thread).
// 16 clients for 1.5 s, then the kill: the default flush interval (1 s) leaves a segment unshipped, which
// the test checks, so a redirector that answered before its click was on disk would fail here.
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { clickRowsOf } from '../support/click-rows'
import { clickLoad, expectEachAnsweredClickOnce, type LoadResult } from '../support/click-load'
import { freePort, startEntry, type Child } from '../support/processes'
import { eventually, redisServerBinary, shorten, startStack } from '../support/stack'
import { CLICK_SPOOL } from '../../redirect/segment'

const CLIENTS = 16
const LOAD_MS = 1500

const segmentsIn = (dataDir: string) => readdirSync(join(dataDir, 'click-spool')).filter((f) => f.endsWith(CLICK_SPOOL.suffix))

/** Loads `url`, kills `victim` with SIGKILL mid-run, and returns what the clients saw. */
async function killUnderLoad(url: string, victim: Child): Promise<LoadResult> {
  const load = clickLoad(url, CLIENTS)
  await Bun.sleep(LOAD_MS)
  await victim.stop('SIGKILL')
  const result = await load
  expect(result.received.size, victim.output()).toBeGreaterThan(100)
  return result
}

describe('SIGKILL under load', () => {
  test('embedded default: every answered click stored exactly once after the restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'crash-embedded-'))
    const port = await freePort()
    const env = { PORT: String(port), DATA_DIR: dataDir }
    const first = await startEntry('one-process/main.ts', env, port)
    const link = await shorten(first.url, 'https://example.com/crash')
    const load = await killUnderLoad(`${first.url}/${link.alias}`, first)
    expect(segmentsIn(dataDir).length, 'clicks not yet shipped when killed').toBeGreaterThan(0)

    // The restart replays the log; SIGTERM then drains it (chDB is in the process, so it always can).
    const second = await startEntry('one-process/main.ts', env, port)
    expect(await second.stop(), second.output()).toBe(0)
    expect(segmentsIn(dataDir)).toEqual([])
    const counted = Bun.spawnSync([process.execPath, join(import.meta.dir, '../support/click-referrers.ts'), dataDir, link.alias])
    expectEachAnsweredClickOnce(JSON.parse(counted.stdout.toString() || 'null') ?? { error: counted.stderr.toString() }, load)
  }, 120_000)

  // The stand-alone redirector needs a real Redis (redis-server); .ci/run installs it, so CI runs this in
  // both passes. Skipped only where no redis-server binary exists.
  test.skipIf(!redisServerBinary)(
    'stand-alone redirector: every answered click stored exactly once after the restart',
    async () => {
      const stack = await startStack({ prefix: 'crash-split-', env: { CLICK_FLUSH_MS: '1000' } })
      let second: Child | undefined
      try {
        const link = await shorten(stack.api.url, 'https://example.com/crash-split')
        const load = await killUnderLoad(link.short_url, stack.redirector)
        expect(segmentsIn(stack.dataDir).length, 'clicks not yet shipped when killed').toBeGreaterThan(0)

        const port = Number(new URL(stack.redirector.url).port)
        second = await startEntry('redirect/main.ts', { ...stack.env, REDIRECT_PORT: String(port), API_INTERNAL_URL: stack.api.url }, port)
        await eventually(
          async () => segmentsIn(stack.dataDir).length,
          (n) => n === 0,
          20_000,
          { what: 'the replayed log shipped' },
        )
        expectEachAnsweredClickOnce(await clickRowsOf(stack.clickhouse, link.alias), load)
      } finally {
        await second?.stop()
        await stack.stop()
      }
    },
    120_000,
  )
})
