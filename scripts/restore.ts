// `npm run restore -- <dir>`: a backup of scripts/backup.ts into the empty Postgres database of
// DATABASE_URL and a fresh ClickHouse at CLICKHOUSE_URL, before the service starts on them.
import { createClickHouse } from '../src/adapters/clickhouse'
import { configOrExit } from '../src/boot'
import { restore } from './backup-lib'

const dir = process.argv[2]
const config = configOrExit()
if (!dir) {
  console.error('usage: npm run restore -- <backup directory>')
  process.exit(2)
}
if (!config.databaseUrl || !config.clickhouseUrl) {
  console.error('restore: DATABASE_URL and CLICKHOUSE_URL are needed; the embedded default is restored by copying DATA_DIR back (README "Backups")')
  process.exit(2)
}
const clickhouse = await createClickHouse(config)
try {
  await restore({ dir, databaseUrl: config.databaseUrl, clickhouse, log: (line) => console.log(`restore: ${line}`) })
  console.log(`restore: done from ${dir}`)
} catch (error) {
  console.error(`restore: ${error instanceof Error ? error.message : String(error)}`)
  process.exitCode = 1
} finally {
  await clickhouse.close()
}
