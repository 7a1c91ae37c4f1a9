// What a routed link costs the redirector's serving thread, and what the redirect bench's blocks add to
// it. One API and one redirector (redirect/main.ts, pinned to CPU 1, wrk on CPU 0), 1,000 plain links
// and 1,000 links whose tenth of ten rules matches (bench/routed-links.ts); each round runs wrk for 6 s
// on the plain links, then on the ten-rule links, and prints the serving thread's CPU µs a request
// (and the other threads', the click worker's) of each, with the median of the paired differences.
//
//   bun bench/routing-cost.ts [--rounds 6] [--links 1000] [--only plain|rules]
// --only measures one kind of link, so the process serves nothing else: run it once per kind and compare
// the medians to see what alternating between them in one process costs.
import { join } from 'node:path'
import { parseConfig } from '../core/config'
import { openDatabase } from '../src/db/client'
import { spawnChdbHttp } from '../test/support/chdb-http-process'
import { benchRun, freePorts, log, median, optionReader, sh, startApiAndRedirector, startServices, withCpu } from './procs'
import { routedSets } from './routed-links'
import { deleteSeededLinks, seedLinks, warmCache } from './seed'
import { runWrk, writeWrkScript } from './wrk'

type Kind = 'plain' | 'rules'

const args = process.argv.slice(2)
const { int, value } = optionReader(args)
const rounds = int('--rounds', 6)
const count = int('--links', 1000)
const only = value('--only', '')
if (only !== '' && only !== 'plain' && only !== 'rules') throw new Error(`--only takes plain or rules, got ${only}`)
const kinds: Kind[] = only === '' ? ['plain', 'rules'] : [only]
const bench = benchRun('linkservice-routing-cost-', 30 * 60_000)
const onCpu = (cpu: number, pid: number) => sh(['taskset', '-a', '-pc', String(cpu), String(pid)], 10_000)

await bench.run(async () => {
  const { workDir, cleanup } = bench
  const { databaseUrl, redisUrl } = await startServices(cleanup)
  const chdb = await spawnChdbHttp({ path: join(workDir, 'clickhouse') })
  cleanup.push('chdb-http', () => chdb.stop())
  await onCpu(0, chdb.pid)
  const [apiPort, redirectPort] = freePorts(2) as [number, number]
  const { redirector, env, shortDomain, redirectUrl } = await startApiAndRedirector({
    cleanup,
    workDir,
    databaseUrl,
    redisUrl,
    clickhouseUrl: chdb.url,
    apiPort,
    redirectPort,
    started: async (child) => void (await onCpu(child.name === 'api' ? 0 : 1, child.proc.pid)),
  })
  const database = await openDatabase({ databaseUrl, dataDir: workDir })
  cleanup.push('postgres client', () => database.close())
  const prefix = `link_cost_${Date.now().toString(36)}_`
  const [rules] = await routedSets({ config: parseConfig(env), db: database.db, now: Date.now })
  const seeded = {
    plain: await seedLinks(database.db, { count, domain: shortDomain, idPrefix: `${prefix}plain_` }),
    rules: await seedLinks(database.db, { count, domain: shortDomain, idPrefix: `${prefix}rules_`, routing: rules!.routing }),
  }
  cleanup.push('seeded links', () => deleteSeededLinks(database.db, [...seeded.plain.ids, ...seeded.rules.ids]))
  const scripts = {} as Record<Kind, string>
  for (const kind of kinds) {
    const warm = await warmCache(redirectUrl, seeded[kind].aliases)
    if (warm.redirects !== count) throw new Error(`${kind}: ${warm.redirects} of ${count} aliases redirected; others ${JSON.stringify(warm.failures)}`)
    scripts[kind] = writeWrkScript(join(workDir, `${kind}.lua`), { aliases: seeded[kind].aliases })
  }
  const pid = redirector.proc.pid
  const wrk = (kind: Kind, duration: string) =>
    runWrk({ url: redirectUrl, script: scripts[kind], duration, label: kind, logFile: join(workDir, 'wrk.log'), connections: 64, threads: 1, prefix: ['taskset', '-c', '0'] })
  for (const kind of kinds) await wrk(kind, '5s') // unmeasured: the JIT's tiers
  const serving: Record<Kind, number[]> = { plain: [], rules: [] }
  const others: Record<Kind, number[]> = { plain: [], rules: [] }
  for (let round = 1; round <= rounds; round++) {
    for (const kind of kinds) {
      const { result, cpuSeconds } = await withCpu(
        { serving: { pid, thread: pid }, process: pid },
        () => wrk(kind, '6s'),
        () => Bun.sleep(1000),
      )
      serving[kind].push((cpuSeconds.serving! / result.requests) * 1e6)
      others[kind].push(((cpuSeconds.process! - cpuSeconds.serving!) / result.requests) * 1e6)
      log(`${kind} #${round}: ${Math.round(result.rps)} req/s, serving thread ${serving[kind].at(-1)!.toFixed(2)} µs a request`)
    }
  }
  for (const kind of kinds) log(`${kind}: serving thread ${median(serving[kind]).toFixed(2)} µs a request (median), other threads ${median(others[kind]).toFixed(2)}`)
  if (kinds.length === 2) log(`ten rules over plain, paired by round: ${median(serving.rules.map((us, i) => us - serving.plain[i]!)).toFixed(2)} µs a request (median)`)
})
