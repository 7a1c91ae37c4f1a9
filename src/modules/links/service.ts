// Guest links, alias checks and the link record. Plain arguments in, plain values out; errors are ApiError.
import { and, eq } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { links, type LinkRow } from '../../db/schema'
import type { Services } from '../../services'
import { countGuestLink, registerUrl, type GuestSession } from '../guest/service'
import { ApiError } from '../../plugins/errors'
import { networkOf } from '../../lib/network'
import { isReservedAlias } from './alias'
import { syncLinkCache, toCachedLink } from './cache'
import type { LinkRecord, ShortenInput } from './model'
import { checkDestination, normalizeHost } from './url'
import { DEFAULT_LINK_TTL_DAYS, DEFAULT_LINK_TTL_MS } from '../../lib/plans'
import { insertWithAlias } from './insert'

/** POST /alias/check without a token: 60 a minute per client IP (docs/decisions/0002-guest-limits.md). */
export const ALIAS_CHECK_RATE = { limit: 60, windowMs: 60_000 } as const

/** Fields a guest token may send but that only registered accounts can use (ignored, and named in meta.notices). */
const GUEST_IGNORED: { field: keyof ShortenInput; message: string }[] = [
  { field: 'alias', message: 'ignored for guest tokens; register to choose aliases' },
  { field: 'domain', message: 'ignored for guest tokens; guest links use the default domain' },
  { field: 'password', message: 'ignored for guest tokens; register to protect links with a password' },
  { field: 'expiration', message: `ignored for guest tokens; guest links expire ${DEFAULT_LINK_TTL_DAYS} days after creation` },
  { field: 'activated_at', message: 'ignored for guest tokens; guest links are active at once' },
  { field: 'routing', message: 'ignored for guest tokens; routing rules and A/B tests are a Pro feature' },
]

export function guestNotices(input: ShortenInput): { field: string; message: string }[] {
  return GUEST_IGNORED.filter(({ field }) => input[field] !== undefined)
}

export function toLinkRecord(row: LinkRow, services: Pick<Services, 'config'>): LinkRecord {
  const { config } = services
  const onDefaultDomain = row.domain === config.shortDomain
  return {
    short_url: onDefaultDomain ? `${config.shortBaseUrl}/${row.alias}` : `https://${row.domain}/${row.alias}`,
    alias: row.alias,
    full_url: row.url,
    domain: row.domain,
    manage_code: null,
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt ? row.expiresAt.toISOString() : null,
    has_password: row.passwordHash !== null,
    // A new link has no clicks; get, list and update fill in the counts from ClickHouse (clicks.ts).
    clicks: 0,
    last_clicked_at: null,
  }
}

/**
 * The link as a webhook event carries it (modules/webhooks): its record without the click counts, which
 * ClickHouse has and the transaction writing the event does not (the statistics API gives them).
 */
export function toLinkEventData(row: LinkRow, services: Pick<Services, 'config'>): Omit<LinkRecord, 'clicks' | 'last_clicked_at'> {
  const { clicks: _clicks, last_clicked_at: _lastClickedAt, ...record } = toLinkRecord(row, services)
  return record
}

type LinkEvent = 'link.created' | 'link.updated' | 'link.deleted'

/**
 * The account's webhooks that want `type`, asked inside the change's transaction (services.webhookOutbox);
 * none without an outbox or for a dry run. A caller sends it beside its own statements.
 */
export function linkEventSubscribers(services: Pick<Services, 'webhookOutbox'>, tx: Pick<Db, 'select'>, accountId: string, type: LinkEvent, dryRun = false): Promise<readonly string[]> {
  if (dryRun || !services.webhookOutbox) return Promise.resolve([])
  return services.webhookOutbox.subscribers(tx, accountId, type)
}

/** The event of each of `rows`, for those webhooks, in the same transaction; nothing when there are none. */
export async function writeLinkEvents(
  services: Pick<Services, 'webhookOutbox' | 'config' | 'now'>,
  tx: Pick<Db, 'select' | 'insert'>,
  accountId: string,
  type: LinkEvent,
  webhookIds: readonly string[],
  rows: readonly LinkRow[],
): Promise<void> {
  if (webhookIds.length === 0 || rows.length === 0 || !services.webhookOutbox) return
  await services.webhookOutbox.write(
    tx,
    accountId,
    type,
    webhookIds,
    rows.map((row) => toLinkEventData(row, services)),
    new Date(services.now()),
  )
}

/**
 * Creates a link for a guest: only `url` is applied. The link and the session's link count are one
 * transaction, so the 11th link fails without leaving a row; the cache is written after the commit.
 */
export async function shortenAsGuest(services: Services, guest: GuestSession, input: ShortenInput, clientIp: string) {
  const url = await checkDestination(services, input.url)
  await countNetworkGuestLink(services, clientIp)
  const now = services.now()
  const domain = services.config.shortDomain
  const { row, session } = await services.db.transaction(async (tx) => {
    const session = await countGuestLink(services, tx, guest)
    const values = {
      domain,
      url,
      guestId: guest.id,
      expiresAt: new Date(now + DEFAULT_LINK_TTL_MS),
      createdAt: new Date(now),
      updatedAt: new Date(now),
    }
    return { row: await insertWithAlias(tx, services, values, { customDomain: false, prefix: 'body' }), session }
  })
  await syncLinkCache(services, row, toCachedLink(row), { publish: true })
  services.destinationsWritten?.([{ id: row.id, url: row.url, routingUrls: [] }])
  return { link: toLinkRecord(row, services), guest: session, notices: guestNotices(input) }
}

const DAY_MS = 86_400_000

/**
 * One guest link of the client's network (IPv4 /24, IPv6 /56 by default) today, across every guest
 * token from it: a spammer who farms tokens from one network gets no more links than its day's
 * allowance. Counted once the destination passed its checks, so a refused request costs nothing.
 */
async function countNetworkGuestLink(services: Services, clientIp: string): Promise<void> {
  const { linksPerDay, prefixes } = services.config.guestNetwork
  const now = services.now()
  const day = Math.floor(now / DAY_MS)
  const untilMidnight = (day + 1) * DAY_MS - now
  let result: Awaited<ReturnType<typeof services.limiter.hit>>
  try {
    result = await services.limiter.hit(`guest-links:${networkOf(clientIp, prefixes)}:${day}`, linksPerDay, untilMidnight)
  } catch {
    throw new ApiError('SERVICE_UNAVAILABLE', 'The rate limiter is unavailable; retry shortly.', { retryAfter: 1 })
  }
  if (!result.allowed) {
    throw new ApiError('GUEST_NETWORK_LIMIT', undefined, { limit: linksPerDay, remaining: 0, upgrade_url: registerUrl(services), retryAfter: untilMidnight / 1000 })
  }
}

/** Does the alias exist (or is it reserved) on the domain? Default domain when none is given. */
export async function aliasExists(services: Services, alias: string, domain?: string): Promise<boolean> {
  const host = domain === undefined ? services.config.shortDomain : normalizeHost(domain)
  if (host === services.config.shortDomain && isReservedAlias(alias)) return true
  const [row] = await services.db
    .select({ id: links.id })
    .from(links)
    .where(and(eq(links.domain, host), eq(links.alias, alias)))
    .limit(1)
  return row !== undefined
}
