// A fragment is refused in every redirect URI, loopback included (DESIGN "Machine access"). The reported
// hole: a client registered with http://127.0.0.1/callback; the loopback port may differ at authorize,
// and `%23` in the query decodes to `#`, so http://127.0.0.1:8976/callback#https://evil.example was
// matched on its path alone and accepted. It must be the 400 page: nothing is redirected anywhere.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import * as oauth from 'oauth4webapi'
import { testApi, testConfig } from '../support/api'
import { appFetch, authorizationUrl, discoverAndRegister, ISSUER, openRaw, shown, type Flow } from '../support/oauth'
import { expectErrorPage, requestsOf } from './context'

let api: Awaited<ReturnType<typeof testApi>>
let flow: Flow
let server: ReturnType<typeof Bun.serve>

beforeAll(async () => {
  api = await testApi({ config: testConfig({ CIMD_ALLOW_HTTP_LOOPBACK: 'true' }) })
  flow = await discoverAndRegister(appFetch(api.app), ISSUER, { redirect_uris: ['http://127.0.0.1/callback'] })
  flow.redirectUri = 'http://127.0.0.1/callback'
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (request) => Response.json({ client_id: request.url, client_name: 'Fragment Agent', redirect_uris: ['http://127.0.0.1:7777/callback#x'], token_endpoint_auth_method: 'none' }),
  })
})
afterAll(() => server.stop(true))

describe('a fragment in a redirect URI', () => {
  test('security: the reported attack, redirect_uri=http://127.0.0.1:8976/callback%23https://evil.example, is the 400 page', async () => {
    const started = await authorizationUrl(flow, 'links:read')
    const url = `${started.url.href.replace(/&redirect_uri=[^&]*/, '')}&redirect_uri=http://127.0.0.1:8976/callback%23https://evil.example`
    expect(new URL(url).searchParams.get('redirect_uri')).toBe('http://127.0.0.1:8976/callback#https://evil.example')
    const res = await openRaw(flow, url)
    expectErrorPage(res, 'invalid_request')
    expect(res.text, shown(res)).toContain('fragment')
    expect(await requestsOf(api.deps.db, flow.client.client_id)).toEqual([])
  })

  test('security: the registered URI itself with an empty fragment, or with credentials on loopback, is the 400 page too', async () => {
    for (const redirectUri of ['http://127.0.0.1/callback#', 'http://127.0.0.1:8976/callback#', 'http://evil.example@127.0.0.1:8976/callback']) {
      const started = await authorizationUrl({ ...flow, redirectUri }, 'links:read')
      const res = await openRaw(flow, started.url)
      expect(res.status, `${redirectUri}: ${shown(res)}`).toBe(400)
      expect(res.headers.get('location'), shown(res)).toBeNull()
    }
  })

  test('the same client on another loopback port, without a fragment, is still accepted (RFC 8252 7.3)', async () => {
    const started = await authorizationUrl({ ...flow, redirectUri: 'http://127.0.0.1:8976/callback' }, 'links:read')
    const res = await openRaw(flow, started.url)
    expect(res.status, shown(res)).toBe(302)
    expect(res.headers.get('location'), shown(res)).toStartWith('/consent?request_id=oreq_')
  })

  test('at registration: 400 invalid_redirect_uri', async () => {
    const refused = await oauth.dynamicClientRegistrationRequest(flow.as, { redirect_uris: ['http://127.0.0.1:8976/callback#https://evil.example'] }, flow.options)
    expect(refused.status).toBe(400)
    expect(((await refused.json()) as { error: string }).error).toBe('invalid_redirect_uri')
  })

  test('in a client metadata document: the client is refused at authorize (400 page)', async () => {
    const clientId = `http://127.0.0.1:${server.port}/fragment/client.json`
    const cimd: Flow = { ...flow, client: { client_id: clientId, token_endpoint_auth_method: 'none' }, redirectUri: 'http://127.0.0.1:7777/callback#x' }
    const res = await openRaw(cimd, (await authorizationUrl(cimd, 'links:read')).url)
    expect(res.status, shown(res)).toBe(400)
    expect(res.headers.get('location'), shown(res)).toBeNull()
    expect(res.text, shown(res)).toContain('fragment')
  })
})
