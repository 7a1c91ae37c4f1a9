// The SSRF guard of every outgoing call, against the test's own servers on loopback (allowHttpLoopback
// on, as the callers' test settings do). Names resolve through an injected resolver, so a name can be
// made to answer any address, and to answer differently the second time (DNS rebinding).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { within } from '../../test/support/wait'
import { guardedFetch, GuardedFetchError, type GuardedFetchReason, type GuardedRequest, type Resolve } from './guarded-fetch'

let server: ReturnType<typeof Bun.serve>
/** The requests the server was sent, in order. */
const seen: { path: string; host: string | null; method: string; accept: string | null; body: string }[] = []
/** Bytes of the endless body handed out so far. */
let served = 0

beforeAll(() => {
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname
      seen.push({ path, host: request.headers.get('host'), method: request.method, accept: request.headers.get('accept'), body: await request.text() })
      if (path === '/moved') return new Response(null, { status: 302, headers: { location: '/target' } })
      if (path === '/large') return new Response('x.example\n'.repeat(500)) // 5000 bytes
      if (path === '/late') return Bun.sleep(3000).then(() => new Response('late'))
      // Headers at once, then a body that never ends.
      if (path === '/stalled') return new Response(new ReadableStream({ start: (controller) => controller.enqueue(new TextEncoder().encode('first')) }))
      const chunk = new Uint8Array(16 * 1024).fill(0x78)
      if (path === '/endless') return new Response(new ReadableStream({ pull: (controller) => void (controller.enqueue(chunk), (served += chunk.byteLength)) }))
      return new Response('hello')
    },
  })
})

afterAll(() => server.stop(true))

const loopback = (path: string) => new URL(`http://127.0.0.1:${server.port}${path}`)
const base: GuardedRequest = { accept: 'text/plain', allowHttpLoopback: true, timeoutMs: 5_000 }

/** The reason `work` was refused with; fails the test when it was not a GuardedFetchError. */
async function reasonOf(work: Promise<unknown>): Promise<GuardedFetchReason> {
  const outcome = await within(
    work.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    ),
    'the guarded fetch',
  )
  expect('error' in outcome ? outcome.error : outcome, `expected a GuardedFetchError, got ${JSON.stringify(outcome)}`).toBeInstanceOf(GuardedFetchError)
  return (outcome as { error: GuardedFetchError }).error.reason
}

const read = async (url: URL, request: Partial<GuardedRequest> = {}) => new TextDecoder().decode(await (await guardedFetch(url, { ...base, ...request })).bytes(64 * 1024))

describe('refused before any connection', () => {
  test('a host that is an address other than public, or localhost, is refused without a lookup', async () => {
    const asked: string[] = []
    const resolve: Resolve = async (name) => (asked.push(name), ['93.184.216.34'])
    for (const url of ['https://10.0.0.5/x', 'https://[fd00::1]/x', 'https://169.254.169.254/latest', 'https://0x7f000001/x', 'https://[::ffff:a00:1]/x', 'https://0.0.0.0/x', 'https://localhost/x']) {
      expect(await reasonOf(guardedFetch(new URL(url), { ...base, allowHttpLoopback: false, resolve })), url).toBe('not-public')
    }
    expect(asked).toEqual([])
  })

  test('a name with one non-public address among public ones is refused, the address not named', async () => {
    const resolve: Resolve = async () => ['93.184.216.34', '10.0.0.5']
    const error = await guardedFetch(new URL('https://mixed.example/x'), { ...base, resolve }).catch((e: GuardedFetchError) => e)
    expect(error).toMatchObject({ reason: 'resolves-non-public', message: 'the host resolves to a non-public address' })
    expect((error as Error).message).not.toContain('10.0.0.5')
  })

  test('a name that does not resolve, or resolves to nothing, is refused', async () => {
    const failing: Resolve = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example'), { code: 'ENOTFOUND' })
    }
    expect(await reasonOf(guardedFetch(new URL('https://nowhere.example/x'), { ...base, resolve: failing }))).toBe('unresolved')
    expect(await reasonOf(guardedFetch(new URL('https://nowhere.example/x'), { ...base, resolve: async () => [] }))).toBe('no-address')
  })

  test('https only; the test setting opens http to loopback and nothing else', async () => {
    seen.length = 0
    expect(await reasonOf(guardedFetch(loopback('/x'), { ...base, allowHttpLoopback: false }))).toBe('http')
    expect(await reasonOf(guardedFetch(new URL('ftp://lists.example/x'), base))).toBe('scheme')
    expect(await reasonOf(guardedFetch(new URL('http://203.0.113.10/x'), base))).toBe('http-not-loopback')
    expect(await reasonOf(guardedFetch(new URL('http://mixed.test/x'), { ...base, resolve: async () => ['127.0.0.1', '93.184.216.34'] }))).toBe('http-not-loopback')
    expect(seen).toEqual([])
  })
})

describe('the connection', () => {
  test('goes to the address that was checked, the name as Host: a name that rebinds after the check gets nowhere', async () => {
    // Listening on 127.0.0.2 only; the name answers 127.0.0.2 to the check, 127.0.0.1 (the other server) after it.
    const pinned = Bun.serve({ hostname: '127.0.0.2', port: 0, fetch: (request) => new Response(`pinned, Host ${request.headers.get('host')}`) })
    try {
      seen.length = 0
      let lookups = 0
      const rebinding: Resolve = async () => (lookups++ === 0 ? ['127.0.0.2'] : ['127.0.0.1'])
      expect(await read(new URL(`http://rebind.test:${pinned.port}/x`), { resolve: rebinding })).toBe(`pinned, Host rebind.test:${pinned.port}`)
      expect(lookups).toBe(1)
      expect(seen).toEqual([])
    } finally {
      pinned.stop(true)
    }
  })

  test('of a dual-stack name, to the IPv4 address (the server listens on 127.0.0.1 only)', async () => {
    expect(await read(new URL(`http://localhost:${server.port}/x`), { resolve: async () => ['::1', '127.0.0.1'] })).toBe('hello')
  })

  test('carries the method, headers, body and accept given', async () => {
    seen.length = 0
    const response = await guardedFetch(loopback('/post'), { ...base, method: 'POST', accept: '*/*', headers: { 'content-type': 'application/json' }, body: '{"a":1}' })
    expect(response.status).toBe(200)
    expect(seen).toEqual([{ path: '/post', host: `127.0.0.1:${server.port}`, method: 'POST', accept: '*/*', body: '{"a":1}' }])
  })

  test('a redirect is an answer, not followed', async () => {
    seen.length = 0
    const response = await guardedFetch(loopback('/moved'), base)
    response.discard()
    expect([response.status, response.headers.get('location')]).toEqual([302, '/target'])
    expect(seen.map((request) => request.path)).toEqual(['/moved'])
  })

  test('nothing listening is a failure', async () => {
    const closed = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
    const port = closed.port
    closed.stop(true)
    expect(await reasonOf(guardedFetch(new URL(`http://127.0.0.1:${port}/x`), base))).toBe('failed')
  })
})

describe('one deadline for the whole call', () => {
  test('the lookup counts: a resolver that never answers is given up', async () => {
    expect(await reasonOf(guardedFetch(new URL('https://slow-dns.example/x'), { ...base, timeoutMs: 100, resolve: () => new Promise(() => {}) }))).toBe('timeout')
  })

  test('an answer that does not come within the budget is given up', async () => {
    expect(await reasonOf(guardedFetch(loopback('/late'), { ...base, timeoutMs: 200 }))).toBe('timeout')
  })

  test('the body counts: one still arriving at the deadline is given up, by every reader', async () => {
    for (const reader of ['bytes', 'prefix', 'text'] as const) {
      const response = await guardedFetch(loopback('/stalled'), { ...base, timeoutMs: 300 })
      expect(response.status).toBe(200)
      const body = reader === 'text' ? Array.fromAsync(response.text(1024)) : response[reader](1024)
      expect(await reasonOf(body), reader).toBe('timeout')
    }
  })

  test("the caller's signal stops the call, and its body", async () => {
    const before = new AbortController()
    setTimeout(() => before.abort(), 50)
    expect(await reasonOf(guardedFetch(loopback('/late'), { ...base, signal: before.signal }))).toBe('stopped')
    const during = new AbortController()
    const response = await guardedFetch(loopback('/stalled'), { ...base, signal: during.signal })
    setTimeout(() => during.abort(), 50)
    expect(await reasonOf(Array.fromAsync(response.text(1024)))).toBe('stopped')
  })
})

describe('a bounded body', () => {
  test('read whole up to maxBytes, refused past it', async () => {
    expect((await (await guardedFetch(loopback('/large'), base)).bytes(5000)).byteLength).toBe(5000)
    expect(await reasonOf((await guardedFetch(loopback('/large'), base)).bytes(4999))).toBe('too-large')
  })

  test('cut at maxBytes', async () => {
    expect(new TextDecoder().decode(await (await guardedFetch(loopback('/large'), base)).prefix(12))).toBe('x.example\nx.')
  })

  test('streamed as text up to maxBytes, refused past it', async () => {
    expect((await Array.fromAsync((await guardedFetch(loopback('/large'), base)).text(5000))).join('')).toBe('x.example\n'.repeat(500))
    expect(await reasonOf(Array.fromAsync((await guardedFetch(loopback('/large'), base)).text(4999)))).toBe('too-large')
  })

  test('an endless body stops at the bound: the rest is never read', async () => {
    served = 0
    // Without the bound the 10 s budget would end this as a timeout.
    expect(await reasonOf((await guardedFetch(loopback('/endless'), { ...base, timeoutMs: 10_000 })).bytes(64 * 1024))).toBe('too-large')
    expect(served, `served ${served} bytes`).toBeLessThan(32 * 1024 * 1024)
  })
})
