// One process at a time on the embedded engines of a DATA_DIR. PGlite keeps no lock of its own, so a
// second process (`npm run migrate` or a second `npm start` beside a running one) would open the same
// Postgres files and write to them under the first; chDB refuses only later, with a stack trace. The lock
// is a file naming the holder's pid, put in place whole by link() (which fails when the name exists), so
// the second process stops before it opens anything and can say why in one line.
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export const LOCK_FILE = 'engines.lock'

/** Another live process holds the engines of this DATA_DIR. */
export class DataDirInUse extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`DATA_DIR ${dataDir} is in use by process ${pid}, which has its embedded engines open (PGlite and chDB allow one process at a time)`)
    this.name = 'DataDirInUse'
  }
}

export interface EngineLock {
  release(): void
}

/** True when `pid` is a running process (a zombie, killed but not yet reaped, does not count). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
  const stat = `/proc/${pid}/stat`
  if (!existsSync(stat)) return true
  try {
    return !/\) [ZX] /.test(readFileSync(stat, 'utf8'))
  } catch {
    return false // exited between the two checks
  }
}

function holder(path: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10)
    return Number.isInteger(pid) && pid > 0 ? pid : null
  } catch {
    return null
  }
}

/**
 * Takes the lock of `dataDir` for this process, or throws DataDirInUse. A lock left by a process that no
 * longer runs (killed with SIGKILL, a power cut) is taken over.
 */
export function lockEmbeddedEngines(dataDir: string): EngineLock {
  const path = join(dataDir, LOCK_FILE)
  mkdirSync(dataDir, { recursive: true })
  // Written first under a name of our own, so the lock file never exists without its pid.
  const mine = `${path}.${process.pid}`
  writeFileSync(mine, `${process.pid}\n`)
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        linkSync(mine, path)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
        const pid = holder(path)
        if (pid !== null && pid !== process.pid && running(pid)) throw new DataDirInUse(dataDir, pid)
        rmSync(path, { force: true }) // left by a process that no longer runs: take it over
        continue
      }
      return held(path)
    }
  } finally {
    rmSync(mine, { force: true })
  }
  throw new Error(`could not take the lock ${path}: it keeps being replaced by another process`)
}

function held(path: string): EngineLock {
  const release = () => {
    if (holder(path) === process.pid) rmSync(path, { force: true })
    process.off('exit', release)
  }
  // A process that exits without closing its runtime (process.exit on a fatal error) leaves no lock.
  process.on('exit', release)
  return { release }
}
