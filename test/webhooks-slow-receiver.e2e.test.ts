// A slow receiver slows only itself (docs/webhooks.md: at most two attempts in flight to one endpoint, 16
// in all, per process). Account A's receiver answers each request after 10 s; with A's endpoint holding
// its two slots and more of its events waiting, account B's link.created still reaches B's receiver while
// A's answers are held. B's latency, from its shorten's answer to its arrival, is printed; the test asserts
// the order (B arrived while A was held) and that B's latency stayed far below A's 10 s, not a tight
// figure on a loaded machine (bench/webhooks.ts measures latency). The product runs on the run's database
// (the embedded default on PGlite, or src/api.ts on DATABASE_URL).
import { expect, test } from 'bun:test'
import type { TestAccount } from './support/fixtures'
import { until } from './support/wait'
import { arrivals, bulkLinks, callOver, endpointOver, gate, startProduct, startReceiver } from './support/webhooks'

const A_EVENTS = 20
/** A's receiver answers after this long (the attempt's own limit is 10 s too: send.ts). */
const SLOW_MS = 10_000
const DEADLINE_MS = 120_000

test("a receiver that answers after 10 s does not hold up another account's delivery", async () => {
  const product = await startProduct({ prefix: 'webhooks-slow-', accounts: 2 })
  const { url } = product.processes[0]!
  const [a, b] = product.accounts as [TestAccount, TestAccount]
  const slow = startReceiver()
  const fast = startReceiver()
  const release = gate()
  let held = 0
  slow.answer(async () => {
    held++
    await Promise.race([release.wait, Bun.sleep(SLOW_MS)])
    held--
    return 200
  })
  // What A's receiver had done when B's event arrived: the order the test asserts.
  let heldWhenBArrived = -1
  let aAnsweredWhenBArrived = -1
  fast.answer(() => {
    heldWhenBArrived = held
    aAnsweredWhenBArrived = slow.received.filter((r) => r.status !== undefined).length
    return 200
  })
  const endpoints: Array<{ key: string; id: string }> = []
  try {
    const slowEndpoint = await endpointOver(url, a.key, slow.url)
    endpoints.push({ key: a.key, id: slowEndpoint.id })
    const fastEndpoint = await endpointOver(url, b.key, fast.url)
    endpoints.push({ key: b.key, id: fastEndpoint.id })
    const aAliases = await bulkLinks(url, a.key, A_EVENTS, 'slow')
    // A's endpoint has its two slots taken by held requests, and more events waiting behind them.
    await until(
      () => held >= 2,
      () => `${held} of A's requests held\n${product.processes[0]!.output()}`,
      DEADLINE_MS,
    )

    const shortened = await callOver(url, b.key, 'POST', '/api/v1/shorten', { url: 'https://example.com/fast' })
    expect(shortened.status, shortened.text).toBe(200)
    const answeredAt = performance.now()
    await until(
      () => fast.received.length > 0,
      () => `B's event, ${held} of A's held\n${product.processes[0]!.output()}`,
      DEADLINE_MS,
    )
    const bLatencyMs = fast.received[0]!.at - answeredAt
    console.info(`B's event arrived ${Math.round(bLatencyMs)} ms after its shorten answered, with ${heldWhenBArrived} of A's requests held (each for up to ${SLOW_MS / 1000} s)`)
    const [bEvent] = arrivals(fast, fastEndpoint.secret)
    expect(bEvent?.invalid, "B's event verifies").toBeUndefined()
    expect(bEvent?.alias).toBe(shortened.body.data.alias)
    expect(heldWhenBArrived, "A's requests still held when B's arrived").toBeGreaterThanOrEqual(1)
    expect(aAnsweredWhenBArrived, "A's requests answered before B's arrived").toBe(0)
    expect(bLatencyMs).toBeLessThan(SLOW_MS / 2)

    // A's events are delivered too once its receiver speeds up.
    release.open()
    const aDelivered = () =>
      new Set(
        arrivals(slow, slowEndpoint.secret)
          .filter((x) => x.status === 200)
          .map((x) => x.alias),
      )
    await until(
      () => aDelivered().size >= A_EVENTS,
      () => `${aDelivered().size} of A's ${A_EVENTS} delivered`,
      DEADLINE_MS,
    )
    expect(aDelivered()).toEqual(new Set(aAliases))
  } finally {
    release.open()
    await Promise.all(endpoints.map(({ key, id }) => callOver(url, key, 'DELETE', `/api/v1/webhooks/${id}`).catch(() => {})))
    slow.stop()
    fast.stop()
    await product.stop()
  }
}, 300_000)
