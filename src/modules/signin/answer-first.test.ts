// POST /signin must not tell by its timing whether an address has an account. Measured on loopback
// before this was fixed, an address with an account answered in 1.8–2.6 ms against 0.7–1.0 ms (the
// stored code is a transaction an unknown address skips). Now the answer comes before any work that
// depends on the address; this test holds the database's transactions shut and shows that the answer
// for an account's address still arrives, the same page as for an unknown one, and that the code is
// stored once they open.
import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { createApi } from '../../app'
import { signInCodes } from '../../db/schema'
import type { Db } from '../../db/client'
import { testApi, testConfig } from '../../../test/support/api'
import { newAccount } from '../../../test/support/fixtures'
import { askForCode, Browser, showPage } from '../../../test/support/signin'
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp'

let app: ReturnType<typeof createApi>
let db: Db
let sink: SmtpSink
let open: () => void = () => {}
let gate: Promise<void> = Promise.resolve()

/** The test database, whose transactions wait while the gate is shut. */
function gated(real: Db): Db {
  return new Proxy(real, {
    get(target, prop, receiver) {
      if (prop !== 'transaction') return Reflect.get(target, prop, receiver)
      return async (...args: Parameters<Db['transaction']>) => {
        await gate
        return target.transaction(...args)
      }
    },
  })
}

beforeAll(async () => {
  sink = await startSmtpSink()
  const api = await testApi()
  db = api.deps.db
  app = createApi({ ...api.deps, config: testConfig({ SMTP_URL: sink.url }), db: gated(db) })
})

/** The code page without what differs per request (the attempt id, the CSRF token, the address). */
const shape = (html: string, email: string) => html.replaceAll(email, 'EMAIL').replace(/value="[^"]*"/g, 'value=""')

describe('POST /signin answers before the work that depends on the address', () => {
  test("with the database holding every transaction, an account's address still gets its answer; the code is stored after", async () => {
    gate = new Promise<void>((resolve) => (open = resolve))
    const { id } = await newAccount(db)
    const email = `${id.toLowerCase()}@example.test`
    const known = await askForCode(new Browser(app), email)
    const [pending] = await db.select().from(signInCodes).where(eq(signInCodes.id, known.attempt))
    expect(pending, 'nothing stored before the answer').toBeUndefined()

    const stranger = `nobody-${crypto.randomUUID()}@example.test`
    const unknown = await askForCode(new Browser(app), stranger)
    expect(known.page.status, showPage(known.page)).toBe(unknown.page.status)
    expect(shape(known.page.text, email)).toBe(shape(unknown.page.text, stranger))

    open()
    const deadline = Date.now() + 20_000
    let stored: unknown[] = []
    while (stored.length === 0 && Date.now() < deadline) {
      await Bun.sleep(20)
      stored = await db.select().from(signInCodes).where(eq(signInCodes.id, known.attempt))
    }
    expect(stored, 'the code is stored once the transaction may run').toHaveLength(1)
    expect(await db.select().from(signInCodes).where(eq(signInCodes.id, unknown.attempt))).toHaveLength(0)
  })
})
