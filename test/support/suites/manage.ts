// Shared by the tests of managing own links (src/modules/links/manage.*.test.ts): the API, calls as an
// API key, fresh aliases, the cache record of a link and a link made through POST /shorten. Each test
// file calls setUp in beforeAll; the exported bindings are live, so they hold the running file's API.
import { decodeCachedLink, linkCacheKey } from '../../../core/link-cache'
import { call, show, testApi, type CallResult, type TestApp } from '../api'
import type { TestAccount } from '../fixtures'

export let api: Awaited<ReturnType<typeof testApi>>
export let app: TestApp

export async function setUp() {
  api = await testApi()
  app = api.app
}

export const as = (key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => call(app, method, path, { token: key, body, headers })
export const freshAlias = (prefix = 'm') => `${prefix}-${crypto.randomUUID().slice(0, 12)}`
export const cached = async (domain: string, alias: string) => decodeCachedLink((await api.adapters.kv.get(linkCacheKey(domain, alias))) ?? '')

export async function create(account: TestAccount, body: Record<string, unknown>): Promise<CallResult> {
  const res = await as(account.key, 'POST', '/api/v1/shorten', body)
  if (res.status !== 200) throw new Error(show(res))
  return res
}
