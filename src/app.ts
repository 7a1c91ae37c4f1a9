// The management API: createApi(deps) builds the Elysia app without listening. one-process/main.ts and
// src/api.ts call .listen(); tests call app.handle(new Request(...)).
import { Elysia } from 'elysia'
import { accountModule } from './modules/account'
import { adminModule } from './modules/admin'
import { billingModule } from './modules/billing'
import { keysModule } from './modules/keys'
import { registrationModule } from './modules/registration'
import { reportsModule } from './modules/reports'
import { reputationMetrics } from './modules/reputation/metrics'
import { reputationOf } from './modules/reputation/service'
import { conversionsModule, PIXEL_PATH } from './modules/conversions'
import { dashboardModule } from './modules/dashboard'
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
import { SCOPES } from './lib/agent-access'
import { accessTokens, type AccessTokens } from './modules/agents/verdicts'
import { TOKEN_PREFIXES } from './lib/secrets'
import { linksModule } from './modules/links'
import { domainsModule } from './modules/domains'
import { tagsModule } from './modules/tags'
import { webhooksModule } from './modules/webhooks'
import { webhookMetrics } from './modules/webhooks/metrics'
import { webhookOutbox } from './modules/webhooks/outbox'
import { statsModule } from './modules/stats'
import { API_KEY_PREFIX, apiKeyVerdicts } from './modules/keys/verdicts'
import { GUEST_TOKEN_PREFIX, guestPrincipal } from './modules/guest/service'
import { markAccountLinksPro } from './modules/links/cache'
import { agentCalls, type AgentCalls, type Hold } from './plugins/agent-calls'
import { createAuth, type Auth } from './plugins/auth'
import { clientIp } from './plugins/client'
import { bodyPlugin } from './plugins/body'
import { methodNotAllowed } from './plugins/method-not-allowed'
import { inProcess } from './plugins/on-behalf'
import { queryPlugin } from './plugins/query'
import { requestLog } from './plugins/request-log'
import { docs } from './plugins/docs'
import { errors } from './plugins/errors'
import { apiMetrics, countedAudit, metricsPlugin } from './plugins/metrics'
import { createServices, type ApiDeps, type Services } from './services'

export type { ApiDeps } from './services'

const ACCESS_TOKEN_PREFIX = TOKEN_PREFIXES.access

/**
 * What follows an Agent's authenticated call (plugins/agent-calls.ts), with this app's parts: the hold
 * keeps a held call as an approval (default: without previewing it first), the audit recorder writes
 * the events.
 */
export function apiAgentCalls(services: Services, hold: Hold = (call) => holdCall(services, call)): AgentCalls {
  return agentCalls({
    resourceMetadataUrl: protectedResourceMetadataUrl(services.config),
    hold,
    audit: services.audit,
    clientIp: (request, server) => clientIp(services, request, server),
  })
}

/** One authenticator per token prefix; the auth plugin itself knows none. */
export function apiAuth(services: Services, calls: AgentCalls = apiAgentCalls(services), agentTokens: AccessTokens = accessTokens(services)): Auth {
  const keys = apiKeyVerdicts(services)
  return createAuth(
    [
      { prefix: GUEST_TOKEN_PREFIX, kind: 'guest', authenticate: (token) => guestPrincipal(services, token) },
      { prefix: API_KEY_PREFIX, kind: 'account', authenticate: (token) => keys.principal(token) },
      { prefix: ACCESS_TOKEN_PREFIX, kind: 'account', authenticate: (token) => agentTokens.principal(token) },
    ],
    {
      resourceMetadataUrl: protectedResourceMetadataUrl(services.config),
      session: (request) => sessionPrincipal(services, request),
      agentCalls: calls,
    },
  )
}

/** /mcp's authenticator: at_ tokens whose audience is the issuer or <issuer>/mcp (modules/agents/audience.ts). */
function mcpAuth(services: Services, calls: AgentCalls, agentTokens: AccessTokens): Auth {
  const mcpTokens = { prefix: ACCESS_TOKEN_PREFIX, kind: 'account' as const, authenticate: (token: string) => agentTokens.principal(token, 'mcp') }
  return createAuth([mcpTokens], { resourceMetadataUrl: protectedResourceMetadataUrl(services.config), agentCalls: calls })
}

export function createApi(deps: ApiDeps) {
  const services = createServices(deps)
  // Counted on their way in: every Agent call reaches the audit once, through REST or MCP.
  const metrics = apiMetrics(services)
  // The checks are made on first use, so a test may make them first with stand-ins of the services.
  reputationMetrics(metrics.registry, () => reputationOf(services))
  webhookMetrics(metrics.registry)
  services.destinationsWritten = (links) => reputationOf(services).checkLater(links)
  services.webhookOutbox = webhookOutbox
  services.audit = countedAudit(services.audit, metrics)
  // A held call is previewed through the app itself first (approvals/index.ts), hence the late binding.
  // The one in-process path (plugins/on-behalf.ts): MCP tools, approved calls and held calls' previews
  // run through the app itself, as their caller; hence the late binding to `app`.
  const callAs = inProcess((request) => app.handle(request), services.config.publicApiUrl)
  const agentTokens = accessTokens(services)
  const calls = apiAgentCalls(services, (call) => holdCall(services, call, previewThrough(callAs)))
  const auth = apiAuth(services, calls, agentTokens)
  const app: Elysia = new Elysia({ name: 'api' })
  const execute = executeThrough(callAs)
  return (
    app
      .decorate('services', services)
      // First, so every answer (errors and other plugins' early ones included) carries the request id.
      .use(requestLog())
      .use(metricsPlugin(metrics, services.config.metricsToken, deps.extraMetrics))
      .use(calls.plugin)
      .use(methodNotAllowed(() => app.routes))
      .use(errors)
      .use(bodyPlugin({ lenientQueryRoutes: [PIXEL_PATH], formPaths: [...OAUTH_FORM_PATHS, ...SIGNIN_FORM_PATHS, CONSENT_PAGE_PATH, `${APPROVAL_PAGE_PATH}/*`], arrayPaths: [MCP_PATH] }))
      // Repeated parameters and dry_run, decided once per request from the routes' own declarations.
      .use(queryPlugin({ routes: () => app.routes, ownRules: [PIXEL_PATH, AUTHORIZE_PATH] }))
      .use(docs({ oauthScopes: { ...SCOPES } }))
      .use(healthModule(services, deps.extraReadiness))
      .use(guestModule(services))
      .use(accountModule(services, auth))
      .use(billingModule(services, auth, { onUpgraded: (accountId) => markAccountLinksPro(services, accountId) }))
      .use(registrationModule(services, auth))
      .use(keysModule(services, auth))
      .use(reportsModule(services))
      .use(adminModule(services))
      .use(linksModule(services, auth))
      .use(tagsModule(services, auth))
      .use(statsModule(services, auth))
      .use(domainsModule(services, auth))
      .use(webhooksModule(services, auth))
      .use(conversionsModule(services, auth))
      .use(oauthModule(services, auth))
      .use(agentsModule(services, auth))
      .use(approvalsModule(services, auth, execute))
      .use(approvalPageModule(services, execute))
      .use(signinModule(services))
      .use(dashboardModule(services))
      .use(consentPageModule(services))
      .use(mcpModule(services, mcpAuth(services, calls, agentTokens), { callAs, resourceMetadataUrl: protectedResourceMetadataUrl(services.config) }))
      .use(internalModule(services))
  )
}

export type Api = ReturnType<typeof createApi>
