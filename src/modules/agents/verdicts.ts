// The resource server's side of at_ tokens: who a token speaks for, checked on every call. The lookup
// (token, its Agent, its account) is cached per process for a few seconds, and every revocation, kill
// or scope change is announced on REVOCATION_CHANNEL, which drops the affected verdicts at once in every
// process (Redis pub/sub; in-process in the embedded default). A lost subscription (reconnect) clears
// the whole cache; a lost message is bounded by the TTL.
import { and, eq } from 'drizzle-orm'
import { accounts, agents, oauthTokens } from '../../db/schema'
import { errorSummary } from '../../lib/errors'
import { log } from '../../lib/log'
import { hashSecret } from '../../lib/secrets'
import type { Principal } from '../../plugins/auth'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import { limitCredential } from '../../plugins/request-limit'
import { audienceAllows, type Endpoint } from './audience'
import { agentCredentialId, agentPrincipal, type AgentIdentity } from './principal'
import { onLocalRevocation, REVOCATION_CHANNEL } from '../../plugins/revocations'

/** How long a verdict may be reused without asking Postgres; revocations do not wait for it. */
export const VERDICT_TTL_MS = 10_000
const MAX_VERDICTS = 10_000

/** The Agent a token speaks for, and what the cache needs to drop or expire it. */
interface Verdict extends AgentIdentity {
  familyId: string
  resource: string
  expiresAt: number
  cachedUntil: number
}

interface Refusal {
  refused: true
  accountId: string
  agentId: string
}

export interface AccessTokens {
  /**
   * The principal of an at_ token presented at `endpoint` (default the REST API), or 401 UNAUTHORIZED
   * (unknown, expired, revoked, killed, an audience that endpoint does not accept).
   */
  principal(token: string, endpoint?: Endpoint): Promise<Principal>
  /** Resolves once this process listens for revocations (tests await it before measuring). */
  ready: Promise<void>
}

export function accessTokens(services: Services): AccessTokens {
  const verdicts = new Map<string, Verdict>()
  const drop = (message: string) => {
    if (message === '*') return verdicts.clear()
    const [kind, id] = [message.slice(0, message.indexOf(':')), message.slice(message.indexOf(':') + 1)]
    if (kind === 'token') return void verdicts.delete(id)
    for (const [hash, verdict] of verdicts) {
      if ((kind === 'family' && verdict.familyId === id) || (kind === 'agent' && verdict.agentId === id) || (kind === 'account' && verdict.accountId === id)) {
        verdicts.delete(hash)
      }
    }
  }
  onLocalRevocation(services, drop)
  // Until the subscription is live nothing is cached, so no revocation can be missed.
  let listening = false
  const ready = services.kv
    .subscribe(REVOCATION_CHANNEL, drop, () => verdicts.clear())
    .then(() => {
      listening = true
    })
    .catch((error) => {
      log.error({ component: 'oauth', error: errorSummary(error) }, 'not subscribed to revocations; at_ verdicts are not cached')
    })

  /** The token's verdict; a refusal names its Agent (for the audit), null an unknown token. */
  async function lookup(hash: string, now: number): Promise<Verdict | Refusal | null> {
    const cached = verdicts.get(hash)
    if (cached && cached.cachedUntil > now) return cached
    const [row] = await services.db
      .select({
        tokenId: oauthTokens.id,
        familyId: oauthTokens.familyId,
        agentId: oauthTokens.agentId,
        clientId: oauthTokens.clientId,
        accountId: oauthTokens.accountId,
        email: accounts.email,
        plan: accounts.plan,
        tokenScopes: oauthTokens.scopes,
        agentScopes: agents.scopes,
        agentStatus: agents.status,
        policy: agents.policy,
        resource: oauthTokens.resource,
        expiresAt: oauthTokens.expiresAt,
        revokedAt: oauthTokens.revokedAt,
        suspendedAt: accounts.suspendedAt,
      })
      .from(oauthTokens)
      .innerJoin(agents, eq(agents.id, oauthTokens.agentId))
      .innerJoin(accounts, eq(accounts.id, oauthTokens.accountId))
      .where(and(eq(oauthTokens.tokenHash, hash), eq(oauthTokens.kind, 'access')))
      .limit(1)
    if (!row) return null
    // A suspended account's tokens are revoked; one issued as the suspension committed is refused too.
    if (row.revokedAt !== null || row.suspendedAt !== null || row.agentStatus !== 'active') return { refused: true, accountId: row.accountId, agentId: row.agentId }
    const verdict: Verdict = {
      tokenId: row.tokenId,
      familyId: row.familyId,
      agentId: row.agentId,
      clientId: row.clientId,
      accountId: row.accountId,
      email: row.email,
      plan: row.plan,
      scopes: row.tokenScopes.filter((s) => row.agentScopes.includes(s)),
      requireApproval: row.policy.require_approval,
      resource: row.resource,
      expiresAt: row.expiresAt.getTime(),
      cachedUntil: now + VERDICT_TTL_MS,
    }
    if (listening) {
      if (verdicts.size >= MAX_VERDICTS) verdicts.delete(verdicts.keys().next().value!)
      verdicts.set(hash, verdict)
    }
    return verdict
  }

  return {
    ready,
    async principal(token, endpoint = 'api') {
      const now = services.now()
      const verdict = await lookup(hashSecret(token), now)
      const revoked = 'Unknown or revoked access token (or its Agent was stopped); obtain a new one.'
      if (!verdict) throw new ApiError('UNAUTHORIZED', revoked)
      if ('refused' in verdict) throw new ApiError('UNAUTHORIZED', revoked, { agent: { accountId: verdict.accountId, agentId: verdict.agentId } })
      const agent = { accountId: verdict.accountId, agentId: verdict.agentId }
      if (verdict.expiresAt <= now) throw new ApiError('UNAUTHORIZED', 'The access token expired; use the refresh token or authorize again.', { agent })
      if (!audienceAllows(services.config, verdict.resource, endpoint)) throw new ApiError('UNAUTHORIZED', `This token was issued for another resource (${verdict.resource.slice(0, 100)}).`, { agent })
      // An Agent's calls count against the plan's per-minute limit of its own window, like a key's.
      const rateHeaders = await limitCredential(services, agentCredentialId(verdict.agentId), verdict.plan).catch((error: unknown) => {
        if (error instanceof ApiError) error.extra.agent = agent
        throw error
      })
      return agentPrincipal(verdict, rateHeaders)
    },
  }
}
