// `npm run dashboard:build` (run by `bun install` as postinstall, and by scripts/bun after an install):
// the dashboard (dashboard/src, Preact) bundled by Bun's own bundler into dashboard/dist:
//
//   dist/index.html            the page shell; the API serves it under /app with the session's CSRF token
//   dist/assets/<name>-<hash>  scripts, styles and the icon (dashboard/src/icon.svg, which the shell names
//                              and the API also answers /favicon.ico with), named by content (served as
//                              immutable), each also gzip- and brotli-compressed beside it (.gz, .br) so the
//                              API compresses nothing
//   dist/manifest.json         every asset with its raw and compressed sizes (the size budget's test reads it)
//
// dist/ is not committed: it is built from the sources at install, so it cannot drift from them.
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import { createHash } from 'node:crypto'

const ROOT = resolve(import.meta.dir, '..')
export const DASHBOARD_DIR = join(ROOT, 'dashboard')
export const DIST_DIR = join(DASHBOARD_DIR, 'dist')

export interface AssetEntry {
  file: string
  kind: 'js' | 'css' | 'svg'
  bytes: number
  gzipBytes: number
  brotliBytes: number
}

export interface Manifest {
  /** The entry script, style and icon the page loads (chunks are loaded by the entry script). */
  entry: { script: string; style: string | null; icon: string }
  assets: AssetEntry[]
}

/**
 * Builds the dashboard into `outDir`, replacing what was there; returns the manifest. The build is made
 * beside it and moved into place, so a second build running at the same time cannot mix files with it.
 */
export async function buildDashboard(outDir = DIST_DIR): Promise<Manifest> {
  const staging = `${outDir}.building-${process.pid}-${Date.now()}`
  try {
    const manifest = await buildInto(staging)
    rmSync(outDir, { recursive: true, force: true })
    renameSync(staging, outDir)
    return manifest
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}

async function buildInto(outDir: string): Promise<Manifest> {
  const assetsDir = join(outDir, 'assets')
  mkdirSync(assetsDir, { recursive: true })
  const result = await Bun.build({
    entrypoints: [join(DASHBOARD_DIR, 'src/main.tsx')],
    outdir: assetsDir,
    target: 'browser',
    format: 'esm',
    splitting: true,
    minify: true,
    naming: { entry: '[name]-[hash].[ext]', chunk: 'chunk-[hash].[ext]', asset: '[name]-[hash].[ext]' },
    define: { 'process.env.NODE_ENV': '"production"' },
  })
  if (!result.success) throw new Error(`dashboard build failed:\n${result.logs.map(String).join('\n')}`)
  const assets: AssetEntry[] = []
  let script: string | null = null
  let style: string | null = null
  for (const output of result.outputs) {
    const file = basename(output.path)
    const kind = file.endsWith('.css') ? 'css' : file.endsWith('.js') ? 'js' : null
    if (kind === null) continue
    assets.push(compressBeside(output.path, kind))
    if (output.kind === 'entry-point' && kind === 'js') script = file
    if (kind === 'css' && file.startsWith('main-')) style = file
  }
  if (script === null) throw new Error('dashboard build: no entry script in the output')
  const icon = copyIcon(assetsDir)
  assets.push(icon)
  const manifest: Manifest = { entry: { script, style, icon: icon.file }, assets }
  writeFileSync(join(outDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  writeFileSync(join(outDir, 'index.html'), shell(manifest))
  return manifest
}

/** Writes the gzip and brotli forms of a built file beside it; returns its manifest entry. */
function compressBeside(path: string, kind: AssetEntry['kind']): AssetEntry {
  const bytes = readFileSync(path)
  const gzip = gzipSync(bytes, { level: 9 })
  const brotli = brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } })
  writeFileSync(`${path}.gz`, gzip)
  writeFileSync(`${path}.br`, brotli)
  return { file: basename(path), kind, bytes: bytes.length, gzipBytes: gzip.length, brotliBytes: brotli.length }
}

/** The icon, named by its content like the bundler's output (a changed icon is a new address). */
function copyIcon(assetsDir: string): AssetEntry {
  const svg = readFileSync(join(DASHBOARD_DIR, 'src/icon.svg'))
  const path = join(assetsDir, `icon-${createHash('sha256').update(svg).digest('hex').slice(0, 12)}.svg`)
  writeFileSync(path, svg)
  return compressBeside(path, 'svg')
}

/** The page: the stylesheet, the icon, the module script, a mount point; CSRF_META is replaced per response. */
export const CSRF_META = '<!--csrf-->'

function shell({ entry }: Manifest): string {
  const style = entry.style ? `<link rel="stylesheet" href="/app/assets/${entry.style}">` : ''
  const icon = `<link rel="icon" type="image/svg+xml" href="/app/assets/${entry.icon}">`
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex">${CSRF_META}<title>Link service</title>${icon}${style}<script type="module" src="/app/assets/${entry.script}"></script></head><body><div id="app"><p class="loading" role="status">Loading…</p></div><noscript>The dashboard needs JavaScript. Everything it does is also in the API: /swagger.</noscript></body></html>\n`
}

if (import.meta.main) {
  const started = performance.now()
  const manifest = await buildDashboard()
  const script = manifest.assets.filter((a) => a.kind === 'js').reduce((n, a) => n + a.gzipBytes, 0)
  console.log(`dashboard/dist: ${manifest.assets.length} assets, ${(script / 1024).toFixed(1)} KB of gzipped script, built in ${Math.round(performance.now() - started)} ms`)
}
