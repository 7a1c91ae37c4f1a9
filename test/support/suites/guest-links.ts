// Shared by the tests of guest links (src/modules/links/guest-links*.test.ts, alias-check.test.ts): the
// API, POST /api/v1/shorten with a token, and polling. Each test file calls setUp in beforeAll; the
// exported bindings are live, so they hold the running file's API.
import { call, testApi, type TestApp } from '../api'

export let api: Awaited<ReturnType<typeof testApi>>
export let app: TestApp

export async function setUp() {
  api = await testApi()
  app = api.app
}

export const shorten = (token: string, body: unknown, target: TestApp = app) => call(target, 'POST', '/api/v1/shorten', { token, body })

export async function waitFor(check: () => boolean, ms = 2000): Promise<boolean> {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (check()) return true
    await Bun.sleep(10)
  }
  return check()
}
