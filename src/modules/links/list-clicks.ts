// GET /api/v1/links?sort=clicks_desc: most human clicks first, then newest first, then by id, so the
// order is total and a page boundary never splits ties differently between two requests.
//
// Clicks live in ClickHouse, whose rows name the link but not its account, and links in Postgres: no one
// engine can sort and filter both. So each page costs two reads, neither per link:
// 1. Postgres: the id and created_at of every link matching the filters (an index range of the account;
//    ~100,000 short rows for the largest accounts; their number is also the page's total);
// 2. ClickHouse: one aggregate of the hourly rollup over exactly those ids (clickCounts; the ids travel in
//    the request body, not the URL, once they are many), answering only links that have clicks;
// then the ranking is done here and the page's full rows are read by id. This costs O(account's links) per
// page rather than O(page); keeping a click count in Postgres instead would put a write on every click.
// The cursor carries (clicks, created_at, id) of the last link shown: the next page starts strictly
// after it in the same order. Counts only grow, so a link already shown never comes again; one whose
// count passes the cursor while a client pages is not shown on later pages (counts are read per page).
import { and, inArray, type SQL } from 'drizzle-orm'
import { links } from '../../db/schema'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import { clickTotals } from './clicks'
import { createdUs, type ListPosition } from './cursor'

interface Ranked {
  id: string
  createdUs: string
  clicks: number
}

/** Microsecond digits without leading zeros: the longer is the later. */
const compareDigits = (a: string, b: string) => (a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0)

/** Negative when `a` comes first: more clicks, then later created_at, then the greater id. */
function byClicks(a: Ranked, b: Ranked): number {
  if (a.clicks !== b.clicks) return b.clicks - a.clicks
  const created = compareDigits(b.createdUs, a.createdUs)
  if (created !== 0) return created
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0
}

export async function clicksPage(services: Services, matching: SQL, position: ListPosition | undefined, limit: number, offset: number) {
  const candidates = await services.db.select({ id: links.id, createdUs }).from(links).where(matching)
  const clicks = await clickTotals(
    services,
    candidates.map((c) => c.id),
  )
  if (clicks === null) {
    throw new ApiError('SERVICE_UNAVAILABLE', 'sort=clicks_desc: click counts are temporarily unavailable; retry shortly, or sort by created_desc or created_asc.')
  }
  const ranked = candidates.map((c) => ({ ...c, clicks: clicks.get(c.id)?.clicks ?? 0 })).sort(byClicks)
  const cursor = position && { id: position.id, createdUs: position.createdUs, clicks: position.clicks ?? 0 }
  const after = cursor ? ranked.findIndex((r) => byClicks(r, cursor) > 0) : 0
  const start = (after === -1 ? ranked.length : after) + offset
  const shown = ranked.slice(start, start + limit)
  const rows =
    shown.length === 0
      ? []
      : await services.db
          .select()
          .from(links)
          .where(
            and(
              matching,
              inArray(
                links.id,
                shown.map((r) => r.id),
              ),
            ),
          )
  const byId = new Map(rows.map((row) => [row.id, row]))
  // A link deleted between the two reads is left out of the page rather than answered half.
  const pageRows = shown.flatMap((r) => {
    const row = byId.get(r.id)
    return row ? [{ ...row, createdUs: r.createdUs }] : []
  })
  return { rows: pageRows, hasMore: start + limit < ranked.length, clicks, total: ranked.length }
}
