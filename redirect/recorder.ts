// Where the redirect handler's clicks go. The serving thread appends each click to the write-ahead log
// (click-log.ts) and the 302 waits for that write; a worker thread owns the batcher: it is told the name
// of each sealed segment, reads it from the page cache, encodes and enriches it (click-bytes.ts) and
// ships it, so none of that runs on the thread that serves requests and no click crosses threads by
// message. The insert itself is made either
// - by the worker, over HTTP to a ClickHouse server (the stand-alone redirector, and the one-process
//   product when CLICKHOUSE_URL is set), or
// - by a sink on the serving thread, relayed (the embedded default: chDB lives in this process and is
//   used through its client here; its inserts run on chDB's own threads, off the event loop). The worker
//   moves each encoded batch over as one buffer and keeps its own chunks for a retry; the serving thread
//   only hands the buffer on.
import type { ClickEvent } from '../core/clicks'
import type { BatcherOptions, BatcherStats, ClickSink, EncodedBatch, FlushLabel } from './batcher'
import { ClickLog, type ClickLogOptions, type ClickLogStats } from './click-log'
import type { Segment } from './segment'

export type RecorderStats = BatcherStats &
  ClickLogStats & {
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

function logOptions(options: RecorderOptions, onSeal: (segment: Segment) => void): ClickLogOptions {
  const { spoolDir: dir, batchSize, flushIntervalMs, maxSpoolBytes: maxBytes, fsync, log } = options
  return { dir, batchSize, flushIntervalMs, maxBytes, fsync, keepEvents: false, onSeal, log }
}

function merged(log: ClickLog, batcher: BatcherStats): RecorderStats {
  const own = log.snapshot()
  return { ...batcher, ...own, pushed: own.logged }
}

/** Who inserts the worker's batches: the worker itself, over HTTP, or a sink on the serving thread. */
export type ClickTarget = { clickhouseUrl: string } | { sink: ClickSink }

export type WorkerRequest =
  | { type: 'init'; clickhouseUrl: string | null; options: Omit<BatcherOptions, 'log' | 'trimmed'> }
  | { type: 'segment'; segment: Segment }
  | { type: 'drain'; timeoutMs: number }
  | { type: 'inserted'; id: number; buffer?: ArrayBuffer }
  | { type: 'insertFailed'; id: number; message: string; buffer?: ArrayBuffer }

export type WorkerReply =
  | { type: 'ready' }
  | { type: 'insert'; id: number; batch: EncodedBatch; token: string; label: FlushLabel }
  | { type: 'failed'; message: string }
  | { type: 'log'; line: string }
  | { type: 'trimmed'; bytes: number }
  | { type: 'stats'; stats: BatcherStats }
  | { type: 'drained'; stats: BatcherStats }

const NO_STATS: BatcherStats = {
  written: 0,
  batchesWritten: 0,
  failedAttempts: 0,
  pendingRows: 0,
  spooledFiles: 0,
  replayedRows: 0,
  flushes: { size: 0, interval: 0, shutdown: 0, replay: 0 },
}

export async function workerRecorder(target: ClickTarget, options: RecorderOptions): Promise<ClickRecorder> {
  const { log: logLine, ipHashSecret, geoByIp, retryDelayMs, maxRetryDelayMs } = options
  const worker = new Worker(new URL('./click-worker.ts', import.meta.url).href)
  let latest = NO_STATS
  let clicks: ClickLog | null = null
  let onDrained: ((stats: BatcherStats) => void) | null = null
  /**
   * A batch the worker asks this thread's sink to insert; the answer goes back under its id, with the
   * batch's buffer (moved back once the insert settled, for the worker's next batch).
   */
  const relay = ({ id, batch, token, label }: Extract<WorkerReply, { type: 'insert' }>) => {
    if (!('sink' in target)) return
    const back = (answer: Extract<WorkerRequest, { type: 'inserted' | 'insertFailed' }>) => {
      const [bytes] = batch.chunks
      const buffer = bytes instanceof Uint8Array ? (bytes.buffer as ArrayBuffer) : undefined
      worker.postMessage({ ...answer, buffer } satisfies WorkerRequest, buffer ? [buffer] : [])
    }
    target.sink.insert(batch, token, label).then(
      () => back({ type: 'inserted', id }),
      (error: unknown) => back({ type: 'insertFailed', id, message: error instanceof Error ? error.message : String(error) }),
    )
  }
  await new Promise<void>((resolve, reject) => {
    worker.onmessage = (message: MessageEvent<WorkerReply>) => {
      const reply = message.data
      if (reply.type === 'ready') resolve()
      else if (reply.type === 'failed') reject(new Error(`click worker: ${reply.message}`))
      else if (reply.type === 'log') logLine?.(reply.line)
      else if (reply.type === 'trimmed') clicks?.trimmed(reply.bytes)
      else if (reply.type === 'stats') latest = reply.stats
      else if (reply.type === 'insert') relay(reply)
      else onDrained?.(reply.stats)
    }
    worker.onerror = (event) => reject(new Error(`click worker: ${event.message}`))
    const batcherOptions = { ipHashSecret, geoByIp, retryDelayMs, maxRetryDelayMs }
    const clickhouseUrl = 'clickhouseUrl' in target ? target.clickhouseUrl : null
    worker.postMessage({ type: 'init', clickhouseUrl, options: batcherOptions } satisfies WorkerRequest)
  })
  const ship = (segment: Segment) => worker.postMessage({ type: 'segment', segment } satisfies WorkerRequest)
  const log = new ClickLog(logOptions(options, ship))
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
