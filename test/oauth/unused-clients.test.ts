// A registered client that obtained no token within 24 h of registering is unused: refused from then on
// (even before a sweep ran), and deleted by the sweep. A client that did obtain one stays. The clock is
// injected (services.now), so nothing waits a day; the sweep is called directly, as its timer would.
import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { oauthClients } from '../../src/db/schema'
import { deleteUnusedClients, UNUSED_CLIENT_TTL_MS, startUnusedClientSweep } from '../../src/modules/oauth/unused-clients'
import { testApi } from '../support/api'
import { newAccount, type TestAccount } from '../support/fixtures'
import { appFetch, authorizationUrl, connect, discoverAndRegister, openRaw, shown, type Flow } from '../support/oauth'

const HOUR = 3_600_000
let clock = Date.now()
let api: Awaited<ReturnType<typeof testApi>>
let human: TestAccount

beforeAll(async () => {
  api = await testApi({ now: () => clock })
  human = await newAccount(api.deps.db)
})

const register = () => discoverAndRegister(appFetch(api.app))
const stored = async (flow: Flow) => (await api.deps.db.select({ id: oauthClients.id }).from(oauthClients).where(eq(oauthClients.id, flow.client.client_id))).length === 1
const services = () => ({ db: api.deps.db, now: () => clock })

describe('unused clients', () => {
  test('24 h without a token: refused at authorize (unknown client) before any sweep, then deleted by it', async () => {
    clock = Date.now()
    const unused = await register()
    clock += UNUSED_CLIENT_TTL_MS - HOUR
    const early = await openRaw(unused, (await authorizationUrl(unused, 'links:read')).url)
    expect(early.status, shown(early)).toBe(302)
    clock += 2 * HOUR
    const late = await openRaw(unused, (await authorizationUrl(unused, 'links:read')).url)
    expect(late.status, shown(late)).toBe(400)
    expect(late.text, shown(late)).toContain('invalid_client')
    expect(await stored(unused), 'not deleted before the sweep').toBe(true)
    clock += HOUR // past the sweep's grace
    expect(await deleteUnusedClients(services())).toBeGreaterThanOrEqual(1)
    expect(await stored(unused)).toBe(false)
  })

  test('a client that obtained a token stays, however old; a young one without a token stays too', async () => {
    clock = Date.now()
    const used = await register()
    await connect(used, human.key, 'links:read')
    const idle = await register()
    clock += 10 * UNUSED_CLIENT_TTL_MS
    await deleteUnusedClients(services())
    expect(await stored(used)).toBe(true)
    expect(await stored(idle)).toBe(false)
    const young = await register() // registered at the sweep's own time
    await deleteUnusedClients(services())
    expect(await stored(young)).toBe(true)
    const answer = await openRaw(used, (await authorizationUrl(used, 'links:read')).url)
    expect(answer.status, shown(answer)).toBe(302)
  })

  test('the sweep is safe run by several processes at once: each client is deleted once, nothing fails', async () => {
    clock = Date.now()
    const flows = await Promise.all([register(), register(), register()])
    clock += UNUSED_CLIENT_TTL_MS + 2 * HOUR
    const counts = await Promise.all([deleteUnusedClients(services()), deleteUnusedClients(services()), deleteUnusedClients(services())])
    expect(counts.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(3)
    for (const flow of flows) expect(await stored(flow)).toBe(false)
  })

  test('the periodic sweep runs on its interval and stops', async () => {
    clock = Date.now()
    const flow = await register()
    clock += UNUSED_CLIENT_TTL_MS + 2 * HOUR
    const ran: number[] = []
    const stop = startUnusedClientSweep(services(), { intervalMs: 20, onSwept: (n) => ran.push(n) })
    const deadline = Date.now() + 10_000
    while (ran.length === 0 && Date.now() < deadline) await Bun.sleep(10)
    stop()
    expect(ran.length, 'the sweep ran').toBeGreaterThan(0)
    expect(await stored(flow)).toBe(false)
  })
})
