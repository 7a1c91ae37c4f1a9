// A webhook's deliveries, newest first, a page at a time, each with its last attempt (status, answer,
// duration, error) and when the next is due; any of them can be sent again. The dispatcher sends within a
// second or two, so while a delivery on the page is due within a minute the page asks again every 2 s.
import { useEffect, useState } from 'preact/hooks'
import { api, must } from '../../api'
import { ErrorNotice, formatDate, Loading } from '../../components/ui'
import { useSubmit } from '../../lib/useSubmit'
import { Pager, usePages } from '../moderation/parts'
import { DELIVERY_STATUS, type Delivery } from './data'

const PAGE_SIZE = 20
const POLL_MS = 2_000
/** A pending delivery due within this long is followed on screen; a later retry waits for "Refresh". */
const FOLLOW_MS = 60_000

export interface DeliveriesState {
  page: { deliveries: Delivery[]; next: string | null } | null
  error: unknown
  pages: ReturnType<typeof usePages>
  /** Asks again for the first page (after a test or a redelivery, the newest is what a person looks for). */
  showNewest: () => void
  refresh: () => void
}

export function useDeliveries(webhookId: string): DeliveriesState {
  const pages = usePages()
  const [page, setPage] = useState<DeliveriesState['page']>(null)
  const [error, setError] = useState<unknown>(null)
  const [asked, setAsked] = useState(0)
  const refresh = () => setAsked((n) => n + 1)

  useEffect(() => {
    let current = true
    api
      .GET('/api/v1/webhooks/{id}/deliveries', { params: { path: { id: webhookId }, query: { limit: PAGE_SIZE, ...(pages.cursor && { cursor: pages.cursor }) } } })
      .then((result) => {
        const { deliveries, next_cursor } = must(result).data
        if (!current) return
        setPage({ deliveries, next: next_cursor })
        setError(null)
      })
      .catch((failure) => current && setError(failure))
    return () => {
      current = false
    }
  }, [webhookId, pages.cursor, asked])

  useEffect(() => {
    const soon = Date.now() + FOLLOW_MS
    const following = page?.deliveries.some((d) => d.status === 'pending' && (d.next_attempt_at === null || Date.parse(d.next_attempt_at) < soon))
    if (!following) return
    const timer = setTimeout(refresh, POLL_MS)
    return () => clearTimeout(timer)
  }, [page])

  const showNewest = () => {
    pages.reset()
    refresh()
  }
  return { page, error, pages, showNewest, refresh }
}

export function Deliveries({ webhookId, state, canSend }: { webhookId: string; state: DeliveriesState; canSend: boolean }) {
  const { page, error, pages } = state
  const [queued, setQueued] = useState(false)
  const redelivery = useSubmit()
  const redeliver = (delivery: Delivery) => {
    setQueued(false)
    void redelivery.run(async () => {
      must(await api.POST('/api/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver', { params: { path: { id: webhookId, deliveryId: delivery.id } } }))
      setQueued(true)
      state.showNewest()
    })
  }
  return (
    <section aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries</h2>
      <div class="toolbar">
        <span class="hint">
          Newest first. A delivery that did not get a 2xx answer is tried again on the retry schedule, then fails; Redeliver sends its event again (same webhook-id) as a new delivery.
        </span>
        <button type="button" class="small" onClick={state.refresh}>
          Refresh deliveries
        </button>
      </div>
      <ErrorNotice error={error ?? redelivery.error} />
      {queued && (
        <p class="success" role="status">
          Queued again as a new delivery: it is sent within a second or two.
        </p>
      )}
      {page === null ? (
        !error && <Loading what="the deliveries" />
      ) : page.deliveries.length === 0 ? (
        <p class="empty">No delivery{pages.first ? ' yet: send a test above, or wait for an event' : ' on this page'}.</p>
      ) : (
        <DeliveryTable deliveries={page.deliveries} canSend={canSend && !redelivery.busy} onRedeliver={redeliver} />
      )}
      {page && <Pager pages={pages} next={page.next} what="deliveries" />}
    </section>
  )
}

function DeliveryTable({ deliveries, canSend, onRedeliver }: { deliveries: Delivery[]; canSend: boolean; onRedeliver: (delivery: Delivery) => void }) {
  return (
    <div class="table-wrap">
      <table class="deliveries">
        <caption class="visually-hidden">Deliveries of this webhook, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Status</th>
            <th scope="col" class="num">
              Response
            </th>
            <th scope="col" class="num">
              Duration
            </th>
            <th scope="col" class="num">
              Attempts
            </th>
            <th scope="col">Next attempt</th>
            <th scope="col">Queued</th>
            <th scope="col">Error</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {deliveries.map((d) => (
            <tr key={d.id}>
              <th scope="row">
                {d.type}
                <div class="muted">
                  <code>{d.event_id}</code>
                </div>
              </th>
              <td>
                <span class={`state ${d.status}`}>{DELIVERY_STATUS[d.status]}</span>
              </td>
              <td class="num" data-label="Response">
                {d.response_status ?? '—'}
              </td>
              <td class="num" data-label="Duration">
                {d.duration_ms === null ? '—' : `${d.duration_ms} ms`}
              </td>
              <td class="num" data-label="Attempts">
                {d.attempt}
              </td>
              <td data-label="Next attempt">{formatDate(d.next_attempt_at)}</td>
              <td data-label="Queued">{formatDate(d.created_at)}</td>
              <td class="reason" data-label="Error">
                {d.error ?? '—'}
              </td>
              <td class="row-actions">
                <button type="button" class="small" disabled={!canSend} aria-label={`Redeliver ${d.type} ${d.event_id}`} onClick={() => onRedeliver(d)}>
                  Redeliver
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
