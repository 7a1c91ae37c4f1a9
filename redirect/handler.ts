// The redirect, as a function of small guards: parse → load → check → respond (and record).
// Each guard is short and testable with `new Request(...)`.
import { ALIAS_PATTERN, linkState, type CachedLink } from '../core/link-cache'
import { isClickableLinkId, newClickId, signClickId, type ClickSigningKey } from '../core/click-id'
import { continueToken, continueTokenValid } from './continue-token'
import {
  disabledPage,
  domainRootPage,
  escapeHtml,
  expiredPage,
  inspectPage,
  interstitialPage,
  loopDetectedPage,
  methodNotAllowedPage,
  notFoundPage,
  passwordPage,
  tooManyReportsPage,
  unavailablePage,
} from './pages'
import type { ClickEvent } from '../core/clicks'
import { clientAddress, SOCKET_ADDRESS, type ClientIpRule, type Peer } from '../core/client-ip'
import { countryOfIp, loadIpCountries } from '../core/enrich-geo'
import { compileRouting, pickRoute, visitorBucket, type CompiledRouting, type RoutePick, type VisitorFacts } from '../core/routing'
import { DEFAULT_DOMAIN, type DomainSet } from './domains'
import type { Inspect, Report } from './internal-api'
import type { Unlock } from './internal-api'
import { readForm, unlockWithForm } from './password'
import type { LinkResolver } from './resolver'

export interface RedirectDeps {
  resolver: LinkResolver
  /**
   * Takes the click of a counted redirect with its 302 and gives back the answer: a promise of the 302
   * resolved once the click is on disk (the recorder's log append, answers.ts), or the 302 itself (or
   * nothing) to answer at once.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a recorder that answers nothing may be any function returning nothing
  record: (click: ClickEvent, response: Response) => Response | Promise<Response> | undefined | void
  shortDomain: string
  /** linkCacheKey(shortDomain, ''), computed once: the key of an alias is this plus the alias. */
  keyPrefix: string
  countryHeader?: string
  /** How the client address is read (config.clientIp); without it: the socket address. */
  clientIp?: ClientIpRule
  now?: () => number
  /** Answers GET /health (a reserved alias, so no link can shadow it): the process answers, nothing more. */
  health?: () => Response
  /** Answers GET /ready (reserved): whether the dependencies answer (core/readiness.ts). */
  ready?: () => Promise<Response>
  /** Answers GET /metrics (reserved): the Prometheus text, behind METRICS_TOKEN. */
  metrics?: (request: Request) => Response
  /** Checks the password posted to a protected link (the API's /internal/unlock); without it: 503. */
  unlock?: Unlock
  /** Verified custom domains (redirect/domains.ts); without it every host serves the default domain. */
  domains?: Pick<DomainSet, 'onDefaultDomain' | 'match' | 'serves' | 'version'>
  /** Keys of mu_sig (config.clickSigningKeys); without them Pro links redirect without attribution. */
  clickKeys?: readonly ClickSigningKey[]
  /** Where `/` of the default domain sends people (config.rootRedirectUrl, the dashboard); without it: 404. */
  rootRedirectUrl?: string
  /** Key of the sticky A/B visitor hash (core/routing.ts bucketSeed of IP_HASH_SECRET); without it: 0. */
  routingSeed?: bigint
  /** Key of a flagged link's Continue links (continue-token.ts, from INTERNAL_SECRET); without it: one of this process. */
  continueKey?: Buffer
  /** What `/{alias}+` shows of a link (the API's /internal/inspect); without it: 503. */
  inspect?: Inspect
  /** Files a visitor's report from that page (the API's /internal/report); without it: 503. */
  report?: Report
}

const PROCESS_CONTINUE_KEY = Buffer.from(crypto.getRandomValues(new Uint8Array(32)))

/** The alias of a request path, or null when the path cannot be one. No URL object: this runs per request. */
export function parseAlias(url: string): string | null {
  const pathStart = url.indexOf('/', url.indexOf('//') + 2)
  if (pathStart < 0) return null
  let end = url.indexOf('?', pathStart)
  if (end < 0) end = url.indexOf('#', pathStart)
  const alias = url.slice(pathStart + 1, end < 0 ? undefined : end)
  return ALIAS_PATTERN.test(alias) ? alias : null
}

/** The alias of an inspect path (`/{alias}+`, Bitly's convention), or null. */
export function parseInspectAlias(url: string): string | null {
  const pathStart = url.indexOf('/', url.indexOf('//') + 2)
  if (pathStart < 0) return null
  let end = url.indexOf('?', pathStart)
  if (end < 0) end = url.indexOf('#', pathStart)
  const path = url.slice(pathStart + 1, end < 0 ? undefined : end)
  if (!path.endsWith('+')) return null
  const alias = path.slice(0, -1)
  return ALIAS_PATTERN.test(alias) ? alias : null
}

/** Whether the request is for the host's root: `/`, with or without a query. */
function isRoot(url: string): boolean {
  const pathStart = url.indexOf('/', url.indexOf('//') + 2)
  return pathStart >= 0 && (pathStart === url.length - 1 || url[pathStart + 1] === '?' || url[pathStart + 1] === '#')
}

/**
 * `/` is no alias: the default domain's root leads to the dashboard (or ROOT_REDIRECT_URL), a custom
 * domain's to the root URL its owner set, else a neutral page; an unknown host's is the same 404 as its
 * links, and 503 while the set of domains has never loaded.
 */
function rootPage(url: string, deps: RedirectDeps): Response {
  if (deps.domains && !deps.domains.onDefaultDomain(url)) {
    const target = deps.domains.match(url)
    if (target === undefined) return unavailablePage()
    if (target === null) return notFoundPage()
    if (target !== DEFAULT_DOMAIN) return target.rootUrl ? redirectTo(target.rootUrl) : domainRootPage()
  }
  return deps.rootRedirectUrl ? redirectTo(deps.rootRedirectUrl) : notFoundPage()
}

function redirectTo(location: string): Response {
  return new Response(null, { status: 302, headers: { Location: location, 'Cache-Control': 'private, max-age=0' } })
}

// Process-unique click ids without a crypto call per request: a random prefix and a counter.
const clickPrefix = crypto.randomUUID().replaceAll('-', '').slice(0, 12)
let clickCounter = 0

const PRESENT_ATTRIBUTION = /^mu_(click|sig)(=|$)/

/**
 * The destination with `mu_click` and `mu_sig` appended to its query, before any fragment; the existing
 * query is kept byte for byte (no URLSearchParams round trip), except mu_click/mu_sig already present, which
 * are dropped so the service's pair is the only one. The values are base64url (and a dot): no escaping.
 */
export function withAttribution(url: string, clickId: string, sig: string): string {
  const hash = url.indexOf('#')
  const beforeHash = hash < 0 ? url : url.slice(0, hash)
  const fragment = hash < 0 ? '' : url.slice(hash)
  const question = beforeHash.indexOf('?')
  const path = question < 0 ? beforeHash : beforeHash.slice(0, question)
  const query = question < 0 ? '' : beforeHash.slice(question + 1)
  const kept = query === '' ? [] : query.split('&').filter((p) => !PRESENT_ATTRIBUTION.test(p))
  kept.push(`mu_click=${clickId}`, `mu_sig=${sig}`)
  return `${path}?${kept.join('&')}${fragment}`
}

/**
 * One request on its way through the guards, and what it offers a routed link's rules (VisitorFacts):
 * each fact read from the request when first asked. Every field is set in the constructor, so every
 * visit has one shape and reading a fact later adds no property.
 */
class Visit implements VisitorFacts {
  /** GET, and POST once the password is accepted: a click is recorded. HEAD redirects without one. */
  counted: boolean
  readonly method: string
  now = 0
  /** The link's short domain (the default one or a verified custom one) and its cache-key prefix. */
  domain: string
  keyPrefix: string
  /** The client address, read once: reading it from the socket costs a few µs. */
  private address: string | undefined = undefined
  /** The User-Agent, read once: the click records it, a device rule and the sticky A/B hash ask it. */
  private agent: string | undefined = undefined

  constructor(
    readonly request: Request,
    /** request.url and request.method, read once: each is a native getter that builds its string. */
    readonly url: string,
    readonly alias: string,
    method: string,
    readonly deps: RedirectDeps,
    readonly peer: Peer | undefined,
  ) {
    this.method = method
    this.counted = method === 'GET'
    this.domain = deps.shortDomain
    this.keyPrefix = deps.keyPrefix
  }

  /** The client address by the client-IP rule. */
  ip(): string {
    return (this.address ??= clientAddress(this.deps.clientIp ?? SOCKET_ADDRESS, this.request, this.peer))
  }

  userAgent(): string {
    return (this.agent ??= this.request.headers.get('user-agent') ?? '')
  }

  /** The trusted CDN's country header when it holds a code, else the address's country (or ''). */
  country(): string {
    const header = this.deps.countryHeader ? (this.request.headers.get(this.deps.countryHeader) ?? '') : ''
    return header.length === 2 && COUNTRY_CODE.test(header) ? header : countryOfIp(this.ip())
  }

  acceptLanguage(): string {
    return this.request.headers.get('accept-language') ?? ''
  }

  query(): string {
    return queryOf(this.url)
  }
}

const COUNTRY_CODE = /^[A-Za-z]{2}$/

function respond(link: CachedLink | null, visit: Visit): Response | Promise<Response> {
  if (!link) return notFoundPage()
  // A link in good standing pays one field check for both states.
  if (link.st !== undefined) {
    if (link.st === 'disabled') return disabledPage()
    if (!continues(link, visit)) return closedPage(link, visit.now) ?? interstitial(link, visit)
  }
  const closed = closedPage(link, visit.now)
  if (closed) return closed
  if (loopsBack(link.url, visit.deps)) return loopDetectedPage()
  if (link.pw) return passwordGuard(link, visit)
  if (visit.method === 'POST') return methodNotAllowedPage()
  // A link without routing pays this one field check.
  const pick = link.r === undefined ? null : routeOf(link, visit)
  if (pick === LOOPS) return loopDetectedPage()
  // HEAD redirects without a click, so without a mu_click too: a signed id for a click that never reaches
  // ClickHouse would let a conversion attach to a click the statistics do not have.
  return visit.counted ? countedRedirect(link, visit, pick) : redirectTo(pick?.url ?? link.url)
}

/** A flagged link's warning: its Continue link signed for this link, its report link. No click. */
function interstitial(link: CachedLink, visit: Visit): Response {
  const token = continueToken(visit.deps.continueKey ?? PROCESS_CONTINUE_KEY, link.id, visit.now)
  return interstitialPage(link.pw ? null : link.url, `/${visit.alias}?continue=${token}`, `/${visit.alias}+`)
}

/** Whether the request carries a valid Continue token of this link (from its warning page). */
function continues(link: CachedLink, visit: Visit): boolean {
  const token = new URLSearchParams(queryOf(visit.url)).get('continue')
  return continueTokenValid(visit.deps.continueKey ?? PROCESS_CONTINUE_KEY, link.id, token, visit.now)
}

/**
 * Where a record keeps its compiled routing: a property of its own, not enumerable (no encoding or
 * copy of the record sees it), so a routed redirect reads it straight from the record it already holds
 * rather than looking it up elsewhere. The L1 keeps decoded records, and keeps the same record across
 * its reloads while the stored text is unchanged (resolver.ts): a link is compiled once a version.
 */
const COMPILED = Symbol('compiled routing')

interface Compiled {
  routing: CompiledRouting
  /** The picks whose destination this redirector serves (loopsBack), as of the domain set's `version`. */
  looping: ReadonlySet<RoutePick>
  version: number
}

/** What routeOf answers for a pick whose destination is a host this redirector serves: 508, no click. */
const LOOPS: RoutePick = Object.freeze({ route: '', url: '' })
const NONE: ReadonlySet<RoutePick> = new Set()

/**
 * Where this visitor goes on a routed link: a rule's or a variant's destination, null for the link's URL,
 * or LOOPS. Whether each destination loops back is worked out once per link and domain set, not per
 * redirect: the picks' hosts only change with the link, and the hosts served only with the set.
 */
function routeOf(link: CachedLink & { [COMPILED]?: Compiled }, visit: Visit): RoutePick | null {
  let compiled = link[COMPILED]
  if (compiled === undefined) {
    compiled = { routing: compileRouting(link.r!), looping: NONE, version: -1 }
    // A record someone froze is compiled again each time: slower, still right.
    if (Object.isExtensible(link)) Object.defineProperty(link, COMPILED, { value: compiled })
    // The IP-to-country table loads once, in the background, when a rule first asks for countries.
    if (compiled.routing.usesCountry) void loadIpCountries()
  }
  const { deps } = visit
  const version = deps.domains?.version ?? 0
  if (compiled.version !== version) {
    const { rules, ab } = compiled.routing
    const looping = [...rules, ...(ab?.picks ?? [])].filter((pick) => loopsBack(pick.url, deps))
    compiled.looping = looping.length === 0 ? NONE : new Set(looping)
    compiled.version = version
  }
  const pick = pickRoute(compiled.routing, visit, visit.now, stickyBucket)
  return pick !== null && compiled.looping.size > 0 && compiled.looping.has(pick) ? LOOPS : pick
}

/** A sticky A/B visitor's place in [0, 100): the keyed hash of its address and User-Agent. */
function stickyBucket(visit: Visit): number {
  return visitorBucket(visit.deps.routingSeed ?? 0n, visit.ip(), visit.userAgent())
}

/** The query string of a request URL, without "?" and any fragment. */
function queryOf(url: string): string {
  const question = url.indexOf('?')
  if (question < 0) return ''
  const hash = url.indexOf('#', question)
  return url.slice(question + 1, hash < 0 ? undefined : hash)
}

/**
 * The destination is a host this redirector serves: the API refuses such links, but a domain verified
 * after the link was made, or a name whose DNS points here, slips through. Following it would redirect
 * back here, counting a click at every hop; 508 ends it at the first, uncounted. A few string
 * operations and one map lookup a redirect.
 */
function loopsBack(url: string, deps: RedirectDeps): boolean {
  if (deps.domains) return deps.domains.serves(url)
  return url.startsWith(`http://${deps.shortDomain}/`) || url.startsWith(`https://${deps.shortDomain}/`)
}

/** Expired → 410, not yet active → 404, before any password is asked; null while the link is live. */
function closedPage(link: CachedLink, now: number): Response | null {
  const state = linkState(link, now)
  if (state === 'expired') return expiredPage()
  if (state === 'not_yet_active') return notFoundPage()
  return null
}

/**
 * A protected link shows its form; the posted password goes to the API, and once it is accepted the link
 * as the API returned it (checked again: it may have changed) redirects, counted.
 */
function passwordGuard(link: CachedLink, visit: Visit): Response | Promise<Response> {
  if (visit.method !== 'POST') return passwordPage()
  return unlockWithForm(visit.request, link.id, visit.ip(), visit.deps.unlock).then((unlocked) => {
    if (unlocked instanceof Response) return unlocked
    // The visit ends here: it continues as the counted redirect of the link as unlocked, at this time.
    visit.now = visit.deps.now?.() ?? Date.now()
    visit.counted = true
    const closed = closedPage(unlocked, visit.now)
    if (closed) return closed
    const pick = unlocked.r === undefined ? null : routeOf(unlocked, visit)
    if (pick === LOOPS) return loopDetectedPage()
    return countedRedirect(unlocked, visit, pick)
  }, unavailablePage)
}

/**
 * The one place a click is recorded, right before its 302. Pro: a signed, self-contained click id, handed
 * to the destination so a conversion can be joined to this click. Everyone else: the cheap process-unique
 * id, one flag check. Measured in-process: non-Pro about 1.2 µs a redirect; Pro adds about 2.5 µs.
 */
function countedRedirect(link: CachedLink, visit: Visit, pick: RoutePick | null = null): Response | Promise<Response> {
  const { deps, request } = visit
  const destination = pick?.url ?? link.url
  let clickId: string
  let location = destination
  if (link.pro && deps.clickKeys?.length && isClickableLinkId(link.id)) {
    clickId = newClickId(link.id, visit.now)
    location = withAttribution(destination, clickId, signClickId(clickId, deps.clickKeys))
  } else {
    clickId = `${clickPrefix}${(clickCounter++).toString(36)}`
  }
  const headers = request.headers
  // The 302 leaves once the click is in the log (the recorder's group commit): a crash after it loses
  // no click a client was answered for.
  const response = redirectTo(location)
  const answer = deps.record(
    {
      clickId,
      linkId: link.id,
      domain: visit.domain,
      alias: visit.alias,
      at: visit.now,
      referrer: headers.get('referer') ?? '',
      userAgent: visit.userAgent(),
      ip: visit.ip(),
      country: deps.countryHeader ? (headers.get(deps.countryHeader) ?? '') : '',
      url: destination,
      // Always present, so every click has one shape; undefined is DEFAULT_ROUTE to its readers.
      route: pick === null ? undefined : pick.route,
    },
    response,
  )
  return answer ?? response
}

/**
 * `/{alias}+`: what the link is, without following it, and its report form (posted back here). The
 * page comes from what the API tells; a report is filed by the API, which limits it per address.
 */
async function inspectAnswer(visit: Visit): Promise<Response> {
  const { deps, request, alias, domain } = visit
  if (!deps.inspect || !deps.report) return unavailablePage()
  const origin = visit.url.slice(0, visit.url.indexOf('/', visit.url.indexOf('//') + 2))
  const shortUrl = `${origin}/${alias}`
  let view: Awaited<ReturnType<NonNullable<RedirectDeps['inspect']>>>
  try {
    view = await deps.inspect(domain, alias)
  } catch {
    return unavailablePage()
  }
  if (view === null) return notFoundPage()
  if (visit.method !== 'POST') return inspectPage(shortUrl, view)
  const form = await readForm(request).catch(() => null)
  if (form === null) return inspectPage(shortUrl, view, 'The report could not be read; please send the form again.', 400)
  const ip = visit.ip()
  let result: Awaited<ReturnType<NonNullable<RedirectDeps['report']>>>
  try {
    result = await deps.report({ domain, alias, reason: form.get('reason') ?? '', details: form.get('details') ?? '', email: form.get('email') ?? '', ip })
  } catch {
    return unavailablePage()
  }
  switch (result.kind) {
    case 'filed':
      return inspectPage(shortUrl, view, 'Thank you: your report was received. An operator of this service will look at it.', 201)
    case 'already':
      return inspectPage(shortUrl, view, 'You have reported this link already; an operator will look at it.')
    case 'invalid':
      return inspectPage(shortUrl, view, escapeHtml(result.hint), 400)
    case 'limited':
      return tooManyReportsPage(result.retryAfterSeconds)
    case 'gone':
      return notFoundPage()
  }
}

/** /health, /ready and /metrics of the default domain, when this redirector was given them. */
function systemAnswer(alias: string, request: Request, deps: RedirectDeps): Response | Promise<Response> | undefined {
  if (alias === 'health') return deps.health?.()
  if (alias === 'ready') return deps.ready?.()
  return deps.metrics?.(request)
}

export function handleRedirect(request: Request, deps: RedirectDeps, peer?: Peer): Response | Promise<Response> {
  const method = request.method
  // POST only reaches a password-protected link (its form); respond() refuses it for every other link.
  if (method !== 'GET' && method !== 'HEAD' && method !== 'POST') return methodNotAllowedPage()
  const url = request.url
  let alias = parseAlias(url)
  let inspecting = false
  if (alias === null) {
    alias = parseInspectAlias(url)
    if (alias === null) return isRoot(url) ? rootPage(url, deps) : notFoundPage()
    inspecting = true
  }
  const visit = new Visit(request, url, alias, method, deps, peer)
  // The default domain costs one comparison; another host must be a verified custom domain, whose name and
  // key prefix replace the default ones. There "health" is an alias like any other.
  if (deps.domains && !deps.domains.onDefaultDomain(url)) {
    const target = deps.domains.match(url)
    if (target === undefined) return unavailablePage()
    if (target === null) return notFoundPage()
    if (target !== DEFAULT_DOMAIN) {
      visit.domain = target.host
      visit.keyPrefix = target.keyPrefix
    }
  }
  if (inspecting) return inspectAnswer(visit)
  if (visit.domain === deps.shortDomain && (alias === 'health' || alias === 'ready' || alias === 'metrics')) {
    const own = systemAnswer(alias, request, deps)
    if (own) return own
  }
  const key = visit.keyPrefix + alias
  visit.now = deps.now?.() ?? Date.now()
  const cached = deps.resolver.peek(key, visit.now, visit.domain, alias)
  if (cached !== undefined) return respond(cached, visit)
  return deps.resolver.load(key, visit.domain, alias).then((link) => respond(link, visit), unavailablePage)
}
