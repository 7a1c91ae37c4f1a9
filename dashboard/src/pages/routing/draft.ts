// A link's routing as the panel edits it, and as the API takes it. The draft keeps what a person typed
// (comma-separated codes, name=value lines, local times) and becomes the API's shape only on Save: the
// API checks every value, and its refusal names the field (placeOf turns that name into words).
import type { RoutingData, RoutingInput } from '../../types'

type RuleInput = NonNullable<RoutingInput['rules']>[number]
type Conditions = RuleInput['when']
export type Device = NonNullable<Conditions['device']>[number]
export type AbRead = NonNullable<RoutingData['ab']>
export type WinnerBy = NonNullable<AbRead['winner_by']>

/** The devices in words, in the order shown; a Record, so a device the API adds fails the type-check here. */
export const DEVICE_WORDS: Record<Device, string> = {
  ios: 'iOS',
  android: 'Android',
  mobile: 'Any phone or tablet',
  desktop: 'Desktop',
  windows: 'Windows',
  macos: 'macOS',
  linux: 'Linux',
  chromeos: 'ChromeOS',
}
const DEVICES = Object.keys(DEVICE_WORDS) as Device[]

export const WINNER_WORDS: Record<WinnerBy, string> = {
  leads: 'Most leads (signups and leads)',
  sales: 'Most sales (purchases and sales)',
  conversions: 'Most conversions (every type but refunds)',
}

/** The API's limits on an A/B test (docs/routing.md). */
export const MIN_VARIANTS = 2
export const MAX_VARIANTS = 4

export interface RuleDraft {
  /** Stable while rules move: keys the rule's row and names its inputs. */
  key: number
  /** The API's id once saved (r1, …), kept so that a moved rule keeps its results. */
  id?: string
  url: string
  devices: Device[]
  /** Comma-separated, as typed; so are languages. */
  countries: string
  languages: string
  /** One name=value a line; a name alone: present with any value. */
  query: string
  /** One address or CIDR block a line. */
  ip: string
  /** datetime-local values in the browser's time zone ('' for none). */
  after: string
  before: string
}

export interface VariantDraft {
  key: number
  id?: string
  url: string
  /** As typed in the number input. */
  weight: string
}

export type AbDraft =
  | { kind: 'none' }
  /** Ended: shown as read and sent back as read, so it stays as it ended. */
  | { kind: 'completed'; test: AbRead }
  | { kind: 'edit'; variants: VariantDraft[]; sticky: boolean; endsAt: string; winnerBy: WinnerBy | '' }

export interface RoutingDraft {
  rules: RuleDraft[]
  ab: AbDraft
}

let lastKey = 0
const newKey = () => ++lastKey

export const emptyRule = (): RuleDraft => ({ key: newKey(), url: '', devices: [], countries: '', languages: '', query: '', ip: '', after: '', before: '' })
export const emptyVariant = (weight: number): VariantDraft => ({ key: newKey(), url: '', weight: String(weight) })
export const newTest = (): AbDraft => ({ kind: 'edit', variants: [emptyVariant(50), emptyVariant(50)], sticky: true, endsAt: '', winnerBy: '' })

/**
 * An instant as a datetime-local value in the browser's time zone ('' for none); seconds only when the
 * instant has some, so that a rule set through the API comes back unchanged when it is saved here.
 */
export function localOf(iso: string | null | undefined): string {
  if (!iso) return ''
  const date = new Date(iso)
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString()
  return local.slice(0, date.getSeconds() === 0 ? 16 : 19)
}
const isoOf = (local: string) => new Date(local).toISOString()

/** Codes, tags or addresses as typed: separated by commas, spaces or new lines (none of them holds any). */
const items = (text: string) => text.split(/[\s,]+/).filter(Boolean)

function queryText(query: Record<string, string | null> | undefined): string {
  return Object.entries(query ?? {})
    .map(([name, value]) => (value === null ? name : `${name}=${value}`))
    .join('\n')
}

/** name=value lines (split at the first "="; the value may hold more); a name alone matches any value. */
function queryOf(text: string): Record<string, string | null> | undefined {
  const lines = text.split('\n').filter((line) => line.trim() !== '')
  if (lines.length === 0) return undefined
  return Object.fromEntries(
    lines.map((line) => {
      const at = line.indexOf('=')
      return at === -1 ? [line.trim(), null] : [line.slice(0, at).trim(), line.slice(at + 1)]
    }),
  )
}

export function draftOf(routing: RoutingData): RoutingDraft {
  const rules = routing.rules.map((rule) => ({
    key: newKey(),
    id: rule.id,
    url: rule.url,
    devices: rule.when.device ?? [],
    countries: (rule.when.country ?? []).join(', '),
    languages: (rule.when.language ?? []).join(', '),
    query: queryText(rule.when.query),
    ip: (rule.when.ip ?? []).join('\n'),
    after: localOf(rule.when.after),
    before: localOf(rule.when.before),
  }))
  const ab = routing.ab
  if (ab === null) return { rules, ab: { kind: 'none' } }
  if (ab.status === 'completed') return { rules, ab: { kind: 'completed', test: ab } }
  const variants = ab.variants.map((v) => ({ key: newKey(), id: v.id, url: v.url, weight: String(v.weight) }))
  return { rules, ab: { kind: 'edit', variants, sticky: ab.sticky, endsAt: localOf(ab.ends_at), winnerBy: ab.winner_by ?? '' } }
}

function ruleBody(rule: RuleDraft): RuleInput {
  const when: Conditions = {}
  if (rule.devices.length > 0) when.device = DEVICES.filter((device) => rule.devices.includes(device))
  // Country codes are upper case; "de" can only mean DE.
  const countries = items(rule.countries).map((code) => code.toUpperCase())
  if (countries.length > 0) when.country = countries
  const languages = items(rule.languages)
  if (languages.length > 0) when.language = languages
  const query = queryOf(rule.query)
  if (query) when.query = query
  const ip = items(rule.ip)
  if (ip.length > 0) when.ip = ip
  if (rule.after) when.after = isoOf(rule.after)
  if (rule.before) when.before = isoOf(rule.before)
  // A rule without conditions is sent as it is: the API's refusal names it.
  return { ...(rule.id && { id: rule.id }), url: rule.url.trim(), when }
}

function abBody(ab: AbDraft): RoutingInput['ab'] {
  if (ab.kind === 'none') return null
  if (ab.kind === 'completed') return ab.test
  return {
    variants: ab.variants.map((v) => ({ ...(v.id && { id: v.id }), url: v.url.trim(), weight: Number(v.weight) })),
    sticky: ab.sticky,
    ends_at: ab.endsAt ? isoOf(ab.endsAt) : null,
    winner_by: ab.winnerBy || null,
  }
}

/** The whole routing for PUT: it replaces the one before. */
export function bodyOf(draft: RoutingDraft): RoutingInput {
  return { rules: draft.rules.map(ruleBody), ab: abBody(draft.ab) }
}

/** The weights as typed, summed (a weight not typed yet counts 0). */
export const weightTotal = (variants: VariantDraft[]) => variants.reduce((sum, v) => sum + (Number(v.weight) || 0), 0)

/** Weights that sum to 100, as even as integers allow (the first variants take the remainder). */
export function evenWeights(count: number): number[] {
  return Array.from({ length: count }, (_, i) => Math.floor(100 / count) + (i < 100 % count ? 1 : 0))
}

/** The field of the form a refusal is about: a rule's, a variant's, or the A/B test's. */
export type Place = { in: 'rule'; index: number; field: string } | { in: 'variant'; index: number; field: string } | { in: 'ab'; field: string }

/**
 * Where the API's hint of a refused PUT points ("body.rules.0.when.country.0: …" is the first rule's
 * countries); null when it names no field of the form.
 */
export function placeOf(hint: string): Place | null {
  const path = /^body\.([\w.-]+):/.exec(hint)?.[1]?.split('.')
  if (!path) return null
  const [section, second, third, fourth] = path
  if (section === 'rules' && second !== undefined && /^\d+$/.test(second)) {
    const field = third === 'when' ? (fourth ?? 'when') : (third ?? 'rule')
    return { in: 'rule', index: Number(second), field }
  }
  if (section === 'ab' && second === 'variants' && third !== undefined && /^\d+$/.test(third)) return { in: 'variant', index: Number(third), field: fourth ?? 'variant' }
  if (section === 'ab' && second !== undefined) return { in: 'ab', field: second }
  return null
}

const FIELD_WORDS: Record<string, string> = {
  url: 'destination',
  id: 'id',
  when: 'conditions',
  device: 'devices',
  country: 'countries',
  language: 'languages',
  query: 'query parameters',
  ip: 'client addresses',
  after: 'from',
  before: 'before',
  weight: 'weight',
  variants: 'variants',
  ends_at: 'ends at',
  winner_by: 'winner',
  sticky: 'sticky',
  status: 'status',
}

/** The place in the words the form uses: "Rule 1, countries", "A/B test, variant 2, weight". */
export function placeWords(place: Place): string {
  const field = FIELD_WORDS[place.field]
  const where = place.in === 'rule' ? `Rule ${place.index + 1}` : place.in === 'variant' ? `A/B test, variant ${place.index + 1}` : 'A/B test'
  return field ? `${where}, ${field}` : where
}
