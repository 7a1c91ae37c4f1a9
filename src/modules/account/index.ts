// GET /api/v1/account/status: the plan, usage and features of the calling credential.
// GET/PATCH /api/v1/account/notifications: what the account is mailed about (the human's only: an Agent
// must not turn off the mail that tells of its own held calls). The account's
// other concerns are modules of their own: keys/ (API keys), registration/ (sign-up by a mailed code),
// billing/ (the upgrade to Pro, its checkout and the payment provider).
import { Elysia } from 'elysia'
import type { Auth } from '../../plugins/auth'
import { errorResponses, errors } from '../../plugins/errors'
import type { Services } from '../../services'
import { guestMeta } from '../guest/service'
import { accountModels } from './model'
import { accountMeta } from './meta'
import { getNotifications, updateNotifications } from './notifications'
import { accountStatus, accountStatusForKey } from './service'

const NOTIFICATIONS_PATH = '/api/v1/account/notifications'
const HUMAN =
  'For the human only: the signed-in session (writes send X-CSRF-Token) or an API key without scopes; an at_ token gets 403 HUMAN_ONLY, a key restricted to scopes 403 FULL_ACCESS_REQUIRED.'

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
    .get(NOTIFICATIONS_PATH, async ({ account }) => ({ success: true as const, data: await getNotifications(services, account.id), meta: {} }), {
      human: true,
      response: { 200: 'NotificationsResponse', ...errorResponses('ACCOUNT_NOT_FOUND') },
      detail: {
        operationId: 'getAccountNotifications',
        tags: ['account'],
        summary: 'What the account is mailed about',
        description: `approval_emails: whether each new approval of an Agent's call is mailed to the account's address with its review page (on by default). ${HUMAN}`,
      },
    })
    .patch(NOTIFICATIONS_PATH, async ({ account, body }) => ({ success: true as const, data: await updateNotifications(services, account.id, body), meta: {} }), {
      human: true,
      body: 'NotificationsRequest',
      response: { 200: 'NotificationsResponse', ...errorResponses('VALIDATION_FAILED', 'ACCOUNT_NOT_FOUND', 'CSRF_TOKEN_INVALID') },
      detail: {
        operationId: 'updateAccountNotifications',
        tags: ['account'],
        summary: 'Change what the account is mailed about',
        description: `Only the settings sent change; answers them all. \`{"approval_emails": false}\` stops the mail of each new approval (the approvals are still listed at GET /api/v1/agent/approvals and are still the webhook event agent.approval_requested). ${HUMAN}`,
      },
    })
}
