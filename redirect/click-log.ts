// The write-ahead log of clicks, on the thread that serves redirects: a click is on disk before its 302
// leaves, so a process killed at any moment (SIGKILL, OOM) loses no click a client was answered for. The
// redirect handler waits for the promise append() returns: the turn's group commit (core/spool.ts,
// which also seals the segments, bounds the spool and says when it nears or reaches the bound).
//
// CLICK_FSYNC=true adds an fdatasync per frame for clicks that must outlive the machine too (a power cut),
// at the cost of a disk flush per turn on this thread. At CLICK_SPOOL_MAX_BYTES redirects go on without
// waiting and their clicks are dropped and counted (a link service must keep redirecting).
import type { ClickEvent } from '../core/clicks'
import { SpoolLog, type SpoolLogStats } from '../core/spool'
import { CLICK_SPOOL, CLICK_WORDS, clickFrame, type Segment } from './segment'

export interface ClickLogOptions {
  dir: string
  /** Rows per segment (= per ClickHouse insert). */
  batchSize: number
  /** A segment with clicks is sealed at least this often. */
  flushIntervalMs: number
  maxBytes: number
  fsync: boolean
  /** Keep the events of a segment in memory for a batcher on this thread (saves reading the file back). */
  keepEvents: boolean
  onSeal: (segment: Segment) => void
  log?: (line: string) => void
}

export type ClickLogStats = SpoolLogStats

export class ClickLog extends SpoolLog<ClickEvent> {
  constructor(options: ClickLogOptions) {
    super({ ...options, kind: CLICK_SPOOL, encode: clickFrame, words: CLICK_WORDS })
  }
}
