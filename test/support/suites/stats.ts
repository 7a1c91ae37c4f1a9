// Shared by the statistics tests (src/modules/stats/stats*.test.ts): the API, the shared chDB, clicks
// inserted straight into it for a test's own link ids (each insert with its own dedup token), and a link
// made through POST /api/v1/shorten. Each test file calls setUp in beforeAll; the exported bindings are
// live, so they hold the running file's API.
import type { ClickHouseClient } from '@clickhouse/client'
import { and, eq } from 'drizzle-orm'
import { links } from '../../../src/db/schema'
import { call, show, testApi } from '../api'
import { insertTestClicks, testClickHouse } from '../clickhouse'
import type { TestAccount } from '../fixtures'

export type Api = Awaited<ReturnType<typeof testApi>>
export let api: Api
export let ch: ClickHouseClient

export async function setUp() {
  api = await testApi()
  ch = await testClickHouse()
}

type Click = { msAgo?: number; country?: string; referrer_host?: string; device_type?: string; browser?: string; os?: string; is_bot?: number; route?: string; click_id?: string }

export function insertClicks(linkId: string, clicks: Click[]): Promise<void> {
  const now = Date.now()
  return insertTestClicks(
    ch,
    linkId,
    clicks.map(({ msAgo, ...rest }) => ({ ...rest, at: now - (msAgo ?? 0) })),
  )
}

export async function createLink(app: Api['app'], account: TestAccount, body: Record<string, unknown> = {}) {
  const res = await call(app, 'POST', '/api/v1/shorten', { token: account.key, body: { url: 'https://example.com/stats', ...body } })
  if (res.status !== 200) throw new Error(`shorten: ${show(res)}`)
  const { alias, domain } = res.body.data as { alias: string; domain: string }
  const [row] = await api.deps.db
    .select({ id: links.id })
    .from(links)
    .where(and(eq(links.domain, domain), eq(links.alias, alias)))
  return { alias, domain, id: row!.id }
}

export const DAY = 24 * 3_600_000
