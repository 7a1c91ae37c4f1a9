// `npm run backup -- <dir>`: Postgres (pg_dump) and every ClickHouse table of the production shape into a
// new directory, while the service runs. See scripts/backup-lib.ts and README "Backups".
import { createClickHouse } from '../src/adapters/clickhouse'
import { configOrExit } from '../src/boot'
import { backup } from './backup-lib'

const dir = process.argv[2]
const config = configOrExit()
if (!dir) {
  console.error('usage: npm run backup -- <new directory>')
  process.exit(2)
}
if (!config.databaseUrl || !config.clickhouseUrl) {
  console.error('backup: DATABASE_URL and CLICKHOUSE_URL are needed; the embedded default is backed up by stopping it and copying DATA_DIR (README "Backups")')
  process.exit(2)
}
const clickhouse = await createClickHouse(config)
try {
  const manifest = await backup({ dir, databaseUrl: config.databaseUrl, clickhouse, log: (line) => console.log(`backup: ${line}`) })
  console.log(`backup: done, ${dir} (${manifest.created_at})`)
} catch (error) {
  console.error(`backup: ${error instanceof Error ? error.message : String(error)}`)
  process.exitCode = 1
} finally {
  await clickhouse.close()
}
