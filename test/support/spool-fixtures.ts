// FOR THE SPOOL'S OWN TESTS ONLY (nothing else imports it): a spool of plain lines, one a row, on a
// temporary directory, with what it sealed and said collected.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SpoolLog, type SpoolLogOptions } from '../../core/spool'
import type { Segment, SpoolKind } from '../../core/spool-files'
import type { SpoolWords } from '../../core/spool-words'

export const LINES: SpoolKind = { suffix: '.lines', tokenPrefix: 'tst-' }
export const WORDS: SpoolWords = { prefix: 'test', rows: 'rows', batches: 'test batches', bound: 'TEST_SPOOL_MAX_BYTES', counter: 'test.dropped', goesOn: 'calls go on' }

/** One line a row; a row 'bad' cannot be encoded. */
export function lines(rows: string[]): { frame: string; rows: number } {
  const kept = rows.filter((r) => r !== 'bad')
  return { frame: kept.map((r) => `${r}\n`).join(''), rows: kept.length }
}

/** A spool of lines; `sealed` collects what it sealed (then handed to `overrides.onSeal`, if any). */
export function openSpool(overrides: Partial<SpoolLogOptions<string>> = {}) {
  const sealed: Array<Segment<string>> = []
  const said: string[] = []
  const frames: number[] = []
  const dir = overrides.dir ?? mkdtempSync(join(tmpdir(), 'spool-'))
  const log = new SpoolLog<string>({
    kind: LINES,
    batchSize: 1000,
    flushIntervalMs: 60_000,
    maxBytes: 1 << 20,
    fsync: false,
    keepEvents: true,
    encode: (rows) => (frames.push(rows.length), lines(rows)),
    log: (l) => said.push(l),
    words: WORDS,
    ...overrides,
    dir,
    onSeal: (s) => (sealed.push(s), overrides.onSeal?.(s)),
  })
  const leftovers = log.open()
  return { log, dir, sealed, said, frames, leftovers }
}
