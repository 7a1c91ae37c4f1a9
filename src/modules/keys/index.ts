// GET/POST /api/v1/account/keys and DELETE /api/v1/account/keys/{keyId}: the account's API keys, for the
// human only (the signed-in session, with X-CSRF-Token on writes, or a full-access key). An at_ token is
// 403 HUMAN_ONLY and a key restricted to scopes 403 FULL_ACCESS_REQUIRED (plugins/agent-calls.ts), so
// no credential can make itself a wider one.
import { Elysia } from 'elysia'
import type { Auth } from '../../plugins/auth'
import { errorResponses, errors } from '../../plugins/errors'
import type { Services } from '../../services'
import { isOperator } from './admin-scope'
import { ApiKeyParams, apiKeyModels, MAX_LIVE_KEYS } from './model'
import { createKey, listKeys, revokeKey } from './service'
import { KEY_VERDICT_TTL_MS } from './verdicts'

const KEYS_PATH = '/api/v1/account/keys'
const ok = <T>(data: T) => ({ success: true as const, data, meta: {} })
const WHO = 'For the human only: the signed-in session (writes send X-CSRF-Token) or an API key without scopes; an at_ token gets 403 HUMAN_ONLY, a key restricted to scopes 403 FULL_ACCESS_REQUIRED.'

export function keysModule(services: Services, auth: Auth) {
  return new Elysia({ name: 'modules.keys' })
    .use(errors)
    .use(auth.plugin)
    .model(apiKeyModels)
    .get(KEYS_PATH, async ({ account }) => ok({ keys: await listKeys(services, account.id) }), {
      human: true,
      response: { 200: 'ApiKeyListResponse', ...errorResponses() },
      detail: {
        operationId: 'listApiKeys',
        tags: ['account'],
        summary: "List your account's API keys",
        description: `The live keys, newest first: name, prefix (the start of the key, kept in clear), scopes (null: full access), created_at and last_used_at, to the minute (written at most once a minute per key). Never the key itself; revoked keys are not listed. ${WHO}`,
      },
    })
    .post(
      KEYS_PATH,
      async ({ account, body, set }) => {
        const created = await createKey(services, account.id, body, isOperator(services.config, account.email))
        set.status = 201
        set.headers['cache-control'] = 'no-store'
        return ok(created)
      },
      {
        human: true,
        body: 'CreateApiKeyRequest',
        response: { 201: 'CreatedApiKeyResponse', ...errorResponses('VALIDATION_FAILED', 'API_KEY_LIMIT_REACHED', 'CSRF_TOKEN_INVALID') },
        detail: {
          operationId: 'createApiKey',
          tags: ['account'],
          summary: 'Create an API key',
          description: `The key is in this answer only (data.key); the service keeps its hash. Without scopes (absent or null) it has the account's full access; with scopes it is held to them on every route as an Agent's token is (403 INSUFFICIENT_SCOPE elsewhere) and cannot reach the human-only routes. An operator (ADMIN_EMAILS) may give a key the scope \`admin\`, which opens the admin API to it and is no OAuth scope; anyone else asking for it is refused as for a scope that does not exist. At most ${MAX_LIVE_KEYS} live keys an account: one more is 409 API_KEY_LIMIT_REACHED. ${WHO}`,
        },
      },
    )
    .delete(`${KEYS_PATH}/:keyId`, async ({ account, params }) => ok(await revokeKey(services, account.id, params.keyId)), {
      human: true,
      params: ApiKeyParams,
      response: { 200: 'RevokedApiKeyResponse', ...errorResponses('VALIDATION_FAILED', 'API_KEY_NOT_FOUND', 'CSRF_TOKEN_INVALID') },
      detail: {
        operationId: 'revokeApiKey',
        tags: ['account'],
        summary: 'Revoke an API key',
        description: `The key is refused (401) from the next request on in this process and within ${KEY_VERDICT_TTL_MS / 1000} s in every other. A key may revoke itself: this answer is its last. Another account's key, or one already revoked, is 404 API_KEY_NOT_FOUND. ${WHO}`,
      },
    })
}
