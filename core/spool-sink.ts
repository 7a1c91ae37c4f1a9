// A spool's store in ClickHouse: one insert per segment under the segment's dedup token, so a retry
// after a lost answer, or a replay after a crash between the insert and the file's deletion, is dropped
// by ClickHouse instead of doubling the rows.
import type { ClickHouseClient, ClickHouseSettings, DataFormat } from '@clickhouse/client'
import type { FlushLabel } from './spool-files'
import type { SpoolSink } from './spool-shipper'

export interface SpoolTable<B> {
  table: string
  columns: readonly [string, ...string[]]
  format: DataFormat
  /** The batch as the insert's values: rows, or a stream of chunks. */
  values: (batch: B) => Parameters<ClickHouseClient['insert']>[0]['values']
  /** Names the spool in system.query_log (log_comment `<name> flush=<label>`: which trigger sealed the batch). */
  name: string
  /** Settings of the table's own. */
  settings?: ClickHouseSettings
}

/**
 * An insert handed to chDB's own parser as bytes (the embedded engine's zero-copy path), with the
 * settings an insert through the client would carry.
 */
export type RawInsert = (params: { table: string; columns: string[]; format: 'TabSeparated'; values: Uint8Array; settings: Record<string, string | number> }) => Promise<void>

/** The settings of a spool's insert: its dedup token, and what sealed it in system.query_log. */
export function spoolInsertSettings(name: string, dedupToken: string, label: string, own: ClickHouseSettings = {}): ClickHouseSettings {
  return { ...own, insert_deduplicate: 1, insert_deduplication_token: dedupToken, log_comment: `${name} flush=${label}` }
}

export function clickhouseSpoolSink<B, L extends FlushLabel>(client: ClickHouseClient, into: SpoolTable<B>): SpoolSink<B, L> {
  return {
    async insert(batch, dedupToken, label) {
      await client.insert({
        table: into.table,
        columns: [...into.columns],
        values: into.values(batch),
        format: into.format,
        clickhouse_settings: spoolInsertSettings(into.name, dedupToken, label, into.settings),
      })
    },
  }
}
