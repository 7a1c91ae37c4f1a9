// Ids shown to clients carry a prefix naming what they identify (`link_…`, `acct_…`), so an id pasted
// in the wrong place is recognisable. One table: a new kind of record gets its prefix here.
import { randomBase64url } from './secrets'

export const ID_PREFIXES = {
  link: 'link_',
  account: 'acct_',
  apiKey: 'key_',
  guest: 'guest_',
  emailVerification: 'ev_',
  domain: 'dom_',
  conversion: 'cv_',
  checkout: 'co_',
  agent: 'agt_',
  approval: 'apr_',
  oauthRequest: 'oreq_',
  oauthClient: 'cli_',
  session: 'ses_',
  oauthToken: 'tok_',
  tokenFamily: 'fam_',
  signIn: 'sgn_',
  audit: 'aud_',
  report: 'rep_',
  operatorAction: 'opa_',
  webhook: 'wh_',
  webhookEvent: 'evt_',
  webhookDelivery: 'whd_',
} as const

export type IdKind = keyof typeof ID_PREFIXES

/**
 * 16 random bytes: 22 base64url characters after the prefix, unguessable, so ids of other accounts
 * cannot be enumerated. core/click-id.ts relies on this length for link ids.
 */
export const ID_RANDOM_BYTES = 16

/** The base64url characters of ID_RANDOM_BYTES (no padding). */
const ID_RANDOM_CHARS = Math.ceil((ID_RANDOM_BYTES * 4) / 3)

export function newId(kind: IdKind): string {
  return ID_PREFIXES[kind] + randomBase64url(ID_RANDOM_BYTES)
}

/** The shape of an id of `kind` as a JSON Schema pattern (route models: t.String({ pattern })). */
export function idPattern(kind: IdKind): string {
  return `^${ID_PREFIXES[kind]}[A-Za-z0-9_-]{${ID_RANDOM_CHARS}}$`
}

const ID_SHAPES = Object.fromEntries(Object.keys(ID_PREFIXES).map((kind) => [kind, new RegExp(idPattern(kind as IdKind))])) as Record<IdKind, RegExp>

/**
 * Whether `value` has the shape of an id of `kind`: checked before a lookup, so that a malformed or
 * foreign id is "not found" without asking the database.
 */
export function isId(kind: IdKind, value: string): boolean {
  return ID_SHAPES[kind].test(value)
}
