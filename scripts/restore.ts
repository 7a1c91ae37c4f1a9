// `npm run restore -- <dir>`: a backup of scripts/backup.ts into the empty Postgres database of
// DATABASE_URL and a fresh ClickHouse at CLICKHOUSE_URL, before the service starts on them.
import { restore, runCommand } from './backup-lib'

await runCommand('restore', '<backup directory>', 'the embedded default is restored by copying DATA_DIR back', restore)
