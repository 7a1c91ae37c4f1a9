// A receiver that is down for a minute loses nothing: its endpoint's port refuses connections while 100
// link.created events are attempted again and again on the retry schedule, then a receiver starts on that
// port and every event arrives, verified with the npm package standardwebhooks, each under the webhook-id
// it always had. The product runs on the run's database (the embedded default on PGlite, or src/api.ts
// on DATABASE_URL), with a retry every 10 s after the first few: still pending after the minute, and
// due again soon after the receiver is back. WEBHOOK_DOWN_TEST_S sets the time down in seconds instead
// (at least 15, for three refused attempts): `npm test` and CI's embedded pass keep the minute, CI's
// services pass sets it short (.ci/run's OUTAGE_SHORT_S); what the receiver's absence exercises is the
// retry schedule, the same on either pass's database.
import { expect, test } from 'bun:test'
import { freePort } from './support/processes'
import { until } from './support/wait'
import { arrivals, bulkLinks, callOver, deliveriesOver, endpointOver, startProduct, startReceiver, type Receiver } from './support/webhooks'

const EVENTS = 100
const DOWN_MS = Math.max(15, Number(process.env.WEBHOOK_DOWN_TEST_S || 60)) * 1000
/**
 * 1, 3 s, then every 5 s until 93 s after the first attempt (20 retries, the most WEBHOOK_RETRY_SCHEDULE
 * takes): pending all through the outage even with the jitter (at least 84 s), and due soon after it.
 */
const RETRY_SCHEDULE = ['1', '2', ...Array(18).fill('5')].join(',')
const DEADLINE_MS = 120_000

test(`a receiver refusing connections for ${DOWN_MS / 1000} s, then up: all ${EVENTS} events arrive`, async () => {
  const product = await startProduct({ prefix: 'webhooks-down-', env: { WEBHOOK_RETRY_SCHEDULE: RETRY_SCHEDULE } })
  const { url } = product.processes[0]!
  const { key } = product.accounts[0]!
  const port = await freePort() // nothing listens there until the minute is over
  let receiver: Receiver | undefined
  let endpoint: { id: string; secret: string } | undefined
  try {
    endpoint = await endpointOver(url, key, `http://127.0.0.1:${port}/hook`)
    const aliases = await bulkLinks(url, key, EVENTS, 'down')
    const attempted = async () => (await deliveriesOver(url, key, endpoint!.id)).filter((d) => d.attempt > 0).length
    await until(async () => (await attempted()) > 0, 'a first attempt', DEADLINE_MS)
    const downSince = performance.now()
    await Bun.sleep(DOWN_MS)

    // Every delivery was tried several times, refused, and is pending still.
    const during = await deliveriesOver(url, key, endpoint.id)
    expect(during.length).toBe(EVENTS)
    expect(during.filter((d) => d.status !== 'pending' || d.attempt < 3 || d.response_status !== null).slice(0, 3)).toEqual([])
    expect(new Set(during.map((d) => d.error)), JSON.stringify(during[0])).toEqual(new Set(['could not be reached (connection or TLS failure)']))

    receiver = startReceiver('/hook', port)
    const upAt = performance.now()
    const delivered = () => new Set(arrivals(receiver!, endpoint!.secret).map((x) => x.alias))
    await until(
      () => delivered().size >= EVENTS,
      () => `${delivered().size} of ${EVENTS} arrived\n${product.processes[0]!.output()}`,
      DEADLINE_MS,
    )
    const allMs = performance.now() - upAt

    const got = arrivals(receiver, endpoint.secret)
    expect(got.filter((x) => x.invalid).slice(0, 3), 'requests that did not verify').toEqual([])
    expect(delivered()).toEqual(new Set(aliases))
    const after = await deliveriesOver(url, key, endpoint.id)
    expect(after.filter((d) => d.status !== 'delivered').slice(0, 3)).toEqual([])
    // The id each delivery was refused under is the one that arrived.
    expect(new Set(got.map((x) => x.id))).toEqual(new Set(after.map((d) => d.event_id)))
    const attempts = after.map((d) => d.attempt as number)
    console.info(
      `receiver down ${((upAt - downSince) / 1000).toFixed(0)} s: all ${EVENTS} arrived ${(allMs / 1000).toFixed(1)} s after it came up, at attempt ${Math.min(...attempts)}-${Math.max(...attempts)}`,
    )
  } finally {
    if (endpoint) await callOver(url, key, 'DELETE', `/api/v1/webhooks/${endpoint.id}`).catch(() => {})
    receiver?.stop()
    await product.stop()
  }
}, 300_000)
