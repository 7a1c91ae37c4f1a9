// The account's API keys: list, create (full access, or held to a few scopes), revoke after confirming.
// A new key is in the create answer only (the service keeps its hash), so it is shown once, here.
import { useEffect, useState } from 'preact/hooks'
import { api, must, type Schemas } from '../api'
import { GRANTABLE_SCOPES, scopeList } from '../access'
import { Choices, ShownOnce } from '../components/Choices'
import { ConfirmDialog, ErrorNotice, formatDate, Loading } from '../components/ui'
import { useSubmit } from '../lib/useSubmit'
import { useOperator } from './moderation/operator'

type KeyRecord = Schemas['ApiKeyListResponse']['data']['keys'][number]

export function KeysPanel() {
  const [keys, setKeys] = useState<KeyRecord[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null)
  const [doomed, setDoomed] = useState<KeyRecord | null>(null)

  const load = () =>
    api
      .GET('/api/v1/account/keys')
      .then((result) => setKeys(must(result).data.keys))
      .catch(setError)
  useEffect(() => void load(), [])

  const revoke = async (key: KeyRecord) => {
    setDoomed(null)
    setError(null)
    try {
      must(await api.DELETE('/api/v1/account/keys/{keyId}', { params: { path: { keyId: key.id } } }))
      await load()
    } catch (failure) {
      setError(failure)
    }
  }

  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      <p>Programs call the API with a key. Give each program its own, held to the scopes it needs, so you can revoke one without the others.</p>
      <CreateKeyForm
        onCreated={(key) => {
          setCreated(key)
          load()
        }}
      />
      {created && <ShownOnce title={`Your new key “${created.name}”`} secret={created.key} copyLabel="Copy the new key" onDone={() => setCreated(null)} />}
      <ErrorNotice error={error} />
      {keys === null ? !error && <Loading what="your keys" /> : keys.length === 0 ? <p class="empty">No key: create one above.</p> : <KeyTable keys={keys} onRevoke={setDoomed} />}
      <ConfirmDialog open={doomed !== null} title="Revoke this key?" confirm="Revoke key" onConfirm={() => doomed && revoke(doomed)} onCancel={() => setDoomed(null)}>
        <p>
          Programs using <strong>{doomed?.name}</strong> (<code>{doomed?.prefix}…</code>) are refused from their next request. This cannot be undone.
        </p>
      </ConfirmDialog>
    </section>
  )
}

/** What an operator may give a key besides the OAuth scopes: the admin API, which is no OAuth scope. */
const ADMIN_CHOICE = { admin: 'the admin API (moderation), for operators only' }

function CreateKeyForm({ onCreated }: { onCreated: (key: { name: string; key: string }) => void }) {
  const operator = useOperator()
  const [name, setName] = useState('')
  const [scopes, setScopes] = useState<string[]>([])
  const { busy, error, run } = useSubmit()
  const submit = (event: Event) => {
    event.preventDefault()
    void run(async () => {
      // No scope ticked is full access: the API takes an absent list as that (an empty one is refused).
      const { data } = must(await api.POST('/api/v1/account/keys', { body: { name: name.trim(), ...(scopes.length > 0 && { scopes }) } }))
      onCreated({ name: data.name, key: data.key })
      setName('')
      setScopes([])
    })
  }
  return (
    <form class="card" onSubmit={submit} aria-label="Create an API key">
      <div class="field">
        <label for="key-name">Key name</label>
        <input id="key-name" required maxLength={64} placeholder="CI deploys" value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </div>
      <Choices
        legend="Scopes"
        hint="None ticked: full access, including managing keys and Agents."
        options={operator ? { ...GRANTABLE_SCOPES, ...ADMIN_CHOICE } : GRANTABLE_SCOPES}
        chosen={scopes}
        onChange={setScopes}
      />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Creating…' : 'Create key'}
        </button>
      </div>
      <ErrorNotice error={error} />
    </form>
  )
}

function KeyTable({ keys, onRevoke }: { keys: KeyRecord[]; onRevoke: (key: KeyRecord) => void }) {
  return (
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">Your API keys</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Starts with</th>
            <th scope="col">Scopes</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={key.id}>
              <th scope="row">{key.name}</th>
              <td>
                <code>{key.prefix}…</code>
              </td>
              <td class="scopes">{scopeList(key.scopes)}</td>
              <td>{formatDate(key.created_at)}</td>
              <td>{key.last_used_at ? formatDate(key.last_used_at) : 'Never'}</td>
              <td class="row-actions">
                <button type="button" class="small danger" aria-label={`Revoke ${key.name}`} onClick={() => onRevoke(key)}>
                  Revoke
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
