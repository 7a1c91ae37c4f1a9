// For tests only: the two reputation services as loopback HTTP servers on free ports, speaking what the
// real ones speak. The DoH resolver reads and writes DNS messages with dns2 (a dev dependency, and not
// this module's own codec, so the check is tested against an independent encoder, names compressed as
// real resolvers do). Either can be told to fail a name or URI (HTTP 500, or no answer at all) or to hold
// its answer until released, telling the test when the request arrived.
import dns2 from 'dns2'

const { Packet } = dns2

/** HTTP 500; no answer at all; a 200 whose body is not what the service speaks. */
export type Failure = 'http500' | 'hang' | 'garbage'

/** What the filtering resolver answers for a name: its addresses (A and AAAA), NXDOMAIN, or SERVFAIL. */
export type DnsRecords = { a?: string[]; aaaa?: string[] } | 'nxdomain' | 'servfail'

/** A held answer: `arrived` resolves when a request for it came in; `release` lets it (and later ones) go. */
export interface Hold {
  arrived: Promise<void>
  release(): void
}

interface Holds {
  hold(key: string): Hold
  /** Waits while `key` is held; marks its arrival. */
  pass(key: string): Promise<void>
}

function holds(): Holds {
  const held = new Map<string, { arrive: () => void; released: Promise<void> }>()
  return {
    hold(key) {
      let arrive!: () => void
      let release!: () => void
      const arrived = new Promise<void>((resolve) => (arrive = resolve))
      const released = new Promise<void>((resolve) => (release = resolve))
      held.set(key, { arrive, released })
      const letGo = () => {
        held.delete(key)
        release()
      }
      return { arrived, release: letGo }
    },
    async pass(key) {
      const entry = held.get(key)
      if (!entry) return
      entry.arrive()
      await entry.released
    },
  }
}

const never = () => new Promise<Response>(() => {})

export interface DohStandIn {
  /** SAFE_DNS_URL. */
  url: string
  /** Sets what a name answers; null: NXDOMAIN, as for any name not set. */
  set(name: string, records: DnsRecords | null): void
  fail(name: string, failure: Failure | null): void
  hold(name: string): Hold
  /** Each question asked: the name (lower-case), the type (A, AAAA) and the request's Accept header. */
  readonly questions: { name: string; type: string; accept: string | null }[]
  stop(): Promise<void>
}

const key = (name: string) => name.toLowerCase().replace(/\.$/, '')

export function startDohStandIn(): DohStandIn {
  const records = new Map<string, DnsRecords>()
  const failures = new Map<string, Failure>()
  const held = holds()
  const questions: DohStandIn['questions'] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const url = new URL(request.url)
      const dns = url.searchParams.get('dns')
      if (request.method !== 'GET' || url.pathname !== '/dns-query' || !dns) return new Response('not a DoH GET', { status: 400 })
      const query = Packet.parse(Buffer.from(dns, 'base64url'))
      const question = query.questions[0]
      if (!question) return new Response('no question', { status: 400 })
      const name = key(question.name)
      const type = question.type === Packet.TYPE.AAAA ? 'AAAA' : question.type === Packet.TYPE.A ? 'A' : String(question.type)
      questions.push({ name, type, accept: request.headers.get('accept') })
      await held.pass(name)
      const failure = failures.get(name)
      if (failure === 'hang') return never()
      if (failure === 'http500') return new Response('resolver failure', { status: 500 })
      if (failure === 'garbage') return new Response('<html>not a DNS message</html>', { headers: { 'content-type': 'application/dns-message' } })
      const response = Packet.createResponseFromRequest(query)
      const known = records.get(name) ?? 'nxdomain'
      if (known === 'nxdomain') response.header.rcode = Packet.RCODE.NXDOMAIN
      else if (known === 'servfail') response.header.rcode = Packet.RCODE.SERVFAIL
      else {
        const addresses = type === 'A' ? (known.a ?? []) : type === 'AAAA' ? (known.aaaa ?? []) : []
        for (const address of addresses) {
          const record = { name: question.name, type: question.type, class: Packet.CLASS.IN, ttl: 60, address }
          response.answers.push(record as unknown as (typeof response.answers)[number])
        }
      }
      return new Response(response.toBuffer(), { headers: { 'content-type': 'application/dns-message' } })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}/dns-query`,
    set(name, value) {
      if (value === null) records.delete(key(name))
      else records.set(key(name), value)
    },
    fail(name, failure) {
      if (failure === null) failures.delete(key(name))
      else failures.set(key(name), failure)
    },
    hold: (name) => held.hold(key(name)),
    questions,
    stop: () => server.stop(true),
  }
}

export interface WebRiskStandIn {
  /** WEB_RISK_URL. */
  url: string
  /** The key it accepts; any other is 400, as Web Risk answers an invalid key. */
  key: string
  /** Sets the threat types a URI is listed under; null: on no list (the answer is `{}`). */
  list(uri: string, threatTypes: string[] | null): void
  fail(uri: string, failure: Failure | null): void
  hold(uri: string): Hold
  /** Each lookup: the uri, the threat types asked about, the key sent. */
  readonly lookups: { uri: string; threatTypes: string[]; key: string | null }[]
  stop(): Promise<void>
}

export function startWebRiskStandIn(): WebRiskStandIn {
  const apiKey = `stand-in-key-${crypto.randomUUID()}`
  const listed = new Map<string, string[]>()
  const failures = new Map<string, Failure>()
  const held = holds()
  const lookups: WebRiskStandIn['lookups'] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const url = new URL(request.url)
      if (request.method !== 'GET' || url.pathname !== '/v1/uris:search') return Response.json({ error: { code: 404 } }, { status: 404 })
      const uri = url.searchParams.get('uri') ?? ''
      const threatTypes = url.searchParams.getAll('threatTypes')
      lookups.push({ uri, threatTypes, key: url.searchParams.get('key') })
      if (url.searchParams.get('key') !== apiKey) return Response.json({ error: { code: 400, message: 'API key not valid.', status: 'INVALID_ARGUMENT' } }, { status: 400 })
      await held.pass(uri)
      const failure = failures.get(uri)
      if (failure === 'hang') return never()
      if (failure === 'http500') return Response.json({ error: { code: 500, status: 'INTERNAL' } }, { status: 500 })
      if (failure === 'garbage') return new Response('<html>Service Unavailable</html>', { headers: { 'content-type': 'text/html' } })
      // Only the lists asked about are answered, as uris.search does.
      const matched = (listed.get(uri) ?? []).filter((type) => threatTypes.includes(type))
      if (matched.length === 0) return Response.json({})
      return Response.json({ threat: { threatTypes: matched, expireTime: new Date(Date.now() + 300_000).toISOString() } })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}/v1/uris:search`,
    key: apiKey,
    list(uri, types) {
      if (types === null) listed.delete(uri)
      else listed.set(uri, types)
    },
    fail(uri, failure) {
      if (failure === null) failures.delete(uri)
      else failures.set(uri, failure)
    },
    hold: (uri) => held.hold(uri),
    lookups,
    stop: () => server.stop(true),
  }
}
