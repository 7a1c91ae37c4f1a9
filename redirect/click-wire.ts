// The rows of the click log's previous format (segments ending in `.log`, see segment.ts): still read
// so that a spool left by that version is shipped after an upgrade, and written only by tests of that.
// Trusted fields (ours, or validated) are tab-separated; the four a client controls, and the
// destination URL, travel length-prefixed, so no character in them can break the framing and nothing
// needs escaping here.
import type { ClickEvent } from '../core/clicks'

/**
 * One row: clickId, linkId, domain, alias, at, the lengths of referrer, userAgent, ip, country and url,
 * then those five values back to back. clickId, linkId, domain and alias never contain a tab.
 */
export function wireRow(e: ClickEvent): string {
  return `${e.clickId}\t${e.linkId}\t${e.domain}\t${e.alias}\t${e.at}\t${e.referrer.length}\t${e.userAgent.length}\t${e.ip.length}\t${e.country.length}\t${e.url.length}\t${e.referrer}${e.userAgent}${e.ip}${e.country}${e.url}`
}

const HEADER_FIELDS = 10

/** Reads every row of a chunk. Throws on a malformed chunk: a bug, since only wireRow writes them. */
export function readWire(chunk: string, onEvent: (event: ClickEvent) => void): void {
  const fields: string[] = new Array(HEADER_FIELDS)
  let at = 0
  while (at < chunk.length) {
    for (let i = 0; i < HEADER_FIELDS; i++) {
      const tab = chunk.indexOf('\t', at)
      if (tab < 0) throw new Error('click wire: truncated row')
      fields[i] = chunk.slice(at, tab)
      at = tab + 1
    }
    const values: string[] = []
    for (let i = 5; i < HEADER_FIELDS; i++) {
      const length = Number(fields[i])
      if (!Number.isInteger(length) || length < 0 || at + length > chunk.length) throw new Error('click wire: bad length')
      values.push(chunk.slice(at, at + length))
      at += length
    }
    onEvent({
      clickId: fields[0]!,
      linkId: fields[1]!,
      domain: fields[2]!,
      alias: fields[3]!,
      at: Number(fields[4]),
      referrer: values[0]!,
      userAgent: values[1]!,
      ip: values[2]!,
      country: values[3]!,
      url: values[4]!,
    })
  }
}
