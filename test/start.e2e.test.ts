// `npm start` as the README's "Two commands" describes it, and what a newcomer then tries beside it:
// - it prints exactly the lines the README shows (ports and DATA_DIR aside);
// - `npm run migrate` and a second start on the same DATA_DIR stop with one line, exit 1, before they
//   open PGlite or chDB (PGlite keeps no lock: a second process would write under the first);
// - once the service stopped, the migration runs.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { LOCK_FILE } from '../src/embedded-lock'
import { METRICS_TEST_TOKEN, scrapeMetrics } from './support/metrics'
import { freePort, startEntry, type Child } from './support/processes'

const ROOT = resolve(import.meta.dir, '..')

/** The first ```text block after the README's "`npm start` prints" sentence. */
function readmeStartLines(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const after = readme.slice(readme.indexOf('`npm start` prints'))
  const block = /```text\n([\s\S]*?)```/.exec(after)
  if (!block) throw new Error('README: no ```text block after "`npm start` prints"')
  return block[1]!.trimEnd().split('\n')
}

/**
 * The local addresses of the TCP sockets listening on `port`, from Linux's socket tables (an IPv4
 * address there is hexadecimal, least significant byte first; an IPv6 one is left as it is written).
 */
function listeningAddresses(port: number): string[] {
  const LISTEN = '0A'
  const rows = ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((table) => (existsSync(table) ? readFileSync(table, 'utf8').trim().split('\n').slice(1) : []))
  return rows
    .map((row) => row.trim().split(/\s+/))
    .filter((columns) => columns[3] === LISTEN && Number.parseInt(columns[1]!.split(':')[1]!, 16) === port)
    .map((columns) => {
      const address = columns[1]!.split(':')[0]!
      return address.length === 8
        ? (address.match(/../g) ?? [])
            .reverse()
            .map((byte) => Number.parseInt(byte, 16))
            .join('.')
        : address
    })
}

/** The number of migrations changes as the project grows; the README shows the count of its time. */
const anyCount = (line: string) => line.replace(/\b\d+ migration\(s\)/, 'N migration(s)')

/** Runs an entry point to its end with only the given environment (and PATH/HOME). */
async function runEntry(entry: string, env: Record<string, string>) {
  const proc = Bun.spawn([process.execPath, join(ROOT, entry)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

describe('npm start, as the README shows it', () => {
  let dataDir: string
  let port: number
  let app: Child

  beforeAll(async () => {
    dataDir = join(mkdtempSync(join(tmpdir(), 'e2e-start-')), 'data')
    port = await freePort()
    app = await startEntry('one-process/main.ts', { PORT: String(port), DATA_DIR: dataDir, METRICS_TOKEN: METRICS_TEST_TOKEN }, port)
  }, 120_000)
  afterAll(async () => {
    await app?.stop()
  })

  test('prints the lines of the README', async () => {
    // The banner is written right after the port opens; the pipe may deliver it a moment later.
    for (let i = 0; i < 50 && !app.output().includes('Short links:'); i++) await Bun.sleep(100)
    const printed = app.output().replaceAll(dataDir, './data').replaceAll(`localhost:${port}`, 'localhost:3000').replaceAll(`127.0.0.1:${port}`, '127.0.0.1:3000').trimEnd().split('\n')
    expect(printed.map(anyCount)).toEqual(readmeStartLines().map(anyCount))
  })

  test('it listens on 127.0.0.1 only (HOST), and says so', async () => {
    expect(app.output()).toContain(`listening on http://127.0.0.1:${port}`)
    // The kernel's own list of the sockets listening on the port: loopback only, never a wildcard
    // address (which would serve every interface of the machine, whatever interfaces it has).
    expect(listeningAddresses(port)).toEqual(['127.0.0.1'])
  })

  test("one process, one /metrics: the API's figures and the redirector's; /ready adds the click spool", async () => {
    const metrics = await scrapeMetrics(app.url)
    expect([...metrics.keys()].some((k) => k.startsWith('linkservice_http_request_duration_seconds_count{'))).toBe(true)
    expect(metrics.get('linkservice_clicks_dropped_total')).toBe(0)
    expect(metrics.has('linkservice_redirect_duration_seconds_count')).toBe(true)
    const ready = await fetch(`${app.url}/ready`)
    const body = (await ready.json()) as { status: string; checks: Record<string, { status: string; required: boolean }> }
    expect(ready.status, JSON.stringify(body)).toBe(200)
    expect(Object.keys(body.checks).sort()).toEqual(['cache', 'click_spool', 'clickhouse', 'postgres'].concat(body.checks.audit_spool ? ['audit_spool'] : []).sort())
  })

  test('npm run migrate beside it says why it cannot, in one line, and exits 1', async () => {
    const { stdout, stderr, code } = await runEntry('scripts/migrate.ts', { DATA_DIR: dataDir })
    expect(code).toBe(1)
    expect(stdout).toBe('')
    expect(stderr.trimEnd().split('\n')).toEqual([
      `DATA_DIR ${dataDir} is in use by process ${app.proc.pid}, which has its embedded engines open (PGlite and chDB allow one process at a time): stop it first; the service applies the migrations itself when it starts`,
    ])
    // The refused process touched nothing: the service still answers, and still holds the lock.
    expect((await fetch(`${app.url}/health`)).status).toBe(200)
    expect(readFileSync(join(dataDir, LOCK_FILE), 'utf8').trim()).toBe(String(app.proc.pid))
  }, 60_000)

  test('a second npm start on the same DATA_DIR is refused the same way', async () => {
    const { stderr, code } = await runEntry('one-process/main.ts', { DATA_DIR: dataDir, PORT: String(await freePort()) })
    expect(code).toBe(1)
    expect(stderr.trimEnd().split('\n')).toEqual([
      `DATA_DIR ${dataDir} is in use by process ${app.proc.pid}, which has its embedded engines open (PGlite and chDB allow one process at a time): stop it, or give this one another DATA_DIR`,
    ])
  }, 60_000)

  test('once the service stopped, the lock is gone and the migration runs', async () => {
    expect(await app.stop(), app.output()).toBe(0)
    expect(existsSync(join(dataDir, LOCK_FILE))).toBe(false)
    const { stdout, code, stderr } = await runEntry('scripts/migrate.ts', { DATA_DIR: dataDir })
    expect(code, stderr).toBe(0)
    expect(stdout.trimEnd().split('\n').at(-1)).toBe('migrations: done')
  }, 90_000)
})
