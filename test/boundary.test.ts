// The hot path stays small: redirect/ and src/core may import only src/core, ioredis and
// @clickhouse/client (plus Bun and Node built-ins). Elysia, drizzle, Postgres drivers and the embedded
// engines must never reach the redirector. The one exception is the click enrichment's data: a
// user-agent parser, a bot pattern list and an IP-to-country table, pure and without I/O of their own, used only when a
// batch of clicks is encoded (off the response path, on the click worker in the stand-alone redirector).
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const root = resolve(import.meta.dir, '..')
const allowedPackages = new Set(['ioredis', '@clickhouse/client'])
const enrichmentPackages = new Set(['ua-parser-js', 'isbot', '@ip-location-db/geo-whois-asn-country'])
const ENRICHMENT_FILES = ['src/core/enrich.ts', 'src/core/enrich-geo.ts']

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .map((f) => join(root, dir, f))
}

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  const found: string[] = []
  for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g)) {
    found.push((match[1] ?? match[2] ?? match[3])!)
  }
  return found
}

function violation(file: string, specifier: string): string | null {
  if (specifier.startsWith('node:') || specifier === 'bun' || specifier.startsWith('bun:')) return null
  if (specifier.startsWith('.')) {
    const target = relative(root, resolve(dirname(file), specifier))
    return target.startsWith('src/core') || target.startsWith('redirect') ? null : `${relative(root, file)} imports ${target}`
  }
  if (enrichmentPackages.has(specifier) && ENRICHMENT_FILES.includes(relative(root, file))) return null
  return allowedPackages.has(specifier) ? null : `${relative(root, file)} imports package ${specifier}`
}

describe('import boundary of the hot path', () => {
  test('the checker sees real imports (it would catch a forbidden one)', () => {
    expect(imports(join(root, 'redirect/click-worker.ts'))).toContain('@clickhouse/client')
    expect(violation(join(root, 'redirect/main.ts'), 'elysia')).not.toBeNull()
    expect(violation(join(root, 'redirect/main.ts'), '../src/db/client')).not.toBeNull()
  })

  for (const dir of ['redirect', 'src/core']) {
    test(`${dir}/ imports only src/core, ioredis and @clickhouse/client`, () => {
      const problems = sourceFiles(dir).flatMap((file) => imports(file).map((s) => violation(file, s)).filter(Boolean))
      expect(problems).toEqual([])
    })
  }
})
