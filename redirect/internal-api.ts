// The redirector's one client of the API's /internal endpoints: resolve a link on a cache miss, list the
// verified custom domains, check a password. How a request reaches the API is the transport's business:
// fetch with a time budget for the stand-alone redirector, the Elysia app's handle() in the embedded
// process (no HTTP to itself). The answers are read the same way either way.
import type { InspectView } from './pages'
import { decodeCachedLink, LINK_CACHE_VERSION, LINK_CACHE_VERSION_HEADER, type CachedLink } from '../core/link-cache'
import { INTERNAL_SECRET_HEADER } from '../core/internal-secret'

export type UnlockResult = { kind: 'ok'; link: CachedLink } | { kind: 'wrong' } | { kind: 'limited'; retryAfterSeconds: number } | { kind: 'gone' }

/** Asks the owner of Postgres. Resolves null for "no such link"; rejects when it cannot tell. */
export type Resolve = (domain: string, alias: string) => Promise<CachedLink | null>
/** Every verified custom domain (host names, lower-case ASCII) and where the roots of some of them lead. */
export interface DomainList {
  hosts: string[]
  /** host → the URL its root (`/`) redirects to, for the domains whose owner set one. */
  rootUrls: ReadonlyMap<string, string>
}
/** Resolves the verified custom domains; rejects when it cannot tell. */
export type LoadDomains = () => Promise<DomainList>
/** Asks the owner of the password hash. Rejects when it cannot tell (down, slow, misconfigured). */
export type Unlock = (linkId: string, password: string, ip: string) => Promise<UnlockResult>

/** What `/{alias}+` shows of a link; null when there is no such link. */
export type Inspect = (domain: string, alias: string) => Promise<InspectView | null>

export interface ReportInput {
  domain: string
  alias: string
  reason: string
  details: string
  email: string
  ip: string
}

export type ReportResult = { kind: 'filed' } | { kind: 'already' } | { kind: 'invalid'; hint: string } | { kind: 'limited'; retryAfterSeconds: number } | { kind: 'gone' }

/** Files a visitor's report of a link (the inspect page's form). */
export type Report = (input: ReportInput) => Promise<ReportResult>

export interface InternalApi {
  resolve: Resolve
  domains: LoadDomains
  unlock: Unlock
  inspect: Inspect
  report: Report
}

/** Sends one request to the API; `budgetMs` is how long the caller may wait for the answer. */
export type Transport = (request: Request, budgetMs: number) => Promise<Response>

/** Over HTTP: a request that outlives its budget is aborted, so a slow API never holds a visitor. */
export const fetchTransport: Transport = (request, budgetMs) => fetch(request, { signal: AbortSignal.timeout(budgetMs) })

/** The API answers an unlock after one argon2id check (about 50 ms); generous, since a person is waiting anyway. */
export const UNLOCK_TIMEOUT_MS = 5000
/** When the API's 429 carries no Retry-After: its window is 15 minutes. */
const DEFAULT_RETRY_AFTER_SECONDS = 900

export interface InternalApiOptions {
  /** Base URL of the API (config.apiInternalUrl); with the in-process transport only its path matters. */
  apiUrl: string
  secret: string
  /** Budget of resolve and domains (config.cache.resolveTimeoutMs). */
  timeoutMs: number
}

export function internalApi(transport: Transport, { apiUrl, secret, timeoutMs }: InternalApiOptions): InternalApi {
  /** GET without a body, POST with a JSON one. */
  const send = (path: string, budgetMs: number, json?: unknown) => {
    // The newest cache record this redirector reads: the API then answers a routed link with its routing.
    const headers: Record<string, string> = { [INTERNAL_SECRET_HEADER]: secret, [LINK_CACHE_VERSION_HEADER]: String(LINK_CACHE_VERSION) }
    if (json === undefined) return transport(new Request(`${apiUrl}${path}`, { headers }), budgetMs)
    headers['content-type'] = 'application/json'
    return transport(new Request(`${apiUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(json) }), budgetMs)
  }
  return {
    resolve: async (domain, alias) => readResolveAnswer(await send(`/internal/resolve?${new URLSearchParams({ domain, alias })}`, timeoutMs)),
    domains: async () => readDomainsAnswer(await send('/internal/domains', timeoutMs)),
    unlock: async (linkId, password, ip) => readUnlockAnswer(await send('/internal/unlock', UNLOCK_TIMEOUT_MS, { link_id: linkId, password, ip })),
    inspect: async (domain, alias) => readInspectAnswer(await send(`/internal/inspect?${new URLSearchParams({ domain, alias })}`, timeoutMs)),
    report: async (input) => readReportAnswer(await send('/internal/report', UNLOCK_TIMEOUT_MS, input)),
  }
}

/** GET /internal/inspect: the view, null for 404; anything else is an error. */
export async function readInspectAnswer(response: Response): Promise<InspectView | null> {
  if (response.status === 404) return null
  if (!response.ok) throw new Error(`inspect answered ${response.status}`)
  const body = (await response.json()) as { url: string | null; created_at: string; by: 'guest' | 'account'; state: InspectView['state'] }
  return { url: body.url, createdAt: body.created_at, by: body.by, state: body.state }
}

/** POST /internal/report: filed (201), already open (200), refused (400 with its hint), limited (429), no link (404). */
export async function readReportAnswer(response: Response): Promise<ReportResult> {
  if (response.status === 201) return { kind: 'filed' }
  if (response.status === 200) return { kind: 'already' }
  if (response.status === 404) return { kind: 'gone' }
  if (response.status === 429) return { kind: 'limited', retryAfterSeconds: Number(response.headers.get('retry-after')) || 3600 }
  if (response.status === 400) return { kind: 'invalid', hint: String(((await response.json()) as { hint?: unknown }).hint ?? 'The report is not valid.') }
  throw new Error(`report answered ${response.status}`)
}

/** GET /internal/resolve: the link, null for 404; anything else is an error, never "not found". */
export async function readResolveAnswer(response: Response): Promise<CachedLink | null> {
  if (response.status === 404) return null
  if (!response.ok) throw new Error(`resolve answered ${response.status}`)
  const link = decodeCachedLink(await response.text())
  if (!link) throw new Error('resolve answered an unreadable link')
  return link
}

async function readDomainsAnswer(response: Response): Promise<DomainList> {
  if (!response.ok) throw new Error(`/internal/domains answered ${response.status}`)
  return parseDomainList(await response.text())
}

const WEB_URL = /^https?:\/\//

/**
 * `{"domains": [...], "root_urls": {host: url}}` as the API sends it; anything else is an error, never
 * an empty set. `root_urls` may be absent (an API of the previous version): every root is then neutral.
 */
export function parseDomainList(text: string): DomainList {
  const body = JSON.parse(text) as { domains?: unknown; root_urls?: unknown }
  if (!Array.isArray(body?.domains) || !body.domains.every((d) => typeof d === 'string')) {
    throw new Error('/internal/domains answered an unreadable list')
  }
  const roots = body.root_urls ?? {}
  if (typeof roots !== 'object' || roots === null || Array.isArray(roots)) throw new Error('/internal/domains answered unreadable root URLs')
  const rootUrls = new Map<string, string>()
  for (const [host, url] of Object.entries(roots)) {
    if (typeof url !== 'string' || !WEB_URL.test(url)) throw new Error('/internal/domains answered unreadable root URLs')
    rootUrls.set(host, url)
  }
  return { hosts: body.domains as string[], rootUrls }
}

/** Maps the answer of POST /internal/unlock. */
export async function readUnlockAnswer(response: Response): Promise<UnlockResult> {
  if (response.status === 200) {
    const link = decodeCachedLink(await response.text())
    if (!link) throw new Error('unlock answered an unreadable link')
    return { kind: 'ok', link }
  }
  if (response.status === 404) return { kind: 'gone' }
  if (response.status === 429) {
    const seconds = Number(response.headers.get('retry-after'))
    return { kind: 'limited', retryAfterSeconds: seconds > 0 ? seconds : DEFAULT_RETRY_AFTER_SECONDS }
  }
  if (response.status === 401) {
    const body = (await response.json().catch(() => null)) as { error?: unknown } | null
    // Any other 401 is a wrong internal secret: a configuration error, not the visitor's.
    if (body?.error === 'PASSWORD_INCORRECT') return { kind: 'wrong' }
  }
  throw new Error(`unlock answered ${response.status}`)
}
