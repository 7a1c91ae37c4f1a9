// Creating links with an API key: every field of the shorten request applies. Checks that need no
// database come first (url, dates), then the domain, then the password hash (slow on purpose, so it
// runs outside any transaction); the quota and the insert share one short transaction.
import { abEndsAt, checkRouting, requireRoutingPlan, routingUrls } from './routing'
import { and, eq, inArray } from 'drizzle-orm'
import { domains, links, type LinkRouting, type LinkRow } from '../../db/schema'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import type { AccountPrincipal } from '../../plugins/auth'
import { isReservedAlias } from './alias'
import { planIsPro, syncCreatedLinks, toCachedLink } from './cache'
import type { ShortenInput } from './model'
import { accountMeta, linksCreatedSince, monthWindow } from '../account/meta'
import { lockQuota, quotaExceeded } from './quota'
import { DEFAULT_LINK_TTL_MS } from '../../lib/plans'
import { insertRows } from './insert'
import { linkEventSubscribers, toLinkRecord, writeLinkEvents } from './service'
import { checkDestination, normalizeHost } from './url'

/** Shortest chosen alias on the default domain (docs/api.md#links); a verified custom domain allows 1. */
export const MIN_DEFAULT_ALIAS_LENGTH = 4

/**
 * argon2id at OWASP's recommended minimum (Password Storage Cheat Sheet: m=19 MiB, t=2, p=1): about
 * 50 ms here, where Bun's default (64 MiB) takes about 190 ms of the API's time per hash and per check.
 */
export const PASSWORD_HASH = { algorithm: 'argon2id', memoryCost: 19_456, timeCost: 2 } as const

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, PASSWORD_HASH)
}

/** The host a link lives on: the default domain, or a verified custom domain of the account. */
export interface LinkDomain {
  host: string
  custom: boolean
}

/**
 * Resolves `domain` of a request for the account. Unknown hosts and other accounts' hosts get the same
 * answer, so nobody learns which domains exist; only the owner hears that its domain awaits verification.
 */
export async function resolveDomain(services: Services, accountId: string, raw: string | undefined, field: string): Promise<LinkDomain> {
  const defaultHost = services.config.shortDomain
  if (raw === undefined) return { host: defaultHost, custom: false }
  const host = normalizeHost(raw)
  if (host === defaultHost) return { host, custom: false }
  const [row] = await services.db
    .select({ verifiedAt: domains.verifiedAt })
    .from(domains)
    .where(and(eq(domains.hostname, host), eq(domains.accountId, accountId)))
    .limit(1)
  if (!row) {
    throw new ApiError('DOMAIN_NOT_ALLOWED', `${field}: ${host} is not a verified custom domain of this account; leave domain out for ${defaultHost}.`)
  }
  if (!row.verifiedAt) {
    throw new ApiError('DOMAIN_NOT_ALLOWED', `${field}: ${host} is not verified yet; publish its DNS TXT record and verify it first.`)
  }
  return { host, custom: true }
}

/** Alias rules that depend on the domain: length 4-64 and no reserved word on the default domain. */
export function checkAlias(alias: string, domain: LinkDomain, field: string): void {
  if (domain.custom) return
  if (alias.length < MIN_DEFAULT_ALIAS_LENGTH) {
    throw new ApiError('VALIDATION_FAILED', `${field}: must be ${MIN_DEFAULT_ALIAS_LENGTH}-64 characters on the default domain (1-64 on a verified custom domain).`)
  }
  if (isReservedAlias(alias)) throw new ApiError('ALIAS_TAKEN', `${field}: "${alias}" is reserved on ${domain.host}.`)
}

/** A date-time field as a Date; the schema has checked the format, this checks the range. */
export function parseInstant(value: string, field: string): Date {
  const ms = Date.parse(value)
  // Years 1-9999: what an ISO string carries in four digits both ways (year 0 reaches Postgres as
  // "0000", which it refuses: it has no year 0).
  const year = new Date(ms).getUTCFullYear()
  if (Number.isNaN(ms) || year < 1 || year > 9999) throw new ApiError('VALIDATION_FAILED', `${field}: must be between the years 1 and 9999.`)
  return new Date(ms)
}

export function checkFutureExpiry(expiresAt: Date | null, nowMs: number, field: string): void {
  if (expiresAt && expiresAt.getTime() <= nowMs) throw new ApiError('VALIDATION_FAILED', `${field}: must be in the future.`)
}

/** A link whose activation is not before its expiry would never redirect. */
export function checkActivation(activatedAt: Date | null, expiresAt: Date | null, field: string): void {
  if (activatedAt && expiresAt && activatedAt.getTime() >= expiresAt.getTime()) {
    throw new ApiError('VALIDATION_FAILED', `${field}: must be before the expiration (${expiresAt.toISOString()}).`)
  }
}

/** Everything a new link needs, checked; what is left to fail is the alias clash and the quota. */
export interface NewLink {
  url: string
  domain: LinkDomain
  alias: string | undefined
  passwordHash: string | null
  expiresAt: Date
  activatedAt: Date | null
  /** The moment of the request: the default expiry counts from it, and the link is created at it. */
  createdAt: Date
  /** Rules and an A/B test (Pro), checked; null when none was sent. */
  routing: LinkRouting | null
}

/**
 * Validates one shorten request; `prefix` names its place in the request for hints ("body", "links[3]").
 * `destination`: input.url already through checkDestination (bulk checks every item's in one query).
 */
export async function prepareLink(services: Services, account: AccountPrincipal, input: ShortenInput, prefix: string, destination?: string): Promise<NewLink> {
  const url = destination ?? (await checkDestination(services, input.url))
  const now = services.now()
  const expiresAt = input.expiration === undefined ? new Date(now + DEFAULT_LINK_TTL_MS) : parseInstant(input.expiration, `${prefix}.expiration`)
  checkFutureExpiry(expiresAt, now, `${prefix}.expiration`)
  const activatedAt = input.activated_at === undefined ? null : parseInstant(input.activated_at, `${prefix}.activated_at`)
  checkActivation(activatedAt, expiresAt, `${prefix}.activated_at`)
  const domain = await resolveDomain(services, account.id, input.domain, `${prefix}.domain`)
  if (input.alias !== undefined) checkAlias(input.alias, domain, `${prefix}.alias`)
  const passwordHash = input.password === undefined ? null : await hashPassword(input.password)
  let routing: LinkRouting | null = null
  if (input.routing !== undefined) {
    requireRoutingPlan(services, account.plan)
    routing = await checkRouting(services, input.routing, `${prefix}.routing`)
  }
  return { url, domain, alias: input.alias, passwordHash, expiresAt, activatedAt, createdAt: new Date(now), routing }
}

/** Thrown inside a transaction to roll it back with the result it would have committed. */
class Rollback extends Error {
  constructor(readonly result: Inserted) {
    super('rollback')
  }
}

/** Each link of a batch, in order: its row, or why it was refused (quota, alias); and this month's count. */
export interface Inserted {
  results: (LinkRow | ApiError)[]
  used: number
}

function rowValues(account: AccountPrincipal, link: NewLink) {
  return {
    domain: link.domain.host,
    url: link.url,
    accountId: account.id,
    passwordHash: link.passwordHash,
    expiresAt: link.expiresAt,
    activatedAt: link.activatedAt,
    routing: link.routing,
    abEndsAt: abEndsAt(link.routing),
    createdAt: link.createdAt,
    updatedAt: link.createdAt,
  }
}

/**
 * Inserts prepared links, in order, under the account's quota lock in one transaction, then writes
 * them through to the cache. Each link gets what it would get alone, one after the other: over the
 * month's quota LINK_QUOTA_EXCEEDED (whatever else), a taken alias ALIAS_TAKEN (using no quota).
 *
 * The lock, the month's count and the insert are sent together: three statements in one write,
 * which Postgres runs in order, so the count is taken once the lock is held (each statement reads
 * what was committed before it started). The count is the month's counter (account_link_months),
 * which the insert's trigger raises inside this transaction. The insert is optimistic; rows past the
 * quota are deleted again before the commit, which lowers the counter again (the whole transaction
 * rolls back when nothing is kept), so no other transaction ever sees them or their count. A dry run
 * does all of it and rolls back: nothing stored, nothing counted, nothing cached.
 */
export async function insertLinks(services: Services, account: AccountPrincipal, batch: readonly { link: NewLink; prefix: string }[], dryRun = false): Promise<Inserted> {
  const now = services.now()
  const limit = services.config.limits.plans[account.plan].linksPerMonth
  const inserted = await services.db
    .transaction(async (tx) => {
      const rows = batch.map(({ link, prefix }) => ({ values: rowValues(account, link), choice: { alias: link.alias, customDomain: link.domain.custom, prefix } }))
      // Each call sends its first statement before it awaits: the order of this array is the order
      // of the statements on the connection. The last asks which webhooks want link.created.
      const [, before, attempted, webhookIds] = await Promise.all([
        lockQuota(tx, account.id),
        linksCreatedSince(tx, account.id, monthWindow(now).start),
        insertRows(tx, services, rows),
        linkEventSubscribers(services, tx, account.id, 'link.created', dryRun),
      ])
      let used = before
      const past: string[] = []
      const results = attempted.map((result) => {
        if (used >= limit) {
          if (!(result instanceof ApiError)) past.push(result.id)
          return quotaExceeded(services, account.plan, used, now)
        }
        if (!(result instanceof ApiError)) used++
        return result
      })
      const outcome = { results, used }
      if (dryRun || used === before) throw new Rollback(outcome)
      if (past.length > 0) await tx.delete(links).where(inArray(links.id, past))
      await writeLinkEvents(
        services,
        tx,
        account.id,
        'link.created',
        webhookIds,
        results.flatMap((result) => (result instanceof ApiError ? [] : [result])),
      )
      return outcome
    })
    .catch((error: unknown) => {
      if (error instanceof Rollback) return error.result
      throw error
    })
  if (dryRun) return inserted
  const pro = planIsPro(account.plan)
  const created = inserted.results.flatMap((result) => (result instanceof ApiError ? [] : [{ row: result, record: toCachedLink(result, pro) }]))
  await syncCreatedLinks(services, created)
  services.destinationsWritten?.(created.map(({ row }) => ({ id: row.id, url: row.url, routingUrls: routingUrls(row.routing) })))
  return inserted
}

/** One link: its row and this month's link count including it, or its refusal thrown. */
export async function insertLink(services: Services, account: AccountPrincipal, link: NewLink, prefix: string, dryRun = false): Promise<{ row: LinkRow; used: number }> {
  const { results, used } = await insertLinks(services, account, [{ link, prefix }], dryRun)
  const [result] = results
  if (result instanceof ApiError) throw result
  return { row: result!, used }
}

/** POST /shorten with an API key (or an Agent's token); a dry run answers the link it would create. */
export async function shortenAsAccount(services: Services, account: AccountPrincipal, input: ShortenInput, dryRun = false) {
  const prepared = await prepareLink(services, account, input, 'body')
  const { row, used } = await insertLink(services, account, prepared, 'body', dryRun)
  return { link: toLinkRecord(row, services), meta: accountMeta(services, { plan: account.plan, linksThisMonth: used }) }
}
