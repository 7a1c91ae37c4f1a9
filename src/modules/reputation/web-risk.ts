// The Web Risk lookup (WEB_RISK_URL, WEB_RISK_KEY), in the shape of Google Web Risk's `uris.search`:
// `GET <url>?uri=<destination>&threatTypes=MALWARE&threatTypes=SOCIAL_ENGINEERING&key=<key>` answers
// `{}` when the URI is on none of the lists asked about, and `{"threat": {"threatTypes": [...],
// "expireTime": ...}}` when it is on some. The key travels in the query, so no URL of a call is ever
// logged or put in a reason.
import { CALL_TIMEOUT_MS, SAFE, unknown, unsafe, type DestinationCheck } from './check'
import { fetchService, type Resolve } from './service-fetch'

/** The lists asked about: malware, and phishing (social engineering). */
export const THREAT_TYPES = ['MALWARE', 'SOCIAL_ENGINEERING'] as const

export interface WebRiskOptions {
  url: string
  key: string
  allowHttpLoopback: boolean
  /** Budget of the lookup. Default CALL_TIMEOUT_MS. */
  timeoutMs?: number
  /** The service's own addresses, for the SSRF guard. Default the system resolver. */
  resolve?: Resolve
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

export function webRiskCheck(options: WebRiskOptions): DestinationCheck {
  const timeoutMs = options.timeoutMs ?? CALL_TIMEOUT_MS
  return {
    name: 'web_risk',
    async check(destination) {
      const url = new URL(options.url)
      url.searchParams.append('uri', destination)
      for (const type of THREAT_TYPES) url.searchParams.append('threatTypes', type)
      url.searchParams.append('key', options.key)
      let answer: unknown
      try {
        const body = await fetchService(url, { accept: 'application/json', allowHttpLoopback: options.allowHttpLoopback, timeoutMs, resolve: options.resolve })
        answer = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body))
      } catch (error) {
        return unknown(`WEB_RISK_URL ${error instanceof SyntaxError || error instanceof TypeError ? 'answered something other than JSON' : error instanceof Error ? error.message : 'failed'}`)
      }
      if (!isObject(answer)) return unknown('WEB_RISK_URL answered something other than a JSON object')
      if (answer.threat === undefined) return SAFE
      const types = isObject(answer.threat) ? answer.threat.threatTypes : undefined
      if (!Array.isArray(types) || types.length === 0 || !types.every((type) => typeof type === 'string')) return unknown('WEB_RISK_URL answered a threat without its threat types')
      // Names chosen by the service: a few, short, since they end up in the link's state reason.
      return unsafe(
        `Web Risk lists it as ${types
          .slice(0, 4)
          .map((type: string) => type.slice(0, 40))
          .join(', ')}`,
      )
    },
  }
}
