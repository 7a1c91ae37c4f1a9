// @ts-check
// Listing links: GET /api/v1/links on one account with many links (the issue: 100,000), the first page
// and then a deep page reached by cursor, each its own constant-arrival-rate scenario (deep_page starts
// when first_page ends, so each is measured alone at RATE). setup() checks the account holds at least
// MIN_LINKS links and finds the deep page's cursor with one offset request (walking there page by page
// would take a thousand requests) and the link that page starts with; the deep scenario then pages by
// that cursor as a client does.
// Seed the account first (bench/api.ts does; or bulk.js with KEYS=<its key>).
//
//   k6 run -e BASE_URL=http://127.0.0.1:3000 -e KEY=mk_… -e RATE=500 -e DURATION=30s bench/k6/list.js
//
// Required: BASE_URL; KEY (the account's mk_ key); RATE (requests/s of each scenario); DURATION (of
// each). Optional: VUS, MAX_VUS; PAGE_SIZE (1-100, default 20, the API's default); MIN_LINKS (default
// 100000); DEEP_OFFSET (default 90 % of the account's links); P99_MS (default 20, the target
// for both pages).
import http from 'k6/http'
import { check } from 'k6'
import { API_KEY_PATTERN, arrivalRate, baseUrl, jsonBody, jsonRequest, positiveInt, positiveNumber, requireEnv, runThresholds } from './lib.js'

requireEnv('list.js', ['BASE_URL', 'KEY', 'RATE', 'DURATION'], 'k6 run -e BASE_URL=… -e KEY=mk_… -e RATE=… -e DURATION=…')
const BASE_URL = baseUrl()
const KEY = __ENV.KEY ?? ''
if (!API_KEY_PATTERN.test(KEY)) throw new Error('KEY must be an mk_ API key')
const PAGE_SIZE = positiveInt('PAGE_SIZE', 20)
if (PAGE_SIZE > 100) throw new Error(`PAGE_SIZE is at most 100 (the API's limit), got ${PAGE_SIZE}`)
const MIN_LINKS = positiveInt('MIN_LINKS', 100_000)
const P99_MS = positiveNumber('P99_MS', 20)
const PARAMS = jsonRequest(KEY, 'GET /api/v1/links')

/** @type {import('k6/options').Options} */
export const options = {
  scenarios: {
    first_page: arrivalRate('firstPage'),
    deep_page: { ...arrivalRate('deepPage'), startTime: __ENV.DURATION },
  },
  thresholds: {
    ...runThresholds(),
    'http_req_duration{scenario:first_page}': [`p(99)<${P99_MS}`],
    'http_req_duration{scenario:deep_page}': [`p(99)<${P99_MS}`],
    'checks{check:a full page}': ['rate==1'],
  },
}

/**
 * @param {string} query
 * @returns {{ status: number, links: any[] | undefined, pagination: any }}
 */
function list(query) {
  const response = http.get(`${BASE_URL}/api/v1/links?${query}`, PARAMS)
  const data = jsonBody(response)?.data
  return { status: response.status, links: data?.links, pagination: data?.pagination }
}

/** @returns {{ cursor: string, next: string }} */
export function setup() {
  const first = list('limit=1')
  const total = first.pagination?.total
  if (first.status !== 200 || typeof total !== 'number') throw new Error(`GET /api/v1/links: ${first.status}`)
  if (total < MIN_LINKS) throw new Error(`the account has ${total} links, MIN_LINKS is ${MIN_LINKS}: seed it first (see the header)`)
  const offset = positiveInt('DEEP_OFFSET', Math.floor(total * 0.9))
  if (offset + PAGE_SIZE >= total) throw new Error(`DEEP_OFFSET ${offset} leaves no full page of ${PAGE_SIZE} after it (${total} links)`)
  const deep = list(`limit=1&offset=${offset}`)
  const cursor = deep.pagination?.next_cursor
  if (deep.status !== 200 || typeof cursor !== 'string') throw new Error(`GET /api/v1/links?offset=${offset}: ${deep.status}, no next_cursor`)
  // The link the cursor's page starts with: links are listed newest first, so links created during
  // the run come before the cursor and never move it.
  const next = list(`limit=1&offset=${offset + 1}`).links?.[0]?.alias
  if (typeof next !== 'string') throw new Error(`GET /api/v1/links?offset=${offset + 1}: no link`)
  return { cursor, next }
}

/**
 * @param {{ status: number, links: any[] | undefined, pagination: any }} page
 * @param {string | undefined} startsWith the alias the page must start with, when known
 */
function checkPage(page, startsWith) {
  check(page, {
    'a full page': (p) => p.status === 200 && Array.isArray(p.links) && p.links.length === PAGE_SIZE,
    'a cursor to the next': (p) => typeof p.pagination?.next_cursor === 'string',
    'the page asked for': (p) => startsWith === undefined || p.links?.[0]?.alias === startsWith,
  })
}

export function firstPage() {
  checkPage(list(`limit=${PAGE_SIZE}`), undefined)
}

/** @param {{ cursor: string, next: string }} data */
export function deepPage(data) {
  checkPage(list(`limit=${PAGE_SIZE}&cursor=${encodeURIComponent(data.cursor)}`), data.next)
}
