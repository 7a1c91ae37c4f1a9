// The audit of operators' actions: who did what to which report, link, host or account, why and when;
// newest first, a page at a time.
import { useEffect, useState } from 'preact/hooks'
import { api, must, type Schemas } from '../../api'
import { ErrorNotice, formatDate, Loading } from '../../components/ui'
import { ModerationPage, Pager, usePages } from './parts'

type Action = Schemas['OperatorActionListResponse']['data']['actions'][number]

const PAGE_SIZE = 50

const WORDS: Record<string, string> = {
  'report.dismiss': 'dismissed a report',
  'link.flag': 'flagged a link',
  'link.disable': 'disabled a link',
  'link.restore': 'restored a link',
  'host.ban': 'banned a host',
  'host.unban': 'lifted a host ban',
  'account.suspend': 'suspended an account',
  'account.restore': 'restored an account',
}

export function ActionsLog() {
  const pages = usePages()
  const [page, setPage] = useState<{ actions: Action[]; next: string | null } | null>(null)
  const [error, setError] = useState<unknown>(null)

  useEffect(() => {
    let current = true
    setError(null)
    api
      .GET('/api/v1/admin/actions', { params: { query: { limit: PAGE_SIZE, ...(pages.cursor && { cursor: pages.cursor }) } } })
      .then((result) => {
        const { actions, next_cursor } = must(result).data
        if (current) setPage({ actions, next: next_cursor })
      })
      .catch((failure) => current && setError(failure))
    return () => {
      current = false
    }
  }, [pages.cursor])

  return (
    <ModerationPage title="Moderation" intro="Every action of every operator, with the reason given.">
      <ErrorNotice error={error} />
      {page === null ? (
        !error && <Loading what="the audit" />
      ) : page.actions.length === 0 ? (
        <p class="empty">No operator has acted yet.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Operators' actions</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Operator</th>
                <th scope="col">Action</th>
                <th scope="col">On</th>
                <th scope="col">Reason</th>
              </tr>
            </thead>
            <tbody>
              {page.actions.map((action) => (
                <tr key={action.id}>
                  <td>{formatDate(action.created_at)}</td>
                  <td>{action.operator_email ?? <span class="muted">A removed account</span>}</td>
                  <td>{WORDS[action.action] ?? action.action}</td>
                  <td>
                    <code>{action.target}</code>
                  </td>
                  <td>{action.reason ?? <span class="muted">None given</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {page && <Pager pages={pages} next={page.next} what="actions" />}
    </ModerationPage>
  )
}
