// GET /api/v1/account/status.
import { Elysia } from 'elysia'
import { authPlugin } from '../../plugins/auth'
import { ApiError, errorResponses, errors } from '../../plugins/errors'
import type { Services } from '../../services'
import { guestUpgrade } from '../guest/service'
import { accountModels } from './model'
import { accountStatus } from './service'

export function accountModule(services: Services) {
  return new Elysia({ name: 'modules.account' })
    .use(errors)
    .use(authPlugin(services))
    .model(accountModels)
    .get(
      '/api/v1/account/status',
      ({ principal }) => {
        // TODO(issue 3, accounts): status of an API key's account.
        if (principal.kind !== 'guest') throw new ApiError('UNAUTHORIZED', 'API keys are not accepted here yet.')
        const data = accountStatus(principal)
        return { success: true, data, meta: { account_type: data.account_type, usage: data.usage, upgrade: guestUpgrade(services) } }
      },
      {
        auth: 'gt/mk',
        response: { 200: 'AccountStatusResponse', ...errorResponses(401, 429) },
        detail: { tags: ['account'], summary: 'Plan, usage and features of the calling credential' },
      },
    )
}
