// Counts the clicks of one alias in a chDB data directory left by a stopped process:
// `bun test/support/count-clicks.ts <DATA_DIR> <alias>`. A process of its own, because chDB binds one
// data directory per process and the test process already has its own.
import { createClickHouse } from '../../src/adapters/clickhouse'

const [dataDir, alias] = process.argv.slice(2)
if (!dataDir || !alias) throw new Error('usage: count-clicks.ts <DATA_DIR> <alias>')
const client = await createClickHouse({ clickhouseUrl: undefined, dataDir })
const result = await client.query({
  query: 'SELECT count() AS n FROM clicks_v1 WHERE alias = {alias:String}',
  query_params: { alias },
  format: 'JSONEachRow',
})
const [row] = await result.json<{ n: number | string }>()
console.log(Number(row?.n ?? 0))
await client.close()
