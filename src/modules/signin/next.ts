// Where the browser goes after signing in: `next`, a path on this site and nothing else, so the
// sign-in pages cannot be used to send people elsewhere (an open redirect).

/** Where a sign-in without `next` ends: a page saying who is signed in, with a sign-out button. */
export const DEFAULT_NEXT = '/signin/done'

const MAX_NEXT_LENGTH = 2048
const PROBE_ORIGIN = 'http://next.invalid'

/**
 * `next` made safe: absent or empty is DEFAULT_NEXT; a path on this site is returned normalised;
 * anything else is null (the caller refuses the request). "//host" and "/\host" are other hosts to a
 * browser, which also drops tabs and newlines from URLs and reads "\" as "/": so whitespace, control
 * characters and backslashes are refused anywhere in it.
 */
export function localPath(raw: unknown): string | null {
  if (raw === undefined || raw === '') return DEFAULT_NEXT
  if (typeof raw !== 'string' || raw.length > MAX_NEXT_LENGTH) return null
  if (!raw.startsWith('/') || raw.startsWith('//')) return null
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0020\u007f\\]/.test(raw)) return null
  let url: URL
  try {
    url = new URL(raw, PROBE_ORIGIN)
  } catch {
    return null
  }
  if (url.origin !== PROBE_ORIGIN) return null
  return url.pathname + url.search + url.hash
}
