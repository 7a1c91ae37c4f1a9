// The one interface of a reputation check (docs/operators.md, "Reputation checks"): a service outside
// this one is asked about a destination after the link is written, and its answer is one of three.
// `unknown` is what a check answers whenever the service did not: a timeout, an HTTP error, an answer
// it cannot read. It never flags a link; it is counted, so an operator sees a service that stopped
// answering. A check never throws.

export type Verdict =
  /** The service has nothing against it (or the check has nothing to ask it, as for an IP address to a resolver). */
  | { verdict: 'safe' }
  /** The service says it is unsafe; `reason` is for operators (the link's state reason), never for visitors. */
  | { verdict: 'unsafe'; reason: string }
  /** The service did not answer, or not in a form the check reads; `reason` says which, for logs. */
  | { verdict: 'unknown'; reason: string }

export interface DestinationCheck {
  /** `safe_dns` or `web_risk`: the label of its counters and the start of its reasons. */
  readonly name: string
  check(destination: string): Promise<Verdict>
}

export const SAFE: Verdict = { verdict: 'safe' }
export const unsafe = (reason: string): Verdict => ({ verdict: 'unsafe', reason })
export const unknown = (reason: string): Verdict => ({ verdict: 'unknown', reason })

/** Each call to a reputation service: a few seconds, since nobody waits on it but a queue. */
export const CALL_TIMEOUT_MS = 3_000
