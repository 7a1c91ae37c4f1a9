// The OAuth 2.1 authorization server for machine clients. /oauth/* and /.well-known/* answer in their
// RFCs' shapes (top-level fields, lower-case error codes, no `data` envelope); the human's side of
// consent is ordinary API (`/api/v1/oauth/*`, API key or signed-in session, ErrorResponse bodies).
import { Elysia } from 'elysia'
import { escapeHtml, htmlPage } from '../../lib/html'
import type { Auth } from '../../plugins/auth'
import { enforceIpLimit } from '../../plugins/client'
import { errorResponses, errors } from '../../plugins/errors'
import type { Services } from '../../services'
import { authorize } from './authorize'
import { consentView, decideConsent } from './consent'
import { oauthCors } from './cors'
import { AUTHORIZATION_SERVER_PATH, authorizationServerMetadata, discoveryModels, PROTECTED_RESOURCE_PATH, protectedResourceMetadata } from './discovery'
import { oauthFlowModels, oauthModels } from './model'
import { registerClient } from './register'
import { SCOPES } from '../../lib/agent-access'
import { revokeRequest, tokenRequest } from './tokens'

/**
 * Registrations per client IP. A native host registers once per install, but hosted hosts (claude.ai,
 * ChatGPT) register each of their users from a few addresses; unused clients are deleted after 24 h.
 */
export const REGISTER_RATE = { limit: 600, windowMs: 3_600_000 } as const
/** Token and revocation requests per client IP: ample for clients, a wall for guessing codes. */
export const TOKEN_RATE = { limit: 300, windowMs: 60_000 } as const

/** Authorization requests per client IP: a person opens a few; each may fetch a client metadata document. */
export const AUTHORIZE_RATE = { limit: 60, windowMs: 60_000 } as const

/** The paths whose POST is form-encoded (RFC 6749 / RFC 7009); the body plugin parses them. */
export const OAUTH_FORM_PATHS = ['/oauth/token', '/oauth/revoke'] as const

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' }
const DISCOVERY_HEADERS = { 'cache-control': 'public, max-age=300' }

/** The page for an authorization request we may not redirect for (unknown client, wrong redirect_uri). */
function authorizeErrorPage(error: string, description: string): Response {
  return htmlPage(
    'Authorization error',
    `<main><h1>This authorization request cannot be completed</h1><p><code>${escapeHtml(error)}</code>: ${escapeHtml(description)}</p><p>Nothing was sent back to the application. Go back to it and start again; if this keeps happening, its developer has to fix its OAuth settings.</p></main>`,
    { status: 400 },
  )
}

const form = (schema: string, description: string) => ({
  required: true,
  description,
  content: { 'application/x-www-form-urlencoded': { schema: { $ref: `#/components/schemas/${schema}` } } },
})

export function oauthModule(services: Services, auth: Auth) {
  const scopeList = Object.entries(SCOPES)
    .map(([scope, words]) => `${scope} (${words})`)
    .join('; ')
  return new Elysia({ name: 'modules.oauth' })
    .use(errors)
    .use(auth.plugin)
    .use(oauthCors())
    .model(oauthModels)
    .model(oauthFlowModels)
    .model(discoveryModels)
    .get(
      AUTHORIZATION_SERVER_PATH,
      ({ set }) => {
        Object.assign(set.headers, DISCOVERY_HEADERS)
        return authorizationServerMetadata(services.config)
      },
      {
        response: { 200: 'AuthorizationServerMetadata' },
        detail: { operationId: 'getAuthorizationServerMetadata', tags: ['oauth'], summary: 'OAuth authorization server metadata (RFC 8414)', security: [], 'x-oauth': true } as Record<string, unknown>,
      },
    )
    .get(
      PROTECTED_RESOURCE_PATH,
      ({ set }) => {
        Object.assign(set.headers, DISCOVERY_HEADERS)
        return protectedResourceMetadata(services.config)
      },
      {
        response: { 200: 'ProtectedResourceMetadata' },
        detail: {
          operationId: 'getProtectedResourceMetadata',
          tags: ['oauth'],
          summary: 'Protected resource metadata (RFC 9728)',
          description:
            "Named by every 401 of the REST API in WWW-Authenticate (resource_metadata). The REST API's resource identifier is the issuer: a token for it works on the REST API and at /mcp.",
          security: [],
          'x-oauth': true,
        } as Record<string, unknown>,
      },
    )
    .get(
      `${PROTECTED_RESOURCE_PATH}/mcp`,
      ({ set }) => {
        Object.assign(set.headers, DISCOVERY_HEADERS)
        return protectedResourceMetadata(services.config, 'mcp')
      },
      {
        response: { 200: 'ProtectedResourceMetadata' },
        detail: {
          operationId: 'getMcpProtectedResourceMetadata',
          tags: ['oauth'],
          summary: 'Protected resource metadata for /mcp (RFC 9728 path-inserted)',
          description: 'resource is <issuer>/mcp (RFC 9728 3.3), which MCP hosts then ask for: a token for it is accepted at /mcp only. A token for the issuer works at /mcp too.',
          security: [],
          'x-oauth': true,
        } as Record<string, unknown>,
      },
    )
    .post(
      '/oauth/register',
      async ({ body, request, server, set }) => {
        await enforceIpLimit(services, request, server, 'oauth-register', REGISTER_RATE)
        const client = await registerClient(services, body)
        set.status = 201
        set.headers['cache-control'] = 'no-store'
        return client
      },
      {
        response: { 201: 'ClientRegistration', 400: 'OAuthErrorResponse', 429: 'OAuthErrorResponse' },
        detail: {
          operationId: 'registerOAuthClient',
          tags: ['oauth'],
          summary: 'Register an OAuth client (RFC 7591)',
          description: `Public clients only: any token_endpoint_auth_method is registered as "none" and the answer says so. redirect_uris: https, http on a loopback host (any port), or a private-use scheme (cursor://…, com.example.app:/…; not javascript:, data:, file:, vbscript:, blob:, about:); never a fragment; one refused URI refuses the registration. grant_types this server lacks (jwt-bearer, device_code, client_credentials) are dropped and the answer lists what was registered; without authorization_code the registration is refused. Errors are RFC 7591 bodies: 400 invalid_redirect_uri or invalid_client_metadata. ${REGISTER_RATE.limit} registrations an hour per client IP (429 with Retry-After). A client may instead use the https URL of its Client ID Metadata Document as client_id, without registering.`,
          security: [],
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/ClientRegistrationRequest' } } } },
          'x-oauth': true,
        } as Record<string, unknown>,
      },
    )
    .get(
      '/oauth/authorize',
      async ({ request, server }) => {
        await enforceIpLimit(services, request, server, 'oauth-authorize', AUTHORIZE_RATE)
        const outcome = await authorize(services, new URL(request.url).searchParams)
        if (outcome.kind === 'page') return authorizeErrorPage(outcome.error, outcome.description)
        return new Response(null, { status: 302, headers: { location: outcome.location, ...NO_STORE } })
      },
      {
        detail: {
          operationId: 'authorize',
          tags: ['oauth'],
          summary: 'Start an authorization (OAuth 2.1, PKCE S256)',
          description:
            "Opened in the human's browser. A good request becomes a consent request (10 minutes) and the browser goes to /consent?request_id=oreq_…, where the human signs in and decides. Until client_id and redirect_uri are known good, an error is a 400 HTML page and nothing is sent to the redirect URI; after that, errors go back to the redirect URI with error, error_description, state and iss (RFC 9207). code_challenge with code_challenge_method=S256 is required (plain is refused); resource (RFC 8707), when sent, must be the issuer or <issuer>/mcp (compared after RFC 3986 normalisation: http://host/ is http://host); a repeated parameter is invalid_request. " +
            `${AUTHORIZE_RATE.limit} requests a minute per client IP (429). Scopes: ` +
            scopeList +
            '.',
          security: [],
          parameters: [
            { name: 'response_type', in: 'query', required: true, schema: { type: 'string', enum: ['code'] } },
            { name: 'client_id', in: 'query', required: true, schema: { type: 'string' }, example: 'cli_3q2V8mJcQ1aXy0bq9Wc2rA' },
            {
              name: 'redirect_uri',
              in: 'query',
              required: false,
              description: 'Exactly as registered (the port of an http loopback URI may differ); required when the client registered several',
              schema: { type: 'string' },
              example: 'http://127.0.0.1:33418/callback',
            },
            { name: 'code_challenge', in: 'query', required: true, schema: { type: 'string', minLength: 43, maxLength: 128 }, example: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM' },
            { name: 'code_challenge_method', in: 'query', required: true, schema: { type: 'string', enum: ['S256'] } },
            { name: 'scope', in: 'query', required: false, description: 'Space-separated; absent: the scopes the client registered', schema: { type: 'string' }, example: 'links:read links:write' },
            { name: 'state', in: 'query', required: false, schema: { type: 'string', maxLength: 1024 }, example: 'af0ifjsldkj' },
            { name: 'resource', in: 'query', required: false, description: 'RFC 8707; must be the issuer', schema: { type: 'string' } },
          ],
          responses: {
            302: { description: 'To the consent page (or back to the client with an error)', headers: { Location: { schema: { type: 'string' } } } },
            400: { description: 'An HTML page: unknown client_id or a redirect_uri it did not register (never a redirect)', content: { 'text/html': { schema: { type: 'string' } } } },
          },
          'x-oauth': true,
        } as Record<string, unknown>,
      },
    )
    .post(
      '/oauth/token',
      async ({ body, request, server, set }) => {
        await enforceIpLimit(services, request, server, 'oauth-token', TOKEN_RATE)
        Object.assign(set.headers, NO_STORE)
        return tokenRequest(services, (body ?? {}) as Record<string, string | string[]>, request.headers.get('authorization'))
      },
      {
        response: { 200: 'TokenResponse', 400: 'OAuthErrorResponse', 401: 'OAuthErrorResponse', 429: 'OAuthErrorResponse' },
        detail: {
          operationId: 'token',
          tags: ['oauth'],
          summary: 'Exchange a code or a refresh token (RFC 6749)',
          description:
            'authorization_code: the code is used once, within 60 s, by its client, with its redirect_uri and the PKCE verifier; a code used twice revokes the tokens its first use issued. refresh_token: rotation, each rt_ works once; presenting a used one revokes every token of its grant. Access tokens live 900 s. A refresh token is issued when the client registered the refresh_token grant or was granted offline_access. Errors per RFC 6749 5.2 (invalid_request, invalid_client, invalid_grant, unsupported_grant_type, invalid_scope, invalid_target). Answers carry Cache-Control: no-store.',
          security: [],
          requestBody: form('TokenRequest', 'application/x-www-form-urlencoded, as RFC 6749 requires'),
          'x-oauth': true,
        } as Record<string, unknown>,
      },
    )
    .post(
      '/oauth/revoke',
      async ({ body, request, server }) => {
        await enforceIpLimit(services, request, server, 'oauth-token', TOKEN_RATE)
        await revokeRequest(services, (body ?? {}) as Record<string, string | string[]>, request.headers.get('authorization'))
        return new Response(null, { status: 200, headers: NO_STORE })
      },
      {
        response: { 400: 'OAuthErrorResponse', 401: 'OAuthErrorResponse', 429: 'OAuthErrorResponse' },
        detail: {
          operationId: 'revokeToken',
          tags: ['oauth'],
          summary: 'Revoke a token (RFC 7009)',
          description:
            'An at_ token alone, or an rt_ token with every token of its grant. 200 with an empty body, also for an unknown or already revoked token; a token issued to another client is 401 invalid_client. Every process refuses a revoked token within a second.',
          security: [],
          requestBody: form('RevokeRequest', 'application/x-www-form-urlencoded, as RFC 7009 requires'),
          responses: { 200: { description: 'Revoked (or nothing to revoke)' } },
          'x-oauth': true,
        } as Record<string, unknown>,
      },
    )
    .get('/api/v1/oauth/request/:requestId', async ({ account, params }) => ({ success: true as const, data: await consentView(services, account.id, params.requestId), meta: {} }), {
      human: true,
      response: { 200: 'ConsentRequestResponse', ...errorResponses('VALIDATION_FAILED', 'OAUTH_REQUEST_NOT_FOUND', 'HUMAN_ONLY') },
      detail: {
        operationId: 'getOAuthRequest',
        tags: ['oauth'],
        summary: 'Read a consent request (for the human)',
        description:
          'What the client asks for: the client, its redirect URI, the scopes, and the status (pending, approved, denied, expired after 10 minutes). For the human owner only: an API key or the signed-in session; an at_ token gets 403 HUMAN_ONLY. A request decided by another account is 404.',
        parameters: [{ name: 'requestId', in: 'path', required: true, schema: { type: 'string' }, example: 'oreq_Vb0c3Xw9Lk2Qm8Rt5Yp1Za' }],
      },
    })
    .post(
      '/api/v1/oauth/approve',
      async ({ account, body }) => ({
        success: true as const,
        data: await decideConsent(services, account.id, { request_id: body.request_id, approve: body.approve ?? true, ...(body.scopes && { scopes: body.scopes }) }),
        meta: {},
      }),
      {
        human: true,
        body: 'ConsentApproveRequest',
        response: { 200: 'ConsentApproveResponse', ...errorResponses('OAUTH_REQUEST_NOT_FOUND', 'OAUTH_REQUEST_DECIDED', 'HUMAN_ONLY', 'CSRF_TOKEN_INVALID') },
        detail: {
          operationId: 'approveOAuthRequest',
          tags: ['oauth'],
          summary: 'Approve or deny a consent request (for the human)',
          description:
            "approve (default true) with an optional subset of the requested scopes. The answer's redirect_to is where the human's browser goes next: the client's redirect URI with code, state and iss, or with error=access_denied. Approving creates the Agent of (this account, this client), or widens the scopes of the one it has. Once decided or expired the request is 409 OAUTH_REQUEST_DECIDED. With the session cookie, send its CSRF token in X-CSRF-Token.",
        },
      },
    )
}
