// Client ID Metadata Documents: fetched from a real server on loopback (CIMD_ALLOW_HTTP_LOOPBACK on), and
// refused before any connection without that setting. DNS is injected, so no test asks a real resolver.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseConfig } from '../../core/config'
import { OAuthError } from '../../src/plugins/oauth-errors'
import { CimdCache, fetchClientMetadataDocument, isMetadataDocumentUrl, type CimdOptions, type Resolve } from '../../src/modules/oauth/cimd'
import { chatgptClientDocument } from '../support/oauth'
import { within } from '../support/wait'

const quiet = { warn: () => {} }
const testing = parseConfig({ CIMD_ALLOW_HTTP_LOOPBACK: 'true' }, quiet)
const production = parseConfig({}, quiet)
let clock = 1_700_000_000_000
const withLoopback = { config: testing, now: () => clock }
const withoutLoopback = { config: production, now: () => clock }

const routes = new Map<string, (request: Request) => Response | Promise<Response>>()
const hits = new Map<string, number>()
let server: ReturnType<typeof Bun.serve>

beforeAll(() => {
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      const path = new URL(request.url).pathname
      hits.set(path, (hits.get(path) ?? 0) + 1)
      return routes.get(path)?.(request) ?? new Response('not found', { status: 404 })
    },
  })
})
afterAll(() => server.stop(true))

const urlOf = (path: string) => `http://127.0.0.1:${server.port}${path}`
const documentFor = (clientId: string, fields: Record<string, unknown> = {}) => ({
  client_id: clientId,
  client_name: 'Test Agent',
  redirect_uris: ['http://127.0.0.1:7777/callback'],
  token_endpoint_auth_method: 'none',
  ...fields,
})
/** Serves a document naming its own URL at `path` (with `fields` over the defaults); returns that URL. */
function serveDocument(path: string, fields: Record<string, unknown> = {}, headers: Record<string, string> = {}): string {
  routes.set(path, () => Response.json(documentFor(urlOf(path), fields), { headers }))
  return urlOf(path)
}
function serve(path: string, handler: (request: Request) => Response | Promise<Response>): string {
  routes.set(path, handler)
  return urlOf(path)
}
/** Each call its own cache unless a test shares one on purpose. */
const fresh = (options: CimdOptions = {}): CimdOptions => ({ cache: new CimdCache(), ...options })

async function refusal(work: Promise<unknown>): Promise<OAuthError> {
  const outcome = await work.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  )
  expect('error' in outcome ? outcome.error : outcome, `expected a refusal, got ${JSON.stringify(outcome)}`).toBeInstanceOf(OAuthError)
  const error = (outcome as { error: OAuthError }).error
  expect(error.code).toBe('invalid_client')
  return error
}

describe('isMetadataDocumentUrl', () => {
  test('https URLs; http only on loopback and only with the test setting; issued ids never', () => {
    expect(isMetadataDocumentUrl('https://agent.example/client.json', production)).toBe(true)
    expect(isMetadataDocumentUrl('oac_0123456789', production)).toBe(false)
    expect(isMetadataDocumentUrl('http://127.0.0.1:8080/client.json', production)).toBe(false)
    expect(isMetadataDocumentUrl('http://127.0.0.1:8080/client.json', testing)).toBe(true)
    expect(isMetadataDocumentUrl('http://localhost:8080/client.json', testing)).toBe(true)
    expect(isMetadataDocumentUrl('http://agent.example/client.json', testing)).toBe(false)
  })
})

describe('with CIMD_ALLOW_HTTP_LOOPBACK, from a server on loopback', () => {
  test('a good document is the ClientView: scope normalized, duplicates and unknown fields dropped', async () => {
    const clientId = serveDocument('/good.json', {
      client_name: '  Test Agent ',
      redirect_uris: ['http://127.0.0.1:7777/callback', 'com.example.agent:/cb', 'http://127.0.0.1:7777/callback'],
      scope: 'links:read  offline_access links:read',
      client_uri: 'https://agent.example/',
      logo_uri: 'https://agent.example/logo.png',
      jwks_uri: 'https://agent.example/jwks.json',
      grant_types: ['authorization_code', 'refresh_token'],
    })
    const view = await fetchClientMetadataDocument(withLoopback, clientId, fresh())
    expect(view).toEqual({
      client_id: clientId,
      client_name: 'Test Agent',
      redirect_uris: ['http://127.0.0.1:7777/callback', 'com.example.agent:/cb'],
      scope: 'links:read offline_access',
      client_uri: 'https://agent.example/',
      refreshable: true,
      auth: { method: 'none' },
    })
    const minimal = serveDocument('/minimal.json', { client_name: undefined, token_endpoint_auth_method: undefined })
    expect(await fetchClientMetadataDocument(withLoopback, minimal, fresh())).toEqual({
      client_id: minimal,
      client_name: null,
      redirect_uris: ['http://127.0.0.1:7777/callback'],
      scope: null,
      client_uri: null,
      refreshable: false,
      auth: { method: 'none' },
    })
  })

  test("ChatGPT's shape (private_key_jwt, RS256, jwks_uri) and an inline jwks are accepted, with their keys' source", async () => {
    const chatgpt = serveDocument('/chatgpt.json', chatgptClientDocument(urlOf('/chatgpt.json'), 'https://chatgpt.com/oauth/jwks.json'))
    expect((await fetchClientMetadataDocument(withLoopback, chatgpt, fresh())).auth).toEqual({ method: 'private_key_jwt', jwks: null, jwks_uri: 'https://chatgpt.com/oauth/jwks.json' })
    const keys = { keys: [{ kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0' }] }
    const inline = serveDocument('/inline.json', { token_endpoint_auth_method: 'private_key_jwt', jwks: keys })
    expect((await fetchClientMetadataDocument(withLoopback, inline, fresh())).auth).toEqual({ method: 'private_key_jwt', jwks: keys, jwks_uri: null })
  })

  test('a document must name the URL it is served from, exactly', async () => {
    const clientId = serve('/mismatch.json', () => Response.json(documentFor(urlOf('/other.json'))))
    expect((await refusal(fetchClientMetadataDocument(withLoopback, clientId, fresh()))).description).toContain('client_id must be exactly the URL')
    const slash = serve('/slash.json', () => Response.json(documentFor(`${urlOf('/slash.json')}/`)))
    expect((await refusal(fetchClientMetadataDocument(withLoopback, slash, fresh()))).description).toContain('client_id must be exactly the URL')
  })

  test('every redirect URI is checked as registration checks it', async () => {
    for (const [path, uri] of [
      ['/redirect-script.json', 'javascript:alert(1)'],
      ['/redirect-http.json', 'http://agent.example/callback'],
      ['/redirect-fragment.json', 'https://agent.example/cb#x'],
    ] as const) {
      const clientId = serveDocument(path, { redirect_uris: ['https://agent.example/cb', uri] })
      const error = await refusal(fetchClientMetadataDocument(withLoopback, clientId, fresh()))
      expect(error.description, uri).toStartWith('client metadata document: redirect_uris: ')
    }
  })

  test.each<[string, Record<string, unknown>, RegExp]>([
    ['a shared-secret auth method', { token_endpoint_auth_method: 'client_secret_basic' }, /token_endpoint_auth_method must be none/],
    ['client_secret_jwt', { token_endpoint_auth_method: 'client_secret_jwt' }, /token_endpoint_auth_method must be none or private_key_jwt/],
    ['private_key_jwt without keys', { token_endpoint_auth_method: 'private_key_jwt' }, /needs its public keys/],
    ['private_key_jwt with jwks and jwks_uri both', { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ kty: 'EC' }] }, jwks_uri: 'https://agent.example/jwks.json' }, /one of them/],
    ['private_key_jwt with an http jwks_uri', { token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'http://agent.example/jwks.json' }, /jwks_uri must be an https URL/],
    ['private_key_jwt with a jwks that is not a key set', { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [] } }, /jwks must be a JWK Set/],
    [
      'private_key_jwt signed with HS256',
      { token_endpoint_auth_method: 'private_key_jwt', token_endpoint_auth_signing_alg: 'HS256', jwks_uri: 'https://agent.example/jwks.json' },
      /token_endpoint_auth_signing_alg must be one of/,
    ],
    ['a client_secret', { client_secret: 's3cret' }, /client_secret/],
    ['a client_secret_expires_at', { client_secret_expires_at: 0 }, /client_secret/],
    ['no redirect_uris', { redirect_uris: undefined }, /redirect_uris must list 1-10/],
    ['empty redirect_uris', { redirect_uris: [] }, /redirect_uris must list 1-10/],
    ['eleven redirect_uris', { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://agent.example/cb${i}`) }, /redirect_uris must list 1-10/],
    ['a client_name that is not text', { client_name: 42 }, /client_name must be a string of 1-200/],
    ['a client_name of 201 characters', { client_name: 'n'.repeat(201) }, /client_name must be a string of 1-200/],
    ['an http client_uri', { client_uri: 'http://agent.example/' }, /client_uri must be an https URL/],
    ['a scope with a quote', { scope: 'links:read "x"' }, /scope must be space-separated scope tokens/],
    ['a scope that is not text', { scope: ['links:read'] }, /scope must be space-separated scope tokens/],
    ['a scope of 1001 characters', { scope: 's'.repeat(1001) }, /scope must be space-separated scope tokens/],
  ])('refuses a document with %s', async (name, fields, message) => {
    const clientId = serveDocument(`/refused-${name.replaceAll(/\W+/g, '-')}.json`, fields)
    expect((await refusal(fetchClientMetadataDocument(withLoopback, clientId, fresh()))).description).toMatch(message)
  })

  test('a body past 64 KB is refused without reading the rest of it', async () => {
    let served = 0
    const chunk = new Uint8Array(16 * 1024).fill(0x20)
    // An endless body: only stopping at the cap ends this call as "larger than 64 KB"; without the cap
    // the 10 s budget would end it as "not fetched within 10 s".
    const clientId = serve('/endless.json', () => new Response(new ReadableStream({ pull: (controller) => void (controller.enqueue(chunk), (served += chunk.byteLength)) })))
    const error = await refusal(fetchClientMetadataDocument(withLoopback, clientId, fresh({ timeoutMs: 10_000 })))
    expect(error.description).toContain('larger than 64 KB')
    expect(served, `served ${served} bytes`).toBeLessThan(32 * 1024 * 1024)
  })

  test('a server slower than the budget is given up, before its answer and during its body', async () => {
    // Past its 0.25 s budget the late server's document would be accepted and the stalled body would
    // never end: the refusal, and within() for the stalled one, show the budget was kept.
    const late = serve('/late.json', async () => {
      await Bun.sleep(3000)
      return Response.json(documentFor(late))
    })
    const stalled = serve('/stalled.json', () => new Response(new ReadableStream({ start: (controller) => controller.enqueue(new TextEncoder().encode('{"client_id":')) })))
    for (const clientId of [late, stalled]) {
      const error = await refusal(within(fetchClientMetadataDocument(withLoopback, clientId, fresh({ timeoutMs: 250 })), clientId))
      expect(error.description).toContain('not fetched within 0.25 s')
    }
  })

  test('the budget covers the DNS lookup too', async () => {
    const hanging: Resolve = () => new Promise(() => {})
    const error = await refusal(fetchClientMetadataDocument(withLoopback, 'https://example.test/client.json', fresh({ resolve: hanging, timeoutMs: 100 })))
    expect(error.description).toContain('not fetched within 0.1 s')
  })

  test('a redirect is refused and not followed', async () => {
    const target = serveDocument('/redirect-target.json')
    const clientId = serve('/redirecting.json', () => new Response(null, { status: 302, headers: { location: target } }))
    expect((await refusal(fetchClientMetadataDocument(withLoopback, clientId, fresh()))).description).toContain('redirects are not followed')
    expect(hits.get('/redirect-target.json') ?? 0).toBe(0)
  })

  test('anything but 200 with a JSON object is refused', async () => {
    const missing = urlOf('/missing.json')
    expect((await refusal(fetchClientMetadataDocument(withLoopback, missing, fresh()))).description).toContain('answered HTTP 404, not 200')
    const created = serve('/created.json', () => Response.json(documentFor(created), { status: 201 }))
    expect((await refusal(fetchClientMetadataDocument(withLoopback, created, fresh()))).description).toContain('answered HTTP 201')
    const html = serve('/page.html', () => new Response('<html>hello</html>', { headers: { 'content-type': 'text/html' } }))
    expect((await refusal(fetchClientMetadataDocument(withLoopback, html, fresh()))).description).toContain('not JSON')
    const list = serve('/list.json', () => Response.json([documentFor(list)]))
    expect((await refusal(fetchClientMetadataDocument(withLoopback, list, fresh()))).description).toContain('must be a JSON object')
  })

  test('a document is cached: later and concurrent lookups make one fetch', async () => {
    const cache = new CimdCache()
    const clientId = serveDocument('/cached.json')
    const first = await fetchClientMetadataDocument(withLoopback, clientId, { cache })
    expect(await fetchClientMetadataDocument(withLoopback, clientId, { cache })).toEqual(first)
    expect(hits.get('/cached.json')).toBe(1)

    const together = serveDocument('/together.json')
    const views = await Promise.all([1, 2, 3].map(() => fetchClientMetadataDocument(withLoopback, together, fresh({ cache }))))
    expect(views.map((v) => v.client_id)).toEqual([together, together, together])
    expect(hits.get('/together.json')).toBe(1)
  })

  test.each<[string, Record<string, string>, number, number]>([
    ['no Cache-Control: 5 min', {}, 299, 301],
    ['max-age=600', { 'cache-control': 'public, max-age=600' }, 599, 601],
    ['max-age=600 less an Age of 500', { 'cache-control': 'max-age=600', age: '500' }, 99, 101],
    ['max-age=5, raised to 60 s', { 'cache-control': 'max-age=5' }, 59, 61],
    ['no-store, kept 60 s', { 'cache-control': 'no-store' }, 59, 61],
    ['max-age of a day, cut to 1 h', { 'cache-control': 'max-age=86400' }, 3599, 3601],
  ])('cache lifetime: %s', async (name, headers, stillCachedAt, fetchedAgainAt) => {
    const path = `/ttl-${name.replaceAll(/\W+/g, '-')}.json`
    const clientId = serveDocument(path, {}, headers)
    const options = fresh()
    const start = clock
    await fetchClientMetadataDocument(withLoopback, clientId, options)
    clock = start + stillCachedAt * 1000
    await fetchClientMetadataDocument(withLoopback, clientId, options)
    expect(hits.get(path)).toBe(1)
    clock = start + fetchedAgainAt * 1000
    await fetchClientMetadataDocument(withLoopback, clientId, options)
    expect(hits.get(path)).toBe(2)
  })

  test('a refusal is remembered 30 s, then the URL is fetched again', async () => {
    let broken = true
    const clientId = serve('/flaky.json', () => (broken ? new Response('oops', { status: 500 }) : Response.json(documentFor(clientId))))
    const options = fresh()
    const start = clock
    await refusal(fetchClientMetadataDocument(withLoopback, clientId, options))
    broken = false
    clock = start + 29_000
    expect((await refusal(fetchClientMetadataDocument(withLoopback, clientId, options))).description).toContain('HTTP 500')
    expect(hits.get('/flaky.json')).toBe(1)
    clock = start + 31_000
    expect((await fetchClientMetadataDocument(withLoopback, clientId, options)).client_id).toBe(clientId)
    expect(hits.get('/flaky.json')).toBe(2)
  })

  test('the connection goes to the address that was checked, with the name as Host', async () => {
    // Listening on 127.0.0.2 only: a second resolution of "localhost" (127.0.0.1 or ::1) would miss it.
    const pinned = Bun.serve({ hostname: '127.0.0.2', port: 0, fetch: (request) => Response.json(documentFor(`http://${request.headers.get('host')}/pinned.json`)) })
    try {
      const clientId = `http://localhost:${pinned.port}/pinned.json`
      const resolve: Resolve = async (name) => (name === 'localhost' ? ['127.0.0.2'] : [])
      expect((await fetchClientMetadataDocument(withLoopback, clientId, fresh({ resolve }))).client_id).toBe(clientId)
    } finally {
      pinned.stop(true)
    }
  })

  test('of a dual-stack name, the IPv4 address is the one connected to', async () => {
    // The server listens on 127.0.0.1 only; nothing answers on [::1] at its port.
    const clientId = `http://localhost:${server.port}/dual-stack.json`
    serve('/dual-stack.json', (request) => Response.json(documentFor(`http://${request.headers.get('host')}/dual-stack.json`)))
    const resolve: Resolve = async () => ['::1', '127.0.0.1']
    expect((await fetchClientMetadataDocument(withLoopback, clientId, fresh({ resolve }))).client_id).toBe(clientId)
  })

  test('the setting opens loopback only: private addresses and plain http elsewhere stay refused', async () => {
    const resolve: Resolve = async () => ['10.0.0.1']
    expect((await refusal(fetchClientMetadataDocument(withLoopback, 'https://example.test/client.json', fresh({ resolve })))).description).toContain('non-public address')
    expect((await refusal(fetchClientMetadataDocument(withLoopback, 'https://10.0.0.1/client.json', fresh()))).description).toContain('not a public address')
    expect((await refusal(fetchClientMetadataDocument(withLoopback, 'http://10.0.0.1/client.json', fresh()))).description).toContain('must use https')
  })
})

describe('without the setting', () => {
  const calls: string[] = []
  const recording =
    (addresses: string[]): Resolve =>
    async (name) => (calls.push(name), addresses)

  test('http on loopback is refused before any connection', async () => {
    const clientId = serveDocument('/production-http.json')
    expect((await refusal(fetchClientMetadataDocument(withoutLoopback, clientId, fresh()))).description).toContain('must use https')
    expect(hits.get('/production-http.json') ?? 0).toBe(0)
  })

  test.each([
    'https://127.0.0.1/client.json',
    'https://[::1]/client.json',
    'https://169.254.169.254/latest/client.json',
    'https://[::ffff:a00:1]/client.json',
    'https://0.0.0.0/client.json',
    'https://localhost/client.json',
    'https://api.localhost/client.json',
  ])('%s is refused as not public, without resolving anything', async (clientId) => {
    calls.length = 0
    const error = await refusal(fetchClientMetadataDocument(withoutLoopback, clientId, fresh({ resolve: recording(['93.184.216.34']) })))
    expect(error.description).toContain('not a public address')
    expect(calls).toEqual([])
  })

  test.each<[string, string[]]>([
    ['a private address', ['10.0.0.1']],
    ['one private address among public ones', ['93.184.216.34', '192.168.1.10']],
    ['an IPv4-mapped loopback address', ['::ffff:127.0.0.1']],
    ['a link-local IPv6 address', ['fe80::1']],
    ['a documentation address', ['203.0.113.5']],
  ])('a name that resolves to %s is refused, the address not shown', async (_, addresses) => {
    const error = await refusal(fetchClientMetadataDocument(withoutLoopback, 'https://example.test/client.json', fresh({ resolve: recording(addresses) })))
    expect(error.description).toContain('resolves to a non-public address')
    for (const address of addresses) expect(error.description).not.toContain(address)
  })

  test('a name that does not resolve, or to nothing, is refused', async () => {
    const failing: Resolve = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND example.test'), { code: 'ENOTFOUND' })
    }
    expect((await refusal(fetchClientMetadataDocument(withoutLoopback, 'https://example.test/client.json', fresh({ resolve: failing })))).description).toContain('could not be resolved')
    expect((await refusal(fetchClientMetadataDocument(withoutLoopback, 'https://example.test/client.json', fresh({ resolve: recording([]) })))).description).toContain('no address')
  })

  test.each<[string, string]>([
    ['https://agent.example/aaa…', 'at most 2048 characters'],
    ['not a url', 'not a valid URL'],
    ['http://agent.example/client.json', 'must use https'],
    ['https://me:secret@agent.example/client.json', 'must not contain credentials'],
    ['https://agent.example/client.json#top', 'must not have a fragment'],
    ['https://agent.example/client.json#', 'must not have a fragment'],
    ['https://agent.example/a/../client.json', 'must not contain . or .. path segments'],
    ['https://agent.example/./client.json', 'must not contain . or .. path segments'],
    ['https://agent.example/a/%2E%2E/client.json', 'must not contain . or .. path segments'],
    ['https://agent.example', 'needs a path'],
    ['https://agent.example/', 'needs a path'],
    ['HTTPS://agent.example/client.json', 'normalized form'],
    ['https://Agent.Example/client.json', 'normalized form'],
    ['https://agent.example:443/client.json', 'normalized form'],
  ])('the client_id %s is refused before any lookup: %s', async (clientId, message) => {
    calls.length = 0
    const url = clientId.endsWith('…') ? `https://agent.example/${'a'.repeat(2048)}` : clientId
    const error = await refusal(fetchClientMetadataDocument(withoutLoopback, url, fresh({ resolve: recording(['93.184.216.34']) })))
    expect(error.description).toContain(message)
    expect(calls).toEqual([])
  })
})

// Real TLS to a pinned address: the certificate is checked against the name, not the address. Needs
// openssl for a throw-away CA, and a child process, since Bun reads NODE_EXTRA_CA_CERTS at start only.
if (!Bun.which('openssl')) console.info('test/oauth/cimd.test.ts: "https to the checked address" SKIPPED: no openssl to make a throw-away CA (apt-get install openssl)')
describe.skipIf(!Bun.which('openssl'))('https to the checked address', () => {
  test('a certificate for the name is accepted; the same server under another name is refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cimd-tls-'))
    const openssl = (...args: string[]) => expect(Bun.spawnSync(['openssl', ...args], { cwd: dir, stderr: 'pipe' }).exitCode, args.join(' ')).toBe(0)
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '1',
      '-subj',
      '/CN=cimd test CA',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign',
    )
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=cimd.test')
    writeFileSync(join(dir, 'leaf.ext'), 'subjectAltName=DNS:cimd.test\nextendedKeyUsage=serverAuth\n')
    openssl('x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'leaf.pem', '-days', '1', '-extfile', 'leaf.ext')
    writeFileSync(
      join(dir, 'child.ts'),
      `import { parseConfig } from ${JSON.stringify(join(import.meta.dir, '../../core/config.ts'))}
import { CimdCache, fetchClientMetadataDocument } from ${JSON.stringify(join(import.meta.dir, '../../src/modules/oauth/cimd.ts'))}
const server = Bun.serve({ hostname: '127.0.0.1', port: 0, tls: { cert: Bun.file('leaf.pem'), key: Bun.file('leaf.key') },
  fetch: (r) => Response.json({ client_id: 'https://' + r.headers.get('host') + '/client.json', redirect_uris: ['https://agent.example/cb'] }) })
const services = { config: parseConfig({ CIMD_ALLOW_HTTP_LOOPBACK: 'true' }, { warn() {} }), now: Date.now }
const resolve = async () => ['127.0.0.1']
const outcomes = []
for (const name of ['cimd.test', 'other.test']) {
  const clientId = 'https://' + name + ':' + server.port + '/client.json'
  outcomes.push(await fetchClientMetadataDocument(services, clientId, { resolve, cache: new CimdCache() }).then((v) => v.client_id === clientId, (e) => e.description))
}
server.stop(true)
console.log(JSON.stringify(outcomes))
`,
    )
    const child = Bun.spawnSync([process.execPath, 'child.ts'], { cwd: dir, env: { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem') }, stderr: 'pipe' })
    rmSync(dir, { recursive: true, force: true })
    const output = child.stdout.toString()
    expect(child.exitCode, `${output}\n${child.stderr.toString()}`).toBe(0)
    expect(JSON.parse(output)).toEqual([true, 'client_id: the metadata document could not be fetched (connection or TLS failure).'])
  })
})
