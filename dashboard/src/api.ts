// The dashboard's one way to the service: the typed client generated from the API's OpenAPI document
// (client/), called with the session cookie the browser holds; writes carry the session's CSRF token,
// which the page shell hands over in a meta tag. No API key is ever in this code.
import { createLinkClient, type components } from '../../client/index.ts'

export type Schemas = components['schemas']
export type ErrorBody = Schemas['ErrorResponse']

const csrfToken = document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')?.content ?? ''

let leaving = false

/**
 * Where a page sends someone whose session ended: sign-in, then back to the same page. Once: a page
 * whose calls all come back 401 would otherwise start a navigation per call, each cutting the last short.
 */
export function signInAgain(): void {
  if (leaving) return
  leaving = true
  const here = location.pathname + location.search
  location.assign(`/signin?next=${encodeURIComponent(here)}`)
}

export const api = createLinkClient(location.origin, undefined, {
  headers: { 'x-csrf-token': csrfToken },
  // A 401 means the session is over (expired, signed out elsewhere): sign in again and come back here.
  fetch: async (request: Request) => {
    const response = await fetch(request)
    if (response.status === 401) signInAgain()
    return response
  },
})

/** A failed call in words a person can act on: the API's hint when it gave one, else its code. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly hint: string | undefined,
  ) {
    super(hint ?? code)
  }
}

/** The data of a successful call, or an ApiFailure carrying the error body's code and hint. */
export function must<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data !== undefined && result.response.ok) return result.data
  const body = (result.error ?? {}) as Partial<ErrorBody>
  throw new ApiFailure(result.response.status, String(body.error ?? `HTTP_${result.response.status}`), typeof body.hint === 'string' ? body.hint : undefined)
}

export function describeFailure(error: unknown): string {
  if (error instanceof ApiFailure) return error.hint ? `${error.hint} (${error.code})` : error.code
  if (error instanceof Error) return error.message
  return String(error)
}
