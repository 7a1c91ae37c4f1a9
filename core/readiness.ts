// Readiness: whether each dependency answers, for /ready of both processes (load balancers, Kubernetes
// readiness probes, the compose health checks). A check that fails makes the process unready only when
// it is required: the API cannot work without Postgres, but a ClickHouse outage only delays statistics
// (clicks and audit events wait in their spools), so taking every instance out of rotation for it would
// turn an analytics outage into a full one.

export interface ReadinessCheck {
  /** Resolves when the dependency answers; rejects (or outlasts the budget) when it does not. */
  probe: () => Promise<unknown>
  /** When it fails, the process is not ready (503). */
  required: boolean
}

export interface CheckResult {
  status: 'ok' | 'failing'
  required: boolean
  ms: number
  /** Why it failed, in our words: never the dependency's own message (it may carry a URL with a password). */
  reason?: string
}

export interface Readiness {
  ready: boolean
  checks: Record<string, CheckResult>
}

/** Every check at once, each within `budgetMs`. */
export async function checkReadiness(checks: Record<string, ReadinessCheck>, budgetMs = 1000): Promise<Readiness> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]): Promise<[string, CheckResult]> => {
      const started = performance.now()
      let timer: ReturnType<typeof setTimeout> | undefined
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), budgetMs)
      })
      let reason: string | undefined
      try {
        const outcome = await Promise.race([check.probe().then(() => 'ok' as const), late])
        if (outcome === 'late') reason = `no answer within ${budgetMs} ms`
      } catch (error) {
        reason = error instanceof ReadinessFailure ? error.message : 'did not answer'
      } finally {
        clearTimeout(timer)
      }
      const ms = Math.round((performance.now() - started) * 10) / 10
      return [name, reason === undefined ? { status: 'ok', required: check.required, ms } : { status: 'failing', required: check.required, ms, reason }]
    }),
  )
  const results = Object.fromEntries(entries)
  return { ready: entries.every(([, r]) => r.status === 'ok' || !r.required), checks: results }
}

/** A failure whose message is safe to show (ours, not the dependency's). */
export class ReadinessFailure extends Error {}

/**
 * The answer to GET /ready: 200 `{status: "ready", checks}`, or 503 in the shape of every error of the
 * service (SERVICE_UNAVAILABLE, a hint naming what fails, the checks in `data`); never cached.
 */
export function readinessResponse(readiness: Readiness): Response {
  const headers = { 'cache-control': 'no-store' }
  if (readiness.ready) return Response.json({ status: 'ready', checks: readiness.checks }, { headers })
  const failing = Object.entries(readiness.checks).filter(([, r]) => r.status === 'failing' && r.required)
  const hint = `Not ready: ${failing.map(([name, r]) => `${name} ${r.reason}`).join('; ')}.`
  const body = { success: false, error: 'SERVICE_UNAVAILABLE', hint, data: { status: 'not_ready', checks: readiness.checks }, meta: {} }
  return Response.json(body, { status: 503, headers: { ...headers, 'retry-after': '5' } })
}
