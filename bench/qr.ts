// QR rendering against the thread that answers requests, measured: the embedded default
// (one-process/main.ts, as `npm start` runs it: PGlite, chDB, the API and the redirects on one serving
// thread) under --concurrency clients that each ask for the largest PNG over and over, every request a
// size not asked before (1024 px down), so the image cache never helps and every request is drawn. Meanwhile
// two probers ask /health and a short link, one request after another with --probe-ms between them, as a
// health checker and a visitor would. The same probes run first for --duration without the QR load (the
// baseline), then for --duration with it, in the same run.
//
//   bun bench/qr.ts [--duration 10s] [--concurrency 16] [--probe-ms 10] [--no-fail]
//
// Prints p50, p99 and max of each probe in both phases, the PNGs answered (drawn, refused 429 QR_BUSY),
// and the CPU of the process against that of its serving thread during each phase (the rest is the
// render thread, chDB's and PGlite's threads). Target: /health and the redirect p99 under 50 ms during the
// burst. Writes bench/results/qr-latest.json (git-ignored); exits 1 when the target is missed (0 with
// --no-fail) or a probe answers anything but its status.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase } from '../src/db/client'
import { QR_MIN_SIZE, QR_PNG_MAX_SIZE } from '../src/modules/links/qr'
import { newAccount } from '../test/support/fixtures'
import { METRICS_TEST_TOKEN } from '../test/support/metrics'
import { benchRun, freePorts, log, optionReader, startChild, waitFor, withCpu } from './procs'
import { durationMs } from './wrk'

const ROOT = join(import.meta.dir, '..')
const TARGET_P99_MS = 50

const args = process.argv.slice(2)
const { value, int } = optionReader(args)
const options = { duration: value('--duration', '10s'), concurrency: int('--concurrency', 16), probeMs: int('--probe-ms', 10), noFail: args.includes('--no-fail') }
const bench = benchRun('linkservice-qr-', 2 * durationMs(options.duration) + 240_000)
const { workDir, cleanup } = bench

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? Number.NaN
const ms = (n: number) => `${n.toFixed(1)} ms`

interface Latencies {
  n: number
  p50: number
  p99: number
  max: number
}

function summary(values: number[]): Latencies {
  const sorted = [...values].sort((a, b) => a - b)
  return { n: sorted.length, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.at(-1) ?? Number.NaN }
}

/** One prober: `url` again and again until `stop()`, a pause between; each answer must have `status`. */
async function probe(url: string, status: number, stop: () => boolean): Promise<number[]> {
  const latencies: number[] = []
  while (!stop()) {
    const started = performance.now()
    const response = await fetch(url, { redirect: 'manual' })
    await response.arrayBuffer()
    if (response.status !== status) throw new Error(`${url} answered ${response.status}, not ${status}`)
    latencies.push(performance.now() - started)
    await Bun.sleep(options.probeMs)
  }
  return latencies
}

async function main() {
  const [port] = freePorts(1) as [number]
  const dataDir = join(workDir, 'embedded')
  // PGlite belongs to one process at a time: the account and its API key are written before the product starts.
  const database = await openDatabase({ databaseUrl: undefined, dataDir })
  await database.migrate()
  const account = await newAccount(database.db)
  await database.close()
  const shortDomain = `127.0.0.1:${port}`
  // What `npm start` is given, and a Free plan limit that lets one key ask for PNGs all run long.
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PORT: String(port),
    SHORT_DOMAIN: shortDomain,
    DATA_DIR: dataDir,
    METRICS_TOKEN: METRICS_TEST_TOKEN,
    PLAN_FREE_REQUESTS_PER_MINUTE: '1000000',
  }
  const child = startChild('embedded', [process.execPath, '--max-http-header-size=65536', join(ROOT, 'one-process/main.ts')], { env, logFile: join(workDir, 'embedded.log'), cwd: ROOT })
  cleanup.push('embedded default', () => child.stop())
  const url = `http://${shortDomain}`
  await waitFor(child, `${url}/health`, 120_000)

  const auth = { authorization: `Bearer ${account.key}` }
  const created = await fetch(`${url}/api/v1/shorten`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ url: 'https://example.com/qr-bench' }) })
  const link = (await created.json()) as { data?: { alias?: string } }
  if (created.status !== 200 || !link.data?.alias) throw new Error(`shorten answered ${created.status} ${JSON.stringify(link)}`)
  const shortUrl = `${url}/${link.data.alias}`
  const qr = (size: number) => fetch(`${url}/api/v1/links/${link.data!.alias}/qr?format=png&size=${size}`, { headers: auth })
  // Warm: the link in the redirector's cache, the render thread started (a size the burst never asks).
  if ((await fetch(shortUrl, { redirect: 'manual' })).status !== 302) throw new Error(`${shortUrl} does not redirect`)
  if ((await qr(QR_MIN_SIZE)).status !== 200) throw new Error('the warm-up PNG failed')
  log(`embedded default on :${port}, link ${shortUrl}; ${options.duration} of probes alone, then ${options.duration} with ${options.concurrency} clients asking for PNGs`)

  const serving = { process: child.proc.pid, serving: { pid: child.proc.pid, thread: child.proc.pid } }
  const phase = async (withQr: boolean) => {
    const endAt = performance.now() + durationMs(options.duration)
    let loadDone = !withQr
    const pngs = { drawn: 0, busy: 0, other: 0, latencies: [] as number[], repeated: 0 }
    let nextSize = QR_PNG_MAX_SIZE
    const client = async () => {
      while (performance.now() < endAt) {
        // Largest first, each size once; past the smallest the sizes repeat and may come from the cache.
        const size = nextSize
        nextSize = nextSize === QR_MIN_SIZE ? QR_PNG_MAX_SIZE : nextSize - 1
        if (nextSize === QR_PNG_MAX_SIZE) pngs.repeated++
        const started = performance.now()
        const response = await qr(size)
        await response.arrayBuffer()
        if (response.status === 200) {
          pngs.drawn++
          pngs.latencies.push(performance.now() - started)
        } else if (response.status === 429) pngs.busy++
        else pngs.other++
      }
    }
    const measured = await withCpu(serving, async () => {
      const stop = () => (withQr ? loadDone : performance.now() >= endAt)
      const probes = Promise.all([probe(`${url}/health`, 200, stop), probe(shortUrl, 302, stop)])
      if (withQr) {
        await Promise.all(Array.from({ length: options.concurrency }, client))
        loadDone = true
      }
      return probes
    })
    const [health, redirect] = measured.result
    return { health: summary(health), redirect: summary(redirect), pngs: { ...pngs, latencies: summary(pngs.latencies) }, cores: measured.cores }
  }
  const baseline = await phase(false)
  log(`baseline: /health p99 ${ms(baseline.health.p99)}, redirect p99 ${ms(baseline.redirect.p99)}`)
  const burst = await phase(true)
  log(`burst: /health p99 ${ms(burst.health.p99)}, redirect p99 ${ms(burst.redirect.p99)}, ${burst.pngs.drawn} PNGs drawn, ${burst.pngs.busy} QR_BUSY`)

  const met = burst.health.p99 < TARGET_P99_MS && burst.redirect.p99 < TARGET_P99_MS
  const row = (name: string, r: typeof baseline) =>
    `| ${name} | ${ms(r.health.p50)} | ${ms(r.health.p99)} | ${ms(r.health.max)} | ${r.health.n} | ${ms(r.redirect.p50)} | ${ms(r.redirect.p99)} | ${ms(r.redirect.max)} | ${r.redirect.n} | ` +
    `${r.pngs.drawn} drawn, ${r.pngs.busy} QR_BUSY${r.pngs.other ? `, ${r.pngs.other} other` : ''} | ${r.cores.process} / ${r.cores.serving} |`
  console.log(
    [
      '',
      `QR burst: ${options.concurrency} clients asking for ${QR_PNG_MAX_SIZE} px PNGs and down (each size once), probes every ${options.probeMs} ms, ${options.duration} a phase`,
      '',
      '| phase | /health p50 | p99 | max | n | redirect p50 | p99 | max | n | PNGs | cores: process / serving thread |',
      '|---|---|---|---|---|---|---|---|---|---|---|',
      row('probes alone', baseline),
      row(`${options.concurrency} PNG clients`, burst),
      '',
      `PNG answer p50 ${ms(burst.pngs.latencies.p50)}, p99 ${ms(burst.pngs.latencies.p99)} (time in the queue included)${burst.pngs.repeated ? `; the sizes went round ${burst.pngs.repeated} time(s), so some came from the cache` : ''}`,
      `${met ? 'met   ' : 'MISSED'}  /health and redirect p99 under ${TARGET_P99_MS} ms during the burst`,
      '',
    ].join('\n'),
  )
  const results = join(import.meta.dir, 'results')
  mkdirSync(results, { recursive: true })
  writeFileSync(join(results, 'qr-latest.json'), `${JSON.stringify({ options, baseline, burst, targetP99Ms: TARGET_P99_MS, met }, null, 2)}\n`)
  if (burst.pngs.other > 0) throw new Error(`${burst.pngs.other} PNG answers were neither 200 nor 429; log ${child.logFile}`)
  if (!met && !options.noFail) bench.fail()
}

await bench.run(main)
