// The dashboard (dashboard/, built into dashboard/dist by scripts/build-dashboard.ts) under /app:
//   GET /app/assets/<file>   a built script, style or the icon: named by content, so cached for a year as
//                            immutable, sent brotli- or gzip-compressed as the browser accepts (compressed
//                            at build)
//   GET /app, /app/<path>    signed out: 303 to /signin?next=<this page>; signed in: the page shell with the
//                            session's CSRF token in a meta tag (and an operator mark for operators, so
//                            the page shows the moderation section without asking the admin API, which
//                            answers 404 to everyone else); the page then calls the public API with the
//                            session cookie (and that token on writes), like any other client
//   GET /favicon.ico         the same icon, for the pages that name none (sign-in, consent, approvals): a
//                            browser asks every origin for it, and a 404 there is an error in its console
// No API key ever reaches the browser (docs/decisions/0017-dashboard-as-api-client.md). The page loads nothing from another origin, and its
// Content-Security-Policy says so.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Elysia } from 'elysia'
import { escapeHtml, htmlPage, redirect } from '../../lib/html'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import { isOperator } from '../keys/admin-scope'
import { signInUrl } from '../signin/next'
import { readSession } from '../signin/service'

export const DASHBOARD_PATH = '/app'
const DIST_DIR = join(import.meta.dir, '../../../dashboard/dist')
/** The placeholder of the built shell (scripts/build-dashboard.ts CSRF_META). */
const CSRF_META = '<!--csrf-->'

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
}

const TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', svg: 'image/svg+xml' }
const IMMUTABLE = 'public, max-age=31536000, immutable'
/** /favicon.ico keeps its address when the icon changes: a day, so a new one shows within a day. */
const FAVICON_CACHE = 'public, max-age=86400'

interface Asset {
  type: string
  raw: Uint8Array
  gzip: Uint8Array | null
  brotli: Uint8Array | null
}

interface Built {
  shell: string
  assets: Map<string, Asset>
  icon: Asset | undefined
}

const optional = (path: string) => (existsSync(path) ? readFileSync(path) : null)

/** The built dashboard, read once; null when it was never built (the page says how to build it). */
function loadBuilt(dir: string): Built | null {
  const manifestFile = join(dir, 'manifest.json')
  if (!existsSync(manifestFile)) return null
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as { entry: { icon?: string }; assets: Array<{ file: string; kind: string }> }
  const assets = new Map<string, Asset>()
  for (const { file, kind } of manifest.assets) {
    const path = join(dir, 'assets', file)
    assets.set(file, { type: TYPES[kind] ?? 'application/octet-stream', raw: readFileSync(path), gzip: optional(`${path}.gz`), brotli: optional(`${path}.br`) })
  }
  return { shell: readFileSync(join(dir, 'index.html'), 'utf8'), assets, icon: manifest.entry.icon ? assets.get(manifest.entry.icon) : undefined }
}

/** Whether an Accept-Encoding header accepts `coding` (named, and not with q=0). */
export function acceptsEncoding(header: string, coding: string): boolean {
  for (const part of header.split(',')) {
    const [name, ...params] = part.split(';')
    if (name?.trim().toLowerCase() !== coding) continue
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
    return q === undefined || Number(q.slice(2)) > 0
  }
  return false
}

/** The asset in the best encoding the request accepts (`br` before `gzip`). */
function assetResponse(asset: Asset, acceptEncoding: string, cacheControl = IMMUTABLE): Response {
  const accepts = (coding: string) => acceptsEncoding(acceptEncoding, coding)
  const [body, encoding] = asset.brotli && accepts('br') ? [asset.brotli, 'br'] : asset.gzip && accepts('gzip') ? [asset.gzip, 'gzip'] : [asset.raw, null]
  const headers: Record<string, string> = {
    'content-type': asset.type,
    'cache-control': cacheControl,
    'x-content-type-options': 'nosniff',
    vary: 'Accept-Encoding',
  }
  if (encoding) headers['content-encoding'] = encoding
  return new Response(body, { headers })
}

const notBuilt = () =>
  htmlPage(
    'Dashboard not built',
    '<h1>Dashboard not built</h1><p>This installation has no built dashboard. Run <code>npm run dashboard:build</code> (installing the dependencies does it too) and restart the service.</p>',
    {
      status: 503,
    },
  )

export function dashboardModule(services: Services, options: { distDir?: string } = {}) {
  const built = loadBuilt(options.distDir ?? DIST_DIR)
  const page = async (request: Request): Promise<Response> => {
    const url = new URL(request.url)
    const session = await readSession(services, request)
    if (!session) return redirect(signInUrl(url.pathname + url.search))
    if (!built) return notBuilt()
    const operator = isOperator(services.config, session.account.email) ? '<meta name="operator" content="1">' : ''
    const html = built.shell.replace(CSRF_META, `<meta name="csrf-token" content="${escapeHtml(session.csrfToken)}">${operator}`)
    return new Response(html, { headers: PAGE_HEADERS })
  }
  return new Elysia({ name: 'modules.dashboard' })
    .get(DASHBOARD_PATH, ({ request }) => page(request), { detail: { hide: true } })
    .get(
      `${DASHBOARD_PATH}/*`,
      ({ request, params }) => {
        const path = params['*']
        if (!path.startsWith('assets/')) return page(request)
        const asset = built?.assets.get(path.slice('assets/'.length))
        if (!asset) return new Response('Not found', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' } })
        return assetResponse(asset, request.headers.get('accept-encoding') ?? '')
      },
      { detail: { hide: true } },
    )
    .get(
      '/favicon.ico',
      ({ request }) => {
        if (!built?.icon) throw new ApiError('NOT_FOUND')
        return assetResponse(built.icon, request.headers.get('accept-encoding') ?? '', FAVICON_CACHE)
      },
      { detail: { hide: true } },
    )
}
