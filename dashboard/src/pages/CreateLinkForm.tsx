// Creating a link: destination, optional alias (its availability checked as it is typed), domain,
// password, expiry and activation. Every refusal shows the API's hint next to the form.
import { useEffect, useState } from 'preact/hooks'
import { api, must } from '../api'
import { CopyButton, ErrorNotice } from '../components/ui'
import { useSubmit } from '../lib/useSubmit'

const ALIAS = /^[A-Za-z0-9_-]{1,64}$/

type Availability = { alias: string; state: 'checking' | 'free' | 'taken' | 'invalid' } | null

/** A datetime-local value (the browser's local time) as the ISO instant the API takes; '' → undefined. */
const isoOf = (local: string) => (local ? new Date(local).toISOString() : undefined)

export function CreateLinkForm({ onCreated }: { onCreated: () => void }) {
  const [url, setUrl] = useState('')
  const [alias, setAlias] = useState('')
  const [domain, setDomain] = useState('')
  const [domains, setDomains] = useState<string[]>([])
  const [password, setPassword] = useState('')
  const [expiration, setExpiration] = useState('')
  const [activation, setActivation] = useState('')
  const [availability, setAvailability] = useState<Availability>(null)
  const [created, setCreated] = useState<string | null>(null)
  const { busy, error, run } = useSubmit()

  useEffect(() => {
    api
      .GET('/api/v1/domains')
      .then((result) =>
        setDomains(
          must(result)
            .data.domains.filter((d) => d.verified)
            .map((d) => d.hostname),
        ),
      )
      // Without its custom domains the form still offers the default one.
      .catch(() => setDomains([]))
  }, [])

  useEffect(() => {
    const wanted = alias.trim()
    if (wanted === '') return setAvailability(null)
    if (!ALIAS.test(wanted)) return setAvailability({ alias: wanted, state: 'invalid' })
    setAvailability({ alias: wanted, state: 'checking' })
    let current = true
    const timer = setTimeout(async () => {
      try {
        const { exists } = must(await api.POST('/api/v1/alias/check', { body: { alias: wanted, ...(domain && { domain }) } }))
        if (current) setAvailability({ alias: wanted, state: exists ? 'taken' : 'free' })
      } catch {
        // A refused check (too short for the default domain, say) is shown by the create call's answer.
        if (current) setAvailability(null)
      }
    }, 300)
    return () => {
      current = false
      clearTimeout(timer)
    }
  }, [alias, domain])

  const submit = (event: Event) => {
    event.preventDefault()
    void run(async () => {
      const body = {
        url: url.trim(),
        ...(alias.trim() && { alias: alias.trim() }),
        ...(domain && { domain }),
        ...(password && { password }),
        ...(expiration && { expiration: isoOf(expiration) }),
        ...(activation && { activated_at: isoOf(activation) }),
      }
      const { data } = must(await api.POST('/api/v1/shorten', { body }))
      // Only an Agent's call is ever held for approval; the signed-in human's runs.
      if (!('short_url' in data)) throw new Error('The link was held for approval.')
      setCreated(data.short_url)
      setUrl('')
      setAlias('')
      setPassword('')
      setExpiration('')
      setActivation('')
      onCreated()
    })
  }

  return (
    <section aria-labelledby="create-title" class="card">
      <h2 id="create-title">Create a link</h2>
      <form onSubmit={submit}>
        <div class="field wide">
          <label for="create-url">Destination URL</label>
          <input id="create-url" type="url" required maxLength={2048} placeholder="https://example.com/page" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="create-alias">Alias (optional)</label>
          <input id="create-alias" maxLength={64} value={alias} aria-describedby="alias-state" onInput={(e) => setAlias(e.currentTarget.value)} />
          <span id="alias-state" class="hint" aria-live="polite">
            {availability?.state === 'checking' && 'Checking…'}
            {availability?.state === 'free' && `“${availability.alias}” is available`}
            {availability?.state === 'taken' && `“${availability.alias}” is taken`}
            {availability?.state === 'invalid' && 'Letters, digits, _ and - only'}
          </span>
        </div>
        <div class="field">
          <label for="create-domain">Domain</label>
          <select id="create-domain" value={domain} onChange={(e) => setDomain(e.currentTarget.value)}>
            <option value="">Default domain</option>
            {domains.map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="create-password">Password (optional)</label>
          <input id="create-password" type="password" autoComplete="new-password" maxLength={128} value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="create-expiration">Expires (optional)</label>
          <input id="create-expiration" type="datetime-local" value={expiration} onInput={(e) => setExpiration(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="create-activation">Active from (optional)</label>
          <input id="create-activation" type="datetime-local" value={activation} onInput={(e) => setActivation(e.currentTarget.value)} />
        </div>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create link'}
          </button>
        </div>
      </form>
      <ErrorNotice error={error} />
      {created && (
        <p class="success" role="status">
          Created <a href={created}>{created}</a> <CopyButton text={created} label={`Copy ${created}`} />
        </p>
      )}
    </section>
  )
}
