// The redirect bench's routed links: their routing passes the API's checks, the API's cached record of
// it is version 2, and wrk's requests (no User-Agent, no language, no query, from loopback) miss the
// first nine rules, each of which asks its fact, and match the tenth.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { parseConfig } from '../core/config'
import { compileRouting, pickRoute, type VisitorFacts } from '../core/routing'
import { openDatabase, type Database } from '../src/db/client'
import { toCachedLink } from '../src/modules/links/cache'
import { expectDestinations, routedSets, type RoutedSet } from './routed-links'

let database: Database
let sets: RoutedSet[]

beforeAll(async () => {
  // The destinations are checked against the custom domains in Postgres (PGlite here, as the tests' harness).
  database = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: ':memory:' })
  await database.migrate()
  sets = await routedSets({ config: parseConfig({}), db: database.db, now: Date.now })
})
afterAll(() => database.close())

/** wrk's request as the redirector sees it, counting which facts the rules asked for. */
function wrkVisitor(ip: string, userAgent = '') {
  const asked: string[] = []
  const fact = (name: string, value: string) => () => (asked.push(name), value)
  const facts: VisitorFacts = { userAgent: fact('userAgent', userAgent), country: fact('country', ''), acceptLanguage: fact('acceptLanguage', ''), query: fact('query', ''), ip: fact('ip', ip) }
  return { facts, asked }
}

const compiledOf = (set: RoutedSet) => {
  const record = toCachedLink({ id: 'link_bench_x_0', url: 'https://example.com/landing', expiresAt: null, activatedAt: null, passwordHash: null, routing: set.routing })
  expect(record.v, JSON.stringify(record)).toBe(2)
  return compileRouting(record.r!)
}

describe('the 10-rule link', () => {
  test('wrk misses the first nine rules and gets the tenth, every fact asked once', () => {
    const set = sets.find((s) => s.name === 'rules')!
    const routing = compiledOf(set)
    expect(routing.rules).toHaveLength(10)
    for (const ip of ['127.0.0.1', '::ffff:127.0.0.1', '::1']) {
      const { facts, asked } = wrkVisitor(ip)
      const pick = pickRoute(routing, facts, Date.now(), () => 0)
      expect(pick, ip).toEqual({ route: 'rule:loopback', url: set.destinations[0]! })
      expect(asked.toSorted(), ip).toEqual(['acceptLanguage', 'country', 'ip', 'query', 'userAgent'])
    }
  })

  test('the rules before it are live: an iPhone gets the first', () => {
    const routing = compiledOf(sets.find((s) => s.name === 'rules')!)
    const iphone = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148'
    expect(pickRoute(routing, wrkVisitor('127.0.0.1', iphone).facts, Date.now(), () => 0)?.route).toBe('rule:ios')
  })
})

describe('the A/B link', () => {
  test('a running sticky test of two variants: the visitor bucket decides', () => {
    const set = sets.find((s) => s.name === 'ab')!
    const routing = compiledOf(set)
    expect(routing.ab?.sticky).toBe(true)
    const { facts } = wrkVisitor('127.0.0.1')
    expect(pickRoute(routing, facts, Date.now(), () => 10)).toEqual({ route: 'ab:a', url: set.destinations[0]! })
    expect(pickRoute(routing, facts, Date.now(), () => 90)).toEqual({ route: 'ab:b', url: set.destinations[1]! })
  })
})

describe('expectDestinations', () => {
  test("a redirect elsewhere (the link's own URL: routing not applied) stops the run", () => {
    const set = sets.find((s) => s.name === 'rules')!
    expect(() => expectDestinations(set, { [set.destinations[0]!]: 1000 })).not.toThrow()
    expect(() => expectDestinations(set, { [set.destinations[0]!]: 999, 'https://example.com/landing?i=3': 1 })).toThrow('redirected to https://example.com/landing?i=3')
  })
})
