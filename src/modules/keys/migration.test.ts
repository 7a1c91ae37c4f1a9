// Migration 0011 on a database that already holds keys: they keep working with the account's full
// access and get the name verification gives a new one, as does a key an older process inserts after
// it. Runs on an in-memory PGlite of its own (whatever the run's DATABASE_URL), migrated first to 0010
// from a copy of the migrations cut there.
import { afterAll, expect, test } from 'bun:test'
import { PGlite } from '@electric-sql/pglite'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { drizzle } from 'drizzle-orm/pglite'
import { migrate } from 'drizzle-orm/pglite/migrator'
import { DEFAULT_KEY_NAME } from './verdicts'

const MIGRATIONS = join(import.meta.dir, '../../../migrations/postgres')
const dir = mkdtempSync(join(tmpdir(), 'keys-migration-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('0011 names the keys that exist and leaves them unrestricted', async () => {
  cpSync(MIGRATIONS, dir, { recursive: true })
  const journalPath = join(dir, 'meta/_journal.json')
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: { idx: number; tag: string }[] }
  expect(journal.entries.find((e) => e.idx === 11)?.tag).toBe('0011_api_key_names_scopes')
  writeFileSync(journalPath, JSON.stringify({ ...journal, entries: journal.entries.filter((e) => e.idx <= 10) }))

  const client = new PGlite()
  try {
    await migrate(drizzle(client), { migrationsFolder: dir })
    await client.exec(`insert into accounts (id, email) values ('acct_old', 'old@example.test');
      insert into api_keys (id, account_id, key_hash, start) values ('key_old', 'acct_old', 'hash-of-an-old-key', 'mk_Old0')`)
    await migrate(drizzle(client), { migrationsFolder: MIGRATIONS })
    const { rows } = await client.query<{ name: string; scopes: unknown; last_used_at: unknown }>(`select name, scopes, last_used_at from api_keys where id = 'key_old'`)
    expect(rows).toEqual([{ name: DEFAULT_KEY_NAME, scopes: null, last_used_at: null }])
    // A process of the previous version inserting a key during a rolling deploy: the same name.
    await client.exec(`insert into api_keys (id, account_id, key_hash, start) values ('key_new', 'acct_old', 'hash-2', 'mk_New0')`)
    const { rows: late } = await client.query<{ name: string }>(`select name from api_keys where id = 'key_new'`)
    expect(late).toEqual([{ name: DEFAULT_KEY_NAME }])
  } finally {
    await client.close()
  }
}, 90_000) // a PGlite of its own, migrated twice: seconds, more on a loaded machine
