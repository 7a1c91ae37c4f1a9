// A webhook's signing secret and its signatures (Standard Webhooks). The secret must be read back in
// clear to sign, so it cannot be stored as a hash like every other credential (decision 0012): it is
// sealed with AES-256-GCM under a key derived from INTERNAL_SECRET, which never reaches the database, and
// bound to its webhook's id, so a sealed value copied to another row does not open (decision 0038).
// Neither the secret nor the key is ever logged.
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto'

export const WEBHOOK_SECRET_PREFIX = 'whsec_'
/** 32 random bytes: the HMAC-SHA256 key length, inside Standard Webhooks' 24-64. */
const SECRET_BYTES = 32
const IV_BYTES = 12
const SEALED_VERSION = 'v1'

/** A new secret, shown once to the owner: whsec_ and the base64 of its bytes. */
export function newWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64')
}

/**
 * The sealing key, derived from INTERNAL_SECRET for this one purpose as the other keys are (decision
 * 0012), and its id: a sealed value names the key that opens it, so a process with another
 * INTERNAL_SECRET (another deployment sharing the database, or after a change) leaves it alone.
 */
export interface SealingKey {
  key: Buffer
  kid: string
}

export function sealingKey(internalSecret: string): SealingKey {
  const key = createHmac('sha256', internalSecret).update('webhook-secrets/v1').digest()
  return { key, kid: createHmac('sha256', key).update('kid').digest('base64url').slice(0, 8) }
}

/** How every value sealed under `key` begins. */
export const sealedPrefix = (key: SealingKey) => `${SEALED_VERSION}.${key.kid}.`

/** `v1.<kid>.<iv>.<ciphertext and tag>` (base64url), for the webhook `webhookId` only. */
export function seal(key: SealingKey, webhookId: string, secret: string): string {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', key.key, iv).setAAD(Buffer.from(webhookId))
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()])
  return sealedPrefix(key) + [iv.toString('base64url'), sealed.toString('base64url')].join('.')
}

/** Why a sealed secret could not be opened (INTERNAL_SECRET changed, or the value was tampered with). */
export class SealedSecretError extends Error {}

export function unseal(key: SealingKey, webhookId: string, sealed: string): string {
  const [version, kid, iv, body] = sealed.split('.')
  if (version !== SEALED_VERSION || !iv || !body) throw new SealedSecretError('not a sealed secret of this version')
  if (kid !== key.kid) throw new SealedSecretError('the signing secret was sealed under another INTERNAL_SECRET; rotate the secret')
  const bytes = Buffer.from(body, 'base64url')
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(iv, 'base64url')).setAAD(Buffer.from(webhookId))
    decipher.setAuthTag(bytes.subarray(-16))
    return Buffer.concat([decipher.update(bytes.subarray(0, -16)), decipher.final()]).toString('utf8')
  } catch {
    throw new SealedSecretError('the signing secret cannot be opened (tampered with); rotate the secret')
  }
}

/**
 * The webhook-signature header: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` for each secret,
 * space-separated (two while a rotated-out secret still signs). The key is the secret's base64 part.
 */
export function signatureHeader(secrets: readonly string[], eventId: string, timestamp: number, body: string): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64')
      return `v1,${createHmac('sha256', key).update(`${eventId}.${timestamp}.${body}`).digest('base64')}`
    })
    .join(' ')
}
