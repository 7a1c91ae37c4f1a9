import { describe, expect, test } from 'bun:test'
import type { RoutingData } from '../../types'
import { bodyOf, draftOf, emptyRule, evenWeights, newTest, placeOf, placeWords, weightTotal, type RoutingDraft } from './draft'

const ROUTING: RoutingData = {
  rules: [
    { id: 'r2', url: 'https://apps.example/ios', when: { device: ['ios', 'mobile'] } },
    {
      id: 'launch',
      url: 'https://example.com/de',
      when: {
        country: ['DE', 'AT'],
        language: ['de', 'pt-BR'],
        query: { utm: 'mail', ref: null, q: 'a=b' },
        ip: ['203.0.113.0/24', '2001:db8::/32'],
        after: '2026-03-01T09:30:15.000Z',
        before: '2026-04-01T00:00:00.000Z',
      },
    },
  ],
  ab: {
    variants: [
      { id: 'a', url: 'https://example.com/a', weight: 70 },
      { id: 'b', url: 'https://example.com/b', weight: 30 },
    ],
    sticky: false,
    ends_at: '2026-12-31T00:00:00.000Z',
    winner_by: 'leads',
    status: 'running',
    winner: null,
    completed_at: null,
  },
}

describe('the routing draft', () => {
  test('what the API answered is sent back unchanged: ids, order, every condition, the running test', () => {
    const body = bodyOf(draftOf(ROUTING))
    expect(body.rules).toEqual(ROUTING.rules)
    expect(body.ab).toEqual({ variants: ROUTING.ab!.variants, sticky: false, ends_at: '2026-12-31T00:00:00.000Z', winner_by: 'leads' })
  })

  test("typed values become the API's shape: codes split and upper-cased, name=value lines, devices in order, empty fields left out", () => {
    const rule = {
      ...emptyRule(),
      url: ' https://example.com/x ',
      devices: ['linux' as const, 'ios' as const],
      countries: 'de, at\nch',
      languages: 'en  pt-BR',
      query: 'utm=mail\nref\n\nq=a=b',
      ip: '203.0.113.7\n 2001:db8::/32 ',
    }
    const draft: RoutingDraft = { rules: [rule], ab: { kind: 'none' } }
    expect(bodyOf(draft)).toEqual({
      rules: [
        {
          url: 'https://example.com/x',
          when: { device: ['ios', 'linux'], country: ['DE', 'AT', 'CH'], language: ['en', 'pt-BR'], query: { utm: 'mail', ref: null, q: 'a=b' }, ip: ['203.0.113.7', '2001:db8::/32'] },
        },
      ],
      ab: null,
    })
  })

  test('a rule with no condition goes as it is, for the API to refuse by name; a new test has no ids and no end', () => {
    const draft: RoutingDraft = { rules: [{ ...emptyRule(), url: 'https://example.com/x' }], ab: newTest() }
    expect(bodyOf(draft)).toEqual({
      rules: [{ url: 'https://example.com/x', when: {} }],
      ab: {
        variants: [
          { url: '', weight: 50 },
          { url: '', weight: 50 },
        ],
        sticky: true,
        ends_at: null,
        winner_by: null,
      },
    })
  })

  test('an ended test is kept as read and sent back as read, so it stays ended', () => {
    const ended: RoutingData = { rules: [], ab: { ...ROUTING.ab!, status: 'completed', winner: 'b', completed_at: '2026-12-31T00:00:05.000Z' } }
    const draft = draftOf(ended)
    expect(draft.ab.kind).toBe('completed')
    expect(bodyOf(draft).ab).toEqual(ended.ab)
  })

  test('weights: the total as typed, and an even split that sums to 100', () => {
    expect(
      weightTotal([
        { key: 1, url: '', weight: '60' },
        { key: 2, url: '', weight: '' },
        { key: 3, url: '', weight: '25' },
      ]),
    ).toBe(85)
    expect(evenWeights(2)).toEqual([50, 50])
    expect(evenWeights(3)).toEqual([34, 33, 33])
    expect(evenWeights(4)).toEqual([25, 25, 25, 25])
  })
})

describe('where a refusal points', () => {
  const cases: Array<[string, ReturnType<typeof placeOf>, string | null]> = [
    ['body.rules.0.when.country.0: "XX" is not an ISO 3166-1 alpha-2 code in upper case, such as DE', { in: 'rule', index: 0, field: 'country' }, 'Rule 1, countries'],
    ['body.rules.2.when: needs at least one condition (device, country)', { in: 'rule', index: 2, field: 'when' }, 'Rule 3, conditions'],
    ['body.rules.1.url: url must use http or https, not ftp:', { in: 'rule', index: 1, field: 'url' }, 'Rule 2, destination'],
    ['body.rules.0.when.query.utm: a string of at most 512 characters, or null', { in: 'rule', index: 0, field: 'query' }, 'Rule 1, query parameters'],
    ['body.ab.variants.1.weight: an integer 1-100', { in: 'variant', index: 1, field: 'weight' }, 'A/B test, variant 2, weight'],
    ['body.ab.variants: the weights sum to 90; they must sum to 100', { in: 'ab', field: 'variants' }, 'A/B test, variants'],
    ['body.ab.winner_by: is required with ends_at: leads, sales or conversions', { in: 'ab', field: 'winner_by' }, 'A/B test, winner'],
    ['The link is not found', null, null],
  ]
  for (const [hint, place, words] of cases) {
    test(hint, () => {
      const found = placeOf(hint)
      expect(found).toEqual(place)
      expect(found && placeWords(found)).toEqual(words)
    })
  }
})
