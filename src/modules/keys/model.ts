import { t } from 'elysia'
import { idPattern } from '../../lib/ids'
import { Meta } from '../../plugins/errors'
import { SCOPES, type Scope } from '../../lib/agent-access'

/** Live keys an account may hold: enough for a key per server and tool, few enough to review. */
export const MAX_LIVE_KEYS = 25
export const KEY_NAME_MAX = 64

/**
 * The scopes of the webhook routes (src/modules/webhooks): `webhooks:read` (endpoints, deliveries) and
 * `webhooks:write` (every change, test and redelivery). A key's only, like `admin` (admin-scope.ts): no
 * OAuth scopes (src/lib/agent-access.ts), so no Agent or OAuth client is given them; the webhook routes
 * refuse every at_ token (403 HUMAN_ONLY), since an Agent must not send the account's events elsewhere unseen.
 */
/** What a key may be restricted to: the OAuth scopes but offline_access (a key has no refresh token). */
export const KEY_SCOPES: readonly string[] = (Object.keys(SCOPES) as Scope[]).filter((scope) => scope !== 'offline_access')

const scopesDescription = `null: the account's full access (also the human-only routes: API keys, Agents, approvals, consent). Otherwise the scopes the key is held to, like an Agent's token: ${KEY_SCOPES.join(', ')}; and, for an operator's key only, \`admin\` (the admin API).`

export const ApiKey = t.Object({
  id: t.String({ pattern: idPattern('apiKey') }),
  name: t.String(),
  prefix: t.String({ description: 'The start of the key, kept in clear to tell keys apart', examples: ['mk_Q2xv'] }),
  scopes: t.Union([t.Array(t.String()), t.Null()], { description: scopesDescription }),
  created_at: t.String({ format: 'date-time' }),
  last_used_at: t.Union([t.String({ format: 'date-time' }), t.Null()], { description: 'The last use, to the minute (written at most once a minute per key); null if never used' }),
})

const keyExample = {
  id: 'key_Vb8Rt5Yp1ZaKq2m9Xw0Lk3',
  name: 'CI deploys',
  prefix: 'mk_Q2xv',
  scopes: ['links:read', 'links:write'],
  created_at: '2026-11-24T10:00:00.000Z',
  last_used_at: '2026-11-24T10:42:00.000Z',
}

export const ApiKeyListResponse = t.Object(
  { success: t.Literal(true), data: t.Object({ keys: t.Array(ApiKey) }), meta: Meta },
  { examples: [{ success: true, data: { keys: [keyExample, { ...keyExample, id: 'key_Jq3x0v8bYk2Lm5Rt9Wc1Za', name: 'Default key', prefix: 'mk_7hTn', scopes: null }] }, meta: {} }] },
)

export const CreateApiKeyRequest = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: KEY_NAME_MAX, description: `1-${KEY_NAME_MAX} characters once trimmed` }),
    scopes: t.Optional(
      t.Union([t.Array(t.String({ maxLength: 40 }), { minItems: 1, maxItems: KEY_SCOPES.length + 1 }), t.Null()], { description: `Absent or null: full access. ${scopesDescription}` }),
    ),
  },
  { examples: [{ name: 'CI deploys', scopes: ['links:read', 'links:write'] }, { name: 'Laptop' }] },
)

export const CreatedApiKeyResponse = t.Object(
  {
    success: t.Literal(true),
    data: t.Object({ ...ApiKey.properties, key: t.String({ pattern: '^mk_', description: 'The key itself: shown in this answer only, stored as its hash' }) }),
    meta: Meta,
  },
  { examples: [{ success: true, data: { ...keyExample, last_used_at: null, key: 'mk_Q2xvR0k3bVd4eTFhX3Ntb2tlLXRlc3QtZXhhbXBsZQ' }, meta: {} }] },
)

export const RevokedApiKeyResponse = t.Object(
  { success: t.Literal(true), data: t.Object({ ...ApiKey.properties, revoked_at: t.String({ format: 'date-time' }) }), meta: Meta },
  { examples: [{ success: true, data: { ...keyExample, revoked_at: '2026-11-25T09:00:00.000Z' }, meta: {} }] },
)

export const ApiKeyParams = t.Object({ keyId: t.String({ maxLength: 64, examples: ['key_Vb8Rt5Yp1ZaKq2m9Xw0Lk3'] }) })

export const apiKeyModels = { ApiKeyListResponse, CreateApiKeyRequest, CreatedApiKeyResponse, RevokedApiKeyResponse }
