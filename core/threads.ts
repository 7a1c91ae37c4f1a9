// Which thread of a process goes first when its threads want the same core (Linux nice values, one per
// thread). The thread that answers requests keeps the process's priority; background work (shipping
// clicks, in the one-process product also chDB's inserts and merges and PGlite's thread) runs at
// BACKGROUND_NICE, so under a full core redirects are answered first and the background catches up on
// its backlog (bounded on disk) as soon as the core has time. Where the machine has a core to spare, as
// it should, this changes nothing. Outside Linux (no /proc) every function here does nothing.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { getPriority, setPriority } from 'node:os'

export const BACKGROUND_NICE = 10

/**
 * JSC's garbage-collector helpers also mark the serving thread's heap, which waits for them to finish:
 * they keep the process's priority.
 */
const KEPT_THREADS = new Set(['HeapHelper'])

/** Lowers the calling thread (found through /proc/thread-self) to BACKGROUND_NICE. */
export function lowerThisThread(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, BACKGROUND_NICE)
  } catch {
    // Not Linux, or not allowed: the thread keeps the process's priority.
  }
}

/**
 * Lowers every thread of this process but the main one (which serves requests) and the kept ones to
 * BACKGROUND_NICE; returns how many it lowered. Threads a lowered thread starts later inherit its value,
 * but a pool may start threads from the main thread too: call it again now and then.
 */
export function lowerBackgroundThreads(): number {
  let lowered = 0
  let tasks: string[]
  try {
    tasks = readdirSync('/proc/self/task')
  } catch {
    return 0
  }
  for (const task of tasks) {
    const tid = Number(task)
    if (tid === process.pid) continue
    try {
      if (KEPT_THREADS.has(readFileSync(`/proc/self/task/${task}/comm`, 'utf8').trim())) continue
      if (getPriority(tid) >= BACKGROUND_NICE) continue
      setPriority(tid, BACKGROUND_NICE)
      lowered++
    } catch {
      // The thread ended meanwhile, or lowering is not allowed: nothing to do.
    }
  }
  return lowered
}

/** Lowers the background threads now and every `everyMs` (a timer that keeps no process alive); returns the stop. */
export function keepServingThreadFirst(everyMs = 5_000): () => void {
  lowerBackgroundThreads()
  const timer = setInterval(lowerBackgroundThreads, everyMs)
  timer.unref?.()
  return () => clearInterval(timer)
}
