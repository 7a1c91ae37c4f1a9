// Conversion attribution (docs/statistics.md#conversions): POST /api/analytics/link-conversion (JSON, errors reported) and
// GET /api/analytics/link-conversion/pixel (a 1×1 GIF that never reports an error). Both record
// through recordConversion (service.ts), so the rules and the atomic claim are the same.
import { Elysia } from 'elysia'
import { enforceIpLimit } from '../../plugins/client'
import { errorResponses, errors } from '../../plugins/errors'
import type { Auth } from '../../plugins/auth'
import type { Services } from '../../services'
import { conversionModels } from './model'
import { authenticateCaller, CONVERSION_IP_RATE, recordConversion, type ConversionInput } from './service'

/** The classic 42-byte transparent 1×1 GIF. */
/** The tracking pixel: a GET that always answers the same GIF. */
export const PIXEL_PATH = '/api/analytics/link-conversion/pixel'
/** 16 KiB: the URL length at which a pixel stops being parsed (up to the server's 64 KiB header limit it is still a GIF). */
const MAX_PIXEL_URL = 16 * 1024

export const PIXEL_GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64')
const PIXEL_HEADERS = {
  'content-type': 'image/gif',
  'cache-control': 'no-store, no-cache, must-revalidate, max-age=0',
  'content-length': String(PIXEL_GIF.length),
} as const

function pixelResponse(): Response {
  return new Response(new Uint8Array(PIXEL_GIF), { status: 200, headers: PIXEL_HEADERS })
}

const DECIMAL = /^\d{1,16}(\.\d{1,6})?$/

/** The pixel's query as a conversion report, or null when it cannot be one. Repeated parameters: the first wins. */
export function pixelInput(params: URLSearchParams): ConversionInput | null {
  const get = (name: string) => params.get(name) ?? undefined
  const clickId = get('mu_click')
  const clickSignature = get('mu_sig')
  const conversionType = get('conversionType')
  if (!clickId || !clickSignature || !conversionType) return null
  const rawValue = get('value')
  if (rawValue !== undefined && !DECIMAL.test(rawValue)) return null
  return {
    clickId,
    clickSignature,
    conversionType,
    eventId: get('eventId'),
    externalOrderId: get('externalOrderId'),
    value: rawValue === undefined ? undefined : Number(rawValue),
    currency: get('currency'),
  }
}

export function conversionsModule(services: Services, auth: Auth) {
  return new Elysia({ name: 'modules.conversions' })
    .use(errors)
    .model(conversionModels)
    .post(
      '/api/analytics/link-conversion',
      async ({ body, request, server, set }) => {
        const { caller, rateHeaders } = await authenticateCaller(auth, request)
        Object.assign(set.headers, rateHeaders)
        if (caller === null) {
          // Signature calls come from browsers: limited per client IP (API keys have their per-key limit).
          Object.assign(set.headers, await enforceIpLimit(services, request, server, 'conversion', CONVERSION_IP_RATE))
        }
        const result = await recordConversion(services, body as ConversionInput, caller)
        set.status = result.created ? 201 : 200
        set.headers['cache-control'] = 'no-store'
        return { success: true, duplicate: !result.created, conversionId: result.conversionId, clickId: result.clickId, meta: {} }
      },
      {
        body: 'ConversionRequest',
        response: {
          200: 'ConversionResponse',
          201: 'ConversionResponse',
          ...errorResponses(
            'OCCURRED_AT_INVALID',
            'CONVERSION_WINDOW_CLOSED',
            'UNAUTHORIZED',
            'CLICK_SIGNATURE_INVALID',
            'LINK_NOT_OWNED',
            'PRO_REQUIRED',
            'LINK_NOT_FOUND',
            'CONVERSION_CONFLICT',
            'RATE_LIMITED',
            'SERVICE_UNAVAILABLE',
          ),
        },
        detail: {
          operationId: 'reportConversion',
          tags: ['conversions'],
          summary: 'Report a conversion of a click',
          security: [{ bearerAuth: [] }],
          // Authenticated here rather than by the auth option (a key or a signature), with the same
          // 401, 429 and rate-limit headers an mk_ route documents.
          'x-auth': 'account',
          'x-scopes': ['conversions:write'],
          description: [
            "Authenticated EITHER by `Authorization: Bearer <mk_ key>` of the clicked link's account (server side) OR, with no Authorization header, by `clickSignature` = the `mu_sig` the redirect appended (browser side: never put an API key in a browser).",
            'Rules: value >= 0 needs currency; purchase, sale and refund need externalOrderId; eventId is required otherwise; occurredAt defaults to now, must be after the click, at most 5 minutes ahead and within 30 days of the click (so must the report itself). A refund is a positive value, subtracted from revenue.',
            '201 when recorded. 200 with duplicate true and the original conversionId (also under concurrent retries) for a repeat: for purchase, sale and refund, the same conversionType + externalOrderId with the same value and currency, whatever the eventId; for other types, the same eventId (or conversionType + externalOrderId) with the same payload. 409 CONVERSION_CONFLICT when an order comes again with a different value or currency, when a key comes again with a different payload, or when the eventId belongs to one conversion and the order to another.',
            "Errors: 400 VALIDATION_FAILED / OCCURRED_AT_INVALID / CONVERSION_WINDOW_CLOSED; 401 UNAUTHORIZED (no key and no signature, or a bad key) / CLICK_SIGNATURE_INVALID (tampered or another click's signature); 403 LINK_NOT_OWNED (key of another account) / PRO_REQUIRED; 404 LINK_NOT_FOUND; 429 RATE_LIMITED (per key, or per IP for signature calls).",
          ].join('\n\n'),
        } as Record<string, unknown>,
      },
    )
    .get(
      PIXEL_PATH,
      async ({ request, server }) => {
        try {
          // Longer than any real report (each field is at most 120 characters): not parsed, not recorded.
          const input = request.url.length <= MAX_PIXEL_URL ? pixelInput(new URL(request.url).searchParams) : null
          if (!input) services.counters.invalidPixels++
          else {
            await enforceIpLimit(services, request, server, 'conversion', CONVERSION_IP_RATE)
            // Never the Authorization header: the pixel is the browser path, signature only.
            await recordConversion(services, input, null)
          }
        } catch {
          // The pixel reports no errors (use the JSON endpoint for confirmation).
          services.counters.invalidPixels++
        }
        return pixelResponse()
      },
      {
        detail: {
          operationId: 'conversionPixel',
          tags: ['conversions'],
          summary: 'Report a conversion with a tracking pixel',
          security: [],
          description:
            'Query: mu_click and mu_sig (from the redirect), conversionType, eventId or externalOrderId, value, currency. Always answers 200 with the same transparent 1×1 GIF and Cache-Control: no-store, whatever the input and even when a backing store is down; a valid signed request is recorded exactly like POST /api/analytics/link-conversion. No errors are reported: use the JSON endpoint for delivery confirmation.',
          parameters: [
            { name: 'mu_click', in: 'query', required: true, schema: { type: 'string', maxLength: 64 } },
            { name: 'mu_sig', in: 'query', required: true, schema: { type: 'string', maxLength: 128 } },
            { name: 'conversionType', in: 'query', required: true, schema: { type: 'string', maxLength: 40 }, example: 'signup' },
            { name: 'eventId', in: 'query', required: false, schema: { type: 'string', maxLength: 120 } },
            { name: 'externalOrderId', in: 'query', required: false, schema: { type: 'string', maxLength: 120 } },
            { name: 'value', in: 'query', required: false, schema: { type: 'number', minimum: 0 } },
            { name: 'currency', in: 'query', required: false, schema: { type: 'string', pattern: '^[A-Za-z]{3}$' } },
          ],
          responses: {
            200: { description: 'Always: a transparent 1×1 GIF', content: { 'image/gif': { schema: { type: 'string', format: 'binary' } } } },
          },
        },
      },
    )
}
