import type { ClickHouseClient } from '@clickhouse/client'
import { Readable } from 'node:stream'
import { CLICK_COLUMNS, CLICKS_TABLE } from '../src/core/clicks'
import { clickhouseSpoolSink } from '../src/core/spool-sink'
import type { ClickSink } from './batcher'

/** Writes a frozen batch with its dedup token, so a retried batch is stored once. */
export function clickhouseSink(client: ClickHouseClient): ClickSink {
  return clickhouseSpoolSink(client, {
    table: CLICKS_TABLE,
    columns: CLICK_COLUMNS,
    // One chunk per stream read: the event loop serves requests between them.
    values: (batch) => Readable.from(batch.chunks, { objectMode: false }),
    format: 'TabSeparated',
    name: 'clicks',
    // The hourly rollup is fed by a materialized view: a retried batch must be dropped there too.
    settings: { deduplicate_blocks_in_dependent_materialized_views: 1 },
  })
}
