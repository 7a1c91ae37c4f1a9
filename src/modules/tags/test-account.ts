// Test fixtures shared by the tags and domains tests: an account with an API key, and a link of it,
// written straight to Postgres (the endpoints that make them are other modules' business).
import type { Db } from '../../db/client'
import { accounts, links, type Plan } from '../../db/schema'
import { createApiKey } from '../account/keys'
import { newId } from '../../lib/ids'

export interface TestAccount {
  id: string
  key: string
}

export async function newAccount(db: Db, plan: Plan = 'free'): Promise<TestAccount> {
  const id = newId('account')
  await db.insert(accounts).values({ id, email: `${id.toLowerCase()}@example.com`, plan })
  const key = await createApiKey(db, id, new Date())
  return { id, key }
}

export async function newLink(db: Db, accountId: string | null, domain: string, alias = `t-${crypto.randomUUID().slice(0, 8)}`, url = 'https://example.com/tagged') {
  const id = newId('link')
  await db.insert(links).values({ id, domain, alias, url, accountId })
  return { id, domain, alias, url }
}
