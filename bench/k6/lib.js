// @ts-check
// What the k6 scripts of this folder share: reading __ENV (refusing to start on a missing or malformed
// value, naming all of them at once), the constant-arrival-rate scenario, the failure thresholds every
// run keeps, and the API requests their setup() makes. Plain ES2020 JavaScript (optional chaining: a
// current k6), type-checked against @types/k6 (bench/k6/tsconfig.json).
import http from 'k6/http'

/**
 * Throws one error naming every variable of `names` that is unset, with the script's k6 run line.
 * @param {string} script
 * @param {string[]} names
 * @param {string} example
 */
export function requireEnv(script, names, example) {
  const missing = names.filter((name) => !__ENV[name])
  if (missing.length > 0) throw new Error(`missing ${missing.join(', ')}: see the header of bench/k6/${script} (${example})`)
}

/**
 * __ENV[name] as a positive whole number, or `fallback` when unset.
 * @param {string} name
 * @param {number} [fallback]
 * @returns {number}
 */
export function positiveInt(name, fallback) {
  const raw = __ENV[name]
  if (raw === undefined || raw === '') {
    if (fallback === undefined) throw new Error(`${name} is required`)
    return fallback
  }
  const n = Number(raw)
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive whole number, got "${raw}"`)
  return n
}

/**
 * __ENV[name] as a positive number (milliseconds, links a second…), or `fallback` when unset.
 * @template {number | undefined} F
 * @param {string} name
 * @param {F} fallback
 * @returns {number | F}
 */
export function positiveNumber(name, fallback) {
  const raw = __ENV[name]
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw)
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`)
  return n
}

/** BASE_URL without a trailing slash; scheme://host[:port] only, so paths are the scripts' own. */
export function baseUrl() {
  const url = (__ENV.BASE_URL ?? '').replace(/\/+$/, '')
  if (!/^https?:\/\/[^/]+$/.test(url)) throw new Error(`BASE_URL must be scheme://host[:port], got "${url}"`)
  return url
}

/**
 * A list from `listVar` (comma-separated) or `fileVar` (one item a line; k6 resolves a relative path
 * against the script's directory, so prefer an absolute one). open() exists in the init context only:
 * call this at the top level of a script.
 * @param {string} listVar
 * @param {string} fileVar
 * @param {RegExp} pattern every item must match it
 * @returns {string[]}
 */
export function readList(listVar, fileVar, pattern) {
  const listed = __ENV[listVar]
  const file = __ENV[fileVar]
  if (!listed && !file) throw new Error(`set ${listVar} (comma-separated) or ${fileVar} (one a line)`)
  const raw = listed ? listed.split(',') : open(/** @type {string} */ (file)).split('\n')
  const items = raw.map((item) => item.trim()).filter((item) => item !== '')
  if (items.length === 0) throw new Error(`${listed ? listVar : fileVar} holds nothing`)
  for (const item of items) {
    // Never echo a whole credential into a log.
    if (!pattern.test(item)) throw new Error(`${listed ? listVar : fileVar}: "${item.slice(0, 8)}…" does not match ${pattern}`)
  }
  return items
}

/**
 * One random item.
 * @template T
 * @param {T[]} items
 * @returns {T}
 */
export function pick(items) {
  return /** @type {T} */ (items[Math.floor(Math.random() * items.length)])
}

/**
 * A constant-arrival-rate scenario at RATE iterations a second for DURATION, with VUS pre-allocated
 * (default RATE/50, at least 10) and up to MAX_VUS (default 4 × VUS).
 * @param {string} [exec] the exported function it runs (default: the default export)
 * @returns {import('k6/options').ConstantArrivalRateScenario}
 */
export function arrivalRate(exec) {
  const rate = positiveInt('RATE')
  const duration = __ENV.DURATION ?? ''
  if (!/^(\d+(ms|s|m|h))+$/.test(duration)) throw new Error(`DURATION must be a k6 duration such as 30s or 2m, got "${duration}"`)
  const vus = positiveInt('VUS', Math.max(10, Math.ceil(rate / 50)))
  /** @type {import('k6/options').ConstantArrivalRateScenario} */
  const scenario = { executor: 'constant-arrival-rate', rate, timeUnit: '1s', duration, preAllocatedVUs: vus, maxVUs: positiveInt('MAX_VUS', vus * 4) }
  if (exec) scenario.exec = exec
  return scenario
}

/**
 * What every run must keep: almost no failed request (a 429 means the plan limits were not lifted, see
 * bench/README.md, "k6") and no dropped iteration (else the offered rate was not RATE).
 * @returns {Record<string, import('k6/options').Threshold[]>}
 */
export function runThresholds() {
  return {
    http_req_failed: [{ threshold: 'rate<0.001', abortOnFail: true, delayAbortEval: '5s' }],
    dropped_iterations: ['count==0'],
  }
}

/**
 * Headers of an authenticated JSON request.
 * @param {string} token an mk_ API key or an at_ Agent token
 * @param {string} name the request's name tag (one series per endpoint, not per URL)
 * @returns {import('k6/http').Params}
 */
export function jsonRequest(token, name) {
  return { headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, tags: { name } }
}

/**
 * The parsed JSON body, or null when it is not JSON (a check on it then fails instead of the iteration).
 * @param {import('k6/http').RefinedResponse<any>} response
 * @returns {any}
 */
export function jsonBody(response) {
  try {
    return typeof response.body === 'string' ? JSON.parse(response.body) : null
  } catch {
    return null
  }
}

export const API_KEY_PATTERN = /^mk_[A-Za-z0-9_-]+$/

/**
 * For each API key: a new Agent of its account with `scopes` and an at_ token minted for it (setup()
 * only). The Agent's default policy holds deletes for the human; nothing these scripts do is held.
 * @param {string} base
 * @param {string[]} keys
 * @param {string[]} scopes
 * @returns {string[]}
 */
export function mintAgentTokens(base, keys, scopes) {
  return keys.map((key, index) => {
    const params = jsonRequest(key, 'setup')
    const agent = http.post(`${base}/api/v1/agents`, JSON.stringify({ name: `k6 bench ${index}`, scopes }), params)
    const agentId = jsonBody(agent)?.data?.id
    if (agent.status !== 201 || typeof agentId !== 'string') throw new Error(`POST /api/v1/agents with key ${index}: ${agent.status} ${String(agent.body).slice(0, 300)}`)
    const minted = http.post(`${base}/api/v1/agents/${agentId}/tokens`, '{}', params)
    const token = jsonBody(minted)?.data?.token
    if (minted.status !== 201 || typeof token !== 'string' || !token.startsWith('at_'))
      throw new Error(`POST /api/v1/agents/{id}/tokens with key ${index}: ${minted.status} ${String(minted.body).slice(0, 300)}`)
    return token
  })
}
