// A small LRU with per-entry expiry, built on Map's insertion order: a hit re-inserts the key so the
// oldest entry is always first. The redirector's L1: bounded in entries and in age.

export class Lru<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>()

  constructor(private readonly maxEntries: number) {}

  get(key: string, now: number): V | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    if (entry.expiresAt <= now) {
      this.entries.delete(key)
      return undefined
    }
    this.entries.delete(key)
    this.entries.set(key, entry)
    return entry.value
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
