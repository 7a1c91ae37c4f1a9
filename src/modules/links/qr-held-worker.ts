// A render thread for the pool's tests (qr-pool.test.ts), speaking qr-worker.ts's messages: each render
// is held until the test says `release` on the BroadcastChannel below, so a test fills the pool and its
// queue without depending on how long a render takes. On receiving a render it says `held <size> <text>`
// there (the test's marker that the render reached a thread). A render of the text `crash` ends the thread
// with an uncaught error instead, as a crashing renderer would.
import { renderReply, type QrRequest } from './qr-draw'

declare const self: Worker

/** The channel's name, also in qr-pool.test.ts (this file is a worker's entry: importing it would run it). */
const channel = new BroadcastChannel('qr-held-worker')
const held: QrRequest[] = []

channel.onmessage = async (event: { data: string }) => {
  if (event.data !== 'release') return
  for (const request of held.splice(0)) {
    const { reply, transfer } = await renderReply(request)
    self.postMessage(reply, transfer)
  }
}

self.onmessage = (event: MessageEvent<QrRequest>) => {
  if (event.data.text === 'crash') throw new Error('render thread crashed (test)')
  held.push(event.data)
  channel.postMessage(`held ${event.data.size} ${event.data.text}`)
}
