// Shared by the conversion tests (src/modules/conversions/conversions.*.test.ts): the API, two Pro accounts
// and a Pro link, links made straight in the database, signed click ids, a signature with one character
// flipped, and the Postgres rows of a link's conversions. Each test file calls setUp in beforeAll; the
// exported bindings are live, so they hold the running file's API.
import type { ClickHouseClient } from '@clickhouse/client'
import { eq } from 'drizzle-orm'
import { newClickId, signClickId } from '../../../core/click-id'
import type { Config } from '../../../core/config'
import type { Db } from '../../../src/db/client'
import { conversions, links } from '../../../src/db/schema'
import { newId } from '../../../src/lib/ids'
import { testApi, type TestApp, uniqueName } from '../api'
import { newAccount, type TestAccount } from '../fixtures'
import { createServices, type Services } from '../../../src/services'

export const PATH = '/api/analytics/link-conversion'
export const PIXEL = '/api/analytics/link-conversion/pixel'
export const DAY = 24 * 3600 * 1000

export let app: TestApp
export let db: Db
export let config: Config
export let pro: TestAccount
export let otherPro: TestAccount
export let proLink: string
export let clickhouse: ClickHouseClient
/** The API's services, for calls to a module function beside the HTTP ones. */
export let services: Services

export async function newLink(accountId: string | null): Promise<string> {
  const id = newId('link')
  await db.insert(links).values({ id, domain: 'sho.rt', alias: uniqueName('cv').slice(0, 20), url: 'https://shop.example/p', accountId })
  return id
}

export function click(linkId: string, agoMs = 60_000) {
  const clickId = newClickId(linkId, Date.now() - agoMs)
  return { clickId, clickSignature: signClickId(clickId, config.clickSigningKeys) }
}

/** Flips one character of the HMAC part (not the key id). */
export function flip(sig: string): string {
  const i = sig.length - 5
  return sig.slice(0, i) + (sig[i] === 'A' ? 'B' : 'A') + sig.slice(i + 1)
}

export async function rowsOf(linkId: string) {
  return db.select().from(conversions).where(eq(conversions.linkId, linkId))
}

export async function setUp() {
  const t = await testApi()
  app = t.app
  db = t.deps.db
  config = t.deps.config
  clickhouse = t.deps.clickhouse
  services = createServices(t.deps)
  pro = await newAccount(db, 'pro')
  otherPro = await newAccount(db, 'pro')
  proLink = await newLink(pro.id)
}

export type MirrorRow = {
  conversion_id: string
  link_id: string
  click_id: string
  account_id: string
  conversion_type: string
  value: string
  currency: string
  is_refund: number
  occurred_at: string
}

/** Every stored row of the link in conversions_v1, without FINAL: a second copy would show. */
export async function mirrorRows(linkId: string): Promise<MirrorRow[]> {
  const result = await clickhouse.query({
    query:
      'SELECT conversion_id, link_id, click_id, account_id, conversion_type, toString(value) AS value, currency, is_refund, occurred_at FROM conversions_v1 WHERE link_id = {linkId:String} ORDER BY occurred_at, conversion_id',
    query_params: { linkId },
    format: 'JSONEachRow',
  })
  return result.json<MirrorRow>()
}
