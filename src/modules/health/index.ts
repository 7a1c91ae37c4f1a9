// GET /health: liveness, the process answers (cheap: no dependency is asked, so a database outage never
// makes an orchestrator restart healthy processes). GET /ready: whether each dependency answers
// (core/readiness.ts): Postgres and Redis are required, ClickHouse, the audit spool and a Postgres read
// replica are shown (statistics and audit reads wait for ClickHouse; the replica's reads go to the
// primary meanwhile; everything else works). In the embedded default the
// redirector's checks (its click spool) are added by one-process/main.ts.
import { Elysia, t } from 'elysia'
import { checkReadiness, readinessResponse, ReadinessFailure, type ReadinessCheck } from '../../../core/readiness'
import { ping } from '../../db/client'
import { errorResponses, errors } from '../../plugins/errors'
import type { Services } from '../../services'

const HealthResponse = t.Object({ status: t.Literal('ok') }, { examples: [{ status: 'ok' }] })

const CheckResult = t.Object({
  status: t.Union([t.Literal('ok'), t.Literal('failing')]),
  required: t.Boolean({ description: 'When it fails, the process is not ready (503)' }),
  ms: t.Number({ description: 'How long the check took' }),
  reason: t.Optional(t.String({ description: 'Why it failed' })),
})

const ReadyResponse = t.Object(
  { status: t.Literal('ready'), checks: t.Record(t.String(), CheckResult) },
  {
    examples: [
      {
        status: 'ready',
        checks: {
          postgres: { status: 'ok', required: true, ms: 0.8 },
          redis: { status: 'ok', required: true, ms: 0.3 },
          clickhouse: { status: 'failing', required: false, ms: 1000, reason: 'no answer within 1000 ms' },
        },
      },
    ],
  },
)

/** A key nothing stores: reading it tells whether the cache answers. */
const PROBE_KEY = 'linkservice:ready-probe'

export function healthModule(services: Services, extraChecks: Record<string, ReadinessCheck> = {}) {
  const checks: Record<string, ReadinessCheck> = {
    postgres: { required: true, probe: () => ping(services.db) },
    // Redis, or the in-process cache of the embedded default (which always answers).
    [services.config.redisUrl ? 'redis' : 'cache']: { required: true, probe: () => services.kv.get(PROBE_KEY) },
    clickhouse: { required: false, probe: async () => (await services.clickhouse.query({ query: 'SELECT 1', format: 'JSONEachRow' })).json() },
    // Only when DATABASE_REPLICA_URL is set: without one the read handle is the primary, checked above.
    ...(services.readDb !== services.db && { postgres_replica: { required: false, probe: () => ping(services.readDb) } }),
    ...auditCheck(services),
  }
  return (
    new Elysia({ name: 'modules.health' })
      .use(errors)
      .model({ HealthResponse, ReadyResponse })
      .get(
        '/health',
        ({ set }) => {
          set.headers['cache-control'] = 'no-store'
          return { status: 'ok' as const }
        },
        {
          response: { 200: 'HealthResponse' },
          detail: { operationId: 'getHealth', tags: ['system'], summary: 'Liveness: the process answers', description: 'Asks no dependency; `/ready` says whether they answer.' },
        },
      )
      // extraChecks is read on each call: the embedded default adds the redirector's once it exists.
      .get('/ready', async () => readinessResponse(await checkReadiness({ ...checks, ...extraChecks })), {
        response: { 200: 'ReadyResponse', ...errorResponses('SERVICE_UNAVAILABLE') },
        detail: {
          operationId: 'getReadiness',
          tags: ['system'],
          summary: 'Readiness: whether each dependency answers',
          description:
            '200 while the required dependencies answer (Postgres, Redis), with every check and its time; 503 SERVICE_UNAVAILABLE naming what fails, the checks in `data`. ClickHouse and the audit spool are shown but not required: statistics wait for ClickHouse, everything else works. For load balancers and Kubernetes readiness probes; `/health` is the liveness probe.',
        },
      })
  )
}

/** The audit spool is shown when the audit recorder keeps counters: full means Agent calls go unaudited. */
function auditCheck(services: Services): Record<string, ReadinessCheck> {
  const audit = services.audit as (Services['audit'] & { counters?: { spoolBytes: number; spoolMaxBytes: number } }) | undefined
  if (!audit || !('counters' in audit)) return {}
  return {
    audit_spool: {
      required: false,
      probe: async () => {
        const { spoolBytes, spoolMaxBytes } = audit.counters!
        if (spoolBytes >= spoolMaxBytes) throw new ReadinessFailure('is full: audit events are being dropped')
      },
    },
  }
}
