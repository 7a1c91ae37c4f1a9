// The service's OpenAPI document as a test reads it: fetched once from a test app's /swagger/json, a
// schema by its $ref, and the error codes documented as examples of a response status.
import { call, show, testApi } from './api'

/** Read by path; its shape is pinned by the tests that read it. */
export type OpenApiDoc = any

/** GET /swagger/json of a fresh test app. */
export async function fetchOpenApiDoc(): Promise<OpenApiDoc> {
  const res = await call((await testApi()).app, 'GET', '/swagger/json')
  if (res.status !== 200) throw new Error(show(res))
  return res.body
}

/** The schema a `#/components/schemas/Name` reference names. */
export const schemaOf = (doc: OpenApiDoc, ref: string) => doc.components.schemas[ref.split('/').pop()!]

/** The error codes an operation documents as examples of `status`. */
export const codesAt = (op: { responses: Record<string, { content?: Record<string, { examples?: object }> }> }, status: string) =>
  Object.keys(op.responses[status]?.content?.['application/json']?.examples ?? {})
