// Prints, as JSON, how many rows each referrer of one alias has in a chDB data directory left by a
// stopped process: `bun test/support/click-referrers.ts <DATA_DIR> <alias>` → {"rows":…,"ids":…,"byReferrer":{…}}.
// A process of its own, because chDB binds one data directory per process (see count-clicks.ts).
import { createClickHouse } from '../../src/adapters/clickhouse'
import { clickRowsOf } from './click-rows'

const [dataDir, alias] = process.argv.slice(2)
if (!dataDir || !alias) throw new Error('usage: click-referrers.ts <DATA_DIR> <alias>')
const client = await createClickHouse({ clickhouseUrl: undefined, dataDir })
console.log(JSON.stringify(await clickRowsOf(client, alias)))
await client.close()
