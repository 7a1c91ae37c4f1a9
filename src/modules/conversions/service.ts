// Recording a conversion (docs/statistics.md#conversions, docs/decisions/0011-conversions.md). Shared by the JSON endpoint and the
// pixel: the same rules, the same atomic claim. The click id carries the link and the click time, the
// signature proves the service issued it, so a browser needs no API key. A conversion recorded commits its
// `conversion.created` webhook event in the insert's transaction (a duplicate has none).
//
// Order of checks, and the answer of each (an Authorization header means API-key auth, see authenticateCaller):
//   API key unknown or malformed                → 401 UNAUTHORIZED (rate limited per key: 429)
//   the report's field rules                    → 400 VALIDATION_FAILED naming the field
//   no API key and no clickSignature           → 401 UNAUTHORIZED
//   clickSignature not of this click id         → 401 CLICK_SIGNATURE_INVALID (tampered, other click, unknown kid)
//   clickId not a click id (key path)           → 400 VALIDATION_FAILED
//   link gone                                   → 404 LINK_NOT_FOUND
//   API key of another account                  → 403 LINK_NOT_OWNED
//   link's account not on Pro                   → 403 PRO_REQUIRED
//   occurredAt before the click / > 5 min ahead → 400 OCCURRED_AT_INVALID
//   occurredAt, or receipt, > 30 days after click → 400 CONVERSION_WINDOW_CLOSED
//   purchase/sale/refund: same (type, externalOrderId), other value or currency → 409 CONVERSION_CONFLICT
//     (same value and currency: 200 duplicate, whatever the eventId; see originalOf)
//   same eventId (or another type's externalOrderId), other payload → 409 CONVERSION_CONFLICT
//   eventId of one conversion, order key of another  → 409 CONVERSION_CONFLICT
import { and, count, eq, or, sql, type SQL } from 'drizzle-orm'
import { parseClickId, verifyClickSignature } from '../../../core/click-id'
import { accounts, conversions, links } from '../../db/schema'
import type { Auth } from '../../plugins/auth'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import { mirrorConversion } from './mirror'
import { newId } from '../../lib/ids'
import { lockFor } from '../../db/locks'
import { CONVERSION_LIMITS, MAX_VALUE } from './model'

/** Attribution window: 30 days, last click (docs/statistics.md). */
export const ATTRIBUTION_WINDOW_MS = 30 * 24 * 3600 * 1000
/** occurredAt at most five minutes in the future (clock skew of the reporting server). */
export const MAX_FUTURE_MS = 5 * 60 * 1000
/** Types that are orders: they need externalOrderId; every other type needs eventId. */
export const ORDER_TYPES = new Set(['purchase', 'sale', 'refund'])
export const CURRENCY_PATTERN = /^[A-Za-z]{3}$/
/** Per client IP, for calls authenticated by a click signature (API keys have their per-key limit). */
export const CONVERSION_IP_RATE = { limit: 120, windowMs: 60_000 }

export interface ConversionInput {
  clickId: string
  clickSignature?: string
  conversionType: string
  value?: number
  currency?: string
  externalOrderId?: string
  eventId?: string
  occurredAt?: string
  source?: string
  metadata?: unknown
}

export interface ConversionResult {
  created: boolean
  conversionId: string
  clickId: string
}

/** Field rules a JSON schema cannot say (the pixel has no schema, so it checks everything here). */
export function checkFields(input: ConversionInput): void {
  const bad = (field: string, message: string): never => {
    throw new ApiError('VALIDATION_FAILED', `body.${field}: ${message}`)
  }
  if (typeof input.clickId !== 'string' || input.clickId.length === 0 || input.clickId.length > CONVERSION_LIMITS.clickId) bad('clickId', `required, at most ${CONVERSION_LIMITS.clickId} characters`)
  if (input.clickSignature !== undefined && (typeof input.clickSignature !== 'string' || input.clickSignature.length > CONVERSION_LIMITS.clickSignature))
    bad('clickSignature', `at most ${CONVERSION_LIMITS.clickSignature} characters`)
  if (typeof input.conversionType !== 'string' || input.conversionType.trim().length === 0 || input.conversionType.length > CONVERSION_LIMITS.conversionType)
    bad('conversionType', `required, 1-${CONVERSION_LIMITS.conversionType} characters`)
  for (const field of ['externalOrderId', 'eventId', 'source'] as const) {
    const v = input[field]
    if (v !== undefined && (typeof v !== 'string' || v.length === 0 || v.length > CONVERSION_LIMITS[field])) bad(field, `1-${CONVERSION_LIMITS[field]} characters`)
  }
  if (input.value !== undefined) {
    if (typeof input.value !== 'number' || !Number.isFinite(input.value) || input.value < 0 || input.value > MAX_VALUE) bad('value', 'must be a number >= 0')
    if (input.currency === undefined) bad('currency', 'is required when value is given')
  }
  if (input.currency !== undefined && (typeof input.currency !== 'string' || !CURRENCY_PATTERN.test(input.currency))) bad('currency', 'must be a three-letter ISO 4217 code')
  if (ORDER_TYPES.has(input.conversionType.trim().toLowerCase()) && input.externalOrderId === undefined) {
    bad('externalOrderId', `is required for conversionType ${input.conversionType.trim().toLowerCase()}`)
  }
  if (input.externalOrderId === undefined && input.eventId === undefined) bad('eventId', 'is required when externalOrderId is absent')
  if (input.occurredAt !== undefined && parseTime(input.occurredAt) === null) bad('occurredAt', 'must be an ISO 8601 date-time with a time zone')
  if (input.metadata !== undefined) {
    let serialized: string | undefined
    try {
      serialized = JSON.stringify(input.metadata)
    } catch {
      bad('metadata', 'must be JSON-serializable')
    }
    if (serialized !== undefined && serialized.length > CONVERSION_LIMITS.metadata) bad('metadata', `at most ${CONVERSION_LIMITS.metadata} serialized characters`)
  }
}

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i

function parseTime(value: string): number | null {
  if (!DATE_TIME.test(value)) return null
  const ms = Date.parse(value)
  return Number.isFinite(ms) ? ms : null
}

/** JSON with object keys sorted, so a retry that orders its metadata differently is the same payload. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined)
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`
  }
  return JSON.stringify(value ?? null)
}

/** What makes two reports "the same": every field the client sent except the credential. */
function payloadHash(input: ConversionInput, occurredAtMs: number | null): string {
  const payload = {
    clickId: input.clickId,
    conversionType: input.conversionType.trim().toLowerCase(),
    value: input.value ?? null,
    currency: input.currency?.toUpperCase() ?? null,
    externalOrderId: input.externalOrderId ?? null,
    eventId: input.eventId ?? null,
    occurredAt: occurredAtMs,
    source: input.source ?? null,
    metadata: input.metadata ?? null,
  }
  return new Bun.CryptoHasher('sha256').update(canonical(payload)).digest('hex')
}

/** Who vouches for the report: the API key of an account, or (null) the click signature in the report. */
export type KeyCaller = { accountId: string } | null

/**
 * The API key (or Agent token) behind the request's Authorization header (per-credential rate limit
 * included, its X-RateLimit headers returned), or null when there is no header: the call then rests on
 * the click signature.
 */
export async function authenticateCaller(auth: Auth, request: Request): Promise<{ caller: KeyCaller; rateHeaders: Record<string, string> }> {
  const authorization = request.headers.get('authorization')
  if (authorization === null || authorization.trim() === '') return { caller: null, rateHeaders: {} }
  const principal = await auth.authenticate(request, 'account', { scopes: ['conversions:write'] })
  if (principal.kind !== 'account') throw new ApiError('UNAUTHORIZED')
  return { caller: { accountId: principal.account.id }, rateHeaders: principal.rateHeaders }
}

/** Checks and records one conversion, for an API-key caller or (caller null) on the strength of the click signature. */
export async function recordConversion(services: Services, input: ConversionInput, caller: KeyCaller): Promise<ConversionResult> {
  checkFields(input)
  const keyAccountId = caller?.accountId ?? null
  if (caller === null) {
    if (input.clickSignature === undefined) {
      throw new ApiError('UNAUTHORIZED', "Send clickSignature (the mu_sig of the redirect) or Authorization: Bearer <API key of the link's account>.")
    }
    if (!verifyClickSignature(input.clickId, input.clickSignature, services.config.clickSigningKeys)) throw new ApiError('CLICK_SIGNATURE_INVALID')
  }
  const click = parseClickId(input.clickId)
  if (!click) throw new ApiError('VALIDATION_FAILED', 'body.clickId: is not a click id (the mu_click parameter of a redirect)')

  const [link] = await services.db
    .select({ id: links.id, alias: links.alias, domain: links.domain, accountId: links.accountId, plan: accounts.plan })
    .from(links)
    .leftJoin(accounts, eq(accounts.id, links.accountId))
    .where(eq(links.id, click.linkId))
    .limit(1)
  if (!link) throw new ApiError('LINK_NOT_FOUND', 'The link of this click no longer exists.')
  if (keyAccountId !== null && link.accountId !== keyAccountId) throw new ApiError('LINK_NOT_OWNED')
  if (link.accountId === null || link.plan !== 'pro') throw new ApiError('PRO_REQUIRED')
  const accountId = link.accountId

  const now = services.now()
  const given = input.occurredAt === undefined ? null : parseTime(input.occurredAt)
  const occurredAt = given ?? now
  if (occurredAt < click.atMs) throw new ApiError('OCCURRED_AT_INVALID', 'occurredAt is before the click.')
  if (occurredAt > now + MAX_FUTURE_MS) throw new ApiError('OCCURRED_AT_INVALID', 'occurredAt is more than five minutes in the future.')
  if (occurredAt - click.atMs > ATTRIBUTION_WINDOW_MS || now - click.atMs > ATTRIBUTION_WINDOW_MS + MAX_FUTURE_MS) {
    throw new ApiError('CONVERSION_WINDOW_CLOSED')
  }

  const conversionType = input.conversionType.trim().toLowerCase()
  const hash = payloadHash(input, given)
  const id = newId('conversion')
  const row = {
    id,
    accountId,
    linkId: link.id,
    clickId: input.clickId,
    conversionType,
    value: input.value === undefined ? null : String(input.value),
    currency: input.currency?.toUpperCase() ?? null,
    externalOrderId: input.externalOrderId ?? null,
    eventId: input.eventId ?? null,
    occurredAt: new Date(occurredAt),
    source: input.source ?? null,
    metadata: input.metadata ?? null,
    payloadHash: hash,
    createdAt: new Date(now),
  }
  const event = { alias: link.alias, domain: link.domain }
  const inserted = caller === null ? await insertCapped(services, row, event) : await services.db.transaction(async (tx) => withEvent(services, tx, row, event, await insertRow(tx, row)))
  if (inserted.length > 0) {
    // Committed in Postgres (the source of truth): now the analytics mirror, which never fails the report.
    await mirrorConversion(services.clickhouse, {
      conversionId: id,
      linkId: link.id,
      clickId: input.clickId,
      accountId,
      conversionType,
      value: inserted[0]!.value,
      currency: inserted[0]!.currency,
      occurredAtMs: occurredAt,
      createdAtMs: now,
    })
    return { created: true, conversionId: id, clickId: input.clickId }
  }

  // Lost the claim: the key is taken. The winner has committed (a unique index waits for it), so it is there.
  const original = await originalOf(services, accountId, conversionType, input, hash)
  return { created: false, conversionId: original.id, clickId: original.clickId }
}

interface KeyHolder {
  id: string
  clickId: string
  eventId: string | null
  conversionType: string
  externalOrderId: string | null
  payloadHash: string
  /** Value and currency equal to the report's, compared as stored (numeric(24, 6), upper-case currency). */
  sameAmount: boolean
}

/**
 * The conversion a report that lost the claim repeats, or 409 CONVERSION_CONFLICT.
 * For an order type the order key (account, type, externalOrderId) is the identity of the conversion:
 * a retry with the same value and currency is the same order whatever its eventId (a client that mints
 * an eventId per attempt must not count an order twice), and only a different value or currency is a
 * conflict. Any other match needs the whole payload to be equal, as an eventId is an idempotency key.
 * An eventId of one conversion together with the order key of another is 409: either id would be the
 * wrong answer for one of the two keys, and no new row may take them.
 */
async function originalOf(services: Services, accountId: string, conversionType: string, input: ConversionInput, hash: string): Promise<KeyHolder> {
  const holders = await keyHolders(services, accountId, conversionType, input)
  const byEvent = holders.find((h) => input.eventId !== undefined && h.eventId === input.eventId)
  const byOrder = holders.find((h) => h.conversionType === conversionType && input.externalOrderId !== undefined && h.externalOrderId === input.externalOrderId)
  if (byEvent && byOrder && byEvent.id !== byOrder.id) {
    throw new ApiError('CONVERSION_CONFLICT', 'This eventId belongs to one conversion and this conversionType + externalOrderId to another; send a new eventId.')
  }
  if (byOrder && ORDER_TYPES.has(conversionType)) {
    if (byOrder.sameAmount) return byOrder
    throw new ApiError('CONVERSION_CONFLICT', `This ${conversionType} externalOrderId was already reported with a different value or currency.`)
  }
  const original = byOrder ?? byEvent
  if (!original || original.payloadHash !== hash) throw new ApiError('CONVERSION_CONFLICT')
  return original
}

/** The account's conversions holding the report's eventId or its (type, externalOrderId): at most two. */
async function keyHolders(services: Services, accountId: string, conversionType: string, input: ConversionInput): Promise<KeyHolder[]> {
  const keys: SQL[] = []
  if (input.eventId !== undefined) keys.push(eq(conversions.eventId, input.eventId))
  if (input.externalOrderId !== undefined) {
    keys.push(and(eq(conversions.conversionType, conversionType), eq(conversions.externalOrderId, input.externalOrderId))!)
  }
  // Compared in SQL, through the same cast the insert made, so a value the column rounded still matches.
  const value = input.value === undefined ? null : String(input.value)
  const currency = input.currency?.toUpperCase() ?? null
  const sameAmount = sql<boolean>`((${conversions.value} is not distinct from cast(${value} as numeric(24, 6))) and (${conversions.currency} is not distinct from cast(${currency} as text)))`
  return services.db
    .select({
      id: conversions.id,
      clickId: conversions.clickId,
      eventId: conversions.eventId,
      conversionType: conversions.conversionType,
      externalOrderId: conversions.externalOrderId,
      payloadHash: conversions.payloadHash,
      sameAmount,
    })
    .from(conversions)
    .where(and(eq(conversions.accountId, accountId), or(...keys)))
    .limit(2)
}

type ConversionRow = typeof conversions.$inferInsert
type Tx = Parameters<Parameters<Services['db']['transaction']>[0]>[0]
type Inserted = Awaited<ReturnType<typeof insertRow>>

/**
 * The conversion as a `conversion.created` webhook event carries it: the report as recorded, with the id
 * the API answered and the link it counts for (alias and domain). Only a conversion recorded now has one;
 * a repeat recognised as a duplicate has none.
 */
export function conversionEventData(row: ConversionRow, link: { alias: string; domain: string }, stored: Inserted[number]) {
  return {
    conversionId: row.id,
    clickId: row.clickId,
    alias: link.alias,
    domain: link.domain,
    conversionType: row.conversionType,
    value: stored.value === null ? null : Number(stored.value),
    currency: stored.currency,
    externalOrderId: row.externalOrderId ?? null,
    eventId: row.eventId ?? null,
    occurredAt: row.occurredAt!.toISOString(),
    source: row.source ?? null,
    metadata: row.metadata ?? null,
    createdAt: row.createdAt!.toISOString(),
  }
}

/** Writes the conversion's event in the insert's transaction when it was recorded; answers `inserted`. */
async function withEvent(services: Services, tx: Tx, row: ConversionRow, link: { alias: string; domain: string }, inserted: Inserted): Promise<Inserted> {
  const outbox = services.webhookOutbox
  if (inserted.length === 0 || !outbox) return inserted
  const webhookIds = await outbox.subscribers(tx, row.accountId, 'conversion.created')
  await outbox.write(tx, row.accountId, 'conversion.created', webhookIds, [conversionEventData(row, link, inserted[0]!)], row.createdAt!)
  return inserted
}

/** The claim: the insert skips when a unique key (eventId, or type + externalOrderId) is taken. */
function insertRow(db: Pick<Services['db'], 'insert'>, row: ConversionRow) {
  return db.insert(conversions).values(row).onConflictDoNothing().returning({ id: conversions.id, value: conversions.value, currency: conversions.currency })
}

/**
 * A signed report (a browser's, with mu_sig) adds at most CONVERSIONS_PER_CLICK[type] conversions to
 * its click: a leaked signature attributes no more. Counted under the click's lock, so concurrent
 * reports cannot overshoot; a duplicate is still recognised (the insert skips before the cap applies).
 * The link's own account, reporting with its API key, is not capped.
 */
async function insertCapped(services: Services, row: ConversionRow, link: { alias: string; domain: string }) {
  const caps = services.config.conversionsPerClick
  const cap = caps[row.conversionType] ?? caps['*'] ?? 100
  return services.db.transaction(async (tx) => {
    await lockFor(tx, 'clickConversions', row.clickId)
    const [counted] = await tx
      .select({ n: count() })
      .from(conversions)
      .where(and(eq(conversions.clickId, row.clickId), eq(conversions.conversionType, row.conversionType)))
    const inserted = await insertRow(tx, row)
    if (inserted.length > 0 && Number(counted?.n ?? 0) >= cap) {
      throw new ApiError('CONVERSION_LIMIT', `This click already carries ${cap} ${row.conversionType} conversion${cap === 1 ? '' : 's'}, the most a signed report may add.`, {
        limit: cap,
        remaining: 0,
        retryAfter: ATTRIBUTION_WINDOW_MS / 1000,
      })
    }
    return withEvent(services, tx, row, link, inserted)
  })
}
