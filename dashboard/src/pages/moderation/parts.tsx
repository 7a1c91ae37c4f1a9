// Pieces the moderation pages share: their own navigation, the reason an operator gives (kept in the
// audit), a link's state in words, the pager of the admin lists, and a link's owner.
import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import type { Schemas } from '../../api'
import { BASE, Link, useLocation } from '../../router'

export type AdminLink = Schemas['AdminLinkListResponse']['data']['links'][number]
export type LinkState = AdminLink['state']

export const MODERATION = `${BASE}/moderation`

const PAGES = [
  { label: 'Reports', href: MODERATION },
  { label: 'Links', href: `${MODERATION}/links` },
  { label: 'Hosts', href: `${MODERATION}/hosts` },
  { label: 'Accounts', href: `${MODERATION}/accounts` },
  { label: 'Audit', href: `${MODERATION}/actions` },
]

/** The moderation section's own pages, the current one marked. */
export function ModerationNav() {
  const { path } = useLocation()
  const here = `${BASE}${path}`
  const current = PAGES.filter((p) => here === p.href || here.startsWith(`${p.href}/`)).at(-1)
  return (
    <nav aria-label="Moderation" class="subnav">
      <ul>
        {PAGES.map((p) => (
          <li key={p.href}>
            <Link href={p.href} aria-current={p === current ? 'page' : undefined}>
              {p.label}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  )
}

export function ModerationPage({ title, intro, children }: { title: string; intro: ComponentChildren; children: ComponentChildren }) {
  return (
    <>
      <h1>{title}</h1>
      <ModerationNav />
      <p>{intro}</p>
      {children}
    </>
  )
}

/** The reason an operator gives for what they do next; optional, kept in the audit. */
export function ReasonField({ id, value, onInput, label = 'Reason' }: { id: string; value: string; onInput: (value: string) => void; label?: string }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} maxLength={500} value={value} aria-describedby={`${id}-hint`} placeholder="Ticket number, what you saw" onInput={(e) => onInput(e.currentTarget.value)} />
      <span id={`${id}-hint`} class="hint">
        Optional; kept in the audit with your action.
      </span>
    </div>
  )
}

/** A reason as the API takes it: absent when blank. */
export const reasonBody = (reason: string) => (reason.trim() ? { reason: reason.trim() } : {})

const STATE_WORDS: Record<LinkState, string> = { ok: 'Redirects', flagged: 'Flagged: warning first', disabled: 'Disabled (410)' }

export function StateText({ state, reason }: { state: LinkState; reason?: string | null }) {
  return (
    <>
      <span class={`state ${state === 'ok' ? 'ok' : state === 'flagged' ? 'pending' : 'refused'}`}>{STATE_WORDS[state]}</span>
      {reason && <div class="muted">{reason}</div>}
    </>
  )
}

/** A link's owner: a guest, or the account (its moderation page). */
export function Owner({ accountId }: { accountId: string | null }) {
  return accountId === null ? <span class="muted">Guest</span> : <Link href={`${MODERATION}/accounts/${encodeURIComponent(accountId)}`}>{accountId}</Link>
}

/** The short URL of a link, from the page's own origin for the default domain. */
export const shortUrl = (link: { domain: string; alias: string }) => `${link.domain}/${link.alias}`

/** Cursor paging of an admin list: the cursors of the pages before this one, to go back; null is the first. */
export function usePages() {
  const [cursors, setCursors] = useState<Array<string | null>>([null])
  const cursor = cursors[cursors.length - 1] ?? null
  return {
    cursor,
    first: cursors.length === 1,
    older: (next: string) => setCursors((all) => [...all, next]),
    newer: () => setCursors((all) => (all.length > 1 ? all.slice(0, -1) : all)),
    reset: () => setCursors([null]),
  }
}

export function Pager({ pages, next, what }: { pages: ReturnType<typeof usePages>; next: string | null; what: string }) {
  if (pages.first && next === null) return null
  return (
    <div class="pager">
      <button type="button" disabled={pages.first} onClick={pages.newer}>
        Newer {what}
      </button>
      <button type="button" disabled={next === null} onClick={() => next && pages.older(next)}>
        Older {what}
      </button>
    </div>
  )
}
