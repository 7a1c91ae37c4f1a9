import { describe, expect, test } from 'bun:test'
import { forbiddenEdges, importCycles, importsOf, moduleOf, type ImportGraph } from './import-graph'

const graph = (edges: Record<string, string[]>): ImportGraph => new Map(Object.entries(edges))

describe('the import-graph checks, on a tiny fake tree', () => {
  const tree = graph({
    'src/plugins/auth.ts': ['src/modules/account/keys.ts', 'src/lib/ids.ts', 'elysia'],
    'src/lib/ids.ts': ['node:crypto'],
    'src/lib/secrets.ts': ['src/modules/account/keys.ts'],
    'src/modules/account/keys.ts': ['src/modules/links/cache.ts', 'src/lib/ids.ts'],
    'src/modules/links/cache.ts': ['src/modules/account/plans.ts'],
    'src/modules/account/plans.ts': [],
    'src/modules/tags/index.ts': ['src/modules/links/cache.ts'],
    'src/modules/stats/index.ts': ['src/modules/conversions/service.ts'],
    'src/modules/conversions/service.ts': ['src/modules/domains/index.ts'],
    'src/modules/domains/index.ts': ['src/modules/stats/index.ts'],
  })

  test('forbiddenEdges names every import from the lower layers into src/modules', () => {
    expect(forbiddenEdges(tree, ['src/plugins', 'src/lib'], 'src/modules')).toEqual([
      'src/plugins/auth.ts imports src/modules/account/keys.ts',
      'src/lib/secrets.ts imports src/modules/account/keys.ts',
    ])
    expect(forbiddenEdges(tree, ['src/lib'], 'src/plugins')).toEqual([])
  })

  test('importCycles finds modules that import each other, directly or round a longer circle', () => {
    // account → links → account (through plans); stats → conversions → domains → stats; tags only imports.
    expect(importCycles(tree, moduleOf)).toEqual([
      ['account', 'links'],
      ['conversions', 'domains', 'stats'],
    ])
    expect(importCycles(graph({ 'src/modules/a/x.ts': ['src/modules/b/y.ts'], 'src/modules/b/y.ts': [] }), moduleOf)).toEqual([])
  })

  test('files within one module may import each other; moduleOf ignores everything outside src/modules', () => {
    expect(importCycles(graph({ 'src/modules/a/x.ts': ['src/modules/a/y.ts'], 'src/modules/a/y.ts': ['src/modules/a/x.ts'] }), moduleOf)).toEqual([])
    expect(moduleOf('src/plugins/auth.ts')).toBeNull()
    expect(moduleOf('src/modules/links/cache.ts')).toBe('links')
  })

  test('importsOf reads import, type-only import, re-export, side-effect and dynamic import', () => {
    const text = `import { a } from './a'\nimport type { B } from '../b'\nexport { c } from "./c"\nimport './d'\nconst e = await import('./e')\n`
    expect(importsOf(text)).toEqual(['./a', '../b', './c', './d', './e'])
  })
})
