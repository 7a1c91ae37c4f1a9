// Waiting for an outcome on a loaded 2-core machine: a test that says "this does not hang" or "this gives
// up in its budget" waits for the answer under a deadline of many seconds and asserts what the answer is;
// it never bounds how long the answer took (those figures belong in bench/). Polling helpers: stack.ts.

/** A generous deadline for an answer that should come in well under a second. */
export const ANSWER_DEADLINE_MS = 10_000

/**
 * `promise`'s own outcome (its value, or its rejection), or a rejection naming `what` when it has not
 * settled within `ms`: a hang fails the test with its name instead of the runner's timeout.
 */
export async function within<T>(promise: Promise<T>, what: string, ms = ANSWER_DEADLINE_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([promise, deadline])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Polls `check` every 10 ms until it holds; throws `what` (evaluated then, so it can show the state) once
 * `ms` have passed. For conditions in this process; for probes over HTTP or ClickHouse: stack.ts's eventually.
 */
export async function until(check: () => boolean | Promise<boolean>, what: string | (() => string), ms = ANSWER_DEADLINE_MS): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${typeof what === 'string' ? what : what()}`)
    await Bun.sleep(10)
  }
}
