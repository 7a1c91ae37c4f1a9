// The routed links of the redirect bench (bench/run.ts): links whose tenth rule is the first to match
// wrk's requests, and links with a running sticky A/B test of two variants. Each routing is written as a
// client sends it and goes through the API's own checks (checkRouting) into its stored form; the links
// rows carry it, and the API writes each cached record from its row (toCachedLink) when the warm-up
// resolves the link. So the redirector reads what the product writes, and the bench cannot drift from it.
import type { Services } from '../src/services'
import type { LinkRouting } from '../src/db/schema'
import { checkRouting } from '../src/modules/links/routing'

/**
 * What wrk's requests offer a rule: no User-Agent (so no device), no Accept-Language, no query, the
 * loopback address (no country). Each of the first nine rules asks one of those facts and misses; the
 * tenth asks the time and the address and matches. Together they ask every fact a rule can.
 */
export const TEN_RULES_INPUT = {
  rules: [
    { id: 'ios', url: 'https://example.com/app-ios', when: { device: ['ios'] } },
    { id: 'phones', url: 'https://example.com/app-mobile', when: { device: ['android', 'mobile'] } },
    { id: 'dach', url: 'https://example.com/de', when: { country: ['DE', 'AT', 'CH'] } },
    { id: 'us', url: 'https://example.com/us', when: { country: ['US'] } },
    { id: 'french', url: 'https://example.com/fr', when: { language: ['fr'] } },
    { id: 'iberian', url: 'https://example.com/pt', when: { language: ['pt-BR', 'es'] } },
    { id: 'newsletter', url: 'https://example.com/newsletter', when: { query: { utm_source: 'newsletter' } } },
    { id: 'office', url: 'https://example.com/office', when: { ip: ['203.0.113.0/24', '198.51.100.7'] } },
    { id: 'lab-v6', url: 'https://example.com/lab', when: { ip: ['2001:db8::/32'] } },
    { id: 'loopback', url: 'https://example.com/loopback', when: { ip: ['127.0.0.0/8', '::1'], after: '2020-01-01T00:00:00Z' } },
  ],
}

/** A running test, sticky (the default): the same visitor gets the same variant. */
export const AB_INPUT = {
  ab: {
    variants: [
      { id: 'a', url: 'https://example.com/variant-a', weight: 50 },
      { id: 'b', url: 'https://example.com/variant-b', weight: 50 },
    ],
    sticky: true,
  },
}

export interface RoutedSet {
  /** Its name in ids (`<prefix><name>_<i>`) and in the summary's JSON. */
  name: 'rules' | 'ab'
  routing: LinkRouting
  /** The Locations wrk's requests may get: the tenth rule's, or either variant's. */
  destinations: string[]
}

/** Both routings in their stored form, as the API's PUT /links/{alias}/routing would store them. */
export async function routedSets(services: Pick<Services, 'config' | 'db' | 'now'>): Promise<RoutedSet[]> {
  const rules = await checkRouting(services, TEN_RULES_INPUT, 'routing')
  const ab = await checkRouting(services, AB_INPUT, 'routing')
  if (rules?.rules.length !== 10 || ab?.ab?.status !== 'running') throw new Error(`routed links: checkRouting gave ${JSON.stringify({ rules, ab })}`)
  return [
    { name: 'rules', routing: rules, destinations: [rules.rules[9]!.url] },
    { name: 'ab', routing: ab, destinations: ab.ab.variants.map((v) => v.url) },
  ]
}

/** Throws unless every redirect of a warm-up went to one of the set's destinations. */
export function expectDestinations(set: RoutedSet, locations: Record<string, number>): void {
  const others = Object.keys(locations).filter((location) => !set.destinations.includes(location))
  if (others.length > 0) throw new Error(`routed links (${set.name}): redirected to ${others.join(', ')}, expected ${set.destinations.join(' or ')}`)
}
