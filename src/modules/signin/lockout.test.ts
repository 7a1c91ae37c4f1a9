// Nobody can lock a person out of signing in by asking codes for their address: the limits per address
// count per requesting network, the owner's own repeat within the minute gets the pending code mailed
// again, and a code already mailed stays valid whoever asks after. What still stops mail bombing: five
// mails an hour per address and network, twenty per address from every network.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testApi, testConfig } from '../../../test/support/api'
import { newAccount } from '../../../test/support/fixtures'
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp'
import { uniqueEmail } from '../../../test/support/signup'
import { askForCode, Browser, showPage, signInCodeFrom, waitForMail, type CodeForm } from '../../../test/support/signin'
import { SIGN_IN_RATES } from './codes'

let sink: SmtpSink
let api: Awaited<ReturnType<typeof testApi>>

beforeAll(async () => {
  sink = await startSmtpSink()
  api = await testApi({ config: testConfig({ SMTP_URL: sink.url }) })
})

afterAll(async () => {
  await sink.close()
})

/** Addresses in a /24 no other test uses: `host` picks the last octet. */
function randomNetwork(): (host: number) => string {
  const octet = () => Math.floor(Math.random() * 250) + 1
  const prefix = `${(octet() % 90) + 11}.${octet()}.${octet()}`
  return (host) => `${prefix}.${host}`
}

const accountEmail = async () => `${(await newAccount(api.deps.db)).id.toLowerCase()}@example.test`

async function signInWith(browser: Browser, form: CodeForm, code: string) {
  return browser.post('/signin/code', { attempt: form.attempt, code, next: '', csrf: form.csrf })
}

const hasSession = (browser: Browser) => [...browser.cookies.keys()].some((name) => name.endsWith('ls_session'))

describe('a stranger asking codes for an address', () => {
  test('does not stop the owner asking from another network in the same minute; the owner signs in', async () => {
    const email = await accountEmail()
    const stranger = await askForCode(new Browser(api.app, randomNetwork()(9)), email)
    expect(stranger.page.status).toBe(200)
    await waitForMail(sink, email, 1)

    const owner = new Browser(api.app, randomNetwork()(7))
    const form = await askForCode(owner, email)
    expect(form.page.status, showPage(form.page)).toBe(200)
    expect(form.attempt).not.toBe(stranger.attempt)
    const done = await signInWith(owner, form, signInCodeFrom(await waitForMail(sink, email, 2)))
    expect(done.status, showPage(done)).toBe(303)
    expect(hasSession(owner)).toBe(true)
  })

  test(`past ${SIGN_IN_RATES.perAddressNetworkHour.limit} an hour the stranger's network is refused and the owner's is not`, async () => {
    const email = await accountEmail()
    const strangers = randomNetwork()
    // Each request from a new address of the same /24, so the resend window of one address does not apply.
    const attempts = new Set<string>()
    for (let i = 0; i < SIGN_IN_RATES.perAddressNetworkHour.limit; i++) {
      const form = await askForCode(new Browser(api.app, strangers(10 + i)), email)
      expect(form.page.status, showPage(form.page)).toBe(200)
      attempts.add(form.attempt)
    }
    // Another address of the network never receives a pending attempt that is not its own.
    expect(attempts.size).toBe(SIGN_IN_RATES.perAddressNetworkHour.limit)
    const refused = new Browser(api.app, strangers(99))
    const page = await refused.get('/signin')
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)![1]!
    const over = await refused.post('/signin', { email, next: '', csrf })
    expect(over.status, showPage(over)).toBe(429)
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0)

    const owner = new Browser(api.app, randomNetwork()(7))
    const form = await askForCode(owner, email)
    const before = SIGN_IN_RATES.perAddressNetworkHour.limit
    const done = await signInWith(owner, form, signInCodeFrom(await waitForMail(sink, email, before + 1)))
    expect(done.status, showPage(done)).toBe(303)
  })

  test('a code already mailed stays valid when someone else asks again', async () => {
    const email = await accountEmail()
    const owner = new Browser(api.app, randomNetwork()(7))
    const form = await askForCode(owner, email)
    const code = signInCodeFrom(await waitForMail(sink, email, 1))
    await askForCode(new Browser(api.app, randomNetwork()(9)), email)
    const second = signInCodeFrom(await waitForMail(sink, email, 2))
    expect(second).not.toBe(code)
    const done = await signInWith(owner, form, code)
    expect(done.status, showPage(done)).toBe(303)
  })

  test('signing in retires the other pending codes of the account', async () => {
    const email = await accountEmail()
    const first = new Browser(api.app, randomNetwork()(7))
    const firstForm = await askForCode(first, email)
    const firstCode = signInCodeFrom(await waitForMail(sink, email, 1))
    const second = new Browser(api.app, randomNetwork()(7))
    const secondForm = await askForCode(second, email)
    const secondCode = signInCodeFrom(await waitForMail(sink, email, 2))
    expect((await signInWith(second, secondForm, secondCode)).status).toBe(303)
    const late = await signInWith(first, firstForm, firstCode)
    expect(late.status, showPage(late)).toBe(400)
    expect(hasSession(first)).toBe(false)
  })
})

describe('the owner asking again within the minute', () => {
  test('gets the code form for the same attempt, the same code mailed again, and signs in with it', async () => {
    const email = await accountEmail()
    const owner = new Browser(api.app, randomNetwork()(7))
    const first = await askForCode(owner, email)
    const code = signInCodeFrom(await waitForMail(sink, email, 1))
    const again = await askForCode(owner, email)
    expect(again.page.status, showPage(again.page)).toBe(200)
    expect(again.attempt).toBe(first.attempt)
    expect(signInCodeFrom(await waitForMail(sink, email, 2))).toBe(code)
    const done = await signInWith(owner, again, code)
    expect(done.status, showPage(done)).toBe(303)
  })

  test('an address without an account gets the same answers (same attempt again, no mail)', async () => {
    const known = await accountEmail()
    const unknown = uniqueEmail('nobody')
    const network = randomNetwork()
    const answers = []
    for (const email of [known, unknown]) {
      const browser = new Browser(api.app, network(email === known ? 7 : 8))
      const first = await askForCode(browser, email)
      const again = await askForCode(browser, email)
      answers.push({ status: again.page.status, same: again.attempt === first.attempt, text: again.page.text.replaceAll(again.attempt, 'A').replaceAll(again.csrf, 'C').replaceAll(email, 'E') })
    }
    expect(answers[1]).toEqual(answers[0]!)
    expect(answers[0]!.same).toBe(true)
    await waitForMail(sink, known, 2)
    expect(sink.to(unknown)).toEqual([])
  })
})

describe('what still stops mail bombing', () => {
  test(`${SIGN_IN_RATES.perAddressHour.limit} mails an hour per address from every network together, then 429 from any network`, async () => {
    const email = await accountEmail()
    const perNetwork = SIGN_IN_RATES.perAddressNetworkHour.limit
    let sent = 0
    while (sent < SIGN_IN_RATES.perAddressHour.limit) {
      const network = randomNetwork()
      for (let i = 0; i < perNetwork && sent < SIGN_IN_RATES.perAddressHour.limit; i++, sent++) {
        const form = await askForCode(new Browser(api.app, network(10 + i)), email)
        expect(form.page.status, `request ${sent + 1}: ${showPage(form.page)}`).toBe(200)
      }
    }
    const late = new Browser(api.app, randomNetwork()(7))
    const page = await late.get('/signin')
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)![1]!
    const over = await late.post('/signin', { email, next: '', csrf })
    expect(over.status, showPage(over)).toBe(429)
    await waitForMail(sink, email, SIGN_IN_RATES.perAddressHour.limit)
  })

  test("a repeat within the minute past the network's hourly mails answers the form and mails nothing more", async () => {
    const email = await accountEmail()
    const owner = new Browser(api.app, randomNetwork()(7))
    const first = await askForCode(owner, email)
    for (let i = 1; i < SIGN_IN_RATES.perAddressNetworkHour.limit + 3; i++) {
      const again = await askForCode(owner, email)
      expect(again.attempt, `repeat ${i}`).toBe(first.attempt)
    }
    await waitForMail(sink, email, SIGN_IN_RATES.perAddressNetworkHour.limit)
    // A later request of another kind, answered after every mail above was sent, marks the end.
    const marker = await accountEmail()
    await askForCode(new Browser(api.app, randomNetwork()(7)), marker)
    await waitForMail(sink, marker, 1)
    expect(sink.to(email)).toHaveLength(SIGN_IN_RATES.perAddressNetworkHour.limit)
  })
})
