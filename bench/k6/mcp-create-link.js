// @ts-check
// The shorten of shorten.js through MCP: the create_link tool, one JSON-RPC tools/call a POST to /mcp
// (Streamable HTTP, stateless: no session to open, so every request stands alone), with an Agent's at_
// token as an MCP host holds it after OAuth. setup() creates one Agent per account (scope links:write),
// mints its token and initializes once to learn the protocol version the server speaks; the calls then
// name it in MCP-Protocol-Version as a host does. Same seeding as shorten.js.
//
//   k6 run -e BASE_URL=http://127.0.0.1:3000 -e KEY_FILE=/tmp/keys.txt -e RATE=1000 -e DURATION=30s \
//          bench/k6/mcp-create-link.js
//
// Required: BASE_URL; KEYS or KEY_FILE (mk_ keys, one a line, absolute path); RATE (calls/s); DURATION.
// Optional: VUS, MAX_VUS; PROTOCOL_VERSION (default 2025-06-18, what most hosts send); P99_MS (no
// default: the MCP target is a rate, at least half of shorten.js's at the same p99, so run it
// with shorten.js's RATE / 2 and, to hold it to the same latency, P99_MS=25).
import http from 'k6/http'
import { check } from 'k6'
import { API_KEY_PATTERN, arrivalRate, baseUrl, mintAgentTokens, pick, positiveNumber, readList, requireEnv, runThresholds } from './lib.js'

requireEnv('mcp-create-link.js', ['BASE_URL', 'RATE', 'DURATION'], 'k6 run -e BASE_URL=… -e KEY_FILE=… -e RATE=… -e DURATION=…')
const BASE_URL = baseUrl()
const KEYS = readList('KEYS', 'KEY_FILE', API_KEY_PATTERN)
const PROTOCOL_VERSION = __ENV.PROTOCOL_VERSION || '2025-06-18'
const P99_MS = positiveNumber('P99_MS', undefined)

/** @type {import('k6/options').Options} */
export const options = {
  scenarios: { mcp_create_link: arrivalRate() },
  thresholds: {
    ...runThresholds(),
    ...(P99_MS !== undefined && { 'http_req_duration{scenario:mcp_create_link}': [`p(99)<${P99_MS}`] }),
    'checks{check:tool result}': ['rate==1'],
  },
}

/**
 * @param {string} token
 * @param {string | undefined} version the negotiated protocol version (absent on initialize)
 * @returns {import('k6/http').Params}
 */
function mcpRequest(token, version) {
  /** @type {Record<string, string>} */
  const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }
  if (version) headers['MCP-Protocol-Version'] = version
  return { headers, tags: { name: 'POST /mcp' } }
}

/**
 * The JSON-RPC message of an answer: the body itself, or the last `data:` line of an event stream.
 * @param {import('k6/http').RefinedResponse<any>} response
 * @returns {any}
 */
function rpcAnswer(response) {
  const body = typeof response.body === 'string' ? response.body : ''
  const stream = (response.headers['Content-Type'] ?? '').includes('text/event-stream')
  const text = stream
    ? (
        body
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .pop() ?? ''
      ).slice(5)
    : body
  try {
    return JSON.parse(text)
  } catch {
    return null
  }
}

/** @returns {{ tokens: string[], version: string }} */
export function setup() {
  const tokens = mintAgentTokens(BASE_URL, KEYS, ['links:write'])
  const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'k6', version: '1' } } }
  const answer = http.post(`${BASE_URL}/mcp`, JSON.stringify(initialize), mcpRequest(tokens[0] ?? '', undefined))
  const version = rpcAnswer(answer)?.result?.protocolVersion
  if (answer.status !== 200 || typeof version !== 'string') throw new Error(`initialize: ${answer.status} ${String(answer.body).slice(0, 300)}`)
  const initialized = http.post(`${BASE_URL}/mcp`, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), mcpRequest(tokens[0] ?? '', version))
  if (initialized.status !== 202) throw new Error(`notifications/initialized: ${initialized.status} ${String(initialized.body).slice(0, 300)}`)
  return { tokens, version }
}

/** @param {{ tokens: string[], version: string }} data */
export default function (data) {
  const url = `https://example.com/k6-mcp/${__VU}/${__ITER}?r=${Math.random().toString(36).slice(2)}`
  const call = { jsonrpc: '2.0', id: __ITER + 1, method: 'tools/call', params: { name: 'create_link', arguments: { url } } }
  const response = http.post(`${BASE_URL}/mcp`, JSON.stringify(call), mcpRequest(pick(data.tokens), data.version))
  const result = rpcAnswer(response)?.result
  check(response, {
    'tool result': (r) => r.status === 200 && result !== undefined && result.isError !== true,
    'the link of the request': () => result?.structuredContent?.data?.full_url === url && typeof result?.structuredContent?.data?.alias === 'string',
  })
}
