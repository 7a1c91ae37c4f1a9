// check(): the verdict a write path reads. Lists on disk in a temporary directory, loaded by start().
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BlocklistConfig } from '../../../core/config'
import { createBlocklists, type Blocklists, type DestinationVerdict } from './blocklists'

let dir: string
let blocklists: Blocklists

const BLOCKED: DestinationVerdict = { allowed: false, code: 'DESTINATION_BLOCKED' }
const ALLOWED: DestinationVerdict = { allowed: true }

function settings(files: string[], allowlistHosts: string[] = []): { blocklists: BlocklistConfig } {
  return { blocklists: { files, urls: [], refreshMs: 3_600_000, allowHttpLoopback: false, allowlistHosts } }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'blocklists-check-'))
  writeFileSync(join(dir, 'hosts.txt'), 'evil.example\ndeep.sub.bad.example\n203.0.113.7\n2001:db8::7\nexample\nxn--bcher-kva.example\nhosted.example\n')
  writeFileSync(join(dir, 'urls.txt'), 'https://phish.example/login/\nhttp://files.example/bins/x.sh\n')
  blocklists = createBlocklists(settings([join(dir, 'hosts.txt'), join(dir, 'urls.txt')], ['good.evil.example', 'hosted.example']))
  await blocklists.start()
})

afterAll(async () => {
  await blocklists.stop()
  rmSync(dir, { recursive: true, force: true })
})

const verdict = (url: string) => blocklists.check(url)

describe('host entries', () => {
  test('a listed host is blocked in every spelling that reaches it', () => {
    for (const url of ['https://evil.example/', 'https://EVIL.example./x', 'http://%65vil.example/', 'https://bücher.example/', 'https://XN--BCHER-KVA.example/']) {
      expect(verdict(url), url).toEqual(BLOCKED)
    }
  })

  test('every subdomain of a listed host is blocked, however deep', () => {
    for (const url of ['https://www.evil.example/', 'https://a.b.c.evil.example/path']) expect(verdict(url), url).toEqual(BLOCKED)
  })

  test('a parent of a listed host, a sibling, and a name that merely ends the same are not', () => {
    for (const url of ['https://bad.example/', 'https://sub.bad.example/', 'https://other.sub.bad.example/', 'https://notevil.example/', 'https://evil.example.com/']) {
      expect(verdict(url), url).toEqual(ALLOWED)
    }
  })

  test('an entry without a dot matches only that host: parent domains are walked while they have a dot', () => {
    expect(verdict('http://example/')).toEqual(BLOCKED)
    expect(verdict('https://anything.example/')).toEqual(ALLOWED)
  })
})

describe('IP entries', () => {
  test('an IPv4 entry matches that address in any numeric spelling', () => {
    for (const url of ['http://203.0.113.7/', 'http://0xcb007107/', 'http://3405803783/', 'http://[::ffff:203.0.113.7]/']) expect(verdict(url), url).toEqual(BLOCKED)
  })

  test('an IPv4 entry matches that address only: not its neighbours, nor a name that contains it', () => {
    for (const url of ['http://203.0.113.8/', 'http://1.203.0.113.7.example/']) expect(verdict(url), url).toEqual(ALLOWED)
  })

  test('an IPv6 entry matches that address however it is written', () => {
    expect(verdict('http://[2001:DB8:0::7]/')).toEqual(BLOCKED)
    expect(verdict('http://[2001:db8::8]/')).toEqual(ALLOWED)
  })
})

describe('URL prefix entries', () => {
  test('URLs of that host whose path starts with the prefix are blocked, whatever the scheme, port or respelling', () => {
    for (const url of ['https://phish.example/login/', 'http://phish.example:8443/login/step2?x=1', 'https://phish.example/a/../%6Cogin/']) {
      expect(verdict(url), url).toEqual(BLOCKED)
    }
  })

  test('other paths of that host, and its subdomains, are not', () => {
    for (const url of ['https://phish.example/', 'https://phish.example/logout/', 'https://www.phish.example/login/']) expect(verdict(url), url).toEqual(ALLOWED)
  })

  test('a file URL entry blocks that file and what starts with it', () => {
    expect(verdict('https://files.example/bins/x.sh')).toEqual(BLOCKED)
    expect(verdict('https://files.example/bins/y.sh')).toEqual(ALLOWED)
  })
})

describe('the allowlist', () => {
  test('wins over a parent domain on a list, for the allowlisted host and its subdomains', () => {
    expect(verdict('https://good.evil.example/')).toEqual(ALLOWED)
    expect(verdict('https://www.good.evil.example/')).toEqual(ALLOWED)
    expect(verdict('https://bad.evil.example/')).toEqual(BLOCKED)
  })

  test('wins over the host itself being listed', () => {
    expect(verdict('https://hosted.example/')).toEqual(ALLOWED)
  })
})

describe('the verdict', () => {
  test('user-info, or no URL at all, is INVALID_URL', () => {
    for (const url of ['https://paypal.com@evil.example/', 'https://a:b@x.example/', 'not a url']) expect(verdict(url), url).toEqual({ allowed: false, code: 'INVALID_URL' })
  })

  test('names no list; explain() names the source and entry for operators, and status() counts the block per source', () => {
    const before = blocklists.status().sources.map((source) => source.blocked)
    const refused = verdict('https://x.evil.example/')
    expect(Object.keys(refused).sort()).toEqual(['allowed', 'code'])
    expect(blocklists.explain('https://x.evil.example/')).toEqual({ source: `file:${join(dir, 'hosts.txt')}`, entry: 'evil.example' })
    expect(blocklists.explain('https://phish.example/login/a')).toEqual({ source: `file:${join(dir, 'urls.txt')}`, entry: 'phish.example/login/' })
    expect(blocklists.explain('https://good.evil.example/')).toEqual({ allowlisted: true })
    expect(blocklists.explain('https://fine.example/')).toBeNull()
    expect(blocklists.status().sources.map((source) => source.blocked)).toEqual([before[0]! + 1, before[1]!])
  })

  test('before start() nothing is listed; a file that cannot be read stops start()', async () => {
    const unstarted = createBlocklists(settings([join(dir, 'hosts.txt')]))
    expect(unstarted.check('https://evil.example/')).toEqual(ALLOWED)
    const missing = createBlocklists(settings([join(dir, 'missing.txt')]))
    await expect(missing.start()).rejects.toThrow(/BLOCKLIST_FILES: .*missing\.txt/)
  })
})
