// The click worker thread (see recorder.ts): it owns the batcher, ships the segments the serving thread
// sealed (with its own ClickHouse client, or through the serving thread's sink), and reports its
// counters and the bytes it freed in the spool.
import { ClickHouseLogLevel, createClient } from '@clickhouse/client'
import { ClickBatcher, type ClickSink } from './batcher'
import { clickhouseSink } from './clickhouse-sink'
import type { WorkerReply, WorkerRequest } from './recorder'
import { lowerThisThread } from '../core/threads'

declare const self: Worker

/** How often the counters reach the serving thread (its /health shows them). */
const STATS_MS = 250

let batcher: ClickBatcher | null = null
const reply = (message: WorkerReply) => self.postMessage(message)

/** Inserts made by the serving thread's sink, waiting for its answer, by id. */
const relayed = new Map<number, { resolve: () => void; reject: (error: Error) => void }>()
let relayId = 0

/**
 * The buffer the serving thread moved back after the last relayed insert, reused for the next one: a fresh
 * buffer of a few megabytes a batch costs both threads page faults (see RowOutput in click-bytes.ts).
 */
let spare: ArrayBuffer | null = null

/** The serving thread's sink, from here: each batch is posted (copied: it stays here for a retry). */
const relaySink: ClickSink = {
  insert: (batch, token, label) =>
    new Promise<void>((resolve, reject) => {
      const id = ++relayId
      relayed.set(id, { resolve, reject })
      // A buffer of its own (never a view of the batcher's), moved to the serving thread without a
      // further copy and moved back with the answer; the chunks stay here for a retry.
      const size = batch.chunks.reduce((n, c) => n + (typeof c === 'string' ? Buffer.byteLength(c) : c.byteLength), 0)
      const buffer = spare && spare.byteLength >= size ? spare : new ArrayBuffer(Math.max(size, (spare?.byteLength ?? 0) * 2))
      spare = null
      const bytes = new Uint8Array(buffer, 0, size)
      let at = 0
      for (const chunk of batch.chunks) {
        const part = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
        bytes.set(part, at)
        at += part.byteLength
      }
      const message: WorkerReply = { type: 'insert', id, batch: { chunks: [bytes], rows: batch.rows }, token, label }
      self.postMessage(message, [buffer])
    }),
}

self.onmessage = async (message: MessageEvent<WorkerRequest>) => {
  const request = message.data
  if (request.type === 'segment') {
    batcher!.add(request.segment)
    return
  }
  if (request.type === 'inserted' || request.type === 'insertFailed') {
    if (request.buffer && request.buffer.byteLength >= (spare?.byteLength ?? 0)) spare = request.buffer
    const waiter = relayed.get(request.id)
    relayed.delete(request.id)
    if (request.type === 'inserted') waiter?.resolve()
    else waiter?.reject(new Error(request.message))
    return
  }
  if (request.type === 'init') {
    // Redirects go first when this thread and the serving one want the same core (core/threads.ts).
    lowerThisThread()
    try {
      // The batcher reports outages itself (once, and on recovery); the client stays quiet.
      const sink = request.clickhouseUrl === null ? relaySink : clickhouseSink(createClient({ url: request.clickhouseUrl, request_timeout: 10_000, log: { level: ClickHouseLogLevel.OFF } }))
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
