// In-process fixed-window limiter for the embedded default. JavaScript runs one hit at a time, so the
// count needs no lock; "across processes" means nothing here because there is only one process.
import type { LimitResult, Limiter } from './ports'

type Window = { count: number; endsAtMs: number }

/** Windows that ended are swept at most this often, so keys seen once (an IP, say) do not pile up. */
const SWEEP_INTERVAL_MS = 10_000

export class MemoryLimiter implements Limiter {
  private readonly windows = new Map<string, Window>()
  private nextSweepMs = Date.now() + SWEEP_INTERVAL_MS

  async hit(key: string, limit: number, windowMs: number): Promise<LimitResult> {
    const now = Date.now()
    this.sweep(now)
    let window = this.windows.get(key)
    if (!window || window.endsAtMs <= now) {
      window = { count: 0, endsAtMs: now + windowMs }
      this.windows.set(key, window)
    }
    window.count++
    return limitResult(window.count, limit, window.endsAtMs)
  }

  /** Windows currently held; lets the contract test see that ended windows are purged. */
  get size(): number {
    return this.windows.size
  }

  async close(): Promise<void> {
    this.windows.clear()
  }

  private sweep(now: number): void {
    if (now < this.nextSweepMs) return
    this.nextSweepMs = now + SWEEP_INTERVAL_MS
    for (const [key, window] of this.windows) if (window.endsAtMs <= now) this.windows.delete(key)
  }
}

/** Shared by both limiters so they answer alike: count is this hit's position in its window. */
export function limitResult(count: number, limit: number, endsAtMs: number): LimitResult {
  return {
    allowed: count <= limit,
    limit,
    remaining: Math.max(0, limit - count),
    // Rounded up: a client that waits until resetAt must find the window over, never one ms short.
    resetAt: Math.ceil(endsAtMs / 1000),
  }
}
