// The Domains page's forms (add a domain, where its root leads) and the DNS record a person creates to
// prove they control a domain.
import { useState } from 'preact/hooks'
import { api, must, type Schemas } from '../api'
import { CopyButton, ErrorNotice } from '../components/ui'
import { useSubmit } from '../lib/useSubmit'

/** A custom domain as the API lists it. */
export type Domain = Schemas['DomainListResponse']['data']['domains'][number]

export function AddDomainForm({ onAdded }: { onAdded: (domain: Domain, usage: Record<string, unknown>) => void }) {
  const [hostname, setHostname] = useState('')
  const { busy, error, run } = useSubmit()

  const submit = (event: Event) => {
    event.preventDefault()
    void run(async () => {
      const body = must(await api.POST('/api/v1/domains', { body: { hostname: hostname.trim() } }))
      // Only an Agent's call is ever held for approval; the signed-in human's runs.
      if (!('meta' in body) || !('hostname' in body.data)) throw new Error('The domain was held for approval.')
      onAdded(body.data, body.meta.usage ?? {})
      setHostname('')
    })
  }

  return (
    <section aria-labelledby="add-domain-title" class="card">
      <h2 id="add-domain-title">Add a domain</h2>
      <form onSubmit={submit}>
        <div class="field">
          <label for="domain-hostname">Domain name</label>
          <input id="domain-hostname" required maxLength={253} placeholder="links.example.com" value={hostname} aria-describedby="domain-hint" onInput={(e) => setHostname(e.currentTarget.value)} />
          <span id="domain-hint" class="hint">
            A domain you control. Point it at this service, then prove it with a DNS TXT record.
          </span>
        </div>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Adding…' : 'Add domain'}
          </button>
        </div>
      </form>
      <ErrorNotice error={error} />
    </section>
  )
}

/** The TXT record that proves control, each part with its copy button. */
export function DnsRecord({ domain }: { domain: Domain }) {
  const { type, name, value } = domain.verification
  return (
    <div class="dns-record">
      <p>At your DNS provider, create this record, then verify:</p>
      <dl class="facts">
        <dt>Record type</dt>
        <dd>
          <code>{type}</code>
        </dd>
        <dt>Name</dt>
        <dd>
          <code>{name}</code> <CopyButton text={name} label={`Copy the record name for ${domain.hostname}`} />
        </dd>
        <dt>Value</dt>
        <dd>
          <code class="wrap">{value}</code> <CopyButton text={value} label={`Copy the record value for ${domain.hostname}`} />
        </dd>
      </dl>
    </div>
  )
}

/**
 * Where the domain's root (`https://<host>/`) leads: a page of the owner's, or (empty) the service's
 * neutral page. The API checks the address as it checks a link's destination and its hint is shown.
 */
export function RootUrlForm({ domain, onSaved }: { domain: Domain; onSaved: (domain: Domain) => void }) {
  const [value, setValue] = useState(domain.root_url ?? '')
  const { busy, error, run } = useSubmit()
  const [saved, setSaved] = useState(false)
  const id = `root-${domain.hostname.replace(/[^a-z0-9-]/g, '-')}`

  const save = (event: Event) => {
    event.preventDefault()
    setSaved(false)
    void run(async () => {
      const rootUrl = value.trim() === '' ? null : value.trim()
      const body = must(await api.PATCH('/api/v1/domains/{hostname}', { params: { path: { hostname: domain.hostname } }, body: { root_url: rootUrl } }))
      if (!('hostname' in body.data)) throw new Error('The change was held for approval.')
      setValue(body.data.root_url ?? '')
      setSaved(true)
      onSaved(body.data)
    })
  }

  return (
    <form class="root-url" onSubmit={save}>
      <div class="field">
        <label for={id}>Where {domain.hostname}/ leads (optional)</label>
        <input
          id={id}
          type="url"
          maxLength={2048}
          placeholder="https://example.com/"
          value={value}
          aria-describedby={`${id}-hint`}
          onInput={(e) => {
            setValue(e.currentTarget.value)
            setSaved(false)
          }}
        />
        <span id={`${id}-hint`} class="hint">
          Visitors of the domain's bare address go here; leave it empty for a neutral page saying the address serves short links.
        </span>
      </div>
      <div class="actions">
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : `Save root page of ${domain.hostname}`}
        </button>
        {saved && <span role="status">Saved.</span>}
      </div>
      <ErrorNotice error={error} />
    </form>
  )
}
