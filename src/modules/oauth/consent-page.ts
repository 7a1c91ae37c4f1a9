// The human's consent page, where GET /oauth/authorize sends the browser:
//   GET  /consent?request_id=oreq_…  signed out: 303 to /signin?next=<this page>; signed in: who asks
//                                    (client name or id, the host it will send you back to), for what
//                                    (the scopes in words, each a checkbox), approve or deny
//   POST /consent                    form: request_id, decision=approve|deny, scope (repeated), csrf
//                                    → 303 to the client's redirect URI (consent.ts decides)
// An unknown, foreign, decided or expired request is an HTML page (404 / 410), never a redirect: nothing
// goes to a redirect URI from here but the decision itself.
import { Elysia } from 'elysia'
import { escapeHtml, formField, formTargetOf, htmlPage, redirect } from '../../lib/html'
import { ApiError, errors } from '../../plugins/errors'
import type { Services } from '../../services'
import { formDoc, htmlDoc } from '../signin/docs'
import { signInUrl } from '../signin/next'
import { messagePage } from '../signin/pages'
import { checkCsrf, readSession, type Session } from '../signin/service'
import { CONSENT_PAGE_PATH } from './authorize'
import { consentView, decideConsent, type ConsentView } from './consent'
import { isScope, SCOPES } from '../../lib/agent-access'

function pagePath(requestId: string): string {
  return `${CONSENT_PAGE_PATH}?request_id=${encodeURIComponent(requestId)}`
}

function toSignIn(requestId: string): Response {
  return redirect(signInUrl(pagePath(requestId)))
}

function notFound(): Response {
  return htmlPage(
    'No such request',
    '<h1>No such authorization request</h1><p>This link does not name a request waiting for you (it may belong to another account). Go back to the application and connect it again.</p>',
    { status: 404 },
  )
}

function noLongerPending(status?: string): Response {
  const what = status === 'expired' ? 'has expired (requests last 10 minutes)' : status ? `was already ${status}` : 'is no longer pending (decided or expired)'
  return htmlPage('Request closed', `<h1>This request is closed</h1><p>This authorization request ${escapeHtml(what)}. Go back to the application and connect it again.</p>`, { status: 410 })
}

function hostOf(uri: string): string {
  try {
    const url = new URL(uri)
    return url.host || `${url.protocol}${url.pathname}`
  } catch {
    return uri
  }
}

function consentPage(view: ConsentView, session: Session, error?: string): Response {
  const { client } = view
  const name = client.client_name ?? client.client_id
  const scopes = view.scopes
    .map((scope) => {
      const words = isScope(scope) ? SCOPES[scope] : scope
      return `<li><label><input type="checkbox" name="scope" value="${escapeHtml(scope)}" checked> ${escapeHtml(words)} <span class="note">(${escapeHtml(scope)})</span></label></li>`
    })
    .join('')
  const target = formTargetOf(client.redirect_uri)
  return htmlPage(
    'Authorize access',
    `<h1>${escapeHtml(name)} wants access to your account</h1>
<p class="note">Client ${escapeHtml(client.client_id)}${client.client_name ? '' : ' (it gave no name)'}. After your answer you go back to <strong>${escapeHtml(hostOf(client.redirect_uri))}</strong>.</p>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="${CONSENT_PAGE_PATH}">
<input type="hidden" name="request_id" value="${escapeHtml(view.request_id)}">
<input type="hidden" name="csrf" value="${escapeHtml(session.csrfToken)}">
<input type="hidden" name="scope_choice" value="1">
<p>It asks to:</p>
<ul class="scopes">${scopes}</ul>
<p class="note">Untick what you do not want to grant. You can stop this application at any time by killing its Agent.</p>
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>
<form method="post" action="/signout"><input type="hidden" name="csrf" value="${escapeHtml(session.csrfToken)}"><input type="hidden" name="next" value="${escapeHtml(pagePath(view.request_id))}">
<p class="note">Signed in as ${escapeHtml(session.account.email)}. <button type="submit" class="secondary">Not you? Sign out</button></p></form>`,
    { status: error ? 400 : 200, formTargets: target ? [target] : [] },
  )
}

/** The view, or the page that says why there is none to show. */
async function viewOrPage(services: Services, session: Session, requestId: string): Promise<ConsentView | Response> {
  try {
    const view = await consentView(services, session.account.id, requestId)
    return view.status === 'pending' ? view : noLongerPending(view.status)
  } catch (error) {
    if (error instanceof ApiError && error.code === 'OAUTH_REQUEST_NOT_FOUND') return notFound()
    throw error
  }
}

/** The checked scopes when the form came from the page (none ticked is an empty list), else absent: all. */
function chosenScopes(body: unknown): string[] | undefined {
  if (formField(body, 'scope_choice') === undefined) return undefined
  const value = (body as Record<string, unknown>).scope
  if (typeof value === 'string') return [value]
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []
}

export function consentPageModule(services: Services) {
  return new Elysia({ name: 'modules.oauth.consent-page' })
    .use(errors)
    .get(
      CONSENT_PAGE_PATH,
      async ({ request, query }) => {
        const requestId = typeof query.request_id === 'string' ? query.request_id : ''
        if (requestId === '') return notFound()
        const session = await readSession(services, request)
        if (!session) return toSignIn(requestId)
        const view = await viewOrPage(services, session, requestId)
        return view instanceof Response ? view : consentPage(view, session)
      },
      htmlDoc(
        'consentPage',
        'The consent page (for the human)',
        "Where GET /oauth/authorize sends the browser. Signed out: 303 to /signin?next=<this page>. Signed in: the client's name (or client_id), the host it redirects to, the requested scopes in words with a checkbox each, Approve and Deny. An unknown request (or one another account decided) is a 404 page; a decided or expired one a 410 page.",
        [200, 303, 404, 410],
        [{ name: 'request_id', description: 'The consent request (oreq_…)', required: true }],
        'oauth',
      ),
    )
    .post(
      CONSENT_PAGE_PATH,
      async ({ request, body }) => {
        const requestId = formField(body, 'request_id') ?? ''
        if (requestId === '') return notFound()
        const session = await readSession(services, request)
        if (!session) return toSignIn(requestId)
        if (!checkCsrf(session, formField(body, 'csrf'))) {
          return messagePage(403, 'Please decide again', 'This form was not sent from the consent page of your session (or the session changed since). Open the request again and decide there.', {
            next: pagePath(requestId),
          })
        }
        const decision = formField(body, 'decision')
        if (decision !== 'approve' && decision !== 'deny') return messagePage(400, 'Please decide again', 'Choose Approve or Deny on the consent page.', { next: pagePath(requestId) })
        try {
          const { redirect_to } = await decideConsent(services, session.account.id, {
            request_id: requestId,
            approve: decision === 'approve',
            scopes: decision === 'approve' ? chosenScopes(body) : undefined,
          })
          return redirect(redirect_to)
        } catch (error) {
          if (!(error instanceof ApiError)) throw error
          if (error.code === 'OAUTH_REQUEST_NOT_FOUND') return notFound()
          if (error.code === 'OAUTH_REQUEST_DECIDED') return noLongerPending()
          if (error.code !== 'VALIDATION_FAILED') throw error
          const view = await viewOrPage(services, session, requestId)
          return view instanceof Response ? view : consentPage(view, session, 'Tick at least one permission to approve, or deny the request.')
        }
      },
      formDoc(
        'decideConsentPage',
        'Approve or deny on the consent page',
        "Form: request_id, decision (approve | deny), scope (repeated: the ticked subset of the requested scopes; with scope_choice=1 an absent scope means none), csrf (the session's CSRF token). 303 to the client's redirect URI with code, state and iss (or error=access_denied). Signed out: 303 to sign-in. Wrong CSRF token: 403 page; unknown request: 404 page; decided or expired: 410 page; no scope ticked: the consent page again (400).",
        [303, 400, 403, 404, 410],
        ['request_id', 'decision', 'scope', 'scope_choice', 'csrf'],
        'oauth',
      ),
    )
}
