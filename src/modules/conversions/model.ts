import { t } from 'elysia'
import { Meta } from '../../plugins/errors'

/** Field lengths of a conversion report (characters). */
export const CONVERSION_LIMITS = {
  clickId: 64,
  clickSignature: 128,
  conversionType: 40,
  externalOrderId: 120,
  eventId: 120,
  source: 80,
  metadata: 4000,
} as const
/** numeric(24, 6) holds 18 integer digits; a bound well inside it. */
export const MAX_VALUE = 1e15
const L = CONVERSION_LIMITS

const exampleClick = 'AQGZb0VzAAAT3xlr9t0kQp8rM2Yl0Vt8w4Q1X9k3pZ7v'
const exampleSig = 'k1.9S1rQmD0sJqJx0Nq3o7bY5o4vTt1xk2m4V9cZ8hQe1U'

export const ConversionRequest = t.Object(
  {
    clickId: t.String({ minLength: 1, maxLength: L.clickId, description: 'The mu_click parameter of the redirect', examples: [exampleClick] }),
    clickSignature: t.Optional(
      t.String({ maxLength: L.clickSignature, description: "The mu_sig parameter of the redirect; required unless authenticated with the API key of the link's account", examples: [exampleSig] }),
    ),
    conversionType: t.String({ minLength: 1, maxLength: L.conversionType, description: 'purchase, signup, lead, sale, refund, …', examples: ['purchase'] }),
    value: t.Optional(t.Number({ minimum: 0, maximum: MAX_VALUE, description: 'Non-negative; needs currency. A refund is a positive value subtracted from revenue.', examples: [49.9] })),
    currency: t.Optional(t.String({ pattern: '^[A-Za-z]{3}$', description: 'ISO 4217; required with value', examples: ['EUR'] })),
    externalOrderId: t.Optional(
      t.String({ minLength: 1, maxLength: L.externalOrderId, description: 'Required for purchase, sale and refund; deduplication key per conversion type', examples: ['order-1042'] }),
    ),
    eventId: t.Optional(t.String({ minLength: 1, maxLength: L.eventId, description: 'Stable idempotency key; required when externalOrderId is absent', examples: ['evt_7f3a'] })),
    occurredAt: t.Optional(
      t.String({ maxLength: 40, description: 'ISO 8601 date-time; default: receipt time. After the click, at most 5 minutes ahead, within 30 days of the click.', examples: ['2026-11-21T12:00:00Z'] }),
    ),
    source: t.Optional(t.String({ maxLength: L.source, examples: ['checkout'] })),
    metadata: t.Optional(t.Unknown({ description: `Any JSON value, at most ${L.metadata} serialized characters` })),
  },
  {
    description: 'Conversion report',
    examples: [
      { clickId: exampleClick, clickSignature: exampleSig, conversionType: 'purchase', value: 49.9, currency: 'EUR', externalOrderId: 'order-1042' },
      { clickId: exampleClick, conversionType: 'signup', eventId: 'evt_7f3a', source: 'server', metadata: { plan: 'trial' } },
    ],
  },
)

export const ConversionResponse = t.Object(
  {
    success: t.Boolean(),
    duplicate: t.Boolean({ description: 'true when this report was already recorded (the original conversionId is returned)' }),
    conversionId: t.String({ examples: ['cv_3q2x9Vb7kLmN0pQrStUvWx'] }),
    clickId: t.String(),
    meta: t.Optional(Meta),
  },
  {
    examples: [
      { success: true, duplicate: false, conversionId: 'cv_3q2x9Vb7kLmN0pQrStUvWx', clickId: exampleClick, meta: {} },
      { success: true, duplicate: true, conversionId: 'cv_3q2x9Vb7kLmN0pQrStUvWx', clickId: exampleClick, meta: {} },
    ],
  },
)

export const conversionModels = { ConversionRequest, ConversionResponse }
