// Shared by the tests of guest links (src/modules/links/guest-links*.test.ts, alias-check.test.ts): the
// API and POST /api/v1/shorten with a token. Each test file calls setUp in beforeAll; the
// exported bindings are live, so they hold the running file's API.
import { call, testApi, type TestApp } from '../api'

export let api: Awaited<ReturnType<typeof testApi>>
export let app: TestApp

export async function setUp() {
  api = await testApi()
  app = api.app
}

export const shorten = (token: string, body: unknown, target: TestApp = app) => call(target, 'POST', '/api/v1/shorten', { token, body })
