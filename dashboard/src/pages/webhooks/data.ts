// What the webhook pages share: the records as the typed client names them, the event types in words,
// and a webhook's and a delivery's state in words (never by colour alone).
import type { Schemas } from '../../api'

export type WebhookRecord = Schemas['WebhookListResponse']['data']['webhooks'][number]
export type Delivery = Schemas['DeliveryListResponse']['data']['deliveries'][number]

/** The types an endpoint subscribes to, as the API's create request names them, without the `*`. */
export type EventName = Exclude<Schemas['CreateWebhookRequest']['events'][number], '*'>

/**
 * Every subscribable type in words. Keyed by the client's own union, so a type the API adds or drops
 * fails the dashboard's type check until it is described here (docs/webhooks.md#events).
 */
export const EVENT_WORDS: Record<EventName, string> = {
  'link.created': 'a link is created',
  'link.updated': 'a link is changed',
  'link.deleted': 'a link is deleted',
  'link.disabled': 'a link is disabled',
  'conversion.created': 'a conversion is recorded',
  'routing.ab_completed': 'an A/B test ends',
  'domain.verified': 'a domain is verified',
  'domain.unverified': 'a domain stops verifying',
  'agent.approval_requested': 'an Agent asks for approval',
  'agent.approval_decided': 'an approval is decided',
  'agent.killed': 'an Agent is killed',
}

/** What a form holds: every type (`["*"]`, later ones too), or the ones ticked. */
export interface EventsChoice {
  all: boolean
  picked: EventName[]
}

export const choiceOf = (events: readonly string[]): EventsChoice => (events.includes('*') ? { all: true, picked: [] } : { all: false, picked: events.filter((e): e is EventName => e in EVENT_WORDS) })

/** The `events` of a request body; null when nothing is chosen (the API needs one at least). */
export const eventsOf = (choice: EventsChoice): Array<EventName | '*'> | null => (choice.all ? ['*'] : choice.picked.length > 0 ? choice.picked : null)

export const eventList = (events: readonly string[]) => (events.includes('*') ? 'All events' : events.join(', '))

export const WEBHOOK_STATUS: Record<WebhookRecord['status'], string> = {
  active: 'Active',
  disabled: 'Disabled: nothing is sent',
}

export const DELIVERY_STATUS: Record<Delivery['status'], string> = {
  pending: 'Pending',
  delivered: 'Delivered',
  failed: 'Failed',
}

/** One delivery's outcome in a sentence: what the endpoint answered, or why it did not. */
export function outcome(delivery: Delivery): string {
  const answer = delivery.response_status === null ? '' : `HTTP ${delivery.response_status}`
  const took = delivery.duration_ms === null ? '' : ` in ${delivery.duration_ms} ms`
  if (delivery.status === 'delivered') return `delivered: your endpoint answered ${answer}${took}.`
  if (delivery.status === 'failed') return `failed after ${delivery.attempt} attempts: ${delivery.error ?? answer}.`
  if (delivery.attempt === 0) return 'waiting to be sent…'
  return `not delivered yet (attempt ${delivery.attempt}: ${delivery.error ?? answer}); tried again ${delivery.next_attempt_at ? new Date(delivery.next_attempt_at).toLocaleString() : 'soon'}.`
}

/**
 * The answer of a change that ran. Only an Agent's change of webhooks is ever held for approval (the
 * operation webhooks.change); the signed-in human's runs, so a held answer here is an error.
 */
export function ran<T extends object>(data: T): Exclude<T, { approval: unknown }> {
  if ('approval' in data) throw new Error('The change was held for approval.')
  return data as Exclude<T, { approval: unknown }>
}
