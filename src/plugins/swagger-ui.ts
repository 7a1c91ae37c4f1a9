// Swagger UI from the installed swagger-ui-dist package: our own small page, a static init script and a
// fixed list of the package's files. Nothing is loaded from a CDN, so the page works on a machine
// without internet, and a strict Content-Security-Policy can be sent (no inline script).
//
//   GET {path}  and  GET {path}/      the page (the document URL in it is absolute, so both work)
//   GET {path}/assets/{file}          swagger-ui.css, swagger-ui-bundle.js, the favicons, init.js
//
// None of these routes is part of the OpenAPI document (`detail.hide`).
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { Elysia } from 'elysia'
import { ApiError } from './errors'

/** The folder of the installed swagger-ui-dist (its package.json is always there). */
export const SWAGGER_UI_DIST_DIR = dirname(Bun.resolveSync('swagger-ui-dist/package.json', import.meta.dir))
const SWAGGER_UI_VERSION: string = JSON.parse(readFileSync(join(SWAGGER_UI_DIST_DIR, 'package.json'), 'utf8')).version

/** The only files of swagger-ui-dist that are served, with their content types. */
export const SWAGGER_UI_FILES: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-16x16.png': 'image/png',
  'favicon-32x32.png': 'image/png',
}

/** Our init script's file name under assets/ (not a file of swagger-ui-dist). */
export const INIT_SCRIPT = 'init.js'

/**
 * Reads the document URL from the page (data-url) and, for tests and links, `?docExpansion=` (only
 * none | list | full; nothing else of the query is read: Swagger UI's own queryConfigEnabled would also
 * take `?url=`, which lets a link load a foreign document). validatorUrl null: the default would load
 * a badge from validator.swagger.io.
 *
 * The request interceptor gives every Execute of Try it out a fresh Idempotency-Key (the document has no
 * example to fill in: one fixed key would make the second Execute with another body a 400): a request to
 * an operation that documents the header, sent without one, gets a new random key, so each Execute is
 * a request of its own, as it is from curl. A key typed in is sent as typed (to try a replay).
 * crypto.randomUUID exists only in secure contexts (https, localhost): getRandomValues elsewhere.
 */
const INIT_SCRIPT_SOURCE = `'use strict'
;(function () {
var KEY_HEADER = 'idempotency-key'

function randomKey() {
  if (window.crypto.randomUUID) return window.crypto.randomUUID()
  var bytes = window.crypto.getRandomValues(new Uint8Array(16))
  return Array.prototype.map.call(bytes, function (b) { return (b + 256).toString(16).slice(1) }).join('')
}

/** Whether a path template (/api/v1/links/{alias}) matches a path, segment by segment. */
function matches(template, pathname) {
  var want = template.split('/')
  var got = pathname.split('/')
  if (want.length !== got.length) return false
  for (var i = 0; i < want.length; i++) {
    if (want[i] !== got[i] && !(want[i].charAt(0) === '{' && got[i] !== '')) return false
  }
  return true
}

/** The document's operation for this method and path (an exact path before a template), if any. */
function operationFor(method, pathname) {
  // The document's own request comes before window.ui is set.
  var paths = window.ui && window.ui.specSelectors.specJson().get('paths')
  if (!paths) return null
  if (paths.getIn([pathname, method])) return { template: pathname, operation: paths.getIn([pathname, method]) }
  var found = null
  paths.forEach(function (item, template) {
    if (found === null && item.get(method) && matches(template, pathname)) found = { template: template, operation: item.get(method) }
  })
  return found
}

function takesKey(operation) {
  return (operation.get('parameters') || []).some(function (p) {
    return p.get('in') === 'header' && String(p.get('name')).toLowerCase() === KEY_HEADER
  })
}

function withIdempotencyKey(request) {
  var headers = request.headers || (request.headers = {})
  var names = Object.keys(headers)
  for (var i = 0; i < names.length; i++) if (names[i].toLowerCase() === KEY_HEADER && headers[names[i]]) return request
  var method = String(request.method || 'GET').toLowerCase()
  var url = new URL(request.url, window.location.href)
  if (url.origin !== window.location.origin) return request
  var found = operationFor(method, url.pathname)
  if (found === null || !takesKey(found.operation)) return request
  headers['Idempotency-Key'] = randomKey()
  return request
}

window.addEventListener('load', function () {
  var node = document.getElementById('swagger-ui')
  var expansion = new URLSearchParams(window.location.search).get('docExpansion')
  window.ui = SwaggerUIBundle({
    url: node.getAttribute('data-url'),
    domNode: node,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    deepLinking: true,
    docExpansion: ['none', 'list', 'full'].indexOf(expansion) >= 0 ? expansion : 'list',
    persistAuthorization: true,
    displayRequestDuration: true,
    filter: true,
    validatorUrl: null,
    requestInterceptor: withIdempotencyKey,
  })
})
})()
`

/**
 * What the page needs and nothing more: scripts and styles from here (Swagger UI sets style attributes
 * and injects a few <style> rules, hence 'unsafe-inline' for styles only), images from here or data:
 * URIs (its icons), requests ("Try it out") to this origin.
 */
export const SWAGGER_UI_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'self'",
].join('; ')

/** Asset URLs carry a version, so they can be cached for a year and still change on an upgrade. */
const IMMUTABLE = 'public, max-age=31536000, immutable'

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

export interface SwaggerUiOptions {
  /** Where the page is served, e.g. /swagger. */
  path: string
  /** The OpenAPI document's URL path, e.g. /swagger/json; must start with "/". */
  specUrl: string
  /** The page's <title>. */
  title: string
}

export function swaggerUi({ path, specUrl, title }: SwaggerUiOptions) {
  if (!specUrl.startsWith('/')) throw new Error(`swaggerUi: specUrl must be an absolute path, got ${specUrl}`)
  const assets = `${path}/assets`
  const initVersion = createHash('sha256').update(INIT_SCRIPT_SOURCE).digest('hex').slice(0, 12)
  const asset = (file: string) => `${assets}/${file}?v=${file === INIT_SCRIPT ? initVersion : SWAGGER_UI_VERSION}`

  const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" type="image/png" sizes="32x32" href="${asset('favicon-32x32.png')}">
<link rel="icon" type="image/png" sizes="16x16" href="${asset('favicon-16x16.png')}">
<link rel="stylesheet" href="${asset('swagger-ui.css')}">
</head>
<body>
<div id="swagger-ui" data-url="${escapeHtml(specUrl)}"></div>
<script src="${asset('swagger-ui-bundle.js')}"></script>
<script src="${asset(INIT_SCRIPT)}"></script>
</body>
</html>
`
  const common = { 'x-content-type-options': 'nosniff' }

  return (
    new Elysia({ name: 'plugins.swagger-ui', seed: path })
      // The loose path (strictPath off) makes GET {path}/ the same route.
      .get(
        path,
        () =>
          new Response(page, {
            headers: {
              ...common,
              'content-type': 'text/html; charset=utf-8',
              'cache-control': 'no-cache',
              'content-security-policy': SWAGGER_UI_CSP,
              'referrer-policy': 'no-referrer',
            },
          }),
        { detail: { hide: true } },
      )
      .get(
        `${assets}/:file`,
        ({ params: { file } }) => {
          if (file === INIT_SCRIPT) {
            return new Response(INIT_SCRIPT_SOURCE, {
              headers: { ...common, 'content-type': 'text/javascript; charset=utf-8', 'cache-control': IMMUTABLE },
            })
          }
          // Own-property lookup only: "constructor", "__proto__" and the like are not files.
          const type = Object.hasOwn(SWAGGER_UI_FILES, file) ? SWAGGER_UI_FILES[file] : undefined
          if (type === undefined) throw new ApiError('NOT_FOUND')
          return new Response(Bun.file(join(SWAGGER_UI_DIST_DIR, file)), {
            headers: { ...common, 'content-type': type, 'cache-control': IMMUTABLE },
          })
        },
        { detail: { hide: true } },
      )
  )
}
