// REDIRECT_WORKERS=N: N redirector processes share one port (reusePort: the kernel spreads connections
// over them), so the redirector uses every core. Each worker is the ordinary redirector (redirect/main.ts)
// with its own L1 and its own click spool, CLICK_SPOOL_DIR/worker-<i>: one spool directory belongs to one
// process, and segment names carry a random part, so no two workers ever share a dedup token.
//
// The supervisor (this file, in the process started as redirect/main.ts) serves nothing itself:
// - before the workers start, a spool left in another layout (one process before, or more workers than
//   now) is moved, file by file and under the same names (the same tokens), into worker 0's directory, so
//   nothing written under the old setting is left unshipped;
// - a worker that exits while the supervisor is not stopping is started again (1 s, doubling up to 30 s
//   when it keeps failing); its spool replays what it had not shipped;
// - SIGTERM or SIGINT is passed to every worker, which drains its clicks; the supervisor exits once all
//   have. A supervisor that dies without a word (SIGKILL) closes the workers' stdin, and each stops as on
//   SIGTERM, so no worker outlives it holding the port.
import { existsSync, mkdirSync, readdirSync, renameSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** The environment variable that makes redirect/main.ts a worker, and names its index. */
export const WORKER_INDEX_VAR = 'REDIRECT_WORKER_INDEX'

const RESTART_MIN_MS = 1000
const RESTART_MAX_MS = 30_000
/** A worker that ran this long is healthy again: the next restart waits the minimum. */
const HEALTHY_AFTER_MS = 60_000
/** How long stopping waits for a worker's drain before SIGKILL. */
const DRAIN_DEADLINE_MS = 20_000

export const workerSpoolDir = (spoolDir: string, index: number) => join(spoolDir, `worker-${index}`)

/**
 * Moves the spool files of a layout other than `workers` processes into the directory that will replay
 * them: with one process the spool directory itself, with more worker 0's. Directories of workers that
 * still exist keep theirs. Only called while no redirector runs on this spool.
 */
export function adoptLeftoverSpools(spoolDir: string, workers: number, log: (line: string) => void): number {
  if (!existsSync(spoolDir)) return 0
  const target = workers > 1 ? workerSpoolDir(spoolDir, 0) : spoolDir
  const sources = [
    spoolDir,
    ...readdirSync(spoolDir)
      .filter((n) => /^worker-\d+$/.test(n))
      .map((n) => join(spoolDir, n)),
  ].filter((dir) => {
    if (dir === target || !statSync(dir).isDirectory()) return false
    const index = Number(/worker-(\d+)$/.exec(dir)?.[1] ?? -1)
    return !(workers > 1 && index >= 0 && index < workers)
  })
  let moved = 0
  for (const dir of sources) {
    for (const name of readdirSync(dir)) {
      const file = join(dir, name)
      if (!statSync(file).isFile()) continue
      mkdirSync(target, { recursive: true })
      renameSync(file, join(target, name))
      moved++
    }
  }
  if (moved > 0) log(`redirector: ${moved} spool file(s) of an earlier layout moved to ${target}, to be shipped first`)
  return moved
}

export interface Supervisor {
  /** SIGTERM to every worker; resolves once all have drained and exited. */
  stop(): Promise<void>
  /** The workers' pids now (a test kills one). */
  pids(): number[]
}

export function superviseWorkers(options: { count: number; entry: string; spoolDir: string; log: (line: string) => void }): Supervisor {
  const { count, entry, spoolDir, log } = options
  adoptLeftoverSpools(spoolDir, count, log)
  let stopping = false
  const workers: Array<{ process: Bun.Subprocess<'pipe', 'inherit', 'inherit'>; started: number; delay: number }> = []

  function start(index: number, delay = RESTART_MIN_MS): void {
    const child = Bun.spawn([process.execPath, entry], {
      env: { ...process.env, [WORKER_INDEX_VAR]: String(index), CLICK_SPOOL_DIR: workerSpoolDir(spoolDir, index) },
      stdin: 'pipe',
      stdout: 'inherit',
      stderr: 'inherit',
    })
    workers[index] = { process: child, started: Date.now(), delay }
    void child.exited.then((code) => {
      if (stopping) return
      const ranFor = Date.now() - workers[index]!.started
      const wait = ranFor >= HEALTHY_AFTER_MS ? RESTART_MIN_MS : delay
      log(`redirector: worker ${index} (pid ${child.pid}) exited with ${code} after ${Math.round(ranFor / 1000)} s; starting it again in ${wait} ms`)
      setTimeout(() => stopping || start(index, Math.min(wait * 2, RESTART_MAX_MS)), wait)
    })
  }

  for (let index = 0; index < count; index++) start(index)
  log(`redirector: ${count} workers sharing the port (REDIRECT_WORKERS)`)

  return {
    pids: () => workers.map((w) => w.process.pid),
    async stop() {
      stopping = true
      await Promise.all(
        workers.map(async ({ process: child }) => {
          child.kill('SIGTERM')
          const killer = setTimeout(() => child.kill('SIGKILL'), DRAIN_DEADLINE_MS)
          await child.exited
          clearTimeout(killer)
        }),
      )
    },
  }
}

/** In a worker: stop as on SIGTERM once the supervisor is gone (its end of our stdin closed). */
export function stopWithSupervisor(): void {
  const stdin = Bun.stdin.stream().getReader()
  void (async () => {
    while (!(await stdin.read()).done);
    process.kill(process.pid, 'SIGTERM')
  })()
}
