// Who may manage an account's webhooks: the human, with the signed-in session (writes send
// X-CSRF-Token, checked by plugins/auth.ts) or an mk_ key that has full access or the route's webhook
// scope (keys/model.ts WEBHOOK_SCOPES). An Agent's at_ token is refused as on every human-only route
// (403 HUMAN_ONLY): an Agent must not send the account's events elsewhere unseen. The routes take the
// `account` mode without an OAuth scope (auth.ts admits keys of any scopes there) and this check, the one
// place that reads a webhook scope, runs before each handler.
import type { Principal } from '../../plugins/auth'
import { ApiError } from '../../plugins/errors'
import type { WebhookScope } from '../keys/model'

export function requireWebhookAccess(principal: Principal, scope: WebhookScope, resourceMetadataUrl: string): void {
  if (principal.kind !== 'account') throw new ApiError('UNAUTHORIZED')
  if (principal.agent) throw new ApiError('HUMAN_ONLY', 'Webhooks are managed by the human owner of the account (an API key or the signed-in session); an Agent token cannot, so an Agent never sends events elsewhere unseen.')
  const held = principal.key?.scopes
  if (!held || held.includes(scope)) return
  throw new ApiError('INSUFFICIENT_SCOPE', `This API key is restricted to ${held.join(' ')} and lacks ${scope}; use a key with that scope, or one without scopes.`, {
    headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${resourceMetadataUrl}"` },
    data: { required_scopes: [scope] },
  })
}
