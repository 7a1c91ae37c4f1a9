// Custom domains: add one, create the DNS TXT record it shows, verify, choose where its root leads,
// delete (with its links) after confirming. Status is said in words; every refusal (the plan's domain limit, a record not found yet)
// shows the API's hint.
import { useEffect, useState } from 'preact/hooks'
import { api, must } from '../api'
import { ConfirmDialog, ErrorNotice, formatDate, Loading } from '../components/ui'
import { useSubmit } from '../lib/useSubmit'
import { AddDomainForm, DnsRecord, RootUrlForm, type Domain } from './DomainParts'

type Usage = { domains?: unknown; domains_limit?: unknown }

export function DomainsPage() {
  const [domains, setDomains] = useState<Domain[] | null>(null)
  const [usage, setUsage] = useState<Usage>({})
  const [error, setError] = useState<unknown>(null)
  const [doomed, setDoomed] = useState<Domain | null>(null)

  useEffect(() => {
    api
      .GET('/api/v1/domains')
      .then((result) => {
        const body = must(result)
        setDomains(body.data.domains)
        setUsage(body.meta.usage ?? {})
      })
      .catch(setError)
  }, [])

  const replace = (domain: Domain) => setDomains((all) => (all ?? []).map((d) => (d.hostname === domain.hostname ? domain : d)))
  const added = (domain: Domain, next: Usage) => {
    setDomains((all) => [...(all ?? []), domain])
    setUsage(next)
  }

  const remove = async (domain: Domain) => {
    setDoomed(null)
    setError(null)
    try {
      const body = must(await api.DELETE('/api/v1/domains/{hostname}', { params: { path: { hostname: domain.hostname } } }))
      setDomains((all) => (all ?? []).filter((d) => d.hostname !== domain.hostname))
      if ('meta' in body && body.meta.usage) setUsage(body.meta.usage)
    } catch (failure) {
      setError(failure)
    }
  }

  return (
    <>
      <h1>Domains</h1>
      <AddDomainForm onAdded={added} />
      <section aria-labelledby="domains-title">
        <h2 id="domains-title">Your domains</h2>
        {typeof usage.domains_limit === 'number' && (
          <p class="muted">
            {String(usage.domains ?? domains?.length ?? 0)} of {usage.domains_limit} custom domains used on your plan.
          </p>
        )}
        <ErrorNotice error={error} />
        {domains === null ? (
          error ? null : (
            <Loading what="domains" />
          )
        ) : domains.length === 0 ? (
          <p class="empty">No custom domains yet. Links use the service's default domain until you add one.</p>
        ) : (
          domains.map((domain) => <DomainCard key={domain.hostname} domain={domain} onChanged={replace} onDelete={setDoomed} />)
        )}
      </section>
      <ConfirmDialog open={doomed !== null} title="Delete this domain?" confirm="Delete domain and its links" onConfirm={() => doomed && remove(doomed)} onCancel={() => setDoomed(null)}>
        <p>
          <strong>{doomed?.hostname}</strong> is removed <strong>with every link on it</strong>: they stop redirecting at once and cannot be restored. Clicks already recorded stay in the statistics.
        </p>
      </ConfirmDialog>
    </>
  )
}

function DomainCard({ domain, onChanged, onDelete }: { domain: Domain; onChanged: (domain: Domain) => void; onDelete: (domain: Domain) => void }) {
  const { busy, error, run } = useSubmit()
  const titleId = `domain-${domain.hostname.replace(/[^a-z0-9-]/g, '-')}`

  const verify = () =>
    run(async () => {
      const body = must(await api.POST('/api/v1/domains/{hostname}/verify', { params: { path: { hostname: domain.hostname } } }))
      if (!('hostname' in body.data)) throw new Error('The verification was held for approval.')
      onChanged(body.data)
    })

  return (
    <article class="card domain" aria-labelledby={titleId}>
      <h3 id={titleId}>{domain.hostname}</h3>
      <p class={domain.verified ? 'status ok' : 'status pending'}>
        {domain.verified ? `Verified on ${formatDate(domain.verified_at)}: links on this domain redirect.` : 'Not verified: links on this domain do not redirect yet.'}
      </p>
      {!domain.verified && <DnsRecord domain={domain} />}
      <ErrorNotice error={error} />
      {!domain.verified && (
        <div class="actions">
          <button type="button" class="primary" disabled={busy} onClick={verify}>
            {busy ? 'Verifying…' : `Verify ${domain.hostname}`}
          </button>
        </div>
      )}
      <RootUrlForm domain={domain} onSaved={onChanged} />
      <div class="actions">
        <button type="button" class="danger" onClick={() => onDelete(domain)}>
          Delete {domain.hostname}
        </button>
      </div>
    </article>
  )
}
