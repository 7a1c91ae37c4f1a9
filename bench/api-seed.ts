// Data for the management API bench (bench/api.ts): accounts with mk_ keys and an Agent each with an at_
// token, an account with a large number of links, and the statistics link. Accounts and links are written
// straight to Postgres (as test/support/fixtures.ts does: no endpoint makes an account without e-mail);
// Agents and their tokens through the running API, as a person would make them. Every account id starts
// with `account_bench_`, so a crashed run's leftovers are easy to find; cleanup deletes them (links,
// keys, Agents and tokens go with their account).
import { inArray, like, sql } from 'drizzle-orm'
import type { Db } from '../src/db/client'
import { accounts, links, type Plan } from '../src/db/schema'
import { createApiKey } from '../src/modules/keys/verdicts'
import { agentToken } from '../test/support/fixtures'
import type { TestApp } from '../test/support/api'

export interface BenchAccount {
  id: string
  key: string
  /** at_ token of an Agent of this account (links:read, links:write, stats:read; nothing held for approval). */
  agentToken: string
}

const ID_PREFIX = 'account_bench_'
/** Rows per INSERT of links: far below Postgres's 65,535 bind parameters. */
const CHUNK = 1000
const AGENT_SCOPES = ['links:read', 'links:write', 'stats:read']

/** The running API as the fixtures' TestApp: their requests go to it over HTTP. */
export function overHttp(baseUrl: string): TestApp {
  return {
    async handle(request: Request) {
      const url = new URL(request.url)
      const body = request.method === 'GET' ? undefined : await request.text()
      return fetch(`${baseUrl}${url.pathname}${url.search}`, { method: request.method, headers: request.headers, body })
    },
  }
}

async function newBenchAccount(db: Db, plan: Plan): Promise<{ id: string; key: string }> {
  const id = `${ID_PREFIX}${crypto.randomUUID().replaceAll('-', '')}`
  await db.insert(accounts).values({ id, email: `${id}@bench.example`, plan })
  return { id, key: await createApiKey(db, id, new Date()) }
}

/** `count` accounts of `plan`, each with a key and an Agent token; `progress` every 50. */
export async function seedAccounts(db: Db, api: TestApp, count: number, plan: Plan, progress: (line: string) => void): Promise<BenchAccount[]> {
  const out: BenchAccount[] = []
  for (let i = 0; i < count; i++) {
    const account = await newBenchAccount(db, plan)
    const { token } = await agentToken(api, account, AGENT_SCOPES, { require_approval: [] })
    out.push({ ...account, agentToken: token })
    if ((i + 1) % 50 === 0) progress(`accounts: ${i + 1} of ${count} (mk_ key + Agent at_ token each)`)
  }
  return out
}

/**
 * `count` links of `accountId` on `domain`, created over the last `spreadDays` days (newest first by
 * index), each at its own microsecond so the list's cursor order is total; `progress` every 10 chunks.
 */
export async function seedAccountLinks(db: Db, accountId: string, domain: string, count: number, spreadDays: number, progress: (line: string) => void): Promise<void> {
  const now = Date.now()
  const stepMs = (spreadDays * 86_400_000) / count
  const tag = crypto.randomUUID().slice(0, 8)
  for (let start = 0; start < count; start += CHUNK) {
    const rows = Array.from({ length: Math.min(CHUNK, count - start) }, (_, j) => {
      const i = start + j
      const createdAt = new Date(now - Math.round(i * stepMs) - 1)
      return {
        id: `link_bench_list_${tag}_${i}`,
        domain,
        alias: `bl${tag}${i.toString(36)}`,
        url: `https://example.com/list/${i}`,
        accountId,
        createdAt,
        updatedAt: createdAt,
        expiresAt: new Date(now + 365 * 86_400_000),
      }
    })
    await db.insert(links).values(rows)
    if ((start / CHUNK + 1) % 10 === 0) progress(`links of the list account: ${Math.min(start + CHUNK, count).toLocaleString('en-US')} of ${count.toLocaleString('en-US')}`)
  }
  // A service's links arrive over months and autovacuum keeps the planner's statistics current; these
  // arrived in seconds. Without this, the runs measure whether autoanalyze happened to come first: the
  // first page planned on statistics that predate 100,000 links took 22-60 requests/s, 642 after it.
  await db.execute(sql`analyze links`)
}

/** The link whose clicks bench/clicks-generate.ts wrote (its fixed id), owned by `accountId`; returns its alias. */
export async function seedStatsLink(db: Db, accountId: string, linkId: string, domain: string, createdAt: Date): Promise<string> {
  await db.delete(links).where(inArray(links.id, [linkId]))
  const alias = `bench-stats-${crypto.randomUUID().slice(0, 8)}`
  await db.insert(links).values({ id: linkId, domain, alias, url: 'https://example.com/stats', accountId, createdAt, updatedAt: createdAt, expiresAt: new Date(Date.now() + 365 * 86_400_000) })
  return alias
}

/** Links of the accounts, counted (what the write scenarios created). */
export async function countLinks(db: Db, accountIds: string[]): Promise<number> {
  const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(links).where(inArray(links.accountId, accountIds))
  return Number(row?.n ?? 0)
}

/** Every bench account (this run's and a crashed run's): their links, keys, Agents and tokens go with them. */
export async function deleteBenchAccounts(db: Db): Promise<void> {
  await db.delete(accounts).where(like(accounts.id, `${ID_PREFIX}%`))
}
