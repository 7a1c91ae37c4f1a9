// Rendered QR images kept by content (qr-cache.ts): the same link, format and size is drawn once per
// process, whether asked again later (the cache) or twice at the same moment (single flight); another
// size or format is drawn anew; the cache holds at most its bytes, least recently used out first.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import jsQR from 'jsqr'
import { PNG } from 'pngjs'
import { apiAuth } from '../../app'
import { createServices } from '../../services'
import { testApi, type TestApp } from '../../../test/support/api'
import { newAccount, newLink } from '../../../test/support/fixtures'
import { until, within } from '../../../test/support/wait'
import { linksModule } from '.'
import { ByteLru, qrImages, type QrImages } from './qr-cache'
import type { QrJob } from './qr-draw'
import { QrPool } from './qr-pool'

let api: Awaited<ReturnType<typeof testApi>>
const pools: QrPool[] = []
/** The held threads' markers (qr-held-worker.ts), and how the test releases their renders. */
const channel = new BroadcastChannel('qr-held-worker')
const held: string[] = []
channel.onmessage = (event: { data: string }) => held.push(event.data)

// PGlite and chDB take a while to open on a busy machine.
beforeAll(async () => {
  api = await testApi()
}, 120_000)
afterAll(async () => {
  channel.close()
  for (const pool of pools) await pool.close()
})

/** The links routes drawing through a pool of their own, counting the renders asked of it and the images asked for. */
function countingApp(workerUrl?: string) {
  const pool = new QrPool({ workers: 1, workerUrl })
  pools.push(pool)
  const counts = { renders: [] as QrJob[], asked: 0 }
  const images = qrImages((job) => {
    counts.renders.push(job)
    return pool.render(job)
  })
  const counted: QrImages = {
    image(etag, job) {
      counts.asked++
      return images.image(etag, job)
    },
  }
  const services = createServices(api.deps)
  const app: TestApp = new Elysia().use(linksModule(services, apiAuth(services), counted))
  return { app, counts }
}

async function raw(app: TestApp, path: string, token: string) {
  const response = await app.handle(new Request(`http://localhost${path}`, { headers: { authorization: `Bearer ${token}` } }))
  const bytes = Buffer.from(await response.arrayBuffer())
  return { status: response.status, headers: response.headers, bytes, text: bytes.toString('utf8').slice(0, 400) }
}

function decodePng(bytes: Uint8Array): string | undefined {
  const png = PNG.sync.read(Buffer.from(bytes))
  return jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data
}

describe('QR images by content', () => {
  test('the second identical request draws nothing and answers the same bytes; another size or format is drawn', async () => {
    const account = await newAccount(api.deps.db)
    const link = await newLink(api.deps.db, account.id, 'sho.rt')
    const shortUrl = `${api.deps.config.shortBaseUrl}/${link.alias}`
    const { app, counts } = countingApp()
    const path = `/api/v1/links/${link.alias}/qr?format=png&size=200`
    const first = await raw(app, path, account.key)
    expect(first.status, first.text).toBe(200)
    expect(counts.renders).toHaveLength(1)

    const again = await raw(app, path, account.key)
    expect(again.status, again.text).toBe(200)
    expect(counts.renders, 'the same link, format and size again').toHaveLength(1)
    expect(again.bytes.equals(first.bytes)).toBe(true)
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'))
    // Served from the cache twice over: the kept bytes are not consumed by a response.
    const third = await raw(app, path, account.key)
    expect(decodePng(third.bytes)).toBe(shortUrl)

    expect((await raw(app, `/api/v1/links/${link.alias}/qr?format=png&size=201`, account.key)).status).toBe(200)
    expect((await raw(app, `/api/v1/links/${link.alias}/qr?format=svg&size=200`, account.key)).status).toBe(200)
    expect(counts.renders.map((job) => `${job.format} ${job.size}`)).toEqual(['png 200', 'png 201', 'svg 200'])
  })

  test('two requests for one image at the same moment share one render', async () => {
    const account = await newAccount(api.deps.db)
    const link = await newLink(api.deps.db, account.id, 'sho.rt')
    const shortUrl = `${api.deps.config.shortBaseUrl}/${link.alias}`
    const { app, counts } = countingApp(new URL('./qr-held-worker.ts', import.meta.url).href)
    const path = `/api/v1/links/${link.alias}/qr?format=png&size=150`
    const first = raw(app, path, account.key)
    await until(
      () => held.includes(`held 150 ${shortUrl}`),
      () => `the render held by its thread (so far: ${held.join('; ')})`,
    )
    const second = raw(app, path, account.key)
    await until(
      () => counts.asked === 2,
      () => `the second request asking for the image (asked ${counts.asked})`,
    )
    channel.postMessage('release')
    const [a, b] = await within(Promise.all([first, second]), 'both answers')
    expect(a.status, a.text).toBe(200)
    expect(b.status, b.text).toBe(200)
    expect(b.bytes.equals(a.bytes)).toBe(true)
    expect(decodePng(b.bytes)).toBe(shortUrl)
    expect(counts.renders).toHaveLength(1)
  })
})

describe('ByteLru', () => {
  test('holds at most its bytes, drops the least recently used first, and keeps nothing larger than itself', () => {
    const lru = new ByteLru<string>(10)
    lru.set('a', 'A', 4)
    lru.set('b', 'B', 4)
    expect(lru.get('a')).toBe('A') // a is now the most recent
    lru.set('c', 'C', 4) // 12 bytes: b, the least recent, goes
    expect([lru.get('a'), lru.get('b'), lru.get('c')]).toEqual(['A', undefined, 'C'])
    expect(lru.bytes).toBe(8)
    lru.set('c', 'C2', 6) // replaced, not added: 10 bytes
    expect([lru.get('a'), lru.get('c'), lru.bytes, lru.size]).toEqual(['A', 'C2', 10, 2])
    lru.set('huge', 'H', 11)
    expect([lru.get('huge'), lru.bytes, lru.size]).toEqual([undefined, 10, 2])
  })
})
