// Form bodies on the paths that take them (RFC 6749 token and revocation requests, the HTML pages'
// forms), and nowhere else: a JSON route keeps refusing a form.
import { describe, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { call, show } from '../../test/support/api'
import { bodyPlugin, MAX_BODY_BYTES } from './body'
import { errors } from './errors'

const app = new Elysia()
  .use(errors)
  .use(bodyPlugin({ formPaths: ['/form', '/pages/*'] }))
  .post('/form', ({ body }) => ({ got: body }))
  .post('/pages/:id', ({ body }) => ({ got: body }))
  .post('/pagesx', ({ body }) => ({ got: body }))
  .post('/json', ({ body }) => ({ got: body }))

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

describe('form bodies', () => {
  test('a form path parses fields; a repeated field is an array (checkboxes); JSON is still accepted there', async () => {
    const res = await call(app, 'POST', '/form', { body: 'grant_type=authorization_code&scope=a&scope=b&empty=&x=%C3%A9+%2B', headers: FORM })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.got).toEqual({ grant_type: 'authorization_code', scope: ['a', 'b'], empty: '', x: 'é +' })
    const json = await call(app, 'POST', '/form', { body: { a: 1 } })
    expect(json.body.got, show(json)).toEqual({ a: 1 })
    const none = await call(app, 'POST', '/form', { body: '', headers: FORM })
    expect(none.body.got, show(none)).toEqual({})
  })

  test('only the listed paths: a JSON route refuses a form with 400 UNSUPPORTED_CONTENT_TYPE', async () => {
    for (const path of ['/json', '/pagesx']) {
      const res = await call(app, 'POST', path, { body: 'a=1', headers: FORM })
      expect(res.status, show(res)).toBe(400)
      expect(res.body.error).toBe('UNSUPPORTED_CONTENT_TYPE')
    }
    const page = await call(app, 'POST', '/pages/apr_1', { body: 'decision=approve', headers: FORM })
    expect(page.body.got, show(page)).toEqual({ decision: 'approve' })
  })

  test('hostile forms: other types, control characters, invalid UTF-8 and oversize bodies are 4xx, never 500', async () => {
    const other = await call(app, 'POST', '/form', { body: 'a=1', headers: { 'content-type': 'text/plain' } })
    expect(other.status, show(other)).toBe(400)
    expect(other.body.error).toBe('UNSUPPORTED_CONTENT_TYPE')
    const nul = await call(app, 'POST', '/form', { body: 'code=ab%00cd', headers: FORM })
    expect(nul.status, show(nul)).toBe(400)
    expect(nul.body.error).toBe('VALIDATION_FAILED')
    const bad = await call(app, 'POST', '/form', { body: 'code=%FF%FE', headers: FORM })
    expect(bad.status, show(bad)).toBeLessThan(500)
    const big = await call(app, 'POST', '/form', { body: `a=${'x'.repeat(MAX_BODY_BYTES)}`, headers: FORM })
    expect(big.status, show(big)).toBe(413)
  })
})
