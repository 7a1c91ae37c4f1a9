// The capture floor answers what the redirector answers for a cached link (so the bench compares like
// with like) and captures a click per request.
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MemoryKv } from '../src/adapters/memory-kv'
import { encodeCachedLink, linkCacheKey } from '../core/link-cache'
import { handleRedirect } from '../redirect/handler'
import { LinkResolver } from '../redirect/resolver'
import { readLinksFile, startCaptureFloor } from './capture-floor'

const dir = mkdtempSync(join(tmpdir(), 'capture-floor-test-'))
const destination = 'https://example.com/landing?i=7'
const floor = startCaptureFloor({ links: new Map([['abcd1234', destination]]), flushMs: 50 })
const base = `http://127.0.0.1:${floor.server.port}`
afterAll(() => {
  floor.stop()
  rmSync(dir, { recursive: true, force: true })
})

/** The redirector's answer for the same link, cached, through its real handler. */
async function redirectorResponse(): Promise<Response> {
  const domain = 'sho.rt'
  const kv = new MemoryKv()
  await kv.set(linkCacheKey(domain, 'abcd1234'), encodeCachedLink({ v: 1, id: 'link_floor_test', url: destination }), 60)
  const resolver = new LinkResolver(kv, async () => null, { l1TtlMs: 60_000, l1MaxEntries: 10, negativeTtlMs: 60_000 })
  const deps = { resolver, record: () => {}, shortDomain: domain, keyPrefix: linkCacheKey(domain, '') }
  return handleRedirect(new Request(`http://${domain}/abcd1234`), deps, { requestIP: () => ({ address: '10.0.0.2' }) })
}

describe('capture floor', () => {
  test("answers a known alias with the redirector's status and headers", async () => {
    const [floorAnswer, redirectorAnswer] = await Promise.all([fetch(`${base}/abcd1234?utm_source=x`, { redirect: 'manual' }), redirectorResponse()])
    const headers = (r: Response) => Object.fromEntries([...r.headers].filter(([name]) => !['date', 'content-length'].includes(name)))
    expect(floorAnswer.status).toBe(redirectorAnswer.status)
    expect(headers(floorAnswer)).toEqual(headers(redirectorAnswer))
    expect(floorAnswer.headers.get('location')).toBe(destination)
  })

  test('captures one click per redirect, none for an unknown alias, and keeps counting across the emptying', async () => {
    const before = floor.captured()
    const init = { redirect: 'manual', headers: { 'user-agent': 'UA/1', referer: 'https://news.example/' } } as const
    for (let i = 0; i < 3; i++) expect((await fetch(`${base}/abcd1234`, init)).status).toBe(302)
    const unknown = await fetch(`${base}/nope`, init)
    expect(unknown.status).toBe(404)
    await Bun.sleep(120) // past at least one emptying of the array (every 50 ms here)
    expect(floor.captured() - before).toBe(3)
  })

  test('reads the alias-to-destination file the bench writes', () => {
    const file = join(dir, 'links.tsv')
    writeFileSync(file, `aaaa1111\thttps://example.com/a?x=1\nbbbb2222\thttps://example.com/b\n`)
    expect([...readLinksFile(file)]).toEqual([
      ['aaaa1111', 'https://example.com/a?x=1'],
      ['bbbb2222', 'https://example.com/b'],
    ])
  })
})
