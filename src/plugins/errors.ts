// One error type, one code→status table, one JSON shape (docs/api.md#errors). Services throw
// ApiError; the global onError below turns it, and every error Elysia raises itself (validation, parse,
// not found) or anything unexpected, into that shape. Nothing a client sends may end as a bare 500.
import { Elysia, t } from 'elysia'
import { errorSummary, stackFrames } from '../lib/errors'
import { log } from '../lib/log'
import { asOAuthError, isOAuthPath, OAuthError } from './oauth-errors'
import { requestId } from './request-log'

/**
 * Every error code the API answers with, and its HTTP status. Clients branch on `error`, people read
 * `hint`. A new code goes here first.
 */
export const ERROR_STATUS = {
  /** A body, query or header value does not match the route's schema; the hint names the field. */
  VALIDATION_FAILED: 400,
  /** The body is not valid JSON (or not UTF-8). */
  MALFORMED_JSON: 400,
  /** A body was sent with a Content-Type other than application/json. */
  UNSUPPORTED_CONTENT_TYPE: 400,
  /** The destination is not an absolute http(s) URL with a host, or is longer than 2048 characters. */
  INVALID_URL: 400,
  /** The destination leads back to this service: its short domain, API host, a verified custom domain, or an address of this machine in any spelling. */
  DESTINATION_LOOPS: 400,
  /** The destination's host (or a parent of it) is on a blocklist or banned by an operator. */
  DESTINATION_BLOCKED: 400,
  /** Missing, malformed, unknown, expired or wrong-kind bearer token (or internal secret). */
  UNAUTHORIZED: 401,
  /** An at_ token, or an API key restricted to scopes, without the scope this route needs; WWW-Authenticate names it (step-up). */
  INSUFFICIENT_SCOPE: 403,
  /** A route for the human only (Agent management, approvals, consent, API keys, webhooks) called with an at_ token. */
  HUMAN_ONLY: 403,
  /** A route for the human only called with an API key restricted to scopes: it takes the session or a full-access key. */
  FULL_ACCESS_REQUIRED: 403,
  /** A state-changing call made with the session cookie lacks its X-CSRF-Token. */
  CSRF_TOKEN_INVALID: 403,
  /** /mcp called from a web origin the operator did not list in MCP_ALLOWED_ORIGINS. */
  ORIGIN_NOT_ALLOWED: 403,
  /** No such route. */
  NOT_FOUND: 404,
  /** A known path asked with a method it does not serve; the Allow header lists those it does. */
  METHOD_NOT_ALLOWED: 405,
  /** No link with that (domain, alias). */
  LINK_NOT_FOUND: 404,
  /** GET /links/{alias}/stats on a Free account; `data` carries the basic totals, `upgrade_url` the way to Pro. */
  STATS_REQUIRES_PRO: 403,
  /** Statistics: ClickHouse (the click store) does not answer; retry shortly. */
  STATS_UNAVAILABLE: 503,
  /** No tag with that id in the caller's account. */
  TAG_NOT_FOUND: 404,
  /** The account already has a tag of that name (names are compared case-insensitively). */
  TAG_EXISTS: 409,
  /** The account has all its tags (TAGS_PER_ACCOUNT); deleting one makes room. */
  TAG_LIMIT_REACHED: 409,
  /** Not a host name a custom domain can have (an IP address, a port, a single label, bad characters). */
  INVALID_DOMAIN: 400,
  /** The service's own short domain (or a subdomain of it, or the API's host) cannot be a custom domain. */
  DOMAIN_RESERVED: 400,
  /** No custom domain of that name in the caller's account. */
  DOMAIN_NOT_FOUND: 404,
  /** The host name is already registered, by this account or another one. */
  DOMAIN_TAKEN: 409,
  /** The plan's custom-domain allowance is used up (Free 1, Pro 10). */
  DOMAIN_LIMIT_REACHED: 403,
  /** The verification TXT record was not found (or does not carry the expected value). */
  DOMAIN_NOT_VERIFIED: 400,
  /** The alias exists on that domain already, or is a reserved word of the default domain. */
  ALIAS_TAKEN: 409,
  /** The domain is not a verified custom domain of this account (unknown and foreign domains alike). */
  DOMAIN_NOT_ALLOWED: 403,
  /** The plan's links per calendar month (UTC) are used up; `limit`, `remaining` and `upgrade_url` say more. */
  LINK_QUOTA_EXCEEDED: 429,
  /** Internal (redirector → API): the password of a protected link is wrong. */
  PASSWORD_INCORRECT: 401,
  /** The body is larger than MAX_BODY_BYTES. */
  PAYLOAD_TOO_LARGE: 413,
  /** An Idempotency-Key already used by this credential for a different request (method, path, query or body). */
  IDEMPOTENCY_KEY_REUSED: 400,
  /** A request with the same Idempotency-Key is still running; retry after Retry-After. */
  IDEMPOTENCY_IN_PROGRESS: 409,
  /** Per-IP or per-credential rate limit; Retry-After says when to come back. */
  RATE_LIMITED: 429,
  /** GET /links/{alias}/qr: every render thread is busy and the queue of waiting renders is full; Retry-After says when to come back. */
  QR_BUSY: 429,
  /** The guest session has created max_links links. */
  GUEST_LINK_LIMIT: 429,
  GUEST_NETWORK_LIMIT: 429,
  /** The guest token has made max_requests authenticated requests. */
  GUEST_REQUEST_LIMIT: 429,
  /** POST /guest/register or /guest/verify: the e-mail address already has an account. */
  EMAIL_TAKEN: 409,
  /** POST /guest/verify: wrong, already used or never requested code; `remaining` says how many attempts are left. */
  INVALID_CODE: 400,
  /** POST /guest/verify: the code is older than 15 minutes; request a new one. */
  CODE_EXPIRED: 400,
  /** POST /guest/verify: five wrong attempts burnt the code; request a new one. */
  TOO_MANY_ATTEMPTS: 429,
  /** POST /account/upgrade: the account is already on Pro. */
  ALREADY_PRO: 400,
  /** The account of the API key no longer exists. */
  ACCOUNT_NOT_FOUND: 404,
  /** Admin API: no abuse report with that id. */
  REPORT_NOT_FOUND: 404,
  /** Admin API: the host has no ban to lift. */
  HOST_NOT_BANNED: 404,
  /** No live API key with that id in the caller's account (another account's key, or one already revoked). */
  API_KEY_NOT_FOUND: 404,
  /** The account has all the live API keys it may have; revoking one makes room. */
  API_KEY_LIMIT_REACHED: 409,
  /** No checkout with that id for this account (or not one that can be confirmed here). */
  CHECKOUT_NOT_FOUND: 404,
  /** A webhook URL that is not https, has a user name or password, or names a non-public address. */
  WEBHOOK_URL_INVALID: 400,
  /** No webhook with that id in the caller's account. */
  WEBHOOK_NOT_FOUND: 404,
  /** No delivery with that id of that webhook. */
  WEBHOOK_DELIVERY_NOT_FOUND: 404,
  /** The account has all the webhooks it may have (10); deleting one makes room. */
  WEBHOOK_LIMIT_REACHED: 409,
  /** A test or a redelivery asked of a disabled webhook; enable it first (PATCH status: active). */
  WEBHOOK_DISABLED: 409,
  /** A billing webhook whose signature is missing, wrong or outside the time tolerance. */
  WEBHOOK_SIGNATURE_INVALID: 400,
  /** The payment provider (Stripe) did not answer or refused; nothing was charged. */
  BILLING_UNAVAILABLE: 503,
  /** The verification e-mail could not be handed to the mail server. */
  MAIL_UNAVAILABLE: 503,
  /** No Agent with that id in the caller's account. */
  AGENT_NOT_FOUND: 404,
  /** The Agent was killed: it gets no new token, and its tokens are refused. */
  AGENT_KILLED: 409,
  /** No approval with that id for this account (or, for an Agent, not one it asked for). */
  APPROVAL_NOT_FOUND: 404,
  /** The approval is no longer pending: decided, executed or expired (24 hours). */
  APPROVAL_DECIDED: 409,
  /** No OAuth consent request with that id (unknown, or another account decided it). */
  OAUTH_REQUEST_NOT_FOUND: 404,
  /** The consent request was already approved or denied, or it expired (10 minutes). */
  OAUTH_REQUEST_DECIDED: 409,
  /** A bug or an unexpected failure on our side; details are logged, never sent. */
  INTERNAL_ERROR: 500,
  /** A backing store (Postgres) does not answer. */
  SERVICE_UNAVAILABLE: 503,
  /** Conversion: clickSignature is not the signature of this clickId (tampered, of another click, unknown key id). */
  CLICK_SIGNATURE_INVALID: 401,
  /** Conversion: the API key belongs to another account than the clicked link's. */
  LINK_NOT_OWNED: 403,
  /** Conversion attribution needs the link's account to be on Pro. */
  PRO_REQUIRED: 403,
  /** Conversion: occurredAt is before the click or more than five minutes in the future. */
  OCCURRED_AT_INVALID: 400,
  /** Conversion: more than 30 days after the click (the attribution window). */
  CONVERSION_WINDOW_CLOSED: 400,
  /** Conversion: the signed click already carries CONVERSIONS_PER_CLICK conversions of this type. */
  CONVERSION_LIMIT: 429,
  /** Conversion: the eventId or (conversionType, externalOrderId) was already used for a different report. */
  CONVERSION_CONFLICT: 409,
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

export const DEFAULT_HINT: Record<ErrorCode, string> = {
  VALIDATION_FAILED: 'The request does not match the documented schema; see /swagger.',
  MALFORMED_JSON: 'The request body is not valid JSON.',
  UNSUPPORTED_CONTENT_TYPE: 'Send the body as JSON with Content-Type: application/json.',
  INVALID_URL: 'url must be an absolute http:// or https:// URL with a host, at most 2048 characters.',
  DESTINATION_LOOPS: "url must not lead back to this service (its short domain, API host, custom domains or this machine's addresses).",
  DESTINATION_BLOCKED: 'This destination cannot be linked to from this service.',
  UNAUTHORIZED: 'Send Authorization: Bearer <token>; get a guest token from POST /api/v1/guest/token.',
  INSUFFICIENT_SCOPE: 'This token lacks the scope this endpoint needs; WWW-Authenticate names it. Ask the human for it (authorize again with that scope).',
  HUMAN_ONLY: 'This endpoint is for the human owner of the account (API key or signed-in session); an Agent token cannot call it.',
  FULL_ACCESS_REQUIRED: 'This endpoint is for the human owner of the account: the signed-in session or an API key without scopes; this key is restricted to some.',
  CSRF_TOKEN_INVALID: "Send the session's CSRF token in the X-CSRF-Token header with every state-changing call made with the session cookie.",
  ORIGIN_NOT_ALLOWED:
    'Requests from this web origin are not accepted here (the operator lists the allowed ones in MCP_ALLOWED_ORIGINS); call from a listed origin, or from a program that sends no Origin.',
  NOT_FOUND: 'No such endpoint; the API is described at /swagger.',
  METHOD_NOT_ALLOWED: 'This path does not serve that method; the Allow header lists the ones it does.',
  LINK_NOT_FOUND: 'No link with that alias on that domain.',
  STATS_REQUIRES_PRO: 'Link statistics are a Pro feature; data has the basic totals. Upgrade with POST /api/v1/account/upgrade.',
  STATS_UNAVAILABLE: 'Statistics are temporarily unavailable; retry shortly.',
  TAG_NOT_FOUND: 'No tag with that id in this account.',
  TAG_EXISTS: 'This account already has a tag with that name.',
  TAG_LIMIT_REACHED: 'The account has all the tags it may have (limit in the answer); delete one to make room.',
  INVALID_DOMAIN: 'hostname must be a domain name such as links.example.com, without scheme, port or path.',
  DOMAIN_RESERVED: 'This host name belongs to the service itself and cannot be added as a custom domain.',
  DOMAIN_NOT_FOUND: 'No custom domain with that host name in this account.',
  DOMAIN_TAKEN: 'This host name is already registered.',
  DOMAIN_LIMIT_REACHED: "The plan's custom domains are used up; remove one or upgrade.",
  DOMAIN_NOT_VERIFIED: 'The verification TXT record was not found; create it and try again.',
  ALIAS_TAKEN: 'That alias is taken on that domain; choose another (POST /api/v1/alias/check tells).',
  DOMAIN_NOT_ALLOWED: 'domain must be one of your verified custom domains, or left out for the default domain.',
  LINK_QUOTA_EXCEEDED: 'This account has created all the links its plan allows this month; upgrade or wait for the next month.',
  PASSWORD_INCORRECT: 'The password is not correct.',
  PAYLOAD_TOO_LARGE: 'The request body is too large.',
  IDEMPOTENCY_KEY_REUSED: 'This Idempotency-Key was used for a different request; send a new key for a new request.',
  IDEMPOTENCY_IN_PROGRESS: 'A request with this Idempotency-Key is still in progress; retry after the Retry-After seconds.',
  RATE_LIMITED: 'Too many requests; retry after the number of seconds in the Retry-After header.',
  QR_BUSY: 'Too many QR codes are being drawn at the moment; retry after the number of seconds in the Retry-After header.',
  GUEST_LINK_LIMIT: 'This guest session has used all its links; register to create more.',
  GUEST_NETWORK_LIMIT: 'Your network has created as many guest links today as it may; register to create more, or retry after midnight UTC.',
  GUEST_REQUEST_LIMIT: 'This guest token has used all its requests; register for an API key.',
  EMAIL_TAKEN: 'This e-mail address already has an account; use its API key.',
  INVALID_CODE: 'The code does not match; check the e-mail or request a new code with POST /api/v1/guest/register.',
  CODE_EXPIRED: 'The code has expired; request a new one with POST /api/v1/guest/register.',
  TOO_MANY_ATTEMPTS: 'Too many wrong codes; request a new code with POST /api/v1/guest/register.',
  ALREADY_PRO: 'This account is already on Pro.',
  ACCOUNT_NOT_FOUND: 'The account of this API key no longer exists.',
  REPORT_NOT_FOUND: 'No report with that id.',
  HOST_NOT_BANNED: 'This host is not banned.',
  API_KEY_NOT_FOUND: 'No live API key with that id in this account.',
  API_KEY_LIMIT_REACHED: 'The account has all the API keys it may have (limit in the answer); revoke one to make room.',
  CHECKOUT_NOT_FOUND: 'No such checkout for this account.',
  WEBHOOK_URL_INVALID: 'url must be an https URL without user name or password whose host is a public name or address.',
  WEBHOOK_NOT_FOUND: 'No webhook with that id in this account.',
  WEBHOOK_DELIVERY_NOT_FOUND: 'No delivery with that id for this webhook.',
  WEBHOOK_LIMIT_REACHED: 'The account has all the webhooks it may have (limit in the answer); delete one to make room.',
  WEBHOOK_DISABLED: 'This webhook is disabled: nothing is sent to it. Enable it with PATCH {"status": "active"} first.',
  WEBHOOK_SIGNATURE_INVALID: 'The webhook signature is missing, wrong or too old.',
  BILLING_UNAVAILABLE: 'The payment provider is unavailable; nothing was charged. Retry shortly.',
  MAIL_UNAVAILABLE: 'The verification e-mail could not be sent; retry shortly.',
  AGENT_NOT_FOUND: 'No Agent with that id in this account.',
  AGENT_KILLED: 'This Agent was killed; it gets no new tokens. Create a new Agent if it should work again.',
  APPROVAL_NOT_FOUND: 'No approval with that id in this account.',
  APPROVAL_DECIDED: 'This approval is no longer pending; its status says what happened.',
  OAUTH_REQUEST_NOT_FOUND: 'No consent request with that id; it may belong to another account.',
  OAUTH_REQUEST_DECIDED: 'This consent request is no longer pending (decided or expired); the client has to start the authorization again.',
  INTERNAL_ERROR: 'Something went wrong on our side; the request can be retried.',
  SERVICE_UNAVAILABLE: 'A backing service is unavailable; retry shortly.',
  CLICK_SIGNATURE_INVALID: 'clickSignature must be the mu_sig that came with this mu_click, unchanged.',
  LINK_NOT_OWNED: "This API key belongs to another account than the clicked link; use the link owner's key or the click signature.",
  PRO_REQUIRED: "Conversion attribution is a Pro feature; the link's account is not on Pro.",
  OCCURRED_AT_INVALID: 'occurredAt must be after the click and at most five minutes in the future.',
  CONVERSION_WINDOW_CLOSED: 'The 30-day attribution window of this click has closed.',
  CONVERSION_LIMIT: "This click already carries the most conversions of this type a signed report may add; report further ones with the API key of the link's account.",
  CONVERSION_CONFLICT: 'This eventId or externalOrderId was already reported with a different payload; send a new key for a new conversion.',
}

export interface ApiErrorExtra {
  limit?: number | null
  remaining?: number | null
  upgrade_url?: string
  data?: Record<string, unknown>
  meta?: Record<string, unknown>
  /** Seconds for the Retry-After header (always set on a 429). */
  retryAfter?: number
  headers?: Record<string, string>
  /** The Agent behind a refused at_ token, for its audit event; never sent. */
  agent?: { accountId: string; agentId: string }
}

/** Error answers of this process by code, for /metrics (plugins/metrics.ts): one Map update an error. */
export const errorResponseCounts = new Map<ErrorCode, number>()

export class ApiError extends Error {
  readonly status: number
  readonly hint: string

  constructor(
    readonly code: ErrorCode,
    hint?: string,
    readonly extra: ApiErrorExtra = {},
  ) {
    super(code)
    this.name = 'ApiError'
    this.status = ERROR_STATUS[code]
    this.hint = hint ?? DEFAULT_HINT[code]
  }

  toBody(): ErrorBody {
    const { limit, remaining, upgrade_url, data, meta } = this.extra
    return {
      success: false,
      error: this.code,
      hint: this.hint,
      ...(limit !== undefined && { limit }),
      ...(remaining !== undefined && { remaining }),
      ...(upgrade_url !== undefined && { upgrade_url }),
      ...(data !== undefined && { data }),
      meta: meta ?? {},
    }
  }

  toResponse(inherited: Record<string, string> = {}): Response {
    errorResponseCounts.set(this.code, (errorResponseCounts.get(this.code) ?? 0) + 1)
    const headers: Record<string, string> = { ...inherited, ...this.extra.headers }
    if (this.extra.retryAfter !== undefined) headers['retry-after'] = String(Math.max(1, Math.ceil(this.extra.retryAfter)))
    headers['content-type'] = 'application/json'
    headers['cache-control'] = 'no-store'
    return new Response(JSON.stringify(this.toBody()), { status: this.status, headers })
  }
}

/**
 * A JSON integer. Elysia's t.Integer also accepts numeric strings (meant for query strings) and documents
 * itself as that union; this is a plain number that must be whole, shown as `type: integer` by docs.ts.
 */
export const Int = (options: Parameters<typeof t.Number>[0] = {}) => t.Number({ ...options, multipleOf: 1 })

/** Free-form object (spec: "free-form"); written once so every such field documents alike. */
export const FreeForm = (description?: string) => t.Object({}, { additionalProperties: true, description })

/** Every response's `meta`; additional properties allowed. */
export const Meta = t.Object(
  {
    account_type: t.Optional(t.String({ examples: ['guest'] })),
    hint: t.Optional(t.String()),
    usage: t.Optional(FreeForm('Quota used and left for this credential')),
    notices: t.Optional(t.Array(FreeForm(), { description: 'For a guest token: the request fields that were ignored' })),
    limitations: t.Optional(t.Array(t.String())),
    upgrade: t.Optional(FreeForm('How to lift the current limits')),
  },
  { additionalProperties: true, description: 'Usage, notices, limitations and upgrade hints; read it on every response' },
)

export const ErrorResponse = t.Object(
  {
    success: t.Boolean(),
    error: t.String({ description: 'Stable UPPER_SNAKE error code', enum: Object.keys(ERROR_STATUS) }),
    hint: t.Optional(t.String({ description: 'What to do about it, for people' })),
    upgrade_url: t.Optional(t.String()),
    remaining: t.Optional(t.Union([Int(), t.Null()])),
    limit: t.Optional(t.Union([Int(), t.Null()])),
    data: t.Optional(FreeForm()),
    meta: t.Optional(Meta),
  },
  {
    description: 'Every error has this shape',
    examples: [
      { success: false, error: 'VALIDATION_FAILED', hint: 'body.url: Expected string', meta: {} },
      {
        success: false,
        error: 'GUEST_LINK_LIMIT',
        hint: 'This guest session has used all its links; register to create more.',
        limit: 10,
        remaining: 0,
        upgrade_url: 'https://api.example.com/api/v1/guest/register',
        meta: { account_type: 'guest' },
      },
    ],
  },
)

export type ErrorBody = typeof ErrorResponse.static

/** How each Elysia-raised error maps onto our codes. Unknown → INTERNAL_ERROR (and logged). */
export function toApiError(code: string | number, error: unknown, place?: ErrorPlace): ApiError {
  if (error instanceof ApiError) return error
  switch (code) {
    case 'PARSE': {
      // Our body parser throws ApiError inside Elysia's parse step, which wraps it in a ParseError.
      const cause = (error as { cause?: unknown })?.cause
      if (cause instanceof ApiError) return cause
      return new ApiError('MALFORMED_JSON')
    }
    case 'VALIDATION':
      return validationError(error, place)
    case 'NOT_FOUND':
      return new ApiError('NOT_FOUND')
    case 'INVALID_COOKIE_SIGNATURE':
    case 'INVALID_FILE_TYPE':
      return new ApiError('VALIDATION_FAILED')
  }
  return internalError(error, place)
}

interface ValidationLike {
  type?: string
  value?: unknown
  all?: { path?: string; message?: string }[]
}

const MAX_REPORTED_ISSUES = 10
/** Messages are TypeBox's generic ones ("Expected string"), never the rejected value; bounded anyway. */
const MAX_MESSAGE_CHARS = 200

function validationError(error: unknown, place?: ErrorPlace): ApiError {
  const v = error as ValidationLike
  // A response that fails its own schema is our bug, not the client's.
  if (v.type === 'response') return internalError(error, place)
  const where = v.type ?? 'body'
  let issues: { field: string; message: string }[] = []
  try {
    issues = (v.all ?? []).slice(0, MAX_REPORTED_ISSUES).map((issue) => ({
      field: fieldName(where, issue.path),
      message: issue.path && valueAt(v.value, issue.path) === undefined ? 'is required' : (issue.message || 'invalid value').slice(0, MAX_MESSAGE_CHARS),
    }))
  } catch {
    // `all` is computed lazily from the schema; never let reporting an error raise another.
  }
  const first = issues[0]
  const notAnObject = where === 'body' && (typeof v.value !== 'object' || v.value === null || Array.isArray(v.value))
  const hint = notAnObject
    ? 'body: must be a JSON object (see /swagger for its fields)'
    : first
      ? `${first.field}: ${first.message}`
      : `The ${where} does not match the documented schema; see /swagger.`
  return new ApiError('VALIDATION_FAILED', hint, { data: { errors: issues } })
}

function valueAt(root: unknown, pointer: string): unknown {
  let value = root
  for (const key of pointer.split('/').slice(1)) {
    if (typeof value !== 'object' || value === null) return undefined
    value = (value as Record<string, unknown>)[key.replaceAll('~1', '/').replaceAll('~0', '~')]
  }
  return value
}

/** JSON-pointer path ("/url") → "body.url"; the whole value → "body". */
function fieldName(where: string, path: string | undefined): string {
  if (!path || path === '/') return where
  return `${where}.${path.slice(1).split('/').join('.')}`
}

/** Where an unexpected error happened, for its log line: never a value from the request. */
export interface ErrorPlace {
  method: string
  route: string
  requestId: string
}

/**
 * An unexpected error: logged once with the route, the request id the client also gets, the error's
 * class and code and its stack frames — never its message, which may quote the request or SQL
 * parameters (lib/errors.ts), nor the request itself (it may carry a token).
 */
function internalError(error: unknown, place?: ErrorPlace): ApiError {
  const where = place ? ` ${place.method} ${place.route}` : ''
  const frames = stackFrames(error)
  log.error({ ...(place && { request_id: place.requestId }), error: errorSummary(error), ...(frames && { stack: frames }) }, `INTERNAL_ERROR${where}`)
  return new ApiError('INTERNAL_ERROR', place ? `Unexpected error; quote request id ${place.requestId} when reporting it.` : undefined)
}

function stringHeaders(headers: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (typeof value === 'string' || typeof value === 'number') out[name] = String(value)
  }
  return out
}

/**
 * Global error mapping plus the shared models. Headers already set on the request (X-RateLimit-*)
 * survive into the error response; Elysia's own content-type does not.
 */
export const errors = new Elysia({ name: 'plugins.errors' }).model({ ErrorResponse }).onError({ as: 'global' }, ({ code, error, set, request, route, path }) => {
  const id = requestId(request)
  const inherited = stringHeaders(set.headers as Record<string, unknown>)
  delete inherited['content-type']
  inherited['x-request-id'] = id
  const response =
    error instanceof OAuthError ? error.toResponse(inherited) : answer(toApiError(code, error, { method: request.method, route: (route || path).slice(0, 200), requestId: id }), path, inherited)
  // What the request log reads once the answer is out (Elysia leaves its own guess in set.status).
  set.status = response.status
  return response
})

function answer(error: ApiError, path: string, headers: Record<string, string>): Response {
  return isOAuthPath(path) ? asOAuthError(error).toResponse(headers) : error.toResponse(headers)
}

/** The vendor keyword of an error schema that carries the codes a route answers with at one status. */
export const ERROR_CODES_KEYWORD = 'x-error-codes'

type StatusOf<C extends ErrorCode> = (typeof ERROR_STATUS)[C]

/**
 * The error responses a route lists in its document, named by the codes the route itself raises:
 * `errorResponses('ALIAS_TAKEN', 'DOMAIN_NOT_ALLOWED')` gives a 409 and a 403 ErrorResponse, each
 * carrying its codes so the document shows one example per code. A route with params or query
 * schemas lists VALIDATION_FAILED. Codes every route of a kind shares (UNAUTHORIZED and rate limits
 * with `auth`, the body codes with a JSON body, the Idempotency-Key codes with `idempotent`) are added
 * by plugins/openapi-document.ts, not listed here.
 */
export function errorResponses<const C extends ErrorCode>(...codes: C[]): { [K in StatusOf<C>]: typeof ErrorResponse } {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const code of codes) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code])
  return Object.fromEntries([...byStatus].map(([status, list]) => [status, t.Object(ErrorResponse.properties, { [ERROR_CODES_KEYWORD]: list })])) as { [K in StatusOf<C>]: typeof ErrorResponse }
}
