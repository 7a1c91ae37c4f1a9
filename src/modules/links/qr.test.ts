// GET /api/v1/links/{alias}/qr: the images are decoded back (PNG with pngjs + jsQR; SVG rendered by
// Debian's Chromium through playwright-core, its screenshot decoded with jsQR) and must say the link's
// short_url; caching (ETag, 304), bounds, and who may read a link's code.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import jsQR from 'jsqr'
import { PNG } from 'pngjs'
import { chromium, type Browser } from 'playwright-core'
import { call, newGuestToken, show } from '../../../test/support/api'
import { agentToken, newAccount, newDomain, newLink } from '../../../test/support/fixtures'
import { api, app, as, setUp } from '../../../test/support/suites/manage'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const HAVE_CHROMIUM = existsSync(CHROMIUM)
if (!HAVE_CHROMIUM) console.log(`src/modules/links/qr.test.ts: SVG decoding SKIPPED: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`)
const LAUNCH_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

let browser: Browser | undefined
// PGlite and chDB take a while to open on a busy machine.
beforeAll(setUp, 120_000)
afterAll(async () => {
  await browser?.close()
})

async function raw(path: string, token: string | undefined, headers: Record<string, string> = {}) {
  const response = await app.handle(new Request(`http://localhost${path}`, { headers: { ...(token && { authorization: `Bearer ${token}` }), ...headers } }))
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) }
}

function decodePng(bytes: Buffer): { text: string | undefined; width: number; height: number } {
  const png = PNG.sync.read(bytes)
  return { text: jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data, width: png.width, height: png.height }
}

/** The link's short_url, as GET /api/v1/links/{alias} shows it. */
async function shortUrl(key: string, alias: string, domain?: string): Promise<string> {
  const res = await as(key, 'GET', `/api/v1/links/${alias}${domain ? `?domain=${domain}` : ''}`)
  if (res.status !== 200) throw new Error(show(res))
  return res.body.data.short_url
}

describe('GET /api/v1/links/{alias}/qr', () => {
  test('PNG: decodes to the short_url, on the default and on a custom domain, at the size asked', async () => {
    const account = await newAccount(api.deps.db)
    const host = await newDomain(api.deps.db, account.id)
    const link = await newLink(api.deps.db, account.id, 'sho.rt')
    const custom = await newLink(api.deps.db, account.id, host, 'q')
    for (const [alias, domain, size] of [
      [link.alias, undefined, 300],
      [custom.alias, host, 64],
      [custom.alias, host, 100],
      [link.alias, undefined, 1024],
    ] as const) {
      const res = await raw(`/api/v1/links/${alias}/qr?format=png&size=${size}${domain ? `&domain=${domain.toUpperCase()}` : ''}`, account.key)
      expect(res.status, res.bytes.toString().slice(0, 300)).toBe(200)
      expect(res.headers.get('content-type')).toBe('image/png')
      const decoded = decodePng(res.bytes)
      expect(decoded.text).toBe(await shortUrl(account.key, alias, domain))
      // Whole pixels a module (qr.ts pngScale): at most the size asked, and more than half of it.
      expect(decoded.width).toBe(decoded.height)
      expect(decoded.width).toBeLessThanOrEqual(size)
      expect(decoded.width).toBeGreaterThan(size / 2)
    }
    expect(await shortUrl(account.key, custom.alias, host)).toBe(`https://${host}/q`)
  })

  test.skipIf(!HAVE_CHROMIUM)(
    'SVG (the default): rendered by Chromium, the screenshot decodes to the short_url',
    async () => {
      const account = await newAccount(api.deps.db)
      const link = await newLink(api.deps.db, account.id, 'sho.rt')
      const res = await raw(`/api/v1/links/${link.alias}/qr`, account.key)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('image/svg+xml')
      const svg = res.bytes.toString('utf8')
      expect(svg).toStartWith('<svg')
      expect(svg).toContain('width="256"')
      browser ??= await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS })
      const page = await browser.newPage({ viewport: { width: 400, height: 400 } })
      try {
        // The SVG as an image, as a dashboard's <img> shows it; nothing is fetched from anywhere.
        await page.setContent(`<body style="margin:0;background:#fff"><img id="qr" src="data:image/svg+xml;base64,${res.bytes.toString('base64')}"></body>`)
        await page.locator('#qr').waitFor()
        await page.waitForFunction('document.getElementById("qr").complete')
        const box = await page.locator('#qr').boundingBox()
        expect([box?.width, box?.height]).toEqual([256, 256])
        const decoded = decodePng(await page.locator('#qr').screenshot({ type: 'png' }))
        expect(decoded.text).toBe(await shortUrl(account.key, link.alias))
      } finally {
        await page.close()
      }
    },
    120_000,
  )

  test('cacheable: a strong ETag of text, format and size, private max-age, 304 on If-None-Match', async () => {
    const account = await newAccount(api.deps.db)
    const link = await newLink(api.deps.db, account.id, 'sho.rt')
    const other = await newLink(api.deps.db, account.id, 'sho.rt')
    const path = `/api/v1/links/${link.alias}/qr?format=png&size=128`
    const first = await raw(path, account.key)
    const etag = first.headers.get('etag')!
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/)
    expect(first.headers.get('cache-control')).toBe('private, max-age=300')
    expect(first.headers.get('vary')).toBe('Authorization, Cookie')
    expect((await raw(path, account.key)).headers.get('etag')).toBe(etag)
    for (const header of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
      const again = await raw(path, account.key, { 'if-none-match': header })
      expect(again.status, header).toBe(304)
      expect(again.bytes.length, header).toBe(0)
      expect(again.headers.get('etag')).toBe(etag)
      expect(again.headers.get('cache-control')).toBe('private, max-age=300')
    }
    expect((await raw(path, account.key, { 'if-none-match': '"stale"' })).status).toBe(200)
    const etags = new Set([
      etag,
      (await raw(`/api/v1/links/${link.alias}/qr?format=png&size=129`, account.key)).headers.get('etag'),
      (await raw(`/api/v1/links/${link.alias}/qr?format=svg&size=128`, account.key)).headers.get('etag'),
      (await raw(`/api/v1/links/${other.alias}/qr?format=png&size=128`, account.key)).headers.get('etag'),
    ])
    expect(etags.size).toBe(4)
    // The old image's ETag is no validator of another image: a 200 with the new one.
    const sized = await raw(`/api/v1/links/${link.alias}/qr?format=png&size=129`, account.key, { 'if-none-match': etag })
    expect(sized.status).toBe(200)
    expect(decodePng(sized.bytes).text).toBe(await shortUrl(account.key, link.alias))
  })

  test('format and size outside their values, or given twice, are 400 VALIDATION_FAILED', async () => {
    const account = await newAccount(api.deps.db)
    const link = await newLink(api.deps.db, account.id, 'sho.rt')
    for (const query of [
      'size=63',
      'size=2049',
      'size=0',
      'size=abc',
      'size=1.5',
      'size=',
      'size=1e9',
      'format=gif',
      'format=PNG',
      'format=',
      'format=png&format=svg',
      'size=64&size=65',
      'domain=%00',
    ]) {
      const res = await as(account.key, 'GET', `/api/v1/links/${link.alias}/qr?${query}`)
      expect(res.status, `${query}: ${show(res)}`).toBe(400)
      expect(res.body.error, `${query}: ${show(res)}`).toBe('VALIDATION_FAILED')
    }
    for (const query of ['size=64', 'size=2048', 'format=svg&size=64']) expect((await raw(`/api/v1/links/${link.alias}/qr?${query}`, account.key)).status, query).toBe(200)
  })

  test('a PNG is at most 1024 px: 1025 is 400 VALIDATION_FAILED naming query.size, 1024 decodes, an SVG still goes to 2048', async () => {
    const account = await newAccount(api.deps.db)
    const link = await newLink(api.deps.db, account.id, 'sho.rt')
    for (const query of ['format=png&size=1025', 'format=png&size=2048']) {
      const res = await as(account.key, 'GET', `/api/v1/links/${link.alias}/qr?${query}`)
      expect(res.status, `${query}: ${show(res)}`).toBe(400)
      expect(res.body.error, `${query}: ${show(res)}`).toBe('VALIDATION_FAILED')
      expect(res.body.hint, `${query}: ${show(res)}`).toStartWith('query.size: a PNG is at most 1024 pixels')
    }
    const png = await raw(`/api/v1/links/${link.alias}/qr?format=png&size=1024`, account.key)
    expect(png.status, png.bytes.toString().slice(0, 300)).toBe(200)
    const decoded = decodePng(png.bytes)
    expect(decoded.text).toBe(await shortUrl(account.key, link.alias))
    expect(decoded.width).toBeLessThanOrEqual(1024)
    const svg = await raw(`/api/v1/links/${link.alias}/qr?format=svg&size=2048`, account.key)
    expect(svg.status, svg.bytes.toString().slice(0, 300)).toBe(200)
    expect(svg.bytes.toString('utf8')).toContain('width="2048"')
  })

  test('the document shows the PNG bound and 429 QR_BUSY with Retry-After', async () => {
    const doc = (await call(app, 'GET', '/swagger/json')).body
    const op = doc.paths['/api/v1/links/{alias}/qr'].get
    const busy = op.responses['429']
    expect(Object.keys(busy.content['application/json'].examples), JSON.stringify(busy)).toContain('QR_BUSY')
    expect(busy.headers, JSON.stringify(busy)).toHaveProperty('Retry-After')
    expect(op.description).toContain('64-1024 for a PNG')
    const size = op.parameters.find((p: { name: string }) => p.name === 'size')
    expect(size.description ?? size.schema.description, JSON.stringify(size)).toContain('64-1024 for a PNG')
  })

  test("security: no token or a guest token 401; another account's link 404 even with its ETag; an at_ token needs links:read", async () => {
    const owner = await newAccount(api.deps.db)
    const stranger = await newAccount(api.deps.db)
    const link = await newLink(api.deps.db, owner.id, 'sho.rt')
    const path = `/api/v1/links/${link.alias}/qr?format=png`
    const etag = (await raw(path, owner.key)).headers.get('etag')!
    for (const token of [undefined, await newGuestToken(app)]) {
      const res = await call(app, 'GET', path, { token })
      expect(res.status, show(res)).toBe(401)
      expect(res.body.error, show(res)).toBe('UNAUTHORIZED')
    }
    // A 304 would confirm the link exists and what it encodes: the owner check comes before the ETag.
    for (const headers of [{}, { 'if-none-match': etag }, { 'if-none-match': '*' }] as Record<string, string>[]) {
      const res = await call(app, 'GET', path, { token: stranger.key, headers })
      expect(res.status, show(res)).toBe(404)
      expect(res.body.error, show(res)).toBe('LINK_NOT_FOUND')
    }
    const unknown = await call(app, 'GET', `/api/v1/links/${link.alias}x/qr`, { token: owner.key })
    expect(unknown.body.error, show(unknown)).toBe('LINK_NOT_FOUND')

    const writer = await agentToken(app, owner, ['links:write'])
    const refused = await call(app, 'GET', path, { token: writer.token })
    expect(refused.status, show(refused)).toBe(403)
    expect(refused.body.error, show(refused)).toBe('INSUFFICIENT_SCOPE')
    const reader = await agentToken(app, owner, ['links:read'])
    const allowed = await raw(path, reader.token)
    expect(allowed.status).toBe(200)
    expect(decodePng(allowed.bytes).text).toBe(await shortUrl(owner.key, link.alias))
    const strangersAgent = await agentToken(app, stranger, ['links:read'])
    expect((await call(app, 'GET', path, { token: strangersAgent.token })).status).toBe(404)
  })
})
