// The account's webhooks (docs/webhooks.md): list them and create one. The signing secret is in the
// create answer only, so it is shown once, here; each webhook has its own page (WebhookPage).
import { useEffect, useState } from 'preact/hooks'
import { api, must } from '../../api'
import { ShownOnce } from '../../components/Choices'
import { ErrorNotice, formatDate, Loading } from '../../components/ui'
import { useSubmit } from '../../lib/useSubmit'
import { BASE, Link } from '../../router'
import { choiceOf, eventList, eventsOf, ran, WEBHOOK_STATUS, type WebhookRecord } from './data'
import { EventsField } from './EventsField'

export const WEBHOOKS = `${BASE}/webhooks`

export function WebhooksPage() {
  const [webhooks, setWebhooks] = useState<WebhookRecord[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [created, setCreated] = useState<{ id: string; url: string; secret: string } | null>(null)

  const load = () =>
    api
      .GET('/api/v1/webhooks')
      .then((result) => {
        setWebhooks(must(result).data.webhooks)
        setError(null)
      })
      .catch(setError)
  useEffect(() => void load(), [])

  return (
    <>
      <h1>Webhooks</h1>
      <p>
        A webhook sends your account's events (a link created, changed, deleted…) to a URL of yours as they happen, signed the <a href="https://www.standardwebhooks.com/">Standard Webhooks</a> way so
        your receiver can check they come from here.
      </p>
      <CreateWebhookForm
        onCreated={(webhook) => {
          setCreated(webhook)
          void load()
        }}
      />
      {created && (
        <ShownOnce
          title="The signing secret of your new webhook"
          secret={created.secret}
          copyLabel="Copy the signing secret"
          kept="The service keeps it encrypted, to sign each delivery."
          onDone={() => setCreated(null)}
        >
          <p>
            Your receiver verifies each event with it. Send a test from <Link href={`${WEBHOOKS}/${created.id}`}>the webhook's page</Link>.
          </p>
        </ShownOnce>
      )}
      <section aria-labelledby="webhooks-title">
        <h2 id="webhooks-title">Your webhooks</h2>
        <ErrorNotice error={error} />
        {webhooks === null ? !error && <Loading what="your webhooks" /> : webhooks.length === 0 ? <p class="empty">No webhook yet: create one above.</p> : <WebhookTable webhooks={webhooks} />}
      </section>
    </>
  )
}

function CreateWebhookForm({ onCreated }: { onCreated: (webhook: { id: string; url: string; secret: string }) => void }) {
  const [url, setUrl] = useState('')
  const [description, setDescription] = useState('')
  const [choice, setChoice] = useState(choiceOf([]))
  const { busy, error, setError, run } = useSubmit()
  const submit = (event: Event) => {
    event.preventDefault()
    const events = eventsOf(choice)
    if (!events) return setError(new Error('Choose the events to send: tick one at least, or "All events".'))
    void run(async () => {
      const data = ran(must(await api.POST('/api/v1/webhooks', { body: { url: url.trim(), events, ...(description.trim() && { description: description.trim() }) } })).data)
      onCreated({ id: data.id, url: data.url, secret: data.secret })
      setUrl('')
      setDescription('')
      setChoice(choiceOf([]))
    })
  }
  return (
    <section aria-labelledby="create-webhook-title" class="card">
      <h2 id="create-webhook-title">Create a webhook</h2>
      <form onSubmit={submit}>
        <div class="field wide">
          <label for="webhook-url">Endpoint URL</label>
          <input
            id="webhook-url"
            type="url"
            required
            maxLength={2048}
            placeholder="https://hooks.example.com/links"
            aria-describedby="webhook-url-hint"
            value={url}
            onInput={(e) => setUrl(e.currentTarget.value)}
          />
          <span id="webhook-url-hint" class="hint">
            https, on a public host; events are POSTed here.
          </span>
        </div>
        <div class="field wide">
          <label for="webhook-description">Description</label>
          <input id="webhook-description" maxLength={500} placeholder="Mirror links into the CRM" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </div>
        <EventsField id="webhook-all-events" choice={choice} onChange={setChoice} />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create webhook'}
          </button>
        </div>
      </form>
      <ErrorNotice error={error} />
    </section>
  )
}

function WebhookTable({ webhooks }: { webhooks: WebhookRecord[] }) {
  return (
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">Your webhooks</caption>
        <thead>
          <tr>
            <th scope="col">Endpoint URL</th>
            <th scope="col">Events</th>
            <th scope="col">Status</th>
            <th scope="col">Description</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {webhooks.map((webhook) => (
            <tr key={webhook.id}>
              <th scope="row" class="destination">
                <Link href={`${WEBHOOKS}/${webhook.id}`}>{webhook.url}</Link>
              </th>
              <td class="scopes">{eventList(webhook.events)}</td>
              <td>
                <span class={`state ${webhook.status}`}>{WEBHOOK_STATUS[webhook.status]}</span>
              </td>
              <td>{webhook.description ?? <span class="muted">None</span>}</td>
              <td>{formatDate(webhook.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
