// The guard of the redirector's endpoints (/internal/*): the shared INTERNAL_SECRET in its header,
// compared in constant time. Used as a route's transform, so it runs before the query or body is
// validated: a caller without the secret learns nothing but 401.
import type { Config } from '../../core/config'
import { INTERNAL_SECRET_HEADER } from '../../core/internal-secret'
import { sameSecret } from '../lib/secrets'
import { ApiError } from './errors'

export function internalSecretGuard(config: Pick<Config, 'internalSecret'>) {
  return ({ request }: { request: Request }) => {
    const given = request.headers.get(INTERNAL_SECRET_HEADER)
    if (given === null || !sameSecret(given, config.internalSecret)) {
      throw new ApiError('UNAUTHORIZED', `Missing or wrong ${INTERNAL_SECRET_HEADER} header.`)
    }
  }
}
