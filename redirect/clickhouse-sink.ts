import type { ClickHouseClient } from '@clickhouse/client'
import { CLICKS_TABLE } from '../src/core/clicks'
import type { ClickSink } from './batcher'

/** Writes a frozen batch with its dedup token, so a retried batch is stored once. */
export function clickhouseSink(client: ClickHouseClient): ClickSink {
  return {
    async insert(rows, dedupToken, label) {
      await client.insert({
        table: CLICKS_TABLE,
        values: rows,
        format: 'JSONEachRow',
        clickhouse_settings: {
          insert_deduplicate: 1,
          insert_deduplication_token: dedupToken,
          // Shows in system.query_log which trigger flushed the batch.
          log_comment: `clicks flush=${label}`,
        },
      })
    },
  }
}
