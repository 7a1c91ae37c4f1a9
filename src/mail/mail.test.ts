import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createMailer, outboxMailer } from './mailer'
import { verificationMail } from './templates'
import { codeFrom, startSmtpSink, type SmtpSink } from '../../test/support/smtp'

let sink: SmtpSink
const dir = mkdtempSync(join(tmpdir(), 'mail-test-'))

beforeAll(async () => {
  sink = await startSmtpSink()
})
afterAll(async () => {
  await sink.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('mailer', () => {
  test('SMTP: the relay receives the message with From, To and the code', async () => {
    const mailer = createMailer({ smtpUrl: sink.url, from: 'Links <no-reply@sho.rt>', outboxPath: join(dir, 'unused.log') })
    expect(mailer.kind).toBe('smtp')
    await mailer.send(verificationMail('smtp-1@example.com', '012345', 15))
    const [mail] = sink.to('smtp-1@example.com')
    expect(mail?.from).toBe('no-reply@sho.rt')
    expect(mail?.raw).toContain('Subject: Your verification code: 012345')
    expect(codeFrom(mail)).toBe('012345')
  })

  test('SMTP: a refusing relay rejects the send', async () => {
    const mailer = createMailer({ smtpUrl: sink.url, from: 'no-reply@sho.rt', outboxPath: join(dir, 'unused.log') })
    sink.failNext(1)
    await expect(mailer.send(verificationMail('smtp-2@example.com', '111111', 15))).rejects.toThrow()
    expect(sink.to('smtp-2@example.com')).toEqual([])
  })

  test('without SMTP_URL: development delivery to the log and the outbox file, clearly marked', async () => {
    const lines: string[] = []
    const path = join(dir, 'nested', 'outbox.log')
    const mailer = createMailer({ smtpUrl: undefined, from: 'no-reply@sho.rt', outboxPath: path }, (line) => lines.push(line))
    expect(mailer.kind).toBe('outbox')
    await mailer.send(verificationMail('dev@example.com', '424242', 15))
    await mailer.send(verificationMail('dev2@example.com', '434343', 15))
    expect(lines.length).toBe(2)
    expect(lines[0]).toContain('DEVELOPMENT DELIVERY')
    expect(lines[0]).toContain('dev@example.com')
    expect(lines[0]).toContain('424242')
    const file = readFileSync(path, 'utf8')
    expect(file.match(/DEVELOPMENT DELIVERY/g)?.length).toBe(2)
    expect(file).toContain('To: dev@example.com')
    expect(file).toContain('Your verification code is: 434343')
  })

  test('security: the outbox file is readable by its owner only', async () => {
    const path = join(dir, 'private.log')
    await outboxMailer(path, 'no-reply@sho.rt', () => {}).send(verificationMail('p@example.com', '999999', 15))
    const { statSync } = await import('node:fs')
    expect(statSync(path).mode & 0o077).toBe(0)
  })
})
