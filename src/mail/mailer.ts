// Outgoing e-mail behind one small interface: SMTP through nodemailer when SMTP_URL is set, otherwise
// "development delivery" (the message goes to the server log and is appended to an outbox file), so a
// fresh checkout can register without a mail server and a developer still sees the code.
import { appendFile, mkdir } from 'node:fs/promises'
import { dirname } from 'node:path'
import { createTransport } from 'nodemailer'
import type { MailConfig } from '../../core/config'
import { log } from '../lib/log'

export interface MailMessage {
  to: string
  subject: string
  text: string
}

export interface Mailer {
  /** 'smtp' hands mail to a relay; 'outbox' is development delivery (log + file). */
  readonly kind: 'smtp' | 'outbox'
  /** Resolves once the relay accepted the message (or it was written); rejects otherwise. */
  send(message: MailMessage): Promise<void>
}

/**
 * Budgets of one SMTP delivery, in ms. A register request waits for the relay's answer, so every step is
 * bounded: connecting, the greeting, and silence on the socket.
 */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 } as const

/**
 * The development outbox's line in the process log: the one line that may carry a code and an address
 * (docs/configuration.md, `SMTP_URL`; docs/production.md#logs), so it says what it is in a field of its own, and no other line does.
 */
export const developmentOutboxLine = (line: string): void => log.warn({ component: 'mail', development_outbox: true }, line)

export function createMailer(config: MailConfig, say: (line: string) => void = developmentOutboxLine): Mailer {
  return config.smtpUrl ? smtpMailer(config.smtpUrl, config.from) : outboxMailer(config.outboxPath, config.from, say)
}

export function smtpMailer(smtpUrl: string, from: string): Mailer {
  // Options in the URL (e.g. ?ignoreTLS=true, ?requireTLS=true) take precedence over these defaults.
  const transport = createTransport({ url: smtpUrl, ...SMTP_TIMEOUTS })
  return {
    kind: 'smtp',
    async send(message) {
      await transport.sendMail({ from, to: message.to, subject: message.subject, text: message.text })
    },
  }
}

export function outboxMailer(path: string, from: string, log: (line: string) => void): Mailer {
  return {
    kind: 'outbox',
    async send(message) {
      const at = new Date().toISOString()
      // Subject and first line: the code is there; the whole message is in the outbox file.
      const firstLine = message.text.split('\n', 1)[0]
      log(`[mail] DEVELOPMENT DELIVERY (SMTP_URL is not set; nothing was sent) to <${message.to}>: ${firstLine} (full message in ${path})`)
      const entry = [
        `===== DEVELOPMENT DELIVERY ${at} (SMTP_URL is not set; this message was not sent) =====`,
        `From: ${from}`,
        `To: ${message.to}`,
        `Subject: ${message.subject}`,
        '',
        message.text,
        '',
      ].join('\n')
      await mkdir(dirname(path), { recursive: true })
      await appendFile(path, entry, { mode: 0o600 })
    },
  }
}
