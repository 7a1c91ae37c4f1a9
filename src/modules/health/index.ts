// GET /health: the process answers and Postgres answers `select 1`.
import { Elysia, t } from 'elysia'
import { ping } from '../../db/client'
import { ApiError, errorResponses, errors } from '../../plugins/errors'
import type { Services } from '../../services'

const HealthResponse = t.Object({ status: t.Literal('ok') }, { examples: [{ status: 'ok' }] })

export function healthModule(services: Services) {
  return new Elysia({ name: 'modules.health' })
    .use(errors)
    .model({ HealthResponse })
    .get(
      '/health',
      async ({ set }) => {
        try {
          await ping(services.db)
        } catch {
          throw new ApiError('SERVICE_UNAVAILABLE', 'The database does not answer.')
        }
        set.headers['cache-control'] = 'no-store'
        return { status: 'ok' as const }
      },
      {
        response: { 200: 'HealthResponse', ...errorResponses('SERVICE_UNAVAILABLE') },
        detail: { operationId: 'getHealth', tags: ['system'], summary: 'Liveness and database check' },
      },
    )
}
