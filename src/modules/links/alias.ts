// Generated aliases: 7 characters of [A-Za-z0-9] (docs/decisions/0006-aliases-and-reserved-words.md), 62^7 ≈ 3.5e12 values, drawn from the
// CSPRNG by rejection sampling so every character is equally likely (no modulo bias).
import { RESERVED_ALIASES } from '../../../core/link-cache'

export const GENERATED_ALIAS_LENGTH = 7
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
/** Largest multiple of 62 that fits in a byte: bytes at or above it are thrown away (8 of 256). */
const UNBIASED_LIMIT = 256 - (256 % ALPHABET.length)

export function generateAlias(length = GENERATED_ALIAS_LENGTH): string {
  let out = ''
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte >= UNBIASED_LIMIT) continue
      out += ALPHABET[byte % ALPHABET.length]
      if (out.length === length) break
    }
  }
  return out
}

/** Reserved words cannot be taken on the default domain; compared case-insensitively to be safe. */
export function isReservedAlias(alias: string): boolean {
  return RESERVED_ALIASES.has(alias.toLowerCase())
}
