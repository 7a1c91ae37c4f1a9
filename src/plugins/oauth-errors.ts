// The error body of the OAuth endpoints (/oauth/*): RFC 6749 5.2's `{error, error_description}` with a
// lower-case code, not the API's ErrorResponse. Routes throw OAuthError with an RFC code (RFC 7591 adds
// invalid_redirect_uri and invalid_client_metadata); any other error on those paths (a body too large,
// a rate limit, a bug) is mapped here so an OAuth client always reads the shape its library expects.

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'access_denied'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'unsupported_token_type'
  | 'unsupported_response_type'
  | 'temporarily_unavailable'
  | 'server_error'

export class OAuthError extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    readonly status = 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(code)
    this.name = 'OAuthError'
  }

  toResponse(inherited: Record<string, string> = {}): Response {
    return new Response(JSON.stringify({ error: this.code, error_description: this.description }), {
      status: this.status,
      headers: { ...inherited, ...this.headers, 'content-type': 'application/json', 'cache-control': 'no-store', pragma: 'no-cache' },
    })
  }
}

/** Paths that answer in the RFC shape. */
export function isOAuthPath(path: string): boolean {
  return path.startsWith('/oauth/')
}

/** What asOAuthError reads of an API error (errors.ts's ApiError). */
interface ApiErrorLike {
  status: number
  hint: string
  extra: { retryAfter?: number }
}

/** An API error met on an OAuth path, in the RFC shape: the status kept, the code the closest RFC one. */
export function asOAuthError(error: ApiErrorLike): OAuthError {
  const retryAfter = error.extra.retryAfter
  const headers: Record<string, string> = retryAfter === undefined ? {} : { 'retry-after': String(Math.max(1, Math.ceil(retryAfter))) }
  const code: OAuthErrorCode = error.status >= 500 ? (error.status === 503 ? 'temporarily_unavailable' : 'server_error') : error.status === 429 ? 'temporarily_unavailable' : 'invalid_request'
  return new OAuthError(code, error.hint, error.status, headers)
}
