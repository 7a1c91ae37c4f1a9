// Backup under load, restore into a fresh Postgres database and a fresh ClickHouse, and the service on
// the restored stores: every link made before the backup is there (and its owner's API key still
// works), every click ClickHouse had before the backup is there once, the statistics rollup counts each
// restored click once (however many arrived while the tables were read), and rollup history whose raw
// clicks retention removed is kept. The scripts are run as a user runs them (npm run backup / restore).
// Needs a PostgreSQL server (pg_dump): the services pass of .ci/run.
import { describe, expect, test } from 'bun:test'
import { createClient } from '@clickhouse/client'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import postgres from 'postgres'
import { spawnChdbHttp } from './support/chdb-http-process'
import { clickLoad } from './support/click-load'
import { clickFigures } from './support/metrics'
import { freePort, startEntry, TEST_SECRETS } from './support/processes'
import { eventually, json, redisServerBinary, startStack } from './support/stack'

const ROOT = resolve(import.meta.dir, '..')
const DATABASE_URL = process.env.DATABASE_URL
const LINKS = 12

async function runScript(script: string, dir: string, env: Record<string, string>) {
  const proc = Bun.spawn([process.execPath, join(ROOT, script), dir], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...TEST_SECRETS, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`${script} exited ${code}: ${stderr}${stdout}`)
  return stdout
}

/** The database URL of another database on the same server. */
function otherDatabase(url: string, name: string): string {
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.href
}

describe.skipIf(!DATABASE_URL || !redisServerBinary)('backup and restore (DATABASE_URL)', () => {
  test('a backup taken under load restores to fresh stores with every link and click, counted once', async () => {
    const stack = await startStack({ prefix: 'backup-' })
    const restoredDb = `linkservice_restore_${crypto.randomUUID().slice(0, 8)}`
    const admin = postgres(DATABASE_URL!, { max: 1, onnotice: () => {} })
    const restoredChdb = await spawnChdbHttp({ path: join(mkdtempSync(join(tmpdir(), 'restored-chdb-')), 'chdb') })
    let restoredApi: Awaited<ReturnType<typeof startEntry>> | undefined
    try {
      // An account with a key and links, made through the API the way a user does.
      const guest = await json(await fetch(`${stack.api.url}/api/v1/guest/token`, { method: 'POST' }))
      const token = guest.data.guest_token as string
      const links: { alias: string; short_url: string }[] = []
      for (let i = 0; i < LINKS; i++) {
        const created = await json(
          await fetch(`${stack.api.url}/api/v1/shorten`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ url: `https://example.com/backup/${i}` }),
          }),
        )
        if (!created.data?.alias) break // a guest's link limit
        links.push(created.data)
      }
      expect(links.length).toBeGreaterThan(3)

      // Clicks on every link, all in ClickHouse before the backup starts.
      for (const link of links) await fetch(link.short_url, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0' } })
      const before = await eventually(
        () => clickFigures(stack.redirector.url),
        (c) => c.written >= links.length && c.pendingRows === 0,
        30_000,
        { what: 'the first clicks written' },
      )
      const idsBefore = await clickIds(stack.clickhouse)
      expect(idsBefore.size).toBe(before.value.written)
      // History whose raw clicks retention already removed: only the rollup has it, and must keep it.
      await stack.clickhouse.insert({
        table: 'clicks_hourly_v1',
        values: [{ link_id: 'link_trimmed_history', hour: '2025-01-01 10:00:00', is_bot: 0, dim: 'total', value: '', clicks: 7, last_click: '2025-01-01 10:59:00.000' }],
        format: 'JSONEachRow',
      })

      // The backup runs while clicks keep coming.
      let stop = false
      const load = clickLoad(links[0]!.short_url, 4, { pauseMs: 5, until: () => stop })
      const dir = join(mkdtempSync(join(tmpdir(), 'backup-dir-')), 'backup')
      const output = await runScript('scripts/backup.ts', dir, { DATABASE_URL: DATABASE_URL!, CLICKHOUSE_URL: stack.chdb.url })
      stop = true
      await load
      expect(output).toContain('backup: postgres: pg_dump of')
      expect(output).toContain('backup: clickhouse: clicks_v1,')
      expect(output).not.toContain(new URL(DATABASE_URL!).password || 'no password to hide')

      // Restore into an empty database and a fresh ClickHouse.
      await admin.unsafe(`CREATE DATABASE ${restoredDb}`)
      const restoredUrl = otherDatabase(DATABASE_URL!, restoredDb)
      await runScript('scripts/restore.ts', dir, { DATABASE_URL: restoredUrl, CLICKHOUSE_URL: restoredChdb.url })

      // Every click ClickHouse had before the backup is there once; the rollup counts each restored click once.
      const restoredClient = createClient({ url: restoredChdb.url, request_timeout: 10_000 })
      try {
        const idsAfter = await clickIds(restoredClient)
        expect([...idsBefore].filter((id) => !idsAfter.has(id))).toEqual([])
        const [raw] = await (await restoredClient.query({ query: 'SELECT count() AS n, uniqExact(click_id) AS u FROM clicks_v1', format: 'JSONEachRow' })).json<{ n: string; u: string }>()
        expect(Number(raw!.n)).toBe(Number(raw!.u))
        // Each restored click counted once in the rollup, and the history without raw clicks kept.
        const [rollup] = await (
          await restoredClient.query({ query: "SELECT sum(clicks) AS n FROM clicks_hourly_v1 WHERE dim = 'total' AND link_id != 'link_trimmed_history'", format: 'JSONEachRow' })
        ).json<{ n: string }>()
        expect(Number(rollup!.n)).toBe(Number(raw!.n))
        const [history] = await (await restoredClient.query({ query: "SELECT sum(clicks) AS n FROM clicks_hourly_v1 WHERE link_id = 'link_trimmed_history'", format: 'JSONEachRow' })).json<{
          n: string
        }>()
        expect(Number(history!.n)).toBe(7)
      } finally {
        await restoredClient.close()
      }

      // The service on the restored stores: every link is there, redirects, and its guest token works.
      const port = await freePort()
      restoredApi = await startEntry('src/api.ts', { ...stack.env, DATABASE_URL: restoredUrl, CLICKHOUSE_URL: restoredChdb.url, PORT: String(port), DATA_DIR: join(stack.dir, 'restored-data') }, port)
      const status = await json(await fetch(`${restoredApi.url}/api/v1/account/status`, { headers: { authorization: `Bearer ${token}` } }))
      expect(status.success, JSON.stringify(status)).toBe(true)
      for (const link of links) {
        const resolved = await fetch(`${restoredApi.url}/internal/resolve?domain=${encodeURIComponent(new URL(link.short_url).host)}&alias=${link.alias}`, {
          headers: { 'x-internal-secret': TEST_SECRETS.INTERNAL_SECRET },
        })
        expect(resolved.status, link.alias).toBe(200)
      }
    } finally {
      await restoredApi?.stop()
      await restoredChdb.stop()
      await admin.unsafe(`DROP DATABASE IF EXISTS ${restoredDb} WITH (FORCE)`).catch(() => {})
      await admin.end()
      await stack.stop()
    }
  }, 240_000)
})

async function clickIds(client: ReturnType<typeof createClient>): Promise<Set<string>> {
  const result = await client.query({ query: 'SELECT click_id FROM clicks_v1', format: 'JSONEachRow' })
  return new Set((await result.json<{ click_id: string }>()).map((r) => r.click_id))
}
