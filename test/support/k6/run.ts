// Runs a k6 script under the stand-in (worker.ts) and sends its requests with fetch from this thread,
// where the service under test answers: the worker blocks on Atomics.wait until the answer is in the
// shared buffer. `inspect` sees each exchange and may name what is wrong with it (e.g. a status the API
// document does not promise for that operation).
import type { K6Report, StartMessage } from './worker'
import { WIRE_BYTES, WIRE_HEADER, type WireRequest, type WireResponse } from './wire'

export type { K6Report } from './worker'

export interface Exchange {
  request: WireRequest
  response: WireResponse
}

export interface K6RunOptions {
  env: Record<string, string>
  /** Iterations of each scenario (one VU). */
  iterations?: number
  inspect?: (exchange: Exchange) => string | undefined
  timeoutMs?: number
}

export interface K6Run extends K6Report {
  exchanges: Exchange[]
  /** What `inspect` found wrong, one line each. */
  contractProblems: string[]
}

async function send(request: WireRequest): Promise<WireResponse> {
  const started = performance.now()
  try {
    const response = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body === undefined ? undefined : Buffer.from(request.body, 'base64'),
      redirect: request.redirect,
    })
    const body = await response.text()
    return { status: response.status, url: response.url, headers: [...response.headers], body, durationMs: performance.now() - started }
  } catch (error) {
    return { status: 0, url: request.url, headers: [], body: '', durationMs: performance.now() - started, error: String(error) }
  }
}

export function runK6(script: string, options: K6RunOptions): Promise<K6Run> {
  const buffer = new SharedArrayBuffer(WIRE_HEADER + WIRE_BYTES)
  const flags = new Int32Array(buffer, 0, 2)
  const exchanges: Exchange[] = []
  const contractProblems: string[] = []
  const worker = new Worker(new URL('./worker.ts', import.meta.url).href)
  return new Promise<K6Run>((resolve, reject) => {
    const timer = setTimeout(() => {
      void worker.terminate()
      reject(new Error(`${script}: no report in ${options.timeoutMs ?? 60_000} ms`))
    }, options.timeoutMs ?? 60_000)
    worker.onerror = (event) => {
      clearTimeout(timer)
      reject(new Error(`${script}: the worker failed: ${event.message}`))
    }
    worker.onmessage = async (event: MessageEvent<{ type: 'request'; request: WireRequest } | { type: 'done'; report: K6Report }>) => {
      if (event.data.type === 'done') {
        clearTimeout(timer)
        void worker.terminate()
        resolve({ ...event.data.report, exchanges, contractProblems })
        return
      }
      const { request } = event.data
      let response = await send(request)
      const problem = options.inspect?.({ request, response })
      if (problem) contractProblems.push(`${request.method} ${request.url}: ${problem}`)
      exchanges.push({ request, response })
      let bytes = new TextEncoder().encode(JSON.stringify(response))
      if (bytes.length > WIRE_BYTES) {
        response = { ...response, status: 0, body: '', error: `answer over ${WIRE_BYTES} bytes: raise WIRE_BYTES` }
        bytes = new TextEncoder().encode(JSON.stringify(response))
      }
      new Uint8Array(buffer, WIRE_HEADER, bytes.length).set(bytes)
      Atomics.store(flags, 1, bytes.length)
      Atomics.store(flags, 0, 1)
      Atomics.notify(flags, 0)
    }
    const start: StartMessage = { script, env: options.env, iterations: options.iterations ?? 3, buffer }
    worker.postMessage(start)
  })
}
