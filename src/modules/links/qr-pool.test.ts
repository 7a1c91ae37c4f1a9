// The QR render pool (qr-pool.ts): images are drawn on its threads, never on the serving thread; with
// every thread busy and the queue full a render is refused at once (the route's 429 QR_BUSY with
// Retry-After); a render that fails, a thread that crashes and a thread that does not answer each end
// their render with an error, and the pool goes on drawing. Threads that hold their renders until the
// test releases them (qr-held-worker.ts) make "busy" and "full" a fact the test sets, not a race.
import { afterAll, afterEach, beforeAll, describe, expect, spyOn, test } from 'bun:test'
import { Elysia } from 'elysia'
import jsQR from 'jsqr'
import { PNG } from 'pngjs'
import QRCode from 'qrcode'
import { apiAuth } from '../../app'
import { ApiError } from '../../plugins/errors'
import { createServices } from '../../services'
import { testApi, type TestApp } from '../../../test/support/api'
import { newAccount, newLink } from '../../../test/support/fixtures'
import { until, within } from '../../../test/support/wait'
import { linksModule } from '.'
import { qrImages } from './qr-cache'
import { QrPool } from './qr-pool'

const HELD_WORKER = new URL('./qr-held-worker.ts', import.meta.url).href

let api: Awaited<ReturnType<typeof testApi>>
const pools: QrPool[] = []
/** What the held threads say (`held <size> <text>`), and how the test releases them. */
const channel = new BroadcastChannel('qr-held-worker')
const held: string[] = []
channel.onmessage = (event: { data: string }) => held.push(event.data)

// PGlite and chDB take a while to open on a busy machine.
beforeAll(async () => {
  api = await testApi()
}, 120_000)
afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.close()
})
afterAll(() => channel.close())

function pool(options: ConstructorParameters<typeof QrPool>[0]): QrPool {
  const made = new QrPool(options)
  pools.push(made)
  return made
}

/** The links routes as createApi mounts them, drawing with `render` instead of the process's pool. */
function appDrawingWith(qrPool: QrPool): TestApp {
  const services = createServices(api.deps)
  return new Elysia().use(
    linksModule(
      services,
      apiAuth(services),
      qrImages((job) => qrPool.render(job)),
    ),
  )
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

/** Waits for the held thread's marker that the render of `text` at `size` reached it. */
const reached = (size: number, text: string) =>
  until(
    () => held.includes(`held ${size} ${text}`),
    () => `the render of ${text} at ${size} px held by a thread (so far: ${held.join('; ')})`,
  )

describe('QR render pool', () => {
  test("renders run on a render thread: the serving thread's qrcode module is never called", async () => {
    const calls = [spyOn(QRCode, 'toBuffer'), spyOn(QRCode, 'toString'), spyOn(QRCode, 'create')]
    try {
      const account = await newAccount(api.deps.db)
      const link = await newLink(api.deps.db, account.id, 'sho.rt')
      const qrPool = pool({ workers: 1 })
      const app = appDrawingWith(qrPool)
      const png = await raw(app, `/api/v1/links/${link.alias}/qr?format=png&size=300`, account.key)
      expect(png.status, png.text).toBe(200)
      expect(decodePng(png.bytes)).toBe(`${api.deps.config.shortBaseUrl}/${link.alias}`)
      const svg = await raw(app, `/api/v1/links/${link.alias}/qr?size=300`, account.key)
      expect(svg.status, svg.text).toBe(200)
      expect(svg.bytes.toString('utf8')).toStartWith('<svg')
      expect(
        calls.map((spy) => spy.mock.calls.length),
        'calls of toBuffer, toString, create on this thread',
      ).toEqual([0, 0, 0])
      expect(qrPool.stats()).toMatchObject({ rendered: 2, failed: 0 })
    } finally {
      for (const spy of calls) spy.mockRestore()
    }
  })

  test('every thread busy and the queue full: the next request is 429 QR_BUSY with Retry-After; the held ones then answer', async () => {
    const account = await newAccount(api.deps.db)
    const link = await newLink(api.deps.db, account.id, 'sho.rt')
    const qrPool = pool({ workers: 1, queueBound: 1, workerUrl: HELD_WORKER })
    const app = appDrawingWith(qrPool)
    const path = (size: number) => `/api/v1/links/${link.alias}/qr?format=png&size=${size}`
    const shortUrl = `${api.deps.config.shortBaseUrl}/${link.alias}`
    const first = raw(app, path(100), account.key)
    await reached(100, shortUrl)
    const second = raw(app, path(101), account.key)
    await until(
      () => qrPool.stats().queued === 1,
      () => `the second render waiting: ${JSON.stringify(qrPool.stats())}`,
    )

    const refused = await within(raw(app, path(102), account.key), 'the request beyond the queue')
    expect(refused.status, refused.text).toBe(429)
    expect(refused.headers.get('content-type')).toBe('application/json')
    expect(JSON.parse(refused.text), refused.text).toMatchObject({ success: false, error: 'QR_BUSY' })
    expect(Number(refused.headers.get('retry-after')), refused.text).toBeGreaterThanOrEqual(1)
    expect(qrPool.stats()).toMatchObject({ rendering: 1, queued: 1, refused: 1 })

    channel.postMessage('release')
    const answered = await within(first, 'the first held render')
    expect(answered.status, answered.text).toBe(200)
    await reached(101, shortUrl)
    channel.postMessage('release')
    const next = await within(second, 'the queued render')
    expect(next.status, next.text).toBe(200)
    expect(decodePng(next.bytes)).toBe(shortUrl)
    expect(qrPool.stats()).toMatchObject({ rendering: 0, queued: 0, rendered: 2, refused: 1 })
  })

  test('a render that fails rejects with an error; the same thread draws the next one', async () => {
    const qrPool = pool({ workers: 1 })
    // More than a QR code holds (2,331 bytes at error correction M).
    const failed = qrPool.render({ text: 'x'.repeat(3000), format: 'png', size: 256 })
    expect(
      await within(
        failed.catch((error: Error) => error.message),
        'the failed render',
      ),
    ).toMatch(/^QR render failed: .*too big/)
    const body = await within(qrPool.render({ text: 'https://sho.rt/next', format: 'png', size: 256 }), 'the next render')
    expect(decodePng(body as Uint8Array)).toBe('https://sho.rt/next')
    expect(qrPool.stats()).toMatchObject({ rendered: 1, failed: 1, replaced: 0 })
  })

  test('a thread that crashes fails its render with an error, and a new thread draws the next one', async () => {
    const qrPool = pool({ workers: 1, workerUrl: HELD_WORKER })
    const crashed = qrPool.render({ text: 'crash', format: 'png', size: 256 })
    expect(
      await within(
        crashed.catch((error: Error) => error.message),
        'the crashed render',
      ),
    ).toMatch(/^QR render thread (failed|stopped)/)
    expect(qrPool.stats()).toMatchObject({ rendering: 0, failed: 1, replaced: 1 })

    const account = await newAccount(api.deps.db)
    const link = await newLink(api.deps.db, account.id, 'sho.rt')
    const app = appDrawingWith(qrPool)
    const shortUrl = `${api.deps.config.shortBaseUrl}/${link.alias}`
    const next = raw(app, `/api/v1/links/${link.alias}/qr?format=png&size=128`, account.key)
    await reached(128, shortUrl)
    channel.postMessage('release')
    const answered = await within(next, 'the render after the crash')
    expect(answered.status, answered.text).toBe(200)
    expect(decodePng(answered.bytes)).toBe(shortUrl)
  })

  test('the route answers a failed render with the ErrorResponse 500 INTERNAL_ERROR, not a hang', async () => {
    const account = await newAccount(api.deps.db)
    const link = await newLink(api.deps.db, account.id, 'sho.rt')
    const services = createServices(api.deps)
    const app = new Elysia().use(
      linksModule(
        services,
        apiAuth(services),
        qrImages(() => Promise.reject(new Error('QR render thread stopped'))),
      ),
    )
    const res = await within(raw(app, `/api/v1/links/${link.alias}/qr?format=png`, account.key), 'the answer to a failed render')
    expect(res.status, res.text).toBe(500)
    expect(JSON.parse(res.text), res.text).toMatchObject({ success: false, error: 'INTERNAL_ERROR' })
  })

  test('a thread that does not answer within the render timeout is let go; its render fails', async () => {
    const qrPool = pool({ workers: 1, workerUrl: HELD_WORKER, renderTimeoutMs: 300 })
    const stuck = qrPool.render({ text: 'https://sho.rt/stuck', format: 'svg', size: 256 })
    expect(
      await within(
        stuck.catch((error: Error) => error.message),
        'the stuck render',
      ),
    ).toMatch(/^QR render: no answer within 300 ms/)
    expect(qrPool.stats()).toMatchObject({ rendering: 0, failed: 1, replaced: 1 })
  })

  test('a render that waits maxWaitMs without reaching a thread is 429 QR_BUSY with a Retry-After', async () => {
    const qrPool = pool({ workers: 1, queueBound: 4, maxWaitMs: 200, workerUrl: HELD_WORKER })
    const running = qrPool.render({ text: 'https://sho.rt/running', format: 'svg', size: 256 })
    await reached(256, 'https://sho.rt/running')
    const waited = await within(
      qrPool.render({ text: 'https://sho.rt/waiting', format: 'svg', size: 256 }).catch((error: unknown) => error),
      'the waiting render',
    )
    expect(waited).toBeInstanceOf(ApiError)
    expect((waited as ApiError).code).toBe('QR_BUSY')
    expect((waited as ApiError).extra.retryAfter).toBeGreaterThanOrEqual(1)
    expect(qrPool.stats()).toMatchObject({ rendering: 1, queued: 0, expired: 1, refused: 0 })
    channel.postMessage('release')
    expect(await within(running, 'the running render')).toStartWith('<svg')
  })

  test('closing the pool fails the renders running and waiting', async () => {
    const qrPool = pool({ workers: 1, queueBound: 4, workerUrl: HELD_WORKER })
    const running = qrPool.render({ text: 'https://sho.rt/a', format: 'svg', size: 256 }).catch((error: Error) => error.message)
    const waiting = qrPool.render({ text: 'https://sho.rt/b', format: 'svg', size: 256 }).catch((error: Error) => error.message)
    expect(qrPool.stats()).toMatchObject({ rendering: 1, queued: 1 })
    await qrPool.close()
    expect(await within(Promise.all([running, waiting]), 'the closed renders')).toEqual(['QR render pool: closed', 'QR render pool: closed'])
  })
})
