// Rendered QR images by content: the key is the image's strong ETag (qr.ts qrEtag: the text, format,
// size and drawing version), so one key is always the same bytes and nothing ever needs invalidating; a
// deleted link's code simply stops being asked for and ages out. Bounded in bytes, least recently used
// first out. Concurrent requests for a key missing from the cache share one render (single flight), so
// a link and size is drawn once per process however many ask at the same moment.
import { singleFlight } from '../../lib/single-flight'
import type { QrBody, QrJob } from './qr-draw'
import { QrPool } from './qr-pool'

/** 4 MiB: a 1024 px PNG is about 7 KB and a 2048 px SVG under 2 KB, so some 600 of the largest images. */
export const QR_CACHE_BYTES = 4 * 1024 * 1024

/** A Map bounded in bytes; a hit moves the entry to the back, a set past the bound drops from the front. */
export class ByteLru<V> {
  private readonly entries = new Map<string, { value: V; bytes: number }>()
  private used = 0

  constructor(private readonly maxBytes: number) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    this.entries.delete(key)
    this.entries.set(key, entry)
    return entry.value
  }

  /** An entry larger than the whole bound is not kept. */
  set(key: string, value: V, bytes: number): void {
    this.delete(key)
    if (bytes > this.maxBytes) return
    this.entries.set(key, { value, bytes })
    this.used += bytes
    for (const [oldest, entry] of this.entries) {
      if (this.used <= this.maxBytes) break
      this.entries.delete(oldest)
      this.used -= entry.bytes
    }
  }

  delete(key: string): void {
    const entry = this.entries.get(key)
    if (entry === undefined) return
    this.entries.delete(key)
    this.used -= entry.bytes
  }

  get bytes(): number {
    return this.used
  }

  get size(): number {
    return this.entries.size
  }
}

export interface QrImages {
  /** The image of `job`, whose ETag is `etag`: from the cache, from a render already running, or rendered now. */
  image(etag: string, job: QrJob): Promise<QrBody>
}

const bodyBytes = (body: QrBody) => (typeof body === 'string' ? body.length : body.byteLength)

/** Images from `render` (a pool's), cached by ETag up to maxBytes. */
export function qrImages(render: (job: QrJob) => Promise<QrBody>, maxBytes = QR_CACHE_BYTES): QrImages {
  const cache = new ByteLru<QrBody>(maxBytes)
  const flights = singleFlight<QrBody>()
  return {
    image(etag, job) {
      const cached = cache.get(etag)
      if (cached !== undefined) return Promise.resolve(cached)
      return flights(etag, async () => {
        const body = await render(job)
        cache.set(etag, body, bodyBytes(body))
        return body
      })
    },
  }
}

let processImages: QrImages | undefined

/**
 * The process's images: one pool and one cache for every app in it, since what they share is the
 * process's cores and memory. Made on the first QR request; the pool starts its threads on its first render.
 */
export function processQrImages(): QrImages {
  if (!processImages) {
    const pool = new QrPool()
    processImages = qrImages((job) => pool.render(job))
  }
  return processImages
}
