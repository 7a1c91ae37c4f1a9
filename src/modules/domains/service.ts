// Custom domains of an account: add (with the TXT record that proves control), verify through DNS,
// list, remove. Verified domains are what the redirector serves; every change is announced on
// DOMAIN_CHANNEL so redirectors reload their set at once. The daily re-check of verified domains is
// recheck.ts; /tls/ask's answers are tls-ask.ts. Webhook events commit with their change: domain.verified
// with the verification, and link.deleted for each link a removed domain (or a stale claim taken over)
// takes with it, to that link's account.
import type { Db } from '../../db/client'
import { and, asc, count, eq, isNotNull, isNull, lt, ne } from 'drizzle-orm'
import { DOMAIN_CHANNEL, INVALIDATION_CHANNEL, linkCacheKey } from '../../../core/link-cache'
import { domains, links, type LinkRow, type Plan } from '../../db/schema'
import type { TxtResolver } from '../../dns/resolver'
import { DnsLookupError } from '../../dns/resolver'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import type { Limits } from '../../lib/plans'
import { assertNotOwnHost, parseHostname } from './hostname'
import { forgetAnswers } from './tls-ask'
import type { DomainRecord } from './model'
import { newId } from '../../lib/ids'
import { randomBase64url } from '../../lib/secrets'
import { upgradeUrl } from '../account/meta'
import { lockFor } from '../../db/locks'
import { toLinkEventData } from '../links/service'
import { checkDestination } from '../links/url'

type Tx = Pick<Db, 'select' | 'insert'>
type EventServices = Pick<Services, 'config' | 'now' | 'webhookOutbox'>

/** The domain's `type` event, its record as the API returns it, in the change's transaction. */
export async function writeDomainEvent(services: EventServices, tx: Tx, row: DomainRow, type: 'domain.verified' | 'domain.unverified'): Promise<void> {
  const outbox = services.webhookOutbox
  if (!outbox) return
  const webhookIds = await outbox.subscribers(tx, row.accountId, type)
  await outbox.write(tx, row.accountId, type, webhookIds, [toDomainRecord(row)], new Date(services.now()))
}

/** link.deleted for each of `rows` (links deleted with their domain), to each link's account. */
async function writeDeletedLinks(services: EventServices, tx: Tx, rows: readonly LinkRow[]): Promise<void> {
  const outbox = services.webhookOutbox
  if (!outbox) return
  const byAccount = new Map<string, LinkRow[]>()
  for (const row of rows) if (row.accountId !== null) byAccount.set(row.accountId, [...(byAccount.get(row.accountId) ?? []), row])
  for (const [accountId, owned] of byAccount) {
    const webhookIds = await outbox.subscribers(tx, accountId, 'link.deleted')
    await outbox.write(
      tx,
      accountId,
      'link.deleted',
      webhookIds,
      owned.map((row) => toLinkEventData(row, services)),
      new Date(services.now()),
    )
  }
}

type DomainRow = typeof domains.$inferSelect

/** The TXT record lives under this label of the domain, so it never collides with the domain's own TXT records. */
export const VERIFICATION_LABEL = '_linkservice'
export const VERIFICATION_PREFIX = 'link-service-verification='
/**
 * An unverified claim holds its host name this long; after that another account adding the same name
 * takes it over. Without it anyone could squat a name they do not control and lock its owner out.
 */
export const PENDING_CLAIM_TTL_MS = 72 * 3600 * 1000
/** Cache keys deleted at once when a domain goes with its links. */
const CACHE_DELETE_CHUNK = 100

export function verificationRecord(row: Pick<DomainRow, 'hostname' | 'verificationToken'>) {
  return { type: 'TXT' as const, name: `${VERIFICATION_LABEL}.${row.hostname}`, value: `${VERIFICATION_PREFIX}${row.verificationToken}` }
}

export function toDomainRecord(row: DomainRow): DomainRecord {
  return {
    hostname: row.hostname,
    verified: row.verifiedAt !== null,
    verification: verificationRecord(row),
    created_at: row.createdAt.toISOString(),
    verified_at: row.verifiedAt ? row.verifiedAt.toISOString() : null,
    root_url: row.rootUrl,
    record_missing_since: row.recordMissingSince ? row.recordMissingSince.toISOString() : null,
  }
}

export function domainUsage(limits: Limits, plan: Plan, total: number) {
  const limit = limits.plans[plan].customDomains
  return { domains: total, domains_limit: limit, domains_remaining: Math.max(0, limit - total) }
}

export async function listDomains(services: Pick<Services, 'db'>, accountId: string): Promise<DomainRecord[]> {
  const rows = await services.db.select().from(domains).where(eq(domains.accountId, accountId)).orderBy(asc(domains.createdAt), asc(domains.hostname))
  return rows.map(toDomainRecord)
}

/**
 * Adds a domain, unverified, with a fresh verification token. Additions of one account are serialised
 * by an advisory lock so the plan's allowance holds under concurrency; the host name's unique
 * constraint settles races between accounts. A stale unverified claim of another account is taken over
 * (together with any link on that host, which cannot be served anyway).
 */
export async function addDomain(
  services: Pick<Services, 'db' | 'kv' | 'config' | 'now' | 'counters' | 'webhookOutbox'>,
  account: { id: string; plan: Plan },
  rawHostname: string,
): Promise<{ domain: DomainRecord; total: number }> {
  const hostname = parseHostname(rawHostname)
  assertNotOwnHost(hostname, services.config)
  const limit = services.config.limits.plans[account.plan].customDomains
  const now = new Date(services.now())
  const { row, total, freedAliases } = await services.db.transaction(async (tx) => {
    await lockFor(tx, 'domainAdd', account.id)
    const [existing] = await tx.select().from(domains).where(eq(domains.hostname, hostname)).limit(1)
    if (existing?.accountId === account.id) throw new ApiError('DOMAIN_TAKEN', `${hostname} is already one of your domains.`)
    const [counted] = await tx.select({ n: count() }).from(domains).where(eq(domains.accountId, account.id))
    const owned = Number(counted?.n ?? 0)
    if (owned >= limit) {
      const pro = account.plan === 'pro'
      throw new ApiError(
        'DOMAIN_LIMIT_REACHED',
        pro
          ? `Your plan includes ${limit} custom domains; remove one to add another.`
          : `The Free plan includes ${limit} custom domain; remove it or upgrade to Pro for ${services.config.limits.plans.pro.customDomains}.`,
        { limit, remaining: 0, ...(!pro && { upgrade_url: upgradeUrl(services) }) },
      )
    }
    let freedAliases: string[] = []
    if (existing) {
      // Another account's claim: only an unverified one past its hold can be taken over.
      const released = await tx
        .delete(domains)
        .where(and(eq(domains.id, existing.id), ne(domains.accountId, account.id), isNull(domains.verifiedAt), lt(domains.createdAt, new Date(now.getTime() - PENDING_CLAIM_TTL_MS))))
        .returning({ id: domains.id })
      if (released.length === 0) throw new ApiError('DOMAIN_TAKEN', `${hostname} is registered to another account.`)
      const freed = await tx.delete(links).where(eq(links.domain, hostname)).returning()
      await writeDeletedLinks(services, tx, freed)
      freedAliases = freed.map((l) => l.alias)
    }
    const [row] = await tx
      .insert(domains)
      .values({ id: newId('domain'), accountId: account.id, hostname, verificationToken: randomBase64url(24), createdAt: now })
      .onConflictDoNothing({ target: domains.hostname })
      .returning()
    // Another account added it between our read and our insert.
    if (!row) throw new ApiError('DOMAIN_TAKEN', `${hostname} is registered to another account.`)
    return { row, total: owned + 1, freedAliases }
  })
  await dropLinkCache(services, hostname, freedAliases)
  return { domain: toDomainRecord(row), total }
}

async function ownedDomain(services: Pick<Services, 'db'>, accountId: string, hostname: string): Promise<DomainRow> {
  const [row] = await services.db
    .select()
    .from(domains)
    .where(and(eq(domains.accountId, accountId), eq(domains.hostname, hostname)))
    .limit(1)
  if (!row) throw new ApiError('DOMAIN_NOT_FOUND', `You have no custom domain ${hostname}.`)
  return row
}

/**
 * Looks the verification record up in DNS and marks the domain verified when it is there. A domain that
 * is already verified is answered as it is, without a lookup.
 */
export async function verifyDomain(
  services: Pick<Services, 'db' | 'kv' | 'now' | 'counters' | 'config' | 'webhookOutbox'>,
  resolver: TxtResolver,
  accountId: string,
  rawHostname: string,
): Promise<DomainRecord> {
  const row = await ownedDomain(services, accountId, parseHostname(rawHostname))
  if (row.verifiedAt) return toDomainRecord(row)
  const expected = verificationRecord(row)
  let found: string[]
  try {
    found = await resolver.resolveTxt(expected.name)
  } catch (error) {
    if (error instanceof DnsLookupError && error.domainSide) {
      throw new ApiError(
        'DOMAIN_NOT_VERIFIED',
        `The DNS servers of ${row.hostname} answered ${error.code} for ${expected.name}; fix its DNS, then verify again. Expected: TXT ${expected.name} "${expected.value}".`,
        {
          data: { expected, found: [], dns_error: error.code },
        },
      )
    }
    throw new ApiError('SERVICE_UNAVAILABLE', `The DNS lookup of ${expected.name} did not complete; retry shortly.`, { retryAfter: 5 })
  }
  if (!found.some((value) => value.trim() === expected.value)) {
    const seen = found.length === 0 ? 'no TXT record was found there' : `${found.length} TXT record(s) were found there, none with that value`
    throw new ApiError('DOMAIN_NOT_VERIFIED', `Create a TXT record at ${expected.name} with the value "${expected.value}"; ${seen}. DNS changes can take a few minutes to appear.`, {
      data: { expected, found: found.slice(0, 10) },
    })
  }
  const updated = await services.db.transaction(async (tx) => {
    const [verified] = await tx
      .update(domains)
      .set({ verifiedAt: new Date(services.now()) })
      .where(and(eq(domains.id, row.id), isNull(domains.verifiedAt)))
      .returning()
    if (verified) await writeDomainEvent(services, tx, verified, 'domain.verified')
    return verified
  })
  // Verified meanwhile by a concurrent call: read what it wrote.
  const result = updated ?? (await ownedDomain(services, accountId, row.hostname))
  await announce(services, row.hostname)
  return toDomainRecord(result)
}

/**
 * Removes a domain and every link on it, so no alias of this account can ever answer on the host again
 * (a later owner of the name starts with no links). The links' cache records are deleted after the
 * commit and every redirector is told to drop the host.
 */
export async function removeDomain(
  services: Pick<Services, 'db' | 'kv' | 'counters' | 'config' | 'now' | 'webhookOutbox'>,
  accountId: string,
  rawHostname: string,
): Promise<{ hostname: string; linksDeleted: number }> {
  const hostname = parseHostname(rawHostname)
  const aliases = await services.db.transaction(async (tx) => {
    const removed = await tx
      .delete(domains)
      .where(and(eq(domains.accountId, accountId), eq(domains.hostname, hostname)))
      .returning({ id: domains.id })
    if (removed.length === 0) throw new ApiError('DOMAIN_NOT_FOUND', `You have no custom domain ${hostname}.`)
    const deleted = await tx.delete(links).where(eq(links.domain, hostname)).returning()
    await writeDeletedLinks(services, tx, deleted)
    return deleted.map((l) => l.alias)
  })
  await announce(services, hostname)
  await dropLinkCache(services, hostname, aliases)
  return { hostname, linksDeleted: aliases.length }
}

export async function countDomains(services: Pick<Services, 'db'>, accountId: string): Promise<number> {
  const [row] = await services.db.select({ n: count() }).from(domains).where(eq(domains.accountId, accountId))
  return Number(row?.n ?? 0)
}

/**
 * Sets or clears where the domain's root sends visitors. The URL follows the rules of a link's
 * destination (http or https, never a host served here, so the root cannot redirect to itself). Every
 * redirector is told, so a verified domain's root changes at once.
 */
export async function setRootUrl(services: Pick<Services, 'db' | 'kv' | 'config' | 'counters'>, accountId: string, rawHostname: string, rawRootUrl: string | null): Promise<DomainRecord> {
  const hostname = parseHostname(rawHostname)
  const row = await ownedDomain(services, accountId, hostname)
  const rootUrl = rawRootUrl === null ? null : await checkRootUrl(services, rawRootUrl)
  const [updated] = await services.db.update(domains).set({ rootUrl }).where(eq(domains.id, row.id)).returning()
  // Deleted between the read and the update.
  if (!updated) throw new ApiError('DOMAIN_NOT_FOUND', `You have no custom domain ${hostname}.`)
  if (updated.verifiedAt) await announce(services, hostname)
  return toDomainRecord(updated)
}

/** A link destination's checks, with the refusal naming the field it is about. */
async function checkRootUrl(services: Pick<Services, 'db' | 'config'>, raw: string): Promise<string> {
  try {
    return await checkDestination(services, raw)
  } catch (error) {
    if (error instanceof ApiError) throw new ApiError(error.code, error.hint.replace(/^url\b/, 'root_url'), error.extra)
    throw error
  }
}

/** Every verified custom domain and the root URLs set among them, for the redirector (GET /internal/domains). */
export async function verifiedDomains(services: Pick<Services, 'db'>): Promise<{ domains: string[]; root_urls: Record<string, string> }> {
  const rows = await services.db.select({ hostname: domains.hostname, rootUrl: domains.rootUrl }).from(domains).where(isNotNull(domains.verifiedAt)).orderBy(asc(domains.hostname))
  const rootUrls: Record<string, string> = {}
  for (const row of rows) if (row.rootUrl) rootUrls[row.hostname] = row.rootUrl
  return { domains: rows.map((r) => r.hostname), root_urls: rootUrls }
}

/**
 * Tells every redirector to reload its set of verified domains, and every API process to drop its
 * /tls/ask answer for the host. Best effort, like the link cache.
 */
export async function announce(services: Pick<Services, 'kv' | 'counters'>, hostname: string): Promise<void> {
  forgetAnswers(services, hostname)
  try {
    await services.kv.publish(DOMAIN_CHANNEL, hostname)
  } catch {
    services.counters.cacheWriteFailures++
  }
}

/** Deletes the cache records of links that no longer exist and announces each key. */
async function dropLinkCache(services: Pick<Services, 'kv' | 'counters'>, hostname: string, aliases: string[]): Promise<void> {
  for (let i = 0; i < aliases.length; i += CACHE_DELETE_CHUNK) {
    await Promise.all(
      aliases.slice(i, i + CACHE_DELETE_CHUNK).map(async (alias) => {
        const key = linkCacheKey(hostname, alias)
        try {
          await services.kv.del(key)
          await services.kv.publish(INVALIDATION_CHANNEL, key)
        } catch {
          services.counters.cacheWriteFailures++
        }
      }),
    )
  }
}
