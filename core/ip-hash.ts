// The client address as stored anywhere (clicks, Agent audit events): a keyed SHA-256 (128 bits, hex),
// stable per deployment (IP_HASH_SECRET) so unique visitors can be counted, never the address itself.
// Memoized: the same few addresses come back on a hot path; the memo is bounded and simply emptied.

export class IpHasher {
  private readonly memo = new Map<string, string>()

  constructor(
    private readonly secret: string,
    private readonly memoSize = 50_000,
  ) {}

  /** The hash of an address; empty for no address. */
  hash(ip: string): string {
    if (ip === '') return ''
    let hash = this.memo.get(ip)
    if (hash === undefined) {
      hash = this.digest(ip)
      if (this.memo.size >= this.memoSize) this.memo.clear()
      this.memo.set(ip, hash)
    }
    return hash
  }

  /** The same hash computed afresh, for a caller that keeps its own memo in front. */
  digest(ip: string): string {
    return ip === '' ? '' : new Bun.CryptoHasher('sha256', this.secret).update(ip).digest('hex').slice(0, 32)
  }
}
