import { describe, expect, test } from 'bun:test'
import { encodeCachedLink, type CachedLink } from '../core/link-cache'
import { LinkResolver } from './resolver'
import type { LinkSource } from './source'

const link = (url: string): CachedLink => ({ v: 1, id: 'link_1', url })

/** A shared cache whose reads are counted and can be held until released. */
function source(initial: CachedLink) {
  const state = { value: encodeCachedLink(initial) as string | null, reads: 0, hold: null as Promise<void> | null }
  const src: LinkSource = {
    async get() {
      state.reads++
      if (state.hold) await state.hold
      return state.value
    },
    subscribe: async () => async () => {},
  }
  return { src, state }
}

const TTL = 1000

describe('link resolver L1', () => {
  test('past its time an entry is still answered while one background reload runs, then answered fresh', async () => {
    const { src, state } = source(link('https://old.example/'))
    const resolver = new LinkResolver(src, async () => null, { l1TtlMs: TTL, l1MaxEntries: 10, negativeTtlMs: TTL })
    const t0 = Date.now()
    expect(await resolver.load('k', 'sho.rt', 'a')).toEqual(link('https://old.example/'))
    expect(state.reads).toBe(1)
    state.value = encodeCachedLink(link('https://new.example/'))
    let release!: () => void
    state.hold = new Promise((resolve) => (release = resolve))
    // Past its time: the old answer at once, one reload however many requests come meanwhile.
    const later = t0 + TTL + 10
    expect(resolver.peek('k', later, 'sho.rt', 'a')).toEqual(link('https://old.example/'))
    expect(resolver.peek('k', later, 'sho.rt', 'a')).toEqual(link('https://old.example/'))
    expect(state.reads).toBe(2)
    expect(resolver.counters.staleHits).toBe(2)
    release()
    state.hold = null
    await Bun.sleep(0)
    expect(resolver.peek('k', Date.now(), 'sho.rt', 'a')).toEqual(link('https://new.example/'))
  })

  test('an entry more than one lifetime past its time is not answered: the request loads it', async () => {
    const { src } = source(link('https://old.example/'))
    const resolver = new LinkResolver(src, async () => null, { l1TtlMs: TTL, l1MaxEntries: 10, negativeTtlMs: TTL })
    const t0 = Date.now()
    await resolver.load('k', 'sho.rt', 'a')
    expect(resolver.peek('k', t0 + 2 * TTL + 50, 'sho.rt', 'a')).toBeUndefined()
  })

  test('an invalidated entry is never answered stale', async () => {
    const { src, state } = source(link('https://old.example/'))
    const resolver = new LinkResolver(src, async () => null, { l1TtlMs: TTL, l1MaxEntries: 10, negativeTtlMs: TTL })
    await resolver.load('k', 'sho.rt', 'a')
    resolver.invalidate('k')
    state.value = null
    expect(resolver.peek('k', Date.now() + TTL + 10, 'sho.rt', 'a')).toBeUndefined()
    expect(resolver.peek('k', Date.now(), 'sho.rt', 'a')).toBeUndefined()
  })
  test('a load invalidated while it runs leaves the L1 alone; invalidations of other links do not', async () => {
    const { src, state } = source(link('https://old.example/'))
    const resolver = new LinkResolver(src, async () => null, { l1TtlMs: TTL, l1MaxEntries: 10, negativeTtlMs: TTL })
    let release!: () => void
    state.hold = new Promise((resolve) => (release = resolve))
    const first = resolver.load('k', 'sho.rt', 'a')
    // Links created and changed elsewhere, as under a busy API: this key's load still lands.
    for (let i = 0; i < 100; i++) resolver.invalidate(`other${i}`)
    release()
    expect(await first).toEqual(link('https://old.example/'))
    expect(resolver.peek('k', Date.now(), 'sho.rt', 'a')).toEqual(link('https://old.example/'))
    expect(state.reads).toBe(1)

    // Its own invalidation during a load: what that load read is not kept, and the next request reads again.
    state.hold = new Promise((resolve) => (release = resolve))
    resolver.invalidate('k')
    const stale = resolver.load('k', 'sho.rt', 'a')
    resolver.invalidate('k')
    state.value = encodeCachedLink(link('https://new.example/'))
    release()
    await stale
    state.hold = null
    expect(resolver.peek('k', Date.now(), 'sho.rt', 'a')).toBeUndefined()
    expect(await resolver.load('k', 'sho.rt', 'a')).toEqual(link('https://new.example/'))
    expect(resolver.peek('k', Date.now(), 'sho.rt', 'a')).toEqual(link('https://new.example/'))
  })

  test('a reload that brings a routed link unchanged keeps the record held (and what was compiled with it); a changed one replaces it', async () => {
    const routed = (url: string): CachedLink => ({ v: 2, id: 'link_1', url: 'https://example.com/', r: { rules: [{ id: 'ios', url, device: ['ios'] }] } })
    const { src, state } = source(routed('https://apps.example/ios'))
    const resolver = new LinkResolver(src, async () => null, { l1TtlMs: TTL, l1MaxEntries: 10, negativeTtlMs: TTL })
    const first = await resolver.load('k', 'sho.rt', 'a')
    const again = await resolver.load('k', 'sho.rt', 'a')
    expect(state.reads).toBe(2)
    expect(again, 'the same record object').toBe(first)
    expect(resolver.peek('k', Date.now(), 'sho.rt', 'a')).toBe(first!)
    state.value = encodeCachedLink(routed('https://apps.example/ios-2'))
    const changed = await resolver.load('k', 'sho.rt', 'a')
    expect(changed).not.toBe(first)
    expect(changed).toEqual(routed('https://apps.example/ios-2'))
    expect(resolver.peek('k', Date.now(), 'sho.rt', 'a')).toBe(changed!)
  })
})
