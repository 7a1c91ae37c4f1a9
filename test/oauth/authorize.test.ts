// The negative cases of authorization and consent (authorize.cases.ts), in-process
// on this run's engines (PGlite and in-process adapters, or Postgres and Redis in the services pass).
// test/oauth/two-process.test.ts runs the same cases against real server processes.
import { beforeAll, describe } from 'bun:test'
import { testApi, testConfig } from '../support/api'
import { appFetch } from '../support/oauth'
import { authorizeCases } from './authorize.cases'
import { OTHER_ISSUER, type OAuthCaseContext } from './context'

let ctx: OAuthCaseContext

beforeAll(async () => {
  const api = await testApi()
  const other = await testApi({ config: testConfig({ PUBLIC_API_URL: OTHER_ISSUER }) })
  ctx = { fetch: () => appFetch(api.app), db: api.deps.db, otherResource: () => appFetch(other.app) }
})

describe('OAuth authorization and consent, refused (in-process)', () => authorizeCases(() => ctx))
