// TXT lookups for custom-domain verification: node:dns's Resolver (c-ares), asking DNS_SERVERS when set
// (tests run a real DNS server on loopback, `test/support/dns.ts`), else the system's resolvers.
// Every lookup has its own Resolver and an overall deadline, so one slow domain cannot hold up another.
import { Resolver } from 'node:dns/promises'
import type { Config } from '../../core/config'

/**
 * The name has no TXT record (NXDOMAIN or no data): a plain "not verified". Codes are c-ares' as
 * node:dns reports them.
 */
const NO_RECORD = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN', 'ENONAME'])
/**
 * The domain's own DNS answered with an error: the owner's problem, reported to them as such. Anything
 * else (a timeout, a refused connection to our resolver) is ours: the caller should retry later.
 */
const DOMAIN_FAILURE = new Set(['ESERVFAIL', 'EREFUSED', 'EFORMERR', 'EBADRESP', 'EBADNAME', 'EBADQUERY', 'ENOTIMP'])

export class DnsLookupError extends Error {
  constructor(
    /** c-ares code, e.g. ESERVFAIL, ETIMEOUT. */
    readonly code: string,
    /** true: the domain's DNS failed; false: our resolver did not answer in time. */
    readonly domainSide: boolean,
  ) {
    super(`DNS lookup failed: ${code}`)
    this.name = 'DnsLookupError'
  }
}

export interface TxtResolver {
  /**
   * The TXT records at `name`, each record's character-strings joined (RFC 7208 3.3): [] when the name
   * has none. Throws DnsLookupError when DNS cannot tell. (Bun 1.4.5's binding hands back each string
   * of a multi-string record as a record of its own; a verification value is far below the 255 bytes
   * of one string, so it arrives whole either way.)
   */
  resolveTxt(name: string): Promise<string[]>
}

export function createTxtResolver(config: Pick<Config, 'dnsServers' | 'dnsTimeoutMs'>): TxtResolver {
  return {
    async resolveTxt(name) {
      // One try: a retry inside c-ares would double the wait; the person verifying can retry.
      const resolver = new Resolver({ timeout: config.dnsTimeoutMs, tries: 1 })
      if (config.dnsServers) resolver.setServers(config.dnsServers)
      let timer: ReturnType<typeof setTimeout> | undefined
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          resolver.cancel()
          reject(new DnsLookupError('ETIMEOUT', false))
        }, config.dnsTimeoutMs)
      })
      try {
        const records = await Promise.race([resolver.resolveTxt(name), deadline])
        return records.map((chunks) => chunks.join(''))
      } catch (error) {
        if (error instanceof DnsLookupError) throw error
        const code = String((error as { code?: unknown })?.code ?? 'EUNKNOWN')
        if (NO_RECORD.has(code)) return []
        throw new DnsLookupError(code, DOMAIN_FAILURE.has(code))
      } finally {
        clearTimeout(timer)
      }
    },
  }
}
