// The rule that picks CI's services pass (scripts/test-files.ts): on tiny trees written to a temporary
// directory, one case each, and on a few files of the real tree whose place is known.
import { describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { bunPreloads, classifyRepository, findTestFiles } from './test-files'

/** A repository of the given files (path → source) in a new temporary directory. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'test-files-'))
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), source)
  }
  return root
}

const HARNESS = `
export function call(app: { handle(r: Request): unknown }) { return app.handle(new Request('http://x')) }
function engines() { return { url: process.env.DATABASE_URL } }
export async function testApi() { return engines() }
`

/** Where each test file of the tree goes: 'services' with the reason, or 'embedded'. */
function placed(files: Record<string, string>): Record<string, string> {
  const { services, embeddedOnly } = classifyRepository(tree(files))
  return Object.fromEntries([...[...services].map(([file, why]) => [file, `services: ${why}`]), ...embeddedOnly.map((file) => [file, 'embedded'])])
}

describe('which files reach the engines', () => {
  test('a file that takes only a helper of the harness stays embedded; one that takes the engines goes to services', () => {
    const where = placed({
      'support/api.ts': HARNESS,
      'a.test.ts': `import { call } from './support/api'\ncall({ handle: () => 1 })\n`,
      'b.test.ts': `import { testApi } from './support/api'\nawait testApi()\n`,
    })
    expect(where['a.test.ts']).toBe('embedded')
    expect(where['b.test.ts']).toBe('services: testApi (support/api.ts) → engines (support/api.ts) → reads process.env.DATABASE_URL')
  })

  test('through several modules, an alias, a re-export and a namespace import', () => {
    const where = placed({
      'support/api.ts': HARNESS,
      'support/suite.ts': `import { testApi as api } from './api'\nexport const setUp = () => api()\nexport const label = 'x'\n`,
      'support/index.ts': `export { setUp, label } from './suite'\n`,
      'via-suite.test.ts': `import { setUp } from './support/index'\nsetUp()\n`,
      'label-only.test.ts': `import { label } from './support/index'\nconsole.log(label)\n`,
      'namespace.test.ts': `import * as suite from './support/suite'\nconsole.log(suite.label)\n`,
    })
    expect(where['via-suite.test.ts']).toStartWith('services: setUp (support/suite.ts) → api')
    expect(where['label-only.test.ts']).toBe('embedded')
    // A namespace may reach any export: the rule counts it as reaching.
    expect(where['namespace.test.ts']).toStartWith('services: ')
  })

  test('code a module runs when it loads counts for every file that imports it, whatever name it takes', () => {
    const where = placed({
      'support/stack.ts': `export const shape = process.env.STACK_REDIS === 'cluster' ? 'cluster' : 'server'\nif (process.env.STACK_REDIS === 'x') throw new Error('no')\nexport const prefix = 'p'\n`,
      'uses-prefix.test.ts': `import { prefix } from './support/stack'\nconsole.log(prefix)\n`,
    })
    expect(where['uses-prefix.test.ts']).toBe('services: loads support/stack.ts: reads process.env.STACK_REDIS')
  })

  test('the whole environment handed to a child process or to code that reads an engine variable reaches; PATH alone does not', () => {
    const where = placed({
      'config.ts': `export function parse(env: Record<string, string | undefined>) { return env.REDIS_URL }\nexport function level(env: Record<string, string | undefined>) { return env.LOG_LEVEL }\n`,
      'spawn-all.test.ts': `Bun.spawn(['bun', 'x.ts'], { env: { ...process.env, A: '1' } })\n`,
      'spawn-path.test.ts': `Bun.spawn(['bun', 'x.ts'], { env: { PATH: process.env.PATH ?? '' } })\n`,
      'parse.test.ts': `import { parse } from './config'\nparse(process.env)\n`,
      'level.test.ts': `import { level } from './config'\nlevel(process.env)\n`,
    })
    expect(where['spawn-all.test.ts']).toBe('services: hands its whole environment on (...process.env)')
    expect(where['spawn-path.test.ts']).toBe('embedded')
    expect(where['parse.test.ts']).toBe('services: passes the environment to parse, which names an engine variable')
    expect(where['level.test.ts']).toBe('embedded')
  })

  test('comments, type-only imports and strings that look like imports do not count', () => {
    const where = placed({
      'support/api.ts': HARNESS,
      'quiet.test.ts': [
        '// process.env.DATABASE_URL is read by the harness, not here',
        `import type { testApi } from './support/api'`,
        'type Api = typeof testApi',
        "const text = `x\nimport { a } from './nowhere'\n`",
        'export const shown: Api | string = text',
      ].join('\n'),
    })
    expect(where['quiet.test.ts']).toBe('embedded')
  })

  test('what the rule cannot read goes to both passes', () => {
    const where = placed({
      'missing.test.ts': `import { x } from './nowhere'\nconsole.log(x)\n`,
      'computed.test.ts': `const name = './a' + 'b'\nawait import(name)\n`,
    })
    expect(where['missing.test.ts']).toBe("services: cannot classify (missing.test.ts: cannot resolve './nowhere'): both passes")
    expect(where['computed.test.ts']).toBe('services: cannot classify (computed.test.ts: import or require of a computed path): both passes')
  })

  test("bunfig.toml's preload runs before every file: if it reaches, every file does", () => {
    const root = tree({
      'bunfig.toml': '[install]\nexact = true\n\n[test]\npreload = ["./support/preload.ts"]\n',
      'support/preload.ts': 'export const url = process.env.REDIS_URL\nif (url) console.log(url)\n',
      'a.test.ts': 'console.log(1)\n',
    })
    expect(bunPreloads(root)).toEqual(['support/preload.ts'])
    expect(classifyRepository(root).services.get('a.test.ts')).toBe('loads support/preload.ts: url (support/preload.ts) → reads process.env.REDIS_URL')
  })
})

test('findTestFiles finds what bun test finds: dot-files too, nothing under node_modules or a dot-folder', () => {
  const root = tree(
    Object.fromEntries(['a.test.ts', 'b_test.tsx', 'c.spec.js', 'd_spec.mjs', '.e.test.ts', 'f.ts', 'x/node_modules/p/g.test.ts', '.hidden/h.test.ts', 'deep/er/i.test.cts'].map((p) => [p, ''])),
  )
  expect(findTestFiles(root)).toEqual(['.e.test.ts', 'a.test.ts', 'b_test.tsx', 'c.spec.js', 'd_spec.mjs', 'deep/er/i.test.cts'])
})

describe('on the real tree', () => {
  const { services, embeddedOnly } = classifyRepository()

  test('files that open the engines, read their variables or start the two-process stack run in the services pass', () => {
    expect(services.get('src/db/db.contract.test.ts')).toBe('reads process.env.DATABASE_URL')
    expect(services.get('src/adapters/kv.contract.test.ts')).toBe('reads process.env.REDIS_URL')
    expect(services.get('test/security/outage.test.ts')).toContain('test/support/stack.ts')
    expect(services.get('test/oauth/flow.test.ts')).toBeDefined()
  })

  test('files that touch no PostgreSQL or Redis of the run stay in the embedded pass', () => {
    for (const file of ['redirect/handler.test.ts', 'core/config.test.ts', 'src/plugins/errors.test.ts', 'test/start.e2e.test.ts', 'test/browser/dashboard.test.ts', 'deploy/deploy.test.ts']) {
      expect(embeddedOnly, file).toContain(file)
    }
  })

  test('no file is in both lists or in neither', () => {
    const all = findTestFiles()
    expect([...services.keys(), ...embeddedOnly].sort()).toEqual(all)
  })
})
