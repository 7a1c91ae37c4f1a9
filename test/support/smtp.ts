// The mail relay of tests: a real SMTP server (the smtp-server package) on a free loopback port that
// keeps every message it accepts, so tests read a verification code from a delivered mail. No TLS, no
// auth.
import { SMTPServer } from 'smtp-server'

export interface ReceivedMail {
  from: string
  to: string[]
  /** The message as it went over the wire (headers and body). */
  raw: string
}

export interface SmtpSink {
  /** smtp://127.0.0.1:PORT?ignoreTLS=true, for SMTP_URL. */
  url: string
  received: ReceivedMail[]
  /** Mails to that address, oldest first. */
  to(address: string): ReceivedMail[]
  /** Refuse the next `count` messages with a 451 (tests of a failing relay). */
  failNext(count: number): void
  close(): Promise<void>
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const received: ReceivedMail[] = []
  let failures = 0
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        if (failures > 0) {
          failures--
          const error = Object.assign(new Error('try again later'), { responseCode: 451 })
          return callback(error)
        }
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        })
        callback()
      })
    },
  })
  const port = await new Promise<number>((resolve, reject) => {
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.server.address()
      if (address && typeof address === 'object') resolve(address.port)
      else reject(new Error('smtp sink: no port'))
    })
  })
  return {
    url: `smtp://127.0.0.1:${port}?ignoreTLS=true`,
    received,
    to: (address) => received.filter((m) => m.to.includes(address)),
    failNext(count) {
      failures = count
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** The six-digit code of a verification mail (see verificationMail). */
export function codeFrom(mail: ReceivedMail | undefined): string {
  const match = mail && /verification code is:?\s*(\d{6})/i.exec(mail.raw)
  if (!match) throw new Error(`no code in mail: ${mail?.raw.slice(0, 400)}`)
  return match[1]!
}
