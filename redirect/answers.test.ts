import { describe, expect, test } from 'bun:test'
import { TurnAnswers } from './answers'

/** A commit promise the test releases, like the click log's turn. */
function commit() {
  let release = () => {}
  const written = new Promise<void>((resolve) => (release = resolve))
  return { written, release }
}

/** Settles what is queued: the commit's continuation and the answers it resolves. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0))

function tracked(answer: Response | Promise<Response>) {
  const state: { response: Response | null } = { response: null }
  void Promise.resolve(answer).then((response) => (state.response = response))
  return state
}

describe('answers of counted redirects', () => {
  test('each answer of a turn leaves with its own 302, and only once the turn is written', async () => {
    const answers = new TurnAnswers(() => {})
    const turn = commit()
    const responses = [0, 1, 2].map((i) => new Response(null, { status: 302, headers: { Location: `https://example.com/${i}` } }))
    const waiting = responses.map((r) => tracked(answers.after(turn.written, r)))
    await settle()
    expect(waiting.map((w) => w.response)).toEqual([null, null, null])
    turn.release()
    await settle()
    expect(waiting.map((w) => w.response?.headers.get('location'))).toEqual(['https://example.com/0', 'https://example.com/1', 'https://example.com/2'])
  })

  test('a click appended after a write returned but before its answers left waits for its own write', async () => {
    const answers = new TurnAnswers(() => {})
    const first = commit()
    const early = tracked(answers.after(first.written, new Response(null, { status: 302 })))
    // The first turn's write returns; before its continuation runs (a microtask later), the next turn's
    // click is appended (a password form's redirect, released by a microtask, does this).
    first.release()
    const second = commit()
    const late = tracked(answers.after(second.written, new Response(null, { status: 302 })))
    await settle()
    expect(early.response?.status).toBe(302)
    expect(late.response, 'released with a write that did not hold its click').toBeNull()
    second.release()
    await settle()
    expect(late.response?.status).toBe(302)
  })

  test('a dropped click (nothing written) answers at once, without a promise', () => {
    const answers = new TurnAnswers(() => {})
    const response = new Response(null, { status: 302 })
    expect(answers.after(undefined, response)).toBe(response)
  })

  test('a claimed answer is reported once, as it leaves; an unclaimed one is left to whoever awaits it', async () => {
    const reported: number[] = []
    const answers = new TurnAnswers((started) => reported.push(started))
    const turn = commit()
    const claimed = answers.after(turn.written, new Response(null, { status: 302 })) as Promise<Response>
    expect(answers.claim(claimed, 42)).toBe(true)
    // Only the answer given last can be claimed, and only once.
    expect(answers.claim(claimed, 43)).toBe(false)
    const other = answers.after(turn.written, new Response(null, { status: 302 })) as Promise<Response>
    expect(answers.claim(Promise.resolve(new Response(null)), 44)).toBe(false)
    await settle()
    expect(reported).toEqual([])
    turn.release()
    await Promise.all([claimed, other])
    expect(reported).toEqual([42])
  })
})
