// One insert for every new link, guest or account: the caller's alias, or a generated one drawn again
// when it collides. A taken alias must not abort the caller's transaction (the quota lock and counters
// live in it), so the insert skips on conflict instead of failing.
import type { Db } from '../../db/client'
import { links, type LinkRow } from '../../db/schema'
import { newId } from '../../lib/ids'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import { generateAlias, isReservedAlias } from './alias'

/** 62^7 aliases make a collision rare; five in a row means something else is wrong. */
export const MAX_ALIAS_ATTEMPTS = 5

export type LinkValues = Omit<typeof links.$inferInsert, 'id' | 'alias'>

export interface AliasChoice {
  /** The caller's alias; a taken one is 409 ALIAS_TAKEN. Absent: generated. */
  alias?: string
  /** On a verified custom domain the reserved words of the default domain are free to use. */
  customDomain: boolean
  /** Where the alias sits in the request, for the hint ("body", "links[3]"). */
  prefix: string
}

export async function insertWithAlias(
  tx: Pick<Db, 'insert'>,
  services: Pick<Services, 'counters'>,
  values: LinkValues,
  choice: AliasChoice,
): Promise<LinkRow> {
  const attempts = choice.alias === undefined ? MAX_ALIAS_ATTEMPTS : 1
  for (let attempt = 0; attempt < attempts; attempt++) {
    const alias = choice.alias ?? generateAlias()
    if (choice.alias === undefined && !choice.customDomain && isReservedAlias(alias)) continue
    const [row] = await tx
      .insert(links)
      .values({ ...values, id: newId('link'), alias })
      .onConflictDoNothing({ target: [links.domain, links.alias] })
      .returning()
    if (row) return row
    if (choice.alias !== undefined) throw new ApiError('ALIAS_TAKEN', `${choice.prefix}.alias: "${choice.alias}" is taken on ${values.domain}.`)
    services.counters.aliasCollisions++
  }
  throw new Error(`no free alias after ${MAX_ALIAS_ATTEMPTS} attempts`)
}
