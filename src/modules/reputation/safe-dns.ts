// The filtering resolver's check (SAFE_DNS_URL): a family or security DNS-over-HTTPS resolver answers a
// name it blocks with 0.0.0.0 (or ::) or NXDOMAIN. It is spoken to in RFC 8484's wire format, a GET of
// `?dns=<the query, base64url>` with `accept: application/dns-message`: the one format every DoH
// resolver serves (the JSON APIs differ: Cloudflare answers JSON only to `accept: application/dns-json`,
// others only to application/json).
//
// The destination's host is asked for its A records (AAAA when it has none), and only a blocking answer
// leads further: the system resolver is then asked too, since a name that does not exist, or points at
// 0.0.0.0 for everyone, is answered so by any resolver. A block of a name that resolves publicly is
// unsafe. IP-literal hosts are passed: there is no name to ask about.
import { isIP } from 'node:net'
import { systemResolve, untilAborted, type Resolve } from '../../lib/guarded-fetch'
import { hostKind } from '../../lib/hosts'
import { CALL_TIMEOUT_MS, SAFE, unknown, unsafe, type DestinationCheck, type Verdict } from './check'
import { dnsQuery, NOERROR, NXDOMAIN, parseDnsAnswer, TYPE_A, TYPE_AAAA, type DnsAnswer } from './dns-message'
import { fetchService } from './service-fetch'

export interface SafeDnsOptions {
  /** SAFE_DNS_URL. */
  url: string
  allowHttpLoopback: boolean
  /** Budget of each DoH question and of the system lookup. Default CALL_TIMEOUT_MS. */
  timeoutMs?: number
  /** The system resolver: whether a destination resolves publicly, and the DoH server's own addresses for the SSRF guard. */
  resolve?: Resolve
}

/** The system resolver's answers that say a name does not exist, or has no address. */
const NOT_FOUND = new Set(['ENOTFOUND', 'ENODATA'])

const isBlockAddress = (address: string) => hostKind(address) === 'unspecified'

/** The host a resolver can be asked about, or null for an IP literal (or no URL at all). */
function nameOf(destination: string): string | null {
  let url: URL
  try {
    url = new URL(destination)
  } catch {
    return null
  }
  const host = url.hostname.replace(/\.+$/, '')
  if (host === '' || isIP(host.replace(/^\[(.*)\]$/, '$1')) !== 0) return null
  return host
}

export function safeDnsCheck(options: SafeDnsOptions): DestinationCheck {
  const timeoutMs = options.timeoutMs ?? CALL_TIMEOUT_MS
  const resolve = options.resolve ?? systemResolve

  async function ask(name: string, type: number): Promise<DnsAnswer> {
    const url = new URL(options.url)
    url.searchParams.append('dns', Buffer.from(dnsQuery(name, type)).toString('base64url'))
    const body = await fetchService(url, { accept: 'application/dns-message', allowHttpLoopback: options.allowHttpLoopback, timeoutMs, resolve })
    return parseDnsAnswer(body)
  }

  /** What the filter blocks the name with (`0.0.0.0`, `::`, `NXDOMAIN`), null when it does not, or a Verdict when it failed. */
  async function filterBlock(name: string): Promise<string | null | Verdict> {
    let answer: DnsAnswer
    try {
      answer = await ask(name, TYPE_A)
      if (answer.rcode === NOERROR && answer.addresses.length === 0) answer = await ask(name, TYPE_AAAA)
    } catch (error) {
      return unknown(`SAFE_DNS_URL ${error instanceof Error ? error.message : 'failed'}`)
    }
    if (answer.rcode === NXDOMAIN) return 'NXDOMAIN'
    if (answer.rcode !== NOERROR) return unknown(`SAFE_DNS_URL answered response code ${answer.rcode}`)
    return answer.addresses.find(isBlockAddress) ?? null
  }

  /** Whether the system resolver finds an address for the name, or a Verdict when it did not answer. */
  async function resolvesPublicly(name: string): Promise<boolean | Verdict> {
    try {
      const addresses = await untilAborted(resolve(name), AbortSignal.timeout(timeoutMs))
      return addresses.some((address) => !isBlockAddress(address))
    } catch (error) {
      if (NOT_FOUND.has((error as { code?: string } | null)?.code ?? '')) return false
      return unknown('the system resolver did not answer')
    }
  }

  return {
    name: 'safe_dns',
    async check(destination) {
      const name = nameOf(destination)
      if (name === null) return SAFE
      const block = await filterBlock(name)
      if (block === null) return SAFE
      if (typeof block !== 'string') return block
      const exists = await resolvesPublicly(name)
      if (exists === false) return SAFE
      if (exists !== true) return exists
      return unsafe(`the filtering resolver answers ${block} for ${name}, which resolves publicly`)
    },
  }
}
