// One insert for every new link, guest or account: the caller's alias, or a generated one drawn again
// when it collides. A taken alias must not abort the caller's transaction (the quota lock and counters
// live in it), so the insert skips on conflict instead of failing. A batch is one multi-row INSERT:
// Postgres inserts its rows in order, so of two items asking for one alias the first wins.
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

export interface NewRow {
  values: LinkValues
  choice: AliasChoice
}

/** A generated alias; on the default domain never a reserved word. */
function drawAlias(customDomain: boolean): string {
  for (;;) {
    const alias = generateAlias()
    if (customDomain || !isReservedAlias(alias)) return alias
  }
}

/**
 * Inserts the rows in order, as one statement (generated aliases that collided are drawn again and
 * inserted by a further statement). Each row's result, in order: the stored row, or 409 ALIAS_TAKEN
 * for a caller's alias that is taken. The first statement is sent before this function first awaits,
 * so a caller may send it in one write with the statements before it (create.ts: the quota lock).
 */
export async function insertRows(tx: Pick<Db, 'insert'>, services: Pick<Services, 'counters'>, items: readonly NewRow[]): Promise<(LinkRow | ApiError)[]> {
  const results = new Array<LinkRow | ApiError>(items.length)
  let pending = items.map((_, index) => index)
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt === MAX_ALIAS_ATTEMPTS) throw new Error(`no free alias after ${MAX_ALIAS_ATTEMPTS} attempts`)
    const rows = pending.map((index) => {
      const { values, choice } = items[index]!
      return { ...values, id: newId('link'), alias: choice.alias ?? drawAlias(choice.customDomain) }
    })
    const inserted = await tx
      .insert(links)
      .values(rows)
      .onConflictDoNothing({ target: [links.domain, links.alias] })
      .returning()
    const byId = new Map(inserted.map((row) => [row.id, row]))
    const again: number[] = []
    pending.forEach((index, k) => {
      const row = byId.get(rows[k]!.id)
      const { choice, values } = items[index]!
      if (row) results[index] = row
      else if (choice.alias !== undefined) results[index] = new ApiError('ALIAS_TAKEN', `${choice.prefix}.alias: "${choice.alias}" is taken on ${values.domain}.`)
      else {
        services.counters.aliasCollisions++
        again.push(index)
      }
    })
    pending = again
  }
  return results
}

export async function insertWithAlias(tx: Pick<Db, 'insert'>, services: Pick<Services, 'counters'>, values: LinkValues, choice: AliasChoice): Promise<LinkRow> {
  const [result] = await insertRows(tx, services, [{ values, choice }])
  if (result instanceof ApiError) throw result
  return result!
}
