// REDIRECT_WORKERS=2: two redirector processes share the port under one supervisor (redirect/workers.ts).
// Under load one worker is killed with SIGKILL (no drain), the supervisor starts it again on the same
// spool directory, and every 302 a client received must be stored in ClickHouse exactly once: none lost
// (the killed worker's unshipped segments are replayed by its successor) and none twice (each worker's
// segments carry tokens of their own). A SIGTERM then drains both workers and the supervisor exits 0.
import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { clickLoad, expectEachAnsweredClickOnce } from './support/click-load'
import { clickRowsOf } from './support/click-rows'
import { eventually, redisServerBinary, shorten, startStack } from './support/stack'
import { CLICK_SPOOL } from '../redirect/segment'

const CLIENTS = 16

/** The supervisor's children: the workers (Linux /proc). */
const childrenOf = (pid: number) => readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)

/** A worker's index, from its environment (the supervisor sets REDIRECT_WORKER_INDEX). */
const workerIndexOf = (pid: number) => /(?:^|\0)REDIRECT_WORKER_INDEX=(\d+)/.exec(readFileSync(`/proc/${pid}/environ`, 'utf8'))![1]

const segmentsOf = (spool: string) =>
  existsSync(spool)
    ? readdirSync(spool)
        .filter((d) => d.startsWith('worker-'))
        .flatMap((d) =>
          readdirSync(join(spool, d))
            .filter((f) => f.endsWith(CLICK_SPOOL.suffix))
            .map((f) => `${d}/${f}`),
        )
    : []

describe('REDIRECT_WORKERS=2', () => {
  // startStack runs its own redis-server; .ci/run installs it, so both CI passes run this.
  test.skipIf(!redisServerBinary)(
    'a worker killed under load: every answered click stored exactly once, none twice',
    async () => {
      const stack = await startStack({ prefix: 'workers-', env: { REDIRECT_WORKERS: '2', CLICK_FLUSH_MS: '1000' } })
      try {
        const supervisor = stack.redirector.proc.pid
        const spool = join(stack.dataDir, 'click-spool')
        const workers = await eventually(
          async () => childrenOf(supervisor),
          (pids) => pids.length === 2,
          20_000,
          { what: 'two workers' },
        )
        const link = await shorten(stack.api.url, 'https://example.com/workers')
        const end = Date.now() + 4000
        const load = clickLoad(link.short_url, CLIENTS, { until: () => Date.now() > end })
        await Bun.sleep(1500)
        const [victim, survivor] = workers.value
        const victimDir = `worker-${workerIndexOf(victim!)}`
        process.kill(victim!, 'SIGKILL')
        // The killed worker had answered clicks not yet shipped (1 s flush): its successor must replay them.
        expect(segmentsOf(spool).filter((s) => s.startsWith(`${victimDir}/`)).length, "the killed worker's unshipped segments").toBeGreaterThan(0)
        const result = await load
        expect(result.received.size, stack.redirector.output()).toBeGreaterThan(100)

        // The supervisor started a new worker in the killed one's place; the other never stopped.
        const after = await eventually(
          async () => childrenOf(supervisor),
          (pids) => pids.length === 2 && !pids.includes(victim!),
          20_000,
          { what: 'the killed worker replaced' },
        )
        expect(after.value).toContain(survivor!)
        expect(stack.redirector.output()).toContain('exited')

        await eventually(
          async () => segmentsOf(spool),
          (left) => left.length === 0,
          30_000,
          { what: "every worker's spool shipped" },
        )
        expectEachAnsweredClickOnce(await clickRowsOf(stack.clickhouse, link.alias), result)

        // SIGTERM: both workers drain, then the supervisor exits cleanly.
        expect(await stack.redirector.stop(), stack.redirector.output()).toBe(0)
        expect(
          after.value.filter((pid) => existsSync(`/proc/${pid}`)),
          'workers left running',
        ).toEqual([])
      } finally {
        await stack.stop()
      }
    },
    180_000,
  )

  test.skipIf(!redisServerBinary)(
    'a supervisor killed with SIGKILL takes its workers with it: none is left holding the port',
    async () => {
      const stack = await startStack({ prefix: 'workers-orphan-', env: { REDIRECT_WORKERS: '2' } })
      try {
        const supervisor = stack.redirector.proc.pid
        const workers = await eventually(
          async () => childrenOf(supervisor),
          (pids) => pids.length === 2,
          20_000,
          { what: 'two workers' },
        )
        await stack.redirector.stop('SIGKILL')
        await eventually(
          async () => workers.value.filter((pid) => existsSync(`/proc/${pid}`)),
          (alive) => alive.length === 0,
          30_000,
          { what: 'the workers gone' },
        )
        // The port is free again: a new server can listen on it without sharing.
        const port = Number(new URL(stack.redirector.url).port)
        const probe = Bun.serve({ port, fetch: () => new Response('probe') })
        probe.stop(true)
      } finally {
        await stack.stop()
      }
    },
    120_000,
  )
})
