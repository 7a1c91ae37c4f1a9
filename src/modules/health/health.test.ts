import { beforeAll, describe, expect, test } from 'bun:test'
import type { Db } from '../../db/client'
import { call, show, testApi, type TestApp } from '../../../test/support/api'

/** A database whose every query fails as a driver would, with what a driver puts in its message. */
const brokenDb = () => ({ execute: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.5:5432 password=hunter2')) }) as unknown as Db

let app: TestApp

beforeAll(async () => {
  app = (await testApi()).app
})

describe('GET /health', () => {
  test('200 {status: ok}: the process answers', async () => {
    const res = await call(app, 'GET', '/health')
    expect(res.status, show(res)).toBe(200)
    expect(res.body, show(res)).toEqual({ status: 'ok' })
  })

  test('asks no dependency: still 200 while the database is down (liveness, so nothing restarts a healthy process)', async () => {
    const broken = await testApi({ db: brokenDb() })
    const res = await call(broken.app, 'GET', '/health')
    expect(res.status, show(res)).toBe(200)
  })

  test('security: other methods are 405 JSON with Allow, tokens are irrelevant', async () => {
    const post = await call(app, 'POST', '/health', { body: {} })
    expect(post.status, show(post)).toBe(405)
    expect(post.body.error, show(post)).toBe('METHOD_NOT_ALLOWED')
    expect(post.headers.get('allow'), show(post)).toBe('GET, HEAD')
    const withToken = await call(app, 'GET', '/health', { token: 'mk_0123456789abcdefghijklmnop' })
    expect(withToken.status, show(withToken)).toBe(200)
  })
})

describe('GET /ready', () => {
  test('200 with every check while they answer: postgres and the cache required, clickhouse shown', async () => {
    const res = await call(app, 'GET', '/ready')
    expect(res.status, show(res)).toBe(200)
    expect(res.body.status, show(res)).toBe('ready')
    expect(res.body.checks.postgres, show(res)).toMatchObject({ status: 'ok', required: true })
    expect(res.body.checks.clickhouse, show(res)).toMatchObject({ status: 'ok', required: false })
    const cache = res.body.checks.redis ?? res.body.checks.cache
    expect(cache, show(res)).toMatchObject({ status: 'ok', required: true })
    expect(res.headers.get('cache-control'), show(res)).toBe('no-store')
  })

  test('503 SERVICE_UNAVAILABLE naming postgres when it does not answer, without the driver error', async () => {
    const broken = await testApi({ db: brokenDb() })
    const res = await call(broken.app, 'GET', '/ready')
    expect(res.status, show(res)).toBe(503)
    expect(res.body, show(res)).toMatchObject({ success: false, error: 'SERVICE_UNAVAILABLE', data: { status: 'not_ready' } })
    expect(res.body.hint, show(res)).toContain('postgres')
    expect(res.body.data.checks.postgres, show(res)).toMatchObject({ status: 'failing', required: true })
    expect(res.text, show(res)).not.toContain('ECONNREFUSED')
    expect(res.text, show(res)).not.toContain('hunter2')
  })

  test('a ClickHouse that does not answer is shown failing, and the API stays ready (statistics wait, the rest works)', async () => {
    const base = await testApi()
    const silent = { ...base.deps.clickhouse, query: () => new Promise(() => {}) } as unknown as typeof base.deps.clickhouse
    const withSilentClickHouse = await testApi({ clickhouse: silent })
    const res = await call(withSilentClickHouse.app, 'GET', '/ready')
    expect(res.status, show(res)).toBe(200)
    expect(res.body.checks.clickhouse, show(res)).toMatchObject({ status: 'failing', required: false, reason: 'no answer within 1000 ms' })
  })
})
