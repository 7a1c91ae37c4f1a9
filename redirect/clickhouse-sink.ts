import type { ClickHouseClient } from '@clickhouse/client'
import { Readable } from 'node:stream'
import { CLICK_COLUMNS, CLICKS_TABLE } from '../src/core/clicks'
import { dedupInsertSettings } from '../src/core/spool-shipper'
import type { ClickSink } from './batcher'

/** Writes a frozen batch with its dedup token, so a retried batch is stored once. */
export function clickhouseSink(client: ClickHouseClient): ClickSink {
  return {
    async insert(batch, dedupToken, label) {
      await client.insert({
        table: CLICKS_TABLE,
        columns: [...CLICK_COLUMNS],
        // One chunk per stream read: the event loop serves requests between them.
        values: Readable.from(batch.chunks, { objectMode: false }),
        format: 'TabSeparated',
        clickhouse_settings: {
          ...dedupInsertSettings(dedupToken, `clicks flush=${label}`),
          // The hourly rollup is fed by a materialized view: a retried batch must be dropped there too.
          deduplicate_blocks_in_dependent_materialized_views: 1,
        },
      })
    },
  }
}
