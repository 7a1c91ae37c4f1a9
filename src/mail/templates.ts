// The messages the service sends. Plain text: nothing to render, nothing to track.
import type { MailMessage } from './mailer'

export function verificationMail(to: string, code: string, validMinutes: number): MailMessage {
  return {
    to,
    subject: `Your verification code: ${code}`,
    text: [
      `Your verification code is: ${code}`,
      '',
      `It is valid for ${validMinutes} minutes and can be used once. Send it with`,
      'POST /api/v1/guest/verify {"email": "...", "code": "..."} using the same guest token.',
      '',
      'If you did not ask for it, ignore this message: no account is created without the code.',
    ].join('\n'),
  }
}
