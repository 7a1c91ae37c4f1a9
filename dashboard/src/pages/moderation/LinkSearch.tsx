// Every account's links and every guest's, found by an alias, a host (its subdomains too) or a URL, and
// acted on: flag (a warning first), disable (410, after confirming), restore.
import { useEffect, useState } from 'preact/hooks'
import { api, must } from '../../api'
import { ConfirmDialog, ErrorNotice, formatDate, Loading } from '../../components/ui'
import { useSubmit } from '../../lib/useSubmit'
import { ModerationPage, Owner, Pager, ReasonField, reasonBody, shortUrl, StateText, usePages, type AdminLink } from './parts'

const PAGE_SIZE = 25
type Action = 'flag' | 'disable' | 'restore'
const DONE: Record<Action, string> = { flag: 'flagged', disable: 'disabled', restore: 'restored' }

export function LinkSearch() {
  const [text, setText] = useState('')
  const [q, setQ] = useState<string | null>(null)
  const pages = usePages()
  const [page, setPage] = useState<{ links: AdminLink[]; next: string | null } | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [reason, setReason] = useState('')
  const [doomed, setDoomed] = useState<AdminLink | null>(null)
  const [done, setDone] = useState<string | null>(null)
  const { busy, error: actionError, run } = useSubmit()

  useEffect(() => {
    if (q === null) return
    let current = true
    setError(null)
    setPage(null)
    api
      .GET('/api/v1/admin/links', { params: { query: { limit: PAGE_SIZE, ...(q && { q }), ...(pages.cursor && { cursor: pages.cursor }) } } })
      .then((result) => {
        const { links, next_cursor } = must(result).data
        if (current) setPage({ links, next: next_cursor })
      })
      .catch((failure) => current && setError(failure))
    return () => {
      current = false
    }
  }, [q, pages.cursor])

  const search = (event: Event) => {
    event.preventDefault()
    setDone(null)
    pages.reset()
    setQ(text.trim())
  }
  const act = (link: AdminLink, action: Action) =>
    run(async () => {
      setDoomed(null)
      const { data } = must(await api.POST('/api/v1/admin/links/{id}/{action}', { params: { path: { id: link.id, action } }, body: reasonBody(reason) }))
      setPage((p) => p && { ...p, links: p.links.map((l) => (l.id === link.id ? data.link : l)) })
      setDone(`${shortUrl(link)} ${DONE[action]}${data.reports_closed ? `; ${data.reports_closed} report${data.reports_closed === 1 ? '' : 's'} closed` : ''}.`)
    })

  return (
    <ModerationPage title="Moderation" intro="Links of every account and of guests. Search by an alias, a host (its subdomains too) or the start of a URL; empty lists the newest.">
      {/* biome-ignore lint/a11y/useSemanticElements: the form itself is the search landmark; a <search> wrapper would add an element and nothing else */}
      <form class="card" role="search" onSubmit={search}>
        <div class="field wide">
          <label for="admin-q">Alias, host or URL</label>
          <input id="admin-q" type="search" maxLength={2048} placeholder="evil.example" value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </div>
        <div class="actions">
          <button type="submit" class="primary">
            Find links
          </button>
        </div>
      </form>
      {q !== null && (
        <section aria-labelledby="found-title">
          <h2 id="found-title">{q ? `Links matching “${q}”` : 'Newest links'}</h2>
          <ReasonField id="links-reason" label="Reason for the actions below" value={reason} onInput={setReason} />
          {done && (
            <p class="success" role="status">
              {done}
            </p>
          )}
          <ErrorNotice error={error ?? actionError} />
          {page === null ? (
            !error && <Loading what="links" />
          ) : page.links.length === 0 ? (
            <p class="empty">No link matches.</p>
          ) : (
            <LinkTable links={page.links} busy={busy} onAct={(link, action) => (action === 'disable' ? setDoomed(link) : void act(link, action))} />
          )}
          {page && <Pager pages={pages} next={page.next} what="links" />}
        </section>
      )}
      <ConfirmDialog open={doomed !== null} title="Disable this link?" confirm="Disable link" onConfirm={() => doomed && act(doomed, 'disable')} onCancel={() => setDoomed(null)}>
        <p>
          Visitors of <strong>{doomed && shortUrl(doomed)}</strong> get a page saying it was disabled for abuse, at once and on every server.
        </p>
      </ConfirmDialog>
    </ModerationPage>
  )
}

function LinkTable({ links, busy, onAct }: { links: AdminLink[]; busy: boolean; onAct: (link: AdminLink, action: Action) => void }) {
  return (
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">Links found</caption>
        <thead>
          <tr>
            <th scope="col">Short link</th>
            <th scope="col">Destination</th>
            <th scope="col">Made by</th>
            <th scope="col">State</th>
            <th scope="col" class="num">
              Open reports
            </th>
            <th scope="col">Created</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {links.map((link) => (
            <tr key={link.id}>
              <th scope="row">{shortUrl(link)}</th>
              <td class="destination">{link.url}</td>
              <td>
                <Owner accountId={link.account_id} />
              </td>
              <td>
                <StateText state={link.state} reason={link.state_reason} />
              </td>
              <td class="num">{link.open_reports}</td>
              <td>{formatDate(link.created_at)}</td>
              <td class="row-actions">
                {link.state !== 'flagged' && (
                  <button type="button" class="small" disabled={busy} aria-label={`Flag ${shortUrl(link)}`} onClick={() => onAct(link, 'flag')}>
                    Flag
                  </button>
                )}
                {link.state !== 'disabled' && (
                  <button type="button" class="small danger" disabled={busy} aria-label={`Disable ${shortUrl(link)}`} onClick={() => onAct(link, 'disable')}>
                    Disable
                  </button>
                )}
                {link.state !== 'ok' && (
                  <button type="button" class="small" disabled={busy} aria-label={`Restore ${shortUrl(link)}`} onClick={() => onAct(link, 'restore')}>
                    Restore
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
