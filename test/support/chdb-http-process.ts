// FOR TESTS AND THE BENCHMARK ONLY: runs test/support/chdb-http.ts (chDB behind ClickHouse's HTTP
// interface) as a child process, since chDB binds one data directory per process and the processes under
// test reach ClickHouse over HTTP anyway.
import type { Subprocess } from 'bun'
import { keepTail, stopProcess } from '../../bench/procs'

export interface ChdbHttpProcess {
  url: string
  port: number
  pid: number
  /** The last few KB the shim wrote to stderr, for failure messages. */
  stderr(): string
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`. Resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>
}

const SCRIPT = new URL('./chdb-http.ts', import.meta.url).pathname
/** Loading the engine and its tables takes about a second here; generous but bounded. */
const START_TIMEOUT_MS = 20_000
const STDERR_KEEP = 4096

export async function spawnChdbHttp(options: { path: string; port?: number }): Promise<ChdbHttpProcess> {
  const proc = Bun.spawn([process.execPath, SCRIPT, '--path', options.path, '--port', String(options.port ?? 0)], {
    stdout: 'pipe',
    stderr: 'pipe',
    stdin: 'ignore',
  })
  const errText = keepTail([proc.stderr], STDERR_KEEP)

  let url: string
  try {
    url = await firstLine(proc, START_TIMEOUT_MS)
  } catch (err) {
    proc.kill('SIGKILL')
    await proc.exited
    throw new Error(`chdb-http did not start: ${(err as Error).message}\n${errText()}`)
  }
  return {
    url,
    port: Number(new URL(url).port),
    pid: proc.pid,
    stderr: errText,
    stop: (graceMs = 10_000) => stopProcess(proc, graceMs),
  }
}

/** Reads stdout until the shim prints its URL; keeps draining it afterwards so the pipe never fills. */
async function firstLine(proc: Subprocess<'ignore', 'pipe', 'pipe'>, timeoutMs: number): Promise<string> {
  const reader = proc.stdout.getReader()
  const decoder = new TextDecoder()
  let buffered = ''
  const deadline = Date.now() + timeoutMs
  while (!buffered.includes('\n')) {
    const left = deadline - Date.now()
    if (left <= 0) throw new Error(`no URL on stdout within ${timeoutMs} ms`)
    const next = await Promise.race([reader.read(), Bun.sleep(left).then(() => 'timeout' as const)])
    if (next === 'timeout') throw new Error(`no URL on stdout within ${timeoutMs} ms`)
    if (next.done) throw new Error(`exited before listening (code ${await proc.exited})`)
    buffered += decoder.decode(next.value)
  }
  void (async () => {
    while (!(await reader.read()).done);
  })()
  const line = buffered.slice(0, buffered.indexOf('\n')).trim()
  if (!/^http:\/\/[^\s]+$/.test(line)) throw new Error(`unexpected first line: ${line}`)
  return line
}
