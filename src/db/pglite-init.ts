// PGlite's first open of an empty directory runs initdb inside its WebAssembly Postgres, which peaks near
// 1 GB of memory. A process that did it keeps much of that once it is over: about 630 MB resident after
// PGlite alone, against about 240 MB when the cluster already existed, and all of it under
// MIMALLOC_PURGE_DELAY=-1 (docs/configuration.md). So an empty directory is initialised by a child
// process, which hands everything back when it exits, and the process that serves then opens an existing
// cluster, as on every later start. It costs the first start about 2 s.
import { PGlite } from '@electric-sql/pglite'
import { existsSync } from 'node:fs'
import { join } from 'node:path'

/** Lines of the child's stderr kept for the error when it fails. */
const STDERR_TAIL_LINES = 20

/** True once `dir` holds a cluster (initdb writes PG_VERSION). */
export function hasPgliteCluster(dir: string): boolean {
  return existsSync(join(dir, 'PG_VERSION'))
}

/** Creates the cluster in `dir` (an existing directory) in a child process, unless one is there already. */
export async function initialisePgliteDir(dir: string): Promise<void> {
  if (hasPgliteCluster(dir)) return
  const child = Bun.spawn([process.execPath, import.meta.path, dir], { stdin: 'ignore', stdout: 'ignore', stderr: 'pipe' })
  const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()])
  if (code !== 0 || !hasPgliteCluster(dir)) {
    const tail = stderr.trim().split('\n').slice(-STDERR_TAIL_LINES).join('\n')
    throw new Error(`PGlite: creating the database in ${dir} failed (child exited ${code})${tail ? `:\n${tail}` : ''}`)
  }
}

if (import.meta.main) {
  const db = new PGlite(process.argv[2]!)
  await db.waitReady
  await db.close()
}
