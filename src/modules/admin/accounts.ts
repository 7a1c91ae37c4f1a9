// Suspending an account (docs/operators.md#suspending-an-account): in one transaction its row is marked
// and every credential revoked — API keys, sign-in sessions, its Agents' at_ and refresh tokens — then
// every process drops their cached verdicts, its links are disabled (each marked with the state it was
// in, links/state.ts SUSPENSION_MARKS), their reports closed, and the owner is mailed. Sign-in is refused
// while it is suspended (signin/service.ts createSession). Restoring lifts the refusal and brings back
// exactly the links the suspension disabled, each to the state it was in; revoked credentials stay
// revoked. Operators' own accounts cannot be suspended: remove the address from ADMIN_EMAILS first.
import { and, eq, isNotNull, isNull, sql } from 'drizzle-orm'
import { accounts, apiKeys, humanSessions, links, oauthTokens, type LinkState } from '../../db/schema'
import { lockFor } from '../../db/locks'
import { errorSummary } from '../../lib/errors'
import { isId } from '../../lib/ids'
import { log } from '../../lib/log'
import type { Mailer } from '../../mail/mailer'
import { ApiError } from '../../plugins/errors'
import { announceRevocation } from '../../plugins/revocations'
import type { Services } from '../../services'
import { setLinkStates, SUSPENSION_MARKS } from '../links/state'
import { closeReports } from '../reports/service'
import { recordAction } from './audit'
import type { Operator } from './guard'
import { restoredMail, suspendedMail } from './mail'
import type { AdminAccount } from './model'
import { isOperator } from '../keys/admin-scope'

/** Links changed per statement (see links.ts). */
const BATCH = 500

// Written out: drizzle renders a column inside a subquery unqualified, and "id" would be the link's.
const linkCount = sql<number>`(select count(*)::int from "links" l where l."account_id" = "accounts"."id")`

/** The account as operators see it, or 404 ACCOUNT_NOT_FOUND. */
export async function adminAccount(services: Pick<Services, 'db'>, id: string): Promise<AdminAccount> {
  const [row] = isId('account', id) ? await services.db.select({ account: accounts, links: linkCount }).from(accounts).where(eq(accounts.id, id)).limit(1) : []
  if (!row) throw new ApiError('ACCOUNT_NOT_FOUND', 'No account with that id.')
  const { account } = row
  return { id: account.id, email: account.email, plan: account.plan, created_at: account.createdAt.toISOString(), suspended_at: account.suspendedAt?.toISOString() ?? null, links: Number(row.links) }
}

/** Moves the account's links in state `from` to `to` with `reason`, in batches; closes their reports when disabling. */
async function moveLinks(services: Services, accountId: string, where: { state: LinkState; reason?: string }, to: LinkState, reason: string | null): Promise<number> {
  const conditions = [eq(links.accountId, accountId), eq(links.state, where.state)]
  if (where.reason !== undefined) conditions.push(eq(links.stateReason, where.reason))
  const ids = (
    await services.db
      .select({ id: links.id })
      .from(links)
      .where(and(...conditions))
  ).map((r) => r.id)
  let moved = 0
  for (let at = 0; at < ids.length; at += BATCH) {
    const batch = ids.slice(at, at + BATCH)
    moved += (await setLinkStates(services, batch, to, reason, [where.state])).length
    if (to === 'disabled') await closeReports(services, { linkIds: batch }, 'disable')
  }
  return moved
}

async function notify(mailer: Mailer, message: Parameters<Mailer['send']>[0]): Promise<boolean> {
  try {
    await mailer.send(message)
    return true
  } catch (error) {
    log.error({ component: 'admin', error: errorSummary(error) }, 'account notice not mailed')
    return false
  }
}

export async function suspendAccount(services: Services, mailer: Mailer, operator: Operator, id: string, reason: string | null) {
  const account = await adminAccount(services, id)
  if (isOperator(services.config, account.email)) {
    throw new ApiError('VALIDATION_FAILED', "An operator's account cannot be suspended; remove its address from ADMIN_EMAILS first.")
  }
  const now = new Date(services.now())
  const revoked = await services.db.transaction(async (tx) => {
    // The row lock orders this with a sign-in in flight (createSession reads the row FOR SHARE), the
    // advisory lock with a key being created: either finishes first and is revoked below, or sees the mark.
    const [row] = await tx.select({ suspendedAt: accounts.suspendedAt }).from(accounts).where(eq(accounts.id, id)).for('update')
    await lockFor(tx, 'apiKeyCreate', id)
    if (row && row.suspendedAt === null) await tx.update(accounts).set({ suspendedAt: now }).where(eq(accounts.id, id))
    const keys = await tx
      .update(apiKeys)
      .set({ revokedAt: now })
      .where(and(eq(apiKeys.accountId, id), isNull(apiKeys.revokedAt)))
      .returning({ id: apiKeys.id })
    const sessions = await tx
      .update(humanSessions)
      .set({ revokedAt: now })
      .where(and(eq(humanSessions.accountId, id), isNull(humanSessions.revokedAt)))
      .returning({ id: humanSessions.id })
    const tokens = await tx
      .update(oauthTokens)
      .set({ revokedAt: now })
      .where(and(eq(oauthTokens.accountId, id), isNull(oauthTokens.revokedAt)))
      .returning({ id: oauthTokens.id })
    return { newly: row?.suspendedAt === null, keys: keys.length, sessions: sessions.length, tokens: tokens.length }
  })
  // This process drops its cached key verdicts and every process the account's Agent tokens' at once;
  // another process's key verdicts expire within a second (keys/verdicts.ts KEY_VERDICT_TTL_MS).
  await announceRevocation(services, `account:${id}`)
  const disabled = (await moveLinks(services, id, { state: 'ok' }, 'disabled', SUSPENSION_MARKS.ok)) + (await moveLinks(services, id, { state: 'flagged' }, 'disabled', SUSPENSION_MARKS.flagged))
  const mailed = revoked.newly ? await notify(mailer, suspendedMail(account.email, services.config.shortBaseUrl)) : false
  await recordAction(services, operator, 'account.suspend', id, reason)
  return {
    account: await adminAccount(services, id),
    links_changed: disabled,
    api_keys_revoked: revoked.keys,
    sessions_revoked: revoked.sessions,
    agent_tokens_revoked: revoked.tokens,
    mailed,
  }
}

export async function restoreAccount(services: Services, mailer: Mailer, operator: Operator, id: string, reason: string | null) {
  const account = await adminAccount(services, id)
  const lifted = await services.db
    .update(accounts)
    .set({ suspendedAt: null })
    .where(and(eq(accounts.id, id), isNotNull(accounts.suspendedAt)))
    .returning({ id: accounts.id })
  const restored =
    (await moveLinks(services, id, { state: 'disabled', reason: SUSPENSION_MARKS.ok }, 'ok', null)) +
    (await moveLinks(services, id, { state: 'disabled', reason: SUSPENSION_MARKS.flagged }, 'flagged', 'flagged before the account was suspended'))
  const mailed = lifted.length > 0 ? await notify(mailer, restoredMail(account.email, services.config.shortBaseUrl)) : false
  await recordAction(services, operator, 'account.restore', id, reason)
  return { account: await adminAccount(services, id), links_changed: restored, api_keys_revoked: 0, sessions_revoked: 0, agent_tokens_revoked: 0, mailed }
}
