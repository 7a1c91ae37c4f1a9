// Fifty concurrent creates with one Idempotency-Key execute exactly once, on the
// real route and store (Redis in CI's second pass, in-process otherwise).
import { describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { call, show, testApi } from '../../../test/support/api'
import { links } from '../../db/schema'
import { newAccount } from '../../../test/support/fixtures'

describe('POST /api/v1/shorten with an Idempotency-Key', () => {
  test('50 concurrent identical requests create one link; every answer is that link or "in progress"', async () => {
    const { app, database } = await testApi()
    const account = await newAccount(database.db, 'pro')
    const key = `create-${crypto.randomUUID()}`
    const body = { url: 'https://example.com/once' }
    const results = await Promise.all(Array.from({ length: 50 }, () => call(app, 'POST', '/api/v1/shorten', { token: account.key, body, headers: { 'idempotency-key': key } })))
    const created = await database.db
      .select()
      .from(links)
      .where(and(eq(links.accountId, account.id), eq(links.url, body.url)))
    expect(created, results.map(show).slice(0, 3).join('\n')).toHaveLength(1)
    const aliases = new Set(results.filter((r) => r.status === 200).map((r) => r.body.data.alias))
    expect([...aliases]).toEqual([created[0]!.alias])
    for (const r of results.filter((r) => r.status !== 200)) {
      expect(r.status, show(r)).toBe(409)
      expect(r.body.error, show(r)).toBe('IDEMPOTENCY_IN_PROGRESS')
      expect(r.headers.get('retry-after'), show(r)).toBe('1')
    }
    const replay = await call(app, 'POST', '/api/v1/shorten', { token: account.key, body, headers: { 'idempotency-key': key } })
    expect(replay.status, show(replay)).toBe(200)
    expect(replay.body.data.alias).toBe(created[0]!.alias)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
  })
})
