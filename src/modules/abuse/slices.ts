// Long work on the thread that answers requests (parsing a list of a million lines, building its table,
// comparing it with the last one) runs in slices: a synchronous loop works until about SLICE_MS have
// passed (due()), then its async driver lets the event loop run (pause(), a setImmediate) and calls it
// again, so a request waits at most about one slice behind it. A resting driver (a refresh while the
// process serves) also waits as long as the slice ran before the next, so the work takes at most half of
// the serving thread: on a busy machine each slice otherwise takes a core that requests need. The hot
// loops stay synchronous functions: JavaScriptCore optimises a plain loop far better than one with an
// await inside.

/** Work between two turns of the event loop. A few milliseconds: invisible beside a request's own time. */
export const SLICE_MS = 4

/** How many steps run between two looks at the clock (performance.now() costs more than a step). */
const STEPS_BETWEEN_CLOCK_READS = 256

export class Slices {
  private sliceStart = performance.now()
  private steps = 0

  constructor(
    private readonly sliceMs = SLICE_MS,
    private readonly rest = false,
  ) {}

  /** Called once per step of a synchronous loop: true when the slice is used up and the loop should return. */
  due(): boolean {
    if (++this.steps % STEPS_BETWEEN_CLOCK_READS !== 0) return false
    return performance.now() - this.sliceStart >= this.sliceMs
  }

  /** Lets the event loop run (resting: for as long as the slice ran), then starts a new slice. */
  async pause(): Promise<void> {
    const ran = performance.now() - this.sliceStart
    if (this.rest) await new Promise<void>((resolve) => setTimeout(resolve, Math.max(1, Math.round(ran))))
    else await new Promise<void>((resolve) => setImmediate(resolve))
    this.sliceStart = performance.now()
  }

  /** Runs `work(from)` (which returns where it stopped: `end` when done) in slices until it reaches `end`. */
  async run(end: number, work: (from: number) => number): Promise<void> {
    for (let at = work(0); at < end; at = work(at)) await this.pause()
  }
}
