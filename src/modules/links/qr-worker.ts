// A render thread of the QR pool (qr-pool.ts): draws each image the serving thread posts and posts it
// back under the render's id, a PNG's bytes moved rather than copied. One render at a time: the pool
// sends the next only once this one has answered.
import { lowerThisThread } from '../../../core/threads'
import { renderReply, type QrRequest } from './qr-draw'

declare const self: Worker

// Requests go first when this thread and the serving one want the same core (core/threads.ts).
lowerThisThread()

self.onmessage = async (event: MessageEvent<QrRequest>) => {
  const { reply, transfer } = await renderReply(event.data)
  self.postMessage(reply, transfer)
}
