// The webhook routes' shapes (docs/webhooks.md), written once with `t`; the services' types derive from them.
import { t, type Static } from 'elysia'
import { EVENT_TYPES } from '../../db/schema'
import { idPattern } from '../../lib/ids'
import { Int, Meta } from '../../plugins/errors'

/** What an endpoint subscribes to: every type but ping (sent only by POST …/test, to that endpoint), or `*`. */
export const SUBSCRIBABLE_EVENTS = ['*', ...EVENT_TYPES.filter((type) => type !== 'ping')] as const
export type SubscribableEvent = (typeof SUBSCRIBABLE_EVENTS)[number]

/** Endpoints an account may have: one per system it feeds, few enough to keep each one looked after. */
export const MAX_WEBHOOKS = 10
export const MAX_URL_LENGTH = 2048
export const MAX_DESCRIPTION = 500
export const DELIVERIES_DEFAULT_LIMIT = 20
export const DELIVERIES_MAX_LIMIT = 100

const when = (description: string) => t.String({ format: 'date-time', description })
const nullable = <T extends Parameters<typeof t.Union>[0][number]>(schema: T, description?: string) => t.Union([schema, t.Null()], description ? { description } : {})

const EventName = t.Union(
  SUBSCRIBABLE_EVENTS.map((type) => t.Literal(type)),
  { description: `An event type, or * for every one: ${SUBSCRIBABLE_EVENTS.slice(1).join(', ')}` },
)
const Events = t.Array(EventName, { minItems: 1, maxItems: SUBSCRIBABLE_EVENTS.length, description: 'The event types sent to this endpoint, or ["*"] for all of them' })
const WebhookStatus = t.Union([t.Literal('active'), t.Literal('disabled')], { description: 'active: events are sent; disabled: none are, and pending deliveries fail' })
const Url = t.String({ minLength: 1, maxLength: MAX_URL_LENGTH, description: 'Where events are POSTed: an https URL whose host is public', examples: ['https://hooks.example.com/linkservice'] })
const Description = t.String({ maxLength: MAX_DESCRIPTION, description: `What the endpoint is for, at most ${MAX_DESCRIPTION} characters` })
const Secret = t.String({ pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$', description: 'The signing secret (Standard Webhooks: whsec_ and base64). Shown in this answer only' })

export const Webhook = t.Object({
  id: t.String({ pattern: idPattern('webhook') }),
  url: t.String(),
  events: t.Array(t.String()),
  description: nullable(t.String()),
  status: WebhookStatus,
  created_at: when('When it was created'),
})
export type WebhookView = Static<typeof Webhook>

export const Delivery = t.Object({
  id: t.String({ pattern: idPattern('webhookDelivery') }),
  event_id: t.String({ pattern: idPattern('webhookEvent'), description: 'The webhook-id header of every attempt: receivers deduplicate by it' }),
  type: t.String({ enum: [...EVENT_TYPES] }),
  attempt: Int({ description: 'Attempts made so far' }),
  status: t.Union([t.Literal('pending'), t.Literal('delivered'), t.Literal('failed')], { description: 'pending until a 2xx answer (delivered) or the last retry (failed)' }),
  response_status: nullable(Int(), 'The HTTP status of the last attempt; null before one, or when none came (timeout, refused address)'),
  duration_ms: nullable(Int(), 'How long the last attempt took'),
  error: nullable(t.String(), 'Why the last attempt failed, when it did'),
  next_attempt_at: nullable(when('When the next attempt is due'), 'null once delivered or failed'),
  created_at: when('When the delivery was queued'),
})
export type DeliveryView = Static<typeof Delivery>

const WEBHOOK_EXAMPLE: WebhookView = {
  id: 'wh_Vb8Rt5Yp1ZaKq2m9Xw0Lk3',
  url: 'https://hooks.example.com/linkservice',
  events: ['link.created', 'link.deleted'],
  description: 'Mirror links into the CRM',
  status: 'active',
  created_at: '2026-11-24T10:00:00.000Z',
}
const SECRET_EXAMPLE = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const DELIVERY_EXAMPLE: DeliveryView = {
  id: 'whd_Kq2m9Xw0Lk3Vb8Rt5Yp1Za',
  event_id: 'evt_2m9Xw0Lk3Vb8Rt5Yp1ZaKq',
  type: 'link.created',
  attempt: 2,
  status: 'pending',
  response_status: 503,
  duration_ms: 142,
  error: 'answered HTTP 503',
  next_attempt_at: '2026-11-24T10:02:35.000Z',
  created_at: '2026-11-24T10:00:00.000Z',
}

const answer = <T extends Parameters<typeof t.Object>[0]>(data: T, example: unknown) =>
  t.Object({ success: t.Literal(true), data: t.Object(data), meta: Meta }, { examples: [{ success: true, data: example, meta: {} }] })
const NextCursor = t.Union([t.String(), t.Null()], { description: 'Pass as ?cursor= for the next page; null on the last page' })

export const CreateWebhookRequest = t.Object(
  { url: Url, events: Events, description: t.Optional(nullable(Description)) },
  {
    examples: [
      { url: 'https://hooks.example.com/linkservice', events: ['link.created', 'link.deleted'], description: 'Mirror links into the CRM' },
      { url: 'https://hooks.example.com/all', events: ['*'] },
    ],
  },
)
export const UpdateWebhookRequest = t.Object(
  { url: t.Optional(Url), events: t.Optional(Events), description: t.Optional(nullable(Description)), status: t.Optional(WebhookStatus) },
  { description: 'Only the fields sent change; description null clears it', examples: [{ status: 'disabled' }, { events: ['*'], description: null }] },
)

export const WebhookEndpointResponse = answer(Webhook.properties, WEBHOOK_EXAMPLE)
export const CreatedWebhookResponse = answer({ ...Webhook.properties, secret: Secret }, { ...WEBHOOK_EXAMPLE, secret: SECRET_EXAMPLE })
export const WebhookListResponse = answer({ webhooks: t.Array(Webhook, { description: 'Oldest first' }) }, { webhooks: [WEBHOOK_EXAMPLE] })
export const DeletedWebhookResponse = t.Object(
  { success: t.Literal(true), message: t.String(), data: t.Object({ id: t.String() }), meta: Meta },
  { examples: [{ success: true, message: `Webhook ${WEBHOOK_EXAMPLE.id} deleted.`, data: { id: WEBHOOK_EXAMPLE.id }, meta: {} }] },
)
export const RotatedSecretResponse = answer({ secret: Secret }, { secret: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD' })
export const DeliveryResponse = answer(
  { delivery: Delivery },
  { delivery: { ...DELIVERY_EXAMPLE, type: 'ping', attempt: 0, response_status: null, duration_ms: null, error: null, next_attempt_at: '2026-11-24T10:00:00.000Z' } },
)
export const DeliveryListResponse = answer({ deliveries: t.Array(Delivery, { description: 'Newest first' }), next_cursor: NextCursor }, { deliveries: [DELIVERY_EXAMPLE], next_cursor: null })

const Id = (example: string) => t.String({ maxLength: 64, examples: [example] })
export const WebhookParams = t.Object({ id: Id(WEBHOOK_EXAMPLE.id) })
export const DeliveryParams = t.Object({ id: Id(WEBHOOK_EXAMPLE.id), deliveryId: Id(DELIVERY_EXAMPLE.id) })
// Query values are strings: t.Integer is the type that reads them.
export const DeliveriesQuery = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: DELIVERIES_MAX_LIMIT, default: DELIVERIES_DEFAULT_LIMIT, description: `Deliveries per page, 1-${DELIVERIES_MAX_LIMIT}` })),
  cursor: t.Optional(t.String({ pattern: '^[A-Za-z0-9_-]+$', maxLength: 256, description: 'next_cursor of the previous page' })),
})

export type CreateWebhookInput = Static<typeof CreateWebhookRequest>
export type UpdateWebhookInput = Static<typeof UpdateWebhookRequest>

export const webhookModels = {
  CreateWebhookRequest,
  UpdateWebhookRequest,
  WebhookEndpointResponse,
  CreatedWebhookResponse,
  WebhookListResponse,
  DeletedWebhookResponse,
  RotatedSecretResponse,
  DeliveryResponse,
  DeliveryListResponse,
}
