// Seeds links for the redirect benchmark straight into Postgres (the API owns the table; writing rows
// directly is the fastest way to get thousands, and the redirector's first miss resolves them through
// the API like any other link), then optionally warms the cache by requesting each alias once.
//
//   DATABASE_URL=postgres://… bun bench/seed.ts --domain 127.0.0.1:3001 [--links 1000] \
//       [--out aliases.txt] [--warm http://127.0.0.1:3001]
// Prints the file of aliases (for bench/k6/redirect.js ALIAS_FILE). Every warm-up redirect is a click.
import { inArray } from 'drizzle-orm'
import { writeFileSync } from 'node:fs'
import type { Db } from '../src/db/client'
import { links, type LinkRouting } from '../src/db/schema'

export interface SeededLinks {
  /** Every id starts with this, so clicks of this run can be counted with one prefix. */
  idPrefix: string
  ids: string[]
  aliases: string[]
  /** The destination of each alias (same index): what a redirect to it answers in Location. */
  urls: string[]
  domain: string
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
/** Rows per INSERT: 8 columns each stays far below Postgres's 65,535 bind parameters. */
const CHUNK = 500

function randomString(length: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length))
  let out = ''
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length]
  return out
}

/**
 * `idPrefix`: the ids' prefix (default a fresh `link_bench_<random>_`); a set seeded beside another one
 * takes that one's prefix plus a word, so one prefix still counts the clicks of both. `routing`: each
 * link's routing in its stored form (src/modules/links/routing.ts checkRouting), from which the API
 * writes the cached record when the link is first resolved.
 */
export async function seedLinks(db: Db, options: { count: number; domain: string; now?: Date; idPrefix?: string; routing?: LinkRouting }): Promise<SeededLinks> {
  const now = options.now ?? new Date()
  const domain = options.domain.toLowerCase()
  const idPrefix = options.idPrefix ?? `link_bench_${randomString(8)}_`
  const rows = Array.from({ length: options.count }, (_, i) => ({
    id: `${idPrefix}${i}`,
    domain,
    // 10 random characters: never a reserved word, never taken by an earlier run.
    alias: randomString(10),
    url: `https://example.com/landing?i=${i}`,
    ...(options.routing && { routing: options.routing }),
    createdAt: now,
    updatedAt: now,
    expiresAt: new Date(now.getTime() + 24 * 3600 * 1000),
  }))
  for (let i = 0; i < rows.length; i += CHUNK) await db.insert(links).values(rows.slice(i, i + CHUNK))
  return { idPrefix, ids: rows.map((r) => r.id), aliases: rows.map((r) => r.alias), urls: rows.map((r) => r.url), domain }
}

export async function deleteSeededLinks(db: Db, ids: string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += CHUNK) await db.delete(links).where(inArray(links.id, ids.slice(i, i + CHUNK)))
}

export interface WarmUp {
  /** 3xx answers: each one was a counted click. */
  redirects: number
  /** Anything else, by status. */
  failures: Record<number, number>
  /** The redirects by Location. */
  locations: Record<string, number>
}

/**
 * Requests every alias once (redirects not followed), a few at a time. GET warms the cache and counts a
 * click each; HEAD redirects too but must never be counted.
 */
export async function warmCache(baseUrl: string, aliases: string[], method: 'GET' | 'HEAD' = 'GET', concurrency = 16): Promise<WarmUp> {
  const result: WarmUp = { redirects: 0, failures: {}, locations: {} }
  let next = 0
  const worker = async () => {
    while (next < aliases.length) {
      const alias = aliases[next++]!
      const response = await fetch(`${baseUrl}/${alias}`, { method, redirect: 'manual', signal: AbortSignal.timeout(5_000) })
      await response.arrayBuffer()
      if (response.status >= 300 && response.status < 400) {
        result.redirects++
        const location = response.headers.get('location') ?? ''
        result.locations[location] = (result.locations[location] ?? 0) + 1
      } else result.failures[response.status] = (result.failures[response.status] ?? 0) + 1
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return result
}

if (import.meta.main) {
  const args = process.argv.slice(2)
  const value = (name: string) => {
    const at = args.indexOf(name)
    return at === -1 ? undefined : args[at + 1]
  }
  const databaseUrl = process.env.DATABASE_URL
  const domain = value('--domain')
  const count = Number(value('--links') ?? 1000)
  if (!databaseUrl || !domain || !Number.isInteger(count) || count < 1) {
    console.error('usage: DATABASE_URL=postgres://… bun bench/seed.ts --domain <SHORT_DOMAIN> [--links 1000] [--out file] [--warm <redirector URL>]')
    process.exit(2)
  }
  const { openDatabase } = await import('../src/db/client')
  const database = await openDatabase({ databaseUrl, dataDir: ':memory:' })
  try {
    const seeded = await seedLinks(database.db, { count, domain })
    const out = value('--out') ?? `bench-aliases-${Date.now()}.txt`
    writeFileSync(out, `${seeded.aliases.join('\n')}\n`)
    console.log(`seeded ${count} links on ${seeded.domain} (ids ${seeded.idPrefix}*); aliases in ${out}`)
    const warm = value('--warm')
    if (warm) {
      const result = await warmCache(warm.replace(/\/+$/, ''), seeded.aliases)
      console.log(`warmed: ${result.redirects} redirects (each one a click), failures ${JSON.stringify(result.failures)}`)
    }
  } finally {
    await database.close()
  }
}
