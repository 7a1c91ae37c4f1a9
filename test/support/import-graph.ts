// The import graph of the repository's own TypeScript, as text: which file imports which (relative
// specifiers resolved to repository paths) and which packages. test/boundary.test.ts states the rules.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

/** file → what it imports: repository paths for relative specifiers, the specifier as written otherwise. */
export type ImportGraph = Map<string, string[]>

export const ROOT = resolve(import.meta.dir, '../..')

/** TypeScript files under dir (tests too when `tests`), repository-relative; none when dir does not exist (yet). */
export function sourceFiles(dir: string, root = ROOT, tests = false): string[] {
  if (!existsSync(join(root, dir))) return []
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.tsx?$/.test(f) && !f.endsWith('.d.ts') && !f.split('/').includes('node_modules') && (tests || !/\.test\.tsx?$/.test(f)))
    .map((f) => join(dir, f))
}

/** The specifiers a file imports or re-exports, type-only imports included: they are dependencies too. */
export function importsOf(text: string): string[] {
  const found: string[] = []
  for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g)) {
    found.push((match[1] ?? match[2] ?? match[3])!)
  }
  return found
}

/** A relative specifier as the repository path it names (the .ts or .tsx file, or the folder's index). */
function resolveRelative(root: string, file: string, specifier: string): string {
  const target = resolve(root, dirname(file), specifier)
  const candidates = [target, `${target}.ts`, `${target}.tsx`, join(target, 'index.ts'), join(target, 'index.tsx')]
  return relative(root, candidates.find((c) => /\.tsx?$/.test(c) && existsSync(c)) ?? target)
}

export function importGraph(dirs: string[], root = ROOT, tests = false): ImportGraph {
  const graph: ImportGraph = new Map()
  for (const file of dirs.flatMap((dir) => sourceFiles(dir, root, tests))) {
    const specifiers = importsOf(readFileSync(join(root, file), 'utf8'))
    graph.set(
      file,
      specifiers.map((s) => (s.startsWith('.') ? resolveRelative(root, file, s) : s)),
    )
  }
  return graph
}

/** "from imports to" for every edge from a file under one of `from` to a path under `to`. */
export function forbiddenEdges(graph: ImportGraph, from: string[], to: string): string[] {
  const under = (path: string, dir: string) => path === dir || path.startsWith(`${dir}/`)
  const found: string[] = []
  for (const [file, targets] of graph) {
    if (!from.some((dir) => under(file, dir))) continue
    for (const target of targets) if (under(target, to)) found.push(`${file} imports ${target}`)
  }
  return found
}

/**
 * Groups of nodes that reach each other through imports (strongly connected components of two or more),
 * each sorted, after mapping every file to its node (`nodeOf`: e.g. its module folder; null leaves the
 * file out). Tarjan's algorithm; the graphs here are small.
 */
export function importCycles(graph: ImportGraph, nodeOf: (path: string) => string | null): string[][] {
  const edges = new Map<string, Set<string>>()
  for (const [file, targets] of graph) {
    const from = nodeOf(file)
    if (from === null) continue
    const set = edges.get(from) ?? new Set<string>()
    edges.set(from, set)
    for (const target of targets) {
      const to = nodeOf(target)
      if (to !== null && to !== from) set.add(to)
    }
  }
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const cycles: string[][] = []
  const visit = (node: string) => {
    index.set(node, index.size)
    low.set(node, index.get(node)!)
    stack.push(node)
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (stack.includes(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!))
    }
    if (low.get(node) !== index.get(node)) return
    const component: string[] = []
    let member: string
    do {
      member = stack.pop()!
      component.push(member)
    } while (member !== node)
    if (component.length > 1) cycles.push(component.sort())
  }
  for (const node of [...edges.keys()].sort()) if (!index.has(node)) visit(node)
  return cycles
}

/** The module folder of a path under src/modules (src/modules/links/cache.ts → links), else null. */
export function moduleOf(path: string): string | null {
  const match = /^src\/modules\/([^/]+)\//.exec(path)
  return match ? match[1]! : null
}
