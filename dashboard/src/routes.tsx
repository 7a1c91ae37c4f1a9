// Every page of the dashboard in one table: the path under /app that shows it, the page, and the entry
// of the navigation it belongs to. The router (main.tsx) finds the page here and the navigation
// (components/Layout.tsx) marks the current entry from the same match, so a path is matched once.
import type { JSX } from 'preact'
import { AccountPage } from './pages/AccountPage'
import { AgentPage } from './pages/agents/AgentPage'
import { AgentsPage } from './pages/agents/AgentsPage'
import { ApprovalsPage } from './pages/ApprovalsPage'
import { DomainsPage } from './pages/DomainsPage'
import { ImportExportPage } from './pages/ImportExportPage'
import { LinkPage } from './pages/LinkPage'
import { LinksPage } from './pages/LinksPage'
import { AccountModeration } from './pages/moderation/AccountModeration'
import { ActionsLog } from './pages/moderation/ActionsLog'
import { HostBans } from './pages/moderation/HostBans'
import { LinkSearch } from './pages/moderation/LinkSearch'
import { ReportsQueue } from './pages/moderation/ReportsQueue'
import { TagsPage } from './pages/TagsPage'
import { WebhookPage } from './pages/webhooks/WebhookPage'
import { WebhooksPage } from './pages/webhooks/WebhooksPage'
import { BASE } from './router'

/** The navigation's entries, in the order shown. */
export const SECTIONS = [
  { label: 'Links', href: BASE },
  { label: 'Import / export', href: `${BASE}/import` },
  { label: 'Tags', href: `${BASE}/tags` },
  { label: 'Domains', href: `${BASE}/domains` },
  { label: 'Agents', href: `${BASE}/agents` },
  { label: 'Approvals', href: `${BASE}/approvals` },
  { label: 'Webhooks', href: `${BASE}/webhooks` },
  { label: 'Account', href: `${BASE}/account` },
] as const

/** The operators' entry (ADMIN_EMAILS), shown last and only to them: the page shell marks them (src/modules/dashboard). */
export const MODERATION_SECTION = { label: 'Moderation', href: `${BASE}/moderation` } as const

export type Section = (typeof SECTIONS)[number]['label'] | typeof MODERATION_SECTION.label

interface Route {
  /** The path without /app; its groups are the page's parameters, given to `page` decoded. */
  path: RegExp
  section: Section
  page: (params: string[]) => JSX.Element
}

const ROUTES: Route[] = [
  { path: /^\/$/, section: 'Links', page: () => <LinksPage /> },
  // The domain first: an alias is unique only within its domain. Keyed, so another link starts afresh.
  { path: /^\/links\/([^/]+)\/([^/]+)\/?$/, section: 'Links', page: ([domain = '', alias = '']) => <LinkPage key={`${domain}/${alias}`} domain={domain} alias={alias} /> },
  { path: /^\/import$/, section: 'Import / export', page: () => <ImportExportPage /> },
  { path: /^\/tags$/, section: 'Tags', page: () => <TagsPage /> },
  { path: /^\/domains$/, section: 'Domains', page: () => <DomainsPage /> },
  { path: /^\/agents$/, section: 'Agents', page: () => <AgentsPage /> },
  { path: /^\/agents\/([^/]+)$/, section: 'Agents', page: ([agentId = '']) => <AgentPage key={agentId} agentId={agentId} /> },
  { path: /^\/approvals$/, section: 'Approvals', page: () => <ApprovalsPage /> },
  { path: /^\/webhooks$/, section: 'Webhooks', page: () => <WebhooksPage /> },
  { path: /^\/webhooks\/([^/]+)$/, section: 'Webhooks', page: ([webhookId = '']) => <WebhookPage key={webhookId} webhookId={webhookId} /> },
  { path: /^\/account(?:\/.*)?$/, section: 'Account', page: () => <AccountPage /> },
  { path: /^\/moderation\/?$/, section: 'Moderation', page: () => <ReportsQueue /> },
  { path: /^\/moderation\/links$/, section: 'Moderation', page: () => <LinkSearch /> },
  { path: /^\/moderation\/hosts$/, section: 'Moderation', page: () => <HostBans /> },
  { path: /^\/moderation\/accounts(?:\/([^/]+))?$/, section: 'Moderation', page: ([accountId = '']) => <AccountModeration key={accountId} accountId={accountId} /> },
  { path: /^\/moderation\/actions$/, section: 'Moderation', page: () => <ActionsLog /> },
]

/** The route of an /app path (without /app) and its decoded parameters; null when no page has that path. */
export function routeOf(path: string): { section: Section; render: () => JSX.Element } | null {
  for (const route of ROUTES) {
    const match = route.path.exec(path)
    if (!match) continue
    let params: string[]
    try {
      params = match.slice(1).map((part) => decodeURIComponent(part))
    } catch {
      // A malformed %-escape names no link and no Agent.
      return null
    }
    return { section: route.section, render: () => route.page(params) }
  }
  return null
}
