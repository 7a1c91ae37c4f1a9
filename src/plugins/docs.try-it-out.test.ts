// The document as Swagger UI's "Try it out" uses it: what it fills in, and that the document a client
// reads (client/openapi.json) is the one served, whatever traffic came first.
import { beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { DOCUMENT_FILE, documentText } from '../../scripts/generate-client'
import { call, show, testApi, TEST_IP_HEADER, uniqueIp, type TestApp } from '../../test/support/api'
import { newAccount } from '../../test/support/fixtures'

type Json = any

let app: TestApp
let apiKey: string
let doc: Json
let raw: string

beforeAll(async () => {
  const api = await testApi()
  app = api.app
  apiKey = (await newAccount(api.database.db, 'pro')).key
  const res = await call(app, 'GET', '/swagger/json')
  if (res.status !== 200) throw new Error(show(res))
  doc = res.body
  raw = res.text
})

const operations = () => Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })))

/**
 * What Swagger UI 5 (parameter-row.jsx, setDefaultValue) fills a parameter in with, for OpenAPI 3: the
 * first of the `examples` map, a content example, `example`, the schema's `example` or `default` (with
 * the first anyOf/oneOf branch merged in), the parameter's `default`. The schema's `examples` array is
 * not read.
 */
function prefilled(parameter: Json): unknown {
  const schema = parameter.schema ?? {}
  const branch = schema.anyOf?.[0] ?? schema.oneOf?.[0] ?? {}
  const content = Object.values(parameter.content ?? {})[0] as Json
  const candidates = [
    parameter.examples ? (Object.values(parameter.examples)[0] as Json)?.value : undefined,
    content?.example,
    parameter.example,
    schema.example ?? branch.example,
    schema.default ?? branch.default,
    parameter.default,
  ]
  return candidates.find((value) => value !== undefined)
}

describe('what Try it out fills in', () => {
  test('an optional parameter is filled in with nothing but its default (no example: dry_run, domain, Idempotency-Key)', () => {
    const filled: string[] = []
    for (const { path, method, op } of operations()) {
      for (const parameter of op.parameters ?? []) {
        if (parameter.required === true) continue
        const value = prefilled(parameter)
        if (value !== undefined && value !== parameter.schema?.default) filled.push(`${method} ${path} ${parameter.name}=${JSON.stringify(value)}`)
      }
    }
    expect(filled).toEqual([])
    // The examples are still there, as examples.
    const patch = doc.paths['/api/v1/links/{alias}'].patch.parameters as Json[]
    const byName = (name: string) => patch.find((p) => p.name === name)
    for (const name of ['domain', 'dry_run', 'Idempotency-Key']) expect(prefilled(byName(name)), name).toBeUndefined()
    expect(byName('dry_run').schema.examples).toEqual(['true'])
    expect(byName('dry_run').description).toContain('Example: `true`')
    expect(byName('domain').schema.examples.length).toBeGreaterThan(0)
    expect(byName('Idempotency-Key').description).toContain('Try it out')
  })

  test('a required parameter keeps its example, so the operation can be tried as it is', () => {
    const param = (path: string, method: string, name: string) => (doc.paths[path][method].parameters as Json[]).find((p) => p.name === name)
    expect(prefilled(param('/api/v1/links/{alias}', 'get', 'alias'))).toBe('spring-sale')
    expect(prefilled(param('/api/v1/links/{alias}/stats', 'get', 'alias'))).toBe('spring-sale')
    expect(prefilled(param('/oauth/authorize', 'get', 'client_id'))).toBe('cli_3q2V8mJcQ1aXy0bq9Wc2rA')
  })
})

/** One request to an operation: path parameters and the JSON body from its examples, an API key. */
function requestFor(path: string, method: string, op: Json): Request {
  const parameters = (op.parameters ?? []) as Json[]
  const url = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(prefilled(parameters.find((p) => p.name === name)) ?? 'x')))
  const headers: Record<string, string> = { [TEST_IP_HEADER]: uniqueIp(), authorization: `Bearer ${apiKey}` }
  let body: string | undefined
  const [type, media] = (Object.entries(op.requestBody?.content ?? {})[0] ?? []) as [string?, Json?]
  if (type) {
    headers['content-type'] = type
    const ref: string | undefined = media?.schema?.$ref
    const example = ref ? doc.components.schemas[ref.split('/').pop()!]?.examples?.[0] : undefined
    body = type === 'application/json' ? JSON.stringify(example ?? {}) : ''
  }
  return new Request(`http://localhost${url}`, { method: method.toUpperCase(), headers, body })
}

describe('the served document', () => {
  test('is the same after one request to every operation, in this app and a new one, and is client/openapi.json', async () => {
    const statuses: string[] = []
    for (const { path, method, op } of operations()) {
      const response = await app.handle(requestFor(path, method, op))
      await response.arrayBuffer()
      statuses.push(`${response.status} ${method} ${path}`)
    }
    expect(statuses.length).toBe(operations().length)
    // Not only refusals: routes ran to their answers (response schemas used).
    expect(statuses.filter((s) => /^2/.test(s)).length, statuses.join('\n')).toBeGreaterThan(10)

    const after = await call(app, 'GET', '/swagger/json')
    expect(after.text === raw, 'the document changed with traffic').toBe(true)
    const fresh = await call((await testApi()).app, 'GET', '/swagger/json')
    expect(fresh.text === raw, 'a new app in this process serves another document').toBe(true)
    const stored = readFileSync(DOCUMENT_FILE, 'utf8')
    expect(documentText(JSON.parse(after.text)) === stored, 'client/ is out of date: run npm run client:generate').toBe(true)
  }, 120_000)
})
