// The pass that turns @elysiajs/swagger's output into a valid OpenAPI 3.1 document and adds what the
// plugin cannot know. The plugin copies schema keywords ($id, examples) onto Response Objects, leaves
// the required `description` out, gives parameters `examples` as arrays (the standard wants a map),
// and offers every body as JSON, multipart and plain text although this API speaks JSON. Routes mark
// what they share with vendor keywords that this pass turns into documentation and then removes:
//   x-auth: AuthMode (plugins/auth.ts: the route option's name) → 401 and 429 examples, X-RateLimit-* headers
//   x-scopes: [scope]               (plugins/auth.ts)        → the oauth2 security requirement, 403 INSUFFICIENT_SCOPE
//   x-operation: 'links.delete'     (plugins/auth.ts)        → the 202 an Agent's held call answers
//   x-idempotent: true              (plugins/idempotency.ts) → the Idempotency-Key header and its errors
//   x-error-codes on an error schema (errorResponses)        → one example per code at that status
//   x-documented-as: 'Model' on a schema (DOCUMENTED_AS)     → a $ref to that model: a body the service checks
//                                                               itself, documented by a schema it does not validate with
// Every path parameter can be refused with 400 VALIDATION_FAILED: plugins/body.ts refuses a control
// character in any of them before the route runs. A page that answers an error status with HTML keeps
// its page there beside the ErrorResponse a plugin answers at the same status.
import type { AuthMode } from './auth'
import { DEFAULT_HINT, ERROR_CODES_KEYWORD, ERROR_STATUS, type ErrorCode } from './errors'

type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

const JSON_TYPE = 'application/json'
const ERROR_REF = '#/components/schemas/ErrorResponse'

/** The statuses of the API's contract, plus the ones this API adds (413, 500, 503). */
const STATUS_DESCRIPTION: Record<string, string> = {
  '200': 'Success',
  '201': 'Created',
  '302': 'Redirect',
  '400': 'Invalid input or malformed JSON',
  '401': 'Missing, invalid, expired, or wrong bearer token for the endpoint',
  '403': 'Needs a registered account or a higher plan',
  '404': 'Resource not found',
  '409': 'Conflict, such as an alias already taken',
  '413': 'Request body too large',
  '429': 'Rate limit, token quota or plan quota exceeded; honor the Retry-After header',
  '500': 'Unexpected error',
  '503': 'A backing service is unavailable; honor the Retry-After header when present',
}

const RATE_HEADERS: Json = {
  'X-RateLimit-Limit': { description: 'Requests allowed in the current window (per API key a minute; per guest token in all)', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'When the window resets, in unix seconds', schema: { type: 'integer' } },
}
const RETRY_AFTER: Json = { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } } }

// No `example`: Swagger UI would fill it in, and every Execute would send the same key (the second,
// with another body, a 400). Its init script (swagger-ui.ts) sends a fresh one instead.
const IDEMPOTENCY_KEY_PARAMETER: Json = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe: the first response to this key (per credential, kept 24 h) is replayed for the same request; ' +
    'the same key with another request is 400 IDEMPOTENCY_KEY_REUSED; while the first is running, 409 IDEMPOTENCY_IN_PROGRESS. ' +
    'A UUID per request is a good key, e.g. `3f1b6a52-8c0e-4d7e-9d0b-2a6f5c1e9b47`. ' +
    "Left empty, Swagger UI's Try it out sends a new one with each new request, and the same one when Execute repeats the last request unchanged (a retry: the answer is replayed).",
  schema: { type: 'string', minLength: 1, maxLength: 255 },
}

/** Codes every route of a kind answers with, by what the route declares (see the file comment). */
const AUTH_CODES: Record<AuthMode, ErrorCode[]> = {
  guest: ['UNAUTHORIZED', 'GUEST_REQUEST_LIMIT'],
  account: ['UNAUTHORIZED', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE'],
  guestOrAccount: ['UNAUTHORIZED', 'GUEST_REQUEST_LIMIT', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE'],
  human: ['UNAUTHORIZED', 'HUMAN_ONLY', 'FULL_ACCESS_REQUIRED', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE'],
}
const BODY_CODES: ErrorCode[] = ['VALIDATION_FAILED', 'MALFORMED_JSON', 'UNSUPPORTED_CONTENT_TYPE', 'PAYLOAD_TOO_LARGE']
const IDEMPOTENCY_CODES: ErrorCode[] = ['IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_IN_PROGRESS', 'SERVICE_UNAVAILABLE']
const PATH_CODES: ErrorCode[] = ['VALIDATION_FAILED']

/**
 * The plugin offers every body as JSON, multipart and text: keep JSON alone there. A map without the
 * plugin's multipart (a GIF, a form, an HTML page beside JSON) was written by the route and stays.
 */
function jsonOnly(content: unknown): Json | undefined {
  if (!isObject(content)) return undefined
  const json = content[JSON_TYPE]
  return json === undefined || !('multipart/form-data' in content) ? content : { [JSON_TYPE]: json }
}

function errorExamples(codes: ErrorCode[]): Json {
  return Object.fromEntries(codes.map((code) => [code, { summary: code, value: { success: false, error: code, hint: DEFAULT_HINT[code], meta: {} } }]))
}

/** An ErrorResponse: a $ref to the shared schema and one example per code. */
function errorResponse(status: string, codes: ErrorCode[], headers?: Json): Json {
  return {
    description: STATUS_DESCRIPTION[status] ?? 'Error',
    ...(headers && { headers }),
    content: { [JSON_TYPE]: { schema: { $ref: ERROR_REF }, examples: errorExamples(codes) } },
  }
}

/** A page's own answer at an error status (its HTML) with the ErrorResponse beside it, one content map. */
function besidePage(page: Json, error: Json, codes: ErrorCode[]): Json {
  const content = { ...(error.content as Json), ...(isObject(page.content) ? page.content : {}) }
  const headers = { ...(isObject(error.headers) ? error.headers : {}), ...(isObject(page.headers) ? page.headers : {}) }
  const description = `${String(page.description ?? error.description).replace(/[.\s]*$/, '')}; an ErrorResponse (JSON) for ${codes.join(', ')}`
  return { description, ...(Object.keys(headers).length > 0 && { headers }), content }
}

/** The plugin lifts an inline schema's keywords onto the Response Object; a $ref keeps them in the schema. */
function codesOf(response: Json): ErrorCode[] | undefined {
  const schema = (jsonOnly(response.content)?.[JSON_TYPE] as Json | undefined)?.schema
  const codes = response[ERROR_CODES_KEYWORD] ?? (isObject(schema) ? schema[ERROR_CODES_KEYWORD] : undefined)
  if (Array.isArray(codes)) return codes as ErrorCode[]
  return isObject(schema) && schema.$ref === ERROR_REF ? [] : undefined
}

/** A success (or plugin-made) Response Object: a description, JSON only, no schema keywords. */
function normalizeSuccess(status: string, response: Json, schemas: Json): Json {
  const content = jsonOnly(response.content)
  const ref = isObject(content?.[JSON_TYPE]) ? ((content[JSON_TYPE] as Json).schema as Json | undefined)?.$ref : undefined
  const model = typeof ref === 'string' ? schemas[ref.split('/').pop()!] : undefined
  const description =
    typeof response.description === 'string' ? response.description : (STATUS_DESCRIPTION[status] ?? (isObject(model) && typeof model.description === 'string' ? model.description : 'Response'))
  return { description, ...(isObject(response.headers) && { headers: response.headers }), ...(content && { content }) }
}

/**
 * An integer query parameter's schema is an anyOf whose string branch (the coercion Elysia adds) carries
 * `default: 0` of its own. Swagger UI fills that in as if it were the parameter's default, so an optional
 * `tag` (at least 1) was sent as `tag=0` and refused. Defaults inside the branches go unless they are the
 * parameter's own.
 */
function withoutStrayDefaults(parameter: Json): Json {
  const schema = parameter.schema
  if (!isObject(schema) || !Array.isArray(schema.anyOf)) return parameter
  const anyOf = schema.anyOf.map((branch) => {
    if (!isObject(branch) || !('default' in branch) || branch.default === schema.default) return branch
    const { default: _stray, ...kept } = branch
    return kept
  })
  return { ...parameter, schema: { ...schema, anyOf } }
}

/**
 * Parameter `examples` given as an array (the plugin copies the schema's). Swagger UI fills a parameter
 * in from the parameter's `example` or `examples` (and the schema's `example` or `default`), and Try it
 * out sends what is filled in. A required parameter needs a value anyway: its example is filled in
 * (`example`, or a map). An optional one left out means the server's default, and an example there
 * would change the request (`dry_run=true`, a `domain` this server may not serve): its examples go to
 * the schema's `examples` (JSON Schema, never filled in) and to the description.
 */
function normalizeParameter(given: unknown): unknown {
  if (!isObject(given)) return given
  const parameter = withoutStrayDefaults(given)
  const { examples, example, ...rest } = parameter
  if (rest.required !== true) {
    // Routes that write their parameters by hand give `example`; the plugin gives `examples` arrays.
    const values = Array.isArray(examples) ? examples : isObject(examples) ? Object.values(examples).map((e) => (isObject(e) ? e.value : e)) : example !== undefined ? [example] : []
    if (values.length === 0) return parameter
    const schema = isObject(rest.schema) ? rest.schema : {}
    const said = `Example: ${values.map((value) => `\`${String(value)}\``).join(', ')} (not filled in: left empty, the default applies).`
    const description = typeof rest.description === 'string' ? `${rest.description.replace(/[.\s]*$/, '.')} ${said}` : said
    return { ...rest, description, schema: { ...schema, examples: schema.examples ?? values } }
  }
  if (!Array.isArray(examples)) return parameter
  if (examples.length === 1) return { ...rest, example: examples[0] }
  return { ...rest, examples: Object.fromEntries(examples.map((value, i) => [`example${i + 1}`, { value }])) }
}

function normalizeOperation(operation: Json, schemas: Json): void {
  const auth = typeof operation['x-auth'] === 'string' ? operation['x-auth'] : undefined
  const idempotent = operation['x-idempotent'] === true
  // An OAuth endpoint answers RFC 6749 error bodies: its declared responses are all there is.
  const oauth = operation['x-oauth'] === true
  // x-scopes stays in the document (a valid extension, for generators), and is said in words too.
  const scopes = Array.isArray(operation['x-scopes']) ? (operation['x-scopes'] as string[]) : []
  if (scopes.length > 0) {
    const said = `OAuth scope of an at_ token or a restricted API key: ${scopes.map((s) => `\`${s}\``).join(', ')}.`
    operation.description = typeof operation.description === 'string' ? `${operation.description}\n\n${said}` : said
  }
  // An operation an Agent's policy may hold for a human (plugins/auth.ts hold): the 202 it answers then.
  const held = typeof operation['x-operation'] === 'string' ? operation['x-operation'] : undefined
  if (held) {
    const said = `Policy operation \`${held}\`: an Agent token whose policy names it gets 202 with an approval instead (the call runs once a human approves it)${operation['x-dry-run'] === true ? '; `?dry_run=true` previews without holding' : '; this operation has no dry run (`dry_run` is 400)'}.`
    operation.description = typeof operation.description === 'string' ? `${operation.description}\n\n${said}` : said
  }
  for (const key of ['x-auth', 'x-idempotent', 'x-oauth', 'x-operation']) delete operation[key]

  const parameters = (Array.isArray(operation.parameters) ? operation.parameters : []).map(normalizeParameter)
  if (idempotent) parameters.push(IDEMPOTENCY_KEY_PARAMETER)
  if (parameters.length > 0) operation.parameters = parameters
  else delete operation.parameters

  if (isObject(operation.requestBody)) operation.requestBody.content = jsonOnly(operation.requestBody.content) ?? {}
  const jsonBody = isObject(operation.requestBody) && isObject(operation.requestBody.content) && JSON_TYPE in operation.requestBody.content
  // Public operations say so: without `security: []` they would inherit nothing, which linters flag.
  if (!Array.isArray(operation.security)) operation.security = []

  // Error codes by status: what the route declared, then what its kind implies.
  const codes = new Map<string, Set<ErrorCode>>()
  const add = (list: ErrorCode[]) => {
    for (const code of list) {
      const status = String(ERROR_STATUS[code])
      codes.set(status, (codes.get(status) ?? new Set()).add(code))
    }
  }
  const responses = isObject(operation.responses) ? operation.responses : {}
  const out: Json = {}
  /** What a declared error response offers besides JSON (a page's HTML), by status. */
  const pages: Json = {}
  for (const [status, response] of Object.entries(responses)) {
    if (!isObject(response)) continue
    const declared = codesOf(response)
    if (!declared) {
      out[status] = normalizeSuccess(status, response, schemas)
      continue
    }
    add(declared)
    const other = Object.entries(jsonOnly(response.content) ?? {}).filter(([type]) => type !== JSON_TYPE)
    if (other.length > 0) pages[status] = { description: response.description, content: Object.fromEntries(other) }
  }
  if (held) {
    out['202'] = {
      description: 'Held for a human decision (an Agent token whose policy names this operation); Location is the approval',
      headers: { Location: { description: 'The approval: GET it to follow the decision', schema: { type: 'string' } } },
      // The model of src/modules/approvals (registered by that module).
      content: { [JSON_TYPE]: { schema: { $ref: '#/components/schemas/HeldResponse' } } },
    }
  }
  if (auth) add(AUTH_CODES[auth as AuthMode] ?? [])
  if (parameters.some((parameter) => isObject(parameter) && parameter.in === 'path')) add(PATH_CODES)
  if (jsonBody && !oauth) add(BODY_CODES)
  if (idempotent) add(IDEMPOTENCY_CODES)
  if (scopes.length > 0) {
    add(['INSUFFICIENT_SCOPE'])
    operation.security = [...(operation.security as Json[]), { oauth2: scopes }]
  }

  const rateHeaders = auth ? RATE_HEADERS : undefined
  for (const status of [...codes.keys()].sort()) {
    const headers = status === '429' || status === '503' ? { ...rateHeaders, ...RETRY_AFTER } : rateHeaders
    const list = [...codes.get(status)!]
    const error = errorResponse(status, list, headers)
    const page = out[status] ?? pages[status]
    out[status] = isObject(page) ? besidePage(page, error, list) : error
  }
  if (rateHeaders) {
    for (const [status, response] of Object.entries(out)) {
      if (Number(status) < 400 && isObject(response)) response.headers = { ...rateHeaders, ...(isObject(response.headers) ? response.headers : {}) }
    }
  }
  operation.responses = Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)))
}

/** The vendor keyword of a schema the document shows as a model it is not validated with. */
export const DOCUMENTED_AS = 'x-documented-as'

/** `{x-documented-as: 'M'}` becomes `{$ref: M}` (its description kept). Walks the whole tree. */
function documentedAsRefs(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) documentedAsRefs(item)
    return
  }
  if (!isObject(node)) return
  const model = node[DOCUMENTED_AS]
  if (typeof model === 'string') {
    for (const key of Object.keys(node)) if (key !== 'description') delete node[key]
    node.$ref = `#/components/schemas/${model}`
    return
  }
  for (const value of Object.values(node)) documentedAsRefs(value)
}

/** `{type: number, multipleOf: 1}` (errors.ts Int) is an integer; say so. Walks the whole schema tree. */
function integersAsInteger(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) integersAsInteger(item)
    return
  }
  if (!isObject(node)) return
  if (node.type === 'number' && node.multipleOf === 1) {
    node.type = 'integer'
    delete node.multipleOf
  }
  for (const value of Object.values(node)) integersAsInteger(value)
}

/** Removes component schemas no operation reaches (those of routes left out of the document). */
function dropUnreferenced(schemas: Json, paths: unknown): void {
  const refsIn = (node: unknown): string[] => [...JSON.stringify(node).matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!)
  const reached = new Set<string>()
  const queue = refsIn(paths)
  while (queue.length > 0) {
    const name = queue.pop()!
    if (reached.has(name)) continue
    reached.add(name)
    queue.push(...refsIn(schemas[name]))
  }
  for (const name of Object.keys(schemas)) if (!reached.has(name)) delete schemas[name]
}

export interface DocumentOptions {
  /** The `servers` entries; default one relative server, the origin the document was loaded from. */
  servers?: { url: string; description?: string }[]
}

/**
 * Returns a valid OpenAPI 3.1 document built from the plugin's output. Works on a JSON copy: the
 * plugin's components are the live route schemas, which must not be touched.
 */
export function normalizeDocument(document: Json, options: DocumentOptions = {}): Json {
  const doc = JSON.parse(JSON.stringify(document)) as Json
  doc.servers = options.servers ?? [{ url: '/', description: 'The server this document was loaded from' }]
  const components = isObject(doc.components) ? doc.components : {}
  const schemas = isObject(components.schemas) ? components.schemas : {}
  // "#/components/schemas/X" as $id is a fragment, which JSON Schema 2020-12 forbids in $id.
  for (const schema of Object.values(schemas)) if (isObject(schema)) delete schema.$id
  integersAsInteger(schemas)
  documentedAsRefs(schemas)
  documentedAsRefs(doc.paths)
  const used = new Set<string>()
  for (const item of Object.values(isObject(doc.paths) ? doc.paths : {})) {
    if (!isObject(item)) continue
    for (const operation of Object.values(item)) {
      if (!isObject(operation)) continue
      normalizeOperation(operation, schemas)
      for (const tag of Array.isArray(operation.tags) ? operation.tags : []) used.add(String(tag))
    }
  }
  dropUnreferenced(schemas, doc.paths)
  // Only the tags operations use, in their declared order.
  if (Array.isArray(doc.tags)) doc.tags = doc.tags.filter((tag) => isObject(tag) && used.has(String(tag.name)))
  integersAsInteger(doc.paths)
  return doc
}
