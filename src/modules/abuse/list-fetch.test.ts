// The SSRF guard of list fetches and the bounds of a fetch, against the test's own server on loopback.
// Names resolve through an injected resolver, so a "public" name can be made to answer any address.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { createBlocklists } from './blocklists'
import { fetchList, ListFetchError, type ListFetchOptions } from './list-fetch'

let server: ReturnType<typeof Bun.serve>
const seen: { host: string | null; path: string }[] = []
/** A request waits on this before it is answered (a slow server), unless undefined. */
let stall: Promise<void> | undefined

beforeAll(() => {
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const url = new URL(request.url)
      seen.push({ host: request.headers.get('host'), path: url.pathname })
      if (stall) await stall
      if (url.pathname === '/moved') return new Response(null, { status: 302, headers: { location: '/list' } })
      if (url.pathname === '/large') return new Response('x.example\n'.repeat(500))
      return new Response('evil.example\n')
    },
  })
})

afterEach(() => {
  seen.length = 0
  stall = undefined
})

afterAll(() => server.stop(true))

const loopback = (path: string) => new URL(`http://127.0.0.1:${server.port}${path}`)

async function text(url: URL, options: ListFetchOptions): Promise<string> {
  const response = await fetchList(url, options)
  if (!response.modified) throw new Error('unexpected 304')
  let body = ''
  for await (const piece of response.text) body += piece
  return body
}

describe('without BLOCKLIST_ALLOW_HTTP_LOOPBACK', () => {
  test('a list on loopback is refused before any request, over http and over https', async () => {
    await expect(text(loopback('/list'), { allowHttpLoopback: false })).rejects.toThrow('http is not fetched; use https')
    await expect(text(new URL(`https://127.0.0.1:${server.port}/list`), { allowHttpLoopback: false })).rejects.toThrow('the host is not a public address')
    expect(seen).toEqual([])
  })

  test('private and special addresses are refused, written as addresses or reached through a name', async () => {
    for (const url of ['https://10.0.0.5/list', 'https://[fd00::1]/list', 'https://169.254.169.254/latest', 'https://0x7f000001/list', 'https://localhost/list']) {
      await expect(text(new URL(url), { allowHttpLoopback: false }), url).rejects.toThrow('the host is not a public address')
    }
    const resolve = async () => ['93.184.216.34', '10.0.0.5']
    await expect(text(new URL('https://lists.example/list'), { allowHttpLoopback: false, resolve })).rejects.toThrow('the host resolves to a non-public address')
  })

  test('the service counts the refusal as a failed load and never asks the server', async () => {
    const blocklists = createBlocklists({ blocklists: { files: [], urls: [loopback('/list').href], refreshMs: 3_600_000, allowHttpLoopback: false, allowlistHosts: [] } })
    await blocklists.start()
    await blocklists.stop()
    expect(blocklists.status().sources[0]).toMatchObject({ loads: 0, failures: 1, lastError: 'http is not fetched; use https' })
    expect(seen).toEqual([])
  })
})

describe('with BLOCKLIST_ALLOW_HTTP_LOOPBACK', () => {
  test('http on loopback is fetched, and a name is fetched from the address that was checked (Host keeps the name)', async () => {
    expect(await text(loopback('/list'), { allowHttpLoopback: true })).toBe('evil.example\n')
    const resolve = async () => ['127.0.0.1']
    expect(await text(new URL(`http://lists.test:${server.port}/list`), { allowHttpLoopback: true, resolve })).toBe('evil.example\n')
    expect(seen).toEqual([
      { host: `127.0.0.1:${server.port}`, path: '/list' },
      { host: `lists.test:${server.port}`, path: '/list' },
    ])
  })

  test('http anywhere but loopback is still refused', async () => {
    await expect(text(new URL('http://203.0.113.10/list'), { allowHttpLoopback: true })).rejects.toThrow('http is fetched from loopback addresses only')
    const resolve = async () => ['127.0.0.1', '203.0.113.10']
    await expect(text(new URL('http://mixed.test/list'), { allowHttpLoopback: true, resolve })).rejects.toThrow('http is fetched from loopback addresses only')
  })
})

describe('the bounds of a fetch', () => {
  test('a redirect is not followed', async () => {
    await expect(text(loopback('/moved'), { allowHttpLoopback: true })).rejects.toThrow('answered HTTP 302; redirects are not followed, give the final URL')
    expect(seen.map((request) => request.path)).toEqual(['/moved'])
  })

  test('a body past maxBytes is refused', async () => {
    expect(await text(loopback('/large'), { allowHttpLoopback: true, maxBytes: 5000 })).toHaveLength(5000)
    await expect(text(loopback('/large'), { allowHttpLoopback: true, maxBytes: 4999 })).rejects.toThrow(ListFetchError)
  })

  test('a server that does not answer within the budget fails the fetch', async () => {
    stall = new Promise(() => {})
    await expect(text(loopback('/list'), { allowHttpLoopback: true, timeoutMs: 200 })).rejects.toThrow('not fetched within 0.2 s')
  })
})
