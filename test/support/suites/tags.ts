// Shared by the tags tests (src/modules/tags/*.test.ts): the API, a tag made through POST /api/v1/tags and
// a tag's row. Each test file calls setUp in beforeAll; the exported bindings are live, so they hold the
// running file's API.
import { eq } from 'drizzle-orm'
import { tags } from '../../../src/db/schema'
import { call, show, testApi, type TestApp } from '../api'
import type { TestAccount } from '../fixtures'

export let api: Awaited<ReturnType<typeof testApi>>
export let app: TestApp

export async function setUp() {
  api = await testApi()
  app = api.app
}

export const DEFAULT_DOMAIN = 'sho.rt'

export async function createTag(account: TestAccount, name: string, color?: string) {
  const res = await call(app, 'POST', '/api/v1/tags', { token: account.key, body: color === undefined ? { name } : { name, color } })
  if (res.status !== 201) throw new Error(`create tag: ${show(res)}`)
  return res.body.tag as { id: number; name: string; color: string }
}

export async function tagRow(id: number) {
  const [row] = await api.deps.db.select().from(tags).where(eq(tags.id, id))
  return row
}
