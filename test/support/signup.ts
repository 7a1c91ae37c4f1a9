// Signing up as a user would: registering through the real endpoints and reading the code from the mail
// that the SMTP sink (./smtp.ts) received. For tests that need a registered account made the real way.
import { codeFrom, type SmtpSink } from './smtp'
import { call, newGuestToken, show, type TestApp } from './api'

/** An address no other test (or earlier run against the same Redis) has used. */
export function uniqueEmail(label = 'user'): string {
  return `${label}-${crypto.randomUUID().slice(0, 12)}@example.com`
}

/** The code of the latest mail to `email`. */
export function latestCode(sink: SmtpSink, email: string): string {
  return codeFrom(sink.to(email).at(-1))
}

export interface SignedUp {
  apiKey: string
  email: string
  guestToken: string
  aliases: string[]
}

/** Guest token → `links` guest links → register → code from the mail → verify. */
export async function signUp(app: TestApp, sink: SmtpSink, opts: { links?: number; email?: string } = {}): Promise<SignedUp> {
  const guestToken = await newGuestToken(app)
  const aliases: string[] = []
  for (let i = 0; i < (opts.links ?? 0); i++) {
    const made = await call(app, 'POST', '/api/v1/shorten', { token: guestToken, body: { url: `https://example.com/page-${i}` } })
    if (made.status !== 200) throw new Error(`shorten: ${show(made)}`)
    aliases.push(made.body.data.alias)
  }
  const email = opts.email ?? uniqueEmail()
  const registered = await call(app, 'POST', '/api/v1/guest/register', { token: guestToken, body: { email } })
  if (registered.status !== 200) throw new Error(`register: ${show(registered)}`)
  const verified = await call(app, 'POST', '/api/v1/guest/verify', { token: guestToken, body: { email, code: latestCode(sink, email) } })
  if (verified.status !== 200) throw new Error(`verify: ${show(verified)}`)
  return { apiKey: verified.body.data.api_key, email, guestToken, aliases }
}
