// An approval won by a process that died before recording the call's result: found, marked failed with
// the reason, never run again; an approval still running elsewhere (won moments ago), pending ones and
// finished ones are left as they are.
import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { agentApprovals } from '../../db/schema'
import { call, show, testApi, type TestApp } from '../../../test/support/api'
import { agentToken, newAccount, newLink } from '../../../test/support/fixtures'
import { failInterruptedApprovals, INTERRUPTED_AFTER_MS } from './recovery'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp

beforeAll(async () => {
  api = await testApi()
  app = api.app
})

describe('approvals interrupted by a stop', () => {
  test('an approved call without a result past the bound is marked failed with the reason and never run; the rest stay', async () => {
    const human = await newAccount(api.deps.db, 'pro')
    const { token } = await agentToken(app, human, ['links:read', 'links:delete'])
    const held = async () => {
      const link = await newLink(api.deps.db, human.id, 'sho.rt')
      const res = await call(app, 'DELETE', `/api/v1/links/${link.alias}`, { token })
      expect(res.status, show(res)).toBe(202)
      return { alias: link.alias, id: res.body.data.approval.id as string }
    }
    const [interrupted, running, pending] = [await held(), await held(), await held()]
    // What a process leaves when it dies between winning the approval and recording the call's result.
    const won = (id: string, agoMs: number) =>
      api.deps.db
        .update(agentApprovals)
        .set({ status: 'approved', decidedAt: new Date(Date.now() - agoMs) })
        .where(eq(agentApprovals.id, id))
    await won(interrupted.id, INTERRUPTED_AFTER_MS + 60_000)
    await won(running.id, 30_000)

    const failed = await failInterruptedApprovals({ db: api.deps.db, now: Date.now })
    expect(failed).toContain(interrupted.id)
    expect(failed).not.toContain(running.id)
    expect(failed).not.toContain(pending.id)

    const seen = await call(app, 'GET', `/api/v1/agent/approvals/${interrupted.id}`, { token: human.key })
    expect(seen.body.data.status, show(seen)).toBe('failed')
    expect(seen.body.data.result.body.hint, show(seen)).toContain('not run again')
    // Not run: the link is still there; and a second decision is refused, so it cannot run later either.
    expect((await call(app, 'GET', `/api/v1/links/${interrupted.alias}`, { token: human.key })).status).toBe(200)
    const again = await call(app, 'POST', `/api/v1/agent/approvals/${interrupted.id}/approve`, { token: human.key })
    expect(again.status, show(again)).toBe(409)
    expect(again.body.error).toBe('APPROVAL_DECIDED')
    expect((await call(app, 'GET', `/api/v1/links/${interrupted.alias}`, { token: human.key })).status).toBe(200)

    const states = async (id: string) => (await call(app, 'GET', `/api/v1/agent/approvals/${id}`, { token: human.key })).body.data.status
    expect(await states(running.id)).toBe('approved')
    expect(await states(pending.id)).toBe('pending')
    // A second check finds nothing more to do.
    expect(await failInterruptedApprovals({ db: api.deps.db, now: Date.now })).not.toContain(interrupted.id)
  })
})
