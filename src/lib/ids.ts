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
} as const

export type IdKind = keyof typeof ID_PREFIXES

/**
 * 16 random bytes: 22 base64url characters after the prefix, unguessable, so ids of other accounts
 * cannot be enumerated. src/core/click-id.ts relies on this length for link ids.
 */
export const ID_RANDOM_BYTES = 16

export function newId(kind: IdKind): string {
  return ID_PREFIXES[kind] + randomBase64url(ID_RANDOM_BYTES)
}
