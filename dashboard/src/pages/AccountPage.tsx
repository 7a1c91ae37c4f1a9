// The account: plan, this month's links against the quota, this minute's requests, and the upgrade.
import { useEffect, useState } from 'preact/hooks'
import { api, must } from '../api'
import { ErrorNotice, formatDate, Loading } from '../components/ui'
import { useSubmit } from '../lib/useSubmit'
import { KeysPanel } from './KeysPanel'

interface Usage {
  links_this_month: number
  links_per_month: number
  links_remaining: number
  period_resets_at: string
  requests_per_minute: number
}

export function AccountPage() {
  const [status, setStatus] = useState<{ email: string | null; plan: string; usage: Usage } | null>(null)
  const [error, setError] = useState<unknown>(null)
  // The checkout is another page: the buttons stay disabled while the browser goes there.
  const checkout = useSubmit({ leavesPage: true })
  useEffect(() => {
    api
      .GET('/api/v1/account/status')
      .then((result) => {
        const data = must(result).data
        setStatus({ email: data.email ?? null, plan: data.account_type, usage: data.usage as unknown as Usage })
      })
      .catch(setError)
  }, [])
  const upgrade = (interval: 'monthly' | 'yearly') =>
    checkout.run(async () => {
      const { data } = must(await api.POST('/api/v1/account/upgrade', { body: { interval } }))
      // Only an Agent's call is ever held for approval; the signed-in human's runs.
      if (!('checkout_url' in data)) throw new Error('The upgrade was held for approval.')
      location.assign(data.checkout_url)
    })
  if (!status) return error ? <ErrorNotice error={error} /> : <Loading what="your account" />
  const { usage } = status
  return (
    <>
      <h1>Account</h1>
      <dl class="facts">
        <dt>Signed in as</dt>
        <dd>{status.email}</dd>
        <dt>Plan</dt>
        <dd>{status.plan === 'pro' ? 'Pro' : 'Free'}</dd>
        <dt>Links this month</dt>
        <dd>
          <meter min={0} max={usage.links_per_month} value={usage.links_this_month} aria-label="Links used this month" /> {usage.links_this_month.toLocaleString()} of{' '}
          {usage.links_per_month.toLocaleString()} ({usage.links_remaining.toLocaleString()} left, renews {formatDate(usage.period_resets_at)})
        </dd>
        <dt>Requests</dt>
        <dd>{usage.requests_per_minute} a minute for each API key and for this sign-in</dd>
      </dl>
      <ErrorNotice error={checkout.error} />
      {status.plan !== 'pro' && (
        <section aria-labelledby="upgrade-title">
          <h2 id="upgrade-title">Upgrade to Pro</h2>
          <p>Pro adds link statistics, conversion attribution, more links and custom domains.</p>
          <div class="actions">
            <button type="button" disabled={checkout.busy} onClick={() => upgrade('monthly')}>
              Upgrade monthly
            </button>
            <button type="button" disabled={checkout.busy} onClick={() => upgrade('yearly')}>
              Upgrade yearly
            </button>
          </div>
        </section>
      )}
      <KeysPanel />
    </>
  )
}
