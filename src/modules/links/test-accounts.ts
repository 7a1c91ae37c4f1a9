// Accounts for tests of the links module: made directly in the database (registration is its own
// module), each with a fresh API key, and custom domains in any state.
import { accounts, domains, type Plan } from '../../db/schema'
import type { Db } from '../../db/client'
import { createApiKey } from '../account/keys'
import { newId } from '../../lib/ids'
import { randomBase64url } from '../../lib/secrets'

export interface TestAccount {
  id: string
  key: string
}

export async function newAccount(db: Db, plan: Plan = 'free'): Promise<TestAccount> {
  const id = newId('account')
  await db.insert(accounts).values({ id, email: `${id.toLowerCase()}@links.example`, plan })
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
