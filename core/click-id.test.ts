import { describe, expect, test } from 'bun:test'
import { CLICK_ID_LENGTH, newClickId, parseClickId, signClickId, verifyClickSignature, type ClickSigningKey } from './click-id'
import { ConfigError, parseConfig } from './config'

const linkId = () => `link_${Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('base64url')}`
const keyA: ClickSigningKey = { kid: 'a1', secret: 'secret-a-0123456789abcdefghijklmnopqrstuvwxyz' }
const keyB: ClickSigningKey = { kid: 'b2', secret: 'secret-b-0123456789abcdefghijklmnopqrstuvwxyz' }
const keys = [keyA]

/** `text` with the character at `index` replaced by a different base64url character. */
function flip(text: string, index: number): string {
  const c = text[index]!
  return text.slice(0, index) + (c === 'A' ? 'B' : 'A') + text.slice(index + 1)
}

describe('click id', () => {
  test('round trip: carries the link id and the click time, compact base64url', () => {
    const link = linkId()
    const at = Date.UTC(2026, 10, 21, 23, 5, 0, 123)
    const id = newClickId(link, at)
    expect(id).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(id.length).toBe(CLICK_ID_LENGTH)
    expect(id.length).toBeLessThanOrEqual(64)
    expect(parseClickId(id)).toEqual({ linkId: link, atMs: at })
  })

  test('two clicks of one link in the same millisecond get different ids', () => {
    const link = linkId()
    const ids = new Set(Array.from({ length: 1000 }, () => newClickId(link, 1_700_000_000_000)))
    expect(ids.size).toBe(1000)
  })

  test('refuses link ids it cannot carry and times out of range', () => {
    for (const bad of ['link_short', `link_${crypto.randomUUID()}`, `agt_${'A'.repeat(22)}`, `link_${'A'.repeat(21)}B`]) {
      expect(() => newClickId(bad, 0), bad).toThrow(RangeError)
    }
    expect(() => newClickId(linkId(), -1)).toThrow(RangeError)
    expect(() => newClickId(linkId(), 2 ** 48)).toThrow(RangeError)
  })

  test('garbage never throws and parses to null', () => {
    const id = newClickId(linkId(), Date.now())
    const garbage: unknown[] = [undefined, null, 42, {}, [], '', 'x', 'A'.repeat(44), id.slice(1), `${id}A`, id.replace(/.$/, '!'), '💥'.repeat(22), '\0'.repeat(44), 'A'.repeat(10_000)]
    for (const value of garbage) {
      expect(parseClickId(value), String(value)).toBeNull()
      expect(verifyClickSignature(value, signClickId(id, keys), keys)).toBe(false)
      expect(verifyClickSignature(id, value, keys)).toBe(false)
    }
  })
})

describe('click signature', () => {
  test('round trip: kid.signature, at most 128 characters, verifies', () => {
    const id = newClickId(linkId(), Date.now())
    const sig = signClickId(id, keys)
    expect(sig).toMatch(/^a1\.[A-Za-z0-9_-]{43}$/)
    expect(sig.length).toBeLessThanOrEqual(128)
    expect(verifyClickSignature(id, sig, keys)).toBe(true)
  })

  test('one flipped character anywhere in the signature or the id is rejected', () => {
    const id = newClickId(linkId(), Date.now())
    const sig = signClickId(id, keys)
    for (let i = 0; i < sig.length; i++) {
      if (sig[i] === '.') continue
      expect(verifyClickSignature(id, flip(sig, i), keys), `sig ${i}`).toBe(false)
    }
    for (let i = 0; i < id.length; i++) expect(verifyClickSignature(flip(id, i), sig, keys), `id ${i}`).toBe(false)
    // The last character carries padding bits in lenient decoders: its neighbours must not pass either.
    for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_') {
      const altered = sig.slice(0, -1) + c
      expect(verifyClickSignature(id, altered, keys), altered).toBe(altered === sig)
    }
  })

  test('the signature of another click is rejected, also another click of the same link', () => {
    const link = linkId()
    const first = newClickId(link, 1_700_000_000_000)
    const second = newClickId(link, 1_700_000_000_000)
    const other = newClickId(linkId(), 1_700_000_000_000)
    expect(verifyClickSignature(second, signClickId(first, keys), keys)).toBe(false)
    expect(verifyClickSignature(other, signClickId(first, keys), keys)).toBe(false)
  })

  test("unknown kid, or a known kid with another key's signature, is rejected", () => {
    const id = newClickId(linkId(), Date.now())
    const underB = signClickId(id, [keyB])
    expect(verifyClickSignature(id, underB, [keyA])).toBe(false)
    expect(verifyClickSignature(id, underB.replace(/^b2\./, 'a1.'), [keyA, keyB])).toBe(false)
    expect(verifyClickSignature(id, underB.split('.')[1], [keyA, keyB])).toBe(false)
  })

  test('rotation: the new key signs, the old one still verifies, a dropped one no longer does', () => {
    const id = newClickId(linkId(), Date.now())
    const oldSig = signClickId(id, [keyA])
    const rotated = [keyB, keyA]
    const newSig = signClickId(id, rotated)
    expect(newSig.startsWith('b2.')).toBe(true)
    expect(verifyClickSignature(id, newSig, rotated)).toBe(true)
    expect(verifyClickSignature(id, oldSig, rotated)).toBe(true)
    expect(verifyClickSignature(id, oldSig, [keyB])).toBe(false)
  })

  test('signing without a key is a programming error', () => {
    expect(() => signClickId(newClickId(linkId(), 0), [])).toThrow(RangeError)
  })
})

describe('CLICK_SIGNING_KEYS', () => {
  const secret = (c: string) => c.repeat(32)
  const split = { DATABASE_URL: 'postgres://db/x', INTERNAL_SECRET: secret('i'), IP_HASH_SECRET: secret('h') }

  test('"kid:secret" pairs, the first signs', () => {
    const config = parseConfig({ ...split, CLICK_SIGNING_KEYS: `new:${secret('n')}, old:${secret('o')}` })
    expect(config.clickSigningKeys).toEqual([
      { kid: 'new', secret: secret('n') },
      { kid: 'old', secret: secret('o') },
    ])
  })

  test('a short secret, a bad kid, a missing colon or a repeated kid stop the boot naming the variable', () => {
    for (const raw of [`k:${'s'.repeat(31)}`, `bad kid:${secret('s')}`, `:${secret('s')}`, secret('s'), `k:${secret('a')},k:${secret('b')}`, `${'k'.repeat(17)}:${secret('s')}`]) {
      expect(() => parseConfig({ ...split, CLICK_SIGNING_KEYS: raw }), raw).toThrow(ConfigError)
      expect(() => parseConfig({ ...split, CLICK_SIGNING_KEYS: raw }), raw).toThrow(/CLICK_SIGNING_KEYS/)
    }
  })

  test('unset: derived from INTERNAL_SECRET (shared by both processes; embedded, the one stored in DATA_DIR: embedded-secrets.test.ts in test/security)', () => {
    // Without a stored secret (parseConfig's own default, for tests) each parse draws a new one.
    const embeddedA = parseConfig({}).clickSigningKeys
    const embeddedB = parseConfig({}).clickSigningKeys
    expect(embeddedA[0]!.secret).not.toBe(embeddedB[0]!.secret)
    const api = parseConfig(split).clickSigningKeys
    const redirector = parseConfig({ ...split, DATABASE_URL: undefined, REDIS_URL: 'redis://r' }).clickSigningKeys
    expect(api).toEqual(redirector)
    expect(api[0]!.secret).not.toContain(secret('i'))
    expect(api[0]!.secret.length).toBeGreaterThanOrEqual(32)
  })
})
