// Registered clients that were never used. Hosted hosts register one client per user (so registration allows
// 600 an hour per address: docs/agents-and-mcp.md#oauth-for-machine-clients), and many registrations never reach a token (an abandoned
// connection, a retry that registered again). A client without a token 24 h after registering is
// refused (clients.ts), and deleted by an hourly sweep in each API process. The sweep is one DELETE
// with its condition in SQL, so several processes running it at once delete each client once and
// need no lock; it waits a further 10 minutes past the 24 h, so that a code exchanged just before the
// refusal begins (codes live 60 s) never meets a client deleted under it.
import { and, eq, isNull, lt } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { oauthClients } from '../../db/schema'
import { errorSummary } from '../../lib/errors'
import { log } from '../../lib/log'
import type { Services } from '../../services'

export const UNUSED_CLIENT_TTL_MS = 24 * 3_600_000
const SWEEP_GRACE_MS = 10 * 60_000
const SWEEP_INTERVAL_MS = 3_600_000

type SweepServices = Pick<Services, 'db' | 'now'>

/** Whether a registered client is unused: no token yet, and registered more than 24 h ago. */
export function isUnused(client: { createdAt: Date; firstTokenAt: Date | null }, now: number): boolean {
  return client.firstTokenAt === null && client.createdAt.getTime() <= now - UNUSED_CLIENT_TTL_MS
}

/** Marks a client as used when it obtains its first token (later tokens change nothing). */
export async function markClientUsed(tx: Pick<Db, 'update'>, clientId: string, now: Date): Promise<void> {
  await tx
    .update(oauthClients)
    .set({ firstTokenAt: now })
    .where(and(eq(oauthClients.id, clientId), isNull(oauthClients.firstTokenAt)))
}

/** Deletes the unused clients; how many went. */
export async function deleteUnusedClients(services: SweepServices): Promise<number> {
  const before = new Date(services.now() - UNUSED_CLIENT_TTL_MS - SWEEP_GRACE_MS)
  const deleted = await services.db
    .delete(oauthClients)
    .where(and(isNull(oauthClients.firstTokenAt), lt(oauthClients.createdAt, before)))
    .returning({ id: oauthClients.id })
  return deleted.length
}

/** Starts the periodic sweep of this process; returns its stop. A failed run is logged and the next one tries again. */
export function startUnusedClientSweep(services: SweepServices, { intervalMs = SWEEP_INTERVAL_MS, onSwept = (_count: number) => {} } = {}): () => void {
  const timer = setInterval(() => {
    deleteUnusedClients(services).then(onSwept, (error) => log.error({ component: 'oauth', error: errorSummary(error) }, 'the sweep of unused clients failed'))
  }, intervalMs)
  timer.unref?.()
  return () => clearInterval(timer)
}
