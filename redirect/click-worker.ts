// The click worker thread of the stand-alone redirector (see recorder.ts): it owns the batcher and the
// ClickHouse client, ships the segments the serving thread sealed, and reports its counters and the
// bytes it freed in the spool.
import { ClickHouseLogLevel, createClient } from '@clickhouse/client'
import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'
import { ClickBatcher } from './batcher'
import { clickhouseSink } from './clickhouse-sink'
import type { WorkerReply, WorkerRequest } from './recorder'

declare const self: Worker

/** How often the counters reach the serving thread (its /health shows them). */
const STATS_MS = 250

/**
 * This thread's nice value: when it and the thread serving redirects want the same core, redirects go
 * first, and shipping works off its backlog (on disk, bounded by the spool) as soon as the core has time.
 * Where the process has a core to spare, as it should, this changes nothing.
 */
export const CLICK_WORKER_NICE = 10

/** Lowers this thread's priority (Linux: the thread's own id from /proc/thread-self); elsewhere a no-op. */
function lowerPriority(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, CLICK_WORKER_NICE)
  } catch {
    // Not Linux, or not allowed: the thread keeps the process's priority.
  }
}

let batcher: ClickBatcher | null = null
const reply = (message: WorkerReply) => self.postMessage(message)

self.onmessage = async (message: MessageEvent<WorkerRequest>) => {
  const request = message.data
  if (request.type === 'segment') {
    batcher!.add(request.segment)
    return
  }
  if (request.type === 'init') {
    lowerPriority()
    try {
      // The batcher reports outages itself (once, and on recovery); the client stays quiet.
      const client = createClient({ url: request.clickhouseUrl, request_timeout: 10_000, log: { level: ClickHouseLogLevel.OFF } })
      batcher = new ClickBatcher(clickhouseSink(client), {
        ...request.options,
        log: (line) => reply({ type: 'log', line }),
        trimmed: (bytes) => reply({ type: 'trimmed', bytes }),
      })
      setInterval(() => reply({ type: 'stats', stats: batcher!.snapshot() }), STATS_MS)
      reply({ type: 'ready' })
    } catch (error) {
      reply({ type: 'failed', message: error instanceof Error ? error.message : String(error) })
    }
    return
  }
  const stats = await batcher!.drain(request.timeoutMs)
  reply({ type: 'drained', stats })
}
