// One attempt of a delivery: the request a receiver gets (Standard Webhooks' headers, the signature of
// every secret that signs now), sent through the SSRF guard of the service's outgoing calls
// (reputation/service-fetch.ts: https, every resolved address public and checked again at each attempt,
// the connection made to the address checked, no redirect followed), and what came of it.
import type { Config } from '../../../core/config'
import { errorSummary } from '../../lib/errors'
import { type Resolve, sendToService, ServiceFetchError } from '../reputation/service-fetch'
import { SealedSecretError, sealedPrefix, type SealingKey, signatureHeader, unseal } from './secrets'

/** A receiver has this long to answer, from the connection to the last byte read (docs/webhooks.md). */
export const ATTEMPT_TIMEOUT_MS = 10_000
/** Bytes of an answer read: enough to see that one came, never a receiver's whole page. */
const MAX_ANSWER_BYTES = 1024

/** What an attempt needs of a delivery, its event and its endpoint. */
export interface Sendable {
  id: string
  webhookId: string
  eventId: string
  body: string
  url: string
  secretSealed: string
  previousSecretSealed: string | null
  previousSecretUntil: Date | null
}

export type Outcome = { delivered: true; status: number } | { delivered: false; status: number | null; error: string }

export interface SenderOptions {
  config: Pick<Config, 'publicApiUrl' | 'webhooks'>
  key: SealingKey
  resolve?: Resolve
  log: (line: string) => void
}

/** Sends a delivery's event, signed at `at` (unix ms); never throws. */
export function sender(options: SenderOptions): (delivery: Sendable, at: number, signal: AbortSignal) => Promise<Outcome> {
  const { config, key, log } = options
  const ownKey = sealedPrefix(key)
  const userAgent = `linkservice-webhooks/1 (+${config.publicApiUrl})`

  /**
   * The secrets that sign now: the current one, and the rotated-out one during its day (unless it was
   * sealed under an INTERNAL_SECRET since replaced: the rotation is what recovers from that).
   */
  function signingSecrets(delivery: Sendable, at: number): string[] {
    const secrets = [unseal(key, delivery.webhookId, delivery.secretSealed)]
    if (delivery.previousSecretSealed && delivery.previousSecretUntil && delivery.previousSecretUntil.getTime() > at && delivery.previousSecretSealed.startsWith(ownKey)) {
      secrets.push(unseal(key, delivery.webhookId, delivery.previousSecretSealed))
    }
    return secrets
  }

  return async (delivery, at, signal) => {
    const timestamp = Math.floor(at / 1000)
    try {
      const headers = {
        'content-type': 'application/json',
        'user-agent': userAgent,
        'webhook-id': delivery.eventId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(signingSecrets(delivery, at), delivery.eventId, timestamp, delivery.body),
      }
      const answer = await sendToService(new URL(delivery.url), {
        method: 'POST',
        headers,
        body: delivery.body,
        accept: '*/*',
        allowHttpLoopback: config.webhooks.allowPrivateTargets,
        timeoutMs: ATTEMPT_TIMEOUT_MS,
        maxBytes: MAX_ANSWER_BYTES,
        resolve: options.resolve,
        signal,
      })
      if (answer.status >= 200 && answer.status < 300) return { delivered: true, status: answer.status }
      return { delivered: false, status: answer.status, error: `answered HTTP ${answer.status}${answer.status >= 300 && answer.status < 400 ? ' (redirects are not followed)' : ''}` }
    } catch (error) {
      if (error instanceof ServiceFetchError || error instanceof SealedSecretError) return { delivered: false, status: null, error: error.message }
      log(`webhook delivery ${delivery.id}: ${errorSummary(error)}`)
      return { delivered: false, status: null, error: 'an unexpected error on our side' }
    }
  }
}
