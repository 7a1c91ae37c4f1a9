// The daily re-check of verified custom domains. A domain stays verified only while its TXT record is
// there: whoever controls the name now may no longer be the account that proved it once (a lapsed and
// re-registered domain), and a verified domain gets certificates (/tls/ask) and serves links. A DNS
// change can be a mistake, so a missing record does not unverify at once: the first miss is recorded
// and the owner mailed; seven days later, if the record is still missing, the domain is unverified
// (announced, so redirectors stop serving it and /tls/ask answers 404). A record seen again clears the
// miss. Unverifying keeps the domain and its links: verifying it again brings them back. The unverifying
// commits the domain's `domain.unverified` webhook event with it.
//
// Each API process looks every hour for domains last checked (or verified) a day ago or more and claims
// each one with a conditional update, so several processes never check (or mail about) one domain twice.
import { and, eq, isNotNull, isNull, lte, or } from 'drizzle-orm'
import { accounts, domains } from '../../db/schema'
import { createTxtResolver, DnsLookupError, type TxtResolver } from '../../dns/resolver'
import { errorSummary } from '../../lib/errors'
import { log } from '../../lib/log'
import { createMailer, type Mailer, type MailMessage } from '../../mail/mailer'
import type { Services } from '../../services'
import { announce, verificationRecord, writeDomainEvent } from './service'

const HOUR_MS = 3600_000
const DAY_MS = 24 * HOUR_MS
/** How often a verified domain's record is looked up. */
export const RECHECK_EVERY_MS = DAY_MS
/** How long a record may be missing before the domain is unverified. */
export const UNVERIFY_AFTER_MS = 7 * DAY_MS
/** How often a process looks for domains due: a domain is checked within an hour of its day being up. */
const SWEEP_INTERVAL_MS = HOUR_MS
/** A check that could not decide (our resolver did not answer, the mail did not go) is retried this soon. */
const RETRY_AFTER_MS = HOUR_MS
/** Domains read per query, and looked up at once. */
const BATCH = 50
const PARALLEL_LOOKUPS = 8

type Deps = Pick<Services, 'db' | 'kv' | 'config' | 'now' | 'counters' | 'webhookOutbox'>

export type RecheckOutcome =
  /** The record is there (and was there at the last check). */
  | 'found'
  /** The record is there again: the miss was cleared. */
  | 'restored'
  /** The first miss: recorded, the owner mailed. */
  | 'first_miss'
  /** Missing again, within the seven days. */
  | 'missing'
  /** Missing for seven days: the domain was unverified. */
  | 'unverified'
  /** Nothing decided (our DNS resolver or the mail failed): retried within the hour. */
  | 'undecided'

export type RecheckSummary = Record<RecheckOutcome, number>

interface DueDomain {
  id: string
  hostname: string
  verificationToken: string
  recordMissingSince: Date | null
  email: string
}

/** The mail an owner gets at the first miss. */
export function missingRecordMail(to: string, domain: Pick<DueDomain, 'hostname' | 'verificationToken'>, unverifyAt: Date, publicApiUrl: string): MailMessage {
  const record = verificationRecord(domain)
  const day = unverifyAt.toISOString().slice(0, 10)
  return {
    to,
    subject: `The DNS record of ${domain.hostname} is missing`,
    text: [
      `The TXT record that proves you control ${domain.hostname} was not found when it was checked today.`,
      '',
      `Expected: TXT ${record.name} "${record.value}"`,
      '',
      `If it is still missing on ${day} (UTC), the domain will be unverified: its links stop redirecting (they are`,
      'kept, and work again once you verify the domain again) and no new HTTPS certificate is issued for it.',
      'The record is checked every day; once it is back, nothing else is needed.',
      '',
      `If you no longer use ${domain.hostname} here, remove it in the dashboard (${publicApiUrl}/app) or with`,
      `DELETE /api/v1/domains/${domain.hostname}.`,
    ].join('\n'),
  }
}

/** Checks every verified domain whose day is up; what happened to how many. */
export async function recheckDomains(services: Deps, resolver: TxtResolver, mailer: Mailer): Promise<RecheckSummary> {
  const summary: RecheckSummary = { found: 0, restored: 0, first_miss: 0, missing: 0, unverified: 0, undecided: 0 }
  const now = new Date(services.now())
  const dueBefore = new Date(now.getTime() - RECHECK_EVERY_MS)
  // A domain's first day counts from its verification.
  const due = or(lte(domains.recheckedAt, dueBefore), and(isNull(domains.recheckedAt), lte(domains.verifiedAt, dueBefore)))!
  for (;;) {
    // Claimed rows get rechecked_at = now and leave the due set, so this loop ends. No index: a sweep an
    // hour over a table of a few domains per account reads it whole in well under a second.
    const rows = await services.db
      .select({ id: domains.id, hostname: domains.hostname, verificationToken: domains.verificationToken, recordMissingSince: domains.recordMissingSince, email: accounts.email })
      .from(domains)
      .innerJoin(accounts, eq(accounts.id, domains.accountId))
      .where(and(isNotNull(domains.verifiedAt), due))
      .limit(BATCH)
    if (rows.length === 0) return summary
    const claimed: DueDomain[] = []
    for (const row of rows) {
      const [won] = await services.db
        .update(domains)
        .set({ recheckedAt: now })
        .where(and(eq(domains.id, row.id), isNotNull(domains.verifiedAt), due))
        .returning({ id: domains.id })
      if (won) claimed.push(row)
    }
    for (let i = 0; i < claimed.length; i += PARALLEL_LOOKUPS) {
      const outcomes = await Promise.all(claimed.slice(i, i + PARALLEL_LOOKUPS).map((row) => recheckOne(services, resolver, mailer, row, now)))
      for (const outcome of outcomes) summary[outcome]++
    }
  }
}

async function recheckOne(services: Deps, resolver: TxtResolver, mailer: Mailer, row: DueDomain, now: Date): Promise<RecheckOutcome> {
  const expected = verificationRecord(row)
  let found: string[]
  try {
    found = await resolver.resolveTxt(expected.name)
  } catch (error) {
    // The domain's own DNS failing is its owner's to fix, like a missing record; our resolver not
    // answering says nothing about the domain.
    if (!(error instanceof DnsLookupError && error.domainSide)) return retrySoon(services, row, now)
    found = []
  }
  if (found.some((value) => value.trim() === expected.value)) {
    if (!row.recordMissingSince) return 'found'
    await services.db
      .update(domains)
      .set({ recordMissingSince: null })
      .where(and(eq(domains.id, row.id), eq(domains.recordMissingSince, row.recordMissingSince)))
    return 'restored'
  }
  if (!row.recordMissingSince) return firstMiss(services, mailer, row, now)
  if (now.getTime() - row.recordMissingSince.getTime() < UNVERIFY_AFTER_MS) return 'missing'
  const missingSince = row.recordMissingSince
  const unverified = await services.db.transaction(async (tx) => {
    const [changed] = await tx
      .update(domains)
      .set({ verifiedAt: null, recordMissingSince: null, recheckedAt: null })
      .where(and(eq(domains.id, row.id), eq(domains.recordMissingSince, missingSince)))
      .returning()
    if (changed) await writeDomainEvent(services, tx, changed, 'domain.unverified')
    return changed
  })
  if (!unverified) return 'missing'
  await announce(services, row.hostname)
  log.warn({ component: 'domains', domain: row.hostname }, `custom domain unverified: its TXT record has been missing since ${row.recordMissingSince.toISOString()}`)
  return 'unverified'
}

/**
 * Records the first miss and mails the owner. The seven days count from a miss the owner was told of:
 * when the mail does not go, the miss is taken back and the check retried.
 */
async function firstMiss(services: Deps, mailer: Mailer, row: DueDomain, now: Date): Promise<RecheckOutcome> {
  const [marked] = await services.db
    .update(domains)
    .set({ recordMissingSince: now })
    .where(and(eq(domains.id, row.id), isNull(domains.recordMissingSince), isNotNull(domains.verifiedAt)))
    .returning({ id: domains.id })
  if (!marked) return 'missing'
  try {
    await mailer.send(missingRecordMail(row.email, row, new Date(now.getTime() + UNVERIFY_AFTER_MS), services.config.publicApiUrl))
  } catch (error) {
    log.error({ component: 'domains', domain: row.hostname, error: errorSummary(error) }, 'the mail about a missing TXT record did not go; the check is retried within the hour')
    await services.db
      .update(domains)
      .set({ recordMissingSince: null })
      .where(and(eq(domains.id, row.id), eq(domains.recordMissingSince, now)))
    return retrySoon(services, row, now)
  }
  return 'first_miss'
}

/** Makes the domain due again RETRY_AFTER_MS from now instead of a day. */
async function retrySoon(services: Deps, row: DueDomain, now: Date): Promise<RecheckOutcome> {
  await services.db
    .update(domains)
    .set({ recheckedAt: new Date(now.getTime() - RECHECK_EVERY_MS + RETRY_AFTER_MS) })
    .where(and(eq(domains.id, row.id), eq(domains.recheckedAt, now)))
  return 'undecided'
}

/**
 * Runs the re-check every hour, the first an hour after start: a process restarted often does not
 * look up every due domain at each start, and a check an hour late is still a daily one. Returns its
 * stop. A failed run is logged and tried at the next hour.
 */
export function startDomainRecheck(services: Deps, options: { resolver?: TxtResolver; mailer?: Mailer; intervalMs?: number } = {}): () => void {
  const resolver = options.resolver ?? createTxtResolver(services.config)
  const mailer = options.mailer ?? createMailer(services.config.mail)
  let running = false
  const run = () => {
    // A run still going (many domains, slow DNS) is not overlapped by the next.
    if (running) return
    running = true
    recheckDomains(services, resolver, mailer)
      .then(
        (summary) => {
          if (summary.first_miss + summary.unverified + summary.restored + summary.undecided > 0) {
            log.info({ component: 'domains', ...summary }, 'custom domains re-checked')
          }
        },
        (error) => log.error({ component: 'domains', error: errorSummary(error) }, 'the re-check of custom domains failed'),
      )
      .finally(() => {
        running = false
      })
  }
  const timer = setInterval(run, options.intervalMs ?? SWEEP_INTERVAL_MS)
  timer.unref?.()
  return () => clearInterval(timer)
}
