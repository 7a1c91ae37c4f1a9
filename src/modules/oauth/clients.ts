// The client of an OAuth request, whichever way it came: registered here (cli_…, RFC 7591) or named by
// an https client_id whose metadata document is fetched (Client ID Metadata Documents).
import { eq } from 'drizzle-orm'
import { oauthClients } from '../../db/schema'
import { isId } from '../../lib/ids'
import type { Services } from '../../services'
import { isUnused } from './unused-clients'
import { fetchClientMetadataDocument, isMetadataDocumentUrl, type ClientAuth } from './cimd'

/** What authorization, consent and the token endpoint need to know of a client. */
export interface OAuthClient {
  client_id: string
  client_name: string | null
  redirect_uris: string[]
  /** The scopes it registered for (a bound on what it may ask), or null. */
  scope: string | null
  /** Whether it may use the refresh_token grant (registered grant_types). */
  refreshable: boolean
  /** How it authenticates at the token endpoint: registered clients are public (none). */
  auth: ClientAuth
}

/**
 * The client, or null when no client has that id (or its registration went unused for 24 h). An https client_id is a metadata document's URL:
 * fetched (SSRF-guarded, cached) and checked; a document that cannot be used throws invalid_client.
 */
export async function loadClient(services: Pick<Services, 'db' | 'config' | 'now'>, clientId: string): Promise<OAuthClient | null> {
  if (isMetadataDocumentUrl(clientId, services.config)) {
    const view = await fetchClientMetadataDocument(services, clientId)
    return { client_id: view.client_id, client_name: view.client_name, redirect_uris: view.redirect_uris, scope: view.scope, refreshable: view.refreshable, auth: view.auth }
  }
  if (!isId('oauthClient', clientId)) return null
  const [row] = await services.db.select().from(oauthClients).where(eq(oauthClients.id, clientId)).limit(1)
  // An unused client is gone even before the sweep deletes it (unused-clients.ts).
  if (!row || isUnused(row, services.now())) return null
  return {
    client_id: row.id,
    client_name: row.clientName,
    redirect_uris: row.redirectUris,
    scope: row.scope,
    refreshable: row.grantTypes.includes('refresh_token'),
    auth: { method: 'none' },
  }
}

/**
 * OAuth 2.1's redirect URI comparison: exact string match, except that the port of an http loopback
 * URI may differ (RFC 8252 7.3: a native app listens on a port it picks at run time). A fragment is
 * never part of a redirect URI: one given here (`%23` in the query decodes to `#`) matches nothing,
 * whatever the URI before it, and neither does a loopback URI with credentials.
 */
export function redirectUriMatches(registered: readonly string[], given: string): boolean {
  if (given.includes('#')) return false
  if (registered.includes(given)) return true
  let url: URL
  try {
    url = new URL(given)
  } catch {
    return false
  }
  if (url.username !== '' || url.password !== '') return false
  if (url.protocol !== 'http:' || !['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname)) return false
  const portless = (u: URL) => `${u.protocol}//${u.hostname}${u.pathname}${u.search}`
  return registered.some((r) => {
    try {
      const candidate = new URL(r)
      return candidate.protocol === 'http:' && portless(candidate) === portless(url)
    } catch {
      return false
    }
  })
}
