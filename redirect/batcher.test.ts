import { describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ClickEvent } from '../src/core/clicks'
import { countClicks, testClickHouse } from '../test/support/clickhouse'
import { ClickBatcher, type ClickSink, type EncodedBatch, type FlushLabel } from './batcher'
import { clickhouseSink } from './clickhouse-sink'

const secret = 'test-ip-hash-secret-0123456789abcdef'

function click(linkId: string, n: number): ClickEvent {
  return { clickId: `${linkId}-${n}`, linkId, domain: 'sho.rt', alias: 'abcd', at: Date.now(), referrer: '', userAgent: 'ua', ip: '10.0.0.1', country: 'de', url: 'https://dest.example/' }
}

function options(overrides: Partial<ConstructorParameters<typeof ClickBatcher>[1]> = {}) {
  return {
    batchSize: 100, flushIntervalMs: 50, maxPendingRows: 1000, ipHashSecret: secret,
    spoolDir: mkdtempSync(join(tmpdir(), 'spool-')), retryDelayMs: 10, maxRetryDelayMs: 50, ...overrides,
  }
}

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
  test('flushes a full batch by size and the rest by interval, labelled', async () => {
    const client = await testClickHouse()
    const linkId = `link_${crypto.randomUUID()}`
    const { sink, state } = flakySink(clickhouseSink(client))
    const batcher = new ClickBatcher(sink, options({ batchSize: 10, flushIntervalMs: 100 })).start()
    for (let i = 0; i < 25; i++) batcher.push(click(linkId, i))
    await until(async () => (await countClicks(client, linkId)) === 25)
    expect(state.labels.filter((l) => l === 'size').length).toBe(2)
    expect(state.labels).toContain('interval')
    await batcher.drain(1000)
  })

  test('a batch whose answer was lost is retried with the same token and stored once', async () => {
    const client = await testClickHouse()
    const linkId = `link_${crypto.randomUUID()}`
    const { sink, state } = flakySink(clickhouseSink(client))
    state.loseAnswers = 2
    const batcher = new ClickBatcher(sink, options({ batchSize: 50 })).start()
    for (let i = 0; i < 50; i++) batcher.push(click(linkId, i))
    await until(() => batcher.snapshot().batchesWritten === 1)
    expect(state.tokens.length).toBe(3)
    expect(new Set(state.tokens).size).toBe(1)
    expect(await countClicks(client, linkId)).toBe(50)
    await batcher.drain(1000)
  })

  test('while ClickHouse is down batches wait, overflow to the spool, and all arrive once it is back', async () => {
    const client = await testClickHouse()
    const linkId = `link_${crypto.randomUUID()}`
    const { sink, state } = flakySink(clickhouseSink(client))
    state.down = true
    const opts = options({ batchSize: 20, maxPendingRows: 40 })
    const batcher = new ClickBatcher(sink, opts).start()
    for (let i = 0; i < 200; i++) batcher.push(click(linkId, i))
    await Bun.sleep(150)
    const waiting = batcher.snapshot()
    expect(waiting.written).toBe(0)
    expect(waiting.spooledFiles).toBeGreaterThan(0)
    expect(readdirSync(opts.spoolDir).filter((f) => f.endsWith('.json')).length).toBe(waiting.spooledFiles)
    state.down = false
    await until(async () => (await countClicks(client, linkId)) === 200)
    await until(() => batcher.snapshot().spooledFiles === 0)
    expect(readdirSync(opts.spoolDir)).toEqual([])
    await batcher.drain(1000)
    expect(await countClicks(client, linkId)).toBe(200)
  })

  test('shutdown with ClickHouse down spools everything; the next start writes it once', async () => {
    const client = await testClickHouse()
    const linkId = `link_${crypto.randomUUID()}`
    const { sink, state } = flakySink(clickhouseSink(client))
    state.down = true
    const opts = options({ batchSize: 1000, flushIntervalMs: 10_000 })
    const first = new ClickBatcher(sink, opts).start()
    for (let i = 0; i < 30; i++) first.push(click(linkId, i))
    const stats = await first.drain(200)
    expect(stats.flushes.shutdown).toBe(1)
    expect(stats.spooledFiles).toBe(1)
    state.down = false
    const second = new ClickBatcher(sink, opts).start()
    await until(() => second.snapshot().spooledFiles === 0)
    await second.drain(1000)
    expect(await countClicks(client, linkId)).toBe(30)
  })

  test('stored rows carry a hashed IP, never the IP itself, and a normalised country', async () => {
    const client = await testClickHouse()
    const linkId = `link_${crypto.randomUUID()}`
    const batcher = new ClickBatcher(clickhouseSink(client), options()).start()
    batcher.push(click(linkId, 1))
    await batcher.drain(2000)
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
    const batcher = new ClickBatcher(clickhouseSink(client), options()).start()
    const url = 'https://shop.example/p?utm_source=news&utm_medium=email&utm_campaign=spring%20sale&utm_term=t&utm_content=hero'
    const iphone = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1'
    batcher.push({ ...click(linkId, 1), userAgent: iphone, referrer: 'https://News.Example.com/story?id=1', ip: '8.8.8.8', country: '', url })
    batcher.push({ ...click(linkId, 2), userAgent: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', referrer: 'not a url', url: 'https://shop.example/plain' })
    batcher.push({ ...click(linkId, 3), userAgent: '', referrer: '' })
    await batcher.drain(2000)
    const result = await client.query({
      query: `SELECT click_id, country, device_type, browser, os, is_bot, bot_reason, referrer_host, utm_source, utm_medium, utm_campaign, utm_term, utm_content
              FROM clicks_v1 WHERE link_id = {linkId:String} ORDER BY click_id`,
      query_params: { linkId },
      format: 'JSONEachRow',
    })
    const rows = await result.json()
    const none = { utm_source: '', utm_medium: '', utm_campaign: '', utm_term: '', utm_content: '' }
    expect(rows, JSON.stringify(rows)).toEqual([
      { click_id: `${linkId}-1`, country: 'US', device_type: 'mobile', browser: 'Mobile Safari', os: 'iOS', is_bot: 0, bot_reason: '', referrer_host: 'news.example.com', utm_source: 'news', utm_medium: 'email', utm_campaign: 'spring sale', utm_term: 't', utm_content: 'hero' },
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
    const batcher = new ClickBatcher(clickhouseSink(client), opts).start()
    await until(() => batcher.snapshot().spooledFiles === 0)
    await batcher.drain(1000)
    const result = await client.query({ query: 'SELECT user_agent, country, device_type, is_bot, utm_content FROM clicks_v1 WHERE link_id = {linkId:String}', query_params: { linkId }, format: 'JSONEachRow' })
    expect(await result.json()).toEqual([{ user_agent: 'curl/8', country: 'FR', device_type: '', is_bot: 0, utm_content: '' }])
  })

  test('header values with tabs, newlines and backslashes are stored exactly as sent', async () => {
    const client = await testClickHouse()
    const linkId = `link_${crypto.randomUUID()}`
    const batcher = new ClickBatcher(clickhouseSink(client), options()).start()
    const referrer = 'https://a.example/?q=tab\there\nline\\back\r'
    const userAgent = 'UA\t"quoted" \\N \u00e9\u4e2d'
    batcher.push({ ...click(linkId, 1), referrer, userAgent, country: 'd\te' })
    await batcher.drain(2000)
    const result = await client.query({ query: 'SELECT referrer, user_agent, country FROM clicks_v1 WHERE link_id = {linkId:String}', query_params: { linkId }, format: 'JSONEachRow' })
    expect(await result.json()).toEqual([{ referrer, user_agent: userAgent, country: '' }])
  })
})
