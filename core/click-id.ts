// Signed click ids for Pro attribution (docs/decisions/0010-click-id-and-signature.md). A Pro redirect appends
// `mu_click` (this id) and `mu_sig` (its HMAC) to the destination; a conversion later arrives with both and
// is validated from them alone — no lookup, even before the click has reached ClickHouse.
//
// mu_click: 44 base64url characters of 33 bytes (a multiple of 3, so no padding bits to tamper with):
//   [0]      version, 1
//   [1..6]   click time, unix milliseconds, 48-bit big-endian (good until the year 10889)
//   [7..16]  10 random bytes: two clicks of one link in one millisecond still differ
//   [17..32] the 16 random bytes of the link id (`link_` + their 22 base64url characters)
// mu_sig: `<kid>.<base64url HMAC-SHA256 of mu_click under the secret of kid>`, at most 16 + 1 + 43 = 60
// characters. The key id lets secrets rotate: the first configured key signs, every configured key verifies.
import { timingSafeEqual } from 'node:crypto'

export interface ClickSigningKey {
  /** Key id, [A-Za-z0-9_-]{1,16}: public, travels in mu_sig. */
  kid: string
  /** HMAC secret, at least 32 characters; never leaves the server. */
  secret: string
}

export const CLICK_ID_VERSION = 1
/** Length of a mu_click (the API contract allows up to 64). */
export const CLICK_ID_LENGTH = 44
export const KID_PATTERN = /^[A-Za-z0-9_-]{1,16}$/

const LINK_ID_PREFIX = 'link_'
const LINK_ID_BYTES = 16
const RANDOM_BYTES = 10
const BYTES = 1 + 6 + RANDOM_BYTES + LINK_ID_BYTES
const CLICK_ID_PATTERN = /^[A-Za-z0-9_-]{44}$/
/** `link_` + 22 base64url characters whose last one carries no stray padding bits (what randomId makes). */
const LINK_ID_PATTERN = /^link_[A-Za-z0-9_-]{21}[AQgw]$/
const SIG_PATTERN = /^([A-Za-z0-9_-]{1,16})\.([A-Za-z0-9_-]{43})$/

/** True when the link id has the shape a click id can carry (the API's `link_` + 16 random bytes). */
export function isClickableLinkId(linkId: string): boolean {
  return LINK_ID_PATTERN.test(linkId)
}

/** A new click id for a click on `linkId` at `atMs`. Throws a RangeError for a link id it cannot carry. */
export function newClickId(linkId: string, atMs: number): string {
  if (!isClickableLinkId(linkId)) throw new RangeError(`not a link id a click id can carry: ${linkId}`)
  if (!Number.isSafeInteger(atMs) || atMs < 0 || atMs >= 2 ** 48) throw new RangeError(`click time out of range: ${atMs}`)
  const bytes = Buffer.allocUnsafe(BYTES)
  bytes[0] = CLICK_ID_VERSION
  bytes.writeUIntBE(atMs, 1, 6)
  crypto.getRandomValues(bytes.subarray(7, 7 + RANDOM_BYTES))
  bytes.write(linkId.slice(LINK_ID_PREFIX.length), 7 + RANDOM_BYTES, 'base64url')
  return bytes.toString('base64url')
}

/** The link and the click time a click id carries, or null for anything that is not one. Never throws. */
export function parseClickId(id: unknown): { linkId: string; atMs: number } | null {
  if (typeof id !== 'string' || !CLICK_ID_PATTERN.test(id)) return null
  const bytes = Buffer.from(id, 'base64url')
  if (bytes.length !== BYTES || bytes[0] !== CLICK_ID_VERSION) return null
  return {
    atMs: bytes.readUIntBE(1, 6),
    linkId: LINK_ID_PREFIX + bytes.subarray(7 + RANDOM_BYTES).toString('base64url'),
  }
}

function mac(id: string, secret: string): string {
  return new Bun.CryptoHasher('sha256', secret).update(id).digest('base64url')
}

/** mu_sig of a click id under the first key (the current one). */
export function signClickId(id: string, keys: readonly ClickSigningKey[]): string {
  const key = keys[0]
  if (!key) throw new RangeError('no click signing key configured')
  return `${key.kid}.${mac(id, key.secret)}`
}

/**
 * True only when `sig` is the signature of exactly this click id under one of the keys, named by its kid.
 * The comparison is constant-time; it compares the base64url text, so even a character that differs only
 * in padding bits is refused. Never throws.
 */
export function verifyClickSignature(id: unknown, sig: unknown, keys: readonly ClickSigningKey[]): boolean {
  if (typeof sig !== 'string' || parseClickId(id) === null) return false
  const match = SIG_PATTERN.exec(sig)
  if (!match) return false
  const key = keys.find((k) => k.kid === match[1])
  if (!key) return false
  const expected = Buffer.from(mac(id as string, key.secret))
  const given = Buffer.from(match[2]!)
  return given.length === expected.length && timingSafeEqual(given, expected)
}
