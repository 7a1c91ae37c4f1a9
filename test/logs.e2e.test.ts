// The process log of the real entry points, read from their output:
// - the embedded default (`npm start`) writes one JSON line per API request and none per short-link
//   redirect (its API paths go through the app, its short links through the redirector, which logs no
//   request); its start lines stay the README's plain ones (test/start.e2e.test.ts);
// - the API process (the production shape, here on its embedded engines) writes JSON lines only.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort, startEntry, type Child } from './support/processes'
import { shorten } from './support/stack'
import { until } from './support/wait'

const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0'
const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

async function start(entry: string): Promise<Child> {
  const dir = mkdtempSync(join(tmpdir(), 'e2e-logs-'))
  dirs.push(dir)
  const port = await freePort()
  return startEntry(entry, { PORT: String(port), DATA_DIR: join(dir, 'data') }, port)
}

/** The JSON lines of the output (the embedded default's start lines are plain text, for a person). */
function jsonLines(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}

describe('the embedded default', () => {
  let app: Child
  beforeAll(async () => {
    app = await start('one-process/main.ts')
  }, 120_000)
  afterAll(async () => {
    await app?.stop()
  })

  test('a line per API request, none per redirect, and no token or query in any', async () => {
    const link = await shorten(app.url, 'https://example.com/logged')
    const secret = `qs-${crypto.randomUUID()}`
    for (let i = 0; i < 5; i++) {
      const visit = await fetch(`${app.url}/${link.alias}?token=${secret}`, { redirect: 'manual', headers: { 'user-agent': BROWSER } })
      expect(visit.status, app.output()).toBe(302)
    }
    // An API request after the visits: once its line is out, a line of any visit would be out too.
    const marker = await fetch(`${app.url}/api/v1/guest/token`, { method: 'POST', headers: { 'x-request-id': 'e2e-logs-marker' } })
    expect(marker.status, app.output()).toBe(200)
    const requests = () => jsonLines(app.output()).filter((line) => line.msg === 'request')
    await until(
      () => requests().some((line) => line.request_id === 'e2e-logs-marker'),
      () => `the marker request's line:\n${app.output()}`,
    )
    const paths = requests().map((line) => line.path)
    expect(paths, app.output()).toEqual(['/api/v1/guest/token', '/api/v1/shorten', '/api/v1/guest/token'])
    expect(app.output()).not.toContain(link.alias)
    expect(app.output()).not.toContain(secret)
    expect(app.output()).not.toContain('gt_')
  })
})

describe('the API process', () => {
  let api: Child
  beforeAll(async () => {
    api = await start('src/api.ts')
  }, 120_000)
  afterAll(async () => {
    await api?.stop()
  })

  test('every line it writes is a JSON object, its start lines and its request lines alike', async () => {
    const answer = await fetch(`${api.url}/api/v1/guest/token`, { method: 'POST', headers: { 'x-request-id': 'e2e-logs-1' } })
    expect(answer.status).toBe(200)
    expect(answer.headers.get('x-request-id')).toBe('e2e-logs-1')
    await until(
      () => api.output().includes('"request_id":"e2e-logs-1"'),
      () => api.output(),
    )
    const lines = api.output().trimEnd().split('\n')
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow()
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(
      parsed.some((line) => String(line.msg).startsWith('api listening on')),
      api.output(),
    ).toBe(true)
    expect(
      parsed.find((line) => line.request_id === 'e2e-logs-1'),
      api.output(),
    ).toMatchObject({ level: 'info', method: 'POST', status: 200, principal: 'none' })
  })
})
