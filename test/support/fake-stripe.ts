// Stripe for tests: a fake of the part of Stripe's API this service uses, on a free loopback port (we cannot
// reach Stripe from here). It speaks the same wire format: form-encoded requests with the secret key
// as bearer, JSON answers and errors shaped like Stripe's, Idempotency-Key honoured, and webhook events
// signed the way Stripe signs them.
import { stripeSignature } from '../../src/modules/billing/stripe'

export interface FakeSession {
  id: string
  object: 'checkout.session'
  mode: string
  status: 'open' | 'complete' | 'expired'
  payment_status: 'unpaid' | 'paid'
  url: string | null
  client_reference_id: string | null
  customer_email: string | null
  success_url: string
  cancel_url: string | null
  metadata: Record<string, string>
  line_items: { price: string; quantity: number }[]
  expires_at: number
}

export interface FakeStripe {
  url: string
  sessions: Map<string, FakeSession>
  /** Every request received: method, path, form fields, headers. */
  requests: { method: string; path: string; form: Record<string, string>; headers: Headers }[]
  /** Answer the next `count` API calls with this HTTP status (Stripe error shape). */
  failNext(count: number, status?: number): void
  /** Pays the session (as the buyer would) and returns the signed checkout.session.completed delivery. */
  complete(sessionId: string, opts?: { timestamp?: number; secret?: string }): { body: string; signature: string }
  /** A signed delivery of any event. */
  event(type: string, object: object, opts?: { timestamp?: number; secret?: string }): { body: string; signature: string }
  close(): void
}

export function startFakeStripe(config: { secretKey: string; webhookSecret: string; prices: string[] }): FakeStripe {
  const sessions = new Map<string, FakeSession>()
  const byIdempotencyKey = new Map<string, string>()
  const requests: FakeStripe['requests'] = []
  let failures = 0
  let failStatus = 500
  let eventCounter = 0

  const error = (status: number, type: string, message: string) => Response.json({ error: { type, message } }, { status })

  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const url = new URL(request.url)
      const form = Object.fromEntries(new URLSearchParams(request.method === 'POST' ? await request.text() : ''))
      requests.push({ method: request.method, path: url.pathname, form, headers: request.headers })
      if (request.headers.get('authorization') !== `Bearer ${config.secretKey}`) {
        return error(401, 'invalid_request_error', 'Invalid API Key provided')
      }
      if (failures > 0) {
        failures--
        return error(failStatus, 'api_error', "Something went wrong on Stripe's end.")
      }
      if (request.method === 'POST' && url.pathname === '/v1/checkout/sessions') {
        const key = request.headers.get('idempotency-key')
        const earlier = key ? byIdempotencyKey.get(key) : undefined
        if (earlier) return Response.json(sessions.get(earlier))
        const price = form['line_items[0][price]']
        if (!price || !config.prices.includes(price)) return error(400, 'invalid_request_error', `No such price: '${price}'`)
        if (!form.success_url) return error(400, 'invalid_request_error', 'Missing required param: success_url.')
        if (form.mode !== 'subscription' && form.mode !== 'payment') return error(400, 'invalid_request_error', 'Invalid mode')
        const id = `cs_test_${crypto.randomUUID().replaceAll('-', '')}`
        const metadata: Record<string, string> = {}
        for (const [name, value] of Object.entries(form)) {
          const match = /^metadata\[(.+)\]$/.exec(name)
          if (match) metadata[match[1]!] = value
        }
        const session: FakeSession = {
          id,
          object: 'checkout.session',
          mode: form.mode,
          status: 'open',
          payment_status: 'unpaid',
          // Real Checkout URLs are long (a fragment of several hundred characters).
          url: `${server.url.origin}/c/pay/${id}#${'f'.repeat(300)}`,
          client_reference_id: form.client_reference_id ?? null,
          customer_email: form.customer_email ?? null,
          success_url: form.success_url,
          cancel_url: form.cancel_url ?? null,
          metadata,
          line_items: [{ price, quantity: Number(form['line_items[0][quantity]'] ?? 1) }],
          expires_at: Math.floor(Date.now() / 1000) + 86_400,
        }
        sessions.set(id, session)
        if (key) byIdempotencyKey.set(key, id)
        return Response.json(session)
      }
      const get = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(url.pathname)
      if (request.method === 'GET' && get) {
        const session = sessions.get(decodeURIComponent(get[1]!))
        return session ? Response.json(session) : error(404, 'invalid_request_error', `No such checkout.session: '${get[1]}'`)
      }
      return error(404, 'invalid_request_error', `Unrecognized request URL (${request.method}: ${url.pathname}).`)
    },
  })

  function signed(type: string, object: object, opts: { timestamp?: number; secret?: string } = {}) {
    const body = JSON.stringify(
      {
        id: `evt_test_${++eventCounter}_${crypto.randomUUID().slice(0, 8)}`,
        object: 'event',
        type,
        created: Math.floor(Date.now() / 1000),
        livemode: false,
        data: { object },
      },
      null,
      2,
    )
    const timestamp = opts.timestamp ?? Math.floor(Date.now() / 1000)
    return { body, signature: stripeSignature(body, opts.secret ?? config.webhookSecret, timestamp) }
  }

  return {
    url: server.url.origin,
    sessions,
    requests,
    failNext(count, status = 500) {
      failures = count
      failStatus = status
    },
    complete(sessionId, opts) {
      const session = sessions.get(sessionId)
      if (!session) throw new Error(`fake stripe: no session ${sessionId}`)
      Object.assign(session, { status: 'complete', payment_status: 'paid', url: null })
      return signed('checkout.session.completed', session, opts)
    },
    event: signed,
    close: () => void server.stop(true),
  }
}
