import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { DOCUMENT_FILE, documentText, liveDocument, ROOT, SCHEMA_FILE, SCHEMA_HASH_LINE, sha256 } from '../scripts/generate-client'
import { testApi, TEST_IP_HEADER, uniqueIp } from '../test/support/api'
import { createLinkClient } from './index'

const REGENERATE = 'client/ is out of date: run npm run client:generate'

describe('client/ (generated from the OpenAPI document)', () => {
  test('client/openapi.json is the live /swagger/json', async () => {
    const live = documentText(await liveDocument())
    const stored = readFileSync(DOCUMENT_FILE, 'utf8')
    if (live !== stored) {
      // Name the first differing line, so the message says what changed.
      const a = stored.split('\n')
      const b = live.split('\n')
      const i = a.findIndex((line, n) => line !== b[n])
      const at = i === -1 ? a.length : i
      throw new Error(`${REGENERATE} (first difference at line ${at + 1}: stored ${JSON.stringify(a[at])}, live ${JSON.stringify(b[at])})`)
    }
    expect(live).toBe(stored)
  })

  test('client/schema.d.ts was generated from this client/openapi.json (recorded sha256)', () => {
    const firstLine = readFileSync(SCHEMA_FILE, 'utf8').split('\n', 1)[0]!
    const recorded = SCHEMA_HASH_LINE.exec(firstLine)?.[1]
    expect(recorded, `first line of schema.d.ts: ${firstLine}`).toBeDefined()
    expect(recorded, REGENERATE).toBe(sha256(readFileSync(DOCUMENT_FILE, 'utf8')))
  })

  test('the client and client/example.ts type-check with the project TypeScript', () => {
    const result = Bun.spawnSync([process.execPath, join(ROOT, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', join(ROOT, 'client/tsconfig.json')], {
      cwd: ROOT,
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const output = `${result.stdout.toString()}${result.stderr.toString()}`
    expect(output.trim(), 'tsc -p client/tsconfig.json').toBe('')
    expect(result.exitCode).toBe(0)
  }, 60_000)

  describe('against the app on a real port', () => {
    let server: ReturnType<typeof Bun.serve>
    let baseUrl: string
    // Per-IP limits (POST /guest/token): a client IP no other test uses.
    const headers = { [TEST_IP_HEADER]: uniqueIp() }

    beforeAll(async () => {
      const { app } = await testApi()
      server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => app.handle(request) })
      baseUrl = server.url.origin
    })
    afterAll(() => server?.stop(true))

    test('a guest token, then a link, through createLinkClient', async () => {
      const guest = await createLinkClient(baseUrl, undefined, { headers }).POST('/api/v1/guest/token')
      expect(guest.response.status, JSON.stringify(guest.error)).toBe(200)
      const token = guest.data!.data.guest_token
      expect(token).toStartWith('gt_')

      const links = createLinkClient(baseUrl, token, { headers })
      const created = await links.POST('/api/v1/shorten', { body: { url: 'https://example.com/from-the-typed-client' } })
      expect(created.response.status, JSON.stringify(created.error)).toBe(200)
      const link = created.data!.data
      if ('approval' in link) throw new Error('a guest link is never held for approval')
      expect(link.full_url).toBe('https://example.com/from-the-typed-client')
      expect(link.short_url).toStartWith('https://sho.rt/')

      const unauthorized = await createLinkClient(baseUrl, 'gt_not-a-token', { headers }).POST('/api/v1/shorten', { body: { url: 'https://example.com/' } })
      expect(unauthorized.response.status).toBe(401)
      expect(unauthorized.error?.error).toBe('UNAUTHORIZED')
    })
  })
})
