// Shipping a durable spool: in order, under each segment's token, through a store that fails, across a
// restart, past an unreadable file, and without keeping a process alive. The store here is a recording
// sink; that ClickHouse drops a replay under the same token is tested on chDB by the spool's owners
// (redirect/batcher.test.ts, src/modules/audit/recorder.test.ts).
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FlushLabel, Segment } from './spool-files'
import { LINES, openSpool, WORDS } from '../test/support/spool-fixtures'
import { SpoolShipper, type ShipperOptions, type SpoolSink } from './spool-shipper'

/** A store that records every attempt; `down` makes it refuse, `loseAnswers` makes it store without answering. */
function recordingSink() {
  const store = { down: false, loseAnswers: 0, attempts: [] as Array<{ token: string; label: FlushLabel }>, stored: [] as string[][] }
  const sink: SpoolSink<string[], FlushLabel> = {
    async insert(rows, token, label) {
      store.attempts.push({ token, label })
      if (store.down) throw new Error('connect ECONNREFUSED')
      store.stored.push(rows)
      if (store.loseAnswers-- > 0) throw new Error('socket hang up')
    },
  }
  return { sink, store }
}

const LABELS: FlushLabel[] = ['size', 'interval', 'flush', 'shutdown', 'replay']

/** A spool of lines and its shipper, wired as the click log and the audit recorder wire theirs. */
function spoolWithShipper(sink: SpoolSink<string[], FlushLabel>, overrides: Partial<ShipperOptions<string, string[], FlushLabel>> & { dir?: string; batchSize?: number } = {}) {
  const readBack: string[] = []
  const said: string[] = []
  let trimmed = (_bytes: number) => {}
  const shipper = new SpoolShipper<string, string[], FlushLabel>(sink, {
    labels: LABELS,
    maxMemoryRows: 1000,
    retryDelayMs: 10,
    maxRetryDelayMs: 50,
    words: WORDS,
    log: (l) => said.push(l),
    trimmed: (bytes) => trimmed(bytes),
    load(segment: Segment<string>) {
      if (segment.events) return { batch: segment.events, rows: segment.events.length }
      readBack.push(segment.file)
      const rows = readFileSync(segment.file, 'utf8').split('\n').filter(Boolean)
      if (rows.some((r) => r.startsWith('{'))) throw new Error('not a line of this spool')
      return { batch: rows, rows: rows.length }
    },
    ...overrides,
  })
  const spool = openSpool({ dir: overrides.dir, batchSize: overrides.batchSize ?? 1000, onSeal: (s) => shipper.add(s) })
  trimmed = (bytes) => spool.log.trimmed(bytes)
  for (const leftover of spool.leftovers) shipper.add(leftover)
  return { ...spool, shipper, readBack, said }
}

async function until(check: () => boolean, what: string) {
  const deadline = Date.now() + 10_000
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not in time`)
    await Bun.sleep(10)
  }
}

const segmentsIn = (dir: string) => readdirSync(dir).filter((f) => f.endsWith(LINES.suffix))

describe('shipping', () => {
  test('oldest first, one insert a segment under its token and label; deleted and trimmed once stored', async () => {
    const { sink, store } = recordingSink()
    const { log, shipper, sealed, dir } = spoolWithShipper(sink)
    for (const row of ['a', 'b', 'c']) {
      await log.append(row)
      log.flushNow('flush')
    }
    await shipper.shipped(log.lastSeq)
    expect(store.stored).toEqual([['a'], ['b'], ['c']])
    expect(store.attempts).toEqual(sealed.map((s) => ({ token: s.token, label: 'flush' })))
    expect(segmentsIn(dir)).toEqual([])
    expect(shipper.snapshot()).toMatchObject({ written: 3, batchesWritten: 3, spooledFiles: 0, pendingRows: 0, flushes: { flush: 3, size: 0 } })
    log.close()
  })

  test("the bytes of each shipped segment are trimmed from the log's bound", async () => {
    const { sink } = recordingSink()
    const { log, shipper } = spoolWithShipper(sink)
    await log.append('abc')
    log.flushNow('flush')
    expect(log.snapshot().spoolBytes).toBe(4)
    await shipper.shipped(log.lastSeq)
    expect(log.snapshot().spoolBytes).toBe(0)
    log.close()
  })

  test('while the store is down: retried under the same token, said once and once recovered; beyond the memory budget read back', async () => {
    const { sink, store } = recordingSink()
    store.down = true
    const { log, shipper, readBack, said } = spoolWithShipper(sink, { maxMemoryRows: 2 })
    for (const row of ['a', 'b', 'c', 'd']) {
      await log.append(row)
      log.flushNow('size')
    }
    await until(() => store.attempts.length >= 3, 'retries')
    expect(new Set(store.attempts.map((a) => a.token)).size).toBe(1) // the head, again and again
    expect(shipper.snapshot()).toMatchObject({ written: 0, spooledFiles: 4, pendingRows: 4 })
    store.down = false
    await shipper.shipped(log.lastSeq)
    expect(store.stored).toEqual([['a'], ['b'], ['c'], ['d']])
    expect(readBack).toHaveLength(2) // two rows in memory, the other two segments read from their files
    expect(said).toEqual(['test: ClickHouse insert failed (connect ECONNREFUSED); rows wait in the spool', 'test: ClickHouse takes test batches again'])
    expect(shipper.snapshot().failedAttempts).toBeGreaterThanOrEqual(3)
    log.close()
  })

  test('a segment stored whose answer was lost is left on disk at drain, and the next start replays it under the same token', async () => {
    const { sink, store } = recordingSink()
    store.loseAnswers = 1_000
    const first = spoolWithShipper(sink)
    await first.log.append('once')
    first.log.close()
    await first.shipper.drain(100) // what a kill after the insert leaves: the segment on disk
    expect(segmentsIn(first.dir)).toHaveLength(1)
    store.loseAnswers = 0
    const second = spoolWithShipper(sink, { dir: first.dir })
    await second.shipper.shipped(second.log.lastSeq)
    expect(new Set(store.attempts.map((a) => a.token)).size).toBe(1)
    expect(store.attempts.at(-1)!.label).toBe('replay')
    expect(segmentsIn(first.dir)).toEqual([])
    second.log.close()
  })

  test('an unreadable file is set aside for a person, counted, and shipping goes on past it', async () => {
    const { sink, store } = recordingSink()
    const { dir } = openSpool()
    writeFileSync(join(dir, `000000000000001-000000-aaaaaaaaaaaaaaaa${LINES.suffix}`), '{"not":"a line"}\n')
    const { log, shipper } = spoolWithShipper(sink, { dir })
    await log.append('after')
    log.flushNow('flush')
    await shipper.shipped(log.lastSeq)
    expect(store.stored).toEqual([['after']])
    expect(shipper.snapshot().setAside).toBe(1)
    expect(readdirSync(dir)).toEqual([`000000000000001-000000-aaaaaaaaaaaaaaaa${LINES.suffix}.corrupt`])
    log.close()
  })
})

describe('timers', () => {
  test('neither the sealing interval nor the retry backoff keeps a process alive: what is unsealed waits on disk', async () => {
    const dir = join(tmpdir(), `spool-exit-${crypto.randomUUID()}`)
    const script = join(tmpdir(), `spool-exit-${crypto.randomUUID()}.ts`)
    writeFileSync(
      script,
      `
      import { SpoolLog } from ${JSON.stringify(join(import.meta.dir, 'spool.ts'))}
      import { SpoolShipper } from ${JSON.stringify(join(import.meta.dir, 'spool-shipper.ts'))}
      import { LINES, WORDS, lines } from ${JSON.stringify(join(import.meta.dir, '../test/support/spool-fixtures.ts'))}
      const down = { async insert() { throw new Error('down') } }
      const shipper = new SpoolShipper(down, { labels: ['flush'], maxMemoryRows: 0, retryDelayMs: 60_000, maxRetryDelayMs: 60_000, words: WORDS, load: () => ({ batch: [], rows: 1 }) })
      const log = new SpoolLog({ dir: ${JSON.stringify(dir)}, kind: LINES, batchSize: 1000, flushIntervalMs: 60_000, maxBytes: 1 << 20, fsync: false, keepEvents: false, encode: lines, onSeal: (s) => shipper.add(s), words: WORDS })
      log.open()
      await log.append('sealed and retried')
      log.flushNow('flush')
      await log.append('unsealed')
      console.log('appended')
    `,
    )
    const child = Bun.spawn([process.execPath, script], { stdout: 'pipe', stderr: 'pipe' })
    const exited = await Promise.race([child.exited, Bun.sleep(20_000).then(() => 'still running')])
    if (exited === 'still running') child.kill()
    expect(exited, await new Response(child.stderr).text()).toBe(0)
    expect(await new Response(child.stdout).text()).toBe('appended\n')
    expect(
      segmentsIn(dir)
        .sort()
        .map((f) => readFileSync(join(dir, f), 'utf8')),
    ).toEqual(['sealed and retried\n', 'unsealed\n'])
    rmSync(script, { force: true })
  }, 30_000)
})
