// The embedded default's unset secrets live in DATA_DIR: a restart (a second parse of the same
// environment, as every start does) keeps them, so click signatures issued before it still verify.
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { newClickId, signClickId, verifyClickSignature } from '../../core/click-id'
import { parseConfig } from '../../core/config'
import { configOrExit } from '../../src/boot'
import { SECRETS_FILE, storedSecret } from '../../core/embedded-secrets'

const dirs: string[] = []
const dataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'secrets-'))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const LINK_ID = 'link_AAAAAAAAAAAAAAAAAAAAAA'

describe('secrets of the embedded default', () => {
  test('a signature issued before a restart verifies after it (the configuration every entry point parses at start)', () => {
    const env = { DATA_DIR: dataDir() }
    const before = configOrExit(env)
    const clickId = newClickId(LINK_ID, Date.now())
    const sig = signClickId(clickId, before.clickSigningKeys)
    const after = configOrExit(env, { singleProcess: true })
    expect(verifyClickSignature(clickId, sig, after.clickSigningKeys)).toBe(true)
    expect(after.internalSecret).toBe(before.internalSecret)
    expect(after.ipHashSecret).toBe(before.ipHashSecret)
    expect(after.internalSecret).not.toBe(after.ipHashSecret)
  })

  test('without the stored secrets (random per start) the same signature would fail: what the file prevents', () => {
    const env = { DATA_DIR: dataDir() }
    const clickId = newClickId(LINK_ID, Date.now())
    const sig = signClickId(clickId, parseConfig(env).clickSigningKeys)
    expect(verifyClickSignature(clickId, sig, parseConfig(env).clickSigningKeys)).toBe(false)
  })

  test('the file is readable by its owner only, and holds no configured secret', () => {
    const dir = dataDir()
    parseConfig({ DATA_DIR: dir, INTERNAL_SECRET: 'configured-internal-secret-0123456789abcdef' }, { secret: storedSecret })
    const path = join(dir, SECRETS_FILE)
    expect(statSync(path).mode & 0o777).toBe(0o600)
    const stored = JSON.parse(readFileSync(path, 'utf8'))
    expect(Object.keys(stored)).toEqual(['IP_HASH_SECRET'])
    expect(readFileSync(path, 'utf8')).not.toContain('configured-internal-secret')
  })

  test('a configured secret wins over the stored one', () => {
    const dir = dataDir()
    const stored = storedSecret('INTERNAL_SECRET', dir)
    const config = parseConfig({ DATA_DIR: dir, INTERNAL_SECRET: 'configured-internal-secret-0123456789abcdef' }, { secret: storedSecret })
    expect(config.internalSecret).toBe('configured-internal-secret-0123456789abcdef')
    expect(config.internalSecret).not.toBe(stored)
  })
})
