// The analytics mirror of conversions (docs/decisions/0011-conversions.md; table conversions_v1, migration
// clickhouse/0004). Postgres is the source of truth: the row is written here only after the Postgres
// insert has committed, and only for a new conversion (a duplicate report adds nothing). A ClickHouse
// failure never fails the report: it is counted and the request goes on. A background retry (or a
// backfill from Postgres) is out of scope for now, so a failed write leaves the mirror short of that
// row; the failure counter below is the signal to backfill.
import type { ClickHouseClient } from '@clickhouse/client'
import { clickTimestamp } from '../../../core/clicks'

export const CONVERSIONS_TABLE = 'conversions_v1'

/** Process counters of the mirror, like Services.counters: read by a metrics endpoint or a test. */
export const conversionMirrorCounters = { writeFailures: 0 }

export interface ConversionMirrorRow {
  conversionId: string
  linkId: string
  clickId: string
  accountId: string
  conversionType: string
  /** The committed Postgres numeric as text (exact), or null when no value was reported. */
  value: string | null
  currency: string | null
  occurredAtMs: number
  createdAtMs: number
}

/**
 * Writes one conversion to conversions_v1. insert_deduplication_token is the conversion id, so a retry
 * of this write is stored once. The settings are always passed in full: chDB keeps the settings of the
 * previous query on its connection, and another insert's token would make this row look like a duplicate.
 */
export async function writeConversionMirror(client: ClickHouseClient, row: ConversionMirrorRow): Promise<void> {
  await client.insert({
    table: CONVERSIONS_TABLE,
    format: 'JSONEachRow',
    clickhouse_settings: {
      insert_deduplicate: 1,
      insert_deduplication_token: row.conversionId,
    },
    values: [
      {
        conversion_id: row.conversionId,
        link_id: row.linkId,
        click_id: row.clickId,
        account_id: row.accountId,
        conversion_type: row.conversionType,
        value: row.value ?? '0',
        currency: row.currency ?? '',
        is_refund: row.conversionType === 'refund' ? 1 : 0,
        occurred_at: clickTimestamp(row.occurredAtMs),
        created_at: clickTimestamp(row.createdAtMs),
      },
    ],
  })
}

/** writeConversionMirror that never throws: a failure is counted (Postgres already holds the conversion). */
export async function mirrorConversion(client: ClickHouseClient, row: ConversionMirrorRow): Promise<boolean> {
  try {
    await writeConversionMirror(client, row)
    return true
  } catch {
    conversionMirrorCounters.writeFailures++
    return false
  }
}
