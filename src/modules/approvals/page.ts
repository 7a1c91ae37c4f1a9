// The page where the human reviews a held Agent call and decides (the approval's review_url):
//   GET  /approvals/{id}   signed out: 303 to /signin?next=<this page>; signed in: what the Agent asked
//                          (operation, method, path, query, body), when, and Approve / Reject while pending;
//                          once decided, what happened (the call's status when it ran)
//   POST /approvals/{id}   form: decision=approve|reject, csrf → the decision (approvals/service.ts), then
//                          303 back to the page, which shows the outcome
// Another account's approval is a 404 page, like an unknown one.
import { Elysia } from 'elysia'
import { escapeHtml, formField, htmlPage, redirect } from '../../lib/html'
import { ApiError, errors } from '../../plugins/errors'
import type { Services } from '../../services'
import { formDoc, htmlDoc } from '../signin/docs'
import { signInUrl } from '../signin/next'
import { messagePage } from '../signin/pages'
import { checkCsrf, readSession, type Session } from '../signin/service'
import { accountApproval, APPROVAL_PAGE_PATH, decideApproval, type ApprovalView, type Execute } from './service'

const pagePath = (id: string) => `${APPROVAL_PAGE_PATH}/${encodeURIComponent(id)}`

function notFound(): Response {
  return htmlPage('No such approval', '<h1>No such approval</h1><p>This link does not name an approval of your account.</p>', { status: 404 })
}

const OUTCOME: Record<string, string> = {
  pending: 'Waiting for your decision.',
  approved: 'Approved; the call is running (or stopped before it could record its result).',
  rejected: 'Rejected: nothing was run.',
  expired: "Expired: nothing was run (approvals last 24 hours, and a killed Agent's expire at once).",
  executed: 'Approved and run.',
  failed: 'Approved, but the call did not succeed (see its answer below).',
}

function approvalPage(view: ApprovalView, agentName: string, session: Session): Response {
  const { request } = view
  const query = Object.keys(request.query).length > 0 ? `?${new URLSearchParams(request.query).toString()}` : ''
  const body = request.body === null ? '' : `<p>With the body:</p><pre>${escapeHtml(JSON.stringify(request.body, null, 2))}</pre>`
  const result = view.result ? `<p>Its answer: status ${view.result.status}.</p><pre>${escapeHtml(JSON.stringify(view.result.body, null, 2).slice(0, 4000))}</pre>` : ''
  const decide =
    view.status === 'pending'
      ? `<form method="post" action="${pagePath(view.id)}">
<input type="hidden" name="csrf" value="${escapeHtml(session.csrfToken)}">
<button type="submit" name="decision" value="approve">Approve and run it</button>
<button type="submit" name="decision" value="reject" class="secondary">Reject</button>
</form>
<p class="note">Decide by ${escapeHtml(view.expires_at)} (UTC). Approving runs the call once, as the Agent, if it is still active and still holds the permission.</p>`
      : ''
  return htmlPage(
    'Approve an Agent call',
    `<h1>${escapeHtml(agentName)} asks to <code>${escapeHtml(view.operation)}</code></h1>
<p>The call: <code>${escapeHtml(request.method)} ${escapeHtml(request.path + query)}</code></p>
${body}
<p class="note">Asked ${escapeHtml(view.created_at)} (UTC) by Agent ${escapeHtml(view.agent_id)}.</p>
<p><strong>${escapeHtml(OUTCOME[view.status] ?? view.status)}</strong></p>
${result}
${decide}`,
  )
}

export function approvalPageModule(services: Services, execute: Execute) {
  return new Elysia({ name: 'modules.approvals.page' })
    .use(errors)
    .get(
      `${APPROVAL_PAGE_PATH}/:approvalId`,
      async ({ request, params }) => {
        const session = await readSession(services, request)
        if (!session) return redirect(signInUrl(pagePath(params.approvalId)))
        try {
          const { view, agentName } = await accountApproval(services, session.account.id, params.approvalId)
          return approvalPage(view, agentName, session)
        } catch (error) {
          if (error instanceof ApiError && error.code === 'APPROVAL_NOT_FOUND') return notFound()
          throw error
        }
      },
      htmlDoc(
        'approvalPage',
        'The approval page (for the human)',
        "The approval's review_url. Signed out: 303 to /signin?next=<this page>. Signed in: what the Agent asked (operation, method, path, query, body with any password hidden), Approve and Reject while pending, what happened once decided. Another account's approval is a 404 page.",
        [200, 303, 404],
        [],
        'agents',
      ),
    )
    .post(
      `${APPROVAL_PAGE_PATH}/:approvalId`,
      async ({ request, params, body }) => {
        const session = await readSession(services, request)
        if (!session) return redirect(signInUrl(pagePath(params.approvalId)))
        if (!checkCsrf(session, formField(body, 'csrf'))) {
          return messagePage(403, 'Please decide again', 'This form was not sent from the approval page of your session. Open the approval again and decide there.', {
            next: pagePath(params.approvalId),
          })
        }
        const decision = formField(body, 'decision')
        if (decision !== 'approve' && decision !== 'reject') return messagePage(400, 'Please decide again', 'Choose Approve or Reject on the approval page.', { next: pagePath(params.approvalId) })
        try {
          await decideApproval(services, session.account.id, params.approvalId, decision, execute)
        } catch (error) {
          if (!(error instanceof ApiError)) throw error
          if (error.code === 'APPROVAL_NOT_FOUND') return notFound()
          // APPROVAL_DECIDED: decided meanwhile (another tab, another person); the page shows how.
          if (error.code !== 'APPROVAL_DECIDED') throw error
        }
        return redirect(pagePath(params.approvalId))
      },
      formDoc(
        'decideApprovalPage',
        'Approve or reject from the approval page',
        "The form of the approval page: decision=approve|reject and the session's csrf. 303 back to the page, which shows the outcome. Without the session: 303 to sign-in; a wrong csrf is a 403 page.",
        [303, 400, 403, 404],
        ['decision', 'csrf'],
        'agents',
      ),
    )
}
