// The negative cases of the token endpoint and the resource server (tokens.cases.ts),
// in-process on this run's engines (PGlite and in-process adapters, or Postgres and Redis in the services
// pass). test/oauth/two-process.test.ts runs the same cases against real server processes.
import { beforeAll, describe } from 'bun:test'
import { testApi, testConfig } from '../support/api'
import { appFetch } from '../support/oauth'
import { OTHER_ISSUER, type OAuthCaseContext } from './context'
import { tokenCases } from './tokens.cases'

let ctx: OAuthCaseContext

beforeAll(async () => {
  const api = await testApi()
  const other = await testApi({ config: testConfig({ PUBLIC_API_URL: OTHER_ISSUER }) })
  ctx = { fetch: () => appFetch(api.app), db: api.deps.db, otherResource: () => appFetch(other.app) }
})

describe('OAuth tokens and the resource server, refused (in-process)', () => tokenCases(() => ctx))
