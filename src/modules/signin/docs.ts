// How the HTML pages of sign-in (and consent) appear in the API document: pages for people, listed so
// the document names every route, answered as text/html or a redirect.

const DESCRIPTIONS: Record<number, string> = {
  200: 'An HTML page',
  302: 'To the identity provider',
  303: "To the next page (a path on this site, or the OAuth client's redirect URI after consent)",
  400: 'An HTML page saying what is wrong with the request',
  403: "An HTML page: the form's CSRF token is missing or wrong, or the provider vouches for no verified e-mail",
  404: 'An HTML page: not found (or this sign-in method is not configured)',
  410: 'An HTML page: the consent request is no longer pending',
  429: 'An HTML page; honor the Retry-After header',
  502: 'An HTML page: the identity provider did not answer usefully',
}

function responses(statuses: readonly number[]) {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      status === 302 || status === 303
        ? { description: DESCRIPTIONS[status], headers: { Location: { schema: { type: 'string' } } } }
        : { description: DESCRIPTIONS[status] ?? 'An HTML page', content: { 'text/html': { schema: { type: 'string' } } } },
    ]),
  )
}

interface Param {
  name: string
  description: string
  required?: boolean
}

/** A GET page: its query parameters, its statuses. */
export function htmlDoc(operationId: string, summary: string, description: string, statuses: readonly number[], query: readonly Param[] = [], tag = 'sign-in') {
  return {
    detail: {
      operationId,
      tags: [tag],
      summary,
      description,
      security: [],
      ...(query.length > 0 && { parameters: query.map((p) => ({ name: p.name, in: 'query', required: p.required ?? false, description: p.description, schema: { type: 'string' } })) }),
      responses: responses(statuses),
    } as Record<string, unknown>,
  }
}

/** A form POST: its fields (all strings), its statuses. */
export function formDoc(operationId: string, summary: string, description: string, statuses: readonly number[], fields: readonly string[], tag = 'sign-in') {
  return {
    detail: {
      operationId,
      tags: [tag],
      summary,
      description,
      security: [],
      requestBody: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': {
            schema: { type: 'object', properties: Object.fromEntries(fields.map((name) => [name, { type: 'string' }])) },
          },
        },
      },
      responses: responses(statuses),
    } as Record<string, unknown>,
  }
}

export const NEXT_PARAM: Param = { name: 'next', description: 'A path on this site to go to once signed in (default /signin/done); anything else, once normalised, leads to /app' }
