import { beforeAll, describe, expect, test } from 'bun:test'
import type { Db } from '../../db/client'
import { call, show, testApi, type TestApp } from '../../../test/support/api'

let app: TestApp

beforeAll(async () => {
  app = (await testApi()).app
})

describe('GET /health', () => {
  test('200 {status: ok} when the database answers', async () => {
    const res = await call(app, 'GET', '/health')
    expect(res.status, show(res)).toBe(200)
    expect(res.body, show(res)).toEqual({ status: 'ok' })
  })

  test('503 SERVICE_UNAVAILABLE JSON when it does not, without the driver error', async () => {
    const db = { execute: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.5:5432 password=hunter2')) } as unknown as Db
    const broken = await testApi({ db })
    const res = await call(broken.app, 'GET', '/health')
    expect(res.status, show(res)).toBe(503)
    expect(res.body, show(res)).toMatchObject({ success: false, error: 'SERVICE_UNAVAILABLE' })
    expect(res.text, show(res)).not.toContain('ECONNREFUSED')
    expect(res.text, show(res)).not.toContain('hunter2')
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
