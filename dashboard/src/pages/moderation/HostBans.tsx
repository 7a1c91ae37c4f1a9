// Banned hosts: banning refuses the host (and its subdomains) as a destination from then on and disables
// every link that leads there, after confirming; unbanning lets new links lead there again and leaves
// the links the ban disabled as they are.
import { useEffect, useState } from 'preact/hooks'
import { api, must, type Schemas } from '../../api'
import { ConfirmDialog, ErrorNotice, formatDate, Loading } from '../../components/ui'
import { useSubmit } from '../../lib/useSubmit'
import { ModerationPage, Pager, ReasonField, reasonBody, usePages } from './parts'

type Ban = Schemas['BannedHostListResponse']['data']['hosts'][number]

const PAGE_SIZE = 50

export function HostBans() {
  const pages = usePages()
  const [page, setPage] = useState<{ hosts: Ban[]; next: string | null } | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [reload, setReload] = useState(0)
  const [done, setDone] = useState<string | null>(null)
  const [reason, setReason] = useState('')
  const unban = useSubmit()

  useEffect(() => {
    let current = true
    setError(null)
    api
      .GET('/api/v1/admin/hosts', { params: { query: { limit: PAGE_SIZE, ...(pages.cursor && { cursor: pages.cursor }) } } })
      .then((result) => {
        const { hosts, next_cursor } = must(result).data
        if (current) setPage({ hosts, next: next_cursor })
      })
      .catch((failure) => current && setError(failure))
    return () => {
      current = false
    }
  }, [pages.cursor, reload])

  const lift = (ban: Ban) =>
    unban.run(async () => {
      must(await api.DELETE('/api/v1/admin/hosts/{host}', { params: { path: { host: ban.host } }, body: reasonBody(reason) }))
      setDone(`${ban.host} is no longer banned. Links it disabled stay disabled until restored.`)
      setReload((n) => n + 1)
    })

  return (
    <ModerationPage title="Moderation" intro="Hosts no link may lead to. A ban covers the host and its subdomains (a name without a dot, or an IP address, only itself).">
      <BanForm
        onBanned={(what) => {
          setDone(what)
          pages.reset()
          setReload((n) => n + 1)
        }}
      />
      <section aria-labelledby="bans-title">
        <h2 id="bans-title">Banned hosts</h2>
        {done && (
          <p class="success" role="status">
            {done}
          </p>
        )}
        <ErrorNotice error={error ?? unban.error} />
        {page === null ? (
          !error && <Loading what="banned hosts" />
        ) : page.hosts.length === 0 ? (
          <p class="empty">No host is banned.</p>
        ) : (
          <>
            <ReasonField id="unban-reason" label="Reason for lifting a ban" value={reason} onInput={setReason} />
            <div class="table-wrap">
              <table>
                <caption class="visually-hidden">Banned hosts</caption>
                <thead>
                  <tr>
                    <th scope="col">Host</th>
                    <th scope="col">Reason</th>
                    <th scope="col">Banned</th>
                    <th scope="col">
                      <span class="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {page.hosts.map((ban) => (
                    <tr key={ban.host}>
                      <th scope="row">{ban.host}</th>
                      <td>{ban.reason ?? <span class="muted">None given</span>}</td>
                      <td>{formatDate(ban.created_at)}</td>
                      <td class="row-actions">
                        <button type="button" class="small" disabled={unban.busy} aria-label={`Unban ${ban.host}`} onClick={() => lift(ban)}>
                          Unban
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )}
        {page && <Pager pages={pages} next={page.next} what="bans" />}
      </section>
    </ModerationPage>
  )
}

function BanForm({ onBanned }: { onBanned: (what: string) => void }) {
  const [host, setHost] = useState('')
  const [reason, setReason] = useState('')
  const [confirming, setConfirming] = useState(false)
  const { busy, error, run } = useSubmit()

  const ban = () =>
    run(async () => {
      setConfirming(false)
      const { data } = must(await api.POST('/api/v1/admin/hosts', { body: { host: host.trim(), ...reasonBody(reason) } }))
      onBanned(`${data.host.host} banned; ${data.links_disabled} link${data.links_disabled === 1 ? '' : 's'} disabled.`)
      setHost('')
      setReason('')
    })

  return (
    <section aria-labelledby="ban-title" class="card">
      <h2 id="ban-title">Ban a host</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault()
          if (host.trim()) setConfirming(true)
        }}
      >
        <div class="field">
          <label for="ban-host">Host</label>
          <input id="ban-host" required maxLength={260} placeholder="evil.example" value={host} onInput={(e) => setHost(e.currentTarget.value)} />
        </div>
        <ReasonField id="ban-reason" value={reason} onInput={setReason} />
        <div class="actions">
          <button type="submit" class="danger" disabled={busy}>
            {busy ? 'Banning…' : 'Ban host'}
          </button>
        </div>
      </form>
      <ErrorNotice error={error} />
      <ConfirmDialog open={confirming} title="Ban this host?" confirm="Ban host" onConfirm={ban} onCancel={() => setConfirming(false)}>
        <p>
          Every link leading to <strong>{host.trim()}</strong> or one of its subdomains, by its destination or a routing rule, is disabled at once, and no new link may lead there.
        </p>
      </ConfirmDialog>
    </section>
  )
}
