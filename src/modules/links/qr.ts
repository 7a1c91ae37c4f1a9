// QR codes of short links (GET /api/v1/links/{alias}/qr): the link's short_url as an SVG or a PNG,
// drawn by the `qrcode` package. The image depends only on what it encodes and how it is drawn, so its
// ETag is a hash of exactly that: a client revalidates with If-None-Match and gets a 304 without a body.
import { createHash } from 'node:crypto'
import QRCode from 'qrcode'
import { t } from 'elysia'
import { Domain } from './model'

export const QR_FORMATS = ['svg', 'png'] as const
export type QrFormat = (typeof QR_FORMATS)[number]
export const QR_MIN_SIZE = 64
export const QR_MAX_SIZE = 2048
export const QR_DEFAULT_SIZE = 256
/**
 * How long a client may reuse an image without asking: a short URL never changes for its alias, but the
 * link may be deleted, and a cached code should not outlive that by long.
 */
export const QR_MAX_AGE_SECONDS = 300
/** Error correction M (15% of the symbol may be damaged); a change of drawing options changes the ETag. */
const DRAWING = { errorCorrectionLevel: 'M', margin: 4 } as const
const DRAWING_VERSION = 'qr1-M-m4'

const CONTENT_TYPES: Record<QrFormat, string> = { svg: 'image/svg+xml', png: 'image/png' }

export const QrQuery = t.Object({
  // A union of literals, not t.UnionEnum: the default is applied by the route.
  format: t.Optional(t.Union(QR_FORMATS.map((f) => t.Literal(f)), { description: 'svg (default) or png', examples: ['png'] })),
  size: t.Optional(
    t.Integer({
      minimum: QR_MIN_SIZE,
      maximum: QR_MAX_SIZE,
      description: `Width and height in pixels, ${QR_MIN_SIZE}-${QR_MAX_SIZE} (default ${QR_DEFAULT_SIZE}). An SVG has exactly this size; a PNG the largest grid of whole-pixel modules that fits (never larger, unless one pixel a module does not fit)`,
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

/**
 * Pixels per module of a PNG: whole pixels only. Stretching the grid to exactly `size` makes modules of
 * uneven widths, which decoders misread (jsQR failed on a 64 px code so drawn); so the PNG is the largest
 * whole-pixel grid that fits in `size`, and 1 px a module when even that does not fit.
 */
function pngScale(text: string, size: number): number {
  const modules = QRCode.create(text, { errorCorrectionLevel: DRAWING.errorCorrectionLevel }).modules.size + 2 * DRAWING.margin
  return Math.max(1, Math.floor(size / modules))
}

export async function drawQr(text: string, format: QrFormat, size: number): Promise<{ body: string | Uint8Array; contentType: string }> {
  // An SVG is drawn in modules and scaled by the viewer: it takes the exact size.
  const body =
    format === 'svg'
      ? await QRCode.toString(text, { ...DRAWING, type: 'svg', width: size })
      : new Uint8Array(await QRCode.toBuffer(text, { ...DRAWING, type: 'png', scale: pngScale(text, size) }))
  return { body, contentType: CONTENT_TYPES[format] }
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
