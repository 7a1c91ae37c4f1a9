// Webhooks (docs/webhooks.md): signed events of the account's changes, POSTed to its endpoints.
//   GET/POST  /api/v1/webhooks                   list · create (the secret is in that answer only)
//   GET/PATCH/DELETE /api/v1/webhooks/{id}       one endpoint
//   POST /api/v1/webhooks/{id}/rotate-secret     a new secret; the old one signs beside it for 24 h
//   POST /api/v1/webhooks/{id}/test              a ping event to this endpoint
//   GET  /api/v1/webhooks/{id}/deliveries        newest first, a page at a time
//   POST /api/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver
// Each route declares its scope (webhooks:read or webhooks:write), which plugins/agent-calls.ts holds an
// Agent's token and a restricted API key to. The changes that decide where and how events go (create,
// change, delete, rotate the secret) are the Agent operation webhooks.change, held for a human by default:
// an Agent must not send the account's events elsewhere unseen. A test or a redelivery sends to an
// endpoint the account already has, so it is not held. Another account's webhook is 404 WEBHOOK_NOT_FOUND.
import { Elysia } from 'elysia'
import type { Auth } from '../../plugins/auth'
import { errorResponses, errors } from '../../plugins/errors'
import type { Services } from '../../services'
import { DeliveriesQuery, DeliveryParams, DELIVERIES_DEFAULT_LIMIT, MAX_WEBHOOKS, webhookModels, WebhookParams } from './model'
import { createWebhook, deleteWebhook, getWebhook, listDeliveries, listWebhooks, PREVIOUS_SECRET_MS, redeliver, rotateSecret, testWebhook, updateWebhook } from './service'

const WEBHOOKS = '/api/v1/webhooks'
const ok = <T>(data: T) => ({ success: true as const, data, meta: {} })
const TAGS = ['webhooks']
const READ = { scopes: ['webhooks:read'] } as const
/** Where and how events go: held for a human when the Agent's policy names webhooks.change (the default). */
const CHANGE = { scopes: ['webhooks:write'], operation: 'webhooks.change' } as const
const SEND = { scopes: ['webhooks:write'] } as const
type WebhookScope = (typeof READ | typeof SEND)['scopes'][number]
const WHO = (scope: WebhookScope) =>
  `The signed-in session (writes send X-CSRF-Token), an API key with full access, or a restricted API key or an Agent's token holding \`${scope}\`. Another account's webhook is 404 WEBHOOK_NOT_FOUND.`
/** Every route's refusal of the credential; writes add the session's CSRF token. */
const READ_ERRORS = ['INSUFFICIENT_SCOPE'] as const
const WRITE_ERRORS = [...READ_ERRORS, 'CSRF_TOKEN_INVALID'] as const

export function webhooksModule(services: Services, auth: Auth) {
  return new Elysia({ name: 'modules.webhooks' })
    .use(errors)
    .use(auth.plugin)
    .model(webhookModels)
    .get(
      WEBHOOKS,
      async ({ account }) => {
        return ok({ webhooks: await listWebhooks(services.db, account.id) })
      },
      {
        account: READ,
        response: { 200: 'WebhookListResponse', ...errorResponses(...READ_ERRORS) },
        detail: { operationId: 'listWebhooks', tags: TAGS, summary: "List your account's webhooks", description: `Oldest first, without their secrets. ${WHO('webhooks:read')}` },
      },
    )
    .post(
      WEBHOOKS,
      async ({ account, body, set }) => {
        const created = await createWebhook(services, account.id, body)
        set.status = 201
        set.headers['cache-control'] = 'no-store'
        return ok(created)
      },
      {
        account: CHANGE,
        body: 'CreateWebhookRequest',
        response: { 201: 'CreatedWebhookResponse', ...errorResponses(...WRITE_ERRORS, 'VALIDATION_FAILED', 'WEBHOOK_URL_INVALID', 'WEBHOOK_LIMIT_REACHED') },
        detail: {
          operationId: 'createWebhook',
          tags: TAGS,
          summary: 'Create a webhook',
          description:
            `Events of the types in \`events\` (or every type: \`["*"]\`) are POSTed to \`url\`, signed the Standard Webhooks way with \`data.secret\`, which is in this answer only. ` +
            `\`url\` must be https, without user name or password, on a public host (400 WEBHOOK_URL_INVALID); its addresses are checked again at every delivery. At most ${MAX_WEBHOOKS} webhooks an account: one more is 409 WEBHOOK_LIMIT_REACHED. ${WHO('webhooks:write')}`,
        },
      },
    )
    .get(
      `${WEBHOOKS}/:id`,
      async ({ account, params }) => {
        return ok(await getWebhook(services.db, account.id, params.id))
      },
      {
        account: READ,
        params: WebhookParams,
        response: { 200: 'WebhookEndpointResponse', ...errorResponses(...READ_ERRORS, 'WEBHOOK_NOT_FOUND') },
        detail: { operationId: 'getWebhook', tags: TAGS, summary: 'Get one webhook', description: `Without its secret. ${WHO('webhooks:read')}` },
      },
    )
    .patch(
      `${WEBHOOKS}/:id`,
      async ({ account, params, body }) => {
        return ok(await updateWebhook(services, account.id, params.id, body))
      },
      {
        account: CHANGE,
        params: WebhookParams,
        body: 'UpdateWebhookRequest',
        response: { 200: 'WebhookEndpointResponse', ...errorResponses(...WRITE_ERRORS, 'VALIDATION_FAILED', 'WEBHOOK_URL_INVALID', 'WEBHOOK_NOT_FOUND') },
        detail: {
          operationId: 'updateWebhook',
          tags: TAGS,
          summary: 'Change a webhook',
          description: `Only the fields sent change. \`status: disabled\` stops the deliveries: those pending fail, and none are queued until it is \`active\` again. ${WHO('webhooks:write')}`,
        },
      },
    )
    .delete(
      `${WEBHOOKS}/:id`,
      async ({ account, params }) => {
        const { id } = await deleteWebhook(services.db, account.id, params.id)
        return { success: true as const, message: `Webhook ${id} deleted.`, data: { id }, meta: {} }
      },
      {
        account: CHANGE,
        params: WebhookParams,
        response: { 200: 'DeletedWebhookResponse', ...errorResponses(...WRITE_ERRORS, 'WEBHOOK_NOT_FOUND') },
        detail: { operationId: 'deleteWebhook', tags: TAGS, summary: 'Delete a webhook', description: `Its pending deliveries are dropped with it. ${WHO('webhooks:write')}` },
      },
    )
    .post(
      `${WEBHOOKS}/:id/rotate-secret`,
      async ({ account, params, set }) => {
        set.headers['cache-control'] = 'no-store'
        return ok(await rotateSecret(services, account.id, params.id))
      },
      {
        account: CHANGE,
        params: WebhookParams,
        response: { 200: 'RotatedSecretResponse', ...errorResponses(...WRITE_ERRORS, 'WEBHOOK_NOT_FOUND') },
        detail: {
          operationId: 'rotateWebhookSecret',
          tags: TAGS,
          summary: "Rotate a webhook's secret",
          description: `The new secret is in this answer only. For ${PREVIOUS_SECRET_MS / 3_600_000} hours the old one keeps signing beside it: the webhook-signature header carries both signatures, so a receiver verifying with either accepts the events while it switches. ${WHO('webhooks:write')}`,
        },
      },
    )
    .post(
      `${WEBHOOKS}/:id/test`,
      async ({ account, params, set }) => {
        const delivery = await testWebhook(services, account.id, params.id)
        set.status = 201
        return ok({ delivery })
      },
      {
        account: SEND,
        params: WebhookParams,
        response: { 201: 'DeliveryResponse', ...errorResponses(...WRITE_ERRORS, 'WEBHOOK_NOT_FOUND', 'WEBHOOK_DISABLED') },
        detail: {
          operationId: 'testWebhook',
          tags: TAGS,
          summary: 'Send a test event',
          description: `Queues a \`ping\` event (\`data: {webhook_id}\`) for this endpoint alone and answers its delivery, pending; it is sent within a second or two; follow it with GET …/deliveries. A disabled webhook is 409 WEBHOOK_DISABLED. ${WHO('webhooks:write')}`,
        },
      },
    )
    .get(
      `${WEBHOOKS}/:id/deliveries`,
      async ({ account, params, query }) => {
        return ok(await listDeliveries(services.db, account.id, params.id, { limit: query.limit ?? DELIVERIES_DEFAULT_LIMIT, cursor: query.cursor }))
      },
      {
        account: READ,
        params: WebhookParams,
        query: DeliveriesQuery,
        response: { 200: 'DeliveryListResponse', ...errorResponses(...READ_ERRORS, 'VALIDATION_FAILED', 'WEBHOOK_NOT_FOUND') },
        detail: {
          operationId: 'listWebhookDeliveries',
          tags: TAGS,
          summary: "A webhook's deliveries",
          description: `Newest first: each event sent (or to be sent) to this endpoint, with its attempts so far, the last attempt's status, duration and error, and when the next is due. Page with \`cursor\` (pass \`data.next_cursor\`, null on the last page). ${WHO('webhooks:read')}`,
        },
      },
    )
    .post(
      `${WEBHOOKS}/:id/deliveries/:deliveryId/redeliver`,
      async ({ account, params, set }) => {
        const delivery = await redeliver(services, account.id, params.id, params.deliveryId)
        set.status = 201
        return ok({ delivery })
      },
      {
        account: SEND,
        params: DeliveryParams,
        response: { 201: 'DeliveryResponse', ...errorResponses(...WRITE_ERRORS, 'WEBHOOK_NOT_FOUND', 'WEBHOOK_DELIVERY_NOT_FOUND', 'WEBHOOK_DISABLED') },
        detail: {
          operationId: 'redeliverWebhookDelivery',
          tags: TAGS,
          summary: 'Send a delivery again',
          description: `Queues the delivery's event once more, as a new delivery due at once: same event id (the webhook-id header), same body, signed when sent. A disabled webhook is 409 WEBHOOK_DISABLED. ${WHO('webhooks:write')}`,
        },
      },
    )
}
