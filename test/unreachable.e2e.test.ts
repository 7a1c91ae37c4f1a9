// A dependency that cannot be reached when the API starts: one line on stderr naming it and its URL
// without the password, exit 1, no stack trace; each of Postgres, ClickHouse and Redis in turn (the
// others embedded, so the test needs no server of its own).
import { describe, expect, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { freePort, TEST_SECRETS } from './support/processes'

const ROOT = resolve(import.meta.dir, '..')
const PASSWORD = 'sw0rdf1sh-not-to-be-printed'

async function startApi(env: Record<string, string>) {
  const proc = Bun.spawn([process.execPath, join(ROOT, 'src/api.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(await freePort()), DATA_DIR: join(mkdtempSync(join(tmpdir(), 'unreachable-')), 'data'), ...TEST_SECRETS, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000)
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  clearTimeout(timer)
  return { stdout, stderr, code }
}

describe('a dependency unreachable at start', () => {
  // A port nothing listens on: freePort() hands out one that was free a moment ago.
  const cases: [string, (port: number) => Record<string, string>, (port: number) => string][] = [
    [
      'postgres',
      (port) => ({ DATABASE_URL: `postgres://linkservice:${PASSWORD}@127.0.0.1:${port}/linkservice?sslmode=disable` }),
      (port) => `postgres: cannot reach postgres://linkservice@127.0.0.1:${port}/linkservice (`,
    ],
    ['clickhouse', (port) => ({ CLICKHOUSE_URL: `http://default:${PASSWORD}@127.0.0.1:${port}` }), (port) => `clickhouse: cannot reach http://default@127.0.0.1:${port} (`],
    ['redis', (port) => ({ REDIS_URL: `redis://:${PASSWORD}@127.0.0.1:${port}/0` }), (port) => `redis: cannot reach redis://127.0.0.1:${port}/0 (`],
  ]
  for (const [name, env, expected] of cases) {
    test(`${name}: one line naming it and its URL, no password, no stack; exit 1`, async () => {
      const port = await freePort()
      const { stderr, code } = await startApi(env(port))
      const lines = stderr.trimEnd().split('\n')
      expect(code, stderr).toBe(1)
      expect(lines, stderr).toHaveLength(1)
      expect(lines[0], stderr).toStartWith(expected(port))
      expect(lines[0], stderr).toContain('is it running')
      expect(stderr).not.toContain(PASSWORD)
      expect(stderr).not.toMatch(/\n\s+at /)
    }, 90_000)
  }
})
