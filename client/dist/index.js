// A typed client of the link service API: openapi-fetch over the types generated from the OpenAPI
// document (client/schema.d.ts, `npm run client:generate`). Paths, parameters, bodies and answers are
// checked by TypeScript; nothing here is written by hand per route.
//
//   const links = createLinkClient('http://localhost:3000', token)
//   const { data, error } = await links.POST('/api/v1/shorten', { body: { url: 'https://example.com' } })
import createClient from 'openapi-fetch';
/**
 * `token` is a guest token (gt_…) or an API key (mk_…), sent as `Authorization: Bearer`; leave it out
 * for the public routes (POST /api/v1/guest/token, /health). `options` go to openapi-fetch (fetch,
 * more headers, …).
 */
export function createLinkClient(baseUrl, token, options = {}) {
    const headers = { ...options.headers, ...(token !== undefined && { authorization: `Bearer ${token}` }) };
    return createClient({ ...options, baseUrl, headers });
}
