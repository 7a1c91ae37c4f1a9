// A real hot standby of the test run's PostgreSQL (scripts/services.sh's native cluster, which allows
// replication from 127.0.0.1): `pg_basebackup -R` into a temporary directory, started on a free port, and
// its replay paused and resumed on demand. As root, as scripts/services.sh runs the server: as the
// `postgres` system user (the server refuses to run as root).
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { freePort } from './processes'
import { until } from './wait'

const PG_VERSIONS_DIR = '/usr/lib/postgresql'
/** The superuser of scripts/services.sh's cluster: replication and pausing replay need it. */
const SUPERUSER = 'postgres'
/** A base backup and a start on a 2-core machine shared with other suites: generous. */
const START_SECONDS = 90

export interface Standby {
  /** DATABASE_URL with the standby's port: what DATABASE_REPLICA_URL is set to. */
  url: string
  /** Resolves once the standby has replayed everything the primary had written when it was called. */
  caughtUp(): Promise<void>
  pauseReplay(): Promise<void>
  resumeReplay(): Promise<void>
  /** Stops the server (fast); the replica is then down, as a crashed one would be. */
  stop(): Promise<void>
  /** stop(), and its directory removed. */
  remove(): Promise<void>
}

/** The binaries of the highest installed major version, as scripts/services.sh picks them. */
function pgBin(): string {
  const versions = existsSync(PG_VERSIONS_DIR) ? readdirSync(PG_VERSIONS_DIR).filter((v) => existsSync(join(PG_VERSIONS_DIR, v, 'bin/pg_basebackup'))) : []
  const highest = versions.sort((a, b) => Number(a) - Number(b)).at(-1)
  if (!highest) throw new Error(`no pg_basebackup under ${PG_VERSIONS_DIR}/*/bin (package postgresql-15; bash scripts/services.sh start installs it)`)
  return join(PG_VERSIONS_DIR, highest, 'bin')
}

const isRoot = () => process.getuid?.() === 0

function run(command: string[], what: string): void {
  const argv = isRoot() ? ['runuser', '-u', SUPERUSER, '--', ...command] : command
  const done = Bun.spawnSync(argv, { stdout: 'pipe', stderr: 'pipe' })
  if (done.exitCode !== 0) throw new Error(`${what} failed (${done.exitCode}): ${done.stderr.toString().slice(0, 2000)}`)
}

function withPort(url: string, port: number, user?: string, database?: string): string {
  const parsed = new URL(url)
  parsed.port = String(port)
  if (user !== undefined) {
    parsed.username = user
    parsed.password = ''
  }
  if (database !== undefined) parsed.pathname = `/${database}`
  return parsed.href
}

export async function startStandby(primaryUrl: string): Promise<Standby> {
  const bin = pgBin()
  const primary = new URL(primaryUrl)
  const dir = mkdtempSync(join(tmpdir(), 'pg-standby-'))
  if (isRoot()) {
    const id = (flag: string) => Number(Bun.spawnSync(['id', flag, SUPERUSER]).stdout.toString().trim())
    chownSync(dir, id('-u'), id('-g'))
  }
  const data = join(dir, 'data')
  const log = join(dir, 'postgres.log')
  const port = await freePort()
  const logTail = () => (existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : '(no log)')

  // -R writes standby.signal and primary_conninfo; -c fast: the checkpoint it starts from is taken at once.
  run([`${bin}/pg_basebackup`, '-h', primary.hostname, '-p', primary.port || '5432', '-U', SUPERUSER, '-D', data, '-R', '-X', 'stream', '-c', 'fast', '--no-sync'], 'pg_basebackup')
  // The copied configuration names the primary's port and socket directory: the command line wins over it.
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir}`
  try {
    run([`${bin}/pg_ctl`, '-D', data, '-l', log, '-w', '-t', String(START_SECONDS), '-o', options, 'start'], 'starting the standby')
  } catch (error) {
    rmSync(dir, { recursive: true, force: true })
    throw new Error(`${(error as Error).message}\n${logTail()}`)
  }

  const admin = postgres(withPort(primaryUrl, port, SUPERUSER, 'postgres'), { max: 1, onnotice: () => {}, connect_timeout: 10 })
  const onPrimary = postgres(primaryUrl, { max: 1, onnotice: () => {}, connect_timeout: 10 })
  let stopped = false
  const standby: Standby = {
    url: withPort(primaryUrl, port),
    async caughtUp() {
      const lsn = (await onPrimary`select pg_current_wal_lsn()::text as lsn`)[0]!.lsn as string
      await until(
        async () => {
          const [row] = await admin`select coalesce(pg_last_wal_replay_lsn() >= ${lsn}::pg_lsn, false) as done`
          return row!.done === true
        },
        () => `the standby replaying up to ${lsn}\n${logTail()}`,
        START_SECONDS * 1000,
      )
    },
    async pauseReplay() {
      await admin`select pg_wal_replay_pause()`
      // A pause is requested, then takes effect between two records.
      await until(async () => (await admin`select pg_get_wal_replay_pause_state() as state`)[0]!.state === 'paused', 'replay paused')
    },
    async resumeReplay() {
      await admin`select pg_wal_replay_resume()`
    },
    async stop() {
      if (stopped) return
      stopped = true
      await Promise.all([admin.end({ timeout: 5 }), onPrimary.end({ timeout: 5 })])
      run([`${bin}/pg_ctl`, '-D', data, '-m', 'fast', '-w', '-t', String(START_SECONDS), 'stop'], 'stopping the standby')
    },
    async remove() {
      try {
        await standby.stop()
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
  }
  await until(
    async () => (await admin`select pg_is_in_recovery() as standby`.catch(() => [{ standby: false }]))[0]!.standby === true,
    () => `the standby answering\n${logTail()}`,
    START_SECONDS * 1000,
  )
  return standby
}
