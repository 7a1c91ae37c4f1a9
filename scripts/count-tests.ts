// Counts the tests a pass of CI runs, without running any: the figures of .ci/min-tests
// (docs/testing.md, "The CI run"). `bun test` itself declares the tests (it loads every file and runs
// its describe blocks, as in a real run), but with this file preloaded in place of bun:test's test
// functions: a test this pass would run is declared skipped, one it would skip (test.skip, skipIf,
// a skipped describe, todo) is declared todo, and no test body or hook runs. bun's own summary then
// says how many would run (" N skip") and how many this pass skips (" N todo").
//
//   bun scripts/count-tests.ts embedded   every test file, no DATABASE_URL / REDIS_URL / CLICKHOUSE_URL
//   eval "$(bash scripts/services.sh test-env)" && bun scripts/count-tests.ts services
//                                         the files of scripts/test-files.ts --services, as .ci/run runs them
// Each prints one line as .ci/min-tests has it, e.g. "embedded 1350"; the machine needs what .ci/run
// installs (Chromium, redis-server, wrk...), or the tests that need them count as skipped.
import * as bunTest from 'bun:test'
import { join } from 'node:path'
import { classifyRepository, ENGINE_VARIABLES, ROOT } from './test-files'

/** Set in the environment of the `bun test` this script starts: only then does the preload take bun:test over. */
const COLLECT = 'COUNT_TESTS_COLLECT'

type Declare = (...args: unknown[]) => void

function installCounter(): void {
  // Taken before the module is replaced: mock.module updates the live bindings of bun:test's importers.
  const real = { ...bunTest }
  const noop = () => {}
  /** Inside a describe block this pass skips, every test is skipped. */
  let skipping = false

  const declare =
    (runs: boolean): Declare =>
    (name) => {
      if (runs && !skipping) real.test.skip(String(name), noop)
      else real.test.todo(String(name))
    }
  const withModifiers = (runs: boolean) =>
    Object.assign(declare(runs), {
      skip: declare(false),
      todo: declare(false),
      only: declare(runs),
      failing: declare(runs),
      concurrent: declare(runs),
      serial: declare(runs),
      skipIf: (condition: unknown) => declare(runs && !condition),
      todoIf: (condition: unknown) => declare(runs && !condition),
      if: (condition: unknown) => declare(runs && Boolean(condition)),
      each: (table: readonly unknown[]) => (name: string) => (runs && !skipping ? real.test.skip : real.test.todo).each(table as unknown[][])(name, noop),
    })

  /** Runs a describe block's body with `skipping` as it was where the block was declared, or set. */
  const within = (skip: boolean, body: ((...args: unknown[]) => void) | undefined, args: unknown[] = []) => {
    const outer = skipping
    skipping = skip
    try {
      body?.(...args)
    } finally {
      skipping = outer
    }
  }
  const describeAs = (runs: boolean) => (name: unknown, body?: (...args: unknown[]) => void) => {
    const skip = skipping || !runs
    real.describe(String(name), () => within(skip, body))
  }
  const describe = Object.assign(describeAs(true), {
    skip: describeAs(false),
    todo: describeAs(false),
    only: describeAs(true),
    skipIf: (condition: unknown) => describeAs(!condition),
    todoIf: (condition: unknown) => describeAs(!condition),
    if: (condition: unknown) => describeAs(Boolean(condition)),
    each: (table: readonly unknown[]) => (name: string, body: (...args: unknown[]) => void) => {
      const skip = skipping
      real.describe.each(table as unknown[][])(name, (...args: unknown[]) => within(skip, body, args))
    },
  })

  const test = withModifiers(true)
  bunTest.mock.module('bun:test', () => ({
    ...real,
    test,
    it: test,
    xtest: declare(false),
    xit: declare(false),
    describe,
    xdescribe: describeAs(false),
    beforeAll: noop,
    afterAll: noop,
    beforeEach: noop,
    afterEach: noop,
    onTestFinished: noop,
  }))
}

/** bun test's summary line " N word", the last one. */
function summaryCount(output: string, word: string): number | null {
  const all = [...output.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '').matchAll(new RegExp(`^\\s*(\\d+) ${word}\\s*$`, 'gm'))]
  return all.length > 0 ? Number(all[all.length - 1]![1]) : null
}

async function count(pass: 'embedded' | 'services'): Promise<number> {
  const env: Record<string, string | undefined> = { ...process.env, [COLLECT]: '1' }
  let files: string[] = []
  if (pass === 'embedded') {
    for (const name of ENGINE_VARIABLES) delete env[name]
  } else {
    if (!env.DATABASE_URL || !env.REDIS_URL) throw new Error('services: set DATABASE_URL and REDIS_URL first: eval "$(bash scripts/services.sh test-env)"')
    delete env.CLICKHOUSE_URL
    env.STACK_REDIS = 'cluster'
    files = [...classifyRepository().services.keys()].map((file) => `./${file}`)
  }
  const proc = Bun.spawn([process.execPath, 'test', '--timeout', '30000', '--preload', join(ROOT, 'scripts/count-tests.ts'), ...files], {
    cwd: ROOT,
    env,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  const output = stdout + stderr
  const runs = summaryCount(output, 'skip') ?? 0
  const skipped = summaryCount(output, 'todo') ?? 0
  // The results file by file, without the recap a long output ends with ("12 tests skipped:" and the same lines again).
  const results = output.split(/^\d+ tests? (?:skipped|todo|failed):$/m)[0]!
  const listed = (results.match(/^\(skip\) /gm) ?? []).length
  const problems = [
    code !== 0 && `bun test exited ${code}`,
    (summaryCount(output, 'fail') ?? 0) > 0 && 'a file failed to load or declare its tests',
    (summaryCount(output, 'pass') ?? 0) > 0 && 'a test ran: bun:test was not replaced',
    listed !== runs && `${listed} tests listed, bun counted ${runs}`,
  ].filter(Boolean)
  if (problems.length > 0) {
    console.error(
      output
        .split('\n')
        .filter((line) => !/^\((skip|todo)\) /.test(line))
        .join('\n'),
    )
    throw new Error(`${pass}: ${problems.join('; ')}`)
  }
  console.error(`${pass}: ${runs} tests run, ${skipped} skipped in this pass, in ${pass === 'embedded' ? 'every test file' : `${files.length} test files`}`)
  return runs
}

if (process.env[COLLECT] === '1' && !import.meta.main) installCounter()
else if (import.meta.main) {
  const pass = process.argv[2]
  if (pass !== 'embedded' && pass !== 'services') {
    console.error('usage: bun scripts/count-tests.ts embedded|services')
    process.exit(2)
  }
  console.log(`${pass} ${await count(pass)}`)
}
