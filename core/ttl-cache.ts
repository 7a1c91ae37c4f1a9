// The redirector's L1: a Map bounded in entries and in age. A hit does not reorder (no LRU
// bookkeeping on the hot path); when full, the oldest insertion goes first. Entries live seconds, so
// recency matters little next to the cost of touching the Map twice per hit.

export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>()

  constructor(private readonly maxEntries: number) {}

  get(key: string, now: number): V | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    if (entry.expiresAt <= now) {
      this.entries.delete(key)
      return undefined
    }
    return entry.value
  }

  /** The entry as stored, expired or not (nothing is deleted): for a reader that serves it stale. */
  entry(key: string): { readonly value: V; readonly expiresAt: number } | undefined {
    return this.entries.get(key)
  }

  set(key: string, value: V, ttlMs: number, now: number): void {
    this.entries.delete(key)
    this.entries.set(key, { value, expiresAt: now + ttlMs })
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value
      if (oldest !== undefined) this.entries.delete(oldest)
    }
  }

  delete(key: string): void {
    this.entries.delete(key)
  }

  clear(): void {
    this.entries.clear()
  }

  get size(): number {
    return this.entries.size
  }
}
