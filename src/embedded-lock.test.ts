// The DATA_DIR lock of the embedded engines, across real processes: the holder is another process, as it
// is when `npm run migrate` runs beside `npm start`.
import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DataDirInUse, LOCK_FILE, lockEmbeddedEngines } from './embedded-lock'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'engine-lock-'))
  dirs.push(dir)
  return dir
}

const MODULE = join(import.meta.dir, 'embedded-lock.ts')

/** Tries the lock in a child process; prints "locked" or the error's name and message. */
async function tryInChild(dir: string): Promise<string> {
  const script = `import { lockEmbeddedEngines } from ${JSON.stringify(MODULE)}
try { lockEmbeddedEngines(${JSON.stringify(dir)}); console.log('locked') } catch (e) { console.log(e.name + ': ' + e.message) }`
  const child = Bun.spawn([process.execPath, '-e', script], { stdout: 'pipe', stderr: 'inherit' })
  const out = await new Response(child.stdout).text()
  await child.exited
  return out.trim()
}

/** The pid of a process that has exited and been reaped. */
async function deadPid(): Promise<number> {
  const child = Bun.spawn(['true'])
  await child.exited
  return child.pid
}

describe('lockEmbeddedEngines', () => {
  test('a second process is refused while the first holds the lock, and names the holder', async () => {
    const dir = dataDir()
    const lock = lockEmbeddedEngines(dir)
    try {
      expect(readFileSync(join(dir, LOCK_FILE), 'utf8').trim()).toBe(String(process.pid))
      expect(await tryInChild(dir)).toBe(`DataDirInUse: ${new DataDirInUse(dir, process.pid).message}`)
    } finally {
      lock.release()
    }
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false)
    expect(await tryInChild(dir)).toBe('locked')
  })

  test('a child that exits without releasing leaves no lock behind', async () => {
    const dir = dataDir()
    expect(await tryInChild(dir)).toBe('locked')
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false)
  })

  test('a lock left by a process that no longer runs (SIGKILL, power cut) is taken over', async () => {
    const dir = dataDir()
    writeFileSync(join(dir, LOCK_FILE), `${await deadPid()}\n`)
    const lock = lockEmbeddedEngines(dir)
    expect(readFileSync(join(dir, LOCK_FILE), 'utf8').trim()).toBe(String(process.pid))
    lock.release()
  })

  test('release leaves a lock that another process took over alone', () => {
    const dir = dataDir()
    const lock = lockEmbeddedEngines(dir)
    writeFileSync(join(dir, LOCK_FILE), '1\n')
    lock.release()
    expect(readFileSync(join(dir, LOCK_FILE), 'utf8').trim()).toBe('1')
  })
})
