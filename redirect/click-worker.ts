// The click worker thread of the stand-alone redirector (see recorder.ts): it owns the batcher and the
// ClickHouse client, ships the segments the serving thread sealed, and reports its counters and the
// bytes it freed in the spool.
import { ClickHouseLogLevel, createClient } from '@clickhouse/client'
import { ClickBatcher } from './batcher'
import { clickhouseSink } from './clickhouse-sink'
import type { WorkerReply, WorkerRequest } from './recorder'

declare const self: Worker

/** How often the counters reach the serving thread (its /health shows them). */
const STATS_MS = 250

let batcher: ClickBatcher | null = null
const reply = (message: WorkerReply) => self.postMessage(message)

self.onmessage = async (message: MessageEvent<WorkerRequest>) => {
  const request = message.data
  if (request.type === 'segment') {
    batcher!.add(request.segment)
    return
  }
  if (request.type === 'init') {
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
