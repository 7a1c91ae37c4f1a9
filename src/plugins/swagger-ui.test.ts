import { beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { call, show, testApi, type TestApp } from '../../test/support/api'
import { INIT_SCRIPT, SWAGGER_UI_CSP, SWAGGER_UI_DIST_DIR, SWAGGER_UI_FILES } from './swagger-ui'

let app: TestApp & { routes: { method: string; path: string }[] }

beforeAll(async () => {
  app = (await testApi()).app
})

/** The src/href URLs of the page's <script>, <link> and data-url. */
function pageUrls(html: string): string[] {
  return [...html.matchAll(/(?:src|href|data-url)="([^"]+)"/g)].map((m) => m[1]!)
}

describe('GET /swagger (Swagger UI from swagger-ui-dist)', () => {
  for (const path of ['/swagger', '/swagger/']) {
    test(`${path}: our page, every URL in it on this origin, the document URL absolute`, async () => {
      const res = await call(app, 'GET', path)
      expect(res.status, show(res)).toBe(200)
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
      expect(res.text).toContain('<div id="swagger-ui" data-url="/swagger/json">')
      const urls = pageUrls(res.text)
      expect(urls).toContain('/swagger/json')
      expect(urls.some((u) => u.startsWith('/swagger/assets/swagger-ui-bundle.js?v='))).toBe(true)
      expect(urls.some((u) => u.startsWith('/swagger/assets/swagger-ui.css?v='))).toBe(true)
      expect(urls.some((u) => u.startsWith(`/swagger/assets/${INIT_SCRIPT}?v=`))).toBe(true)
      for (const url of urls) expect(url, 'root-relative, same origin').toMatch(/^\/swagger\//)
      expect(res.text).not.toMatch(/https?:\/\//)
      expect(res.text).not.toContain('unpkg')
      // No inline script: every <script> has a src and an empty body.
      expect(res.text.match(/<script[^>]*>/g)!.every((tag) => tag.includes(' src='))).toBe(true)
      expect(res.text).not.toMatch(/<script[^>]*>[^<]/)
    })
  }

  test('the page carries a strict Content-Security-Policy and is revalidated', async () => {
    const res = await call(app, 'GET', '/swagger')
    const csp = res.headers.get('content-security-policy')
    expect(csp).toBe(SWAGGER_UI_CSP)
    expect(csp).toContain("default-src 'self'")
    expect(csp).toContain("script-src 'self'")
    expect(csp).not.toMatch(/script-src[^;]*unsafe/)
    expect(csp).toContain("img-src 'self' data:")
    expect(csp).toContain("connect-src 'self'")
    expect(res.headers.get('cache-control')).toBe('no-cache')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
  })

  test('every asset the page names is served with its type and a long cache lifetime', async () => {
    const page = await call(app, 'GET', '/swagger')
    const assets = pageUrls(page.text).filter((u) => u.startsWith('/swagger/assets/'))
    expect(assets.length).toBe(5) // 2 favicons, the CSS, the bundle, init.js
    for (const url of assets) {
      const res = await call(app, 'GET', url)
      const file = new URL(url, 'http://x').pathname.split('/').pop()!
      expect(res.status, `${url}: ${show(res)}`).toBe(200)
      expect(res.headers.get('content-type'), url).toBe(file === INIT_SCRIPT ? 'text/javascript; charset=utf-8' : SWAGGER_UI_FILES[file]!)
      expect(res.headers.get('cache-control'), url).toBe('public, max-age=31536000, immutable')
      expect(res.headers.get('x-content-type-options'), url).toBe('nosniff')
    }
  })

  test('assets are the installed swagger-ui-dist files, byte for byte', async () => {
    for (const file of Object.keys(SWAGGER_UI_FILES)) {
      const res = await app.handle(new Request(`http://localhost/swagger/assets/${file}`))
      expect(res.status, file).toBe(200)
      const served = new Uint8Array(await res.arrayBuffer())
      expect(Buffer.from(served).equals(readFileSync(join(SWAGGER_UI_DIST_DIR, file))), file).toBe(true)
    }
  })

  test('the init script reads the document URL from the page, expands on request, loads no validator badge', async () => {
    const res = await call(app, 'GET', `/swagger/assets/${INIT_SCRIPT}`)
    expect(res.text).toContain("getAttribute('data-url')")
    expect(res.text).toContain('docExpansion')
    expect(res.text).toContain('validatorUrl: null')
    expect(res.text).toContain('persistAuthorization: true')
    expect(res.text).not.toMatch(/https?:\/\//)
  })

  test('security: files off the list are 404 in the ErrorResponse shape', async () => {
    for (const file of [
      'index.html',
      'swagger-initializer.js', // swagger-ui-dist's own, pointing at the petstore
      'swagger-ui-bundle.js.map',
      'package.json',
      'oauth2-redirect.html',
      'constructor',
      '__proto__',
      '..%2Fpackage.json',
      '..%2F..%2F..%2Fpackage.json',
      '%2Fetc%2Fpasswd',
    ]) {
      const res = await call(app, 'GET', `/swagger/assets/${file}`)
      expect(res.status, `${file}: ${show(res)}`).toBe(404)
      expect(res.body, file).toMatchObject({ success: false, error: 'NOT_FOUND' })
      expect(res.headers.get('content-type'), file).toBe('application/json')
    }
    // A NUL in the path is refused before any route looks at it (plugins/body.ts).
    const nul = await call(app, 'GET', '/swagger/assets/swagger-ui.css%00')
    expect(nul.status, show(nul)).toBe(400)
    expect(nul.body, show(nul)).toMatchObject({ success: false, error: 'VALIDATION_FAILED' })
    for (const path of ['/swagger/assets', '/swagger/assets/', '/swagger/assets/a/swagger-ui.css', '/swagger/index.html']) {
      const res = await call(app, 'GET', path)
      expect(res.status, `${path}: ${show(res)}`).toBe(404)
      expect(res.body?.error, path).toBe('NOT_FOUND')
    }
  })

  test('@elysiajs/swagger serves only the document: /swagger routes are the page, the assets and the JSON', async () => {
    const routes = app.routes.filter((r) => r.path.startsWith('/swagger')).map((r) => `${r.method} ${r.path}`)
    expect(routes.sort()).toEqual(['GET /swagger', 'GET /swagger/assets/:file', 'GET /swagger/json'])
    const json = await call(app, 'GET', '/swagger/json')
    expect(json.status, show(json)).toBe(200)
    expect(json.headers.get('content-type')).toStartWith('application/json')
    expect(json.body.openapi).toBe('3.1.0')
  })

  test('the UI routes are not in the OpenAPI document', async () => {
    const json = await call(app, 'GET', '/swagger/json')
    expect(Object.keys(json.body.paths).filter((p) => p.startsWith('/swagger'))).toEqual([])
    expect(json.text).not.toContain('/swagger/assets')
  })
})
