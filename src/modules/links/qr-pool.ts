// QR codes are drawn on a fixed pool of worker threads (qr-worker.ts), never on the thread that answers
// requests: a 1024 px PNG is 100-450 ms of CPU, and on that thread it would hold every other request
// (health checks and, in the one-process product, redirects) for as long. Renders beyond the threads wait in a
// bounded queue; one more is refused at once with 429 QR_BUSY and a Retry-After, and so is one that has
// waited maxWaitMs without reaching a thread, so a burst costs memory and time in proportion to the
// bounds, never more.
//
// A render is bounded too: a thread that does not answer within renderTimeoutMs, or that dies, fails its
// render with an error (the route answers 500 INTERNAL_ERROR) and is replaced by a fresh thread when the
// next render needs one. Threads start on the first render, not at boot, and keep the process alive only
// while they render.
import { availableParallelism } from 'node:os'
import { ApiError } from '../../plugins/errors'
import type { QrBody, QrJob, QrReply, QrRequest } from './qr-draw'

/**
 * Render threads: one per core beyond the first, at most two. The thread that answers requests keeps a
 * core of its own (on this 2-core machine the pool is one thread, and the serving thread the other core).
 * One thread draws some six 1024 px PNGs a second here (bench/qr.ts), two twice that: far more than an
 * account's rate limit lets it ask for, and the cache answers every image asked for again.
 */
export const QR_WORKERS = Math.max(1, Math.min(2, availableParallelism() - 1))
/** Renders that may wait for a thread: 16 waiting 1024 px PNGs are about 2.5 s of one thread's work. */
export const QR_QUEUE_BOUND = 16
/**
 * The longest a render may wait for a thread, and then take on it. Together they stay under Bun.serve's
 * 10 s idle timeout, which would otherwise close the connection without an answer. A render takes well
 * under a second (some 700 ms for a 1024 px PNG on this machine under a full load of tests): only a
 * stuck thread reaches the timeout, and only a machine far behind its work the wait.
 */
export const QR_MAX_WAIT_MS = 5_000
export const QR_RENDER_TIMEOUT_MS = 4_000
/** What Retry-After assumes a render takes before any has been timed. */
const FIRST_GUESS_MS = 200

export interface QrPoolOptions {
  workers?: number
  queueBound?: number
  maxWaitMs?: number
  renderTimeoutMs?: number
  /** The worker script; the tests use one that holds its renders until they release them. */
  workerUrl?: string
}

export interface QrPoolStats {
  /** Renders on a thread now. */
  rendering: number
  /** Renders waiting for a thread now. */
  queued: number
  rendered: number
  failed: number
  /** Renders refused with 429 QR_BUSY because the queue was full. */
  refused: number
  /** Renders answered 429 QR_BUSY because they waited maxWaitMs without reaching a thread. */
  expired: number
  /** Threads that died or timed out, and were let go (a new one starts on the next render). */
  replaced: number
}

interface Waiting {
  job: QrJob
  resolve: (body: QrBody) => void
  reject: (error: Error) => void
  /** Set while it waits in the queue: its maxWaitMs. */
  timer?: ReturnType<typeof setTimeout>
}

interface Running extends Waiting {
  id: number
  startedAt: number
  timer: ReturnType<typeof setTimeout>
}

/** One thread of the pool: started when a render needs it, let go when it dies. */
interface Slot {
  worker: Worker | null
  running: Running | null
}

export class QrPool {
  private readonly slots: Slot[]
  private readonly waiting: Waiting[] = []
  private readonly queueBound: number
  private readonly maxWaitMs: number
  private readonly renderTimeoutMs: number
  private readonly workerUrl: string
  private nextId = 1
  private meanRenderMs = FIRST_GUESS_MS
  private closed = false
  private readonly counts = { rendered: 0, failed: 0, refused: 0, expired: 0, replaced: 0 }

  constructor(options: QrPoolOptions = {}) {
    this.slots = Array.from({ length: options.workers ?? QR_WORKERS }, () => ({ worker: null, running: null }))
    this.queueBound = options.queueBound ?? QR_QUEUE_BOUND
    this.maxWaitMs = options.maxWaitMs ?? QR_MAX_WAIT_MS
    this.renderTimeoutMs = options.renderTimeoutMs ?? QR_RENDER_TIMEOUT_MS
    this.workerUrl = options.workerUrl ?? new URL('./qr-worker.ts', import.meta.url).href
  }

  /** Draws the image on a render thread; rejects with ApiError QR_BUSY at once when the queue is full. */
  render(job: QrJob): Promise<QrBody> {
    return new Promise<QrBody>((resolve, reject) => {
      if (this.closed) return reject(new Error('QR render pool: closed'))
      const waiting: Waiting = { job, resolve, reject }
      const free = this.slots.find((slot) => slot.running === null)
      if (free) return this.start(free, waiting)
      if (this.waiting.length >= this.queueBound) {
        this.counts.refused++
        return reject(this.busy())
      }
      waiting.timer = setTimeout(() => this.expire(waiting), this.maxWaitMs)
      this.waiting.push(waiting)
    })
  }

  stats(): QrPoolStats {
    return { rendering: this.slots.filter((slot) => slot.running !== null).length, queued: this.waiting.length, ...this.counts }
  }

  /** Stops every thread; renders running or waiting fail. */
  async close(): Promise<void> {
    this.closed = true
    const stopped = new Error('QR render pool: closed')
    for (const waiting of this.waiting.splice(0)) {
      clearTimeout(waiting.timer)
      waiting.reject(stopped)
    }
    for (const slot of this.slots) if (slot.worker) this.letGo(slot, slot.worker, stopped)
  }

  /** 429 QR_BUSY, with Retry-After the time the queue takes to drain by the recent renders' mean. */
  private busy(): ApiError {
    const drainMs = ((this.waiting.length + this.slots.length) * this.meanRenderMs) / this.slots.length
    return new ApiError('QR_BUSY', undefined, { retryAfter: Math.max(1, Math.ceil(drainMs / 1000)) })
  }

  /** A render that waited maxWaitMs leaves the queue with 429 QR_BUSY. */
  private expire(waiting: Waiting): void {
    const at = this.waiting.indexOf(waiting)
    if (at === -1) return
    this.waiting.splice(at, 1)
    this.counts.expired++
    waiting.reject(this.busy())
  }

  private start(slot: Slot, waiting: Waiting): void {
    clearTimeout(waiting.timer)
    const worker = slot.worker ?? this.spawn(slot)
    const id = this.nextId++
    const timer = setTimeout(() => this.letGo(slot, worker, new Error(`QR render: no answer within ${this.renderTimeoutMs} ms; the thread was replaced`)), this.renderTimeoutMs)
    slot.running = { ...waiting, id, startedAt: performance.now(), timer }
    // Held while it renders: a pending render keeps the process alive, an idle pool does not.
    worker.ref()
    worker.postMessage({ ...waiting.job, id } satisfies QrRequest)
  }

  private spawn(slot: Slot): Worker {
    const worker = new Worker(this.workerUrl)
    slot.worker = worker
    worker.onmessage = (event: MessageEvent<QrReply>) => this.answered(slot, worker, event.data)
    worker.onerror = (event) => this.letGo(slot, worker, new Error(`QR render thread failed: ${event.message}`))
    worker.addEventListener('close', () => this.letGo(slot, worker, new Error('QR render thread stopped')))
    return worker
  }

  private answered(slot: Slot, worker: Worker, reply: QrReply): void {
    const running = slot.running
    if (slot.worker !== worker || running === null || running.id !== reply.id) return
    clearTimeout(running.timer)
    slot.running = null
    worker.unref()
    if (reply.ok) {
      this.counts.rendered++
      // A moving mean of the last ten or so renders, for Retry-After.
      this.meanRenderMs += (performance.now() - running.startedAt - this.meanRenderMs) / 10
      running.resolve(reply.body)
    } else {
      this.counts.failed++
      running.reject(new Error(`QR render failed: ${reply.message}`))
    }
    this.next(slot)
  }

  /** The thread died, timed out or the pool closed: it is stopped and forgotten, its render fails. */
  private letGo(slot: Slot, worker: Worker, error: Error): void {
    if (slot.worker !== worker) return
    slot.worker = null
    worker.terminate()
    if (!this.closed) this.counts.replaced++
    const running = slot.running
    slot.running = null
    if (running) {
      clearTimeout(running.timer)
      this.counts.failed++
      running.reject(error)
    }
    this.next(slot)
  }

  private next(slot: Slot): void {
    const waiting = this.closed ? undefined : this.waiting.shift()
    if (waiting) this.start(slot, waiting)
  }
}
