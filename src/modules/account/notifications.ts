// The account's notification settings (GET/PATCH /api/v1/account/notifications): today one, whether each
// new approval of an Agent's call is mailed to the account's address (on by default).
import { eq } from 'drizzle-orm'
import { accounts } from '../../db/schema'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'

export interface Notifications {
  approval_emails: boolean
}

export async function getNotifications(services: Pick<Services, 'db'>, accountId: string): Promise<Notifications> {
  const [row] = await services.db.select({ approvalEmails: accounts.approvalEmails }).from(accounts).where(eq(accounts.id, accountId)).limit(1)
  if (!row) throw new ApiError('ACCOUNT_NOT_FOUND')
  return { approval_emails: row.approvalEmails }
}

/** Changes the settings sent; answers them all. */
export async function updateNotifications(services: Pick<Services, 'db'>, accountId: string, patch: Partial<Notifications>): Promise<Notifications> {
  if (patch.approval_emails === undefined) return getNotifications(services, accountId)
  const [row] = await services.db.update(accounts).set({ approvalEmails: patch.approval_emails }).where(eq(accounts.id, accountId)).returning({ approvalEmails: accounts.approvalEmails })
  if (!row) throw new ApiError('ACCOUNT_NOT_FOUND')
  return { approval_emails: row.approvalEmails }
}
