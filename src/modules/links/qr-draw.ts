// How a QR code is drawn (the `qrcode` package, error correction M, a quiet zone of four modules) and
// the messages a render crosses threads in. Only the render threads (qr-worker.ts) call drawQr; the
// serving thread reads the constants here (the drawing's version is part of every image's ETag) and
// hands renders to the pool (qr-pool.ts).
import QRCode from 'qrcode'

export const QR_FORMATS = ['svg', 'png'] as const
export type QrFormat = (typeof QR_FORMATS)[number]

/** Error correction M (15% of the symbol may be damaged); a change of drawing options changes the version. */
const DRAWING = { errorCorrectionLevel: 'M', margin: 4 } as const
/** In every ETag (qr.ts qrEtag): bump it with any change to how an image is drawn. */
export const DRAWING_VERSION = 'qr1-M-m4'

export const QR_CONTENT_TYPES: Record<QrFormat, string> = { svg: 'image/svg+xml', png: 'image/png' }

/** An image as drawn: the SVG's text, or the PNG's bytes. */
export type QrBody = string | Uint8Array

/** What one render needs: the text to encode, the format and the size in pixels. */
export interface QrJob {
  text: string
  format: QrFormat
  size: number
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

/** Draws one image. CPU-bound (a 1024 px PNG takes 100-450 ms here): never call it on the serving thread. */
export async function drawQr({ text, format, size }: QrJob): Promise<QrBody> {
  // An SVG is drawn in modules and scaled by the viewer: it takes the exact size.
  if (format === 'svg') return QRCode.toString(text, { ...DRAWING, type: 'svg', width: size })
  // A copy with a buffer of its own: the worker moves it to the serving thread without copying again.
  return new Uint8Array(await QRCode.toBuffer(text, { ...DRAWING, type: 'png', scale: pngScale(text, size) }))
}

/** A render as posted to a render thread. */
export type QrRequest = QrJob & { id: number }

/** A render thread's answer: the image, or why it could not be drawn. */
export type QrReply = { id: number; ok: true; body: QrBody } | { id: number; ok: false; message: string }

/** Draws one request into its reply, with the buffer to move (a PNG's); a failure is a reply too. */
export async function renderReply(request: QrRequest): Promise<{ reply: QrReply; transfer: ArrayBuffer[] }> {
  try {
    const body = await drawQr(request)
    return { reply: { id: request.id, ok: true, body }, transfer: typeof body === 'string' ? [] : [body.buffer as ArrayBuffer] }
  } catch (error) {
    return { reply: { id: request.id, ok: false, message: error instanceof Error ? error.message : String(error) }, transfer: [] }
  }
}
