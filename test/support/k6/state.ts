// What the stand-in modules of one script run share inside its worker (one VU, one module registry):
// the phase (init, setup, iteration), the options the script exported, what its checks and requests
// gave, and the synchronous request to the test thread that actually sends it (wire.ts).
import type { WireRequest, WireResponse } from './wire'

export type Phase = 'init' | 'setup' | 'iteration' | 'teardown'

export interface CheckTally {
  name: string
  passes: number
  fails: number
}

export const state = {
  phase: 'init' as Phase,
  /** The script's exported options (discardResponseBodies, maxRedirects). */
  options: {} as { discardResponseBodies?: boolean; maxRedirects?: number },
  checks: new Map<string, CheckTally>(),
  /** Requests whose status the response callback (default 200-399) does not expect. */
  failedRequests: [] as string[],
  /** Samples of custom metrics by name, and each one's type. */
  metrics: new Map<string, { type: 'counter' | 'gauge' | 'rate' | 'trend'; samples: number[] }>(),
  requests: 0,
  expected: (status: number) => status >= 200 && status < 400,
  send: (_request: WireRequest): WireResponse => {
    throw new Error('the stand-in is not connected to a test thread')
  },
}

export function initOnly(what: string): void {
  if (state.phase !== 'init') throw new Error(`${what} can only be called in the init context (k6 refuses it in setup and iterations)`)
}
