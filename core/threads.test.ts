import { describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'

// In a process of its own: lowering threads is for good (a thread's nice value cannot be raised back
// without privileges), and the test runner's threads are not ours to lower.
const script = `
import { readdirSync, readFileSync } from 'node:fs'
import { BACKGROUND_NICE, lowerBackgroundThreads } from ${JSON.stringify(join(import.meta.dir, 'threads.ts'))}
const worker = new Worker(URL.createObjectURL(new Blob(['postMessage("up"); setInterval(() => {}, 1000)'])))
await new Promise((resolve) => (worker.onmessage = resolve))
Bun.gc(true)
const nice = () => Object.fromEntries(readdirSync('/proc/self/task').map((t) => {
  const stat = readFileSync('/proc/self/task/' + t + '/stat', 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return [t, { name: readFileSync('/proc/self/task/' + t + '/comm', 'utf8').trim(), nice: Number(fields[16]) }]
}))
const lowered = lowerBackgroundThreads()
const again = lowerBackgroundThreads()
console.log(JSON.stringify({ pid: process.pid, lowered, again, threads: nice(), background: BACKGROUND_NICE }))
process.exit(0)
`

describe('the serving thread first', () => {
  // Per-thread nice values are Linux's (/proc); elsewhere the functions do nothing by design.
  test.skipIf(!existsSync('/proc/self/task'))('every thread but the main one and the GC helpers is lowered, once', async () => {
    const proc = Bun.spawn([process.execPath, '-e', script], { stdout: 'pipe', stderr: 'inherit' })
    const out = JSON.parse(await new Response(proc.stdout).text()) as {
      pid: number
      lowered: number
      again: number
      background: number
      threads: Record<string, { name: string; nice: number }>
    }
    const threads = Object.entries(out.threads)
    const main = out.threads[String(out.pid)]!
    expect(main.nice).toBe(0)
    const others = threads.filter(([tid]) => tid !== String(out.pid))
    // The worker started above is among them, lowered.
    expect(others.some(([, t]) => t.name === 'Worker' && t.nice === out.background)).toBe(true)
    for (const [, thread] of others) expect(thread.nice).toBe(thread.name === 'HeapHelper' ? 0 : out.background)
    expect(out.lowered).toBeGreaterThan(0)
    // A second pass finds nothing left to lower.
    expect(out.again).toBe(0)
  })
})
