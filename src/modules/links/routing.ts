// A link's routing (docs/routing.md): the checks of what a client sends, the stored form with its ids
// assigned, and the short form the cached record carries to the redirector (core/routing.ts). Every
// refusal is 400 VALIDATION_FAILED naming the rule (or variant) and the field.
import { DEVICES, parseCidr, type CachedRouting, type Device } from '../../../core/routing'
import type { LinkRouting, StoredAb, StoredRule } from '../../db/schema'
import { PLAN_FEATURES, type Plan } from '../../lib/plans'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import { upgradeUrl } from '../account/meta'
import { COUNTRY_CODES } from './countries'
import { MAX_CONDITION_VALUES, MAX_RULES, WINNER_BY, type RoutingData } from './model'
import { checkDestinations } from './url'

const ID = /^[A-Za-z0-9_-]{1,32}$/
const LANGUAGE_TAG = /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/
const CONDITIONS = ['device', 'country', 'language', 'query', 'ip', 'after', 'before'] as const
/** An A/B test ends within a year. */
const MAX_AB_DAYS = 366
const MAX_QUERY_NAME = 128
const MAX_QUERY_VALUE = 512

/** Routing is Pro's: anyone else is refused with the way to upgrade. */
export function requireRoutingPlan(services: Pick<Services, 'config'>, plan: Plan): void {
  if (!PLAN_FEATURES[plan].routing) {
    throw new ApiError('PRO_REQUIRED', 'Routing (rules and A/B tests) is a Pro feature; upgrade with POST /api/v1/account/upgrade.', { upgrade_url: upgradeUrl(services) })
  }
}

function invalid(field: string, problem: string): ApiError {
  return new ApiError('VALIDATION_FAILED', `${field}: ${problem}`)
}

/**
 * The routing a client sent (any JSON: the route's schema documents it, this checks it), in its stored
 * form: ids assigned, conditions normalised, destinations checked as a link's are. `current` is the
 * link's stored routing: a completed A/B test sent back with status "completed" stays as it was, and
 * the same running variants keep their test's start. Null when nothing routes.
 */
export async function checkRouting(services: Pick<Services, 'config' | 'db' | 'now'>, input: unknown, field: string, current: LinkRouting | null = null): Promise<LinkRouting | null> {
  const body = object(input, field, ['rules', 'ab'])
  const rules = body.rules === undefined ? [] : array(body.rules, `${field}.rules`, 0, MAX_RULES)
  const given = rules.map((raw, i) => object(raw, `${field}.rules.${i}`, ['id', 'url', 'when']))
  const ruleIds = assignIds(
    given.map((r) => r.id),
    (i) => `r${i + 1}`,
    `${field}.rules`,
  )
  const now = services.now()
  const stored: StoredRule[] = given.map((rule, i) => ({
    id: ruleIds[i]!,
    url: text(rule.url, `${field}.rules.${i}.url`),
    when: checkConditions(rule.when, `${field}.rules.${i}.when`),
  }))
  const ab = body.ab === undefined || body.ab === null ? null : checkAb(body.ab, `${field}.ab`, now, current?.ab ?? null)
  // Destinations: the same checks as a link's, in one query.
  const running = ab?.status === 'running' ? ab.variants : []
  const urls = [...stored.map((r) => r.url), ...running.map((v) => v.url)]
  const fields = [...stored.map((_, i) => `${field}.rules.${i}.url`), ...running.map((_, i) => `${field}.ab.variants.${i}.url`)]
  const checked = await checkDestinations(services, urls)
  checked.forEach((result, i) => {
    if (result instanceof ApiError) throw new ApiError(result.code, `${fields[i]}: ${result.hint}`)
  })
  for (const [i, rule] of stored.entries()) rule.url = checked[i] as string
  for (const [i, variant] of running.entries()) variant.url = checked[stored.length + i] as string
  if (stored.length === 0 && ab === null) return null
  return { rules: stored, ab }
}

/** A JSON object with only `allowed` keys; anything else is refused naming the key. */
function object(raw: unknown, field: string, allowed: readonly string[]): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid(field, 'must be a JSON object')
  const unknown = Object.keys(raw).find((key) => !allowed.includes(key))
  if (unknown !== undefined) throw invalid(`${field}.${unknown.slice(0, 40)}`, `is not a field here; use ${allowed.join(', ')}`)
  return raw as Record<string, unknown>
}

function array(raw: unknown, field: string, min: number, max: number): unknown[] {
  if (!Array.isArray(raw)) throw invalid(field, 'must be an array')
  if (raw.length < min || raw.length > max) throw invalid(field, min === max ? `${min} items` : `${min}-${max} items, got ${raw.length}`)
  return raw
}

function text(raw: unknown, field: string): string {
  if (typeof raw !== 'string') throw invalid(field, 'must be a string')
  return raw
}

/** Ids as given, or assigned in order from `make` (skipping ones taken); duplicates refused. */
function assignIds(given: unknown[], make: (i: number) => string, field: string): string[] {
  const taken = new Set<string>()
  given.forEach((id, i) => {
    if (id === undefined) return
    if (typeof id !== 'string' || !ID.test(id)) throw invalid(`${field}.${i}.id`, '1-32 of A-Z a-z 0-9 _ -')
    if (taken.has(id)) throw invalid(`${field}.${i}.id`, `"${id}" is used twice; ids are unique in the link`)
    taken.add(id)
  })
  let next = 0
  return given.map((id) => {
    if (typeof id === 'string') return id
    let made = make(next++)
    while (taken.has(made)) made = make(next++)
    taken.add(made)
    return made
  })
}

function checkConditions(raw: unknown, field: string): StoredRule['when'] {
  const when = object(raw, field, CONDITIONS)
  if (Object.keys(when).length === 0) throw invalid(field, `needs at least one condition (${CONDITIONS.join(', ')})`)
  const out: StoredRule['when'] = {}
  if (when.device !== undefined) out.device = list(when.device, `${field}.device`, (v) => ((DEVICES as readonly string[]).includes(v) ? v : null), `one of ${DEVICES.join(', ')}`) as Device[]
  if (when.country !== undefined) out.country = list(when.country, `${field}.country`, (v) => (COUNTRY_CODES.has(v) ? v : null), 'an ISO 3166-1 alpha-2 code in upper case, such as DE')
  if (when.language !== undefined) out.language = list(when.language, `${field}.language`, (v) => (LANGUAGE_TAG.test(v) && v.length <= 35 ? v : null), 'a language tag such as en or pt-BR')
  if (when.ip !== undefined) out.ip = list(when.ip, `${field}.ip`, (v) => (v.length <= 50 && parseCidr(v) ? v : null), 'an IPv4 or IPv6 address or CIDR block such as 203.0.113.0/24')
  if (when.query !== undefined) out.query = checkQuery(when.query, `${field}.query`)
  const after = when.after === undefined ? undefined : instant(when.after, `${field}.after`)
  const before = when.before === undefined ? undefined : instant(when.before, `${field}.before`)
  if (after !== undefined && before !== undefined && before <= after) throw invalid(`${field}.before`, 'must be later than after')
  if (after !== undefined) out.after = new Date(after).toISOString()
  if (before !== undefined) out.before = new Date(before).toISOString()
  return out
}

/** A list of 1-50 values, each kept when `accept` gives it back, or refused naming the value's place. */
function list(raw: unknown, field: string, accept: (value: string) => string | null, expected: string): string[] {
  const values = array(raw, field, 1, MAX_CONDITION_VALUES)
  const seen = new Set<string>()
  return values.flatMap((value, i) => {
    const accepted = typeof value === 'string' ? accept(value) : null
    if (accepted === null) throw invalid(`${field}.${i}`, `${JSON.stringify(value)?.slice(0, 40)} is not ${expected}`)
    if (seen.has(accepted)) return []
    seen.add(accepted)
    return [accepted]
  })
}

function checkQuery(raw: unknown, field: string): Record<string, string | null> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid(field, 'must be an object of name: value (or null)')
  const entries = Object.entries(raw)
  if (entries.length === 0 || entries.length > MAX_CONDITION_VALUES) throw invalid(field, `1-${MAX_CONDITION_VALUES} names`)
  for (const [name, value] of entries) {
    if (name.length === 0 || name.length > MAX_QUERY_NAME) throw invalid(field, `a name has 1-${MAX_QUERY_NAME} characters`)
    if (value !== null && (typeof value !== 'string' || value.length > MAX_QUERY_VALUE)) throw invalid(`${field}.${name.slice(0, 40)}`, `a string of at most ${MAX_QUERY_VALUE} characters, or null`)
  }
  return Object.fromEntries(entries) as Record<string, string | null>
}

function instant(raw: unknown, field: string): number {
  const ms = typeof raw === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(raw) ? Date.parse(raw) : Number.NaN
  if (!Number.isFinite(ms)) throw invalid(field, 'an RFC 3339 date-time such as 2026-12-01T09:00:00Z')
  return ms
}

function checkAb(raw: unknown, field: string, now: number, current: StoredAb | null): StoredAb {
  const input = object(raw, field, ['variants', 'sticky', 'ends_at', 'winner_by', 'status', 'winner', 'completed_at'])
  // Sent back as read: a completed test stays completed (it splits no traffic any more).
  if (input.status === 'completed') {
    if (current?.status !== 'completed') throw invalid(`${field}.status`, 'only a completed test can be sent back as completed; a new test has no status')
    return current
  }
  if (input.status !== undefined && input.status !== 'running') throw invalid(`${field}.status`, 'is read-only: running or completed, as GET answers it')
  const given = array(input.variants, `${field}.variants`, 2, 4).map((v, i) => object(v, `${field}.variants.${i}`, ['id', 'url', 'weight']))
  const ids = assignIds(
    given.map((v) => v.id),
    (i) => String.fromCharCode(97 + i),
    `${field}.variants`,
  )
  const variants = given.map((variant, i) => {
    const weight = variant.weight
    if (typeof weight !== 'number' || !Number.isInteger(weight) || weight < 1 || weight > 100) throw invalid(`${field}.variants.${i}.weight`, 'an integer 1-100')
    return { id: ids[i]!, url: text(variant.url, `${field}.variants.${i}.url`), weight }
  })
  const total = variants.reduce((sum, v) => sum + v.weight, 0)
  if (total !== 100) throw invalid(`${field}.variants`, `the weights sum to ${total}; they must sum to 100`)
  if (input.sticky !== undefined && typeof input.sticky !== 'boolean') throw invalid(`${field}.sticky`, 'true or false')
  const endsAt = input.ends_at === undefined || input.ends_at === null ? null : instant(input.ends_at, `${field}.ends_at`)
  const winnerBy = input.winner_by ?? null
  if (winnerBy !== null && !(WINNER_BY as readonly unknown[]).includes(winnerBy)) throw invalid(`${field}.winner_by`, `one of ${WINNER_BY.join(', ')}`)
  if (endsAt !== null) {
    if (endsAt <= now) throw invalid(`${field}.ends_at`, 'must be in the future')
    if (endsAt > now + MAX_AB_DAYS * 86_400_000) throw invalid(`${field}.ends_at`, `must be within ${MAX_AB_DAYS} days`)
    if (winnerBy === null) throw invalid(`${field}.winner_by`, 'is required with ends_at: leads, sales or conversions')
  } else if (winnerBy !== null) {
    throw invalid(`${field}.ends_at`, 'is required with winner_by: when the test ends')
  }
  // The same variants as the running test: it goes on (its clicks so far still count).
  const same = current?.status === 'running' && current.variants.length === variants.length && current.variants.every((v, i) => v.id === variants[i]!.id && v.url === variants[i]!.url)
  return {
    variants,
    sticky: (input.sticky as boolean | undefined) ?? true,
    ends_at: endsAt === null ? null : new Date(endsAt).toISOString(),
    winner_by: winnerBy as StoredAb['winner_by'],
    status: 'running',
    winner: null,
    completed_at: null,
    started_at: same ? current.started_at : new Date(now).toISOString(),
  }
}

/** The routing as the API answers it (no started_at). */
export function routingView(routing: LinkRouting | null): RoutingData {
  if (!routing) return { rules: [], ab: null }
  const ab = routing.ab
  return {
    rules: routing.rules.map((rule) => ({ id: rule.id, url: rule.url, when: rule.when })),
    ab: ab && { variants: ab.variants, sticky: ab.sticky, ends_at: ab.ends_at, winner_by: ab.winner_by, status: ab.status, winner: ab.winner, completed_at: ab.completed_at },
  }
}

/** When the completion sweep must end the test: a running test with an end. */
export function abEndsAt(routing: LinkRouting | null): Date | null {
  const ab = routing?.ab
  return ab?.status === 'running' && ab.ends_at !== null ? new Date(ab.ends_at) : null
}

/** What the cached record carries: the rules and a running test; undefined when nothing routes. */
export function cachedRouting(routing: LinkRouting | null | undefined): CachedRouting | undefined {
  if (!routing) return undefined
  const out: CachedRouting = {}
  if (routing.rules.length > 0) {
    out.rules = routing.rules.map((rule) => {
      const w = rule.when
      return {
        id: rule.id,
        url: rule.url,
        ...(w.device && { device: w.device as Device[] }),
        ...(w.country && { country: w.country }),
        ...(w.language && { language: w.language.map((l) => l.toLowerCase()) }),
        ...(w.query && { query: Object.entries(w.query) }),
        ...(w.ip && { ip: w.ip }),
        ...(w.after && { after: Date.parse(w.after) }),
        ...(w.before && { before: Date.parse(w.before) }),
      }
    })
  }
  if (routing.ab?.status === 'running') out.ab = { variants: routing.ab.variants, sticky: routing.ab.sticky }
  return out.rules || out.ab ? out : undefined
}

/** The destinations a link's routing may send a visitor to: its rules' and its running test's. */
export function routingUrls(routing: LinkRouting | null | undefined): string[] {
  if (!routing) return []
  return [...routing.rules.map((rule) => rule.url), ...(routing.ab?.status === 'running' ? routing.ab.variants.map((v) => v.url) : [])]
}
