// Every operation of the API document (/swagger/json) that has path parameters, called with malformed
// values of each: the answer's status is one the document lists for that operation, its content type one
// the document lists for that status, a JSON error is the ErrorResponse, and nothing is a 5xx.
//
// The credential is the kind the operation accepts, read from the document: no security requirement →
// none, and again with the signed-in session (the HTML pages read it); the session scheme with HUMAN_ONLY
// among the 403s (a human-only route) → the session; the session scheme otherwise, or bearerAuth with
// OAuth scopes → a Pro account's API key; bearerAuth alone → a guest token. A body, where the operation
// takes one, is its schema's example, so the path parameter is the only thing wrong with the request.
import { afterAll, describe, expect, test } from 'bun:test'
import { call, newGuestToken, show, testApi, testConfig, TEST_IP_HEADER, uniqueIp, type CallResult } from '../../test/support/api'
import { newAccount } from '../../test/support/fixtures'
import { Browser, inputValue, signInByMail } from '../../test/support/signin'
import { startSmtpSink } from '../../test/support/smtp'
import { ERROR_STATUS } from './errors'

type Json = any

const sink = await startSmtpSink()
afterAll(() => sink.close())
// Hundreds of calls with one key and one session: the per-minute limits would answer 429 before the
// parameter is looked at.
const { app, database } = await testApi({
  config: testConfig({ SMTP_URL: sink.url, PLAN_PRO_REQUESTS_PER_MINUTE: '1000000', SESSION_REQUESTS_PER_MINUTE: '1000000' }),
})
const documentAnswer = await call(app, 'GET', '/swagger/json')
if (documentAnswer.status !== 200) throw new Error(`GET /swagger/json: ${show(documentAnswer)}`)
const doc: Json = documentAnswer.body

const pro = await newAccount(database.db, 'pro')
const guestToken = await newGuestToken(app)
const browser = new Browser(app)
await signInByMail(browser, sink, `${pro.id.toLowerCase()}@example.test`)
const csrf = inputValue((await browser.get('/signin/done')).text, 'csrf')
if (!csrf) throw new Error('no csrf token on /signin/done')

type Credential = 'none' | 'guest token' | 'API key' | 'session'

/** Answers that mean the credential, not the path parameter, was refused: the call never reached the route. */
const REFUSED = new Set(['UNAUTHORIZED', 'HUMAN_ONLY', 'FULL_ACCESS_REQUIRED', 'CSRF_TOKEN_INVALID', 'RATE_LIMITED', 'GUEST_REQUEST_LIMIT', 'INSUFFICIENT_SCOPE'])

function credentialsFor(op: Json): Credential[] {
  const schemes = new Set((op.security ?? []).flatMap((requirement: Json) => Object.keys(requirement)))
  if (schemes.size === 0) return ['none', 'session']
  if (schemes.has('sessionCookie')) return 'HUMAN_ONLY' in (op.responses['403']?.content?.['application/json']?.examples ?? {}) ? ['session'] : ['API key']
  if (schemes.has('bearerAuth')) return schemes.has('oauth2') ? ['API key'] : ['guest token']
  throw new Error(`no credential for the security requirements ${JSON.stringify(op.security)}`)
}

/** A well-formed value of a parameter: its example, else its schema's, else a plain word. */
function wellFormed(parameter: Json): string {
  const example = parameter.example ?? (Object.values(parameter.examples ?? {})[0] as Json)?.value
  return String(example ?? parameter.schema?.enum?.[0] ?? parameter.schema?.examples?.[0] ?? 'abc')
}

/** Malformed values of a parameter, as they appear in the URL (percent-encoded where needed). */
function malformed(parameter: Json): [what: string, value: string][] {
  const valid = wellFormed(parameter)
  return [
    ['too long', 'a'.repeat((parameter.schema?.maxLength ?? 1024) + 1)],
    ['a wrong prefix', /^[a-z]+_/.test(valid) ? valid.replace(/^[a-z]+_/, 'zzz_') : `zzz_${valid}`],
    ['characters outside the pattern', `${encodeURIComponent('a b<>')}!*`],
    ['a non-ASCII letter', encodeURIComponent('é')],
    ['a NUL', '%00'],
    ['an encoded slash', `${valid}%2Fx`],
    ['a space', '%20'],
    ['empty quotes', '%22%22'],
    ['"undefined"', 'undefined'],
  ]
}

/** Form fields of the pages' forms: the session's CSRF token and a decision. */
const FORM_VALUES: Record<string, string> = { csrf, decision: 'approve' }

function bodyFor(op: Json): { body?: string; type?: string } {
  const content = op.requestBody?.content ?? {}
  const json = content['application/json']
  if (json) {
    const ref: string | undefined = json.schema?.$ref
    const schema = ref ? doc.components.schemas[ref.split('/').pop()!] : json.schema
    return { body: JSON.stringify(schema?.examples?.[0] ?? {}), type: 'application/json' }
  }
  const form = content['application/x-www-form-urlencoded']
  if (form) {
    const fields = Object.keys(form.schema?.properties ?? {}).map((name): [string, string] => {
      if (!(name in FORM_VALUES)) throw new Error(`no value for the form field ${name}`)
      return [name, FORM_VALUES[name]!]
    })
    return { body: new URLSearchParams(fields).toString(), type: 'application/x-www-form-urlencoded' }
  }
  return {}
}

async function send(method: string, url: string, op: Json, credential: Credential): Promise<CallResult> {
  const { body, type } = bodyFor(op)
  const headers: Record<string, string> = { [TEST_IP_HEADER]: uniqueIp(), ...(type && { 'content-type': type }) }
  if (credential === 'session') {
    headers.cookie = browser.cookieHeader()
    if (method !== 'GET') headers['x-csrf-token'] = csrf!
  }
  const token = credential === 'API key' ? pro.key : credential === 'guest token' ? guestToken : undefined
  return call(app, method, url, { token, body, headers })
}

const operations = Object.entries(doc.paths as Record<string, Record<string, Json>>)
  .flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method: method.toUpperCase(), op })))
  .filter(({ op }) => (op.parameters ?? []).some((p: Json) => p.in === 'path'))

describe('a malformed path parameter is answered as the document says', () => {
  test('the document has operations with path parameters', () => {
    expect(operations.length, JSON.stringify(Object.keys(doc.paths))).toBeGreaterThan(20)
  })

  for (const { path, method, op } of operations) {
    test(`${method} ${path}`, async () => {
      const parameters: Json[] = op.parameters.filter((p: Json) => p.in === 'path')
      let errorBodies = 0
      for (const credential of credentialsFor(op)) {
        for (const parameter of parameters) {
          for (const [what, value] of malformed(parameter)) {
            let url = path
            for (const p of parameters) url = url.replace(`{${p.name}}`, p === parameter ? value : encodeURIComponent(wellFormed(p)))
            const res = await send(method, url, op, credential)
            const where = `${method} ${url.slice(0, 120)} (${parameter.name}: ${what}; ${credential}) → ${show(res)}; documented: ${Object.keys(op.responses).join(', ')}`
            expect(res.status, where).toBeLessThan(500)
            expect(Object.keys(op.responses), where).toContain(String(res.status))
            if (credential !== 'none') {
              expect(REFUSED.has(res.body?.error), `refused before the route (credential or limit): ${where}`).toBe(false)
              expect(res.headers.get('location') ?? '', `sent to sign in: ${where}`).not.toStartWith('/signin')
            }
            const documented = op.responses[String(res.status)]
            const types = Object.keys(documented.content ?? {})
            const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim()
            if (types.length === 0) {
              expect(res.text, `no content documented: ${where}`).toBe('')
              continue
            }
            expect(types, `content type ${type}: ${where}`).toContain(type)
            if (type === 'application/json' && res.status >= 400) {
              expect(documented.content['application/json'].schema?.$ref, where).toBe('#/components/schemas/ErrorResponse')
              expect(res.body?.success, where).toBe(false)
              expect(ERROR_STATUS[res.body?.error as keyof typeof ERROR_STATUS] as number, where).toBe(res.status)
              expect(typeof res.body?.hint, where).toBe('string')
              expect(Object.keys(documented.content['application/json'].examples ?? {}), `code listed: ${where}`).toContain(res.body.error)
              errorBodies++
            }
          }
        }
      }
      // A NUL in a path parameter is refused with an ErrorResponse on every route: the checks above ran.
      expect(errorBodies, `${method} ${path}: JSON error answers checked`).toBeGreaterThan(0)
    })
  }
})
