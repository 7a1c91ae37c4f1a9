import { type ClientOptions } from 'openapi-fetch';
import type { paths } from './schema.js';
export type { components, operations, paths } from './schema.js';
/**
 * `token` is a guest token (gt_…) or an API key (mk_…), sent as `Authorization: Bearer`; leave it out
 * for the public routes (POST /api/v1/guest/token, /health). `options` go to openapi-fetch (fetch,
 * more headers, …).
 */
export declare function createLinkClient(baseUrl: string, token?: string, options?: Omit<ClientOptions, 'baseUrl' | 'headers'> & {
    headers?: Record<string, string>;
}): import("openapi-fetch").Client<paths, `${string}/${string}`>;
export type LinkClient = ReturnType<typeof createLinkClient>;
