// Where the redirect handler's clicks go. Either way the serving thread appends each click to the
// write-ahead log (click-log.ts) and the 302 waits for that write; what differs is who ships the sealed
// segments to ClickHouse:
// - this thread: the embedded default, where ClickHouse is chDB inside this very process; the clicks of
//   a segment stay in memory, so its file is read back only after a restart or a long outage;
// - a worker thread that owns the batcher and the ClickHouse client: the stand-alone redirector. It is
//   told the name of each sealed segment and reads it from the page cache, so encoding, enrichment and
//   inserts never run on the thread that serves redirects, and no click crosses threads by message.
import type { ClickEvent } from '../src/core/clicks'
import { ClickBatcher, type BatcherOptions, type BatcherStats, type ClickSink } from './batcher'
import { ClickLog, type ClickLogOptions, type ClickLogStats } from './click-log'
import type { Segment } from './segment'

export type RecorderStats = BatcherStats & ClickLogStats & {
  /** Clicks recorded (on disk) by this run; served redirects = pushed + dropped. */
  pushed: number
}

export interface ClickRecorder {
  /** On the hot path: the promise the response waits for (the log write), or undefined (not recorded). */
  record(click: ClickEvent): Promise<void> | undefined
  stats(): RecorderStats
  /** Writes what is pending, waiting at most timeoutMs for ClickHouse; the rest stays in the spool. */
  stop(timeoutMs: number): Promise<RecorderStats>
}

export interface RecorderOptions extends Omit<BatcherOptions, 'trimmed'> {
  spoolDir: string
  batchSize: number
  flushIntervalMs: number
  maxSpoolBytes: number
  fsync: boolean
}

function logOptions(options: RecorderOptions, keepEvents: boolean, onSeal: (segment: Segment) => void): ClickLogOptions {
  const { spoolDir: dir, batchSize, flushIntervalMs, maxSpoolBytes: maxBytes, fsync, log } = options
  return { dir, batchSize, flushIntervalMs, maxBytes, fsync, keepEvents, onSeal, log }
}

function merged(log: ClickLog, batcher: BatcherStats): RecorderStats {
  const own = log.snapshot()
  return { ...batcher, ...own, pushed: own.logged }
}

export function inThreadRecorder(sink: ClickSink, options: RecorderOptions): ClickRecorder {
  let log: ClickLog | null = null
  const batcher = new ClickBatcher(sink, { ...options, trimmed: (bytes) => log?.trimmed(bytes) })
  log = new ClickLog(logOptions(options, true, (segment) => batcher.add(segment)))
  for (const leftover of log.open()) batcher.add(leftover)
  const clicks = log
  return {
    record: (click) => clicks.append(click),
    stats: () => merged(clicks, batcher.snapshot()),
    async stop(timeoutMs) {
      clicks.close()
      return merged(clicks, await batcher.drain(timeoutMs))
    },
  }
}

export type WorkerRequest =
  | { type: 'init'; clickhouseUrl: string; options: Omit<BatcherOptions, 'log' | 'trimmed'> }
  | { type: 'segment'; segment: Segment }
  | { type: 'drain'; timeoutMs: number }

export type WorkerReply =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  | { type: 'log'; line: string }
  | { type: 'trimmed'; bytes: number }
  | { type: 'stats'; stats: BatcherStats }
  | { type: 'drained'; stats: BatcherStats }

const NO_STATS: BatcherStats = {
  written: 0, batchesWritten: 0, failedAttempts: 0, pendingRows: 0, spooledFiles: 0, replayedRows: 0,
  flushes: { size: 0, interval: 0, shutdown: 0, replay: 0 },
}

export async function workerRecorder(clickhouseUrl: string, options: RecorderOptions): Promise<ClickRecorder> {
  const { log: logLine, maxPendingRows, ipHashSecret, geoByIp, retryDelayMs, maxRetryDelayMs } = options
  const worker = new Worker(new URL('./click-worker.ts', import.meta.url).href)
  let latest = NO_STATS
  let clicks: ClickLog | null = null
  let onDrained: ((stats: BatcherStats) => void) | null = null
  await new Promise<void>((resolve, reject) => {
    worker.onmessage = (message: MessageEvent<WorkerReply>) => {
      const reply = message.data
      if (reply.type === 'ready') resolve()
      else if (reply.type === 'failed') reject(new Error(`click worker: ${reply.message}`))
      else if (reply.type === 'log') logLine?.(reply.line)
      else if (reply.type === 'trimmed') clicks?.trimmed(reply.bytes)
      else if (reply.type === 'stats') latest = reply.stats
      else onDrained?.(reply.stats)
    }
    worker.onerror = (event) => reject(new Error(`click worker: ${event.message}`))
    const batcherOptions = { maxPendingRows, ipHashSecret, geoByIp, retryDelayMs, maxRetryDelayMs }
    worker.postMessage({ type: 'init', clickhouseUrl, options: batcherOptions } satisfies WorkerRequest)
  })
  const ship = (segment: Segment) => worker.postMessage({ type: 'segment', segment } satisfies WorkerRequest)
  const log = new ClickLog(logOptions(options, false, ship))
  clicks = log
  for (const leftover of log.open()) ship(leftover)
  return {
    record: (click) => log.append(click),
    stats: () => merged(log, latest),
    async stop(timeoutMs) {
      log.close()
      const drained = new Promise<BatcherStats>((resolve) => (onDrained = resolve))
      worker.postMessage({ type: 'drain', timeoutMs } satisfies WorkerRequest)
      latest = await drained
      worker.terminate()
      return merged(log, latest)
    },
  }
}
