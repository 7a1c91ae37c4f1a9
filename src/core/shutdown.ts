// How every entry point (src/main.ts, src/api.ts, redirect/main.ts) ends on SIGTERM or SIGINT: stop
// taking requests and drain what is in flight (clicks above all), then exit. A second signal while
// draining changes nothing: cutting the drain short is what SIGKILL is for.

export function stopOnSignal(name: string, stop: () => Promise<void>, log: (line: string) => void = console.log): void {
  let stopping = false
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return
    stopping = true
    log(`${name}: ${signal}, stopping`)
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(`${name}: stopping failed: ${error instanceof Error ? error.message : String(error)}`)
        process.exit(1)
      },
    )
  }
  process.on('SIGTERM', onSignal)
  process.on('SIGINT', onSignal)
}
