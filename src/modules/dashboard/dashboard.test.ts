// /app as the API serves it, without a browser: who gets the page (signed in) and who is sent to sign in,
// the session's CSRF token in the page, the page's locked-down headers, the assets in the encoding the
// browser accepts, the icon (named by the page, and at /favicon.ico for every other page), and what a
// fresh build weighs against the budget (300 KB of compressed script).
// The journeys themselves run in Chromium: test/browser/dashboard.test.ts.
import { beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { gunzipSync, brotliDecompressSync } from 'node:zlib'
import { Elysia } from 'elysia'
import { buildDashboard, type Manifest } from '../../../scripts/build-dashboard'
import { testApi } from '../../../test/support/api'
import { newAccount } from '../../../test/support/fixtures'
import { errors } from '../../plugins/errors'
import { createServices } from '../../services'
import { cookieName } from '../signin/cookies'
import { createSession, csrfTokenFor } from '../signin/service'
import { acceptsEncoding, dashboardModule } from '.'

const ROOT = resolve(import.meta.dir, '../../..')
const BUDGET_BYTES = 300 * 1024

let distDir: string
let manifest: Manifest
let app: { handle(request: Request): Promise<Response> }
let services: ReturnType<typeof createServices>
let cookie: string
let csrf: string

beforeAll(async () => {
  // A build of this tree's sources of its own (the installed one may be older than the sources).
  distDir = join(mkdtempSync(join(tmpdir(), 'dashboard-dist-')), 'dist')
  manifest = await buildDashboard(distDir)
  const api = await testApi()
  services = createServices(api.deps)
  app = new Elysia().use(dashboardModule(services, { distDir }))
  const { id } = await newAccount(api.deps.db)
  const session = await createSession(services, id, 'email-code')
  cookie = `${cookieName(services.config, 'session')}=${session.token}`
  csrf = csrfTokenFor(services.config, session.id)
}, 60_000)

const get = (path: string, headers: Record<string, string> = {}) => app.handle(new Request(`http://localhost${path}`, { headers }))

describe('the dashboard page', () => {
  test('signed out: every page is a 303 to sign-in, which leads back to it', async () => {
    for (const path of ['/app', '/app/account', '/app/links/abc?period=7D']) {
      const response = await get(path)
      expect(response.status, path).toBe(303)
      expect(response.headers.get('location'), path).toBe(`/signin?next=${encodeURIComponent(path)}`)
    }
    const forged = await get('/app', { cookie: `${cookieName(services.config, 'session')}=hs_forged` })
    expect(forged.status).toBe(303)
  })

  test("signed in: the shell with the session's CSRF token, its script and style, and nothing from elsewhere", async () => {
    const response = await get('/app/account', { cookie })
    const html = await response.text()
    expect(response.status, html).toBe(200)
    expect(html).toContain(`<meta name="csrf-token" content="${csrf}">`)
    expect(html).toContain(`<script type="module" src="/app/assets/${manifest.entry.script}"></script>`)
    expect(html).toContain(`/app/assets/${manifest.entry.style}`)
    // The page names its icon under /app, which reaches the API in every deployment; the policy lets the
    // page load it.
    expect(html).toContain(`<link rel="icon" type="image/svg+xml" href="/app/assets/${manifest.entry.icon}">`)
    expect(response.headers.get('cache-control')).toBe('no-store')
    const policy = response.headers.get('content-security-policy') ?? ''
    for (const directive of ["default-src 'self'", "script-src 'self'", "img-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"]) expect(policy).toContain(directive)
    expect(policy).not.toContain('unsafe')
    expect(response.headers.get('x-frame-options')).toBe('DENY')
    expect(html).not.toMatch(/mk_[A-Za-z0-9_-]{8,}/)
  })

  test('the shell marks an operator (ADMIN_EMAILS) and no one else', async () => {
    expect(await (await get('/app', { cookie })).text()).not.toContain('name="operator"')
    const { id } = await newAccount(services.db)
    const operatorEmail = `${id.toLowerCase()}@example.test`
    const operatorServices = { ...services, config: { ...services.config, adminEmails: [operatorEmail] } }
    const operatorApp = new Elysia().use(dashboardModule(operatorServices, { distDir }))
    const session = await createSession(services, id, 'email-code')
    const operatorCookie = `${cookieName(services.config, 'session')}=${session.token}`
    const html = await (await operatorApp.handle(new Request('http://localhost/app', { headers: { cookie: operatorCookie } }))).text()
    expect(html).toContain('<meta name="operator" content="1">')
    // The member's session on the same instance gets no mark.
    expect(await (await operatorApp.handle(new Request('http://localhost/app', { headers: { cookie } }))).text()).not.toContain('name="operator"')
  })

  test('a build that is missing says how to make it (503), to a signed-in person', async () => {
    const bare = new Elysia().use(dashboardModule(services, { distDir: mkdtempSync(join(tmpdir(), 'no-dashboard-')) }))
    const response = await bare.handle(new Request('http://localhost/app', { headers: { cookie } }))
    expect(response.status).toBe(503)
    expect(await response.text()).toContain('npm run dashboard:build')
  })
})

describe('the dashboard assets', () => {
  const script = () => `/app/assets/${manifest.entry.script}`
  const raw = () => readFileSync(join(distDir, 'assets', manifest.entry.script))

  test('brotli when accepted, else gzip, else as built; immutable, and the same bytes once decoded', async () => {
    const br = await get(script(), { 'accept-encoding': 'gzip, deflate, br' })
    expect(br.headers.get('content-encoding')).toBe('br')
    expect(brotliDecompressSync(Buffer.from(await br.arrayBuffer())).equals(raw())).toBe(true)
    const gzip = await get(script(), { 'accept-encoding': 'gzip' })
    expect(gzip.headers.get('content-encoding')).toBe('gzip')
    expect(gunzipSync(Buffer.from(await gzip.arrayBuffer())).equals(raw())).toBe(true)
    const plain = await get(script(), { 'accept-encoding': 'br;q=0, gzip;q=0' })
    expect(plain.headers.get('content-encoding')).toBeNull()
    expect(Buffer.from(await plain.arrayBuffer()).equals(raw())).toBe(true)
    for (const response of [br, gzip, plain]) {
      expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
      expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
      expect(response.headers.get('vary')).toBe('Accept-Encoding')
    }
  })

  test('an asset that is not in the build is a 404, and no other file is reachable through the assets path', async () => {
    for (const path of ['/app/assets/nope.js', '/app/assets/%2e%2e%2fmanifest.json', '/app/assets/..%2Findex.html', '/app/assets/']) {
      const response = await get(path, { cookie })
      expect(response.status, path).toBe(404)
    }
    // `..` is resolved by the URL itself: what is left is a dashboard page, never the build's files.
    const dotted = await get('/app/assets/../manifest.json', { cookie })
    expect(await dotted.text()).not.toContain('"assets"')
  })

  test('the icon: an immutable SVG under /app/assets, and the same bytes at /favicon.ico for anyone, signed in or not, cached for a day', async () => {
    const source = readFileSync(join(ROOT, 'dashboard/src/icon.svg'))
    const asset = await get(`/app/assets/${manifest.entry.icon}`, { 'accept-encoding': 'identity' })
    expect(asset.status, manifest.entry.icon).toBe(200)
    expect(asset.headers.get('content-type')).toBe('image/svg+xml')
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    expect(Buffer.from(await asset.arrayBuffer()).equals(source)).toBe(true)
    // No cookie: the sign-in page's browser asks for it before anyone has signed in.
    const favicon = await get('/favicon.ico', { 'accept-encoding': 'gzip' })
    expect(favicon.status).toBe(200)
    expect(favicon.headers.get('content-type')).toBe('image/svg+xml')
    expect(favicon.headers.get('cache-control')).toBe('public, max-age=86400')
    expect(favicon.headers.get('content-encoding')).toBe('gzip')
    expect(gunzipSync(Buffer.from(await favicon.arrayBuffer())).equals(source)).toBe(true)
  })

  test("without a build, /favicon.ico is the API's JSON 404", async () => {
    const bare = new Elysia().use(errors).use(dashboardModule(services, { distDir: mkdtempSync(join(tmpdir(), 'no-dashboard-')) }))
    const response = await bare.handle(new Request('http://localhost/favicon.ico'))
    const text = await response.text()
    expect(response.status, text).toBe(404)
    expect(JSON.parse(text), text).toMatchObject({ success: false, error: 'NOT_FOUND' })
  })

  test('Accept-Encoding is read as RFC 9110 says: names, any case, q=0 refuses', () => {
    expect(acceptsEncoding('gzip, br', 'br')).toBe(true)
    expect(acceptsEncoding('GZIP;q=0.5', 'gzip')).toBe(true)
    expect(acceptsEncoding('br;q=0', 'br')).toBe(false)
    expect(acceptsEncoding('br;q=0.0', 'br')).toBe(false)
    expect(acceptsEncoding('xbr, brotli', 'br')).toBe(false)
    expect(acceptsEncoding('', 'gzip')).toBe(false)
  })
})

describe('the dashboard build', () => {
  test(`stays under ${BUDGET_BYTES / 1024} KB of compressed script (gzip, what every browser accepts)`, () => {
    const scripts = manifest.assets.filter((a) => a.kind === 'js')
    const gzip = scripts.reduce((n, a) => n + a.gzipBytes, 0)
    expect(scripts.length).toBeGreaterThan(0)
    expect(gzip, JSON.stringify(scripts)).toBeLessThan(BUDGET_BYTES)
  })

  test('the stylesheet closes every block it opens (the bundler accepts an unclosed @media, which confines every later rule to phone width)', () => {
    const css = readFileSync(join(ROOT, 'dashboard/src/styles.css'), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '')
    let depth = 0
    let deepest = 0
    let line = 1
    const tooDeep: number[] = []
    for (const char of css) {
      if (char === '\n') line++
      if (char === '{') {
        depth++
        deepest = Math.max(deepest, depth)
        // Rules sit at the top or inside one at-rule; no CSS nesting is used, so a third level is a block left open.
        if (depth > 2) tooDeep.push(line)
      }
      if (char === '}') depth--
      expect(depth, `a '}' with no block open, line ${line}`).toBeGreaterThanOrEqual(0)
    }
    expect(tooDeep, 'blocks opened three deep (an at-rule left open above them)').toEqual([])
    expect(depth, 'blocks still open at the end of styles.css').toBe(0)
  })

  test('type-checks against the typed client generated from the API document (so a drift of the API fails here)', () => {
    const result = Bun.spawnSync([process.execPath, join(ROOT, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', join(ROOT, 'dashboard/tsconfig.json')], {
      cwd: ROOT,
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const output = `${result.stdout}${result.stderr}`
    expect(output.trim(), 'tsc -p dashboard/tsconfig.json').toBe('')
    expect(result.exitCode).toBe(0)
  })
})
