// The one body parser: JSON (and, on the few paths that take HTML forms or RFC 6749 requests,
// application/x-www-form-urlencoded), bounded in size, every failure a 400/413 ApiError instead of whatever
// the default parsers would do with a form, a huge upload or invalid UTF-8. Control characters in any
// string of the body, the query or the path are a 400 naming the field.
// Bun.serve's own maxRequestBodySize (a server option, default 128 MiB) stays the outer bound; this one
// is what a client of the API meets, with a JSON answer.
import { Elysia } from 'elysia'
import { readCapped } from '../../core/read-capped'
import { ApiError } from './errors'

/** A bulk request of 100 links at the longest field lengths is about 250 KiB; twice that is plenty. */
export const MAX_BODY_BYTES = 512 * 1024

const TOO_LARGE_HINT = `The request body must be at most ${MAX_BODY_BYTES} bytes.`

/** application/json, application/*+json; parameters (charset) ignored. */
export function isJsonContentType(contentType: string): boolean {
  const type = contentType.split(';')[0]!.trim().toLowerCase()
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'))
}

/** Reads at most `max` bytes of the body; more than that is refused without reading the rest. */
export async function readBodyCapped(request: Request, max: number): Promise<Uint8Array> {
  const bytes = await readCapped(request, max)
  if (bytes === null) throw new ApiError('PAYLOAD_TOO_LARGE', TOO_LARGE_HINT)
  return bytes
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * No body of this API nests more than a few levels (conversion metadata is the deepest). Schema
 * validation recurses per level and overflows the stack a few thousand levels down, so depth is bounded
 * before validation.
 */
export const MAX_DEPTH = 32

/**
 * C0 control characters but tab, newline and carriage return, and DEL. No field of this API has a use
 * for them; NUL is refused by Postgres text columns (a 500 it would otherwise be), the others garble
 * logs and pages.
 */
const CONTROL_CHARS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/

/** The path of the first string (or key) with a control character in a parsed value, or null. */
export function controlCharacterAt(value: unknown, root: string): string | null {
  const stack: [unknown, string][] = [[value, root]]
  while (stack.length > 0) {
    const [node, path] = stack.pop()!
    if (typeof node === 'string') {
      if (CONTROL_CHARS.test(node)) return path
    } else if (node !== null && typeof node === 'object') {
      for (const [key, child] of Object.entries(node)) {
        if (CONTROL_CHARS.test(key)) return path
        stack.push([child, Array.isArray(node) ? `${path}[${key}]` : `${path}.${key}`])
      }
    }
  }
  return null
}

function refuseControlCharacters(value: unknown, root: string): void {
  const at = controlCharacterAt(value, root)
  if (at)
    throw new ApiError('VALIDATION_FAILED', `${at.slice(0, 200)}: must not contain control characters.`, {
      data: { errors: [{ field: at.slice(0, 200), message: 'must not contain control characters' }] },
    })
}

/** Depth of a parsed JSON value, walked iteratively so the check itself cannot overflow. */
export function nestingDepth(value: unknown): number {
  let deepest = 0
  const stack: [unknown, number][] = [[value, 0]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!
    if (node === null || typeof node !== 'object') continue
    if (depth + 1 > deepest) deepest = depth + 1
    if (deepest > MAX_DEPTH) return deepest
    for (const child of Object.values(node)) stack.push([child, depth + 1])
  }
  return deepest
}

/**
 * Parses a JSON object body (or array, where `arrays`: a JSON-RPC batch); an empty body (or `null`) is
 * `null`, which the route's schema refuses.
 */
export async function parseJsonBody(request: Request, contentType: string, arrays = false): Promise<unknown> {
  const bytes = await readBodyCapped(request, MAX_BODY_BYTES)
  if (bytes.byteLength === 0) return null
  if (contentType !== '' && !isJsonContentType(contentType)) {
    throw new ApiError('UNSUPPORTED_CONTENT_TYPE', `Content-Type ${contentType.slice(0, 100)} is not accepted; send application/json.`)
  }
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    throw new ApiError('MALFORMED_JSON', 'The request body is not valid UTF-8.')
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    // Also catches a RangeError from absurdly deep nesting.
    throw new ApiError('MALFORMED_JSON', 'The request body is not valid JSON.')
  }
  if (nestingDepth(value) > MAX_DEPTH) {
    throw new ApiError('VALIDATION_FAILED', `body: nested deeper than ${MAX_DEPTH} levels.`)
  }
  // Every request body of this API is an object. Said here because Elysia's schema step would turn an
  // array or a string into {} and report a missing field instead.
  if (value !== null && (typeof value !== 'object' || (Array.isArray(value) && !arrays))) {
    throw new ApiError('VALIDATION_FAILED', `body: must be a JSON object, not ${Array.isArray(value) ? 'an array' : `a ${typeof value}`}.`)
  }
  refuseControlCharacters(value, 'body')
  return value
}

/** A form body: a field sent once is a string, a repeated one (checkboxes) an array of them. */
export type FormBody = Record<string, string | string[]>

const isFormContentType = (contentType: string) => contentType.split(';')[0]!.trim().toLowerCase() === 'application/x-www-form-urlencoded'

/**
 * Parses an application/x-www-form-urlencoded body (a JSON body is parsed as JSON: a client may send
 * either to a form path). An empty body is `{}`.
 */
export async function parseFormBody(request: Request, contentType: string): Promise<unknown> {
  if (isJsonContentType(contentType)) return parseJsonBody(request, contentType)
  const bytes = await readBodyCapped(request, MAX_BODY_BYTES)
  if (bytes.byteLength !== 0 && contentType !== '' && !isFormContentType(contentType)) {
    throw new ApiError('UNSUPPORTED_CONTENT_TYPE', `Content-Type ${contentType.slice(0, 100)} is not accepted; send application/x-www-form-urlencoded.`)
  }
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    throw new ApiError('VALIDATION_FAILED', 'body: not valid UTF-8.')
  }
  const form: FormBody = Object.create(null)
  for (const [key, value] of new URLSearchParams(text)) {
    const seen = form[key]
    form[key] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value]
  }
  refuseControlCharacters(form, 'body')
  return { ...form }
}

export interface BodyOptions {
  /** Routes (as declared, e.g. `/pixel/:id`) that take any query: a tracking pixel answers a GIF, never an error. */
  lenientQueryRoutes?: readonly string[]
  /** Paths whose POST takes a form (RFC 6749 token/revoke requests, the HTML pages' forms); `/x/*` is every path under /x/. */
  formPaths?: readonly string[]
  /** Paths whose JSON body may also be an array (/mcp: a JSON-RPC batch). */
  arrayPaths?: readonly string[]
}

export function bodyPlugin({ lenientQueryRoutes = [], formPaths = [], arrayPaths = [] }: BodyOptions = {}) {
  const arrays = new Set(arrayPaths)
  const lenient = new Set(lenientQueryRoutes)
  const forms = new Set(formPaths.filter((p) => !p.endsWith('/*')))
  const formPrefixes = formPaths.filter((p) => p.endsWith('/*')).map((p) => p.slice(0, -1))
  const isForm = (path: string) => forms.has(path) || formPrefixes.some((prefix) => path.startsWith(prefix))
  const pathOf = (url: string) => {
    const start = url.indexOf('/', url.indexOf('//') + 2)
    const end = url.indexOf('?', start)
    return end === -1 ? url.slice(start) : url.slice(start, end)
  }
  return (
    new Elysia({ name: 'plugins.body', seed: [...lenient, '|', ...forms, '|', ...arrays] })
      // Refuse an announced oversize body before reading a byte of it (onRequest hooks are always global).
      .onRequest(({ request }) => {
        const length = request.headers.get('content-length')
        if (length !== null && /^\d+$/.test(length) && Number(length) > MAX_BODY_BYTES) {
          throw new ApiError('PAYLOAD_TOO_LARGE', TOO_LARGE_HINT)
        }
      })
      .onParse({ as: 'global' }, ({ request, contentType }) => {
        const path = pathOf(request.url)
        return formPaths.length > 0 && isForm(path) ? parseFormBody(request, contentType ?? '') : parseJsonBody(request, contentType ?? '', arrays.has(path))
      })
      // Query strings and path segments too (decoded: %00 is a NUL), before any schema sees them.
      .onTransform({ as: 'global' }, ({ query, params, route }) => {
        if (lenient.has(route)) return
        refuseControlCharacters(query, 'query')
        refuseControlCharacters(params, 'params')
      })
  )
}

export const body = bodyPlugin()
