// A wrong code answers the same for an address with an account and one without, in every order of
// events: fired at once after POST /signin (before the code's row is written), while the database
// holds the row back, and after it is written.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { createApi } from '../../app'
import type { Db } from '../../db/client'
import { signInCodes } from '../../db/schema'
import { testApi, testConfig } from '../../../test/support/api'
import { newAccount } from '../../../test/support/fixtures'
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp'
import { uniqueEmail } from '../../../test/support/signup'
import { askForCode, Browser, waitForMail, type PageResult } from '../../../test/support/signin'
import { MAX_SIGN_IN_ATTEMPTS } from './codes'

let sink: SmtpSink
let db: Db
let app: ReturnType<typeof createApi>
let gate: Promise<void> = Promise.resolve()

/** The test database, whose transactions (the code's row is written in one) wait while the gate is shut. */
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

afterAll(async () => {
  await sink.close()
})

/** What a person sees of an answer, without what differs per request (ids, tokens, the address). */
function seen(page: PageResult, email: string): string {
  return `${page.status} ${page.headers.get('retry-after') ?? ''} ${page.text.replaceAll(email, 'EMAIL').replace(/value="[^"]*"/g, 'value=""')}`
}

const WRONG = '000000'

/** Asks a code for `email` and sends a wrong one in the same turn as the answer arrives; then `more` wrong ones. */
async function wrongCodes(email: string, more: number, between?: () => Promise<void>): Promise<string[]> {
  const browser = new Browser(app)
  const form = await askForCode(browser, email)
  const send = () => browser.post('/signin/code', { attempt: form.attempt, code: WRONG, next: '', csrf: form.csrf })
  const answers = [await send()]
  await between?.()
  for (let i = 0; i < more; i++) answers.push(await send())
  return answers.map((page) => seen(page, email))
}

const accountEmail = async () => `${(await newAccount(db)).id.toLowerCase()}@example.test`

describe('wrong codes tell nothing about the address', () => {
  test('fired at once after the request, many times: every answer is the same for both kinds of address', async () => {
    for (let trial = 0; trial < 25; trial++) {
      const known = await accountEmail()
      const [knownAnswers, unknownAnswers] = await Promise.all([wrongCodes(known, MAX_SIGN_IN_ATTEMPTS), wrongCodes(uniqueEmail('nobody'), MAX_SIGN_IN_ATTEMPTS)])
      expect(knownAnswers, `trial ${trial}`).toEqual(unknownAnswers)
    }
    // The answers counted down to the refusal: 4, 3, 2, 1 left, then 429, and 429 after.
    const answers = await wrongCodes(uniqueEmail('nobody'), MAX_SIGN_IN_ATTEMPTS)
    expect(answers.map((a) => a.slice(0, 3))).toEqual(['400', '400', '400', '400', '429', '429'])
  })

  test('with the row held back until after the first wrong code: the same answers as an unknown address', async () => {
    const known = await accountEmail()
    let open = () => {}
    gate = new Promise<void>((resolve) => (open = resolve))
    const knownAnswers = await wrongCodes(known, 2, async () => {
      open()
      // The positive marker: the row is there before the next wrong codes.
      await waitForMail(sink, known)
      const rows = await db
        .select()
        .from(signInCodes)
        .where(eq(signInCodes.accountId, (await db.query.accounts.findFirst({ where: (a, { eq: is }) => is(a.email, known) }))!.id))
      expect(rows).toHaveLength(1)
    })
    const unknownAnswers = await wrongCodes(uniqueEmail('nobody'), 2)
    expect(knownAnswers).toEqual(unknownAnswers)
    expect(knownAnswers[2]).toContain(`${MAX_SIGN_IN_ATTEMPTS - 3} attempts left`)
  })
})
