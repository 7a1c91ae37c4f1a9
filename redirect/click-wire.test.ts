import { describe, expect, test } from 'bun:test'
import type { ClickEvent } from '../core/clicks'
import { readWire, wireRow } from './click-wire'

function event(overrides: Partial<ClickEvent> = {}): ClickEvent {
  return { clickId: 'c1', linkId: 'link_1', domain: 'sho.rt', alias: 'abcd', at: 1_700_000_000_123, referrer: '', userAgent: '', ip: '', country: '', url: 'https://dest.example/', ...overrides }
}

describe('click wire', () => {
  test('rows with hostile client values read back exactly, in order', () => {
    const events = [
      event({ referrer: 'https://a/?x=\t1\n2', userAgent: 'UA\t\t9\\N é中😀', ip: '::1', country: 'FR' }),
      event({ clickId: 'c2', referrer: '12\t34\t', userAgent: '' }),
      event({ clickId: 'c3', userAgent: 'x'.repeat(5000), ip: '203.0.113.9' }),
      event({ clickId: 'c4', url: 'https://d.example/p?utm_source=a\tb&x=1#frag\n', referrer: 'r' }),
      event({ clickId: 'c5', url: '' }),
    ]
    const read: ClickEvent[] = []
    readWire(events.map(wireRow).join(''), (e) => read.push(e))
    expect(read).toEqual(events)
  })

  test('a truncated chunk is refused, not misread', () => {
    const row = wireRow(event({ referrer: 'abc' }))
    expect(() => readWire(row.slice(0, -1), () => {})).toThrow('click wire')
    expect(() => readWire(row.slice(0, 8), () => {})).toThrow('click wire')
  })
})
