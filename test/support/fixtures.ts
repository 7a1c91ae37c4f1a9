// Records for tests, written straight to the database (the endpoints that make them are other modules'
// business, and registration has its own tests): an account with a fresh API key, a custom domain in any
// state, a link. Ids come from src/lib/ids.ts like the product's own; e-mail addresses and host names
// are unique per run, since tests never truncate.
import type { Db } from '../../src/db/client'
import { accounts, domains, links, type Plan } from '../../src/db/schema'
import { createApiKey } from '../../src/modules/keys/verdicts'
import { newId } from '../../src/lib/ids'
import { randomBase64url } from '../../src/lib/secrets'
import { newClickId, signClickId, type ClickSigningKey } from '../../core/click-id'
import { call, show, uniqueName, type TestApp } from './api'

export interface TestAccount {
  id: string
  key: string
}

/** An account of the plan, with one API key (returned in clear). */
export async function newAccount(db: Db, plan: Plan = 'free'): Promise<TestAccount> {
  const id = newId('account')
  await db.insert(accounts).values({ id, email: `${id.toLowerCase()}@example.test`, plan })
  return { id, key: await createApiKey(db, id, new Date()) }
}

/** A custom domain of the account, verified unless said otherwise; host names are unique per run. */
export async function newDomain(db: Db, accountId: string, opts: { verified?: boolean; host?: string } = {}): Promise<string> {
  const host = opts.host ?? `go-${crypto.randomUUID().slice(0, 8)}.example.com`
  await db.insert(domains).values({
    id: newId('domain'),
    accountId,
    hostname: host,
    verificationToken: randomBase64url(16),
    verifiedAt: opts.verified === false ? null : new Date(),
  })
  return host
}

/** A link of the account (null: a guest's), on `domain`. */
export async function newLink(db: Db, accountId: string | null, domain: string, alias = `t-${crypto.randomUUID().slice(0, 8)}`, url = 'https://example.com/tagged') {
  const id = newId('link')
  await db.insert(links).values({ id, domain, alias, url, accountId, createdAt: nextCreatedAt() })
  return { id, domain, alias, url }
}

let lastCreatedAt = 0

/**
 * Each link made here is created strictly after the one before (by 1 ms at least), so tests that read
 * "newest first" see the order they made them in: two inserts in the same millisecond would otherwise tie
 * on created_at and be ordered by their random ids (seen once in CI, on PGlite).
 */
function nextCreatedAt(): Date {
  lastCreatedAt = Math.max(Date.now(), lastCreatedAt + 1)
  return new Date(lastCreatedAt)
}

/** A click on a new link of the account, a minute ago, signed the way a Pro redirect signs it (mu_click, mu_sig). */
export async function newSignedClick(db: Db, keys: readonly ClickSigningKey[], accountId: string) {
  const { id } = await newLink(db, accountId, 'sho.rt', uniqueName('clk').slice(0, 20))
  const clickId = newClickId(id, Date.now() - 60_000)
  return { clickId, clickSignature: signClickId(clickId, keys) }
}

/**
 * An Agent of `human` with `scopes` and a token minted for it directly (no OAuth round trip). `policy`
 * as in POST /api/v1/agents (absent: the default, which holds deletes for the human). The one Agent
 * fixture of the tests, REST and MCP alike.
 */
export async function agentToken(app: TestApp, human: TestAccount, scopes: string[], policy?: { require_approval: string[] }): Promise<{ token: string; agentId: string }> {
  const body = { name: `agent ${crypto.randomUUID().slice(0, 8)}`, scopes, ...(policy && { policy }) }
  const agent = await call(app, 'POST', '/api/v1/agents', { token: human.key, body })
  if (agent.status !== 201) throw new Error(`create agent: ${show(agent)}`)
  const minted = await call(app, 'POST', `/api/v1/agents/${agent.body.data.id}/tokens`, { token: human.key, body: {} })
  if (minted.status !== 201) throw new Error(`mint token: ${show(minted)}`)
  return { token: minted.body.data.token as string, agentId: agent.body.data.id as string }
}
