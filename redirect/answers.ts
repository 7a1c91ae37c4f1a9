// Counted redirects wait for their click's write (the click log's group commit: one write() per
// event-loop turn, recorder.ts). The turn's commit promise gets one continuation, which resolves every
// answer of the turn directly with its 302; a request's promise is the one the server waits on. Chained
// per request (commit.then(() => response), then the latency's own then), a redirect cost the serving
// thread two more promise jobs: measured under load, about 0.4 µs a redirect, 2-3 % of the requests/s
// (docs/decisions/0021-answer-after-the-group-commit.md).
//
// Each turn's answers are kept apart: a click appended after a commit was made but before its
// continuation ran (a password form's redirect, released by a microtask) belongs to the next write, and
// its answer must not leave with this one.

interface Turn {
  /** The log's promise for this turn's write. */
  commit: Promise<void>
  resolvers: Array<(response: Response) => void>
  responses: Response[]
  /** performance.now() at each request's start, once claimed; NaN: observed by whoever awaits it. */
  started: number[]
}

let captured: (response: Response) => void = () => {}
/** The executor of every answer's promise: no closure per request. */
const capture = (resolve: (response: Response) => void) => {
  captured = resolve
}

export class TurnAnswers {
  private turn: Turn | null = null
  private last: Promise<Response> | null = null

  /** `answered(started)` is told of each claimed answer as it leaves (the latency histogram). */
  constructor(private readonly answered: (started: number) => void) {}

  /**
   * The answer of a counted redirect whose click went to the log: the 302 itself when the click was not
   * written (`written` undefined: dropped at the spool's bound), else a promise of it, resolved once the
   * turn's write returned.
   */
  after(written: Promise<void> | undefined, response: Response): Response | Promise<Response> {
    if (written === undefined) return response
    let turn = this.turn
    if (turn === null || turn.commit !== written) {
      const next: Turn = { commit: written, resolvers: [], responses: [], started: [] }
      written.then(() => this.release(next))
      this.turn = turn = next
    }
    const answer = new Promise<Response>(capture)
    turn.resolvers.push(captured)
    turn.responses.push(response)
    turn.started.push(Number.NaN)
    this.last = answer
    return answer
  }

  /**
   * Whether `answer` is the answer after() gave last, which then takes `started` and is told to
   * `answered` when it leaves: the caller need not wait on it to observe it.
   */
  claim(answer: Promise<Response>, started: number): boolean {
    if (answer !== this.last || this.turn === null) return false
    this.turn.started[this.turn.started.length - 1] = started
    this.last = null
    return true
  }

  private release(turn: Turn): void {
    if (this.turn === turn) this.turn = null
    const { resolvers, responses, started } = turn
    for (let i = 0; i < resolvers.length; i++) {
      if (!Number.isNaN(started[i]!)) this.answered(started[i]!)
      resolvers[i]!(responses[i]!)
    }
  }
}
