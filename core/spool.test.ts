// The durable spool's mechanics, on a plain format of its own (one line a row): group commit, sealing,
// the bound, write failures, replay numbering. Its two owners test their formats and their stores on
// real engines beside them (redirect/click-log.test.ts, redirect/batcher.test.ts,
// src/modules/audit/recorder.test.ts); the shipping is tested in spool-shipper.test.ts.
import { describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { leftoverSegments, tokenOf } from './spool-files'
import { LINES, openSpool } from '../test/support/spool-fixtures'

const files = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith(LINES.suffix))
    .map((f) => join(dir, f))
const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

describe('group commit', () => {
  test('rows of one event-loop turn are one frame, written once; the promise resolves once they are in the file', async () => {
    const { log, dir, frames } = openSpool()
    const waits = Array.from({ length: 50 }, (_, i) => log.append(`r${i}`))
    expect(new Set(waits).size).toBe(1)
    expect(files(dir)).toEqual([]) // nothing written yet: no caller may be answered
    await waits[0]
    expect(frames).toEqual([50])
    expect(readFileSync(files(dir)[0]!, 'utf8')).toBe(Array.from({ length: 50 }, (_, i) => `r${i}\n`).join(''))
    await log.append('next')
    expect(frames).toEqual([50, 1])
    expect(log.snapshot()).toMatchObject({ logged: 51, dropped: 0 })
    log.close()
  })

  test('a row the owner cannot encode is left out and counted as dropped, the others land', async () => {
    const { log, sealed } = openSpool()
    await Promise.all(['a', 'bad', 'b'].map((r) => log.append(r)))
    log.close()
    expect(log.snapshot()).toMatchObject({ logged: 2, dropped: 1 })
    expect(readFileSync(sealed[0]!.file, 'utf8')).toBe('a\nb\n')
  })
})

describe('sealing', () => {
  test('by size, by interval and at close, each labelled, its token from its name, its rows kept for the shipper', async () => {
    const { log, sealed } = openSpool({ batchSize: 10, flushIntervalMs: 50 })
    await Promise.all(Array.from({ length: 12 }, (_, i) => log.append(`r${i}`)))
    expect(sealed.map((s) => [s.label, s.rows])).toEqual([['size', 12]])
    await log.append('r12')
    const deadline = Date.now() + 10_000
    while (sealed.length < 2 && Date.now() < deadline) await Bun.sleep(10)
    await log.append('r13')
    log.close()
    expect(sealed.map((s) => [s.label, s.rows])).toEqual([
      ['size', 12],
      ['interval', 1],
      ['shutdown', 1],
    ])
    for (const s of sealed) expect(s.token).toBe(tokenOf(s.file, LINES))
    expect(new Set(sealed.map((s) => s.token)).size).toBe(3)
    expect(sealed.map((s) => s.seq)).toEqual([0, 1, 2])
    expect(sealed[0]!.events).toHaveLength(12)
  })

  test('flushNow seals under its label; leftovers of an earlier run come first, numbered in order', async () => {
    const first = openSpool()
    await first.log.append('a')
    first.log.flushNow('flush')
    await first.log.append('b') // the process dies here: an unsealed segment
    expect(first.sealed.map((s) => [s.label, s.seq])).toEqual([['flush', 0]])
    const again = openSpool({ dir: first.dir })
    expect(again.leftovers.map((s) => [s.label, s.seq, s.rows])).toEqual([
      ['replay', 0, -1],
      ['replay', 1, -1],
    ])
    expect(again.log.lastSeq).toBe(1)
    expect(again.log.snapshot().spoolBytes).toBe(4) // 'a\n' and 'b\n'
    await again.log.append('c')
    again.log.flushNow('flush')
    expect(again.sealed.map((s) => s.seq)).toEqual([2])
    again.log.close()
  })

  test('after close a row is still written, sealed at once and left on disk for the next start', async () => {
    const { log, dir, sealed } = openSpool()
    await log.append('before')
    log.close()
    await log.append('after') // a call still finishing during shutdown
    await nextTurn()
    expect(sealed.map((s) => s.label)).toEqual(['shutdown'])
    expect(
      files(dir)
        .map((f) => readFileSync(f, 'utf8'))
        .sort(),
    ).toEqual(['after\n', 'before\n'])
  })

  test('an empty spool has no leftovers; half-written files (.tmp) are removed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'spool-'))
    writeFileSync(join(dir, '1-x.json.tmp'), '{')
    expect(leftoverSegments(dir, LINES)).toEqual([])
    expect(existsSync(join(dir, '1-x.json.tmp'))).toBe(false)
  })

  test('with fsync the rows land the same way', async () => {
    const { log, sealed } = openSpool({ fsync: true })
    await Promise.all([log.append('a'), log.append('b')])
    log.close()
    expect(readFileSync(sealed[0]!.file, 'utf8')).toBe('a\nb\n')
  })
})

describe('bounds and failures', () => {
  test('near the bound it says so once; at the bound rows are dropped and counted and calls do not wait; trimmed, it takes rows again', async () => {
    const row = 'x'.repeat(99) // 100 bytes a line
    const { log, said } = openSpool({ maxBytes: 1000 })
    for (let i = 0; i < 8; i++) await log.append(row)
    expect(log.snapshot().spoolNearFull).toBe(1)
    expect(said.join('\n')).toContain('over 80 % of TEST_SPOOL_MAX_BYTES')
    for (let i = 8; i < 10; i++) await log.append(row)
    expect(log.append(row)).toBeUndefined()
    expect(log.snapshot()).toMatchObject({ logged: 10, dropped: 1, spoolNearFull: 1, spoolBytes: 1000 })
    expect(said.filter((l) => l.includes('the spool is FULL')).length).toBe(1)
    log.trimmed(1000) // the store took the backlog
    expect(log.append(row)).toBeInstanceOf(Promise)
    expect(said.at(-1)).toBe('test: the spool is back under 80 % (0 MB); 1 rows dropped so far')
    log.close()
  })

  test('a write the disk refuses drops its rows, counts and says so, and never holds the call; the next write lands', async () => {
    const { log, dir, said } = openSpool()
    rmSync(dir, { recursive: true }) // the disk refuses: no directory to create the segment in
    await log.append('lost')
    expect(log.snapshot()).toMatchObject({ logged: 0, dropped: 1, writeErrors: 1, spoolBytes: 0 })
    expect(said).toHaveLength(1)
    expect(said[0]).toMatch(/^test: LOST 1 rows: the spool write failed \(.+\); calls go on \(1 failed writes so far\)$/)
    await log.append('lost too')
    expect(said).toHaveLength(1) // the 1st failure is told, then every 1000th
    mkdirSync(dir)
    await log.append('kept')
    log.close()
    expect(files(dir).map((f) => readFileSync(f, 'utf8'))).toEqual(['kept\n'])
  })
})
