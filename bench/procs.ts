// Process plumbing for the local bench runner: child processes with their output in log files, health
// polling, free ports, and one cleanup stack that runs on success, error, SIGINT and the watchdog.
import type { Subprocess } from 'bun'
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs'

export function log(line: string): void {
  console.error(`bench: ${line}`)
}

/** Things to undo, undone last-in first-out; each step bounded, failures reported and passed over. */
export class Cleanup {
  private readonly steps: Array<{ name: string; run: () => Promise<unknown> }> = []
  private running: Promise<void> | null = null

  push(name: string, run: () => Promise<unknown>): void {
    this.steps.push({ name, run })
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      for (const step of this.steps.reverse()) {
        try {
          await Promise.race([step.run(), Bun.sleep(20_000).then(() => Promise.reject(new Error('took over 20 s')))])
        } catch (error) {
          log(`cleanup: ${step.name} failed: ${(error as Error).message}`)
        }
      }
    })()
    return this.running
  }
}

export interface Child {
  name: string
  proc: Subprocess
  logFile: string
  stop(graceMs?: number): Promise<number | null>
}

/** Starts a process with stdout and stderr appended to logFile. */
export function startChild(name: string, cmd: string[], options: { env: Record<string, string | undefined>; logFile: string; cwd?: string }): Child {
  const fd = openSync(options.logFile, 'a')
  const proc = Bun.spawn(cmd, { env: options.env, cwd: options.cwd, stdin: 'ignore', stdout: fd, stderr: fd })
  closeSync(fd) // the child holds its own copy
  return {
    name,
    proc,
    logFile: options.logFile,
    async stop(graceMs = 15_000) {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode
      proc.kill('SIGTERM')
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs)
      await proc.exited
      clearTimeout(timer)
      return proc.exitCode
    },
  }
}

export function tail(file: string, lines = 25): string {
  if (!existsSync(file)) return '(no log)'
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
}

/** Polls url until it answers `expect` (default 200); fails early when the child exits. */
export async function waitFor(child: Child, url: string, timeoutMs: number, expect = 200): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let last = 'no answer yet'
  while (Date.now() < deadline) {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) {
      throw new Error(`${child.name} exited (${child.proc.exitCode ?? child.proc.signalCode}) before ${url} answered; log ${child.logFile}:\n${tail(child.logFile)}`)
    }
    try {
      const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(1_000) })
      await response.arrayBuffer()
      if (response.status === expect) return
      last = `status ${response.status}`
    } catch (error) {
      last = (error as Error).message
    }
    await Bun.sleep(200)
  }
  throw new Error(`${child.name}: ${url} did not answer ${expect} within ${timeoutMs} ms (last: ${last}); log ${child.logFile}:\n${tail(child.logFile)}`)
}

/** Ports the kernel hands out now; another process could take one before we bind it, rarely. */
export function freePorts(count: number): number[] {
  const sockets = Array.from({ length: count }, () =>
    Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } }),
  )
  const ports = sockets.map((s) => s.port)
  for (const s of sockets) s.stop(true)
  return ports
}

/** Runs a short command to completion with a time limit; stderr passes through to ours. */
export async function sh(cmd: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string }> {
  const proc = Bun.spawn(cmd, { stdin: 'ignore', stdout: 'pipe', stderr: 'inherit' })
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs)
  const stdout = await new Response(proc.stdout).text()
  await proc.exited
  clearTimeout(timer)
  return { code: proc.exitCode, stdout }
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** CPU seconds (user + system) a live process has used so far, from /proc (Linux). */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command name, which is in parentheses and may hold spaces; utime, stime are 14, 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
  } catch {
    return Number.NaN
  }
}
/** USER_HZ: 100 on every Linux architecture Bun runs on. */
const CLOCK_TICKS = 100

/** Cores each process kept busy while `work` ran (1.0 = one core all the time). */
export async function withCpu<T>(pids: Record<string, number>, work: () => Promise<T>): Promise<{ result: T; cores: Record<string, number> }> {
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid)]))
  const started = performance.now()
  const result = await work()
  const wall = (performance.now() - started) / 1000
  const cores = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, Math.round(((cpuSeconds(pid) - before[name]!) / wall) * 100) / 100]))
  return { result, cores }
}
