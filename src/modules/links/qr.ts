// QR codes of short links (GET /api/v1/links/{alias}/qr): the link's short_url as an SVG or a PNG, drawn
// on the render threads (qr-pool.ts) and kept by content (qr-cache.ts). The image depends only on what it
// encodes and how it is drawn, so its ETag is a hash of exactly that: a client revalidates with
// If-None-Match and gets a 304 without a body.
import { createHash } from 'node:crypto'
import { t } from 'elysia'
import { ApiError } from '../../plugins/errors'
import { DRAWING_VERSION, QR_FORMATS, type QrFormat } from './qr-draw'
import { Domain } from './model'

export const QR_MIN_SIZE = 64
export const QR_MAX_SIZE = 2048
/**
 * The largest PNG: 1024 px prints 8.7 cm wide at 300 dpi (the dashboard's download asks for it), and an
 * SVG, which scales without loss, serves anything bigger. A PNG costs its area: 2048 px took 4 times as
 * long as 1024 (some 900 ms here).
 */
export const QR_PNG_MAX_SIZE = 1024
export const QR_DEFAULT_SIZE = 256
/**
 * How long a client may reuse an image without asking: a short URL never changes for its alias, but the
 * link may be deleted, and a cached code should not outlive that by long.
 */
export const QR_MAX_AGE_SECONDS = 300

export const QrQuery = t.Object({
  // A union of literals, not t.UnionEnum: the default is applied by the route.
  format: t.Optional(
    t.Union(
      QR_FORMATS.map((f) => t.Literal(f)),
      { description: 'svg (default) or png', examples: ['png'] },
    ),
  ),
  size: t.Optional(
    t.Integer({
      minimum: QR_MIN_SIZE,
      maximum: QR_MAX_SIZE,
      description: `Width and height in pixels, ${QR_MIN_SIZE}-${QR_MAX_SIZE} for an SVG, ${QR_MIN_SIZE}-${QR_PNG_MAX_SIZE} for a PNG (default ${QR_DEFAULT_SIZE}). An SVG has exactly this size; a PNG the largest grid of whole-pixel modules that fits (never larger, unless one pixel a module does not fit)`,
    }),
  ),
  domain: t.Optional(Domain),
})

/** A strong ETag: the same text, format and size always draw the same bytes. */
export function qrEtag(text: string, format: QrFormat, size: number): string {
  const digest = createHash('sha256').update(`${DRAWING_VERSION}\n${format}\n${size}\n${text}`).digest('base64url')
  return `"${digest.slice(0, 32)}"`
}

/** If-None-Match (RFC 9110 13.1.2): `*` or any listed tag, compared weakly, matches. */
export function noneMatch(header: string | null, etag: string): boolean {
  if (header === null) return false
  return header.split(',').some((raw) => {
    const tag = raw.trim()
    return tag === '*' || tag.replace(/^W\//, '') === etag
  })
}

/** The size bound the query schema cannot express, as it depends on the format: a PNG of at most QR_PNG_MAX_SIZE. */
export function checkQrSize(format: QrFormat, size: number): void {
  if (format === 'png' && size > QR_PNG_MAX_SIZE) {
    throw new ApiError('VALIDATION_FAILED', `query.size: a PNG is at most ${QR_PNG_MAX_SIZE} pixels (${QR_PNG_MAX_SIZE} prints 8.7 cm at 300 dpi); ask for format=svg, which scales to any size.`)
  }
}

/** The headers of a QR answer, 200 or 304 alike (RFC 9110 15.4.5: a 304 repeats ETag and Cache-Control). */
export function qrHeaders(etag: string): Record<string, string> {
  return {
    etag,
    'cache-control': `private, max-age=${QR_MAX_AGE_SECONDS}`,
    // One URL, several callers in one browser: the answer depends on whose token or session asked (404 for others).
    vary: 'Authorization, Cookie',
  }
}
