// Edges that only the real server shows (Bun's own limits sit in front of the app): an oversized body
// is the JSON 413, a tracking pixel with an over-long URL is still its GIF, an unserved method on an
// API path is 405 with Allow, and short_url names the port that really serves the links — also when
// Postgres and Redis are configured (the services pass of CI sets them).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort, startEntry, TEST_SECRETS, type Child } from '../support/processes'

let app: Child
let dataDir: string

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'edges-'))
  const port = await freePort()
  const engines: Record<string, string> = {}
  if (process.env.DATABASE_URL && process.env.REDIS_URL) Object.assign(engines, { DATABASE_URL: process.env.DATABASE_URL, REDIS_URL: process.env.REDIS_URL }, TEST_SECRETS)
  app = await startEntry('one-process/main.ts', { PORT: String(port), DATA_DIR: dataDir, ...engines }, port)
})

afterAll(async () => {
  await app?.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

describe('the real server', () => {
  test('a 10 MB body is 413 in the JSON error shape, not a bare refusal', async () => {
    const res = await fetch(`${app.url}/api/v1/alias/check`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'a'.repeat(10 * 1024 * 1024) })
    const text = await res.text()
    expect(res.status, text).toBe(413)
    expect(res.headers.get('content-type'), text).toBe('application/json')
    expect(JSON.parse(text)).toMatchObject({ success: false, error: 'PAYLOAD_TOO_LARGE' })
  })

  test('a pixel with a 20 KB URL is still the GIF (not recorded)', async () => {
    const res = await fetch(`${app.url}/api/analytics/link-conversion/pixel?mu_click=${'x'.repeat(20_000)}&mu_sig=y&conversionType=signup`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/gif')
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(30)
  })

  test('PUT on a link is 405 with the Allow the path really has', async () => {
    const res = await fetch(`${app.url}/api/v1/links/abcd`, { method: 'PUT' })
    const text = await res.text()
    expect(res.status, text).toBe(405)
    expect(res.headers.get('allow')).toBe('DELETE, GET, HEAD, PATCH')
    expect(JSON.parse(text).error).toBe('METHOD_NOT_ALLOWED')
  })

  test('short_url names the port this process serves short links on', async () => {
    const token = ((await (await fetch(`${app.url}/api/v1/guest/token`, { method: 'POST' })).json()) as { data: { guest_token: string } }).data.guest_token
    const made = (await (
      await fetch(`${app.url}/api/v1/shorten`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: 'https://example.com/e' }),
      })
    ).json()) as { data: { short_url: string } }
    const shortUrl = new URL(made.data.short_url)
    expect(shortUrl.port).toBe(new URL(app.url).port)
    const followed = await fetch(`${app.url}${shortUrl.pathname}`, { redirect: 'manual' })
    expect([followed.status, followed.headers.get('location')]).toEqual([302, 'https://example.com/e'])
  })
})
