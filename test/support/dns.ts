// A real DNS server on loopback for tests (npm dns2, UDP on a free port): it answers TXT questions from
// records a test sets, NXDOMAIN for names it does not know, and can be told to fail a name (SERVFAIL)
// or to stay silent (the client times out). For tests only: dns2 is a dev dependency.
import dns2 from 'dns2'

const { Packet } = dns2

export type Failure = 'servfail' | 'silent'

export interface TestDnsServer {
  /** "127.0.0.1:<port>", the form DNS_SERVERS takes. */
  server: string
  /** Sets the TXT records of a name (each record is its character-strings); null removes them. */
  setTxt(name: string, records: string[][] | string[] | null): void
  /** Makes a name fail in the given way; null ends the failure. */
  fail(name: string, failure: Failure | null): void
  /** Names asked so far, lower-case, in order. */
  readonly questions: string[]
  close(): Promise<void>
}

const key = (name: string) => name.toLowerCase().replace(/\.$/, '')

export async function startTestDnsServer(): Promise<TestDnsServer> {
  const txt = new Map<string, string[][]>()
  const failures = new Map<string, Failure>()
  const questions: string[] = []
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request)
      const question = request.questions[0]
      if (!question) return send(response)
      const name = key(question.name)
      questions.push(name)
      const failure = failures.get(name)
      if (failure === 'silent') return
      if (failure === 'servfail') {
        response.header.rcode = Packet.RCODE.SERVFAIL
        return send(response)
      }
      const records = txt.get(name)
      if (!records) {
        response.header.rcode = Packet.RCODE.NXDOMAIN
        return send(response)
      }
      if (question.type === Packet.TYPE.TXT) {
        for (const data of records) {
          // dns2's Resource type names its encoder too; a plain record is what its own examples push.
          const record = { name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 1, data }
          response.answers.push(record as unknown as (typeof response.answers)[number])
        }
      }
      send(response)
    },
  })
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } })
  const port = addresses.udp?.port
  if (!port) throw new Error(`dns2 did not report its UDP port: ${JSON.stringify(addresses)}`)
  return {
    server: `127.0.0.1:${port}`,
    setTxt(name, records) {
      if (records === null) txt.delete(key(name))
      else
        txt.set(
          key(name),
          records.map((record) => (Array.isArray(record) ? record : [record])),
        )
    },
    fail(name, failure) {
      if (failure === null) failures.delete(key(name))
      else failures.set(key(name), failure)
    },
    questions,
    close: () => server.close(),
  }
}
