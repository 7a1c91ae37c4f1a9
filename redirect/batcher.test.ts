import { describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ClickEvent } from '../core/clicks'
import { countClicks, testClickHouse } from '../test/support/clickhouse'
import type { ClickSink, EncodedBatch, FlushLabel } from './batcher'
import { workerRecorder, type ClickRecorder, type RecorderOptions } from './recorder'
import { rawInsertOf } from '../src/adapters/clickhouse'
import { clickhouseSink, rawClickSink } from './clickhouse-sink'
import { wireRow } from './click-wire'
import { CLICK_SPOOL, tokenOf } from './segment'

const secret = 'test-ip-hash-secret-0123456789abcdef'

function click(linkId: string, n: number): ClickEvent {
  return { clickId: `${linkId}-${n}`, linkId, domain: 'sho.rt', alias: 'abcd', at: Date.now(), referrer: '', userAgent: 'ua', ip: '10.0.0.1', country: 'de', url: 'https://dest.example/' }
}

function options(overrides: Partial<RecorderOptions> = {}): RecorderOptions {
  return {
    batchSize: 100,
    flushIntervalMs: 50,
    ipHashSecret: secret,
    maxSpoolBytes: 64 * 1024 * 1024,
    fsync: false,
    spoolDir: mkdtempSync(join(tmpdir(), 'spool-')),
    retryDelayMs: 10,
    maxRetryDelayMs: 50,
    ...overrides,
  }
}

/** Records the clicks and waits until they are on disk, as the handler does before answering. */
async function record(recorder: ClickRecorder, clicks: ClickEvent[]) {
  await Promise.all(clicks.map((c) => recorder.record(c)))
}

/**
 * Until the worker reports `rows` clicks written and nothing waiting (its counters reach this thread every
 * 250 ms; a fresh worker first loads the IP-to-country table, which takes a while under a busy suite).
 */
async function shipped(recorder: ClickRecorder, rows: number) {
  await until(() => recorder.stats().written >= rows && recorder.stats().spooledFiles === 0, 20_000)
}

const segmentsIn = (dir: string) => readdirSync(dir).filter((f) => f.endsWith(CLICK_SPOOL.suffix))

/** A sink in front of real ClickHouse that can be made unreachable, or to lose its answers. */
function flakySink(real: ClickSink) {
  const state = { down: false, loseAnswers: 0, tokens: [] as string[], labels: [] as FlushLabel[] }
  const sink: ClickSink = {
    async insert(batch: EncodedBatch, token: string, label: FlushLabel) {
      state.tokens.push(token)
      state.labels.push(label)
      if (state.down) throw new Error('ClickHouse unreachable')
      await real.insert(batch, token, label)
      // The insert happened, but the client never hears so: it must retry with the same token.
      if (state.loseAnswers-- > 0) throw new Error('socket hang up')
    },
  }
  return { sink, state }
}

async function until(check: () => Promise<boolean> | boolean, timeoutMs = 5000) {
  const end = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time')
    await Bun.sleep(20)
  }
}

describe('click batcher', () => {
  test('ships a full segment by size and the rest by interval, labelled', async () => {
    const client = await testClickHouse()
    const linkId = `link_${crypto.randomUUID()}`
    const { sink, state } = flakySink(clickhouseSink(client))
    const recorder = await workerRecorder({ sink }, options({ batchSize: 10, flushIntervalMs: 100 }))
    for (let i = 0; i < 25; i += 5)
      await record(
        recorder,
        Array.from({ length: 5 }, (_, k) => click(linkId, i + k)),
      )
    await until(async () => (await countClicks(client, linkId)) === 25)
    expect(state.labels.filter((l) => l === 'size').length).toBe(2)
    expect(state.labels).toContain('interval')
    await recorder.stop(1000)
  })

  test('a batch whose answer was lost is retried with the same token and stored once', async () => {
    const client = await testClickHouse()
    const linkId = `link_${crypto.randomUUID()}`
    const { sink, state } = flakySink(clickhouseSink(client))
    state.loseAnswers = 2
    const recorder = await workerRecorder({ sink }, options({ batchSize: 50 }))
    await record(
      recorder,
      Array.from({ length: 50 }, (_, i) => click(linkId, i)),
    )
    await until(() => recorder.stats().batchesWritten === 1)
    expect(state.tokens.length).toBe(3)
    expect(new Set(state.tokens).size).toBe(1)
    expect(await countClicks(client, linkId)).toBe(50)
    await recorder.stop(1000)
  })

  test('while ClickHouse is down segments wait on disk and all arrive, read back from their files, once it is back', async () => {
    const client = await testClickHouse()
    const linkId = `link_${crypto.randomUUID()}`
    const { sink, state } = flakySink(clickhouseSink(client))
    state.down = true
    const opts = options({ batchSize: 20 })
    const recorder = await workerRecorder({ sink }, opts)
    for (let i = 0; i < 200; i += 20)
      await record(
        recorder,
        Array.from({ length: 20 }, (_, k) => click(linkId, i + k)),
      )
    // The worker's counters reach this thread every 250 ms.
    await until(() => recorder.stats().spooledFiles === 10 && recorder.stats().failedAttempts > 0)
    const waiting = recorder.stats()
    expect(waiting.written).toBe(0)
    expect(waiting.spooledFiles).toBe(10)
    expect(segmentsIn(opts.spoolDir).length).toBe(10)
    expect(waiting.spoolBytes).toBeGreaterThan(0)
    state.down = false
    await until(async () => (await countClicks(client, linkId)) === 200)
    await until(() => recorder.stats().spooledFiles === 0)
    expect(recorder.stats().replayedRows).toBe(200) // the worker reads every segment back from its file
    expect(recorder.stats().spoolBytes).toBe(0)
    expect(readdirSync(opts.spoolDir)).toEqual([])
    await recorder.stop(1000)
    expect(await countClicks(client, linkId)).toBe(200)
  })

  test('into chDB in this process (the embedded default): bytes straight to its parser, a retried batch stored once, enriched the same', async () => {
    const client = await testClickHouse()
    const raw = rawInsertOf(client)
    expect(raw).toBeDefined()
    const linkId = `link_${crypto.randomUUID()}`
    const { sink, state } = flakySink(rawClickSink(raw!))
    state.loseAnswers = 2
    const recorder = await workerRecorder({ sink }, options({ batchSize: 30 }))
    const referrer = 'https://a.example/?q=tab\there\nline\\back'
    await record(
      recorder,
      Array.from({ length: 30 }, (_, i) => ({ ...click(linkId, i), referrer, userAgent: 'curl/8.4.0' })),
    )
    await until(() => recorder.stats().batchesWritten === 1, 20_000)
    await recorder.stop(1000)
    expect(state.tokens).toHaveLength(3)
    expect(new Set(state.tokens).size).toBe(1)
    expect(await countClicks(client, linkId)).toBe(30)
    const result = await client.query({ query: 'SELECT DISTINCT referrer, bot_reason, country FROM clicks_v1 WHERE link_id = {linkId:String}', query_params: { linkId }, format: 'JSONEachRow' })
    expect(await result.json()).toEqual([{ referrer, bot_reason: 'curl', country: 'DE' }])
  })

  // The batcher reads each segment into, and encodes it in, buffers it keeps from batch to batch, and the
  // relay moves one buffer back and forth: a smaller batch after a larger one must carry its own rows only,
  // none left over from the batch before, through both sinks.
  for (const [name, sinkOf] of [
    ['ClickHouse client', (client: Awaited<ReturnType<typeof testClickHouse>>) => clickhouseSink(client)],
    ['chDB in this process', (client: Awaited<ReturnType<typeof testClickHouse>>) => rawClickSink(rawInsertOf(client)!)],
  ] as const) {
    test(`a smaller batch after a larger one carries its own rows only, none of the one before (${name})`, async () => {
      const client = await testClickHouse()
      const linkId = `link_${crypto.randomUUID()}`
      const { sink, state } = flakySink(sinkOf(client))
      const recorder = await workerRecorder({ sink }, options({ batchSize: 1000, flushIntervalMs: 100 }))
      const stats = () => recorder.stats()
      let n = 0
      // Rows of differing lengths, so a leftover byte would shift or break the rows after it.
      const next = (size: number) => Array.from({ length: size }, () => ({ ...click(linkId, n++), referrer: `https://r.example/${'x'.repeat(n % 97)}` }))
      for (const size of [1000, 7, 300]) {
        const before = stats().batchesWritten
        if (size === 300) state.loseAnswers = 1 // the last batch is sent again from the same buffers
        await record(recorder, next(size))
        // One batch each: 1000 rows fill a segment, the smaller ones are sealed by the interval.
        await until(() => stats().batchesWritten === before + 1, 20_000)
      }
      await recorder.stop(5000)
      const result = await client.query({
        query: "SELECT count() AS rows, uniqExact(click_id) AS ids, countIf(referrer NOT LIKE 'https://r.example/%') AS odd FROM clicks_v1 WHERE link_id = {linkId:String}",
        query_params: { linkId },
        format: 'JSONEachRow',
      })
      const [counts] = await result.json<{ rows: string | number; ids: string | number; odd: string | number }>()
      expect([counts!.rows, counts!.ids, counts!.odd].map(Number)).toEqual([1307, 1307, 0])
      expect(state.tokens.length).toBe(4) // three batches, the last one twice
    })
  }

  test('shutdown with ClickHouse down leaves the segments; the next start writes them once', async () => {
    const client = await testClickHouse()
    const linkId = `link_${crypto.randomUUID()}`
    const { sink, state } = flakySink(clickhouseSink(client))
    state.down = true
    const opts = options({ batchSize: 1000, flushIntervalMs: 10_000 })
    const first = await workerRecorder({ sink }, opts)
    await record(
      first,
      Array.from({ length: 30 }, (_, i) => click(linkId, i)),
    )
    const stats = await first.stop(200)
    expect(stats.flushes.shutdown).toBe(1)
    expect(stats.spooledFiles).toBe(1)
    state.down = false
    const second = await workerRecorder({ sink }, opts)
    await until(() => second.stats().written === 30 && second.stats().spooledFiles === 0)
    expect(second.stats().flushes.replay).toBe(1)
    await second.stop(1000)
    expect(await countClicks(client, linkId)).toBe(30)
  })

  test('a segment inserted but not deleted before a crash is replayed under the same token and stored once', async () => {
    const client = await testClickHouse()
    const linkId = `link_${crypto.randomUUID()}`
    const { sink, state } = flakySink(clickhouseSink(client))
    state.loseAnswers = 1_000 // every insert lands, no answer arrives: the file is never deleted
    const opts = options({ batchSize: 1000, flushIntervalMs: 200 })
    const first = await workerRecorder({ sink }, opts)
    await record(
      first,
      Array.from({ length: 40 }, (_, i) => click(linkId, i)),
    )
    await until(() => state.tokens.length > 0, 20_000) // inserted at least once, never acknowledged
    await first.stop(200) // what a SIGKILL after the insert leaves: the segment on disk
    expect(await countClicks(client, linkId)).toBe(40)
    expect(segmentsIn(opts.spoolDir).length).toBe(1)
    state.loseAnswers = 0
    const second = await workerRecorder({ sink }, opts)
    await until(() => second.stats().written === 40 && second.stats().spooledFiles === 0)
    await second.stop(1000)
    expect(new Set(state.tokens).size).toBe(1)
    expect(await countClicks(client, linkId)).toBe(40)
  })

  test('stored rows carry a hashed IP, never the IP itself, and a normalised country', async () => {
    const client = await testClickHouse()
    const linkId = `link_${crypto.randomUUID()}`
    const recorder = await workerRecorder({ sink: clickhouseSink(client) }, options())
    await record(recorder, [click(linkId, 1)])
    await shipped(recorder, 1)
    await recorder.stop(2000)
    const result = await client.query({ query: 'SELECT ip_hash, country FROM clicks_v1 WHERE link_id = {linkId:String}', query_params: { linkId }, format: 'JSONEachRow' })
    const rows = await result.json<{ ip_hash: string; country: string }>()
    expect(rows).toHaveLength(1)
    expect(rows[0]!.ip_hash).toMatch(/^[0-9a-f]{32}$/)
    expect(rows[0]!.ip_hash).not.toContain('10.0.0.1')
    expect(rows[0]!.country).toBe('DE')
  })

  test('enriched columns land: device, browser, OS, bot flag and reason, referrer host, UTM snapshot, country by IP', async () => {
    const client = await testClickHouse()
    const linkId = `link_${crypto.randomUUID()}`
    const recorder = await workerRecorder({ sink: clickhouseSink(client) }, options())
    const url = 'https://shop.example/p?utm_source=news&utm_medium=email&utm_campaign=spring%20sale&utm_term=t&utm_content=hero'
    const iphone = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1'
    await record(recorder, [
      { ...click(linkId, 1), userAgent: iphone, referrer: 'https://News.Example.com/story?id=1', ip: '8.8.8.8', country: '', url },
      { ...click(linkId, 2), userAgent: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', referrer: 'not a url', url: 'https://shop.example/plain' },
      { ...click(linkId, 3), userAgent: '', referrer: '' },
    ])
    await shipped(recorder, 3)
    await recorder.stop(2000)
    const result = await client.query({
      query: `SELECT click_id, country, device_type, browser, os, is_bot, bot_reason, referrer_host, utm_source, utm_medium, utm_campaign, utm_term, utm_content
              FROM clicks_v1 WHERE link_id = {linkId:String} ORDER BY click_id`,
      query_params: { linkId },
      format: 'JSONEachRow',
    })
    const rows = await result.json()
    const none = { utm_source: '', utm_medium: '', utm_campaign: '', utm_term: '', utm_content: '' }
    expect(rows, JSON.stringify(rows)).toEqual([
      {
        click_id: `${linkId}-1`,
        country: 'US',
        device_type: 'mobile',
        browser: 'Mobile Safari',
        os: 'iOS',
        is_bot: 0,
        bot_reason: '',
        referrer_host: 'news.example.com',
        utm_source: 'news',
        utm_medium: 'email',
        utm_campaign: 'spring sale',
        utm_term: 't',
        utm_content: 'hero',
      },
      { click_id: `${linkId}-2`, country: 'DE', device_type: 'bot', browser: '', os: '', is_bot: 1, bot_reason: 'googlebot', referrer_host: '', ...none },
      { click_id: `${linkId}-3`, country: 'DE', device_type: 'bot', browser: '', os: '', is_bot: 1, bot_reason: 'empty-user-agent', referrer_host: '', ...none },
    ])
  })

  test('a batch spooled by the version before enrichment (9 columns) is written with defaults', async () => {
    const client = await testClickHouse()
    const linkId = `link_${crypto.randomUUID()}`
    const opts = options()
    const legacy = `c1\t${linkId}\tsho.rt\tabcd\t2026-01-02 03:04:05.006\t\tcurl/8\t${'a'.repeat(32)}\tFR\n`
    writeFileSync(join(opts.spoolDir, `000000000000001-clk-legacy.json`), JSON.stringify({ token: `clk-${crypto.randomUUID()}`, label: 'shutdown', rows: 1, chunks: [legacy] }))
    const recorder = await workerRecorder({ sink: clickhouseSink(client) }, opts)
    await shipped(recorder, 1)
    await recorder.stop(1000)
    const result = await client.query({
      query: 'SELECT user_agent, country, device_type, is_bot, utm_content FROM clicks_v1 WHERE link_id = {linkId:String}',
      query_params: { linkId },
      format: 'JSONEachRow',
    })
    expect(await result.json()).toEqual([{ user_agent: 'curl/8', country: 'FR', device_type: '', is_bot: 0, utm_content: '' }])
    expect(readdirSync(opts.spoolDir)).toEqual([])
  })

  test('a segment of wire rows left by the version before this format is shipped after the upgrade, under its own token', async () => {
    const client = await testClickHouse()
    const linkId = `link_${crypto.randomUUID()}`
    const opts = options()
    const rows = [{ ...click(linkId, 1), referrer: 'https://r.example/\tx', userAgent: 'UA\t9' }, click(linkId, 2)]
    const payload = rows.map(wireRow).join('')
    const file = join(opts.spoolDir, '000000000000001-000000-0123456789abcdef.log')
    writeFileSync(file, `${payload.length}\n${payload}\n`)
    const recorder = await workerRecorder({ sink: clickhouseSink(client) }, opts)
    await shipped(recorder, 2)
    await recorder.stop(1000)
    const result = await client.query({
      query: 'SELECT click_id, referrer, user_agent FROM clicks_v1 WHERE link_id = {linkId:String} ORDER BY click_id',
      query_params: { linkId },
      format: 'JSONEachRow',
    })
    expect(await result.json()).toEqual(rows.map((r) => ({ click_id: r.clickId, referrer: r.referrer, user_agent: r.userAgent })))
    expect(tokenOf(file)).toBe('clk-000000000000001-000000-0123456789abcdef')
    expect(readdirSync(opts.spoolDir)).toEqual([])
  })

  test('header values with tabs, newlines and backslashes are stored exactly as sent, also read back from disk', async () => {
    const client = await testClickHouse()
    const linkId = `link_${crypto.randomUUID()}`
    const opts = options() // the worker reads the row back from the file
    const recorder = await workerRecorder({ sink: clickhouseSink(client) }, opts)
    const referrer = 'https://a.example/?q=tab\there\nline\\back\r'
    const userAgent = 'UA\t"quoted" \\N \u00e9\u4e2d'
    await record(recorder, [{ ...click(linkId, 1), referrer, userAgent, country: 'd\te' }])
    await shipped(recorder, 1)
    const stats = await recorder.stop(2000)
    expect(stats.replayedRows).toBe(1)
    const result = await client.query({ query: 'SELECT referrer, user_agent, country FROM clicks_v1 WHERE link_id = {linkId:String}', query_params: { linkId }, format: 'JSONEachRow' })
    expect(await result.json()).toEqual([{ referrer, user_agent: userAgent, country: '' }])
  })
})
