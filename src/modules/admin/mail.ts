// What an account's owner is told when operators suspend or restore it. Plain text, like every mail of
// the service. The operator's reason is not in it: it is written for the audit, and may name reporters.
import type { MailMessage } from '../../mail/mailer'

export function suspendedMail(to: string, serviceUrl: string): MailMessage {
  return {
    to,
    subject: 'Your account has been suspended',
    text: [
      `The operators of ${serviceUrl} have suspended your account (${to}) after reports of abuse.`,
      '',
      'While it is suspended:',
      '- its short links answer "disabled" instead of redirecting;',
      '- its API keys, Agent tokens and sign-in sessions no longer work, and signing in is refused.',
      '',
      'If you think this is a mistake, reply to this message and tell us what your links are for.',
    ].join('\n'),
  }
}

export function restoredMail(to: string, serviceUrl: string): MailMessage {
  return {
    to,
    subject: 'Your account has been restored',
    text: [
      `The operators of ${serviceUrl} have restored your account (${to}).`,
      '',
      'You can sign in again. The links the suspension disabled redirect again; API keys and Agent tokens',
      'revoked by the suspension stay revoked: create new ones from the dashboard.',
    ].join('\n'),
  }
}
