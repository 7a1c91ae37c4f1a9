// In-process Kv for the embedded default: one process runs the API and the redirector, so a Map is the
// whole shared store. It mimics what callers may rely on from Redis: expiry, and pub/sub delivered
// asynchronously (a publisher never runs subscriber code inside its own call).
import type { Kv } from './ports'

type Entry = { value: string; expiresAtMs: number }
type Listener = (message: string) => void

/** Expired keys nobody reads again are swept at most this often, so the Map cannot grow without bound. */
const SWEEP_INTERVAL_MS = 10_000

export class MemoryKv implements Kv {
  private readonly entries = new Map<string, Entry>()
  private readonly channels = new Map<string, Set<Listener>>()
  private nextSweepMs = Date.now() + SWEEP_INTERVAL_MS

  async get(key: string): Promise<string | null> {
    const entry = this.entries.get(key)
    if (!entry) return null
    if (entry.expiresAtMs <= Date.now()) {
      this.entries.delete(key)
      return null
    }
    return entry.value
  }

  async set(key: string, value: string, ttlSeconds: number): Promise<void> {
    assertTtl(ttlSeconds)
    const now = Date.now()
    this.sweep(now)
    this.entries.set(key, { value, expiresAtMs: now + ttlSeconds * 1000 })
  }

  async del(key: string): Promise<void> {
    this.entries.delete(key)
  }

  async publish(channel: string, message: string): Promise<void> {
    const listeners = this.channels.get(channel)
    if (!listeners) return
    for (const listener of listeners) {
      // Checked again at delivery: a subscriber that has unsubscribed meanwhile hears nothing more.
      queueMicrotask(() => {
        if (this.channels.get(channel)?.has(listener)) listener(message)
      })
    }
  }

  // onReset is never called: an in-process channel cannot drop a message.
  async subscribe(channel: string, onMessage: Listener): Promise<() => Promise<void>> {
    // Wrapped so the same function subscribed twice is two subscriptions, as with Redis listeners.
    const listener: Listener = (message) => onMessage(message)
    let listeners = this.channels.get(channel)
    if (!listeners) this.channels.set(channel, (listeners = new Set()))
    listeners.add(listener)
    return async () => {
      listeners.delete(listener)
      if (listeners.size === 0 && this.channels.get(channel) === listeners) this.channels.delete(channel)
    }
  }

  async close(): Promise<void> {
    this.channels.clear()
  }

  private sweep(now: number): void {
    if (now < this.nextSweepMs) return
    this.nextSweepMs = now + SWEEP_INTERVAL_MS
    for (const [key, entry] of this.entries) if (entry.expiresAtMs <= now) this.entries.delete(key)
  }
}

/** Same rule as Redis `SET ... EX`: a whole number of seconds, at least 1 (Redis rejects 0 and fractions). */
export function assertTtl(ttlSeconds: number): void {
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1) {
    throw new RangeError(`ttlSeconds must be a whole number >= 1, got ${ttlSeconds}`)
  }
}
