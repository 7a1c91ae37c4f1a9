// @ts-check
// Link statistics: GET /api/v1/links/{alias}/stats at a constant arrival rate for one link of a Pro
// account with many clicks (the issue: 10 million), the periods in turn. setup() checks the link's ALL
// total reaches MIN_CLICKS, so a run on an empty link cannot pass for the target. Seed with
// bench/clicks-generate.ts (its link, alias bench-stats-10m, needs a links row of the account: see
// bench/README.md, "Statistics benchmark").
//
//   k6 run -e BASE_URL=http://127.0.0.1:3000 -e KEY=mk_… -e ALIAS=bench-stats-10m -e RATE=50 \
//          -e DURATION=30s bench/k6/stats.js
//
// Required: BASE_URL; KEY (the Pro account's mk_ key); ALIAS; RATE (requests/s); DURATION. Optional:
// VUS, MAX_VUS; DOMAIN (the alias's domain, default the service's); PERIODS (comma-separated of 24H,
// 7D, 30D, ALL; default all four); MIN_CLICKS (default 10000000); P99_MS (default 100, the issue's
// target).
import http from 'k6/http'
import { check } from 'k6'
import { API_KEY_PATTERN, arrivalRate, baseUrl, jsonBody, jsonRequest, positiveInt, positiveNumber, requireEnv, runThresholds } from './lib.js'

requireEnv('stats.js', ['BASE_URL', 'KEY', 'ALIAS', 'RATE', 'DURATION'], 'k6 run -e BASE_URL=… -e KEY=mk_… -e ALIAS=… -e RATE=… -e DURATION=…')
const BASE_URL = baseUrl()
const KEY = __ENV.KEY ?? ''
if (!API_KEY_PATTERN.test(KEY)) throw new Error('KEY must be an mk_ API key')
const ALIAS = __ENV.ALIAS ?? ''
if (!/^[A-Za-z0-9_-]{1,64}$/.test(ALIAS)) throw new Error(`not an alias: "${ALIAS}"`)
const DOMAIN = __ENV.DOMAIN ? `&domain=${encodeURIComponent(__ENV.DOMAIN)}` : ''
const PERIODS = (__ENV.PERIODS || '24H,7D,30D,ALL').split(',').map((period) => period.trim())
for (const period of PERIODS) if (!['24H', '7D', '30D', 'ALL'].includes(period)) throw new Error(`PERIODS: "${period}" is not one of 24H, 7D, 30D, ALL`)
const MIN_CLICKS = positiveInt('MIN_CLICKS', 10_000_000)
const P99_MS = positiveNumber('P99_MS', 100)
const PARAMS = jsonRequest(KEY, 'GET /api/v1/links/{alias}/stats')

/** @type {import('k6/options').Options} */
export const options = {
  scenarios: { stats: arrivalRate() },
  thresholds: {
    ...runThresholds(),
    'http_req_duration{scenario:stats}': [`p(99)<${P99_MS}`],
    'checks{check:statistics of the link}': ['rate==1'],
  },
}

/** @param {string} period */
function stats(period) {
  return http.get(`${BASE_URL}/api/v1/links/${ALIAS}/stats?period=${period}${DOMAIN}`, PARAMS)
}

export function setup() {
  const response = stats('ALL')
  const total = jsonBody(response)?.data?.total_clicks
  if (response.status !== 200 || typeof total !== 'number') throw new Error(`GET /api/v1/links/${ALIAS}/stats: ${response.status} ${String(response.body).slice(0, 300)}`)
  if (total < MIN_CLICKS) throw new Error(`${ALIAS} has ${total} clicks, MIN_CLICKS is ${MIN_CLICKS}: seed it first (see the header)`)
}

export default function () {
  const period = PERIODS[__ITER % PERIODS.length] ?? 'ALL'
  const response = stats(period)
  const data = jsonBody(response)?.data
  check(response, {
    'statistics of the link': (r) => r.status === 200 && data?.alias === ALIAS && typeof data?.total_clicks === 'number',
    'of the period asked': () => data?.period === period && Array.isArray(data?.timeseries),
  })
}
