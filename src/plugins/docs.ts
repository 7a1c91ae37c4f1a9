// The OpenAPI document and its UI: the only import of @elysiajs/swagger. UI at /swagger, JSON at
// /swagger/json. Routes marked `detail.hide` (internal ones) are left out. The plugin's output goes
// through normalizeDocument (openapi-document.ts) before it is served.
//
// The document is made once and served as that text from then on. The plugin's output holds the live
// route schemas, and Elysia changes them when it compiles a route (a response object schema gains
// `additionalProperties: false`), so a document made from them would differ before and after traffic,
// and by which routes this process (or another app in it, as in the tests) has served. Compiling every
// route before the one read fixes the state: the document is what every compiled route validates,
// whatever ran first, and equals client/openapi.json.
import { swagger } from '@elysiajs/swagger'
import { Elysia } from 'elysia'
import { ERROR_STATUS } from './errors'
import { normalizeDocument } from './openapi-document'
import { swaggerUi } from './swagger-ui'

export { normalizeDocument }

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The version of the API's contract the document describes. */
export const API_DOCUMENT_VERSION = '1.2.0'
export const DOCS_PATH = '/swagger'
export const DOCS_JSON_PATH = `${DOCS_PATH}/json`

export const API_TAGS = [
  { name: 'guest', description: 'Start without signing up' },
  { name: 'account', description: 'Plan, usage and features' },
  { name: 'links', description: 'Create, list, update and delete short links; check aliases' },
  { name: 'tags', description: 'Label links' },
  { name: 'domains', description: 'Custom domains, verified through DNS' },
  { name: 'conversions', description: 'Report sign-ups, leads and sales of a click (Pro attribution)' },
  { name: 'oauth', description: 'OAuth 2.1 for machine clients (RFC shapes, no data envelope)' },
  { name: 'webhooks', description: 'Signed events pushed to your URL (Standard Webhooks): links created, updated and deleted, and their deliveries' },
  { name: 'agents', description: 'Identities of machine clients: scopes, tokens, the kill switch (for the human)' },
  { name: 'mcp', description: "The MCP endpoint: the API's operations as tools for an AI host (Streamable HTTP, OAuth)" },
  { name: 'sign-in', description: 'Pages for people: sign in with a mailed code, GitHub or Google; the session cookie' },
  { name: 'billing', description: "Checkout pages for people and the payment provider's webhook" },
  { name: 'reports', description: 'Report an abusive link; no account needed' },
  { name: 'admin', description: 'For the operators of this instance (ADMIN_EMAILS): reports, link takedowns, host bans, account suspension, the audit; 404 to everyone else' },
  { name: 'system', description: 'Health, and whether a host may get a certificate (GET /tls/ask)' },
]

export interface DocsOptions {
  /** OAuth scopes and what each allows (the oauth2 security scheme's flows list them). */
  oauthScopes?: Record<string, string>
}

/** Elysia serves /swagger/json/ by the same route: it must get the same document. */
const isDocumentPath = (path: string) => path.replace(/\/+$/, '') === DOCS_JSON_PATH

type GlobalRoutes = { getGlobalRoutes(): { compile(): unknown }[] }

const documentResponse = (text: string) => new Response(text, { headers: { 'content-type': 'application/json' } })

export function docs({ oauthScopes = {} }: DocsOptions = {}) {
  const plugin = new Elysia({ name: 'plugins.docs' })
  /** The served document, made on the first read (every route is registered by then). */
  let served: string | undefined
  return (
    plugin
      // Local hooks: they apply to the swagger routes registered below, nothing else.
      .onBeforeHandle(({ path }) => {
        if (!isDocumentPath(path)) return
        if (served !== undefined) return documentResponse(served)
        // What a first request to each route would do, all at once (see the file comment). Once used,
        // a plugin's getGlobalRoutes is the whole app's (protected in the types; @elysiajs/swagger
        // reads it the same way).
        for (const route of (plugin as unknown as GlobalRoutes).getGlobalRoutes()) route.compile()
      })
      .onAfterHandle(({ path, response }) => {
        if (!isDocumentPath(path) || !isObject(response)) return
        served ??= JSON.stringify(normalizeDocument(response))
        return documentResponse(served)
      })
      // The page and its assets come from swagger-ui-dist (swagger-ui.ts), never from a CDN.
      .use(swaggerUi({ path: DOCS_PATH, specUrl: DOCS_JSON_PATH, title: 'Link service API' }))
      // The plugin only generates the document. It has no option to leave its CDN page out: it always
      // registers GET `path` (the page) and then GET `specPath` (the JSON). With both the same path the
      // second replaces the first inside the plugin (Elysia's add() replaces a route of the same method
      // and path), so only the JSON route reaches this app. swagger-ui.test.ts checks that.
      .use(
        swagger({
          path: DOCS_JSON_PATH,
          specPath: DOCS_JSON_PATH,
          provider: 'swagger-ui',
          exclude: [/^\/internal\//],
          // Its default leaves out every path with a dot (static files): /.well-known/* are API.
          excludeStaticFile: false,
          documentation: {
            // 3.1: JSON Schema 2020-12, so `examples` arrays and `type: "null"` in the schemas are valid.
            openapi: '3.1.0',
            info: {
              title: 'Link service API',
              version: API_DOCUMENT_VERSION,
              description: `Short links, guest onboarding and account status. Every error has the ErrorResponse shape: a stable \`error\` code (${Object.keys(ERROR_STATUS).join(', ')}) and a \`hint\`. Every 429 carries Retry-After.`,
            },
            tags: API_TAGS,
            components: {
              securitySchemes: {
                bearerAuth: {
                  type: 'http',
                  scheme: 'bearer',
                  description: 'A guest token (gt_…) from POST /api/v1/guest/token, an API key (mk_…), or an OAuth access token (at_…) within its scopes',
                },
                oauth2: {
                  type: 'oauth2',
                  description: 'OAuth 2.1 for machine clients: PKCE (S256) required, public clients only; discovery at /.well-known/oauth-authorization-server.',
                  flows: { authorizationCode: { authorizationUrl: '/oauth/authorize', tokenUrl: '/oauth/token', refreshUrl: '/oauth/token', scopes: oauthScopes } },
                },
                sessionCookie: {
                  type: 'apiKey',
                  in: 'cookie',
                  name: 'ls_session',
                  description:
                    "The signed-in human (GET /signin): `ls_session`, named `__Host-ls_session` when the service is served over https. Accepted wherever an API key is (the dashboard's credential) when no Authorization header is sent; state-changing calls also send the session's X-CSRF-Token",
                },
              },
            },
          },
        }),
      )
  )
}
