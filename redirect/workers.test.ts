// A spool left in another layout is moved, under its own names (its dedup tokens), to where the
// redirector now replays it: one process ↔ N workers, N workers → fewer. Nothing is left unshipped by a
// change of REDIRECT_WORKERS.
import { describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { adoptLeftoverSpools, workerSpoolDir } from './workers'

function spoolWith(files: Record<string, string[]>): string {
  const dir = mkdtempSync(join(tmpdir(), 'workers-spool-'))
  for (const [sub, names] of Object.entries(files)) {
    mkdirSync(join(dir, sub), { recursive: true })
    for (const name of names) writeFileSync(join(dir, sub, name), 'x')
  }
  return dir
}

const files = (dir: string) =>
  readdirSync(dir)
    .filter((n) => n.endsWith('.log'))
    .sort()

describe('adoptLeftoverSpools', () => {
  test('one process before, two workers now: its segments go to worker 0, names kept', () => {
    const dir = spoolWith({ '.': ['001-a.log', '002-b.log'] })
    expect(adoptLeftoverSpools(dir, 2, () => {})).toBe(2)
    expect(files(dir)).toEqual([])
    expect(files(workerSpoolDir(dir, 0))).toEqual(['001-a.log', '002-b.log'])
  })

  test("three workers before, two now: worker 2's go to worker 0; workers 0 and 1 keep theirs", () => {
    const dir = spoolWith({ 'worker-0': ['001-a.log'], 'worker-1': ['002-b.log'], 'worker-2': ['003-c.log'] })
    expect(adoptLeftoverSpools(dir, 2, () => {})).toBe(1)
    expect(files(workerSpoolDir(dir, 0))).toEqual(['001-a.log', '003-c.log'])
    expect(files(workerSpoolDir(dir, 1))).toEqual(['002-b.log'])
    expect(files(workerSpoolDir(dir, 2))).toEqual([])
  })

  test("two workers before, one process now: every worker's segments go to the spool directory itself", () => {
    const dir = spoolWith({ 'worker-0': ['001-a.log'], 'worker-1': ['002-b.log'] })
    const lines: string[] = []
    expect(adoptLeftoverSpools(dir, 1, (line) => lines.push(line))).toBe(2)
    expect(files(dir)).toEqual(['001-a.log', '002-b.log'])
    expect(lines.join('\n')).toContain('moved')
  })

  test('no spool yet, or nothing to move: nothing happens', () => {
    const absent = join(tmpdir(), `absent-${crypto.randomUUID()}`)
    const said: string[] = []
    expect(adoptLeftoverSpools(absent, 2, (line) => said.push(line))).toBe(0)
    expect(existsSync(absent), 'a spool directory made').toBe(false)
    const dir = spoolWith({ 'worker-0': ['001-a.log'] })
    expect(adoptLeftoverSpools(dir, 2, (line) => said.push(line))).toBe(0)
    expect(readdirSync(dir).sort(), 'the spool directory').toEqual(['worker-0'])
    expect(files(workerSpoolDir(dir, 0))).toEqual(['001-a.log'])
    expect(said, 'lines said').toEqual([])
  })
})
