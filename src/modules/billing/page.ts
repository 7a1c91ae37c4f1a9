// The few HTML pages of a checkout: the local provider's confirm page, and the states a buyer can land
// on (paid, expired, unknown, back from Stripe). Self-contained: no script, inline style only, and
// headers that forbid framing (the confirm button must not be clickjacked) and leaking the URL (the
// checkout id in it is the page's only credential) through Referer.

export type PageKind = 'confirm' | 'paid' | 'confirmed' | 'expired' | 'not_found' | 'processing' | 'cancelled'

export interface PageInput {
  kind: PageKind
  price?: string
  interval?: string
  /** Masked account e-mail, e.g. "a•••@example.com". */
  email?: string
  /** Form action of the confirm button (the page's own path). */
  action?: string
  /** What Pro adds, in words (src/lib/plans.ts renders them from the plan table). */
  benefits?: string[]
}

const STATUS: Record<PageKind, number> = {
  confirm: 200,
  paid: 200,
  confirmed: 200,
  processing: 200,
  cancelled: 200,
  expired: 410,
  not_found: 404,
}

const SECURITY_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/** "alice@example.com" → "a•••@example.com": enough to recognise, not enough to harvest. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@')
  return at <= 0 ? '•••' : `${email[0]}•••${email.slice(at)}`
}

function body(input: PageInput): { title: string; html: string } {
  const price = escapeHtml(input.price ?? '')
  const interval = escapeHtml(input.interval ?? '')
  switch (input.kind) {
    case 'confirm':
      return {
        title: 'Upgrade to Pro',
        html: `<h1>Upgrade to Pro</h1>
<p class="price">${price} <span>${interval === 'yearly' ? 'a year' : 'a month'}</span></p>
<p>Account: ${escapeHtml(input.email ?? '')}</p>
<p>Pro: ${escapeHtml((input.benefits ?? []).join(', '))}.</p>
<form method="post" action="${escapeHtml(input.action ?? '')}"><button type="submit">Confirm upgrade</button></form>
<p class="note">Local billing: this server takes no payment; confirming switches the account to Pro at once.</p>`,
      }
    case 'confirmed':
      return { title: 'You are on Pro', html: '<h1>You are on Pro</h1><p>The upgrade is confirmed. Your API key now has the Pro limits.</p>' }
    case 'paid':
      return { title: 'Already paid', html: '<h1>Already paid</h1><p>This checkout is complete; the account is on Pro.</p>' }
    case 'processing':
      return {
        title: 'Payment received',
        html: '<h1>Thank you</h1><p>The payment provider is confirming your payment; the account switches to Pro in a moment. GET /api/v1/account/status shows the plan.</p>',
      }
    case 'cancelled':
      return { title: 'Checkout cancelled', html: '<h1>Checkout cancelled</h1><p>Nothing was charged. Open the checkout link again to retry.</p>' }
    case 'expired':
      return { title: 'Checkout expired', html: '<h1>This checkout has expired</h1><p>Start a new one with POST /api/v1/account/upgrade.</p>' }
    case 'not_found':
      return { title: 'No such checkout', html: '<h1>No such checkout</h1><p>Check the link, or start a new checkout with POST /api/v1/account/upgrade.</p>' }
  }
}

export function checkoutPage(input: PageInput): Response {
  const { title, html } = body(input)
  const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#111}
.price{font-size:2rem;font-weight:600;margin:.5rem 0}.price span{font-size:1rem;font-weight:400;color:#555}
button{font:inherit;padding:.6rem 1.2rem;border:0;border-radius:.4rem;background:#3b82f6;color:#fff;cursor:pointer}
.note{color:#555;font-size:.875rem}</style></head>
<body>${html}</body></html>`
  return new Response(page, { status: STATUS[input.kind], headers: SECURITY_HEADERS })
}
