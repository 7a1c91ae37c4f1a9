// A client that never registers: its client_id is the https URL of its metadata document (served here
// over loopback http, which CIMD_ALLOW_HTTP_LOOPBACK allows for tests only). oauth4webapi drives the
// flow with that client_id; the document's redirect URIs and name are what authorization and consent use.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import * as oauth from 'oauth4webapi'
import { call, show, testApi, testConfig } from '../support/api'
import { newAccount, type TestAccount } from '../support/fixtures'
import { appFetch, approveAsHuman, authorizationUrl, exchange, ISSUER, openAuthorization, type Flow } from '../support/oauth'

let server: ReturnType<typeof Bun.serve>
let documentUrl: string
let fetches = 0
const redirectUri = 'http://127.0.0.1:47001/callback'
let api: Awaited<ReturnType<typeof testApi>>
let human: TestAccount

beforeAll(async () => {
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(request) {
      fetches++
      const url = new URL(request.url)
      if (url.pathname !== '/agent/client.json') return new Response('not found', { status: 404 })
      return Response.json({
        client_id: documentUrl,
        client_name: 'Document Agent',
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_method: 'none',
      })
    },
  })
  documentUrl = `http://127.0.0.1:${server.port}/agent/client.json`
  api = await testApi({ config: testConfig({ CIMD_ALLOW_HTTP_LOOPBACK: 'true' }) })
  human = await newAccount(api.deps.db)
})

afterAll(() => server.stop(true))

async function flowFor(clientId: string): Promise<Flow> {
  const fetch = appFetch(api.app)
  const options = { [oauth.customFetch]: fetch }
  const as = await oauth.processDiscoveryResponse(new URL(ISSUER), await oauth.discoveryRequest(new URL(ISSUER), { ...options, algorithm: 'oauth2' }))
  expect(as.client_id_metadata_document_supported).toBe(true)
  return { as, client: { client_id: clientId, token_endpoint_auth_method: 'none' }, redirectUri, fetch, options }
}

describe('Client ID Metadata Documents', () => {
  test('an unregistered client named by its document URL is authorized, consented and gets tokens (with a refresh token: its document lists the grant)', async () => {
    const flow = await flowFor(documentUrl)
    const started = await authorizationUrl(flow, 'links:read')
    const requestId = await openAuthorization(flow, started)
    const view = await call(api.app, 'GET', `/api/v1/oauth/request/${requestId}`, { token: human.key })
    expect(view.body.data.client, show(view)).toEqual({ client_id: documentUrl, client_name: 'Document Agent', redirect_uri: redirectUri })
    const tokens = await exchange(flow, started, await approveAsHuman(flow, human.key, requestId))
    expect(tokens.access_token).toMatch(/^at_/)
    expect(tokens.refresh_token).toMatch(/^rt_/)
    const links = await call(api.app, 'GET', '/api/v1/links', { token: tokens.access_token })
    expect(links.status, show(links)).toBe(200)
  })

  test('the document is cached: a second authorization does not fetch it again', async () => {
    const flow = await flowFor(documentUrl)
    await openAuthorization(flow, await authorizationUrl(flow, 'links:read'))
    const before = fetches
    await openAuthorization(flow, await authorizationUrl(flow, 'links:read'))
    expect(fetches).toBe(before)
  })

  test('a redirect URI the document does not list, or a document that does not exist, is the 400 page: nothing is redirected', async () => {
    const wrong = await flowFor(documentUrl)
    const started = await authorizationUrl({ ...wrong, redirectUri: 'http://127.0.0.1:47001/elsewhere' }, 'links:read')
    const res = await wrong.fetch(started.url.href, { redirect: 'manual' })
    expect(res.status).toBe(400)
    expect(res.headers.get('location')).toBeNull()
    const missing = await flowFor(`http://127.0.0.1:${server.port}/agent/missing.json`)
    const res2 = await missing.fetch((await authorizationUrl(missing, 'links:read')).url.href, { redirect: 'manual' })
    expect(res2.status).toBe(400)
    expect(res2.headers.get('location')).toBeNull()
    expect(res2.headers.get('content-type')).toContain('text/html')
    expect(await res2.text()).toContain('metadata document')
  })

  test('without the test-only setting, an http client_id is just an unknown client', async () => {
    const plain = await testApi()
    const flow = await flowFor(documentUrl)
    const res = await appFetch(plain.app)((await authorizationUrl(flow, 'links:read')).url.href, { redirect: 'manual' })
    expect(res.status).toBe(400)
    expect(await res.text()).toContain('invalid_client')
  })
})
