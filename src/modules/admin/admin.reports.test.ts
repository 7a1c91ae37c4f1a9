// The reports queue: visitors' reports (filed through POST /api/v1/reports) with their link, newest first,
// page by page; dismissing closes one and leaves its link alone; acting on the link closes all of it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { links } from '../../db/schema'
import { newGuestToken } from '../../../test/support/api'
import { adminKit, call, insertLink, show, type Kit } from './admin-kit.test'

let kit: Kit
beforeAll(async () => {
  kit = await adminKit()
}, 120_000)
afterAll(() => kit.close())

const admin = (method: string, path: string, body?: unknown) => call(kit.api.app, method, `/api/v1/admin${path}`, { token: kit.operator.adminKey, body })
/** An address of its own network, so reports never meet the per-address limit. */
const freshIp = () => `${Math.floor(Math.random() * 90) + 11}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250) + 1}`
const fileReport = async (alias: string, body: Record<string, unknown> = {}) => {
  const res = await call(kit.api.app, 'POST', '/api/v1/reports', { body: { url: `https://sho.rt/${alias}`, reason: 'phishing', ...body }, ip: freshIp() })
  if (res.status !== 201) throw new Error(show(res))
  return res.body.data.id as string
}

async function guestLink(url: string) {
  const token = await newGuestToken(kit.api.app)
  const made = await call(kit.api.app, 'POST', '/api/v1/shorten', { token, body: { url } })
  if (made.status !== 200) throw new Error(show(made))
  const [row] = await kit.api.deps.db.select().from(links).where(eq(links.alias, made.body.data.alias))
  return row!
}

interface Listed {
  id: string
  created_at: string
}

/** The list's order as a comparator: newest first, then the greater id first (ids compare bytewise). */
const newerFirst = (a: Listed, b: Listed) => Date.parse(b.created_at) - Date.parse(a.created_at) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)

/** Every open (or closed) report, page by page with `limit`, until the ids wanted were all seen. */
async function walk(status: 'open' | 'closed', limit: number, wanted: string[]) {
  const seen: Listed[] = []
  let cursor: string | null = null
  let pages = 0
  do {
    const res = await admin('GET', `/reports?status=${status}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`)
    expect(res.status, show(res)).toBe(200)
    expect(res.body.data.reports.length).toBeLessThanOrEqual(limit)
    seen.push(...res.body.data.reports)
    cursor = res.body.data.next_cursor
    pages++
  } while (cursor !== null && !wanted.every((id) => seen.some((r) => r.id === id)))
  return { seen, pages }
}

describe('GET /api/v1/admin/reports', () => {
  test("open reports, newest first, each with its link's id, alias, domain, url, state and account (null for a guest)", async () => {
    const guest = await guestLink('https://bank.example.net/login')
    const owner = await kit.account()
    const owned = await insertLink(kit, owner.id, 'https://shop.example.net/')
    const first = await fileReport(guest.alias, { details: 'asks for my bank password', email: 'visitor@example.com' })
    const second = await fileReport(owned.alias, { reason: 'spam' })
    const res = await admin('GET', '/reports')
    expect(res.status, show(res)).toBe(200)
    const listed = res.body.data.reports as Listed[]
    const atFirst = listed.findIndex((r) => r.id === first)
    const atSecond = listed.findIndex((r) => r.id === second)
    expect(Math.min(atFirst, atSecond), show(res)).toBeGreaterThanOrEqual(0)
    // The later report first, unless both were filed within one millisecond (then the greater id).
    expect(Math.sign(atFirst - atSecond), show(res)).toBe(Math.sign(newerFirst(listed[atFirst]!, listed[atSecond]!)))
    const byId = (id: string) => res.body.data.reports.find((r: { id: string }) => r.id === id)
    expect(byId(first)).toMatchObject({
      reason: 'phishing',
      details: 'asks for my bank password',
      email: 'visitor@example.com',
      status: 'open',
      resolution: null,
      closed_at: null,
      link: { id: guest.id, alias: guest.alias, domain: 'sho.rt', url: 'https://bank.example.net/login', state: 'ok', account_id: null },
    })
    expect(Date.parse(byId(first).created_at)).toBeGreaterThan(0)
    expect(byId(second)).toMatchObject({ reason: 'spam', details: null, email: null, link: { id: owned.id, account_id: owner.id } })
  })

  test('pages of `limit` with next_cursor: every report once, newest first', async () => {
    const link = await insertLink(kit, null, 'https://paged.example.net/')
    const mine: string[] = []
    for (let i = 0; i < 5; i++) mine.push(await fileReport(link.alias, { details: `report ${i}` }))
    const { seen, pages } = await walk('open', 2, mine)
    expect(pages).toBeGreaterThanOrEqual(3)
    expect(new Set(seen.map((r) => r.id)).size, 'no report twice').toBe(seen.length)
    const order = seen.map((r) => [Date.parse(r.created_at), r.id] as const)
    for (let i = 1; i < order.length; i++) expect(order[i - 1]![0]).toBeGreaterThanOrEqual(order[i]![0])
    // Newest first; reports filed within one millisecond come greater id first (the list's tiebreak),
    // which need not be the order they were filed in.
    const listed = seen.filter((r) => mine.includes(r.id))
    expect(listed.map((r) => r.id)).toEqual([...listed].sort(newerFirst).map((r) => r.id))
    expect(listed.map((r) => r.id).sort()).toEqual([...mine].sort())
  })

  test('a cursor this API did not give is 400 VALIDATION_FAILED; so is an unknown status', async () => {
    for (const query of ['cursor=bm90LWEtY3Vyc29y', 'cursor=eyJ0IjoiMSIsImkiOiJ4In0x', 'status=pending']) {
      const res = await admin('GET', `/reports?${query}`)
      expect(res.status, `${query}: ${show(res)}`).toBe(400)
      expect(res.body.error).toBe('VALIDATION_FAILED')
    }
  })
})

describe('POST /api/v1/admin/reports/{id}/dismiss', () => {
  test('closes the report as dismissed, leaves its link and its other reports alone, and is audited with the reason', async () => {
    const link = await insertLink(kit, null, 'https://fine.example.net/')
    const dismissed = await fileReport(link.alias)
    const other = await fileReport(link.alias)
    const res = await admin('POST', `/reports/${dismissed}/dismiss`, { reason: 'The page is a real bank' })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.data.report).toMatchObject({ id: dismissed, status: 'closed', resolution: 'dismissed', link: { id: link.id, state: 'ok' } })
    expect(res.body.data.report.closed_at).not.toBeNull()
    const closed = await walk('closed', 100, [dismissed])
    expect(closed.seen.some((r) => r.id === dismissed)).toBe(true)
    const open = (await walk('open', 100, [other])).seen.map((r) => r.id)
    expect(open).toContain(other)
    expect(open).not.toContain(dismissed)
    const [row] = await kit.api.deps.db.select().from(links).where(eq(links.id, link.id))
    expect(row!.state).toBe('ok')
    const actions = (await admin('GET', '/actions?limit=20')).body.data.actions
    expect(actions.find((a: { target: string }) => a.target === dismissed)).toMatchObject({
      action: 'report.dismiss',
      reason: 'The page is a real bank',
      operator_id: kit.operator.id,
      operator_email: kit.operator.email,
    })
  })

  test('dismissing a closed report answers it as it is; an unknown or malformed id is 404 REPORT_NOT_FOUND', async () => {
    const link = await insertLink(kit, null, 'https://twice.example.net/')
    const id = await fileReport(link.alias)
    const first = await admin('POST', `/reports/${id}/dismiss`)
    const again = await admin('POST', `/reports/${id}/dismiss`)
    expect(again.status, show(again)).toBe(200)
    expect(again.body.data.report.closed_at).toBe(first.body.data.report.closed_at)
    for (const unknown of ['rep_AAAAAAAAAAAAAAAAAAAAAA', 'not-an-id']) {
      const res = await admin('POST', `/reports/${unknown}/dismiss`)
      expect(res.status, show(res)).toBe(404)
      expect(res.body.error).toBe('REPORT_NOT_FOUND')
    }
  })

  test('acting on the link closes every open report of it with that action, and no report of another link', async () => {
    const link = await insertLink(kit, null, 'https://phish.example.net/')
    const neighbour = await insertLink(kit, null, 'https://neighbour.example.net/')
    const ids = [await fileReport(link.alias), await fileReport(link.alias)]
    const untouched = await fileReport(neighbour.alias)
    const res = await admin('POST', `/links/${link.id}/disable`, { reason: 'phishing kit' })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.data.reports_closed).toBe(2)
    const closed = (await walk('closed', 100, ids)).seen.filter((r) => ids.includes(r.id))
    expect(closed.map((r) => (r as { resolution?: string }).resolution)).toEqual(['disable', 'disable'])
    expect((await walk('open', 100, [untouched])).seen.map((r) => r.id)).toContain(untouched)
  })
})
