// The OpenAPI document and its UI: the only import of @elysiajs/swagger. UI at /swagger, JSON at
// /swagger/json. Routes marked `detail.hide` (internal ones) are left out.
//
// The plugin's output needs a pass before it is valid OpenAPI: it copies schema keywords ($id,
// examples) onto Response Objects, leaves the required `description` out, and offers every body as
// JSON, multipart and plain text although this API speaks only JSON. normalizeDocument fixes that.
import { swagger } from '@elysiajs/swagger'
import { Elysia } from 'elysia'
import { ERROR_STATUS } from './errors'
import { swaggerUi } from './swagger-ui'

/** Spec section 9: the machine-readable description is versioned 1.2.0. */
export const API_DOCUMENT_VERSION = '1.2.0'
export const DOCS_PATH = '/swagger'
export const DOCS_JSON_PATH = `${DOCS_PATH}/json`

export const API_TAGS = [
  { name: 'guest', description: 'Start without signing up' },
  { name: 'account', description: 'Plan, usage and features' },
  { name: 'links', description: 'Create, list, update and delete short links; check aliases' },
  { name: 'tags', description: 'Label links' },
  { name: 'domains', description: 'Custom domains, verified through DNS' },
  { name: 'billing', description: 'Checkout confirmations from the payment provider' },
  { name: 'system', description: 'Health' },
]

/** Spec section 7, plus the statuses this API adds (413, 500, 503). */
const STATUS_DESCRIPTION: Record<string, string> = {
  '200': 'Success',
  '400': 'Invalid input or malformed JSON',
  '401': 'Missing, invalid, expired, or wrong bearer token for the endpoint',
  '403': 'Needs a registered account or a higher plan',
  '404': 'Resource not found',
  '409': 'Conflict, such as an alias already taken',
  '413': 'Request body too large',
  '429': 'Rate limit, token quota or plan quota exceeded; honor the Retry-After header',
  '500': 'Unexpected error',
  '503': 'A backing service is unavailable',
}

type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

const JSON_TYPE = 'application/json'

/** Keeps only the JSON media type of a content map. */
function jsonOnly(content: unknown): Json | undefined {
  if (!isObject(content)) return undefined
  const json = content[JSON_TYPE]
  return json === undefined ? undefined : { [JSON_TYPE]: json }
}

function normalizeResponse(status: string, response: unknown, schemas: Json): Json {
  const source = isObject(response) ? response : {}
  const content = jsonOnly(source.content)
  const ref = isObject(content?.[JSON_TYPE]) ? ((content[JSON_TYPE] as Json).schema as Json | undefined)?.$ref : undefined
  const model = typeof ref === 'string' ? schemas[ref.split('/').pop()!] : undefined
  const out: Json = {
    description: STATUS_DESCRIPTION[status] ?? (isObject(model) && typeof model.description === 'string' ? model.description : 'Response'),
    ...(content && { content }),
  }
  if (status === '429') {
    out.headers = {
      'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
    }
  }
  return out
}

/** `{type: number, multipleOf: 1}` (errors.ts Int) is an integer; say so. Walks the whole schema tree. */
function integersAsInteger(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(integersAsInteger)
  if (!isObject(node)) return
  if (node.type === 'number' && node.multipleOf === 1) {
    node.type = 'integer'
    delete node.multipleOf
  }
  for (const value of Object.values(node)) integersAsInteger(value)
}

/**
 * Returns a valid OpenAPI 3.1 document built from the plugin's output. Works on a JSON copy: the
 * plugin's components are the live route schemas, which must not be touched.
 */
export function normalizeDocument(document: Json): Json {
  const doc = JSON.parse(JSON.stringify(document)) as Json
  const components = isObject(doc.components) ? doc.components : {}
  const schemas = isObject(components.schemas) ? components.schemas : {}
  // "#/components/schemas/X" as $id is a fragment, which JSON Schema 2020-12 forbids in $id.
  for (const schema of Object.values(schemas)) if (isObject(schema)) delete schema.$id
  integersAsInteger(schemas)
  for (const item of Object.values(isObject(doc.paths) ? doc.paths : {})) {
    if (!isObject(item)) continue
    for (const operation of Object.values(item)) {
      if (!isObject(operation)) continue
      if (Array.isArray(operation.parameters) && operation.parameters.length === 0) delete operation.parameters
      if (isObject(operation.requestBody)) {
        operation.requestBody.content = jsonOnly(operation.requestBody.content) ?? {}
      }
      const responses = isObject(operation.responses) ? operation.responses : {}
      operation.responses = Object.fromEntries(
        Object.entries(responses).map(([status, response]) => [status, normalizeResponse(status, response, schemas)]),
      )
    }
  }
  return doc
}

export function docs() {
  return (
    new Elysia({ name: 'plugins.docs' })
      // Local hook: applies to the swagger routes registered below, nothing else.
      .onAfterHandle(({ path, response }) => {
        if (path === DOCS_JSON_PATH && isObject(response)) return normalizeDocument(response)
      })
      // The page and its assets come from swagger-ui-dist (swagger-ui.ts), never from a CDN.
      .use(swaggerUi({ path: DOCS_PATH, specUrl: DOCS_JSON_PATH, title: 'Link service API' }))
      // The plugin only generates the document. It has no option to leave its CDN page out: it always
      // registers GET `path` (the page) and then GET `specPath` (the JSON). With both the same path the
      // second replaces the first inside the plugin (Elysia's add() replaces a route of the same method
      // and path), so only the JSON route reaches this app. swagger-ui.test.ts checks that.
      .use(
        swagger({
          path: DOCS_JSON_PATH,
          specPath: DOCS_JSON_PATH,
          provider: 'swagger-ui',
          exclude: [/^\/internal\//],
          documentation: {
            // 3.1: JSON Schema 2020-12, so `examples` arrays and `type: "null"` in the schemas are valid.
            openapi: '3.1.0',
            info: {
              title: 'Link service API',
              version: API_DOCUMENT_VERSION,
              description: `Short links, guest onboarding and account status. Every error has the ErrorResponse shape: a stable \`error\` code (${Object.keys(ERROR_STATUS).join(', ')}) and a \`hint\`. Every 429 carries Retry-After.`,
            },
            tags: API_TAGS,
            components: {
              securitySchemes: {
                bearerAuth: {
                  type: 'http',
                  scheme: 'bearer',
                  description: 'A guest token (gt_…) from POST /api/v1/guest/token, or an API key (mk_…)',
                },
              },
            },
          },
        }),
      )
  )
}
