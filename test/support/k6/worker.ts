// One stand-in run of a k6 script, in its own worker (run.ts starts it): `k6`, `k6/http` and
// `k6/metrics` resolve to the stand-ins, k6's globals are set, then as k6 does: the init context
// (importing the script, its options checked), setup() once with its data passed through JSON, each
// scenario's function for `iterations` iterations as VU 1, teardown(). Requests go to the test thread.
import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { initOnly, state } from './state'
import { unguardedThresholds, validateOptions } from './options'
import { WIRE_BYTES, WIRE_HEADER, type WireRequest, type WireResponse } from './wire'

export interface StartMessage {
  script: string
  env: Record<string, string>
  iterations: number
  buffer: SharedArrayBuffer
}

export interface K6Report {
  scenarios: { name: string; executor: string; exec: string; iterations: number }[]
  checks: { name: string; passes: number; fails: number }[]
  failedRequests: string[]
  /** Errors that stopped the init context, setup(), an iteration or teardown(). */
  errors: string[]
  unguardedThresholds: string[]
  requests: number
  metrics: Record<string, number[]>
  options: Record<string, unknown>
}

declare const self: Worker

Bun.plugin({
  name: 'k6 stand-in',
  setup(build) {
    build.module('k6', async () => ({ exports: await import('./k6'), loader: 'object' }))
    build.module('k6/http', async () => ({ exports: await import('./http'), loader: 'object' }))
    build.module('k6/metrics', async () => ({ exports: await import('./k6'), loader: 'object' }))
  },
})

function connect(buffer: SharedArrayBuffer): void {
  const flags = new Int32Array(buffer, 0, 2)
  state.send = (request: WireRequest): WireResponse => {
    Atomics.store(flags, 0, 0)
    self.postMessage({ type: 'request', request })
    if (Atomics.wait(flags, 0, 0, 60_000) === 'timed-out') throw new Error(`no answer to ${request.method} ${request.url} in 60 s`)
    const bytes = new Uint8Array(buffer, WIRE_HEADER, Atomics.load(flags, 1)).slice()
    return JSON.parse(new TextDecoder().decode(bytes)) as WireResponse
  }
  if (buffer.byteLength < WIRE_HEADER + WIRE_BYTES) throw new Error('wire buffer too small')
}

function setGlobals(script: string, env: Record<string, string>): void {
  const globals = globalThis as Record<string, unknown>
  globals.__ENV = { ...env }
  globals.__VU = 1
  globals.__ITER = 0
  globals.open = (path: string, mode?: 'b') => {
    initOnly('open()')
    const content = readFileSync(resolve(dirname(script), path))
    return mode === 'b' ? content.buffer.slice(content.byteOffset, content.byteOffset + content.byteLength) : content.toString('utf8')
  }
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error))

async function run({ script, env, iterations, buffer }: StartMessage): Promise<K6Report> {
  connect(buffer)
  setGlobals(script, env)
  const report: K6Report = { scenarios: [], checks: [], failedRequests: [], errors: [], unguardedThresholds: [], requests: 0, metrics: {}, options: {} }
  const finish = () => ({
    ...report,
    checks: [...state.checks.values()],
    failedRequests: state.failedRequests,
    requests: state.requests,
    metrics: Object.fromEntries([...state.metrics].map(([name, m]) => [name, m.samples])),
  })
  let module: Record<string, any>
  let scenarios: ReturnType<typeof validateOptions>
  try {
    module = await import(script)
    report.options = JSON.parse(JSON.stringify(module.options ?? {}))
    state.options = module.options ?? {}
    scenarios = validateOptions(module.options ?? {}, module)
  } catch (error) {
    report.errors.push(`init: ${message(error)}`)
    return finish()
  }
  const globals = globalThis as Record<string, unknown>
  let data: unknown
  try {
    state.phase = 'setup'
    globals.__VU = 0
    // k6 hands setup()'s result to every VU as JSON.
    const result = typeof module.setup === 'function' ? module.setup() : undefined
    data = result === undefined ? undefined : JSON.parse(JSON.stringify(result))
  } catch (error) {
    report.errors.push(`setup: ${message(error)}`)
    return finish()
  }
  state.phase = 'iteration'
  globals.__VU = 1
  for (const scenario of scenarios) {
    for (let iteration = 0; iteration < iterations; iteration++) {
      globals.__ITER = iteration
      try {
        module[scenario.exec](data)
      } catch (error) {
        report.errors.push(`${scenario.name} iteration ${iteration}: ${message(error)}`)
      }
    }
    report.scenarios.push({ ...scenario, iterations })
  }
  try {
    state.phase = 'teardown'
    globals.__VU = 0
    if (typeof module.teardown === 'function') module.teardown(data)
  } catch (error) {
    report.errors.push(`teardown: ${message(error)}`)
  }
  report.unguardedThresholds = unguardedThresholds(module.options ?? {}, scenarios)
  return finish()
}

self.onmessage = async (event: MessageEvent<StartMessage>) => {
  self.postMessage({ type: 'done', report: await run(event.data) })
}
