import { describe, expect, test } from 'bun:test'
import { Elysia, t } from 'elysia'
import { call, show } from '../../test/support/api'
import { body, isJsonContentType, MAX_BODY_BYTES, MAX_DEPTH, nestingDepth, parseJsonBody } from './body'
import { errors } from './errors'

const app = new Elysia()
  .use(errors)
  .use(body)
  .post('/echo', ({ body }) => body, { body: t.Object({ name: t.String() }) })

function post(init: RequestInit) {
  return app.handle(new Request('http://localhost/echo', { method: 'POST', ...init }))
}

describe('JSON body parsing', () => {
  test('application/json, a charset parameter, +json and no content type are parsed', async () => {
    for (const type of ['application/json', 'application/json; charset=utf-8', 'application/merge-patch+json']) {
      const res = await call(app, 'POST', '/echo', { body: { name: 'a' }, headers: { 'content-type': type } })
      expect(res.status, `${type}: ${show(res)}`).toBe(200)
    }
    const bare = await post({ body: new Blob(['{"name":"b"}']) })
    expect(bare.status, await bare.clone().text()).toBe(200)
    expect(isJsonContentType('text/json')).toBe(false)
  })

  test('other content types are 400 UNSUPPORTED_CONTENT_TYPE', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml']) {
      const res = await call(app, 'POST', '/echo', { body: 'name=a', headers: { 'content-type': type } })
      expect(res.status, `${type}: ${show(res)}`).toBe(400)
      expect(res.body.error, `${type}: ${show(res)}`).toBe('UNSUPPORTED_CONTENT_TYPE')
    }
  })

  test('malformed JSON, invalid UTF-8 and absurd nesting are 400 MALFORMED_JSON', async () => {
    const bodies: (string | Uint8Array)[] = ['{', '{"name": "a",}', "{'name':'a'}", 'undefined', new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), '['.repeat(100_000)]
    for (const b of bodies) {
      const res = await post({ body: b, headers: { 'content-type': 'application/json' } })
      const text = await res.text()
      expect(res.status, text).toBe(400)
      expect(JSON.parse(text).error, text).toBe('MALFORMED_JSON')
    }
  })

  test('an empty body, null, an array or a scalar is 400 VALIDATION_FAILED: bodies are objects', async () => {
    const cases: [string, string][] = [
      ['', 'body: must be a JSON object'],
      ['null', 'body: must be a JSON object'],
      ['[{"name":"a"}]', 'body: must be a JSON object, not an array'],
      ['"a"', 'body: must be a JSON object, not a string'],
      ['7', 'body: must be a JSON object, not a number'],
    ]
    for (const [text, hint] of cases) {
      const res = await call(app, 'POST', '/echo', { body: text, headers: { 'content-type': 'application/json' } })
      expect(res.status, `${text}: ${show(res)}`).toBe(400)
      expect(res.body.error, `${text}: ${show(res)}`).toBe('VALIDATION_FAILED')
      expect(res.body.hint, `${text}: ${show(res)}`).toStartWith(hint)
    }
  })

  test('bodies over the limit are 413 PAYLOAD_TOO_LARGE, announced or streamed', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(MAX_BODY_BYTES) })
    const announced = await call(app, 'POST', '/echo', { body: big })
    expect(announced.status, show(announced)).toBe(413)
    expect(announced.body.error, show(announced)).toBe('PAYLOAD_TOO_LARGE')
    // Chunked, no Content-Length: counted while read.
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024))
    let sent = 0
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"name":"'))
        if (sent > 20) return controller.close()
        sent++
        controller.enqueue(chunk)
      },
    })
    const streamed = await post({ body: stream, headers: { 'content-type': 'application/json' }, duplex: 'half' } as RequestInit)
    const text = await streamed.text()
    expect(streamed.status, text).toBe(413)
    expect(sent, 'stopped reading early').toBeLessThan(20)
    // A lying Content-Length is refused before reading.
    const lying = await post({ body: '{"name":"a"}', headers: { 'content-type': 'application/json', 'content-length': String(MAX_BODY_BYTES + 1) } })
    expect(lying.status, await lying.text()).toBe(413)
  })
})

describe('nesting depth', () => {
  test('a body nested thousands of levels deep is a 400, not a stack overflow', async () => {
    const deep = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`
    expect(nestingDepth(JSON.parse(deep))).toBeGreaterThan(MAX_DEPTH)
    const request = new Request('http://localhost/x', { method: 'POST', body: deep, headers: { 'content-type': 'application/json' } })
    await expect(parseJsonBody(request, 'application/json')).rejects.toMatchObject({ code: 'VALIDATION_FAILED' })
    expect(nestingDepth({ a: [{ b: 1 }] })).toBe(3)
  })
})
