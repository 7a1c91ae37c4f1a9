// Revoked credentials, told to every process: each keeps verdicts of credentials it checked (API keys
// in the account module, Agents' at_ tokens in the agents module) and drops them when a revocation is
// announced here: at once in this process, through the store's pub/sub in the others. Messages name
// what was revoked: `family:<id>`, `agent:<id>`, `token:<hash>`, `account:<id>` (its plan changed),
// `api-key:<hash>` (an mk_ key; other processes let its 1 s verdict expire).
import { errorSummary } from '../lib/errors'
import { log } from '../lib/log'
import type { Services } from '../services'

export const REVOCATION_CHANNEL = 'oauth:revocations'

/** This process's verdict caches by store: a revocation drops them before it is even published. */
const localListeners = new WeakMap<object, Set<(message: string) => void>>()

/** Hears this process's own revocations at once (pub/sub brings them back later, and brings the others'). */
export function onLocalRevocation(services: Pick<Services, 'kv'>, listener: (message: string) => void): void {
  let set = localListeners.get(services.kv)
  if (!set) localListeners.set(services.kv, (set = new Set()))
  set.add(listener)
}

/** Tells every process to drop cached verdicts (`family:<id>`, `agent:<id>`, `token:<hash>`). Best effort: the cache's own TTL bounds a lost message. */
export async function announceRevocation(services: Pick<Services, 'kv'>, message: string): Promise<void> {
  for (const listener of localListeners.get(services.kv) ?? []) listener(message)
  try {
    await services.kv.publish(REVOCATION_CHANNEL, message)
  } catch (error) {
    log.error({ component: 'oauth', revoked: message.split(':', 1)[0], error: errorSummary(error) }, 'revocation not announced; cached verdicts expire on their own')
  }
}
