// The code map of docs/architecture.md ("The map of the code"), as data, checked on the real tree
// (test/support/import-graph.ts reads it, type-only imports included: a type is a dependency too). Each
// layer names what it may import besides itself; an import of anything else fails, and so does any
// circle between two files anywhere in the repository, tests included.
//
// The hot path stays small: core/ imports only core/, redirect/ only itself and core/, and both only
// ioredis and @clickhouse/client besides Bun and Node built-ins. Elysia, drizzle, Postgres drivers and
// the embedded engines must never reach the redirector. Two exceptions: the click enrichment's data (a
// user-agent parser, a bot pattern list and an IP-to-country table, pure and without I/O of their own,
// used only when a batch of clicks is encoded, off the response path, on the click worker), and TypeBox
// in the configuration files (core/config*.ts), the schema every variable is declared in, read at boot.
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { importCycles, importGraph, moduleOf, ROOT, type ImportGraph } from './support/import-graph'

interface Layer {
  name: string
  /** Folders (ending in /) and files of the layer; a file belongs to the first layer that names it. */
  paths: readonly (string | RegExp)[]
  /** The layers below it that it may import (it may always import itself). */
  mayImport: readonly string[]
}

const BELOW_PLUGINS = ['core', 'access', 'lib', 'stores', 'services'] as const

/** The map of docs/architecture.md, bottom up. */
export const LAYERS: readonly Layer[] = [
  { name: 'core', paths: ['core/'], mayImport: [] },
  // The scopes and operations, a table without imports: the API's vocabulary, which the dashboard shows too.
  { name: 'access', paths: ['src/lib/agent-access.ts'], mayImport: [] },
  { name: 'lib', paths: ['src/lib/'], mayImport: ['core', 'access'] },
  { name: 'stores', paths: ['src/db/', 'src/adapters/'], mayImport: ['core', 'access', 'lib'] },
  { name: 'services', paths: ['src/mail/', 'src/dns/', 'src/analytics/', 'src/services.ts', 'src/embedded-lock.ts'], mayImport: ['core', 'access', 'lib', 'stores'] },
  { name: 'plugins', paths: ['src/plugins/'], mayImport: [...BELOW_PLUGINS] },
  // A module's schemas (model.ts) are what src/mcp may read of it; no logic of a module.
  { name: 'models', paths: [/^src\/modules\/[^/]+\/model\.ts$/], mayImport: [...BELOW_PLUGINS, 'plugins'] },
  { name: 'modules', paths: ['src/modules/'], mayImport: [...BELOW_PLUGINS, 'plugins', 'models'] },
  { name: 'mcp', paths: ['src/mcp/'], mayImport: [...BELOW_PLUGINS, 'plugins', 'models'] },
  { name: 'redirector', paths: ['redirect/'], mayImport: ['core'] },
  { name: 'api', paths: ['src/app.ts', 'src/boot.ts', 'src/api.ts'], mayImport: [...BELOW_PLUGINS, 'plugins', 'models', 'modules', 'mcp'] },
  // The whole product in one process (npm start): the API and the redirector side by side.
  { name: 'one-process', paths: ['one-process/'], mayImport: [...BELOW_PLUGINS, 'plugins', 'models', 'modules', 'mcp', 'api', 'redirector'] },
  { name: 'scripts', paths: ['scripts/'], mayImport: [...BELOW_PLUGINS, 'plugins', 'models', 'modules', 'mcp', 'api', 'redirector', 'one-process'] },
  // The dashboard is a client of the public API through the generated typed client only.
  { name: 'client', paths: ['client/'], mayImport: [] },
  { name: 'dashboard', paths: ['dashboard/src/'], mayImport: ['client', 'access'] },
]

/** The folders of the checked tree; tests, bench/ and test/support may import anything. */
const CHECKED = ['core', 'src', 'redirect', 'one-process', 'scripts', 'client', 'dashboard/src']
/** Every folder of TypeScript in the repository, for the circle check. */
const EVERYWHERE = [...CHECKED, 'bench', 'test', 'deploy', 'tools']

export function layerOf(path: string, layers: readonly Layer[] = LAYERS): Layer | undefined {
  return layers.find((layer) => layer.paths.some((p) => (typeof p === 'string' ? (p.endsWith('/') ? path.startsWith(p) : path === p) : p.test(path))))
}

/** "file imports target (layer → layer)" for every import the map does not allow. */
export function upwardImports(graph: ImportGraph, layers: readonly Layer[] = LAYERS): string[] {
  const found: string[] = []
  for (const [file, targets] of graph) {
    const from = layerOf(file, layers)
    for (const target of targets.filter((t) => /\.tsx?$/.test(t))) {
      const to = layerOf(target, layers)
      if (from && to && (to === from || from.mayImport.includes(to.name))) continue
      found.push(`${file} imports ${target} (${from?.name ?? 'no layer'} → ${to?.name ?? 'no layer'})`)
    }
  }
  return found
}

const allowedPackages = new Set(['ioredis', '@clickhouse/client'])
const enrichmentPackages = new Set(['ua-parser-js', 'isbot', '@ip-location-db/geo-whois-asn-country'])
const ENRICHMENT_FILES = ['core/enrich.ts', 'core/enrich-geo.ts']
// The configuration's schema language (the API's models use it too): declarations and checks, no I/O.
const configPackages = new Set(['@sinclair/typebox', '@sinclair/typebox/value'])
const CONFIG_FILES = ['core/config.ts', 'core/config-kinds.ts', 'core/config-schema.ts']

/** Why a hot-path file may not import a package, or null when it may. */
export function hotPathPackageViolation(file: string, target: string): string | null {
  if (target.endsWith('.ts') || target.startsWith('node:') || target === 'bun' || target.startsWith('bun:')) return null
  if (enrichmentPackages.has(target) && ENRICHMENT_FILES.includes(file)) return null
  if (configPackages.has(target) && CONFIG_FILES.includes(file)) return null
  return allowedPackages.has(target) ? null : `${file} imports package ${target}`
}

const graph = importGraph(CHECKED)

describe('the map of the code', () => {
  test('every checked file is in a layer of the map', () => {
    expect([...graph.keys()].filter((file) => !layerOf(file))).toEqual([])
  })

  test('no layer imports one the map does not allow (type-only imports included)', () => {
    expect(upwardImports(graph)).toEqual([])
  })

  test('no two files of the repository import each other, directly or around a circle (tests included)', () => {
    const everything = importGraph(EVERYWHERE, ROOT, true)
    expect(everything.size).toBeGreaterThan(graph.size)
    expect(importCycles(everything, (path) => (EVERYWHERE.some((dir) => path.startsWith(`${dir}/`)) ? path : null))).toEqual([])
  })

  test('no two feature modules import each other, directly or around a circle', () => {
    expect(importCycles(graph, moduleOf)).toEqual([])
  })

  test("docs/architecture.md's map names the same layers and folders as this table", () => {
    const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8')
    const map = doc.slice(doc.indexOf('| layer | what lives there | may import |'))
    const rows = map.slice(0, map.indexOf('\n\n')).split('\n').slice(2)
    const inDoc = rows.map((row) => row.split('|')[1]!.trim()).map((cell) => ({ name: cell.slice(0, cell.indexOf(':')), paths: [...cell.matchAll(/`([^`]+)`/g)].map(([, path]) => path!) }))
    const inTable = LAYERS.map((layer) => ({ name: layer.name, paths: layer.paths.map((p) => (typeof p === 'string' ? p : 'src/modules/<feature>/model.ts')) }))
    const sorted = (layers: { name: string; paths: string[] }[]) => layers.map((l) => `${l.name}: ${l.paths.join(' ')}`).sort()
    expect(sorted(inDoc)).toEqual(sorted(inTable))
  })

  test('the checker catches what the issue listed: upward imports and a type-only circle', () => {
    const bad: ImportGraph = new Map([
      ['src/services.ts', ['src/modules/audit/recorder.ts']],
      ['src/mail/mailer.ts', ['src/plugins/errors.ts']],
      ['src/mcp/index.ts', ['src/modules/oauth/discovery.ts', 'src/modules/links/model.ts']],
      ['scripts/generate-client.ts', ['test/support/api.ts']],
      ['src/plugins/auth.ts', ['src/plugins/on-behalf.ts']],
      ['src/plugins/on-behalf.ts', ['src/plugins/auth.ts']],
    ])
    expect(upwardImports(bad)).toEqual([
      'src/services.ts imports src/modules/audit/recorder.ts (services → modules)',
      'src/mail/mailer.ts imports src/plugins/errors.ts (services → plugins)',
      'src/mcp/index.ts imports src/modules/oauth/discovery.ts (mcp → modules)',
      'scripts/generate-client.ts imports test/support/api.ts (scripts → no layer)',
    ])
    expect(importCycles(bad, (path) => path)).toEqual([['src/plugins/auth.ts', 'src/plugins/on-behalf.ts']])
  })
})

describe('import boundary of the hot path', () => {
  const hot = importGraph(['redirect', 'core'])

  test('the checker sees real imports', () => {
    expect(hot.get('redirect/click-worker.ts')).toContain('@clickhouse/client')
    expect(hot.get('redirect/server.ts')).toContain('core/link-cache.ts')
    expect(hotPathPackageViolation('redirect/main.ts', 'elysia')).not.toBeNull()
    expect(hotPathPackageViolation('redirect/main.ts', '@clickhouse/client')).toBeNull()
    expect(hotPathPackageViolation('core/config-schema.ts', '@sinclair/typebox')).toBeNull()
    expect(hotPathPackageViolation('redirect/server.ts', '@sinclair/typebox')).not.toBeNull()
  })

  test("redirect/ and core import only ioredis and @clickhouse/client (and the enrichment data, and the config schema's TypeBox)", () => {
    expect([...hot].flatMap(([file, targets]) => targets.map((t) => hotPathPackageViolation(file, t)).filter((p) => p !== null))).toEqual([])
  })
})
