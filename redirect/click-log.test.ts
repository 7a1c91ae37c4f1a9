import { describe, expect, test } from 'bun:test'
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ClickEvent } from '../src/core/clicks'
import { ConfigError, parseConfig } from '../src/core/config'
import { ClickLog, type ClickLogOptions } from './click-log'
import { wireRow } from './click-wire'
import { frame, leftoverSegments, readSegment, tokenOf, type Segment } from './segment'

function click(n: number, extra: Partial<ClickEvent> = {}): ClickEvent {
  return { clickId: `c${n}`, linkId: 'link_1', domain: 'sho.rt', alias: 'abcd', at: 1_700_000_000_000 + n, referrer: '', userAgent: 'UA é中', ip: '10.0.0.1', country: '', url: 'https://dest.example/', ...extra }
}

function openLog(overrides: Partial<ClickLogOptions> = {}) {
  const sealed: Segment[] = []
  const lines: string[] = []
  const dir = overrides.dir ?? mkdtempSync(join(tmpdir(), 'click-log-'))
  const log = new ClickLog({
    dir, batchSize: 1000, flushIntervalMs: 60_000, maxBytes: 1 << 20, fsync: false,
    keepEvents: true, onSeal: (s) => sealed.push(s), log: (line) => lines.push(line), ...overrides,
  })
  const leftovers = log.open()
  return { log, dir, sealed, lines, leftovers }
}

const segmentFiles = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.log')).map((f) => join(dir, f))

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
    expect(text).toBe(frame(Array.from({ length: 50 }, (_, i) => wireRow(click(i))).join('')))
    expect(readSegment(file!).events).toEqual(Array.from({ length: 50 }, (_, i) => click(i)))
    expect(log.snapshot().logged).toBe(50)
    log.close()
  })

  test('a segment is sealed by size, by interval and at close, and its token comes from its name', async () => {
    const { log, sealed } = openLog({ batchSize: 10, flushIntervalMs: 50 })
    await Promise.all(Array.from({ length: 12 }, (_, i) => log.append(click(i))))
    expect(sealed.map((s) => [s.label, s.rows])).toEqual([['size', 12]])
    await log.append(click(12))
    await Bun.sleep(120)
    await log.append(click(13))
    log.close()
    expect(sealed.map((s) => [s.label, s.rows])).toEqual([['size', 12], ['interval', 1], ['shutdown', 1]])
    for (const s of sealed) expect(s.token).toBe(tokenOf(s.file))
    expect(new Set(sealed.map((s) => s.token)).size).toBe(3)
    expect(sealed[0]!.events).toHaveLength(12)
  })

  test('a frame cut short by a crash is ignored with what follows; the rest is replayed on the next open', async () => {
    const { log, dir } = openLog()
    await log.append(click(1))
    await log.append(click(2))
    const [file] = segmentFiles(dir)
    const third = Buffer.from(frame(wireRow(click(3, { userAgent: '中中中' }))))
    appendFileSync(file!, third.subarray(0, third.length - 2)) // the kill landed mid-write, inside a character
    expect(readSegment(file!)).toEqual({ events: [click(1), click(2)], torn: true })
    const again = openLog({ dir })
    expect(again.leftovers.map((s) => [s.file, s.token, s.label])).toEqual([[file!, tokenOf(file!), 'replay']])
    expect(again.log.snapshot().spoolBytes).toBe(readFileSync(file!).length)
  })

  test('near the bound it says so once; at the bound clicks are dropped and counted, redirects do not wait', async () => {
    const row = frame(wireRow(click(0))).length
    const { log, lines } = openLog({ maxBytes: row * 10 })
    for (let i = 0; i < 8; i++) await log.append(click(i))
    expect(log.snapshot().spoolNearFull).toBe(1)
    expect(lines.join('\n')).toContain('CLICK_SPOOL_MAX_BYTES')
    for (let i = 8; i < 10; i++) await log.append(click(i))
    expect(log.append(click(10))).toBeUndefined()
    expect(log.snapshot()).toMatchObject({ logged: 10, dropped: 1, spoolNearFull: 1 })
    expect(lines.some((l) => l.includes('FULL'))).toBe(true)
    log.trimmed(row * 10) // ClickHouse took the backlog
    expect(log.append(click(11))).toBeInstanceOf(Promise)
    expect(lines.at(-1)).toContain('1 clicks dropped')
    log.close()
  })

  test('with fsync the clicks land the same way', async () => {
    const { log, sealed } = openLog({ fsync: true })
    await Promise.all([log.append(click(1)), log.append(click(2))])
    log.close()
    expect(readSegment(sealed[0]!.file).events).toEqual([click(1), click(2)])
  })

  test('an empty spool has no leftovers; half-written legacy files are removed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'click-log-'))
    writeFileSync(join(dir, '1-clk-x.json.tmp'), '{')
    expect(leftoverSegments(dir)).toEqual([])
    expect(existsSync(join(dir, '1-clk-x.json.tmp'))).toBe(false)
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
    for (const [name, value] of [['CLICK_SPOOL_MAX_BYTES', 'lots'], ['CLICK_SPOOL_MAX_BYTES', '10'], ['CLICK_FSYNC', 'yes']] as const) {
      expect(() => parseConfig({ ...base, [name]: value })).toThrow(ConfigError)
      expect(() => parseConfig({ ...base, [name]: value })).toThrow(name)
    }
  })
})
