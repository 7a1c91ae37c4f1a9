// Password-protected links at the redirector. GET shows a form (pages.ts passwordPage); the form posts
// `password` (application/x-www-form-urlencoded) back to the link's address. The redirector cannot
// check it (the hash stays in Postgres), so it asks the API's POST /internal/unlock, which checks it
// with Bun.password and limits attempts per client IP and link. Right → the caller redirects and counts
// the click; wrong → 401 with the form again; too many → 429. The password travels only in that POST
// body and the internal call's body: never in a URL, a cookie or a log line.
import { readCapped } from '../core/read-capped'
import type { CachedLink } from '../core/link-cache'
import type { Unlock, UnlockResult } from './internal-api'
import { notFoundPage, passwordPage, tooManyAttemptsPage, unavailablePage } from './pages'

/** Longest password a link can have (src/modules/links/model.ts MAX_PASSWORD_LENGTH): longer is wrong. */
const MAX_PASSWORD_LENGTH = 128
/** The form has one field of at most 128 characters; percent-encoded that is under 1.2 KiB. */
const MAX_FORM_BYTES = 4096

export const WRONG_PASSWORD = 'That password is not correct.'
export const EMPTY_PASSWORD = 'Enter the password.'
export const BAD_FORM = 'Send the password with the form on this page.'

/** The submitted form, or null when it is not a small urlencoded form. */
export async function readForm(request: Request): Promise<URLSearchParams | null> {
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
  if (type !== 'application/x-www-form-urlencoded' || !request.body) return null
  const length = request.headers.get('content-length')
  if (length !== null && Number(length) > MAX_FORM_BYTES) return null
  const bytes = await readCapped(request, MAX_FORM_BYTES)
  return bytes === null ? null : new URLSearchParams(new TextDecoder().decode(bytes))
}

/**
 * POST to a protected link: the link's current record when the password is right, else the page to
 * answer with. Unlocking needs the API; without it the answer is 503 (never a redirect).
 */
export async function unlockWithForm(request: Request, linkId: string, ip: string, unlock: Unlock | undefined): Promise<CachedLink | Response> {
  const form = await readForm(request).catch(() => null)
  if (form === null) return passwordPage(400, BAD_FORM)
  const password = form.get('password') ?? ''
  if (password === '') return passwordPage(401, EMPTY_PASSWORD)
  // No stored password is longer; not worth an attempt of the visitor's allowance.
  if (password.length > MAX_PASSWORD_LENGTH) return passwordPage(401, WRONG_PASSWORD)
  if (!unlock) return unavailablePage()
  let result: UnlockResult
  try {
    result = await unlock(linkId, password, ip)
  } catch {
    return unavailablePage()
  }
  switch (result.kind) {
    case 'ok':
      return result.link
    case 'wrong':
      return passwordPage(401, WRONG_PASSWORD)
    case 'limited':
      return tooManyAttemptsPage(result.retryAfterSeconds)
    case 'gone':
      return notFoundPage()
  }
}
