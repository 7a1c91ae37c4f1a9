// Guessing a link's password from many addresses: each address has 5 tries per 15 minutes, and the
// link 30 from all addresses together; past that it is locked (429 with Retry-After) until the window
// ends, for every address. Every attempt counts, right ones too: the bound is on guesses.
import { beforeAll, describe, expect, test } from 'bun:test'
import { links } from '../../src/db/schema'
import { newId } from '../../src/lib/ids'
import { UNLOCK_LINK_RATE, UNLOCK_RATE } from '../../src/modules/internal/service'
import { call, show, testApi, TEST_INTERNAL_SECRET, uniqueName, type TestApp } from '../support/api'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp
const secret = { 'x-internal-secret': TEST_INTERNAL_SECRET }

beforeAll(async () => {
  api = await testApi()
  app = api.app
})

async function protectedLink(): Promise<string> {
  const id = newId('link')
  const passwordHash = await Bun.password.hash('correct horse', { algorithm: 'argon2id', memoryCost: 19_456, timeCost: 2 })
  await api.deps.db.insert(links).values({ id, domain: 'sho.rt', alias: uniqueName('pw').slice(0, 20), url: 'https://example.com/secret', passwordHash })
  return id
}

const attempt = (link_id: string, ip: string, password = `guess-${crypto.randomUUID()}`) => call(app, 'POST', '/internal/unlock', { body: { link_id, password, ip }, headers: secret })

describe('password attempts on one link', () => {
  test('30 addresses × 1 guess each lock the link for everyone, the right password included', async () => {
    expect(UNLOCK_LINK_RATE.limit).toBeGreaterThan(UNLOCK_RATE.limit)
    const id = await protectedLink()
    for (let i = 0; i < UNLOCK_LINK_RATE.limit; i++) {
      const res = await attempt(id, `203.0.113.${i}-${crypto.randomUUID()}`)
      expect(res.status, `attempt ${i + 1}: ${show(res)}`).toBe(401)
    }
    const locked = await attempt(id, `198.51.100.7-${crypto.randomUUID()}`, 'correct horse')
    expect(locked.status, show(locked)).toBe(429)
    expect(locked.body.error).toBe('RATE_LIMITED')
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0)
  })

  test('one address stops at 5 while the link stays open to others', async () => {
    const id = await protectedLink()
    const ip = `192.0.2.1-${crypto.randomUUID()}`
    for (let i = 0; i < UNLOCK_RATE.limit; i++) expect((await attempt(id, ip)).status).toBe(401)
    expect((await attempt(id, ip)).status).toBe(429)
    const other = await attempt(id, `192.0.2.2-${crypto.randomUUID()}`, 'correct horse')
    expect(other.status, show(other)).toBe(200)
  })
})
