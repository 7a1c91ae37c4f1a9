// The click worker thread (see recorder.ts): it owns the batcher, ships the segments the serving thread
// sealed (with its own ClickHouse client, or through the serving thread's sink), and reports its
// counters and the bytes it freed in the spool.
import { ClickHouseLogLevel, createClient } from '@clickhouse/client'
import { batchBytes, ClickBatcher, type ClickSink } from './batcher'
import { clickhouseSink } from './clickhouse-sink'
import type { WorkerReply, WorkerRequest } from './recorder'
import { lowerThisThread } from '../src/core/threads'

declare const self: Worker

/** How often the counters reach the serving thread (its /health shows them). */
const STATS_MS = 250

let batcher: ClickBatcher | null = null
const reply = (message: WorkerReply) => self.postMessage(message)

/** Inserts made by the serving thread's sink, waiting for its answer, by id. */
const relayed = new Map<number, { resolve: () => void; reject: (error: Error) => void }>()
let relayId = 0

/** The serving thread's sink, from here: each batch is posted (copied: it stays here for a retry). */
const relaySink: ClickSink = {
  insert: (batch, token, label) =>
    new Promise<void>((resolve, reject) => {
      const id = ++relayId
      relayed.set(id, { resolve, reject })
      // One buffer of its own (never a slice of a shared pool), moved to the serving thread without a
      // further copy; the chunks stay here for a retry.
      const joined = batchBytes(batch)
      const bytes = new Uint8Array(joined.byteLength)
      bytes.set(joined)
      const message: WorkerReply = { type: 'insert', id, batch: { chunks: [bytes], rows: batch.rows }, token, label }
      self.postMessage(message, [bytes.buffer])
    }),
}

self.onmessage = async (message: MessageEvent<WorkerRequest>) => {
  const request = message.data
  if (request.type === 'segment') {
    batcher!.add(request.segment)
    return
  }
  if (request.type === 'inserted' || request.type === 'insertFailed') {
    const waiter = relayed.get(request.id)
    relayed.delete(request.id)
    if (request.type === 'inserted') waiter?.resolve()
    else waiter?.reject(new Error(request.message))
    return
  }
  if (request.type === 'init') {
    // Redirects go first when this thread and the serving one want the same core (src/core/threads.ts).
    lowerThisThread()
    try {
      // The batcher reports outages itself (once, and on recovery); the client stays quiet.
      const sink = request.clickhouseUrl === null
        ? relaySink
        : clickhouseSink(createClient({ url: request.clickhouseUrl, request_timeout: 10_000, log: { level: ClickHouseLogLevel.OFF } }))
      batcher = new ClickBatcher(sink, {
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
