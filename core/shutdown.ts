// How every entry point (one-process/main.ts, src/api.ts, redirect/main.ts) ends on SIGTERM or SIGINT: stop
// taking requests and drain what is in flight (clicks above all), then exit. A second signal while
// draining changes nothing: cutting the drain short is what SIGKILL is for. The drain is bounded
// (SHUTDOWN_TIMEOUT_MS): past it the process says so and exits 1, so an orchestrator waiting for it is
// never held longer than it was told (whatever the drain left is in the spools for the next start).

export interface StopOptions {
  log?: (line: string) => void
  /** Longest the drain may take before the process exits anyway. */
  timeoutMs?: number
  /** For tests: what exits, and which signals are listened to. */
  exit?: (code: number) => void
  on?: (signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void) => void
}

/** Default bound: the click drain's 10 s (a worker is killed after 20 s), the audit's 5 s, under Kubernetes' 30 s grace period. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 25_000

export function stopOnSignal(name: string, stop: () => Promise<void>, options: StopOptions = {}): void {
  const log = options.log ?? console.log
  const exit = options.exit ?? ((code: number) => process.exit(code))
  const on = options.on ?? ((signal, listener) => process.on(signal, listener))
  const timeoutMs = options.timeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS
  let stopping = false
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return
    stopping = true
    log(`${name}: ${signal}, stopping`)
    const bound = setTimeout(() => {
      console.error(`${name}: stopping took longer than ${timeoutMs} ms (SHUTDOWN_TIMEOUT_MS); exiting with what is left in the spools`)
      exit(1)
    }, timeoutMs)
    bound.unref?.()
    stop().then(
      () => {
        clearTimeout(bound)
        exit(0)
      },
      (error: unknown) => {
        clearTimeout(bound)
        console.error(`${name}: stopping failed: ${error instanceof Error ? error.message : String(error)}`)
        exit(1)
      },
    )
  }
  on('SIGTERM', onSignal)
  on('SIGINT', onSignal)
}
