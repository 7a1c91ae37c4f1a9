// GET /api/v1/account/status: the plan, usage and features of the calling credential. The account's
// other concerns are modules of their own: keys/ (API keys), registration/ (sign-up by a mailed code),
// billing/ (the upgrade to Pro, its checkout and the payment provider).
import { Elysia } from 'elysia'
import type { Auth } from '../../plugins/auth'
import { errorResponses, errors } from '../../plugins/errors'
import type { Services } from '../../services'
import { guestMeta } from '../guest/service'
import { accountModels } from './model'
import { accountMeta } from './meta'
import { accountStatus, accountStatusForKey } from './service'

export function accountModule(services: Services, auth: Auth) {
  return new Elysia({ name: 'modules.account' })
    .use(errors)
    .use(auth.plugin)
    .model(accountModels)
    .get(
      '/api/v1/account/status',
      async ({ principal }) => {
        if (principal.kind === 'guest') {
          const data = accountStatus(principal)
          return { success: true, data, meta: guestMeta(services, principal.guest) }
        }
        const { account, usage, data } = await accountStatusForKey(services, principal)
        return { success: true, data, meta: accountMeta(services, { plan: account.plan, linksThisMonth: usage.links_this_month, requestsRemaining: usage.requests_remaining }) }
      },
      {
        guestOrAccount: { scopes: ['account:read'] },
        response: { 200: 'AccountStatusResponse', ...errorResponses('ACCOUNT_NOT_FOUND') },
        detail: {
          operationId: 'getAccountStatus',
          tags: ['account'],
          summary: 'Plan, usage and features of the calling credential',
          description:
            "account_type is 'guest' for a guest token, else the account's plan: 'free' or 'pro'. usage counts the links created this calendar month (UTC) against the plan's quota and the requests of this key in the current minute.",
        },
      },
    )
}
