// QR rendering does not hold the thread that answers requests. The embedded default
// (one-process/main.ts: the API and the redirects on one port and one serving thread) gets 16 concurrent
// requests for the largest PNG, each of another size so no cache helps, while the test asks /health and
// a short link over and over, one request after another. A PNG drawn on the serving thread (100-450 ms of
// CPU) holds it, so a prober gets about one answer per PNG drawn; drawn off it, the probes are answered
// all the while. The test asserts the order of the answers, never how long they took: between the first
// and the last PNG answer, each prober was answered several times per PNG. It prints the p99 of both
// probes during the burst (the figures' home is bench/qr.ts).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import jsQR from 'jsqr'
import { PNG } from 'pngjs'
import { openDatabase } from '../../db/client'
import { newAccount, type TestAccount } from '../../../test/support/fixtures'
import { freePort, startEntry, type Child } from '../../../test/support/processes'
import { apiCall } from '../../../test/support/stack'
import { QR_PNG_MAX_SIZE } from './qr'

const BURST = 16
/**
 * Answers each prober must get, per PNG answered, between the first and the last PNG answer. A serving
 * thread that draws the PNGs answers a prober about once per PNG (it is free only between two drawings);
 * one that does not answers a probe in a millisecond or so while a drawing takes a hundred or more.
 */
const PROBES_PER_PNG = 4
/**
 * A pause between one prober's requests, as a health checker has: probing flat out would take both cores
 * (the test's and the serving thread's) and starve the render thread, which runs at a lower priority.
 */
const PROBE_PAUSE_MS = 5

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? Number.NaN
}

/** The order of the answers, run-length encoded: `png health×40 redirect×38 png …`. */
function order(arrivals: string[]): string {
  const runs: string[] = []
  for (let i = 0; i < arrivals.length; ) {
    let j = i
    while (j < arrivals.length && arrivals[j] === arrivals[i]) j++
    runs.push(j - i === 1 ? arrivals[i]! : `${arrivals[i]}×${j - i}`)
    i = j
  }
  return runs.join(' ')
}

describe('QR rendering and the serving thread (embedded default)', () => {
  let dataDir: string
  let app: Child
  let account: TestAccount

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'qr-stall-'))
    // PGlite belongs to one process at a time: the account is written before the product starts.
    const database = await openDatabase({ databaseUrl: undefined, dataDir })
    await database.migrate()
    account = await newAccount(database.db)
    await database.close()
    const port = await freePort()
    app = await startEntry('one-process/main.ts', { PORT: String(port), DATA_DIR: dataDir }, port)
  }, 150_000)

  afterAll(async () => {
    await app?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }, 30_000)

  test(`/health and a redirect are answered all through ${BURST} concurrent ${QR_PNG_MAX_SIZE} px PNGs`, async () => {
    const created = await apiCall(app.url, account.key, 'POST', '/api/v1/shorten', { url: 'https://example.com/qr-stall' })
    expect(created.status, created.text).toBe(200)
    const alias = created.body.data.alias as string
    // What the code encodes (the service's own name for itself), and the same link on the test's address.
    const encoded = created.body.data.short_url as string
    const shortUrl = `${app.url}/${alias}`
    const qr = (size: number) => fetch(`${app.url}/api/v1/links/${alias}/qr?format=png&size=${size}`, { headers: { authorization: `Bearer ${account.key}` } })
    // Warm: the link in the redirector's cache, the probes' code paths compiled, the render thread started.
    expect((await fetch(shortUrl, { redirect: 'manual' })).status, app.output()).toBe(302)
    expect((await fetch(`${app.url}/health`)).status, app.output()).toBe(200)
    expect((await qr(QR_PNG_MAX_SIZE - BURST)).status, app.output()).toBe(200)

    /** Every answer in the order it arrived. */
    const arrivals: string[] = []
    const latencies: Record<'health' | 'redirect', number[]> = { health: [], redirect: [] }
    let burstOver = false
    const probe = async (kind: 'health' | 'redirect', url: string, status: number) => {
      while (!burstOver) {
        const started = performance.now()
        const response = await fetch(url, { redirect: 'manual' })
        await response.arrayBuffer()
        expect(response.status, `${kind}: ${app.output()}`).toBe(status)
        latencies[kind].push(performance.now() - started)
        arrivals.push(kind)
        await Bun.sleep(PROBE_PAUSE_MS)
      }
    }
    // The largest sizes, each its own: every PNG is drawn, none comes from the cache.
    const sizes = Array.from({ length: BURST }, (_, i) => QR_PNG_MAX_SIZE - i)
    const pngs = sizes.map(async (size) => {
      const response = await qr(size).catch((error: Error) => {
        throw new Error(`PNG of ${size} px: ${error.message}; the product's output:\n${app.output()}`)
      })
      const bytes = Buffer.from(await response.arrayBuffer())
      // A drawn PNG, or the bounded queue's refusal (a machine far behind its work): see below.
      arrivals.push(response.status === 200 ? 'png' : 'busy')
      return { size, status: response.status, retryAfter: response.headers.get('retry-after'), bytes }
    })
    const probes = [probe('health', `${app.url}/health`, 200), probe('redirect', shortUrl, 302)]
    const answered = await Promise.all(pngs).finally(() => (burstOver = true))
    await Promise.all(probes)

    // Each PNG is drawn, or refused by the bounded queue when the machine is too slow to draw it in time.
    for (const png of answered.filter((p) => p.status !== 200)) {
      const text = png.bytes.toString('utf8').slice(0, 300)
      expect(png.status, `${png.size}: ${text}`).toBe(429)
      expect(JSON.parse(text).error, `${png.size}: ${text}`).toBe('QR_BUSY')
      expect(Number(png.retryAfter), `${png.size}: ${text}`).toBeGreaterThanOrEqual(1)
    }
    const drawn = answered.filter((p) => p.status === 200)
    for (const png of drawn) {
      const image = PNG.sync.read(png.bytes)
      expect(jsQR(new Uint8ClampedArray(image.data), image.width, image.height)?.data, `PNG of ${png.size} px`).toBe(encoded)
    }
    expect(drawn.length, `PNGs drawn: ${order(arrivals)}`).toBeGreaterThanOrEqual(2)
    const first = arrivals.indexOf('png')
    const last = arrivals.lastIndexOf('png')
    const during = arrivals.slice(first, last + 1)
    const counts = { png: during.filter((a) => a === 'png').length, health: during.filter((a) => a === 'health').length, redirect: during.filter((a) => a === 'redirect').length }
    console.log(
      `qr-stall: during ${BURST} concurrent ${QR_PNG_MAX_SIZE} px PNGs: /health p50 ${percentile(latencies.health, 0.5).toFixed(1)} ms p99 ${percentile(latencies.health, 0.99).toFixed(1)} ms (${latencies.health.length} answers), ` +
        `redirect p50 ${percentile(latencies.redirect, 0.5).toFixed(1)} ms p99 ${percentile(latencies.redirect, 0.99).toFixed(1)} ms (${latencies.redirect.length}); ` +
        `between the first and the last PNG answer: ${counts.health} /health, ${counts.redirect} redirects, ${counts.png} PNGs (${BURST - drawn.length} of ${BURST} refused QR_BUSY)`,
    )
    // The positive marker: probes answered while PNGs were still being drawn, many per PNG.
    const wanted = PROBES_PER_PNG * counts.png
    expect(counts.health, `/health answers between the first and the last PNG answer (of ${counts.png}): ${order(arrivals)}`).toBeGreaterThanOrEqual(wanted)
    expect(counts.redirect, `redirect answers between the first and the last PNG answer (of ${counts.png}): ${order(arrivals)}`).toBeGreaterThanOrEqual(wanted)
  }, 120_000)
})
