// A webhook URL as its owner gives it: https, no user name or password, and a host that is a name or a
// public address (WEBHOOKS_ALLOW_PRIVATE_TARGETS, tests only: also http, and loopback). A name is not
// resolved here: its addresses are checked at every attempt, where the connection is made to the very
// address checked (reputation/service-fetch.ts), since a name may resolve elsewhere tomorrow.
import type { Config } from '../../../core/config'
import { hostKind } from '../../lib/hosts'
import { ApiError } from '../../plugins/errors'
import { MAX_URL_LENGTH } from './model'

const refused = (why: string) => new ApiError('WEBHOOK_URL_INVALID', `body.url: ${why}`)

/** The URL as stored (the WHATWG serialisation), or 400 WEBHOOK_URL_INVALID. */
export function checkTargetUrl(config: Pick<Config, 'webhooks'>, raw: string): string {
  const allowPrivate = config.webhooks.allowPrivateTargets
  let url: URL
  try {
    url = new URL(raw.trim())
  } catch {
    throw refused('not an absolute URL.')
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) throw refused('must use https.')
  if (url.username !== '' || url.password !== '') throw refused('must not carry a user name or password.')
  if (url.hash !== '') throw refused('must not carry a #fragment.')
  const kind = hostKind(url.hostname)
  if (kind !== 'name' && kind !== 'public' && !(allowPrivate && kind === 'loopback')) throw refused('the host is not a public address.')
  if (url.href.length > MAX_URL_LENGTH) throw refused(`at most ${MAX_URL_LENGTH} characters.`)
  return url.href
}
