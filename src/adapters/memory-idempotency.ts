// In-process Idempotency-Key records for the embedded default. JavaScript runs one call at a time, so a
// claim needs no lock; the records mimic the Redis adapter: a lease while in flight, an expiry always.
import type { IdempotencyClaim, IdempotencyStore, StoredResponse } from './ports'

type Entry = { state: 'in_flight'; token: string; fingerprint: string; expiresAtMs: number } | { state: 'done'; fingerprint: string; response: StoredResponse; expiresAtMs: number }

/** Expired records nobody asks for again are swept at most this often, so the Map cannot grow without bound. */
const SWEEP_INTERVAL_MS = 10_000

export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly entries = new Map<string, Entry>()
  private nextSweepMs = Date.now() + SWEEP_INTERVAL_MS

  async claim(key: string, fingerprint: string, leaseMs: number): Promise<IdempotencyClaim> {
    assertMs('leaseMs', leaseMs)
    const now = Date.now()
    this.sweep(now)
    const entry = this.live(key, now)
    if (entry?.state === 'done') return { state: 'done', fingerprint: entry.fingerprint, response: structuredClone(entry.response) }
    if (entry) return { state: 'in_flight', fingerprint: entry.fingerprint }
    const token = claimToken(fingerprint)
    this.entries.set(key, { state: 'in_flight', token, fingerprint, expiresAtMs: now + leaseMs })
    return { state: 'claimed', token }
  }

  async complete(key: string, token: string, response: StoredResponse, ttlMs: number): Promise<boolean> {
    assertMs('ttlMs', ttlMs)
    const now = Date.now()
    const entry = this.live(key, now)
    if (entry && (entry.state !== 'in_flight' || entry.token !== token)) return false
    this.entries.set(key, { state: 'done', fingerprint: tokenFingerprint(token), response: structuredClone(response), expiresAtMs: now + ttlMs })
    return true
  }

  async release(key: string, token: string): Promise<void> {
    const entry = this.entries.get(key)
    if (entry?.state === 'in_flight' && entry.token === token) this.entries.delete(key)
  }

  /** Records currently held, expired or not; lets the contract test see that expired ones are purged. */
  get size(): number {
    return this.entries.size
  }

  async close(): Promise<void> {
    this.entries.clear()
  }

  private live(key: string, now: number): Entry | undefined {
    const entry = this.entries.get(key)
    if (!entry) return undefined
    if (entry.expiresAtMs > now) return entry
    this.entries.delete(key)
    return undefined
  }

  private sweep(now: number): void {
    if (now < this.nextSweepMs) return
    this.nextSweepMs = now + SWEEP_INTERVAL_MS
    for (const [key, entry] of this.entries) if (entry.expiresAtMs <= now) this.entries.delete(key)
  }
}

/**
 * A claim's token: random, and carrying the claim's fingerprint, so complete() can still store the
 * response after the lease ran out and the in-flight record is gone. Shared by both adapters.
 */
export function claimToken(fingerprint: string): string {
  if (fingerprint.includes('|')) throw new RangeError('fingerprint must not contain "|"')
  return `${crypto.randomUUID()}|${fingerprint}`
}

export function tokenFingerprint(token: string): string {
  const bar = token.indexOf('|')
  if (bar < 0) throw new RangeError('not a claim token')
  return token.slice(bar + 1)
}

/** Same rule as Redis `SET ... PX`: a whole number of milliseconds, at least 1. */
export function assertMs(name: string, ms: number): void {
  if (!Number.isInteger(ms) || ms < 1) throw new RangeError(`${name} must be a whole number >= 1, got ${ms}`)
}
