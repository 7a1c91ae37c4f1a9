// Import rules of the codebase, checked on the real tree (test/support/import-graph.ts reads it).
//
// The hot path stays small: src/core imports only src/core, redirect/ only itself and src/core, and
// both only ioredis and @clickhouse/client besides Bun and Node built-ins. Elysia, drizzle, Postgres
// drivers and the embedded engines must never reach the redirector. The one exception is the click
// enrichment's data: a user-agent parser, a bot pattern list and an IP-to-country table, pure and without
// I/O of their own, used only when a batch of clicks is encoded (off the response path, on the click
// worker in the stand-alone redirector).
//
// Layers of the API: src/plugins and src/lib sit under the feature modules, so they never import
// src/modules; modules do not import each other in a circle.
import { describe, expect, test } from 'bun:test'
import { forbiddenEdges, importCycles, importGraph, moduleOf, type ImportGraph } from './support/import-graph'

const allowedPackages = new Set(['ioredis', '@clickhouse/client'])
const enrichmentPackages = new Set(['ua-parser-js', 'isbot', '@ip-location-db/geo-whois-asn-country'])
const ENRICHMENT_FILES = ['src/core/enrich.ts', 'src/core/enrich-geo.ts']

/** Why `file` may not import `target` (a repository path or a package), or null when it may. */
export function hotPathViolation(file: string, target: string): string | null {
  if (target.startsWith('node:') || target === 'bun' || target.startsWith('bun:')) return null
  // importGraph resolved relative imports to repository paths of .ts files; a package name never ends so.
  if (target.endsWith('.ts')) {
    const allowed = target.startsWith('src/core/') || (file.startsWith('redirect/') && target.startsWith('redirect/'))
    return allowed ? null : `${file} imports ${target}`
  }
  if (enrichmentPackages.has(target) && ENRICHMENT_FILES.includes(file)) return null
  return allowedPackages.has(target) ? null : `${file} imports package ${target}`
}

function hotPathProblems(graph: ImportGraph): string[] {
  return [...graph].flatMap(([file, targets]) => targets.map((t) => hotPathViolation(file, t)).filter((p): p is string => p !== null))
}

describe('import boundary of the hot path', () => {
  const graph = importGraph(['redirect', 'src/core'])

  test('the checker sees real imports (it would catch a forbidden one)', () => {
    expect(graph.get('redirect/click-worker.ts')).toContain('@clickhouse/client')
    expect(graph.get('redirect/server.ts')).toContain('src/core/link-cache.ts')
    expect(hotPathViolation('redirect/main.ts', 'elysia')).not.toBeNull()
    expect(hotPathViolation('redirect/main.ts', 'src/db/client.ts')).not.toBeNull()
    expect(hotPathViolation('src/core/config.ts', 'redirect/handler.ts')).not.toBeNull()
    expect(hotPathViolation('redirect/main.ts', 'src/core/config.ts')).toBeNull()
  })

  test('redirect/ imports only itself, src/core, ioredis and @clickhouse/client; src/core only itself', () => {
    expect(hotPathProblems(graph)).toEqual([])
  })

  test('no import cycles among the files of redirect/ or of src/core', () => {
    expect(importCycles(graph, (path) => (path.startsWith('redirect/') || path.startsWith('src/core/') ? path : null))).toEqual([])
  })
})

describe('layers of the API', () => {
  test('src/plugins and src/lib do not import src/modules', () => {
    const graph = importGraph(['src/plugins', 'src/lib'])
    expect(forbiddenEdges(graph, ['src/plugins', 'src/lib'], 'src/modules')).toEqual([])
  })

  test('no two feature modules import each other, directly or around a circle', () => {
    expect(importCycles(importGraph(['src/modules']), moduleOf)).toEqual([])
  })
})
