// Shared by the tests of links made with an API key (src/modules/links/account-links*.test.ts): the API,
// POST /api/v1/shorten as a key, fresh aliases, a link's row, and a month's quota filled straight in the
// database. Each test file calls setUp in beforeAll; the exported bindings are live, so they hold the
// running file's API.
import { eq } from 'drizzle-orm'
import { links } from '../../../src/db/schema'
import { newId } from '../../../src/lib/ids'
import { call, testApi, type TestApp, uniqueName } from '../api'
import type { TestAccount } from '../fixtures'

export let api: Awaited<ReturnType<typeof testApi>>
export let app: TestApp

export async function setUp() {
  api = await testApi()
  app = api.app
}

export const shorten = (key: string, body: unknown, headers: Record<string, string> = {}) => call(app, 'POST', '/api/v1/shorten', { token: key, body, headers })
/** An alias nobody else has used, in this run or an earlier one against the same database. */
export const freshAlias = (prefix = 'a') => `${prefix}-${crypto.randomUUID().slice(0, 12)}`
export const rowOf = async (domain: string, alias: string) => (await api.deps.db.select().from(links).where(eq(links.alias, alias))).find((r) => r.domain === domain)

export async function fillMonth(account: TestAccount, count: number, createdAt = new Date()) {
  const tag = uniqueName('', 6)
  await api.deps.db
    .insert(links)
    .values(Array.from({ length: count }, (_, i) => ({ id: newId('link'), domain: 'sho.rt', alias: `fill-${tag}-${i}`, url: 'https://example.com/filler', accountId: account.id, createdAt })))
}
