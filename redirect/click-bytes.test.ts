import { describe, expect, test } from 'bun:test'
import { ClickEncoder, type ClickEvent } from '../core/clicks'
import { ByteMemo, ClickBytesEncoder, RowOutput, byteHash } from './click-bytes'
import { clickLine } from './segment'

function event(overrides: Partial<ClickEvent> = {}): ClickEvent {
  return { clickId: 'c1', linkId: 'link_1', domain: 'sho.rt', alias: 'abcd', at: 1_700_000_000_123, referrer: '', userAgent: '', ip: '', country: '', url: 'https://dest.example/', ...overrides }
}

const chrome = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.71 Safari/537.36'

/** Clicks whose every enriched column differs, with what clients can put in headers. */
const events = [
  event({ referrer: 'https://news.example/a?x=\t1\n2', userAgent: chrome, ip: '8.8.8.8' }),
  event({ clickId: 'c2', userAgent: chrome.replace('120.0.6099.71', '121.0.1.2'), ip: '8.8.8.8', country: 'fr' }),
  event({ clickId: 'c3', userAgent: 'curl/8.4.0', ip: '2001:4860:4860::8888', country: 'nope' }),
  event({ clickId: 'c4', userAgent: `UA\t\\${'x'.repeat(600)}é中😀`, referrer: `https://r.example/${'y'.repeat(2000)}`, ip: '' }),
  event({ clickId: 'c5', url: 'https://d.example/p?utm_source=a\tb&utm_term=t#frag', referrer: 'not a url\\N\r\0' }),
  event({ clickId: 'c6', at: 1_700_000_000_124, userAgent: chrome, ip: '8.8.8.8', country: 'D\tE' }),
  // A byte-order mark leads a value: kept, as the event's string has it.
  event({ clickId: 'c7', userAgent: '\uFEFFbom-agent', referrer: '\uFEFF', ip: '10.1.2.3', country: 'us' }),
  // Routed clicks: the route follows the destination; the default route is not written in the line.
  event({ clickId: 'c8', route: 'rule:r1', url: 'https://d.example/?utm_source=x' }),
  event({ clickId: 'c9', route: 'ab:b-2_X', ip: '8.8.8.8' }),
  event({ clickId: 'c10', route: 'default' }),
]

function encodeBytes(encoder: ClickBytesEncoder, lines: string): { text: string; rows: number } {
  const bytes = Buffer.from(lines)
  const out = new RowOutput()
  const rows = encoder.encodeLines(bytes, 0, bytes.length, out)
  return { text: Buffer.concat(out.take()).toString('utf8'), rows }
}

describe('click rows from bytes', () => {
  test('are the rows the encoder gives the same clicks, from the memos too, with geo by IP and without', async () => {
    for (const geoByIp of [true, false]) {
      const byEvent = new ClickEncoder('secret', { geoByIp })
      const byBytes = new ClickBytesEncoder(new ClickEncoder('secret', { geoByIp }))
      await byEvent.prepare()
      // Twice: the second pass is answered from the memos.
      for (let pass = 0; pass < 2; pass++) {
        const { text, rows } = encodeBytes(byBytes, events.map(clickLine).join(''))
        expect(rows).toBe(events.length)
        expect(text).toBe(events.map((e) => byEvent.encode(e)).join(''))
      }
    }
  })

  test('a routed line carries its route to the row; a line of the format before (no route) reads the default', () => {
    const encoder = new ClickBytesEncoder(new ClickEncoder('secret', { geoByIp: false }))
    const routedRow = encodeBytes(encoder, clickLine(event({ route: 'ab:a' }))).text
    expect(routedRow.endsWith('\tab:a\n'), routedRow).toBe(true)
    const plain = clickLine(event())
    expect(plain.split('\t')).toHaveLength(10)
    expect(encodeBytes(encoder, plain).text.endsWith('\tdefault\n')).toBe(true)
  })

  test('a line without its ten fields (or eleven, the last a route) is refused and nothing of its frame is kept', () => {
    const encoder = new ClickBytesEncoder(new ClickEncoder('secret', { geoByIp: false }))
    const good = clickLine(event())
    const routed = clickLine(event({ route: 'rule:r1' }))
    const malformed = [
      good.replace('\tabcd\t', '\tab\tcd\t'),
      good.replace('\tsho.rt', ''),
      good.slice(0, -1),
      good.replace('1700000000123', '17x'),
      routed.replace('rule:r1', 'rule:'),
      routed.replace('rule:r1', 'rules:r1'),
      routed.replace('rule:r1', 'rule:r 1'),
      routed.replace('rule:r1', `rule:${'r'.repeat(33)}`),
      routed.replace('\n', '\textra\n'),
    ]
    for (const bad of malformed) {
      const out = new RowOutput()
      const bytes = Buffer.from(good + bad)
      expect(() => encoder.encodeLines(bytes, 0, bytes.length, out)).toThrow('click segment')
      expect(out.take()).toEqual([])
    }
  })
})

/** A real FNV-1a collision among user-agent-like strings of one length (the birthday bound: some 100,000 tries). */
function collidingPair(): [string, string] {
  const seen = new Map<number, string>()
  for (let i = 36 ** 4; ; i++) {
    const text = `agent/${i.toString(36)}`
    const bytes = Buffer.from(text)
    const hash = byteHash(bytes, 0, bytes.length)
    const other = seen.get(hash)
    if (other !== undefined) return [other, text]
    seen.set(hash, text)
  }
}

describe('the byte memo', () => {
  test('a value looked up in a buffer that is then reused for other bytes keeps its own key', () => {
    // The batcher reads every segment into the same input buffer: a key that were a view of it would hold
    // the next segment's bytes, and a colliding value at the same place would be answered as the old one.
    const [first, second] = collidingPair()
    expect(first.length).toBe(second.length)
    const memo = new ByteMemo<string>()
    const input = Buffer.alloc(64)
    const lookup = () => memo.get(input, 2, 2 + first.length, (b, s, e) => `value of ${Buffer.from(b.subarray(s, e)).toString('latin1')}`)
    input.write(`x\t${first}\ty`, 'latin1')
    expect(lookup()).toBe(`value of ${first}`)
    input.write(`x\t${second}\ty`, 'latin1')
    expect(lookup()).toBe(`value of ${second}`)
  })

  test('two values with the same hash each get their own value, never the other one', () => {
    const pair = collidingPair()
    const memo = new ByteMemo<string>()
    let computed = 0
    const lookup = (text: string) => {
      // The field sits inside a larger buffer, as in a segment line.
      const bytes = Buffer.from(`x\t${text}\ty`)
      return memo.get(bytes, 2, 2 + text.length, (b, s, e) => (computed++, `value of ${Buffer.from(b.subarray(s, e)).toString('latin1')}`))
    }
    for (let round = 0; round < 3; round++) {
      expect(lookup(pair[0])).toBe(`value of ${pair[0]}`)
      expect(lookup(pair[1])).toBe(`value of ${pair[1]}`)
    }
    // Each lookup of the pair displaced the other: recomputed every time, never answered wrong.
    expect(computed).toBe(6)
    expect(lookup(pair[1])).toBe(`value of ${pair[1]}`)
    expect(computed).toBe(6)
  })
})
