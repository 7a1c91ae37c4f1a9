// Changing a link (PATCH /api/v1/links/{alias}): destination, password, expiry, activation. Only what the
// person changed is sent (fields left out keep their value; null clears), so saving the destination never
// touches the password. Every refusal shows the API's hint.
import { useState } from 'preact/hooks'
import { api, must } from '../api'
import { ErrorNotice } from '../components/ui'
import { useSubmit } from '../lib/useSubmit'
import type { LinkDetails } from '../types'

/** An ISO instant as a datetime-local value in the browser's time zone ('' for none). */
function localOf(iso: string | null | undefined): string {
  if (!iso) return ''
  const date = new Date(iso)
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16)
}
const isoOf = (local: string) => new Date(local).toISOString()

type Body = { url?: string; password?: string | null; expiration?: string | null; activated_at?: string | null }

export function EditLinkForm({ link, onSaved }: { link: LinkDetails; onSaved: (link: LinkDetails) => void }) {
  const [url, setUrl] = useState(link.full_url)
  const [password, setPassword] = useState('')
  const [removePassword, setRemovePassword] = useState(false)
  const [expiration, setExpiration] = useState(localOf(link.expires_at))
  const [neverExpires, setNeverExpires] = useState(false)
  const [activation, setActivation] = useState('')
  const [activeNow, setActiveNow] = useState(false)
  const [saved, setSaved] = useState(false)
  const { busy, error, setError, run } = useSubmit()

  const changes = (): Body => ({
    ...(url.trim() !== link.full_url && { url: url.trim() }),
    ...(removePassword ? { password: null } : password && { password }),
    ...(neverExpires ? { expiration: null } : expiration && expiration !== localOf(link.expires_at) && { expiration: isoOf(expiration) }),
    ...(activeNow ? { activated_at: null } : activation && { activated_at: isoOf(activation) }),
  })

  const submit = (event: Event) => {
    event.preventDefault()
    setSaved(false)
    const body = changes()
    if (Object.keys(body).length === 0) return setError(new Error('Nothing changed: edit a field first.'))
    void run(async () => {
      const { data } = must(await api.PATCH('/api/v1/links/{alias}', { params: { path: { alias: link.alias }, query: { domain: link.domain } }, body }))
      // Only an Agent's call is ever held for approval; the signed-in human's runs.
      if (!('short_url' in data)) throw new Error('The change was held for approval.')
      setPassword('')
      setRemovePassword(false)
      setNeverExpires(false)
      setActivation('')
      setActiveNow(false)
      setExpiration(localOf(data.expires_at))
      setSaved(true)
      onSaved(data)
    })
  }

  return (
    <section aria-labelledby="edit-title" class="card">
      <h2 id="edit-title">Edit</h2>
      <form onSubmit={submit}>
        <div class="field wide">
          <label for="edit-url">Destination URL</label>
          <input id="edit-url" type="url" required maxLength={2048} value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="edit-password">{link.has_password ? 'New password' : 'Password'}</label>
          <input id="edit-password" type="password" autoComplete="new-password" maxLength={128} disabled={removePassword} value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
          {link.has_password && (
            <label class="check">
              <input type="checkbox" checked={removePassword} onChange={(e) => setRemovePassword(e.currentTarget.checked)} /> Remove the password
            </label>
          )}
        </div>
        <div class="field">
          <label for="edit-expiration">Expires</label>
          <input id="edit-expiration" type="datetime-local" disabled={neverExpires} value={expiration} onInput={(e) => setExpiration(e.currentTarget.value)} />
          <label class="check">
            <input type="checkbox" checked={neverExpires} onChange={(e) => setNeverExpires(e.currentTarget.checked)} /> Never expires
          </label>
        </div>
        <div class="field">
          <label for="edit-activation">Active from</label>
          <input id="edit-activation" type="datetime-local" aria-describedby="edit-activation-hint" disabled={activeNow} value={activation} onInput={(e) => setActivation(e.currentTarget.value)} />
          <span id="edit-activation-hint" class="hint">
            Left empty, the activation time stays as it is.
          </span>
          <label class="check">
            <input type="checkbox" checked={activeNow} onChange={(e) => setActiveNow(e.currentTarget.checked)} /> Active at once
          </label>
        </div>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Saving…' : 'Save changes'}
          </button>
        </div>
      </form>
      <ErrorNotice error={error} />
      {saved && (
        <p class="success" role="status">
          Saved. The short link follows the change within a second.
        </p>
      )}
    </section>
  )
}
