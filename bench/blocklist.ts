// Destination block lists at a million hosts (src/modules/abuse/blocklists.ts), in one process, on the
// thread that would answer requests:
//
// 1. Load: a list of --hosts synthetic host names (a host a line, in a temporary file) read by start().
//    Reported: the time, the heap it holds afterwards (after a full GC, typed arrays included), and for
//    comparison the same names in a plain Set<string>, the structure the host table replaces.
// 2. Lookups: check(url) of destinations that are listed hosts (hits), subdomains two levels below a
//    listed host (hits found by the parent-domain walk) and unlisted hosts of three labels (misses, which
//    walk every parent): the median over batches of --batch calls, in µs a call, of check() given the
//    text (URL parsing included) and given a URL already parsed (normalising and the hash probes).
// 3. Refresh: the same list with --changed-percent of its names replaced, read by refresh(), while a loop
//    of check() calls runs on the same thread, one call per event-loop turn: the longest gap between two
//    of its turns is how long a request could have waited behind the refresh. On a shared machine a gap
//    also holds time the thread waited for a core, so the thread's own CPU time between two turns
//    (/proc/thread-self/schedstat) is reported beside it. The change listener must be told exactly the
//    replacement names, the new names must be blocked and the dropped ones not.
//
//   bun bench/blocklist.ts [--hosts 1000000] [--changed-percent 1] [--batch 1000] [--lookups 100000] [--no-fail]
//
// Target: during the refresh, the thread on a CPU for under 50 ms between two turns of the loop (the
// figure bench/qr.ts holds probes to). Linux only (schedstat).
// Writes bench/results/blocklist-latest.json (git-ignored); exits 1 when the target is missed (0 with
// --no-fail) or a check of the diff or the swap fails.
import { heapStats } from 'bun:jsc'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createBlocklists, type BlocklistChange } from '../src/modules/abuse/blocklists'
import { optionReader } from './procs'

const TARGET_GAP_MS = 50

const args = process.argv.slice(2)
const { int } = optionReader(args)
const options = { hosts: int('--hosts', 1_000_000), changedPercent: int('--changed-percent', 1), batch: int('--batch', 1000), lookups: int('--lookups', 100_000), noFail: args.includes('--no-fail') }

const LABELS = ['shop', 'login', 'secure', 'account', 'update', 'mail', 'cdn', 'files', 'verify', 'pay', 'web', 'app']
const TLDS = ['com', 'net', 'org', 'info', 'xyz', 'top', 'online', 'site', 'co.uk', 'com.br']

/** The i-th synthetic listed name: 15-30 characters, one or two labels before a TLD; `generation` makes a different one. */
function hostName(i: number, generation = 0): string {
  const word = LABELS[(i * 7 + generation) % LABELS.length]!
  const tld = TLDS[i % TLDS.length]!
  const id = (i * 2_654_435_761 + generation * 97) >>> 0
  return i % 4 === 0 ? `${word}.${word}-${id.toString(36)}.${tld}` : `${word}-${id.toString(36)}${generation ? `g${generation}` : ''}.${tld}`
}

const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10
const us = (ns: number) => Math.round(ns / 10) / 100

/** Bytes the heap holds after a full collection (typed arrays' storage included: JSC counts it as the heap's extra memory). */
function heldBytes(): { heap: number } {
  Bun.gc(true)
  return { heap: heapStats().heapSize }
}

/** Median ns a call of `fn` over the inputs, from batches of options.batch calls timed together. */
function medianNs<T>(inputs: T[], fn: (input: T) => unknown): number {
  const perCall: number[] = []
  let sink = 0
  for (let from = 0; from + options.batch <= inputs.length; from += options.batch) {
    const t0 = Bun.nanoseconds()
    for (let i = from; i < from + options.batch; i++) if (fn(inputs[i]!)) sink++
    perCall.push((Bun.nanoseconds() - t0) / options.batch)
  }
  if (sink < 0) console.log(sink) // the results are used, so no call can be optimised away
  perCall.sort((a, b) => a - b)
  return perCall[Math.floor(perCall.length / 2)]!
}

/** This thread's time on a CPU so far (ns, the first field of /proc/thread-self/schedstat; the second is its time waiting for one). */
function threadTimes(): { ranNs: number } {
  return { ranNs: Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) }
}

/**
 * check() once an event-loop turn until stop(). The longest time between two turns (wall clock), and the
 * longest this thread spent on a CPU between two turns: on a shared machine a gap also holds time the
 * thread waited for a core, which no code of ours decides.
 */
function lookupLoop(check: (url: string) => unknown, urls: string[]) {
  let running = true
  let longestWall = 0
  let longestWallRan = 0
  let longestRan = 0
  let turns = 0
  let last = performance.now()
  let lastTimes = threadTimes()
  const done = new Promise<void>((resolve) => {
    const turn = () => {
      const at = performance.now()
      const times = threadTimes()
      const ranMs = (times.ranNs - lastTimes.ranNs) / 1e6
      if (at - last > longestWall) [longestWall, longestWallRan] = [at - last, ranMs]
      longestRan = Math.max(longestRan, ranMs)
      last = at
      lastTimes = times
      check(urls[turns++ % urls.length]!)
      if (running) setImmediate(turn)
      else resolve()
    }
    setImmediate(turn)
  })
  const round = (ms: number) => Math.round(ms * 10) / 10
  return {
    stop: async () => ((running = false), await done, { longestGapMs: round(longestWall), longestGapOnCpuMs: round(longestWallRan), longestOnCpuMs: round(longestRan), turns }),
  }
}

const dir = mkdtempSync(join(tmpdir(), 'bench-blocklist-'))
const file = join(dir, 'hosts.txt')
/** Writes the list a piece at a time, so the bench holds no array of a million names (its own garbage would weigh on the collector it measures). */
async function writeList(header: string, name: (i: number) => string): Promise<void> {
  rmSync(file, { force: true }) // a FileSink writes over an existing file without truncating it
  const writer = Bun.file(file).writer()
  writer.write(`# ${header}\n`)
  for (let from = 0; from < options.hosts; from += 10_000) {
    const piece: string[] = []
    for (let i = from; i < Math.min(options.hosts, from + 10_000); i++) piece.push(name(i))
    writer.write(`${piece.join('\n')}\n`)
  }
  await writer.end()
}
await writeList('synthetic block list for bench/blocklist.ts', (i) => hostName(i))
console.log(`list: ${options.hosts.toLocaleString('en')} hosts, ${mb(Bun.file(file).size)} MB`)

// 1. Load.
const before = heldBytes()
const blocklists = createBlocklists({ blocklists: { files: [file], urls: [], refreshMs: 3_600_000, allowHttpLoopback: false, allowlistHosts: [] } })
const changes: BlocklistChange[] = []
blocklists.onChange((change) => void changes.push(change))
const probeUrls = Array.from({ length: 1000 }, (_, i) => `https://${hostName(i)}/`)
const loadLoop = lookupLoop((url) => blocklists.check(url), probeUrls)
let t0 = performance.now()
let cpu0 = threadTimes().ranNs
await blocklists.start()
const loadMs = Math.round(performance.now() - t0)
const loadCpuMs = Math.round((threadTimes().ranNs - cpu0) / 1e6)
const loadGap = await loadLoop.stop()
const loaded = heldBytes()
const load = {
  ms: loadMs,
  cpuMs: loadCpuMs,
  heapMb: mb(loaded.heap - before.heap),
  longestGapMs: loadGap.longestGapMs,
  longestGapOnCpuMs: loadGap.longestGapOnCpuMs,
  longestOnCpuMs: loadGap.longestOnCpuMs,
}
// The alternative the host table replaces: the same names as strings in a Set.
const set = new Set<string>()
for (let i = 0; i < options.hosts; i++) set.add(hostName(i))
const setHeapMb = mb(heldBytes().heap - loaded.heap)
if (set.size !== options.hosts) throw new Error(`the Set holds ${set.size} names, the list ${options.hosts}`)
set.clear()
console.log(
  `load: ${load.ms} ms (${load.cpuMs} ms of the thread's CPU); held after GC: ${load.heapMb} MB of heap (a Set<string> of the same names: ${setHeapMb} MB heap); longest event-loop gap ${load.longestGapMs} ms (${load.longestGapOnCpuMs} ms of it on the CPU), longest on-CPU stretch between two turns ${load.longestOnCpuMs} ms`,
)

// 2. Lookups. The inputs live in this function only, so the refresh below does not run beside them.
const check = (url: string | URL) => !blocklists.check(url).allowed
const pick = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, k) => f(Math.floor((k * 7_919) % options.hosts)))
const hitUrl = (i: number) => `https://${hostName(i)}/login`
const missUrl = (i: number) => `https://a.b.${hostName(i, 7)}/login`
function measureLookups() {
  const hitUrls = pick(options.lookups, hitUrl)
  const walkUrls = pick(options.lookups, (i) => `https://a.b.${hostName(i)}/login`)
  const missUrls = pick(options.lookups, missUrl)
  const parsed = (urls: string[]) => urls.map((url) => new URL(url))
  const [hitParsed, walkParsed, missParsed] = [parsed(hitUrls), parsed(walkUrls), parsed(missUrls)]
  for (const urls of [hitUrls, walkUrls, missUrls]) medianNs(urls.slice(0, 50_000), check) // warm-up
  for (const urls of [hitParsed, walkParsed, missParsed]) medianNs(urls.slice(0, 50_000), check)
  const lookups = {
    checkHitUs: us(medianNs(hitUrls, check)),
    checkParentHitUs: us(medianNs(walkUrls, check)),
    checkMissUs: us(medianNs(missUrls, check)),
    urlParseUs: us(medianNs(missUrls, (url) => new URL(url).hostname.length > 0)),
    // check() of a URL already parsed (the caller's own validation parses it): normalising and the probes.
    parsedHitUs: us(medianNs(hitParsed, check)),
    parsedParentHitUs: us(medianNs(walkParsed, check)),
    parsedMissUs: us(medianNs(missParsed, check)),
  }
  const correct = hitUrls.slice(0, 1000).every(check) && walkUrls.slice(0, 1000).every(check) && !missUrls.slice(0, 1000).some(check)
  return { lookups, correct }
}
const { lookups, correct } = measureLookups()
console.log(
  `check(text): hit ${lookups.checkHitUs} µs, hit through a parent domain ${lookups.checkParentHitUs} µs, miss (every parent walked) ${lookups.checkMissUs} µs; of which new URL() ${lookups.urlParseUs} µs`,
)
console.log(`check(URL already parsed): hit ${lookups.parsedHitUs} µs, through a parent ${lookups.parsedParentHitUs} µs, miss ${lookups.parsedMissUs} µs`)
Bun.gc(true)

// 3. Refresh with a share of the names replaced, a lookup loop running.
const changed = Math.round((options.hosts * options.changedPercent) / 100)
const step = Math.floor(options.hosts / changed)
const replaced = new Set<number>()
for (let k = 0; k < changed; k++) replaced.add(k * step)
await writeList(`synthetic block list, ${options.changedPercent}% changed`, (i) => (replaced.has(i) ? hostName(i, 1) : hostName(i)))
changes.length = 0
const refreshLoop = lookupLoop((url) => blocklists.check(url), [...pick(500, hitUrl), ...pick(500, missUrl)])
t0 = performance.now()
cpu0 = threadTimes().ranNs
await blocklists.refresh()
const refreshMs = Math.round(performance.now() - t0)
const refreshCpuMs = Math.round((threadTimes().ranNs - cpu0) / 1e6)
const refreshGap = await refreshLoop.stop()
await Bun.sleep(0)
const added = changes.flatMap((change) => (change.kind === 'added' ? change.hosts : []))
const expectedAdded = [...replaced].map((i) => hostName(i, 1))
const addedSet = new Set(added)
const diffExact = changes.length === 1 && added.length === expectedAdded.length && addedSet.size === added.length && expectedAdded.every((name) => addedSet.has(name))
const swapped = expectedAdded.slice(0, 1000).every((name) => check(`https://${name}/`)) && ![...replaced].slice(0, 1000).some((i) => check(`https://${hostName(i)}/`))
const refresh = {
  changedHosts: changed,
  ms: refreshMs,
  cpuMs: refreshCpuMs,
  longestGapMs: refreshGap.longestGapMs,
  longestGapOnCpuMs: refreshGap.longestGapOnCpuMs,
  longestOnCpuMs: refreshGap.longestOnCpuMs,
  lookupsDuring: refreshGap.turns,
  addedReported: added.length,
  diffExact,
  swapped,
}
console.log(
  `refresh (${changed.toLocaleString('en')} hosts replaced): ${refresh.ms} ms (${refresh.cpuMs} ms of the thread's CPU), ${refresh.lookupsDuring.toLocaleString('en')} lookups ran meanwhile, longest event-loop gap ${refresh.longestGapMs} ms (${refresh.longestGapOnCpuMs} ms of it on the CPU), longest on-CPU stretch between two turns ${refresh.longestOnCpuMs} ms; listener told ${added.length.toLocaleString('en')} new hosts (${diffExact ? 'exactly the replacements' : 'WRONG'}); swap ${swapped ? 'seen by check()' : 'NOT SEEN'}`,
)

await blocklists.stop()
rmSync(dir, { recursive: true, force: true })
const met = refresh.longestOnCpuMs < TARGET_GAP_MS
const pass = met && diffExact && swapped && correct
const report = {
  at: new Date().toISOString(),
  machine: { cpus: cpus().length, bun: Bun.version, loadAverage: loadavg() },
  options,
  targetGapMs: TARGET_GAP_MS,
  pass,
  load,
  setHeapMb,
  lookups,
  lookupsCorrect: correct,
  refresh,
}
const out = join(import.meta.dir, 'results')
mkdirSync(out, { recursive: true })
writeFileSync(join(out, 'blocklist-latest.json'), `${JSON.stringify(report, null, 2)}\n`)
console.log(
  `${met ? 'met' : 'MISSED'}: longest on-CPU stretch between two event-loop turns during the refresh ${refresh.longestOnCpuMs} ms (target < ${TARGET_GAP_MS} ms); load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores → bench/results/blocklist-latest.json`,
)
process.exit(pass || (options.noFail && diffExact && swapped && correct) ? 0 : 1)
