// The management API: createApi(deps) builds the Elysia app without listening. src/main.ts and
// src/api.ts call .listen(); tests call app.handle(new Request(...)).
import { Elysia } from 'elysia'
import { accountModule } from './modules/account'
import { conversionsModule, PIXEL_PATH } from './modules/conversions'
import { guestModule } from './modules/guest'
import { healthModule } from './modules/health'
import { internalModule } from './modules/internal'
import { agentsModule } from './modules/agents'
import { approvalsModule, executeThrough, previewThrough } from './modules/approvals'
import { approvalPageModule } from './modules/approvals/page'
import { APPROVAL_PAGE_PATH } from './modules/approvals/service'
import { holdCall } from './modules/approvals/service'
import { MCP_PATH, mcpModule } from './mcp'
import { OAUTH_FORM_PATHS, oauthModule } from './modules/oauth'
import { AUTHORIZE_PATH, CONSENT_PAGE_PATH } from './modules/oauth/authorize'
import { consentPageModule } from './modules/oauth/consent-page'
import { SIGNIN_FORM_PATHS, signinModule } from './modules/signin'
import { sessionPrincipal } from './modules/signin/service'
import { protectedResourceMetadataUrl } from './modules/oauth/discovery'
import { SCOPES } from './modules/agents/scopes'
import { accessTokens, type AccessTokens } from './modules/agents/verdicts'
import { TOKEN_PREFIXES } from './lib/secrets'
import { linksModule } from './modules/links'
import { domainsModule } from './modules/domains'
import { tagsModule } from './modules/tags'
import { statsModule } from './modules/stats'
import { API_KEY_PREFIX, apiKeyPrincipal } from './modules/account/keys'
import { GUEST_TOKEN_PREFIX, guestPrincipal } from './modules/guest/service'
import { markAccountLinksPro } from './modules/links/cache'
import { createAuth, type Auth, type AuthOptions } from './plugins/auth'
import { clientIp } from './plugins/client'
import { onBehalfOf } from './plugins/on-behalf'
import { bodyPlugin } from './plugins/body'
import { methodNotAllowed } from './plugins/method-not-allowed'
import { isDryRun, queryPlugin } from './plugins/query'
import { docs } from './plugins/docs'
import { errors } from './plugins/errors'
import { createServices, type ApiDeps, type Services } from './services'

export type { ApiDeps } from './services'

const ACCESS_TOKEN_PREFIX = TOKEN_PREFIXES.access

/**
 * One authenticator per token prefix; the auth plugin itself knows none. `hold` keeps an Agent's call
 * for approval (default: without previewing it first).
 */
export function apiAuth(services: Services, hold: AuthOptions['hold'] = (call) => holdCall(services, call), agentTokens: AccessTokens = accessTokens(services)): Auth {
  return createAuth(
    [
      { prefix: GUEST_TOKEN_PREFIX, kind: 'guest', authenticate: (token) => guestPrincipal(services, token) },
      { prefix: API_KEY_PREFIX, kind: 'account', authenticate: (token) => apiKeyPrincipal(services, token) },
      { prefix: ACCESS_TOKEN_PREFIX, kind: 'account', authenticate: (token) => agentTokens.principal(token) },
    ],
    {
      resourceMetadataUrl: protectedResourceMetadataUrl(services.config),
      session: (request) => sessionPrincipal(services, request),
      hold,
    },
  )
}

/** /mcp's authenticator: at_ tokens whose audience is the issuer or <issuer>/mcp (modules/agents/audience.ts). */
function mcpAuth(services: Services, agentTokens: AccessTokens): Auth {
  const mcpTokens = { prefix: ACCESS_TOKEN_PREFIX, kind: 'account' as const, authenticate: (token: string) => agentTokens.principal(token, 'mcp') }
  return createAuth([mcpTokens], { resourceMetadataUrl: protectedResourceMetadataUrl(services.config) })
}

/**
 * One audit event per Agent (at_) call, accepted or refused, after its answer is sent: the recorder
 * only queues it (src/modules/audit), so the call is never slowed or failed by its audit.
 */
function auditAgentCalls(services: Services, auth: Auth) {
  return new Elysia({ name: 'audit.agent-calls' }).onAfterResponse({ as: 'global' }, ({ request, set, server, responseValue }) => {
    const call = auth.agentCall(request)
    if (!call || !services.audit) return
    const status = responseValue instanceof Response ? responseValue.status : typeof set.status === 'number' ? set.status : 200
    const url = new URL(request.url)
    services.audit.record({
      accountId: call.accountId,
      agentId: call.agentId,
      // A tool's call to its REST route is marked in process (plugins/on-behalf.ts); anything else is REST.
      via: onBehalfOf(request)?.via ?? 'rest',
      operation: call.operation,
      method: request.method,
      path: url.pathname,
      status,
      scopesUsed: [...call.scopes],
      approvalId: call.approvalId,
      // Only a preview its route honoured (nothing written) is a dry run: plugins/query.ts decided it.
      dryRun: isDryRun(request),
      durationMs: performance.now() - call.started,
      ip: clientIp(services, request, server),
      at: call.at,
    })
  })
}

export function createApi(deps: ApiDeps) {
  const services = createServices(deps)
  // A held call is previewed through the app itself first (approvals/index.ts), hence the late binding.
  const agentTokens = accessTokens(services)
  const auth = apiAuth(services, (call) => holdCall(services, call, previewThrough((request) => app.handle(request))), agentTokens)
  const app: Elysia = new Elysia({ name: 'api' })
  // An approved Agent call runs through the app itself, as the Agent (approvals/index.ts).
  const execute = executeThrough(services, (request) => app.handle(request))
  return app
    .decorate('services', services)
    .use(auditAgentCalls(services, auth))
    .use(methodNotAllowed(() => app.routes))
    .use(errors)
    .use(bodyPlugin({ lenientQueryRoutes: [PIXEL_PATH], formPaths: [...OAUTH_FORM_PATHS, ...SIGNIN_FORM_PATHS, CONSENT_PAGE_PATH, `${APPROVAL_PAGE_PATH}/*`], arrayPaths: [MCP_PATH] }))
    // Repeated parameters and dry_run, decided once per request from the routes' own declarations.
    .use(queryPlugin({ routes: () => app.routes, ownRules: [PIXEL_PATH, AUTHORIZE_PATH] }))
    .use(docs({ oauthScopes: { ...SCOPES } }))
    .use(healthModule(services))
    .use(guestModule(services))
    .use(accountModule(services, auth, { onUpgraded: (accountId) => markAccountLinksPro(services, accountId) }))
    .use(linksModule(services, auth))
    .use(tagsModule(services, auth))
    .use(statsModule(services, auth))
    .use(domainsModule(services, auth))
    .use(conversionsModule(services, auth))
    .use(oauthModule(services, auth))
    .use(agentsModule(services, auth))
    .use(approvalsModule(services, auth, execute))
    .use(approvalPageModule(services, execute))
    .use(signinModule(services))
    .use(consentPageModule(services))
    .use(mcpModule(services, mcpAuth(services, agentTokens), { dispatch: (request) => app.handle(request) }))
    .use(internalModule(services))
}

export type Api = ReturnType<typeof createApi>
