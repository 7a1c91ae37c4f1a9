// The embedded default's first start: PGlite's cluster is created by a child process, so the memory
// initdb takes is not kept by the process that serves (pglite-init.ts).
import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { openDatabase } from './client'
import { hasPgliteCluster, initialisePgliteDir } from './pglite-init'

const root = mkdtempSync(join(tmpdir(), 'pglite-init-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** Anonymous memory of this process, in MB. */
function anonymousMb(): number {
  const match = /^Anonymous:\s+(\d+) kB/m.exec(readFileSync('/proc/self/smaps_rollup', 'utf8'))
  return Number(match![1]) / 1024
}

describe('PGlite first start', () => {
  it('creates the cluster of an empty directory in a child process: this process does not take initdb’s memory', async () => {
    const dir = mkdtempSync(join(root, 'fresh-'))
    expect(hasPgliteCluster(dir)).toBe(false)
    Bun.gc(true)
    const before = anonymousMb()
    await initialisePgliteDir(dir)
    expect(hasPgliteCluster(dir)).toBe(true)
    // initdb in this process would add several hundred MB (about 600 measured); the child's is gone.
    expect(anonymousMb() - before).toBeLessThan(150)
  })

  it('leaves an existing cluster alone, and the database opened on it works and keeps its data', async () => {
    const dataDir = mkdtempSync(join(root, 'data-'))
    const first = await openDatabase({ databaseUrl: undefined, dataDir })
    await first.db.execute(sql`create table kept (v int)`)
    await first.db.execute(sql`insert into kept values (7)`)
    await first.close()
    const version = statSync(join(dataDir, 'postgres', 'PG_VERSION')).mtimeMs

    await initialisePgliteDir(join(dataDir, 'postgres'))
    expect(statSync(join(dataDir, 'postgres', 'PG_VERSION')).mtimeMs, 'not created again').toBe(version)
    const second = await openDatabase({ databaseUrl: undefined, dataDir })
    try {
      const rows = (await second.db.execute(sql`select v from kept`)) as unknown as { rows: { v: number }[] }
      expect(rows.rows).toEqual([{ v: 7 }])
    } finally {
      await second.close()
    }
  })

  it('fails with the directory and the child’s own error when the cluster cannot be made', async () => {
    const notADirectory = join(root, 'a-file')
    writeFileSync(notADirectory, 'not a directory')
    const error = await initialisePgliteDir(notADirectory).then(
      () => null,
      (e: unknown) => e as Error,
    )
    expect(error?.message).toContain(`creating the database in ${notADirectory} failed (child exited`)
    expect(hasPgliteCluster(notADirectory)).toBe(false)
  })
})
