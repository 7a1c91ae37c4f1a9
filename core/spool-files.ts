// The files of a durable spool (the click log, the audit spool): append-only segment files in one
// directory, one future ClickHouse batch each. A segment is appended to until it is sealed; after that it
// never changes, and it is deleted once the store has taken it.
//
// Its dedup token is derived from its name alone, so a segment inserted but not yet deleted when the
// process died is inserted again after the restart under the same token, and ClickHouse drops the copy
// (insert_deduplication_token). Names are unique across processes and restarts (a random part): two
// segments sharing a token would make ClickHouse drop the second one's rows. One spool directory belongs to
// one process: a second one would ship the first one's open segment.
import { closeSync, fdatasyncSync, openSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { basename, join } from 'node:path'

/** Why a segment was sealed; shows in system.query_log (log_comment) and in the counters. */
export type FlushLabel = 'size' | 'interval' | 'flush' | 'shutdown' | 'replay'

/** What tells one spool's files from another's: their ending and their tokens' prefix. */
export interface SpoolKind {
  suffix: string
  tokenPrefix: string
  /** Files older versions wrote in other formats, replayed with the rest (their reader tells them apart). */
  legacySuffixes?: readonly string[]
}

export interface Segment<T = never> {
  file: string
  token: string
  label: FlushLabel
  /** Rows in the file; -1 for a segment left by an earlier run until it is read. */
  rows: number
  /** What reached the file, counted against the spool's bound. */
  bytes: number
  /** Order of sealing in this process; a flush waits for every segment up to its own. */
  seq: number
  /** The rows themselves when the writing thread kept them, so the file need not be read back. */
  events?: T[]
}

let sequence = 0

/** A new segment's path: sortable by creation time, unique by its random part. */
export function newSegmentFile(dir: string, kind: SpoolKind): string {
  const random = crypto.getRandomValues(new Uint32Array(2)).reduce((s, n) => s + n.toString(16).padStart(8, '0'), '')
  return join(dir, `${Date.now().toString().padStart(15, '0')}-${(sequence++).toString().padStart(6, '0')}-${random}${kind.suffix}`)
}

/** A segment's dedup token: its name without its ending (the one of its format, legacy ones included). */
export function tokenOf(file: string, kind: SpoolKind): string {
  const suffix = [kind.suffix, ...(kind.legacySuffixes ?? [])].find((s) => file.endsWith(s)) ?? kind.suffix
  return `${kind.tokenPrefix}${basename(file, suffix)}`
}

/**
 * What an earlier run left, oldest first: segments (sealed or not: the process is gone, so none grows any
 * more) and legacy files; `seq` is left for the caller to number. Half-written files (.tmp) are removed.
 */
export function leftoverSegments(dir: string, kind: SpoolKind): Array<Segment<never>> {
  const names = readdirSync(dir).sort()
  for (const stale of names.filter((n) => n.endsWith('.tmp'))) rmSync(join(dir, stale), { force: true })
  const replayed = (n: string) => n.endsWith(kind.suffix) || (kind.legacySuffixes ?? []).some((s) => n.endsWith(s))
  return names.filter(replayed).map((n) => {
    const file = join(dir, n)
    return { file, token: tokenOf(file, kind), label: 'replay' as const, rows: -1, bytes: statSync(file).size, seq: -1 }
  })
}

/** Moves an unreadable file aside (kept for a person to inspect) so the spool never loops on it. */
export function setAside(file: string): void {
  try {
    renameSync(file, `${file}.corrupt`)
  } catch {
    rmSync(file, { force: true })
  }
}

/** A new file's name must reach the disk too for fsync to protect it. */
export function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r')
  try {
    fdatasyncSync(fd)
  } finally {
    closeSync(fd)
  }
}
