// `npm run backup -- <dir>`: Postgres (pg_dump) and every ClickHouse table of the production shape into a
// new directory, while the service runs. See scripts/backup-lib.ts and docs/production.md#backups.
import { backup, runCommand } from './backup-lib'

await runCommand('backup', '<new directory>', 'the embedded default is backed up by stopping it and copying DATA_DIR', backup)
