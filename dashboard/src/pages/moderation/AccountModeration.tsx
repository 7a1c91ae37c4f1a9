// An account as operators see it (by its id, as the links and reports show it): suspend it after
// confirming (its links disabled, its keys, sessions and Agent tokens revoked, sign-in refused, its owner
// mailed) or restore it (sign-in again, and the links the suspension disabled come back).
import { useEffect, useState } from 'preact/hooks'
import { api, must, type Schemas } from '../../api'
import { ConfirmDialog, ErrorNotice, formatDate, Loading } from '../../components/ui'
import { useSubmit } from '../../lib/useSubmit'
import { navigate } from '../../router'
import { MODERATION, ModerationPage, ReasonField, reasonBody } from './parts'

type Account = Schemas['AdminAccountResponse']['data']['account']
type Outcome = Schemas['AccountActionResponse']['data']

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`

export function AccountModeration({ accountId }: { accountId: string }) {
  const [id, setId] = useState(accountId)
  return (
    <ModerationPage title="Moderation" intro="Suspend an account that abuses the service, or restore one. Its id is on its links and on the reports of them.">
      {/* biome-ignore lint/a11y/useSemanticElements: the form itself is the search landmark; a <search> wrapper would add an element and nothing else */}
      <form
        class="card"
        role="search"
        onSubmit={(e) => {
          e.preventDefault()
          if (id.trim()) navigate(`${MODERATION}/accounts/${encodeURIComponent(id.trim())}`)
        }}
      >
        <div class="field wide">
          <label for="account-id">Account id</label>
          <input id="account-id" required maxLength={64} placeholder="acct_…" value={id} onInput={(e) => setId(e.currentTarget.value)} />
        </div>
        <div class="actions">
          <button type="submit" class="primary">
            Show account
          </button>
        </div>
      </form>
      {accountId && <AccountCard accountId={accountId} />}
    </ModerationPage>
  )
}

function AccountCard({ accountId }: { accountId: string }) {
  const [account, setAccount] = useState<Account | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [reason, setReason] = useState('')
  const [confirming, setConfirming] = useState(false)
  const [done, setDone] = useState<string | null>(null)
  const { busy, error: actionError, run } = useSubmit()

  useEffect(() => {
    let current = true
    api
      .GET('/api/v1/admin/accounts/{id}', { params: { path: { id: accountId } } })
      .then((result) => current && setAccount(must(result).data.account))
      .catch((failure) => current && setError(failure))
    return () => {
      current = false
    }
  }, [accountId])

  const act = (action: 'suspend' | 'restore') =>
    run(async () => {
      setConfirming(false)
      const { data } = must(await api.POST('/api/v1/admin/accounts/{id}/{action}', { params: { path: { id: accountId, action } }, body: reasonBody(reason) }))
      setAccount(data.account)
      setDone(describe(action, data))
    })

  if (error) return <ErrorNotice error={error} />
  if (!account) return <Loading what="the account" />
  return (
    <section class="card" aria-labelledby="account-title">
      <h2 id="account-title">{account.email}</h2>
      <dl class="facts">
        <dt>Id</dt>
        <dd>
          <code>{account.id}</code>
        </dd>
        <dt>Plan</dt>
        <dd>{account.plan}</dd>
        <dt>Links</dt>
        <dd>{account.links}</dd>
        <dt>Created</dt>
        <dd>{formatDate(account.created_at)}</dd>
        <dt>Standing</dt>
        <dd>{account.suspended_at ? <span class="state refused">Suspended since {formatDate(account.suspended_at)}</span> : <span class="state ok">In good standing</span>}</dd>
      </dl>
      {done && (
        <p class="success" role="status">
          {done}
        </p>
      )}
      <form onSubmit={(e) => e.preventDefault()} aria-label="Suspend or restore the account">
        <ReasonField id="account-reason" value={reason} onInput={setReason} />
        <div class="actions">
          {account.suspended_at ? (
            <button type="button" class="primary" disabled={busy} onClick={() => act('restore')}>
              Restore account
            </button>
          ) : (
            <button type="button" class="danger" disabled={busy} onClick={() => setConfirming(true)}>
              Suspend account
            </button>
          )}
        </div>
      </form>
      <ErrorNotice error={actionError} />
      <ConfirmDialog open={confirming} title="Suspend this account?" confirm="Suspend account" onConfirm={() => act('suspend')} onCancel={() => setConfirming(false)}>
        <p>
          <strong>{account.email}</strong> is signed out everywhere and cannot sign in; its API keys and Agent tokens stop working for good; its {plural(account.links, 'link')} are disabled. Its owner
          is told by e-mail.
        </p>
      </ConfirmDialog>
    </section>
  )
}

function describe(action: 'suspend' | 'restore', outcome: Outcome): string {
  if (action === 'restore') return `Account restored; ${plural(outcome.links_changed, 'link')} redirect again.${outcome.mailed ? ' The owner was told by e-mail.' : ''}`
  const revoked = `${plural(outcome.api_keys_revoked, 'API key')}, ${plural(outcome.sessions_revoked, 'session')} and ${plural(outcome.agent_tokens_revoked, 'Agent token')} revoked`
  return `Account suspended; ${plural(outcome.links_changed, 'link')} disabled; ${revoked}.${outcome.mailed ? ' The owner was told by e-mail.' : ''}`
}
