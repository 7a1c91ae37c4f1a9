// Redirect load test for k6: a constant arrival rate of GET /{alias} against a running redirector whose
// links are seeded and whose cache is warm. Redirects are not followed: the 302 itself is what is
// measured. Without k6, `bun run bench` measures the same thing with wrk (bench/run.ts).
//
//   DATABASE_URL=… bun bench/seed.ts --domain <SHORT_DOMAIN> --links 1000 --out /tmp/aliases.txt \
//       --warm http://127.0.0.1:3001
//   k6 run -e BASE_URL=http://127.0.0.1:3001 -e ALIAS_FILE=/tmp/aliases.txt \
//          -e RATE=2000 -e DURATION=30s bench/redirect.k6.js
//
// Required: BASE_URL; ALIASES (comma-separated) or ALIAS_FILE (one alias a line; k6 resolves a relative
// path against this script's directory, so prefer an absolute one); RATE (requests/s); DURATION (k6
// duration, e.g. 30s). Optional: VUS (pre-allocated, default RATE/50, at least 10), MAX_VUS (default
// 4 × VUS), P99_MS (default 5, the redirect latency target of the issue).
import http from 'k6/http'
import { check } from 'k6'

// Refuse to start, naming every missing variable at once, rather than load-test the wrong thing.
const missing = ['BASE_URL', 'RATE', 'DURATION'].filter((name) => !__ENV[name])
if (!__ENV.ALIASES && !__ENV.ALIAS_FILE) missing.push('ALIASES or ALIAS_FILE')
if (missing.length > 0) {
  throw new Error(`missing ${missing.join(', ')}: see the header of bench/redirect.k6.js (e.g. k6 run -e BASE_URL=… -e ALIAS_FILE=… -e RATE=… -e DURATION=…)`)
}

function positiveInt(name, value) {
  const n = Number(value)
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive whole number, got "${value}"`)
  return n
}

const BASE_URL = __ENV.BASE_URL.replace(/\/+$/, '')
if (!/^https?:\/\/[^/]+$/.test(BASE_URL)) throw new Error(`BASE_URL must be scheme://host[:port], got "${BASE_URL}"`)
const RATE = positiveInt('RATE', __ENV.RATE)
const DURATION = __ENV.DURATION
if (!/^(\d+(ms|s|m|h))+$/.test(DURATION)) throw new Error(`DURATION must be a k6 duration such as 30s or 2m, got "${DURATION}"`)
const VUS = __ENV.VUS ? positiveInt('VUS', __ENV.VUS) : Math.max(10, Math.ceil(RATE / 50))
const MAX_VUS = __ENV.MAX_VUS ? positiveInt('MAX_VUS', __ENV.MAX_VUS) : VUS * 4
const P99_MS = __ENV.P99_MS ? Number(__ENV.P99_MS) : 5

function loadAliases() {
  let raw
  if (__ENV.ALIASES) raw = __ENV.ALIASES.split(',')
  else raw = open(__ENV.ALIAS_FILE).split('\n') // open() exists in the init context only
  const aliases = raw.map((a) => a.trim()).filter((a) => a !== '')
  if (aliases.length === 0) throw new Error('no aliases given: seed links first (bun bench/seed.ts)')
  for (const alias of aliases) {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(alias)) throw new Error(`not an alias: "${alias}"`)
  }
  return aliases
}

const ALIASES = loadAliases()

// Only a 302 counts as success: a 200, 404 or 410 here means the seeding or the cache is wrong.
http.setResponseCallback(http.expectedStatuses(302))

export const options = {
  discardResponseBodies: true,
  maxRedirects: 0,
  scenarios: {
    redirect: {
      executor: 'constant-arrival-rate',
      rate: RATE,
      timeUnit: '1s',
      duration: DURATION,
      preAllocatedVUs: VUS,
      maxVUs: MAX_VUS,
    },
  },
  thresholds: {
    http_req_failed: [{ threshold: 'rate<0.001', abortOnFail: true, delayAbortEval: '5s' }],
    'http_req_duration{scenario:redirect}': [`p(99)<${P99_MS}`],
    'checks{check:status is 302}': ['rate==1'],
    // Arrival-rate runs drop iterations when VUs run out: then the offered rate was not the one asked for.
    dropped_iterations: ['count==0'],
  },
}

export default function () {
  const alias = ALIASES[Math.floor(Math.random() * ALIASES.length)]
  const response = http.get(`${BASE_URL}/${alias}`, { redirects: 0, tags: { name: 'GET /{alias}' } })
  check(response, {
    'status is 302': (r) => r.status === 302,
    'has Location': (r) => Boolean(r.headers.Location),
  })
}
