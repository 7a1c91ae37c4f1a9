// Two API processes (src/api.ts) on one PostgreSQL send one outbox (decision 0038: each claims due
// deliveries with FOR UPDATE SKIP LOCKED and a lease, so several processes never send one attempt twice).
// 1,000 link.created events, made through both processes, reach a loopback receiver that answers 200
// and verifies each request with the npm package standardwebhooks: every event arrives, none twice, and
// both processes sent a share of them (each process's own /metrics counts its attempts).
// Skipped without DATABASE_URL: PGlite belongs to one process. CI's services pass sets it and runs this.
import { describe, expect, test } from 'bun:test'
import { scrapeMetrics } from './support/metrics'
import type { Child } from './support/processes'
import { until } from './support/wait'
import { arrivals, bulkLinks, callOver, deliveriesOver, endpointOver, startProduct, startReceiver } from './support/webhooks'

const EVENTS = 1000
/** Generous: the 1,000 take seconds on a quiet machine; a loaded 2-core one may take many times that. */
const DEADLINE_MS = 150_000

const databaseUrl = process.env.DATABASE_URL
if (!databaseUrl) console.info('test/webhooks-two-processes.e2e.test.ts skipped: it needs DATABASE_URL (the services pass) for two API processes to share the outbox')

/** Attempts a process recorded, by outcome, from its /metrics. */
async function attemptsOf(url: string): Promise<Record<string, number>> {
  const samples = await scrapeMetrics(url)
  const out: Record<string, number> = {}
  for (const [name, value] of samples) {
    const outcome = /^linkservice_webhook_attempts_total\{outcome="(\w+)"\}$/.exec(name)?.[1]
    if (outcome) out[outcome] = value
  }
  return out
}

describe.skipIf(!databaseUrl)('webhooks from two API processes (needs DATABASE_URL)', () => {
  test(`${EVENTS} events made through two processes: each delivered exactly once, by both dispatchers`, async () => {
    const product = await startProduct({ prefix: 'webhooks-two-', processes: 2 })
    const receiver = startReceiver()
    const [a, b] = product.processes as [Child, Child]
    const { key } = product.accounts[0]!
    const logs = () => product.processes.map((p) => p.output()).join('\n')
    let endpoint: { id: string; secret: string } | undefined
    try {
      endpoint = await endpointOver(a.url, key, receiver.url)
      const started = performance.now()
      // Ten bulk requests of 100, alternating between the processes, at once.
      const batches = await Promise.all(Array.from({ length: EVENTS / 100 }, (_, i) => bulkLinks((i % 2 ? b : a).url, key, 100, `two-${i}`)))
      const aliases = new Set(batches.flat())
      expect(aliases.size).toBe(EVENTS)
      const ids = () => new Set(receiver.received.map((r) => r.headers['webhook-id']))
      await until(
        () => ids().size >= EVENTS,
        () => `${ids().size} of ${EVENTS} events arrived\n${logs()}`,
        DEADLINE_MS,
      ).catch(async (error) => {
        const left = (await deliveriesOver(a.url, key, endpoint!.id)).filter((d) => d.status !== 'delivered')
        throw new Error(`${(error as Error).message}\nnot delivered: ${JSON.stringify(left.slice(0, 5))}`)
      })
      const allArrivedMs = performance.now() - started

      // Every request the receiver got is recorded by a dispatcher (none still in flight), and every
      // delivery is recorded delivered at its first attempt: nothing more can come.
      let split: Record<string, number>[] = []
      const settled = async () => {
        split = await Promise.all([a, b].map((p) => attemptsOf(p.url)))
        const recorded = split.reduce((sum, s) => sum + (s.delivered ?? 0) + (s.retry ?? 0) + (s.failed ?? 0), 0)
        return recorded === receiver.received.length
      }
      await until(settled, () => `attempts recorded ${JSON.stringify(split)}, requests received ${receiver.received.length}`, DEADLINE_MS)
      const deliveries = await deliveriesOver(a.url, key, endpoint.id)
      expect(deliveries.length).toBe(EVENTS)
      expect(deliveries.filter((d) => d.status !== 'delivered' || d.attempt !== 1).slice(0, 3)).toEqual([])

      const got = arrivals(receiver, endpoint.secret)
      expect(got.filter((x) => x.invalid).slice(0, 3), 'requests that did not verify').toEqual([])
      const seen = new Map<string, number>()
      for (const x of got) seen.set(x.id, (seen.get(x.id) ?? 0) + 1)
      expect([...seen].filter(([, n]) => n > 1).slice(0, 5), 'webhook-ids that arrived more than once').toEqual([])
      expect(got.length).toBe(EVENTS)
      expect(new Set(got.map((x) => x.alias))).toEqual(aliases)

      const delivered = split.map((s) => s.delivered ?? 0)
      console.info(`${EVENTS} events over two API processes: all arrived ${(allArrivedMs / 1000).toFixed(1)} s after the first bulk request; delivered by A ${delivered[0]}, by B ${delivered[1]}`)
      expect(delivered[0]! + delivered[1]!).toBe(EVENTS)
      expect(
        delivered.every((n) => n > 0),
        `each process sent some: ${delivered}`,
      ).toBe(true)
    } finally {
      // The outbox is shared with later runs: this endpoint's rows go with it.
      if (endpoint) await callOver(a.url, key, 'DELETE', `/api/v1/webhooks/${endpoint.id}`).catch(() => {})
      receiver.stop()
      await product.stop()
    }
  }, 300_000)
})
