// No event lost to a crash (decision 0038: the event commits with its change; a process that dies
// mid-attempt leaves a lease that runs out, and another start sends the delivery again). The product runs
// on the run's database (the embedded default on PGlite, or src/api.ts on DATABASE_URL); 500 link.created
// events are pending when it is killed with SIGKILL: the receiver answered 503 to the first attempts and
// then holds its answers, so some deliveries are waiting for a retry and two are in flight. Started again
// on the same DATA_DIR and database, with the receiver answering 200, it delivers all 500: each event's
// webhook-id arrives answered 2xx, every attempt of an event carries the same webhook-id, and every
// request verifies with the npm package standardwebhooks.
import { expect, test } from 'bun:test'
import { until } from './support/wait'
import { arrivals, bulkLinks, callOver, deliveriesOver, endpointOver, gate, startProduct, startReceiver } from './support/webhooks'

const EVENTS = 500
/** Requests answered 503 before the receiver starts holding its answers. */
const REFUSED = 100
/**
 * The deliveries in flight at the kill are sent again once their lease runs out after the restart: 15 s
 * here, the least WEBHOOK_LEASE_SECONDS takes, instead of the default minute.
 */
const LEASE_SECONDS = 15
const DEADLINE_MS = 240_000

test(`SIGKILL with ${EVENTS} events pending: after a restart on the same data every one is delivered, with its webhook-id`, async () => {
  const product = await startProduct({ prefix: 'webhooks-crash-', env: { WEBHOOK_LEASE_SECONDS: String(LEASE_SECONDS) } })
  const receiver = startReceiver()
  const held = gate()
  let holding = 0
  receiver.answer(async (_, index) => {
    if (index < REFUSED) return 503
    holding++
    await held.wait
    // Released after the kill: nobody reads this answer, so it must not count as delivered.
    return 503
  })
  const { key } = product.accounts[0]!
  let endpoint: { id: string; secret: string } | undefined
  try {
    endpoint = await endpointOver(product.processes[0]!.url, key, receiver.url)
    const aliases = await bulkLinks(product.processes[0]!.url, key, EVENTS, 'crash')
    // Some attempts answered 503 (due again), two held in flight (two to one endpoint, docs/webhooks.md).
    await until(
      () => holding >= 2,
      () => `${receiver.received.length} requests, ${holding} held\n${product.processes[0]!.output()}`,
      DEADLINE_MS,
    )
    await product.processes[0]!.stop('SIGKILL')
    const beforeKill = arrivals(receiver, endpoint.secret)
    const deliveredBefore = new Set(beforeKill.filter((x) => x.status !== undefined && x.status < 300).map((x) => x.id))
    expect(deliveredBefore.size, 'nothing was answered 2xx before the kill').toBe(0)
    receiver.answer(() => 200)
    held.open()

    const restarted = await product.restart(0)
    const delivered = () =>
      new Set(
        arrivals(receiver, endpoint!.secret)
          .filter((x) => x.status === 200)
          .map((x) => x.alias),
      )
    await until(
      () => delivered().size >= EVENTS,
      () => `${delivered().size} of ${EVENTS} delivered\n${restarted.output()}`,
      DEADLINE_MS,
    )

    const got = arrivals(receiver, endpoint.secret)
    expect(got.filter((x) => x.invalid).slice(0, 3), 'requests that did not verify').toEqual([])
    expect(delivered()).toEqual(new Set(aliases))
    // One webhook-id per event, on every attempt: the ids refused or held before the kill came again.
    const idsOf = new Map<string, Set<string>>()
    for (const x of got) idsOf.set(x.alias!, (idsOf.get(x.alias!) ?? new Set()).add(x.id))
    expect([...idsOf].filter(([, ids]) => ids.size > 1).slice(0, 3), 'events sent under two webhook-ids').toEqual([])
    const deliveredIds = new Set(got.filter((x) => x.status === 200).map((x) => x.id))
    expect(beforeKill.filter((x) => !deliveredIds.has(x.id)).slice(0, 3), 'attempted before the kill, never delivered after').toEqual([])

    const deliveries = await deliveriesOver(restarted.url, key, endpoint.id)
    expect(deliveries.length).toBe(EVENTS)
    expect(deliveries.filter((d) => d.status !== 'delivered').slice(0, 3)).toEqual([])
    console.info(
      `${product.entry} killed with ${EVENTS} events pending (${beforeKill.length} attempts made, ${holding} held in flight): all ${EVENTS} delivered after the restart, ${got.length - beforeKill.length} requests since`,
    )
  } finally {
    held.open()
    if (endpoint && product.processes[0]?.proc.exitCode === null) await callOver(product.processes[0].url, key, 'DELETE', `/api/v1/webhooks/${endpoint.id}`).catch(() => {})
    receiver.stop()
    await product.stop()
  }
}, 420_000)
