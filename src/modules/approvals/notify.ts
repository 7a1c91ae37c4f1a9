// The mail of a new approval: the account's address is told what the Agent asked for and where to decide
// (the review page), unless the account turned it off (accounts.approval_emails, PATCH
// /api/v1/account/notifications). Sent after the approval committed; a mail that does not go is logged,
// and the approval stands (it is listed, and it is the webhook event agent.approval_requested).
import { eq } from 'drizzle-orm'
import type { MailConfig } from '../../../core/config'
import { accounts, agents } from '../../db/schema'
import { OPERATIONS, type Operation } from '../../lib/agent-access'
import { errorSummary } from '../../lib/errors'
import { log } from '../../lib/log'
import { createMailer, type Mailer, type MailMessage } from '../../mail/mailer'
import type { Services } from '../../services'

/** What the mail tells of an approval (service.ts approvalView). */
interface MailedApproval {
  id: string
  agent_id: string
  operation: string
  request: { method: string; path: string }
  expires_at: string
  review_url: string
}

/** One mailer per mail configuration: an SMTP transport is made once, not at every approval. */
const mailers = new WeakMap<MailConfig, Mailer>()
const mailerOf = (config: MailConfig) => mailers.get(config) ?? mailers.set(config, createMailer(config)).get(config)!

export function approvalMail(to: string, agentName: string, approval: MailedApproval): MailMessage {
  const what = OPERATIONS[approval.operation as Operation] ?? approval.operation
  return {
    to,
    subject: `${agentName} asks for your approval: ${what}`,
    text: [
      `Your Agent "${agentName}" asked to ${what}:`,
      '',
      `  ${approval.request.method} ${approval.request.path}`,
      '',
      'Nothing has happened yet. Review it and approve or reject it here:',
      approval.review_url,
      '',
      `Undecided, it expires at ${approval.expires_at}.`,
      'To stop these mails: PATCH /api/v1/account/notifications {"approval_emails": false}.',
    ].join('\n'),
  }
}

/** Mails the account of a new approval when it wants that mail; never throws. */
export async function mailApproval(services: Pick<Services, 'db' | 'config'>, accountId: string, approval: MailedApproval, mailer: Mailer = mailerOf(services.config.mail)): Promise<void> {
  try {
    const [row] = await services.db
      .select({ email: accounts.email, wanted: accounts.approvalEmails, agentName: agents.name })
      .from(accounts)
      .innerJoin(agents, eq(agents.id, approval.agent_id))
      .where(eq(accounts.id, accountId))
      .limit(1)
    if (row?.wanted) await mailer.send(approvalMail(row.email, row.agentName, approval))
  } catch (error) {
    log.error({ component: 'approvals', approval: approval.id, error: errorSummary(error) }, 'the mail of a new approval did not go')
  }
}
