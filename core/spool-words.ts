// What a spool tells the operator, in its owner's words: never per row, only when the store fails or
// recovers, when the bound nears or is reached, and when the disk refuses a write (the 1st, then every
// 1000th).

export interface SpoolWords {
  /** Starts each line: 'clicks', 'audit'. */
  prefix: string
  /** What the rows are: 'clicks', 'audit events'. */
  rows: string
  /** What the inserts are: 'batches', 'audit batches'. */
  batches: string
  /** The setting that bounds the spool: 'CLICK_SPOOL_MAX_BYTES'. */
  bound: string
  /** The counter of dropped rows: 'clicks.dropped'. */
  counter: string
  /** What goes on whatever happens to the rows: 'redirects go on'. */
  goesOn: string
}

const mb = (n: number) => `${Math.round(n / 1048576)} MB`
const reason = (error: unknown) => (error instanceof Error ? error.message : String(error))

export function spoolSays(w: SpoolWords, log: ((line: string) => void) | undefined) {
  const say = (line: string) => log?.(`${w.prefix}: ${line}`)
  return {
    nearFull: (bytes: number, max: number) =>
      say(`the spool holds ${mb(bytes)}, over 80 % of ${w.bound} (${mb(max)}): ClickHouse is not keeping up; at the bound ${w.rows} are dropped and counted (${w.goesOn})`),
    full: (bytes: number) => say(`the spool is FULL (${mb(bytes)}): ${w.rows} are now DROPPED and counted (${w.counter}) until ClickHouse takes the backlog`),
    underNear: (bytes: number, dropped: number) => say(`the spool is back under 80 % (${mb(bytes)}); ${dropped} ${w.rows} dropped so far`),
    lost(rows: number, error: unknown, writeErrors: number) {
      if (writeErrors !== 1 && writeErrors % 1000 !== 0) return
      say(`LOST ${rows} ${w.rows}: the spool write failed (${reason(error)}); ${w.goesOn} (${writeErrors} failed writes so far)`)
    },
    insertFailed: (error: unknown) => say(`ClickHouse insert failed (${reason(error)}); ${w.rows} wait in the spool`),
    recovered: () => say(`ClickHouse takes ${w.batches} again`),
  }
}
