// @ts-check
// Authenticated shorten: POST /api/v1/shorten at a constant arrival rate across many accounts, each
// request with a random account's credential and a fresh destination (the service picks the alias).
// AUTH=key sends the accounts' mk_ API keys; AUTH=agent has setup() create one Agent per account
// (POST /api/v1/agents, scope links:write) and mint its at_ token, so every call is an Agent call with
// its audit event. The same seeding as bench/api.ts: Pro accounts with plan limits lifted (bench/README.md,
// "k6"), their keys one a line.
//
//   k6 run -e BASE_URL=http://127.0.0.1:3000 -e KEY_FILE=/tmp/keys.txt -e AUTH=key -e RATE=1000 \
//          -e DURATION=30s bench/k6/shorten.js
//   k6 run -e BASE_URL=http://127.0.0.1:3000 -e KEY_FILE=/tmp/keys.txt -e AUTH=agent -e RATE=1000 \
//          -e DURATION=30s bench/k6/shorten.js
//
// Required: BASE_URL; KEYS (comma-separated) or KEY_FILE (one mk_ key a line, absolute path); AUTH
// (key or agent); RATE (requests/s); DURATION. Optional: VUS, MAX_VUS; P99_MS, 25 by default: the
// issue's target at half the full rate (2,000 a second), so RATE=1000 checks it.
import http from 'k6/http'
import { check } from 'k6'
import { API_KEY_PATTERN, arrivalRate, baseUrl, jsonBody, jsonRequest, mintAgentTokens, pick, positiveNumber, readList, requireEnv, runThresholds } from './lib.js'

requireEnv('shorten.js', ['BASE_URL', 'AUTH', 'RATE', 'DURATION'], 'k6 run -e BASE_URL=… -e KEY_FILE=… -e AUTH=key -e RATE=… -e DURATION=…')
const BASE_URL = baseUrl()
const KEYS = readList('KEYS', 'KEY_FILE', API_KEY_PATTERN)
const AUTH = __ENV.AUTH
if (AUTH !== 'key' && AUTH !== 'agent') throw new Error(`AUTH must be key (mk_ API keys) or agent (at_ tokens minted in setup), got "${AUTH}"`)
const SCENARIO = AUTH === 'key' ? 'shorten_key' : 'shorten_agent'
const P99_MS = positiveNumber('P99_MS', 25)

/** @type {import('k6/options').Options} */
export const options = {
  scenarios: { [SCENARIO]: arrivalRate() },
  thresholds: {
    ...runThresholds(),
    [`http_req_duration{scenario:${SCENARIO}}`]: [`p(99)<${P99_MS}`],
    'checks{check:created}': ['rate==1'],
  },
}

/** @returns {{ tokens: string[] }} */
export function setup() {
  return { tokens: AUTH === 'key' ? KEYS : mintAgentTokens(BASE_URL, KEYS, ['links:write']) }
}

/** @param {{ tokens: string[] }} data */
export default function (data) {
  const url = `https://example.com/k6/${__VU}/${__ITER}?r=${Math.random().toString(36).slice(2)}`
  const response = http.post(`${BASE_URL}/api/v1/shorten`, JSON.stringify({ url }), jsonRequest(pick(data.tokens), 'POST /api/v1/shorten'))
  const link = jsonBody(response)?.data
  check(response, {
    created: (r) => r.status === 200,
    'the link of the request': () => link?.full_url === url && typeof link?.alias === 'string' && link?.short_url?.endsWith(`/${link.alias}`),
  })
}
