// Bearer tokens and other secrets: generated here, stored only as their hash, compared in constant
// time. A token is 256 random bits, so a fast hash (SHA-256) is enough at rest: a slow password hash
// would only cost every request. Passwords people choose use Bun.password instead.
import { timingSafeEqual } from 'node:crypto'

/** Token prefixes (spec: gt_ guest, mk_ API key; at_/rt_ OAuth access and refresh tokens). */
export const TOKEN_PREFIXES = {
  guest: 'gt_',
  apiKey: 'mk_',
  access: 'at_',
  refresh: 'rt_',
} as const

export type TokenKind = keyof typeof TOKEN_PREFIXES

/** 32 random bytes: 43 base64url characters after the prefix. */
const TOKEN_BYTES = 32

export function randomBase64url(bytes: number): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('base64url')
}

/** A new bearer token of a kind; shown to its owner once, stored as hashSecret(token). */
export function newToken(kind: TokenKind): string {
  return TOKEN_PREFIXES[kind] + randomBase64url(TOKEN_BYTES)
}

/** The kind of a token by its prefix, or null. */
export function tokenKind(token: string): TokenKind | null {
  for (const [kind, prefix] of Object.entries(TOKEN_PREFIXES)) if (token.startsWith(prefix)) return kind as TokenKind
  return null
}

/** SHA-256 (hex) of a secret: what is stored and looked up instead of the secret. */
export function hashSecret(secret: string): string {
  return new Bun.CryptoHasher('sha256').update(secret).digest('hex')
}

/** Constant-time equality of two strings of any lengths (both hashed first, so lengths leak nothing). */
export function sameSecret(given: string, expected: string): boolean {
  const a = new Bun.CryptoHasher('sha256').update(given).digest()
  const b = new Bun.CryptoHasher('sha256').update(expected).digest()
  return timingSafeEqual(a, b)
}
