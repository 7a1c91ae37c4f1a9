// The reports queue: what visitors reported, newest first, each with its link. An operator dismisses a
// report (the link is left alone), flags the link (visitors see a warning first) or disables it (410);
// acting on the link closes every open report of it, so its cards leave the open queue together.
import { useEffect, useState } from 'preact/hooks'
import { api, must, type Schemas } from '../../api'
import { ConfirmDialog, ErrorNotice, formatDate, Loading } from '../../components/ui'
import { useSubmit } from '../../lib/useSubmit'
import { ModerationPage, Owner, Pager, ReasonField, reasonBody, shortUrl, StateText, usePages } from './parts'

type Report = Schemas['AdminReportListResponse']['data']['reports'][number]
type Status = 'open' | 'closed'

const PAGE_SIZE = 20

export function ReportsQueue() {
  const [status, setStatus] = useState<Status>('open')
  const pages = usePages()
  const [page, setPage] = useState<{ reports: Report[]; next: string | null } | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [done, setDone] = useState<string | null>(null)
  // One dialog for the page: the card that asked, and what its confirmation runs.
  const [confirming, setConfirming] = useState<{ report: Report; disable: () => void } | null>(null)

  useEffect(() => {
    let current = true
    setError(null)
    api
      .GET('/api/v1/admin/reports', { params: { query: { status, limit: PAGE_SIZE, ...(pages.cursor && { cursor: pages.cursor }) } } })
      .then((result) => {
        const { reports, next_cursor } = must(result).data
        if (current) setPage({ reports, next: next_cursor })
      })
      .catch((failure) => current && setError(failure))
    return () => {
      current = false
    }
  }, [status, pages.cursor])

  /** After an action: what it did, and the open queue without the reports it closed. */
  const acted = (what: string, closed: (report: Report) => boolean) => {
    setDone(what)
    if (status === 'open') setPage((p) => p && { ...p, reports: p.reports.filter((r) => !closed(r)) })
  }

  return (
    <ModerationPage title="Moderation" intro="Reports from visitors. Dismiss a report that is wrong; flag or disable its link when it is abusive. Acting on a link closes all of its reports.">
      <div class="toolbar">
        <label>
          Show{' '}
          <select
            value={status}
            onChange={(e) => {
              setStatus(e.currentTarget.value as Status)
              pages.reset()
              setDone(null)
            }}
          >
            <option value="open">Open reports</option>
            <option value="closed">Closed reports</option>
          </select>
        </label>
      </div>
      {done && (
        <p class="success" role="status">
          {done}
        </p>
      )}
      <ErrorNotice error={error} />
      {page === null ? (
        !error && <Loading what="reports" />
      ) : page.reports.length === 0 ? (
        <p class="empty">{status === 'open' ? 'No open report: nothing waits for you.' : 'No closed report.'}</p>
      ) : (
        page.reports.map((report) => <ReportCard key={report.id} report={report} onActed={acted} onDisable={(disable) => setConfirming({ report, disable })} />)
      )}
      {page && <Pager pages={pages} next={page.next} what="reports" />}
      <ConfirmDialog
        open={confirming !== null}
        title="Disable this link?"
        confirm="Disable link"
        onConfirm={() => {
          confirming?.disable()
          setConfirming(null)
        }}
        onCancel={() => setConfirming(null)}
      >
        <p>
          Visitors of <strong>{confirming && shortUrl(confirming.report.link)}</strong> get a page saying it was disabled for abuse, at once and on every server. Every open report of it is closed.
        </p>
      </ConfirmDialog>
    </ModerationPage>
  )
}

interface CardProps {
  report: Report
  onActed: (what: string, closed: (r: Report) => boolean) => void
  /** Asks the page to confirm; `disable` runs once confirmed. */
  onDisable: (disable: () => void) => void
}

function ReportCard({ report, onActed, onDisable }: CardProps) {
  const { busy, error, run } = useSubmit()
  const [reason, setReason] = useState('')
  const { link } = report
  const titleId = `report-${report.id}`

  const dismiss = () =>
    run(async () => {
      must(await api.POST('/api/v1/admin/reports/{id}/dismiss', { params: { path: { id: report.id } }, body: reasonBody(reason) }))
      onActed(`Report dismissed; ${shortUrl(link)} is left as it was.`, (r) => r.id === report.id)
    })
  const act = (action: 'flag' | 'disable') =>
    run(async () => {
      const { data } = must(await api.POST('/api/v1/admin/links/{id}/{action}', { params: { path: { id: link.id, action } }, body: reasonBody(reason) }))
      const closed = `${data.reports_closed} report${data.reports_closed === 1 ? '' : 's'} closed`
      onActed(`${shortUrl(link)} ${action === 'flag' ? 'flagged' : 'disabled'}; ${closed}.`, (r) => r.link.id === link.id)
    })

  return (
    <article class="card report" aria-labelledby={titleId}>
      <h2 id={titleId}>
        {report.reason} report of {shortUrl(link)}
      </h2>
      <dl class="facts">
        <dt>Destination</dt>
        <dd class="destination">{link.url}</dd>
        <dt>Link</dt>
        <dd>
          <StateText state={link.state} />
        </dd>
        <dt>Made by</dt>
        <dd>
          <Owner accountId={link.account_id} />
        </dd>
        <dt>Details</dt>
        <dd>{report.details ?? <span class="muted">None given</span>}</dd>
        <dt>Reporter's address</dt>
        <dd>{report.email ?? <span class="muted">None given</span>}</dd>
        <dt>Reported</dt>
        <dd>{formatDate(report.created_at)}</dd>
        {report.status === 'closed' && (
          <>
            <dt>Closed</dt>
            <dd>
              {formatDate(report.closed_at)} ({report.resolution})
            </dd>
          </>
        )}
      </dl>
      {report.status === 'open' && (
        <form onSubmit={(e) => e.preventDefault()} aria-label={`Decide on the report of ${shortUrl(link)}`}>
          <ReasonField id={`reason-${report.id}`} value={reason} onInput={setReason} />
          <div class="actions">
            <button type="button" disabled={busy} onClick={dismiss}>
              Dismiss report
            </button>
            <button type="button" disabled={busy || link.state === 'flagged'} onClick={() => act('flag')}>
              Flag link
            </button>
            <button type="button" class="danger" disabled={busy || link.state === 'disabled'} onClick={() => onDisable(() => void act('disable'))}>
              Disable link
            </button>
          </div>
        </form>
      )}
      <ErrorNotice error={error} />
    </article>
  )
}
