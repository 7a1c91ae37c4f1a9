// Custom domains: GET/POST /api/v1/domains, POST /api/v1/domains/{hostname}/verify,
// PATCH and DELETE /api/v1/domains/{hostname}; an API key, or an Agent's at_ token within its domains scopes.
// Plus GET /internal/domains, the verified set the redirector keeps in memory (shared secret, hidden
// from Swagger like /internal/resolve), and GET /tls/ask, Caddy's on-demand TLS question (no credential;
// documented under "system" beside /health: an operator points Caddy at it).
import { Elysia } from 'elysia'
import { createTxtResolver, type TxtResolver } from '../../dns/resolver'
import type { Auth } from '../../plugins/auth'
import { ApiError, errorResponses, errors } from '../../plugins/errors'
import { idempotencyPlugin } from '../../plugins/idempotency'
import type { Services } from '../../services'
import type { AccountPrincipal } from '../../plugins/auth'
import { accountMeta } from '../account/meta'
import { internalSecretGuard } from '../../plugins/internal-secret'
import { domainModels, HostnameParams, TlsAskQuery } from './model'
import { addDomain, countDomains, domainUsage, listDomains, removeDomain, setRootUrl, verifiedDomains, verifyDomain } from './service'
import { servedHosts } from './tls-ask'

/** The account's meta with its custom domains against the plan's allowance. */
function meta(services: Services, account: AccountPrincipal, total: number, hint?: string) {
  return accountMeta(services, { plan: account.plan, usage: domainUsage(services.config.limits, account.plan, total), hint })
}

const verifyPath = (hostname: string) => `/api/v1/domains/${hostname}/verify`

export function domainsModule(services: Services, auth: Auth, resolver: TxtResolver = createTxtResolver(services.config)) {
  const hosts = servedHosts(services)
  return new Elysia({ name: 'modules.domains' })
    .use(errors)
    .use(auth.plugin)
    .use(idempotencyPlugin(services))
    .model(domainModels)
    .get(
      '/api/v1/domains',
      async ({ account }) => {
        const domains = await listDomains(services, account.id)
        return { success: true, data: { domains, total: domains.length }, meta: meta(services, account, domains.length) }
      },
      {
        account: { scopes: ['domains:read'] },
        response: { 200: 'DomainListResponse', ...errorResponses() },
        detail: { operationId: 'listDomains', tags: ['domains'], summary: 'List your custom domains', description: 'Each with its verification state and the TXT record that proves control.' },
      },
    )
    .post(
      '/api/v1/domains',
      async ({ account, body, set }) => {
        const { domain, total } = await addDomain(services, account, body.hostname)
        set.status = 201
        const hint = `Create a TXT record at ${domain.verification.name} with the value "${domain.verification.value}", then call POST ${verifyPath(domain.hostname)}.`
        return { success: true, data: domain, meta: meta(services, account, total, hint) }
      },
      {
        account: { scopes: ['domains:write'], operation: 'domains.change' },
        idempotent: true,
        body: 'AddDomainRequest',
        response: { 201: 'DomainResponse', ...errorResponses('INVALID_DOMAIN', 'DOMAIN_RESERVED', 'DOMAIN_LIMIT_REACHED', 'DOMAIN_TAKEN') },
        detail: {
          operationId: 'addDomain',
          tags: ['domains'],
          summary: 'Add a custom domain',
          description:
            "The domain starts unverified; create the TXT record of `data.verification` and call the verify endpoint. Free includes 1 custom domain and Pro 10 (403 DOMAIN_LIMIT_REACHED beyond). A name registered by any account is 409 DOMAIN_TAKEN, except an unverified claim older than 72 hours, which is taken over. IP addresses, ports, single labels and the service's own hosts are refused (400).",
        },
      },
    )
    .post(
      '/api/v1/domains/:hostname/verify',
      async ({ account, params }) => {
        const domain = await verifyDomain(services, resolver, account.id, params.hostname)
        return { success: true, data: domain, meta: meta(services, account, await countDomains(services, account.id)) }
      },
      {
        account: { scopes: ['domains:write'], operation: 'domains.change' },
        params: HostnameParams,
        response: { 200: 'DomainResponse', ...errorResponses('VALIDATION_FAILED', 'INVALID_DOMAIN', 'DOMAIN_NOT_VERIFIED', 'DOMAIN_NOT_FOUND', 'SERVICE_UNAVAILABLE') },
        detail: {
          operationId: 'verifyDomain',
          tags: ['domains'],
          summary: 'Verify a custom domain through DNS',
          description:
            'Looks up the TXT record; 200 once it carries the expected value (links on the domain then redirect), else 400 DOMAIN_NOT_VERIFIED whose hint and data show what was expected and what was found. An already verified domain is answered without a lookup. 503 when DNS does not answer in time.',
        },
      },
    )
    .patch(
      '/api/v1/domains/:hostname',
      async ({ account, params, body }) => {
        const domain = await setRootUrl(services, account.id, params.hostname, body.root_url)
        return { success: true, data: domain, meta: meta(services, account, await countDomains(services, account.id)) }
      },
      {
        account: { scopes: ['domains:write'], operation: 'domains.change' },
        idempotent: true,
        params: HostnameParams,
        body: 'UpdateDomainRequest',
        response: { 200: 'DomainResponse', ...errorResponses('VALIDATION_FAILED', 'INVALID_DOMAIN', 'INVALID_URL', 'DESTINATION_LOOPS', 'DOMAIN_NOT_FOUND') },
        detail: {
          operationId: 'updateDomain',
          tags: ['domains'],
          summary: "Set where the domain's root leads",
          description:
            "`root_url` is where a visit to `https://<hostname>/` is redirected (302) once the domain is verified; `null` restores the neutral page that says the address serves short links. The URL follows a link destination's rules: http or https, and not a host this service serves (400 DESTINATION_LOOPS).",
        },
      },
    )
    .delete(
      '/api/v1/domains/:hostname',
      async ({ account, params }) => {
        const { hostname, linksDeleted } = await removeDomain(services, account.id, params.hostname)
        const links = linksDeleted === 1 ? '1 link' : `${linksDeleted} links`
        return {
          success: true,
          message: `Domain ${hostname} removed with its ${links}.`,
          data: { links_deleted: linksDeleted },
          meta: meta(services, account, await countDomains(services, account.id)),
        }
      },
      {
        account: { scopes: ['domains:write'], operation: 'domains.change' },
        idempotent: true,
        params: HostnameParams,
        response: { 200: 'DomainMessageResponse', ...errorResponses('VALIDATION_FAILED', 'INVALID_DOMAIN', 'DOMAIN_NOT_FOUND') },
        detail: {
          operationId: 'deleteDomain',
          tags: ['domains'],
          summary: 'Remove a custom domain and its links',
          description: 'Every link on the domain is deleted with it and stops redirecting at once; clicks already recorded stay in the statistics.',
        },
      },
    )
    .get(
      '/internal/domains',
      async ({ set }) => {
        set.headers['cache-control'] = 'no-store'
        return verifiedDomains(services)
      },
      {
        transform: internalSecretGuard(services.config),
        response: { 200: 'VerifiedDomainsResponse', ...errorResponses('UNAUTHORIZED') },
        detail: { hide: true },
      },
    )
    .get(
      '/tls/ask',
      async ({ query, set }) => {
        set.headers['cache-control'] = 'no-store'
        const domain = await hosts.served(query.domain)
        if (domain === null) throw new ApiError('DOMAIN_NOT_FOUND', 'This service serves no such host: it is neither one of its own hosts nor a verified custom domain.')
        return { success: true, data: { domain } }
      },
      {
        query: TlsAskQuery,
        response: { 200: 'TlsAskResponse', ...errorResponses('VALIDATION_FAILED', 'DOMAIN_NOT_FOUND', 'SERVICE_UNAVAILABLE') },
        detail: {
          operationId: 'checkTlsHost',
          tags: ['system'],
          summary: 'Whether a host may get a TLS certificate (Caddy on-demand TLS)',
          description:
            "For Caddy's `on_demand_tls { ask … }`: 200 when `domain` is the default short domain, the API's own host or a verified custom domain, else 404 DOMAIN_NOT_FOUND (an unverified, removed or unknown host, an IP address, a value that is no host name). A port, upper case and a trailing dot are ignored. No credential: it tells only whether a host is served here. Answers are cached briefly and dropped at once when a domain changes.",
        },
      },
    )
}
