// The header that carries INTERNAL_SECRET on the redirector's calls to the API's /internal endpoints:
// written by the redirector's client (redirect/internal-api.ts), checked by the API (src/modules/internal).
export const INTERNAL_SECRET_HEADER = 'x-internal-secret'
