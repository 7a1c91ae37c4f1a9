// A typed client of the link service API: openapi-fetch over the types generated from the OpenAPI
// document (client/schema.d.ts, `npm run client:generate`). Paths, parameters, bodies and answers are
// checked by TypeScript; nothing here is written by hand per route.
//
//   const links = createLinkClient('http://localhost:3000', token)
//   const { data, error } = await links.POST('/api/v1/shorten', { body: { url: 'https://example.com' } })
import createClient, { type ClientOptions } from 'openapi-fetch'
import type { paths } from './schema.js'

export type { components, operations, paths } from './schema.js'

/**
 * `token` is a guest token (gt_…) or an API key (mk_…), sent as `Authorization: Bearer`; leave it out
 * for the public routes (POST /api/v1/guest/token, /health). `options` go to openapi-fetch (fetch,
 * more headers, …).
 */
export function createLinkClient(baseUrl: string, token?: string, options: Omit<ClientOptions, 'baseUrl' | 'headers'> & { headers?: Record<string, string> } = {}) {
  const headers = { ...options.headers, ...(token !== undefined && { authorization: `Bearer ${token}` }) }
  return createClient<paths>({ ...options, baseUrl, headers })
}

export type LinkClient = ReturnType<typeof createLinkClient>
