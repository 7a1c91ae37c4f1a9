// Creating a short link with the typed client: a guest token, then POST /api/v1/shorten with an
// Idempotency-Key, so a retry after a lost answer returns the same link instead of a second one.
//
//   bun client/example.ts [base URL, default http://localhost:3000]
import { createLinkClient } from './index'

const baseUrl = process.argv[2] ?? 'http://localhost:3000'

const guest = await createLinkClient(baseUrl).POST('/api/v1/guest/token')
if (!guest.data) throw new Error(`guest token: ${guest.response.status} ${JSON.stringify(guest.error)}`)

const links = createLinkClient(baseUrl, guest.data.data.guest_token)
const idempotencyKey = crypto.randomUUID()
const { data, error, response } = await links.POST('/api/v1/shorten', {
  params: { header: { 'Idempotency-Key': idempotencyKey } },
  body: { url: 'https://example.com/landing' },
})
if (error) throw new Error(`shorten: ${response.status} ${error.error}: ${error.hint}`)
// 202 only for an Agent token whose policy holds link creation for a human: the approval comes back.
if ('approval' in data.data) console.log(`held for approval: ${data.data.approval.review_url}`)
else console.log(data.data.short_url)
