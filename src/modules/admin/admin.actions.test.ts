// The audit of operators' actions: one row per admin write — operator, action, target, reason, time —
// read back newest first, page by page; reads leave no row.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { adminKit, call, insertLink, show, withSession, type Kit } from './admin-kit.test'

let kit: Kit
beforeAll(async () => {
  kit = await adminKit()
}, 120_000)
afterAll(() => kit.close())

type Action = { id: string; operator_id: string | null; operator_email: string | null; action: string; target: string; reason: string | null; created_at: string }
const admin = (method: string, path: string, body?: unknown) => call(kit.api.app, method, `/api/v1/admin${path}`, { token: kit.operator.adminKey, body })

/** The audit, page by page with `limit`, until every target wanted was seen. */
async function walk(limit: number, targets: string[]): Promise<Action[]> {
  const seen: Action[] = []
  let cursor: string | null = null
  do {
    const res = await admin('GET', `/actions?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`)
    expect(res.status, show(res)).toBe(200)
    seen.push(...res.body.data.actions)
    cursor = res.body.data.next_cursor
  } while (cursor !== null && !targets.every((target) => seen.some((a) => a.target === target)))
  return seen
}

describe('GET /api/v1/admin/actions', () => {
  test('each write is one row with the operator, the action, its target and reason; newest first over pages; no row twice', async () => {
    const made = [await insertLink(kit, null, 'https://audit.example/1'), await insertLink(kit, null, 'https://audit.example/2'), await insertLink(kit, null, 'https://audit.example/3')]
    for (const [i, link] of made.entries()) expect((await admin('POST', `/links/${link.id}/flag`, { reason: `case ${i}` })).status).toBe(200)
    const { browser, csrf } = await kit.signIn(kit.operator)
    const host = `audit-${crypto.randomUUID().slice(0, 8)}.example`
    expect((await withSession(browser, 'POST', '/api/v1/admin/hosts', { host }, { 'x-csrf-token': csrf })).status).toBe(201)

    const seen = await walk(2, [...made.map((l) => l.id), host])
    expect(new Set(seen.map((a) => a.id)).size, 'no row twice').toBe(seen.length)
    for (let i = 1; i < seen.length; i++) expect(Date.parse(seen[i - 1]!.created_at)).toBeGreaterThanOrEqual(Date.parse(seen[i]!.created_at))
    const mine = seen.filter((a) => a.target === host || made.some((l) => l.id === a.target))
    expect(mine.map(({ action, target, reason, operator_id, operator_email }) => ({ action, target, reason, operator_id, operator_email }))).toEqual([
      { action: 'host.ban', target: host, reason: null, operator_id: kit.operator.id, operator_email: kit.operator.email },
      ...made.map((link, i) => ({ action: 'link.flag', target: link.id, reason: `case ${i}`, operator_id: kit.operator.id, operator_email: kit.operator.email })).reverse(),
    ])
  })

  test('reads and refused calls leave no row', async () => {
    const first = (await admin('GET', '/actions?limit=1')).body.data.actions[0]
    await admin('GET', '/reports')
    await admin('GET', '/links?q=audit.example')
    await call(kit.api.app, 'POST', '/api/v1/admin/hosts', { token: kit.stranger.key, body: { host: 'refused.example' } })
    await admin('POST', '/links/link_AAAAAAAAAAAAAAAAAAAAAA/disable')
    const now = (await admin('GET', '/actions?limit=1')).body.data.actions[0]
    expect(now).toEqual(first)
  })

  test('a cursor this API did not give is 400 VALIDATION_FAILED', async () => {
    const res = await admin('GET', '/actions?cursor=eyJ0IjoieCJ9')
    expect(res.status, show(res)).toBe(400)
    expect(res.body.error).toBe('VALIDATION_FAILED')
  })
})
