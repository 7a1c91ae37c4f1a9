// Which test files CI's services pass runs (.ci/run, docs/testing.md "The CI run"). The embedded pass is
// `npm test`: every file. The services pass sets DATABASE_URL and REDIS_URL (and STACK_REDIS), so it runs
// only the files that can behave differently there: a file whose code, or code it imports from this
// repository, reads one of ENGINE_VARIABLES from the environment, hands the whole environment to a child
// process (`...process.env`, `env: process.env`), or hands it to a function that names one of them
// (`parseConfig(process.env)`). Imports are followed declaration by declaration, so a file that takes
// only `call` from test/support/api.ts stays out while one that takes `testApi` (whose engines read
// DATABASE_URL) is in. A file the rule cannot read (an import it cannot resolve, an import or require of
// a computed path) goes to both passes.
//
// Not followed: the programs a test starts as child processes. The harness starts the product's entry
// points with an environment of its own (test/support/processes.ts), which the rule sees as the code that
// builds it; a child started with no `env` option inherits everything, which the rule does not see.
//
//   bun scripts/test-files.ts              both lists, with the reason for each file
//   bun scripts/test-files.ts --services   the services pass's files, one a line (what .ci/run runs)
//   bun scripts/test-files.ts --all        every test file `bun test` finds, one a line
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

export const ROOT = resolve(import.meta.dir, '..')

/**
 * The variables that make the passes differ: the services pass sets DATABASE_URL, REDIS_URL and
 * STACK_REDIS; CLICKHOUSE_URL is unset in both, and listed so that a pass that set it would follow.
 */
export const ENGINE_VARIABLES = ['DATABASE_URL', 'REDIS_URL', 'CLICKHOUSE_URL', 'STACK_REDIS'] as const

/** The files `bun test` finds: *.test|spec / *_test|spec with a JS or TS extension, outside node_modules and dot-folders. */
export const TEST_FILE = /[._](test|spec)\.(ts|tsx|js|jsx|mjs|cjs|mts|cts)$/
const CODE_FILE = /\.(ts|tsx|js|jsx|mjs|cjs|mts|cts)$/

export function findTestFiles(root = ROOT, dir = ''): string[] {
  const found: string[] = []
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = dir ? `${dir}/${entry.name}` : entry.name
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && !entry.name.startsWith('.')) found.push(...findTestFiles(root, path))
    } else if (TEST_FILE.test(entry.name)) found.push(path)
  }
  return found.sort()
}

// ---------------------------------------------------------------------------------------------------
// One module, as Bun's transpiler prints it (types and comments gone, one top-level statement starting
// each unindented line), cut into its top-level statements.

interface Binding {
  /** The module it comes from: a repository path, or null for a package or built-in (not followed). */
  from: string | null
  /** The exported name, or '*' for the whole module (namespace, dynamic import). */
  name: string
}

interface Statement {
  /** The names it declares at the top level; none for code that runs when the module loads. */
  names: string[]
  text: string
  /** Identifiers it mentions (property names after a dot excepted). */
  mentions: Set<string>
  /** Modules it imports on the spot (import('./x'), require('./x')). */
  loads: string[]
}

export interface Module {
  path: string
  statements: Statement[]
  imports: Map<string, Binding>
  /** Modules whose loading runs this module's imports: every value import, side-effect imports too. */
  loads: string[]
  /** exported name → local name (`export { a as b }`), and names re-exported from another module. */
  exportAliases: Map<string, string>
  reexports: Array<{ name: string; from: string; imported: string }>
  /** Why the rule cannot read it, when it cannot. */
  unreadable: string[]
}

const transpilers = { ts: new Bun.Transpiler({ loader: 'ts' }), tsx: new Bun.Transpiler({ loader: 'tsx' }) }

const IDENTIFIER = /(?<![\w$])(?<!(?<!\.)\.)[A-Za-z_$][\w$]*/g

function resolveSpecifier(root: string, file: string, specifier: string): string | null | undefined {
  if (!specifier.startsWith('.') && !specifier.startsWith('/')) return null
  const target = specifier.startsWith('/') ? specifier : resolve(root, dirname(file), specifier)
  const candidates = [target, ...['.ts', '.tsx', '.js', '.mjs'].map((ext) => target + ext), join(target, 'index.ts'), join(target, 'index.tsx')]
  const hit = candidates.find((c) => existsSync(c) && statSync(c).isFile())
  return hit === undefined ? undefined : relative(root, hit)
}

export function parseModule(path: string, source: string, root = ROOT): Module {
  const transpiler = path.endsWith('x') ? transpilers.tsx : transpilers.ts
  const code = transpiler.transformSync(source)
  // What the code really imports (the transpiler's own scan), to tell an import from a string that looks like one.
  const scanned = transpiler.scan(source).imports
  const real = (kind: string, specifier: string) => scanned.some((i) => i.path === specifier && (kind === 'static' ? i.kind === 'import-statement' : i.kind !== 'import-statement'))
  const module: Module = { path, statements: [], imports: new Map(), loads: [], exportAliases: new Map(), reexports: [], unreadable: [] }
  const resolveOrNote = (specifier: string): string | null => {
    const hit = resolveSpecifier(root, path, specifier)
    if (hit === undefined) module.unreadable.push(`${path}: cannot resolve '${specifier}'`)
    return hit === undefined || (hit !== null && !CODE_FILE.test(hit)) ? null : hit
  }

  const chunks: string[] = []
  for (const line of code.split('\n')) {
    if (chunks.length === 0 || /^[^\s})\]]/.test(line)) chunks.push(line)
    else chunks[chunks.length - 1] += `\n${line}`
  }

  for (const text of chunks) {
    const importMatch = /^import\s+(?:([\w$]+)\s*,?\s*)?(?:\*\s+as\s+([\w$]+)|\{([^}]*)\})?\s*(?:from\s+)?["']([^"']+)["']/.exec(text)
    if (importMatch && real('static', importMatch[4]!)) {
      const [, defaultName, namespace, named, specifier] = importMatch
      const from = resolveOrNote(specifier!)
      if (from) module.loads.push(from)
      if (defaultName) module.imports.set(defaultName, { from, name: 'default' })
      if (namespace) module.imports.set(namespace, { from, name: '*' })
      for (const part of (named ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)) {
        const [imported, local] = part.split(/\s+as\s+/)
        module.imports.set((local ?? imported)!, { from, name: imported! })
      }
      continue
    }
    const reexport = /^export\s+(?:\*(?:\s+as\s+([\w$]+))?|\{([^}]*)\})\s*from\s+["']([^"']+)["']/.exec(text)
    if (reexport && real('static', reexport[3]!)) {
      const [, namespace, named, specifier] = reexport
      const from = resolveOrNote(specifier!)
      if (!from) continue
      module.loads.push(from)
      if (named === undefined) module.reexports.push({ name: namespace ?? '*', from, imported: '*' })
      for (const part of (named ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)) {
        const [imported, exported] = part.split(/\s+as\s+/)
        module.reexports.push({ name: (exported ?? imported)!, from, imported: imported! })
      }
      continue
    }
    const aliases = /^export\s*\{([^}]*)\}\s*;?\s*$/.exec(text)
    if (aliases) {
      for (const part of aliases[1]!
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)) {
        const [local, exported] = part.split(/\s+as\s+/)
        module.exportAliases.set((exported ?? local)!, local!)
      }
      continue
    }
    const loads: string[] = []
    for (const [, , specifier] of text.matchAll(/\b(import|require)\(\s*["'`]([^"'`$]+)["'`]\s*\)/g)) {
      if (!real('dynamic', specifier!)) continue
      const from = resolveOrNote(specifier!)
      if (from) loads.push(from)
    }
    if (/\b(import|require)\(\s*(?!["'`][^"'`$]+["'`]\s*\))/.test(text)) module.unreadable.push(`${path}: import or require of a computed path`)
    module.statements.push({ names: declaredNames(text), text, mentions: new Set(text.match(IDENTIFIER) ?? []), loads })
  }
  return module
}

/** The top-level names a statement declares ('default' for `export default`), none for other code. */
function declaredNames(text: string): string[] {
  const head = text.replace(/^export\s+/, '')
  if (text.startsWith('export default')) {
    const named = /^export default\s+(?:async\s+)?(?:function\*?|class)\s+([\w$]+)/.exec(text)
    return named ? ['default', named[1]!] : ['default']
  }
  const fn = /^(?:async\s+)?(?:function\*?|class)\s+([\w$]+)/.exec(head)
  if (fn) return [fn[1]!]
  const binding = /^(?:const|let|var)\s+([^=;]+)/.exec(head)
  return binding ? (binding[1]!.match(/[A-Za-z_$][\w$]*/g) ?? []) : []
}

// ---------------------------------------------------------------------------------------------------
// The rule, to a fixed point over every module the test files reach.

const ENGINE = ENGINE_VARIABLES.join('|')
const ENV = String.raw`(?:process\.env|Bun\.env|import\.meta\.env)`
const READS = new RegExp(String.raw`${ENV}(?:\??\.(${ENGINE})\b|\[\s*["'\x60](${ENGINE})["'\x60]\s*\]|\[(?!\s*["'\x60]\w+["'\x60]\s*\]))`)
const HANDS_ON = new RegExp(String.raw`\.\.\.${ENV}\b|\benv\s*:\s*${ENV}\b(?!\s*(?:\??\.|\[))`)
const PASSED_TO = new RegExp(String.raw`([\w$.]+)\(\s*${ENV}\s*[,)]`, 'g')
const WHOLE_ENV = new RegExp(String.raw`${ENV}(?!\s*(?:\??\.|\[))`)
const NAMES_ENGINE = new RegExp(String.raw`\b(${ENGINE})\b`)

/** Why a statement reaches the engines: a reason of its own, or another statement it uses. */
type Cause = { says: string } | { uses: string; module: string; statement: Statement }

export interface Classified {
  /** repository path → why it runs in the services pass too; files not here run embedded only. */
  services: Map<string, string>
  embeddedOnly: string[]
}

export function classify(testFiles: string[], load: (path: string) => Module, preloads: string[] = []): Classified {
  const modules = new Map<string, Module>()
  const queue = [...testFiles, ...preloads]
  while (queue.length > 0) {
    const path = queue.pop()!
    if (modules.has(path)) continue
    const module = load(path)
    modules.set(path, module)
    const next = [...module.loads, ...module.statements.flatMap((s) => s.loads), ...[...module.imports.values()].flatMap((b) => (b.from ? [b.from] : []))]
    queue.push(...next.filter((p) => !modules.has(p)))
  }

  const reaches = new Map<Statement, Cause>()
  const namesEngine = new Set<Statement>()
  const ownerOf = new Map<Statement, Module>()
  for (const module of modules.values()) for (const s of module.statements) ownerOf.set(s, module)

  /** The statements behind a name of a module: its own, an alias, a re-export, or every one for '*'. */
  const statementsOf = (modulePath: string, name: string, seen = new Set<string>()): Statement[] => {
    const module = modules.get(modulePath)
    if (!module || seen.has(`${modulePath}#${name}`)) return []
    seen.add(`${modulePath}#${name}`)
    if (name === '*') return [...module.statements.filter((s) => s.names.length > 0), ...module.reexports.flatMap((r) => statementsOf(r.from, r.imported, seen))]
    const local = module.exportAliases.get(name) ?? name
    const own = module.statements.filter((s) => s.names.includes(local))
    if (own.length > 0) return own
    const imported = module.imports.get(local)
    if (imported?.from) return statementsOf(imported.from, imported.name, seen)
    return module.reexports.filter((r) => r.name === name || r.name === '*').flatMap((r) => statementsOf(r.from, r.name === '*' ? name : r.imported, seen))
  }
  /** What a mention in `module` refers to: statements of the module or of the one it imports the name from. */
  const referentsMemo = new Map<Module, Map<string, Statement[]>>()
  const referents = (module: Module, name: string): Statement[] => {
    const memo = referentsMemo.get(module) ?? new Map<string, Statement[]>()
    referentsMemo.set(module, memo)
    let found = memo.get(name)
    if (!found) {
      const own = module.statements.filter((s) => s.names.includes(name))
      const imported = module.imports.get(name)
      found = own.length > 0 ? own : imported?.from ? statementsOf(imported.from, imported.name) : []
      memo.set(name, found)
    }
    return found
  }
  const moduleLevel = (module: Module): Statement[] => module.statements.filter((s) => s.names.length === 0)

  for (let changed = true; changed; ) {
    changed = false
    for (const module of modules.values()) {
      for (const statement of module.statements) {
        if (!namesEngine.has(statement) && (NAMES_ENGINE.test(statement.text) || [...statement.mentions].some((m) => referents(module, m).some((r) => namesEngine.has(r))))) {
          namesEngine.add(statement)
          changed = true
        }
        const cause = reaches.has(statement) ? null : causeOf(module, statement)
        if (cause) {
          reaches.set(statement, cause)
          changed = true
        }
      }
    }
  }

  function causeOf(module: Module, statement: Statement): Cause | null {
    const read = READS.exec(statement.text)
    if (read) return { says: `reads ${read[0]}` }
    const handed = HANDS_ON.exec(statement.text)
    if (handed) return { says: `hands its whole environment on (${handed[0].trim()})` }
    if (WHOLE_ENV.test(statement.text)) {
      for (const [, callee] of statement.text.matchAll(PASSED_TO)) {
        const targets = callee!.includes('.') ? [] : referents(module, callee!)
        if (targets.length === 0) return { says: `passes the environment to ${callee}, which the rule cannot follow` }
        if (targets.some((t) => namesEngine.has(t))) return { says: `passes the environment to ${callee}, which names an engine variable` }
      }
      const rest = statement.text.replace(PASSED_TO, '')
      if (WHOLE_ENV.test(rest) && namesEngine.has(statement)) return { says: 'takes the whole environment beside code that names an engine variable' }
    }
    for (const name of statement.mentions) {
      const hit = referents(module, name).find((r) => reaches.has(r))
      if (hit) return { uses: name, module: ownerOf.get(hit)!.path, statement: hit }
    }
    for (const path of statement.loads) {
      const hit = [...statementsOf(path, '*'), ...moduleLevel(modules.get(path)!)].find((r) => reaches.has(r))
      if (hit) return { uses: `import('${path}')`, module: ownerOf.get(hit)!.path, statement: hit }
    }
    return null
  }

  /** A module whose loading alone reaches the engines: its own top-level code, or a module it loads. */
  const loadReaches = (path: string, seen = new Set<string>()): string | null => {
    if (seen.has(path)) return null
    seen.add(path)
    const module = modules.get(path)!
    const own = moduleLevel(module).find((s) => reaches.has(s))
    if (own) return `${path}: ${explain(own)}`
    for (const next of module.loads) {
      const why = loadReaches(next, seen)
      if (why) return why
    }
    return null
  }
  const unreadable = (path: string, seen = new Set<string>()): string | null => {
    if (seen.has(path)) return null
    seen.add(path)
    const module = modules.get(path)!
    if (module.unreadable.length > 0) return module.unreadable[0]!
    for (const next of [...module.loads, ...module.statements.flatMap((s) => s.loads)]) {
      const why = unreadable(next, seen)
      if (why) return why
    }
    return null
  }
  function explain(statement: Statement): string {
    const steps: string[] = []
    for (let s: Statement | undefined = statement, guard = 0; s && guard < 12; guard++) {
      const cause: Cause = reaches.get(s)!
      if ('says' in cause) {
        steps.push(cause.says)
        break
      }
      steps.push(`${cause.uses} (${cause.module})`)
      s = cause.statement
    }
    return steps.join(' → ')
  }

  const services = new Map<string, string>()
  const embeddedOnly: string[] = []
  for (const file of testFiles) {
    const module = modules.get(file)!
    const cannot = [file, ...preloads].map((p) => unreadable(p)).find(Boolean)
    const direct = module.statements.find((s) => reaches.has(s))
    const loaded = [file, ...preloads].map((p) => loadReaches(p)).find(Boolean)
    if (direct) services.set(file, explain(direct))
    else if (loaded) services.set(file, `loads ${loaded}`)
    else if (cannot) services.set(file, `cannot classify (${cannot}): both passes`)
    else embeddedOnly.push(file)
  }
  return { services, embeddedOnly }
}

/** The `preload` list of bunfig.toml's [test] table: code every test file runs first. */
export function bunPreloads(root = ROOT): string[] {
  const path = join(root, 'bunfig.toml')
  if (!existsSync(path)) return []
  const test = /^\[test\]([\s\S]*?)(?=^\[|(?![\s\S]))/m.exec(readFileSync(path, 'utf8'))?.[1] ?? ''
  const list = /^\s*preload\s*=\s*\[([^\]]*)\]/m.exec(test)?.[1] ?? ''
  return [...list.matchAll(/["']([^"']+)["']/g)].map(([, p]) => relative(root, resolve(root, p!)))
}

export function classifyRepository(root = ROOT): Classified {
  const load = (path: string) => parseModule(path, readFileSync(join(root, path), 'utf8'), root)
  return classify(findTestFiles(root), load, bunPreloads(root))
}

if (import.meta.main) {
  const { services, embeddedOnly } = classifyRepository()
  if (process.argv.includes('--services')) {
    for (const file of services.keys()) console.log(`./${file}`)
  } else if (process.argv.includes('--all')) {
    for (const file of [...services.keys(), ...embeddedOnly].sort()) console.log(`./${file}`)
  } else {
    console.log(`services pass (and embedded): ${services.size} files`)
    for (const [file, why] of services) console.log(`  ${file}\n      ${why}`)
    console.log(`\nembedded pass only: ${embeddedOnly.length} files (no engine variable read, directly or through what they import)`)
    for (const file of embeddedOnly) console.log(`  ${file}`)
  }
}
