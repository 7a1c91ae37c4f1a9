// An Agent's audit log: every call made with its tokens, newest first, a page at a time. The API filters
// nothing (limit and cursor only), so the outcome and operation filters narrow the page on screen, and
// say so: an event can be on an older page.
import { useEffect, useState } from 'preact/hooks'
import { api, must, type Schemas } from '../../api'
import { ErrorNotice, formatDate, Loading } from '../../components/ui'

type AuditEvent = Schemas['AgentAuditResponse']['data']['events'][number]

const PAGE_SIZE = 25

const OUTCOMES: Record<AuditEvent['outcome'], string> = {
  ok: 'Ran',
  held: 'Held for approval',
  refused: 'Refused',
  error: 'Failed',
}

export function AuditLog({ agentId }: { agentId: string }) {
  const [cursors, setCursors] = useState<Array<string | null>>([null])
  const [page, setPage] = useState<{ events: AuditEvent[]; next: string | null } | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [outcome, setOutcome] = useState('')
  const [operation, setOperation] = useState('')
  const cursor = cursors[cursors.length - 1] ?? null

  useEffect(() => {
    let current = true
    setError(null)
    api
      .GET('/api/v1/agents/{agentId}/audit', { params: { path: { agentId }, query: { limit: PAGE_SIZE, ...(cursor && { cursor }) } } })
      .then((result) => {
        const { events, next_cursor } = must(result).data
        if (current) setPage({ events, next: next_cursor ?? null })
      })
      .catch((failure) => current && setError(failure))
    return () => {
      current = false
    }
  }, [agentId, cursor])

  const operations = [...new Set(page?.events.map((e) => e.operation).filter(Boolean))].sort()
  const shown = page?.events.filter((e) => (!outcome || e.outcome === outcome) && (!operation || e.operation === operation)) ?? []
  return (
    <section aria-labelledby="audit-title">
      <h2 id="audit-title">Audit log</h2>
      <div class="toolbar">
        <label>
          Outcome{' '}
          <select value={outcome} onChange={(e) => setOutcome(e.currentTarget.value)}>
            <option value="">All</option>
            {Object.entries(OUTCOMES).map(([value, words]) => (
              <option key={value} value={value}>
                {words}
              </option>
            ))}
          </select>
        </label>
        <label>
          Operation{' '}
          <select value={operation} onChange={(e) => setOperation(e.currentTarget.value)}>
            <option value="">All</option>
            {operations.map((op) => (
              <option key={op} value={op}>
                {op}
              </option>
            ))}
          </select>
        </label>
        <span class="hint">Filters apply to the events of this page.</span>
      </div>
      <ErrorNotice error={error} />
      {!page ? (
        !error && <Loading what="the audit log" />
      ) : page.events.length === 0 ? (
        <p class="empty">No call made with this Agent's tokens{cursors.length > 1 ? ' on this page' : ' yet'}.</p>
      ) : shown.length === 0 ? (
        <p class="empty">No event of this page matches the filters.</p>
      ) : (
        <EventTable events={shown} />
      )}
      <nav class="pager" aria-label="Pages of the audit log">
        <button type="button" disabled={cursors.length === 1} onClick={() => setCursors((c) => c.slice(0, -1))}>
          Newer events
        </button>
        <button type="button" disabled={!page?.next} onClick={() => page?.next && setCursors((c) => [...c, page.next])}>
          Older events
        </button>
      </nav>
    </section>
  )
}

function EventTable({ events }: { events: AuditEvent[] }) {
  return (
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">Calls made with this Agent's tokens</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Call</th>
            <th scope="col">Operation</th>
            <th scope="col" class="num">
              Status
            </th>
            <th scope="col">Outcome</th>
            <th scope="col">Via</th>
          </tr>
        </thead>
        <tbody>
          {events.map((event) => (
            <tr key={event.id}>
              <td>{formatDate(event.at)}</td>
              <th scope="row" class="destination">
                <code>
                  {event.method} {event.path}
                </code>
                {event.dry_run && <span class="badge">dry run</span>}
              </th>
              <td>{event.operation || '—'}</td>
              <td class="num">{event.status}</td>
              <td>
                <span class={`state ${event.outcome}`}>{OUTCOMES[event.outcome]}</span>
              </td>
              <td>{event.via === 'mcp' ? 'MCP' : 'REST'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
