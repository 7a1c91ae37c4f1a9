// Where the browser goes after signing in, signing out, or deciding a consent or an approval: `next`,
// a path on this site and nothing else, so no page of the service can be used to send people elsewhere
// (an open redirect). Every return path the service accepts goes through returnPath().

/** Where a sign-in without `next` ends: a page saying who is signed in, with a sign-out button. */
export const DEFAULT_NEXT = '/signin/done'

/** Where a `next` that is not a path on this site leads instead: the dashboard. */
export const FALLBACK_NEXT = '/app'

const MAX_NEXT_LENGTH = 2048
const PROBE_ORIGIN = 'http://next.invalid'
/** How many rounds of percent-decoding are looked through: a double-encoded "//" is caught too. */
const DECODE_ROUNDS = 3

/**
 * The path to send the browser to: absent or empty is `absent` (DEFAULT_NEXT); a path on this site is
 * returned as the URL parser normalises it; anything else is FALLBACK_NEXT.
 */
export function returnPath(raw: unknown, absent: string = DEFAULT_NEXT): string {
  if (raw === undefined || raw === '') return absent
  return localPath(raw) ?? FALLBACK_NEXT
}

/** `/signin?next=…` for a page that needs a session, with the page checked like any other `next`. */
export function signInUrl(next: string): string {
  return `/signin?next=${encodeURIComponent(returnPath(next, FALLBACK_NEXT))}`
}

/**
 * A path on this site, normalised, or null. A browser reads "//host" and "/\host" as another host,
 * drops tabs and newlines from URLs and reads "\" as "/"; the URL parser removes dot segments, also
 * percent-encoded ones ("/%2e%2e//host" becomes "//host"). So the raw text may hold no whitespace,
 * control character or backslash; no percent-decoded form of it (a page that decodes it once or twice
 * before navigating) may start like another host; and the normalised result must be a path that
 * normalises to itself.
 */
export function localPath(raw: unknown): string | null {
  if (typeof raw !== 'string' || raw.length > MAX_NEXT_LENGTH || !plainPath(raw)) return null
  let form = raw
  for (let round = 0; round < DECODE_ROUNDS; round++) {
    const decoded = decodeOnce(form)
    if (decoded === form) break
    if (!startsAsPath(decoded) || !startsAsPath(normalised(decoded) ?? '')) return null
    form = decoded
  }
  const path = normalised(raw)
  if (path === null || !plainPath(path) || normalised(path) !== path) return null
  return path
}

/** One path on this site to a browser: a single leading "/", no whitespace, controls or backslashes. */
function plainPath(text: string): boolean {
  return startsAsPath(text) && !/[\u0000-\u0020\u007f\\]/.test(text)
}

/** Starts with one "/" and not a second "/" or "\" (tabs and newlines dropped, as a browser drops them). */
function startsAsPath(text: string): boolean {
  return /^\/(?![\\/])/.test(text.replace(/[\t\n\r]/g, ''))
}

function decodeOnce(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    // A "%" not followed by two hex digits: the URL parser keeps it as it is, and so does a browser.
    return text
  }
}

/** The path, query and fragment the URL parser makes of `text` on this origin; null when it leaves it. */
function normalised(text: string): string | null {
  let url: URL
  try {
    url = new URL(text, PROBE_ORIGIN)
  } catch {
    return null
  }
  if (url.origin !== PROBE_ORIGIN) return null
  return url.pathname + url.search + url.hash
}
