// @ts-check
// Redirect load test: GET /{alias} at a constant arrival rate against a running redirector (or the
// embedded default) whose links are seeded and whose cache is warm. Redirects are not followed: the 302
// itself is measured. Without k6, `bun run bench` measures the same with wrk (bench/run.ts).
//
//   DATABASE_URL=… bun bench/seed.ts --domain <SHORT_DOMAIN> --links 1000 --out /tmp/aliases.txt \
//       --warm http://127.0.0.1:3001
//   k6 run -e BASE_URL=http://127.0.0.1:3001 -e ALIAS_FILE=/tmp/aliases.txt -e RATE=25000 -e DURATION=30s \
//          bench/k6/redirect.js
//
// Required: BASE_URL; ALIASES (comma-separated) or ALIAS_FILE (one alias a line; an absolute path, k6
// resolves a relative one against this script's folder); RATE (requests/s); DURATION (e.g. 30s).
// Optional: VUS, MAX_VUS (see lib.js), P99_MS: 3 by default, the target for the stand-alone
// redirector at half its full rate; 10 for the embedded default under full load.
import http from 'k6/http'
import { check } from 'k6'
import { arrivalRate, baseUrl, pick, positiveNumber, readList, requireEnv, runThresholds } from './lib.js'

requireEnv('redirect.js', ['BASE_URL', 'RATE', 'DURATION'], 'k6 run -e BASE_URL=… -e ALIAS_FILE=… -e RATE=… -e DURATION=…')
const BASE_URL = baseUrl()
const ALIASES = readList('ALIASES', 'ALIAS_FILE', /^[A-Za-z0-9_-]{1,64}$/)
const P99_MS = positiveNumber('P99_MS', 3)

// Only a 302 counts as success: a 200, 404 or 410 here means the seeding or the cache is wrong.
http.setResponseCallback(http.expectedStatuses(302))

/** @type {import('k6/options').Options} */
export const options = {
  discardResponseBodies: true,
  maxRedirects: 0,
  scenarios: { redirect: arrivalRate() },
  thresholds: {
    ...runThresholds(),
    'http_req_duration{scenario:redirect}': [`p(99)<${P99_MS}`],
    'checks{check:status is 302}': ['rate==1'],
  },
}

export default function () {
  const response = http.get(`${BASE_URL}/${pick(ALIASES)}`, { redirects: 0, tags: { name: 'GET /{alias}' } })
  check(response, {
    'status is 302': (r) => r.status === 302,
    'has Location': (r) => /^https?:\/\//.test(r.headers.Location ?? ''),
  })
}
