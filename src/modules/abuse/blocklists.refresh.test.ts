// Loading and refreshing: lists served by the test's own HTTP server on loopback (with the test-only
// BLOCKLIST_ALLOW_HTTP_LOOPBACK), conditional requests, the swap and its diff, failures that keep the
// last good list, the timer, files read again only when they changed.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BlocklistConfig } from '../../../core/config'
import { until, within } from '../../../test/support/wait'
import { createBlocklists, MAX_LISTED_CHANGES, type BlocklistChange, type Blocklists } from './blocklists'

/** What the list server answers next, and what it was asked. */
const served = {
  body: '',
  etag: undefined as string | undefined,
  lastModified: undefined as string | undefined,
  status: 200,
  /** Set: the next request waits for it to resolve (a fetch in flight). */
  hold: undefined as Promise<void> | undefined,
  requests: [] as { ifNoneMatch: string | null; ifModifiedSince: string | null }[],
}

let server: ReturnType<typeof Bun.serve>
let dir: string
let listUrl: string
const started: Blocklists[] = []

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'blocklists-refresh-'))
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const ifNoneMatch = request.headers.get('if-none-match')
      const ifModifiedSince = request.headers.get('if-modified-since')
      served.requests.push({ ifNoneMatch, ifModifiedSince })
      if (served.hold) await served.hold
      const headers: Record<string, string> = { 'content-type': 'text/plain' }
      if (served.etag) headers.etag = served.etag
      if (served.lastModified) headers['last-modified'] = served.lastModified
      const unchanged = (served.etag !== undefined && ifNoneMatch === served.etag) || (served.etag === undefined && served.lastModified !== undefined && ifModifiedSince === served.lastModified)
      if (served.status === 200 && unchanged) return new Response(null, { status: 304, headers })
      return new Response(served.body, { status: served.status, headers })
    },
  })
  listUrl = `http://127.0.0.1:${server.port}/lists/block.txt?key=secret-key`
})

afterEach(async () => {
  for (const blocklists of started.splice(0)) await blocklists.stop()
  Object.assign(served, { body: '', etag: undefined, lastModified: undefined, status: 200, hold: undefined, requests: [] })
})

afterAll(() => {
  server.stop(true)
  rmSync(dir, { recursive: true, force: true })
})

function make(blocklists: Partial<BlocklistConfig>, now?: () => number) {
  const lines: string[] = []
  const changes: BlocklistChange[] = []
  const config = { blocklists: { files: [], urls: [], refreshMs: 3_600_000, allowHttpLoopback: true, allowlistHosts: [], ...blocklists } }
  const made = createBlocklists(config, { log: (line) => lines.push(line), now })
  made.onChange((change) => void changes.push(change))
  started.push(made)
  return { blocklists: made, lines, changes }
}

const blocked = (blocklists: Blocklists, url: string) => !blocklists.check(url).allowed

describe('a list URL', () => {
  test('is fetched at start, and a refresh asks If-None-Match: a 304 keeps the list and counts as confirmed', async () => {
    Object.assign(served, { body: 'evil.example\n', etag: '"v1"' })
    let clock = 1_000_000
    const { blocklists, changes } = make({ urls: [listUrl] }, () => clock)
    await blocklists.start()
    clock += 60_000
    expect(blocked(blocklists, 'https://evil.example/')).toBe(true)
    expect(changes).toEqual([{ kind: 'rescan', reason: 'start' }])
    await blocklists.refresh()
    expect(served.requests).toEqual([
      { ifNoneMatch: null, ifModifiedSince: null },
      { ifNoneMatch: '"v1"', ifModifiedSince: null },
    ])
    expect(blocked(blocklists, 'https://evil.example/')).toBe(true)
    const [status] = blocklists.status().sources
    expect(status).toMatchObject({ loads: 1, notModified: 1, failures: 0, hosts: 1, lastLoadedAt: 1_000_000, lastConfirmedAt: 1_060_000 })
    expect(changes).toHaveLength(1)
  })

  test('a refresh asks If-Modified-Since; a changed list is swapped in and the listener told exactly what it adds', async () => {
    Object.assign(served, { body: 'evil.example\nold.example\n', lastModified: 'Wed, 01 Jul 2026 10:00:00 GMT' })
    const { blocklists, changes } = make({ urls: [listUrl] })
    await blocklists.start()
    Object.assign(served, {
      // new.example and a prefix are new; sub.evil.example was covered by evil.example already; old.example goes.
      body: 'evil.example\nsub.evil.example\nnew.example\nhttps://kit.example/login/\n',
      lastModified: 'Wed, 01 Jul 2026 11:00:00 GMT',
    })
    await blocklists.refresh()
    expect(served.requests.map((r) => r.ifModifiedSince)).toEqual([null, 'Wed, 01 Jul 2026 10:00:00 GMT'])
    expect(changes.at(-1)).toEqual({ kind: 'added', source: `url:http://127.0.0.1:${server.port}/lists/block.txt`, hosts: ['new.example'], prefixes: [{ host: 'kit.example', prefix: '/login/' }] })
    expect(blocked(blocklists, 'https://new.example/')).toBe(true)
    expect(blocked(blocklists, 'https://kit.example/login/x')).toBe(true)
    expect(blocked(blocklists, 'https://old.example/')).toBe(false)
  })

  test('its status and log name the URL without its query (a key may be in it)', async () => {
    Object.assign(served, { body: 'evil.example\n' })
    const { blocklists, lines } = make({ urls: [listUrl] })
    await blocklists.start()
    expect(blocklists.status().sources[0]!.name).toBe(`url:http://127.0.0.1:${server.port}/lists/block.txt`)
    expect(lines.join('\n')).not.toContain('secret-key')
    expect(lines.join('\n')).toContain('1 hosts and 0 URL prefixes (hosts)')
  })

  test('more new entries than MAX_LISTED_CHANGES are not listed: the listener is told to check every link', async () => {
    Object.assign(served, { body: 'evil.example\n', etag: '"small"' })
    const { blocklists, changes } = make({ urls: [listUrl] })
    await blocklists.start()
    const many = Array.from({ length: MAX_LISTED_CHANGES + 1 }, (_, i) => `host-${i}.example`)
    Object.assign(served, { body: `${many.join('\n')}\n`, etag: '"large"' })
    await blocklists.refresh()
    expect(changes.at(-1)).toEqual({ kind: 'rescan', reason: 'many', source: `url:http://127.0.0.1:${server.port}/lists/block.txt` })
    expect(blocked(blocklists, `https://host-${MAX_LISTED_CHANGES}.example/`)).toBe(true)
  })
})

describe('a failed refresh', () => {
  test('an HTTP error keeps the last good list, and is logged and counted', async () => {
    Object.assign(served, { body: 'evil.example\n', etag: '"v1"' })
    const { blocklists, lines } = make({ urls: [listUrl] })
    await blocklists.start()
    served.status = 500
    await blocklists.refresh()
    expect(blocked(blocklists, 'https://evil.example/')).toBe(true)
    expect(blocklists.status().sources[0]).toMatchObject({ loads: 1, failures: 1, lastError: 'answered HTTP 500, not 200' })
    expect(lines.at(-1)).toMatch(/refresh failed \(the list of .* stays\): answered HTTP 500/)
  })

  test('a body that is no list keeps the last good list, and its validators are not kept (the next refresh fetches it whole)', async () => {
    Object.assign(served, { body: 'evil.example\n', etag: '"v1"' })
    const { blocklists } = make({ urls: [listUrl] })
    await blocklists.start()
    Object.assign(served, { body: '<html>\n<body>maintenance</body>\n</html>\n', etag: '"broken"' })
    await blocklists.refresh()
    expect(blocked(blocklists, 'https://evil.example/')).toBe(true)
    expect(blocklists.status().sources[0]!.failures).toBe(1)
    Object.assign(served, { body: 'fixed.example\n', etag: '"v2"' })
    await blocklists.refresh()
    expect(served.requests.map((r) => r.ifNoneMatch)).toEqual([null, '"v1"', '"v1"'])
    expect(blocked(blocklists, 'https://fixed.example/')).toBe(true)
    expect(blocked(blocklists, 'https://evil.example/')).toBe(false)
  })

  test('a list that never loaded at start leaves its source empty and start() goes on (URLs only)', async () => {
    served.status = 503
    const { blocklists } = make({ urls: [listUrl] })
    await blocklists.start()
    expect(blocklists.status().sources[0]).toMatchObject({ loads: 0, failures: 1, hosts: 0 })
  })
})

describe('the schedule', () => {
  test('a list URL is fetched again every refreshMs without being asked', async () => {
    Object.assign(served, { body: 'evil.example\n', etag: '"v1"' })
    const { blocklists } = make({ urls: [listUrl], refreshMs: 50 })
    await blocklists.start()
    await until(
      () => served.requests.length >= 3,
      () => `requests: ${served.requests.length}`,
    )
    expect(served.requests.slice(1).every((r) => r.ifNoneMatch === '"v1"')).toBe(true)
  })

  test('stop() ends a fetch in flight: the refresh settles without counting a failure', async () => {
    Object.assign(served, { body: 'evil.example\n' })
    const { blocklists } = make({ urls: [listUrl] })
    await blocklists.start()
    let release = () => {}
    served.hold = new Promise<void>((resolve) => (release = resolve))
    const refreshing = blocklists.refresh()
    await until(() => served.requests.length === 2, 'the second request to arrive')
    await within(blocklists.stop(), 'stop()')
    await within(refreshing, 'the refresh in flight')
    release()
    expect(blocklists.status().sources[0]).toMatchObject({ loads: 1, failures: 0 })
  })
})

describe('a list file', () => {
  test('is read again when it changed, and only then', async () => {
    const file = join(dir, 'changing.txt')
    writeFileSync(file, 'evil.example\n')
    const { blocklists, changes } = make({ files: [file] })
    await blocklists.start()
    await blocklists.refresh()
    expect(blocklists.status().sources[0]!.loads).toBe(1)
    writeFileSync(file, 'evil.example\nnewer.example\n')
    await blocklists.refresh()
    expect(blocklists.status().sources[0]!.loads).toBe(2)
    expect(changes.at(-1)).toEqual({ kind: 'added', source: `file:${file}`, hosts: ['newer.example'], prefixes: [] })
  })

  test('that goes missing after start keeps its last list', async () => {
    const file = join(dir, 'vanishing.txt')
    writeFileSync(file, 'evil.example\n')
    const { blocklists } = make({ files: [file] })
    await blocklists.start()
    rmSync(file)
    await blocklists.refresh()
    expect(blocked(blocklists, 'https://evil.example/')).toBe(true)
    expect(blocklists.status().sources[0]!.failures).toBe(1)
  })
})
