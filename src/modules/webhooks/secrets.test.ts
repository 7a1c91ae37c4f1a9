// Secrets sealed at rest open only with the key they were sealed under and for their own webhook; the
// signature header is what the npm package standardwebhooks signs; the configuration's schedule and
// its test-only setting.
import { describe, expect, test } from 'bun:test'
import { Webhook } from 'standardwebhooks'
import { ConfigError, parseConfig } from '../../../core/config'
import { newId } from '../../lib/ids'
import { newWebhookSecret, seal, SealedSecretError, sealedPrefix, sealingKey, signatureHeader, unseal } from './secrets'

describe('sealed secrets', () => {
  test('open under their key and webhook only; a tampered value is refused', () => {
    const key = sealingKey('an-internal-secret-0123456789abcdefghij')
    const id = newId('webhook')
    const secret = newWebhookSecret()
    const sealed = seal(key, id, secret)
    expect(sealed.startsWith(sealedPrefix(key))).toBe(true)
    expect(sealed).not.toContain(secret.slice('whsec_'.length))
    expect(unseal(key, id, sealed)).toBe(secret)
    expect(seal(key, id, secret)).not.toBe(sealed)

    expect(() => unseal(sealingKey('another-internal-secret-0123456789abcdef'), id, sealed)).toThrow(SealedSecretError)
    expect(() => unseal(key, newId('webhook'), sealed)).toThrow(SealedSecretError)
    const last = sealed.at(-2) === 'A' ? 'B' : 'A'
    expect(() => unseal(key, id, `${sealed.slice(0, -2)}${last}${sealed.at(-1)}`)).toThrow(SealedSecretError)
  })
})

describe('the signature header', () => {
  test("is standardwebhooks' own signature, one per secret, space-separated", () => {
    const [first, second] = [newWebhookSecret(), newWebhookSecret()]
    const id = newId('webhookEvent')
    const at = new Date('2026-11-24T10:00:00Z')
    const body = JSON.stringify({ id, type: 'ping', created_at: at.toISOString(), data: { webhook_id: 'wh_x' } })
    const timestamp = at.getTime() / 1000
    expect(signatureHeader([first!], id, timestamp, body)).toBe(new Webhook(first!).sign(id, at, body))
    expect(signatureHeader([first!, second!], id, timestamp, body)).toBe(`${new Webhook(first!).sign(id, at, body)} ${new Webhook(second!).sign(id, at, body)}`)
  })
})

describe('configuration', () => {
  const env = { INTERNAL_SECRET: 'x'.repeat(32), IP_HASH_SECRET: 'y'.repeat(32) }

  test('WEBHOOK_RETRY_SCHEDULE: seconds, 1 to a week each, at most 20; the default', () => {
    expect(parseConfig(env).webhooks.retryScheduleSeconds).toEqual([5, 30, 120, 600, 1800, 7200, 21600, 43200, 86400])
    expect(parseConfig({ ...env, WEBHOOK_RETRY_SCHEDULE: ' 1, 2 ,3' }).webhooks.retryScheduleSeconds).toEqual([1, 2, 3])
    for (const bad of ['0', '604801', '5,,30', '5s', Array.from({ length: 21 }, () => '1').join(',')]) {
      expect(() => parseConfig({ ...env, WEBHOOK_RETRY_SCHEDULE: bad }), bad).toThrow(ConfigError)
    }
  })

  test('WEBHOOKS_ALLOW_PRIVATE_TARGETS is said at start, and ignored with NODE_ENV=production', () => {
    const lines: string[] = []
    const warn = (line: string) => lines.push(line)
    expect(parseConfig({ ...env, WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' }, { warn }).webhooks.allowPrivateTargets).toBe(true)
    expect(parseConfig({ ...env, WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true', NODE_ENV: 'production' }, { warn }).webhooks.allowPrivateTargets).toBe(false)
    expect(lines).toEqual([expect.stringContaining('for tests only'), expect.stringContaining('ignored because NODE_ENV=production')])
    expect(parseConfig(env).webhooks.allowPrivateTargets).toBe(false)
  })
})
