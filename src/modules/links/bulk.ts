// POST /links/bulk: up to MAX_BULK_LINKS shorten requests, each created or refused on its own. Items
// are validated (their destinations against the served domains in one query) and their passwords
// hashed a few at a time, then inserted in request order (so of two items asking for one alias the
// first wins) in one transaction under the quota lock, each item counted against the quota in turn.
import { ApiError, toApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import type { AccountPrincipal } from '../../plugins/auth'
import type { LinkRow } from '../../db/schema'
import { insertLink, insertLinks, prepareLink, type NewLink } from './create'
import { checkDestinations } from './url'
import { shortenRequestValidator, type LinkRecord, type ShortenInput } from './model'
import { accountMeta, currentAccountMeta } from '../account/meta'
import { toLinkRecord } from './service'

/** Password hashes computed at once: argon2id takes 19 MiB and ~50 ms each; two cores here. */
const PREPARE_CONCURRENCY = 4
const MAX_ISSUE_CHARS = 200

export type BulkItemResult =
  | { index: number; success: true; data: LinkRecord }
  | { index: number; success: false; error: string; status: number; hint: string; limit?: number | null; remaining?: number | null; upgrade_url?: string }

/** The item against the ShortenRequest schema, with the same hints as a request body gets. */
export function checkItem(item: unknown, prefix: string): ShortenInput {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) {
    throw new ApiError('VALIDATION_FAILED', `${prefix}: must be a JSON object with at least url.`)
  }
  if (shortenRequestValidator.Check(item)) return item as ShortenInput
  const first = shortenRequestValidator.Errors(item).First()
  const key = first?.path.split('/')[1]
  const missing = key !== undefined && (item as Record<string, unknown>)[key] === undefined
  const message = missing ? 'is required' : (first?.message ?? 'invalid value').slice(0, MAX_ISSUE_CHARS)
  throw new ApiError('VALIDATION_FAILED', `${prefix}${key ? `.${key}` : ''}: ${message}`)
}

function failure(index: number, error: unknown): BulkItemResult {
  const apiError = error instanceof ApiError ? error : toApiError('UNKNOWN', error)
  const { limit, remaining, upgrade_url } = apiError.extra
  return {
    index,
    success: false,
    error: apiError.code,
    status: apiError.status,
    hint: apiError.hint,
    ...(limit !== undefined && { limit }),
    ...(remaining !== undefined && { remaining }),
    ...(upgrade_url !== undefined && { upgrade_url }),
  }
}

/** Runs `task` over `items` with at most `limit` at a time; results in input order. */
async function mapLimit<T, R>(items: T[], limit: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await task(items[index]!, index)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}

/**
 * A dry run checks each item as it would be created, each on its own (two items asking for one alias
 * both pass: nothing of the first is kept for the second to clash with).
 */
export async function bulkCreate(services: Services, account: AccountPrincipal, items: unknown[], dryRun = false) {
  const inputs = items.map((item, index): ShortenInput | BulkItemResult => {
    try {
      return checkItem(item, `links[${index}]`)
    } catch (error) {
      return failure(index, error)
    }
  })
  const destinations = await checkDestinations(
    services,
    inputs.map((input) => ('success' in input ? '' : input.url)),
  )
  const prepared = await mapLimit(inputs, PREPARE_CONCURRENCY, async (input, index): Promise<NewLink | BulkItemResult> => {
    if ('success' in input) return input
    try {
      const destination = destinations[index]!
      if (destination instanceof ApiError) throw destination
      return await prepareLink(services, account, input, `links[${index}]`, destination)
    } catch (error) {
      return failure(index, error)
    }
  })
  const valid = prepared.flatMap((link, index) => ('success' in link ? [] : [{ link, prefix: `links[${index}]`, index }]))
  const inserted = new Map<number, LinkRow | ApiError>()
  let used: number | null = null
  if (dryRun) {
    for (const { link, prefix, index } of valid) inserted.set(index, await insertLink(services, account, link, prefix, true).then(({ row }) => row, toError))
  } else if (valid.length > 0) {
    try {
      const batch = await insertLinks(services, account, valid)
      used = batch.used
      for (const [k, result] of batch.results.entries()) inserted.set(valid[k]!.index, result)
    } catch (error) {
      for (const { index } of valid) inserted.set(index, toError(error))
    }
  }
  const results = prepared.map((link, index): BulkItemResult => {
    if ('success' in link) return link
    const result = inserted.get(index)!
    return result instanceof ApiError ? failure(index, result) : { index, success: true, data: toLinkRecord(result, services) }
  })
  const succeeded = results.filter((r) => r.success).length
  const meta = used === null ? await currentAccountMeta(services, account) : accountMeta(services, { plan: account.plan, linksThisMonth: used })
  return { results, summary: { total: results.length, succeeded, failed: results.length - succeeded }, meta }
}

const toError = (error: unknown): ApiError => (error instanceof ApiError ? error : toApiError('UNKNOWN', error))
