// A set of host names held as three flat typed arrays rather than a Set of strings: the names' bytes end
// to end, where each starts, and an open-addressing hash table of entry numbers (linear probing, at most
// half full). About 20 bytes of name + 4 + 8 a host, where a JS string and its Set entry take several
// times that (bench/blocklist.ts measures both); and a lookup allocates nothing.
//
// The hash (FNV-1a, 32 bits) runs over a name from its last character to its first, so one pass over a
// destination's host yields the hash of every parent domain on the way: matchDomain probes the host and
// each parent that still has a dot (`a.b.evil.example` → `evil.example`, `b.evil.example`, the host),
// never a bare top-level label, so an entry `example` matches only the host `example`.
//
// Names are ASCII (listHost's output: punycode, lower-case); the table is built once and never changed.
import { MAX_NAME_LENGTH } from './normalize'
import type { Slices } from './slices'

const FNV_OFFSET = 0x811c9dc5
const FNV_PRIME = 0x01000193
const DOT = 46

export class HostTable {
  static readonly EMPTY = new HostTable(new Uint8Array(0), new Uint32Array(1), new Int32Array(8), 0)

  private readonly mask: number

  constructor(
    private readonly bytes: Uint8Array,
    /** Entry i is bytes[starts[i], starts[i + 1]). */
    private readonly starts: Uint32Array,
    /** Entry number + 1 in each slot; 0 is an empty slot. Its length is a power of two. */
    private readonly slots: Int32Array,
    /** Distinct names. */
    readonly size: number,
  ) {
    this.mask = slots.length - 1
  }

  /** The name of entry i (0 ≤ i < size). */
  entry(i: number): string {
    return String.fromCharCode(...this.bytes.subarray(this.starts[i]!, this.starts[i + 1]!))
  }

  /** Whether `host` is an entry, exactly. */
  has(host: string): boolean {
    let h = FNV_OFFSET
    for (let i = host.length - 1; i >= 0; i--) h = Math.imul(h ^ host.charCodeAt(i), FNV_PRIME)
    return this.find(host, 0, h) >= 0
  }

  /** An entry that is `host` or a parent domain of it with a dot in it (the shortest first), or -1. */
  matchDomain(host: string): number {
    let h = FNV_OFFSET
    let dots = 0
    for (let i = host.length - 1; i >= 0; i--) {
      const c = host.charCodeAt(i)
      // host.slice(i + 1) is a whole parent domain here; it has a dot when one was passed already.
      if (c === DOT && dots++ > 0) {
        const at = this.find(host, i + 1, h)
        if (at >= 0) return at
      }
      h = Math.imul(h ^ c, FNV_PRIME)
    }
    return this.find(host, 0, h)
  }

  /** Whether entry i of `other` is an entry here too (no string made). */
  hasEntryOf(other: HostTable, i: number): boolean {
    const src = other.bytes
    const start = other.starts[i]!
    const end = other.starts[i + 1]!
    let h = FNV_OFFSET
    for (let k = end - 1; k >= start; k--) h = Math.imul(h ^ src[k]!, FNV_PRIME)
    const length = end - start
    for (let slot = h & this.mask; ; slot = (slot + 1) & this.mask) {
      const e = this.slots[slot]! - 1
      if (e < 0) return false
      const s = this.starts[e]!
      if (this.starts[e + 1]! - s !== length) continue
      let k = 0
      while (k < length && this.bytes[s + k] === src[start + k]) k++
      if (k === length) return true
    }
  }

  /** Bytes held by the arrays. */
  get byteLength(): number {
    return this.bytes.byteLength + this.starts.byteLength + this.slots.byteLength
  }

  /** The entry equal to host.slice(from) whose reversed hash is h, or -1. */
  private find(host: string, from: number, h: number): number {
    const length = host.length - from
    for (let slot = h & this.mask; ; slot = (slot + 1) & this.mask) {
      const e = this.slots[slot]! - 1
      if (e < 0) return -1
      const s = this.starts[e]!
      if (this.starts[e + 1]! - s !== length) continue
      let k = 0
      while (k < length && this.bytes[s + k] === host.charCodeAt(from + k)) k++
      if (k === length) return e
    }
  }
}

// The builder keeps names in fixed blocks that are added as they fill, never in one array that grows
// by copying: on a VM a page of fresh memory costs tens of µs at its first touch, so copying a 16 MB
// array into a new 32 MB one holds the thread for a tenth of a second. A block's pages, like the final
// arrays', are first touched a few at a time, inside the slices.
const BLOCK_BITS = 18
const BLOCK_BYTES = 1 << BLOCK_BITS // 256 KB of names
const ENTRY_BITS = 16
const ENTRIES_PER_BLOCK = 1 << ENTRY_BITS // 64 Ki names' offsets

/** Collects names (duplicates allowed) in blocks; build() makes the table. */
export class HostTableBuilder {
  private readonly blocks: Uint8Array[] = []
  /** Entry i starts at offsets[i >> ENTRY_BITS][i & mask]: block (high bits) and place in it; lengths alike. */
  private readonly offsets: Uint32Array[] = []
  private readonly lengths: Uint8Array[] = []
  private used = BLOCK_BYTES
  private total = 0
  private count = 0

  /** Adds an ASCII name (listHost's output), or text[start, end) when that is one; false when it is too long. */
  add(text: string, start = 0, end = text.length): boolean {
    const length = end - start
    if (length > MAX_NAME_LENGTH) return false
    if (this.used + length > BLOCK_BYTES) {
      this.blocks.push(new Uint8Array(BLOCK_BYTES))
      this.used = 0
    }
    const index = this.count & (ENTRIES_PER_BLOCK - 1)
    if (index === 0) {
      this.offsets.push(new Uint32Array(ENTRIES_PER_BLOCK))
      this.lengths.push(new Uint8Array(ENTRIES_PER_BLOCK))
    }
    const block = this.blocks[this.blocks.length - 1]!
    this.offsets[this.offsets.length - 1]![index] = ((this.blocks.length - 1) << BLOCK_BITS) | this.used
    this.lengths[this.lengths.length - 1]![index] = length
    for (let i = start; i < end; i++) block[this.used++] = text.charCodeAt(i)
    this.total += length
    this.count++
    return true
  }

  /** The table of the distinct names, built in slices. The builder is spent afterwards. */
  async build(slices: Slices): Promise<HostTable> {
    const count = this.count
    if (count === 0) return HostTable.EMPTY
    let capacity = 8
    while (capacity < count * 2) capacity *= 2
    const slots = new Int32Array(capacity)
    const mask = capacity - 1
    const bytes = new Uint8Array(this.total)
    const starts = new Uint32Array(count + 1)
    const { blocks, offsets, lengths } = this
    let size = 0
    let used = 0
    /** Inserts names from `from` on until the slice is used up; returns where it stopped. */
    const insert = (from: number): number => {
      for (let i = from; i < count; i++) {
        if (slices.due()) return i
        const place = offsets[i >>> ENTRY_BITS]![i & (ENTRIES_PER_BLOCK - 1)]!
        const length = lengths[i >>> ENTRY_BITS]![i & (ENTRIES_PER_BLOCK - 1)]!
        const src = blocks[place >>> BLOCK_BITS]!
        const start = place & (BLOCK_BYTES - 1)
        let h = FNV_OFFSET
        for (let k = start + length - 1; k >= start; k--) h = Math.imul(h ^ src[k]!, FNV_PRIME)
        let slot = h & mask
        let duplicate = false
        for (; slots[slot] !== 0; slot = (slot + 1) & mask) {
          const e = slots[slot]! - 1
          const s = starts[e]!
          if (starts[e + 1]! - s !== length) continue
          let k = 0
          while (k < length && bytes[s + k] === src[start + k]) k++
          if (k === length) {
            duplicate = true
            break
          }
        }
        if (duplicate) continue
        for (let k = 0; k < length; k++) bytes[used + k] = src[start + k]!
        starts[size] = used
        used += length
        starts[size + 1] = used
        slots[slot] = ++size
      }
      return count
    }
    await slices.run(count, insert)
    this.blocks.length = 0
    this.offsets.length = 0
    this.lengths.length = 0
    // subarray, not slice: a copy of the whole would touch as many fresh pages again in one go.
    return new HostTable(bytes.subarray(0, used), starts.subarray(0, size + 1), slots, size)
  }
}
