// FOR TESTS ONLY: runs SQL statements on a chDB whose configuration declares a cluster, as a ClickHouse
// server's remote_servers and macros would, and reports each statement's outcome. There is no Keeper and
// no other node, so this shows what a single process can: which statements parse, which tables and views
// can be created, and the error of those that need Keeper or distributed DDL.
//
// chDB binds one data directory (and one configuration) per process, so this runs as a process of its
// own: runOnClusterChdb spawns it with the statements on stdin; it prints one JSON line per statement.
import { Session } from 'chdb'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface StatementOutcome {
  ok: boolean
  /** What the statement returned, as TSV. */
  output?: string
  /** The error text when not ok (first line, as ClickHouse wrote it). */
  error?: string
}

/**
 * Two shards of two replicas, on hosts that do not answer: enough for CREATE … ENGINE = Distributed,
 * which needs the cluster to be declared, never for an insert that must reach a shard.
 */
function clusterConfig(cluster: string): string {
  const replica = (host: string) => `<replica><host>${host}</host><port>9000</port></replica>`
  const shard = (n: number) => `<shard><internal_replication>true</internal_replication>${replica(`ch-${n}-1.invalid`)}${replica(`ch-${n}-2.invalid`)}</shard>`
  return `<clickhouse>
  <remote_servers><${cluster}>${shard(1)}${shard(2)}</${cluster}></remote_servers>
  <macros><shard>01</shard><replica>ch-1-1</replica></macros>
</clickhouse>`
}

/** Runs the statements, in order, each whatever the outcome of the ones before, in a fresh chDB process. */
export async function runOnClusterChdb(cluster: string, statements: string[]): Promise<StatementOutcome[]> {
  const proc = Bun.spawn([process.execPath, import.meta.path, cluster], { stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' })
  proc.stdin.write(JSON.stringify(statements))
  await proc.stdin.end()
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`chdb-cluster exited ${code}: ${err.slice(-2000)}`)
  return out
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as StatementOutcome)
}

if (import.meta.main) {
  const cluster = process.argv[2] ?? 'links'
  const statements = JSON.parse(await new Response(Bun.stdin.stream()).text()) as string[]
  const dir = mkdtempSync(join(tmpdir(), 'chdb-cluster-'))
  try {
    const config = join(dir, 'config.xml')
    writeFileSync(config, clusterConfig(cluster))
    const session = new Session(join(dir, 'data'), { connectionArgs: [`--config-file=${config}`] })
    for (const statement of statements) {
      let outcome: StatementOutcome
      try {
        outcome = { ok: true, output: String(session.query(statement, 'TSV')) }
      } catch (error) {
        outcome = { ok: false, error: String((error as Error).message).split('\n')[0] }
      }
      process.stdout.write(`${JSON.stringify(outcome)}\n`)
    }
    session.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
