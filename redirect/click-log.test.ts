// The click log's own part: its format on disk (frames of escaped lines) and reading it back after a crash.
// The mechanics it shares with the audit spool (group commit, sealing, the bound, write failures) are
// tested beside them, in core/spool.test.ts.
import { describe, expect, test } from 'bun:test'
import { appendFileSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ClickEvent } from '../core/clicks'
import { ConfigError, parseConfig } from '../core/config'
import { ClickLog, type ClickLogOptions } from './click-log'
import { CLICK_SPOOL, clickLine, frame, readSegment, tokenOf, type Segment } from './segment'

function click(n: number, extra: Partial<ClickEvent> = {}): ClickEvent {
  return {
    clickId: `c${n}`,
    linkId: 'link_1',
    domain: 'sho.rt',
    alias: 'abcd',
    at: 1_700_000_000_000 + n,
    referrer: '',
    userAgent: 'UA é中',
    ip: '10.0.0.1',
    country: '',
    url: 'https://dest.example/',
    ...extra,
  }
}

function openLog(overrides: Partial<ClickLogOptions> = {}) {
  const sealed: Segment[] = []
  const lines: string[] = []
  const dir = overrides.dir ?? mkdtempSync(join(tmpdir(), 'click-log-'))
  const log = new ClickLog({
    dir,
    batchSize: 1000,
    flushIntervalMs: 60_000,
    maxBytes: 1 << 20,
    fsync: false,
    keepEvents: true,
    onSeal: (s) => sealed.push(s),
    log: (line) => lines.push(line),
    ...overrides,
  })
  const leftovers = log.open()
  return { log, dir, sealed, lines, leftovers }
}

const segmentFiles = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith(CLICK_SPOOL.suffix))
    .map((f) => join(dir, f))

describe('click log', () => {
  test('clicks of one event-loop turn share one write; the promise resolves once they are in the file', async () => {
    const { log, dir } = openLog()
    const waits = Array.from({ length: 50 }, (_, i) => log.append(click(i)))
    expect(new Set(waits).size).toBe(1)
    expect(segmentFiles(dir)).toEqual([]) // nothing written yet: no 302 may leave
    await waits[0]
    const [file] = segmentFiles(dir)
    const text = readFileSync(file!, 'utf8')
    expect(text.split('\n')[0]).toMatch(/^\d+$/) // one frame: one length line
    expect(text).toBe(frame(Array.from({ length: 50 }, (_, i) => clickLine(click(i))).join('')))
    expect(readSegment(file!).events).toEqual(Array.from({ length: 50 }, (_, i) => click(i)))
    expect(log.snapshot().logged).toBe(50)
    log.close()
  })

  test('a frame cut short by a crash is ignored with what follows; the rest is replayed on the next open', async () => {
    const { log, dir } = openLog()
    await log.append(click(1))
    await log.append(click(2))
    const [file] = segmentFiles(dir)
    const third = Buffer.from(frame(clickLine(click(3, { userAgent: '中中中' }))))
    appendFileSync(file!, third.subarray(0, third.length - 2)) // the kill landed mid-write, inside a character
    expect(readSegment(file!)).toEqual({ events: [click(1), click(2)], torn: true })
    const again = openLog({ dir })
    expect(again.leftovers.map((s) => [s.file, s.token, s.label])).toEqual([[file!, tokenOf(file!), 'replay']])
    expect(again.log.snapshot().spoolBytes).toBe(readFileSync(file!).length)
  })

  test('values a client controls, tabs, newlines, backslashes and all, read back exactly', async () => {
    const { log, dir } = openLog()
    const hostile = [
      click(1, { referrer: 'https://a/?x=\t1\n2\r\\N', userAgent: 'UA\t\t9\\t é中😀\0', ip: '::1', country: 'F\tR' }),
      click(2, { referrer: '\\', userAgent: '', url: 'https://d.example/p?utm_source=a\tb#frag\n' }),
    ]
    await Promise.all(hostile.map((c) => log.append(c)))
    const [file] = segmentFiles(dir)
    expect(readFileSync(file!, 'utf8').split('\n')).toHaveLength(5) // length, two lines, terminator, end
    expect(readSegment(file!)).toEqual({ events: hostile, torn: false })
    log.close()
  })

  test('a turn larger than the frame buffer, then a small one: both read back whole', async () => {
    const { log, dir } = openLog()
    const big = Array.from({ length: 600 }, (_, i) => click(i, { userAgent: `UA ${'x'.repeat(300)} é中 ${i}` }))
    await Promise.all(big.map((c) => log.append(c)))
    await log.append(click(600))
    const [file] = segmentFiles(dir)
    expect(readFileSync(file!).length).toBeGreaterThan(1 << 16)
    expect(readSegment(file!)).toEqual({ events: [...big, click(600)], torn: false })
    log.close()
  })

  test('its bound is told in its own names: CLICK_SPOOL_MAX_BYTES, clicks.dropped, redirects go on', async () => {
    const { log, lines } = openLog({ maxBytes: Buffer.byteLength(frame(clickLine(click(0)))) })
    await log.append(click(0))
    expect(log.append(click(1))).toBeUndefined()
    expect(lines.join('\n')).toContain('over 80 % of CLICK_SPOOL_MAX_BYTES')
    expect(lines.join('\n')).toContain('clicks are now DROPPED and counted (clicks.dropped)')
    log.close()
  })
})

describe('click spool configuration', () => {
  const base = { DATA_DIR: '/tmp/x' }
  test('CLICK_SPOOL_MAX_BYTES takes bytes or K/M/G; CLICK_FSYNC true or false', () => {
    expect(parseConfig(base).clicks).toMatchObject({ maxSpoolBytes: 1024 ** 3, fsync: false, spoolDir: '/tmp/x/click-spool' })
    expect(parseConfig({ ...base, CLICK_SPOOL_MAX_BYTES: '512M', CLICK_FSYNC: 'true' }).clicks).toMatchObject({ maxSpoolBytes: 512 * 1024 ** 2, fsync: true })
    expect(parseConfig({ ...base, CLICK_SPOOL_MAX_BYTES: '2g' }).clicks.maxSpoolBytes).toBe(2 * 1024 ** 3)
  })
  test('a bad value stops the start with a message naming the variable', () => {
    for (const [name, value] of [
      ['CLICK_SPOOL_MAX_BYTES', 'lots'],
      ['CLICK_SPOOL_MAX_BYTES', '10'],
      ['CLICK_FSYNC', 'yes'],
    ] as const) {
      expect(() => parseConfig({ ...base, [name]: value })).toThrow(ConfigError)
      expect(() => parseConfig({ ...base, [name]: value })).toThrow(name)
    }
  })
})
