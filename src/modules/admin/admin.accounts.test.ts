// Suspending an account: every credential it had stops working at once (API keys, sign-in sessions, its
// Agents' tokens), sign-in is refused, its links are disabled and their reports closed, its owner is
// mailed. Restoring lifts the refusal and brings back exactly the links the suspension disabled, each to
// its former state; links disabled for other reasons, and revoked credentials, stay as they are.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq, inArray } from 'drizzle-orm'
import { decodeCachedLink, linkCacheKey } from '../../../core/link-cache'
import { accounts, links, oauthTokens, reports } from '../../db/schema'
import { createApiKey } from '../keys/verdicts'
import { agentToken } from '../../../test/support/fixtures'
import { askForCode, signInCodeFrom, waitForMail } from '../../../test/support/signin'
import { adminKit, call, insertLink, show, withSession, type Kit, type Person } from './admin-kit.test'
import { Browser } from '../../../test/support/signin'

let kit: Kit
beforeAll(async () => {
  kit = await adminKit()
}, 120_000)
afterAll(() => kit.close())

const admin = (method: string, path: string, body?: unknown) => call(kit.api.app, method, `/api/v1/admin${path}`, { token: kit.operator.adminKey, body })
const states = async (ids: string[]) => Object.fromEntries((await kit.api.deps.db.select().from(links).where(inArray(links.id, ids))).map((row) => [row.id, row.state]))

/** Signs in by mail as a person does, up to the answer of the code form. */
async function trySignIn(person: Person) {
  const browser = new Browser(kit.api.app)
  const before = kit.sink.to(person.email).length
  const form = await askForCode(browser, person.email)
  const code = signInCodeFrom(await waitForMail(kit.sink, person.email, before + 1))
  return browser.post('/signin/code', { attempt: form.attempt, code, next: '/app', csrf: form.csrf })
}

describe('POST /api/v1/admin/accounts/{id}/suspend', () => {
  test('revokes its keys, sessions and Agent tokens, refuses sign-in, disables its links, closes their reports, mails the owner', async () => {
    const owner = await kit.account()
    const ok = await insertLink(kit, owner.id, 'https://owner.example/a')
    const flagged = await insertLink(kit, owner.id, 'https://owner.example/b', { state: 'flagged', stateReason: 'reported from 3 networks' })
    const takenDown = await insertLink(kit, owner.id, 'https://owner.example/c', { state: 'disabled', stateReason: 'phishing, ticket 7' })
    const bystander = await insertLink(kit, (await kit.account()).id, 'https://bystander.example/')
    const report = await call(kit.api.app, 'POST', '/api/v1/reports', { body: { url: `https://sho.rt/${ok.alias}`, reason: 'spam' } })
    const { browser } = await kit.signIn(owner)
    const { token } = await agentToken(kit.api.app, owner, ['links:read'])
    // Every credential works before.
    expect((await call(kit.api.app, 'GET', '/api/v1/links', { token: owner.key })).status).toBe(200)
    expect((await call(kit.api.app, 'GET', '/api/v1/links', { token })).status).toBe(200)
    expect((await withSession(browser, 'GET', '/api/v1/account/keys')).status).toBe(200)

    const mailsBefore = kit.sink.to(owner.email).length
    const res = await admin('POST', `/accounts/${owner.id}/suspend`, { reason: 'phishing campaign, tickets 7-9' })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.data).toMatchObject({ account: { id: owner.id, email: owner.email, links: 3 }, links_changed: 2, api_keys_revoked: 1, sessions_revoked: 1, agent_tokens_revoked: 1, mailed: true })
    expect(res.body.data.account.suspended_at).not.toBeNull()

    for (const [what, res] of [
      ['key', await call(kit.api.app, 'GET', '/api/v1/links', { token: owner.key })],
      ['Agent token', await call(kit.api.app, 'GET', '/api/v1/links', { token })],
      ['session', await withSession(browser, 'GET', '/api/v1/account/keys')],
    ] as const) {
      expect(res.status, `${what}: ${show(res)}`).toBe(401)
    }
    const signIn = await trySignIn(owner)
    expect(signIn.status, signIn.text.slice(0, 300)).toBe(403)
    expect(signIn.text).toContain('Account suspended')
    expect(signIn.setCookies.some((c) => /session=hs_/.test(c))).toBe(false)

    expect(await states([ok.id, flagged.id, takenDown.id, bystander.id])).toEqual({ [ok.id]: 'disabled', [flagged.id]: 'disabled', [takenDown.id]: 'disabled', [bystander.id]: 'ok' })
    expect(decodeCachedLink((await kit.api.adapters.kv.get(linkCacheKey('sho.rt', ok.alias))) ?? '')?.st).toBe('disabled')
    const [closed] = await kit.api.deps.db.select().from(reports).where(eq(reports.id, report.body.data.id))
    expect(closed!.status).toBe('closed')
    const mail = kit.sink
      .to(owner.email)
      .slice(mailsBefore)
      .find((m) => /suspended/i.test(m.raw))
    expect(mail?.raw, 'the owner is told').toContain('suspended your account')
    expect(mail?.raw).not.toContain('tickets 7-9')
    const audit = (await admin('GET', '/actions?limit=10')).body.data.actions
    expect(audit.find((a: { target: string }) => a.target === owner.id)).toMatchObject({ action: 'account.suspend', reason: 'phishing campaign, tickets 7-9' })
  })

  test('a key or Agent token that outlived the suspension (made by a request in flight as it committed) is refused', async () => {
    const owner = await kit.account()
    const { token } = await agentToken(kit.api.app, owner, ['links:read'])
    expect((await admin('POST', `/accounts/${owner.id}/suspend`)).status).toBe(200)
    // What the race would leave: a key written after the revocation, a token the revocation missed.
    const lateKey = await createApiKey(kit.api.deps.db, owner.id, new Date())
    await kit.api.deps.db.update(oauthTokens).set({ revokedAt: null }).where(eq(oauthTokens.accountId, owner.id))
    for (const [what, credential] of [
      ['key', lateKey],
      ['Agent token', token],
    ] as const) {
      const res = await call(kit.api.app, 'GET', '/api/v1/links', { token: credential })
      expect(res.status, `${what}: ${show(res)}`).toBe(401)
    }
  })

  test("suspending again changes nothing and mails nobody; an operator's account cannot be suspended; an unknown id is 404", async () => {
    const owner = await kit.account()
    const first = await admin('POST', `/accounts/${owner.id}/suspend`)
    const mails = kit.sink.to(owner.email).length
    const again = await admin('POST', `/accounts/${owner.id}/suspend`)
    expect(again.status, show(again)).toBe(200)
    expect(again.body.data).toMatchObject({ account: { suspended_at: first.body.data.account.suspended_at }, links_changed: 0, api_keys_revoked: 0, mailed: false })
    expect(kit.sink.to(owner.email)).toHaveLength(mails)

    const self = await admin('POST', `/accounts/${kit.operator.id}/suspend`)
    expect(self.status, show(self)).toBe(400)
    const [operator] = await kit.api.deps.db.select().from(accounts).where(eq(accounts.id, kit.operator.id))
    expect(operator!.suspendedAt).toBeNull()
    expect((await admin('GET', '/me')).status).toBe(200)

    for (const id of ['acct_AAAAAAAAAAAAAAAAAAAAAA', 'nobody']) {
      const res = await admin('POST', `/accounts/${id}/suspend`)
      expect(res.status, show(res)).toBe(404)
      expect(res.body.error).toBe('ACCOUNT_NOT_FOUND')
    }
  })
})

describe('POST /api/v1/admin/accounts/{id}/restore', () => {
  test('sign-in works again; the links the suspension disabled come back to their former state, the others stay disabled; old keys stay revoked', async () => {
    const owner = await kit.account()
    const ok = await insertLink(kit, owner.id, 'https://restored.example/a')
    const flagged = await insertLink(kit, owner.id, 'https://restored.example/b', { state: 'flagged', stateReason: 'reported from 3 networks' })
    const before = await insertLink(kit, owner.id, 'https://restored.example/c', { state: 'disabled', stateReason: 'phishing, ticket 7' })
    const during = await insertLink(kit, owner.id, 'https://restored.example/d')
    expect((await admin('POST', `/accounts/${owner.id}/suspend`)).status).toBe(200)
    // While suspended, an operator decides on one of its links: that decision outlives the restore.
    expect((await admin('POST', `/links/${during.id}/disable`, { reason: 'confirmed phishing' })).status).toBe(200)

    const res = await admin('POST', `/accounts/${owner.id}/restore`, { reason: 'owner explained' })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.data).toMatchObject({ account: { id: owner.id, suspended_at: null }, links_changed: 2, mailed: true })
    expect(await states([ok.id, flagged.id, before.id, during.id])).toEqual({ [ok.id]: 'ok', [flagged.id]: 'flagged', [before.id]: 'disabled', [during.id]: 'disabled' })
    expect(decodeCachedLink((await kit.api.adapters.kv.get(linkCacheKey('sho.rt', ok.alias))) ?? '')?.st).toBeUndefined()

    const signIn = await trySignIn(owner)
    expect(signIn.status, signIn.text.slice(0, 300)).toBe(303)
    expect((await call(kit.api.app, 'GET', '/api/v1/links', { token: owner.key })).status, 'the old key stays revoked').toBe(401)
    const audit = (await admin('GET', '/actions?limit=10')).body.data.actions
    expect(audit.find((a: { target: string; action: string }) => a.target === owner.id && a.action === 'account.restore')).toMatchObject({ reason: 'owner explained' })
  })

  test('GET /api/v1/admin/accounts/{id}: address, plan, links and suspension', async () => {
    const owner = await kit.account()
    await insertLink(kit, owner.id, 'https://counted.example/')
    const res = await admin('GET', `/accounts/${owner.id}`)
    expect(res.status, show(res)).toBe(200)
    expect(res.body.data.account).toEqual({ id: owner.id, email: owner.email, plan: 'free', created_at: expect.any(String), suspended_at: null, links: 1 })
  })
})
