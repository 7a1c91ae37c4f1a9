// @ts-check
// Bulk create: POST /api/v1/links/bulk with BULK_SIZE links a request at a constant arrival rate,
// across many accounts (mk_ keys, the same seeding as shorten.js). Measured in links a second: the
// links_created counter adds each answer's summary.succeeded, and its threshold is the target.
//
//   k6 run -e BASE_URL=http://127.0.0.1:3000 -e KEY_FILE=/tmp/keys.txt -e RATE=250 -e DURATION=30s \
//          bench/k6/bulk.js
//
// Required: BASE_URL; KEYS or KEY_FILE (mk_ keys, one a line, absolute path); RATE (requests/s);
// DURATION. Optional: VUS, MAX_VUS; BULK_SIZE (1-100, default 100: the most one request may carry);
// MIN_LINKS_PER_S (default 20000, the target: with BULK_SIZE=100, RATE=200 is that rate).
import http from 'k6/http'
import { check } from 'k6'
import { Counter } from 'k6/metrics'
import { API_KEY_PATTERN, arrivalRate, baseUrl, jsonBody, jsonRequest, pick, positiveInt, positiveNumber, readList, requireEnv, runThresholds } from './lib.js'

requireEnv('bulk.js', ['BASE_URL', 'RATE', 'DURATION'], 'k6 run -e BASE_URL=… -e KEY_FILE=… -e RATE=… -e DURATION=…')
const BASE_URL = baseUrl()
const KEYS = readList('KEYS', 'KEY_FILE', API_KEY_PATTERN)
const BULK_SIZE = positiveInt('BULK_SIZE', 100)
if (BULK_SIZE > 100) throw new Error(`BULK_SIZE is at most 100 (the API's limit per request), got ${BULK_SIZE}`)
const MIN_LINKS_PER_S = positiveNumber('MIN_LINKS_PER_S', 20_000)

const linksCreated = new Counter('links_created')

/** @type {import('k6/options').Options} */
export const options = {
  scenarios: { bulk: arrivalRate() },
  thresholds: {
    ...runThresholds(),
    links_created: [`rate>=${MIN_LINKS_PER_S}`],
    'checks{check:every link created}': ['rate==1'],
  },
}

export default function () {
  const tag = `${__VU}-${__ITER}-${Math.random().toString(36).slice(2)}`
  const links = Array.from({ length: BULK_SIZE }, (_, i) => ({ url: `https://example.com/k6-bulk/${tag}/${i}` }))
  const response = http.post(`${BASE_URL}/api/v1/links/bulk`, JSON.stringify({ links }), jsonRequest(pick(KEYS), 'POST /api/v1/links/bulk'))
  const data = jsonBody(response)?.data
  const succeeded = typeof data?.summary?.succeeded === 'number' ? data.summary.succeeded : 0
  linksCreated.add(succeeded)
  check(response, {
    'every link created': (r) => r.status === 200 && succeeded === BULK_SIZE && data?.summary?.failed === 0,
    'results in request order': () =>
      Array.isArray(data?.results) &&
      data.results.length === BULK_SIZE &&
      data.results.every((/** @type {any} */ item, /** @type {number} */ i) => item.index === i && item.data?.full_url === links[i]?.url),
  })
}
