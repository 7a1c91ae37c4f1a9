import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client'
import { Readable } from 'node:stream'
import { CLICK_COLUMNS, CLICKS_TABLE } from '../core/clicks'
import { clickhouseSpoolSink, spoolInsertSettings, type RawInsert } from '../core/spool-sink'
import { batchBytes, type ClickSink } from './batcher'

/** Writes a frozen batch with its dedup token, so a retried batch is stored once. */
/** The hourly rollup is fed by a materialized view: a retried batch must be dropped there too. */
const CLICK_SETTINGS: ClickHouseSettings = { deduplicate_blocks_in_dependent_materialized_views: 1 }

export function clickhouseSink(client: ClickHouseClient): ClickSink {
  return clickhouseSpoolSink(client, {
    table: CLICKS_TABLE,
    columns: CLICK_COLUMNS,
    // One chunk per stream read: the event loop serves requests between them.
    values: (batch) => Readable.from(batch.chunks, { objectMode: false }),
    format: 'TabSeparated',
    name: 'clicks',
    settings: CLICK_SETTINGS,
  })
}

/**
 * The same inserts into chDB in this process, as bytes straight to its parser (src/adapters/clickhouse.ts
 * rawInsertOf): the thread calling it only hands the buffer over; parsing and writing run on chDB's threads.
 */
export function rawClickSink(insert: RawInsert): ClickSink {
  return {
    async insert(batch, dedupToken, label) {
      const values = batchBytes(batch)
      const settings = spoolInsertSettings('clicks', dedupToken, label, CLICK_SETTINGS) as Record<string, string | number>
      await insert({ table: CLICKS_TABLE, columns: [...CLICK_COLUMNS], format: 'TabSeparated', values, settings })
    },
  }
}
