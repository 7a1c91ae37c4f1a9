// The Continue link of a flagged link's warning page: `/{alias}?continue=<expiry>.<mac>`, an HMAC of the
// link id and the expiry under a key derived from INTERNAL_SECRET, so only a visitor who saw the warning
// (in the last few minutes) is redirected, and a tampered token shows the warning again.
import { createHmac, timingSafeEqual } from 'node:crypto'

/** How long a Continue link works after the warning was shown. */
export const CONTINUE_TTL_MS = 10 * 60_000

export function continueKey(internalSecret: string): Buffer {
  return createHmac('sha256', internalSecret).update('continue-token/v1').digest()
}

function mac(key: Buffer, linkId: string, expiry: number): string {
  return createHmac('sha256', key).update(`${linkId}.${expiry}`).digest('base64url').slice(0, 32)
}

export function continueToken(key: Buffer, linkId: string, now: number): string {
  const expiry = Math.floor((now + CONTINUE_TTL_MS) / 1000)
  return `${expiry}.${mac(key, linkId, expiry)}`
}

/** Whether `token` was made for this link and has not expired (nor claims an expiry past the TTL). */
export function continueTokenValid(key: Buffer, linkId: string, token: string | null, now: number): boolean {
  if (token === null) return false
  const dot = token.indexOf('.')
  const expiry = Number(token.slice(0, dot))
  if (dot < 1 || !Number.isInteger(expiry) || expiry * 1000 <= now || expiry * 1000 > now + CONTINUE_TTL_MS + 1000) return false
  const given = Buffer.from(token.slice(dot + 1))
  const wanted = Buffer.from(mac(key, linkId, expiry))
  return given.length === wanted.length && timingSafeEqual(given, wanted)
}
