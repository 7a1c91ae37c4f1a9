// One webhook: what it sends where, a test event and the delivery it made, changes (URL, events,
// description, on or off), its deliveries, a new secret (the old one signs beside it for 24 hours) and
// deletion. The secret questions and the deletion share the page's one confirm dialog.
import type { JSX } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { ApiFailure, api, must } from '../../api'
import { ShownOnce } from '../../components/Choices'
import { ConfirmDialog, ErrorNotice, formatDate, Loading } from '../../components/ui'
import { useSubmit } from '../../lib/useSubmit'
import { Link, navigate } from '../../router'
import { choiceOf, type Delivery, eventList, eventsOf, outcome, ran, WEBHOOK_STATUS, type WebhookRecord } from './data'
import { Deliveries, type DeliveriesState, useDeliveries } from './Deliveries'
import { EventsField } from './EventsField'
import { WEBHOOKS } from './WebhooksPage'

export function WebhookPage({ webhookId }: { webhookId: string }) {
  const [webhook, setWebhook] = useState<WebhookRecord | null>(null)
  const [error, setError] = useState<unknown>(null)
  useEffect(() => {
    api
      .GET('/api/v1/webhooks/{id}', { params: { path: { id: webhookId } } })
      .then((result) => setWebhook(must(result).data))
      .catch(setError)
  }, [webhookId])

  const back = <Link href={WEBHOOKS}>All webhooks</Link>
  if (error instanceof ApiFailure && error.status === 404)
    return (
      <>
        <h1>Webhook not found</h1>
        <p>
          This account has no webhook {webhookId}. {back}
        </p>
      </>
    )
  if (!webhook) return error ? <ErrorNotice error={error} /> : <Loading what="the webhook" />
  return <WebhookView webhook={webhook} back={back} onSaved={setWebhook} />
}

/** The page of a webhook found: its deliveries are asked for only then (another account's is not found). */
function WebhookView({ webhook, back, onSaved }: { webhook: WebhookRecord; back: JSX.Element; onSaved: (webhook: WebhookRecord) => void }) {
  const deliveries = useDeliveries(webhook.id)
  const active = webhook.status === 'active'
  return (
    <>
      <p>{back}</p>
      <h1 class="webhook-title">{webhook.url}</h1>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <span class={`state ${webhook.status}`}>{WEBHOOK_STATUS[webhook.status]}</span>
        </dd>
        <dt>Events</dt>
        <dd>{eventList(webhook.events)}</dd>
        <dt>Description</dt>
        <dd>{webhook.description ?? <span class="muted">None</span>}</dd>
        <dt>Created</dt>
        <dd>{formatDate(webhook.created_at)}</dd>
      </dl>
      <SendTest webhookId={webhook.id} active={active} deliveries={deliveries} />
      <EditWebhook webhook={webhook} onSaved={onSaved} />
      <Deliveries webhookId={webhook.id} state={deliveries} canSend={active} />
      <SecretAndDeletion webhook={webhook} />
    </>
  )
}

/** A ping to this endpoint alone, and how its delivery went, followed as the deliveries list refreshes. */
function SendTest({ webhookId, active, deliveries }: { webhookId: string; active: boolean; deliveries: DeliveriesState }) {
  const [sent, setSent] = useState<Delivery | null>(null)
  const { busy, error, run } = useSubmit()
  const send = () => {
    setSent(null)
    void run(async () => {
      setSent(must(await api.POST('/api/v1/webhooks/{id}/test', { params: { path: { id: webhookId } } })).data.delivery)
      deliveries.showNewest()
    })
  }
  const latest = sent && (deliveries.page?.deliveries.find((d) => d.id === sent.id) ?? sent)
  return (
    <section aria-labelledby="test-title" class="card">
      <h2 id="test-title">Send a test</h2>
      <p>
        Sends a <code>ping</code> event to this endpoint alone, signed like every event, to check that your receiver gets and verifies it.
      </p>
      <div class="actions">
        <button type="button" class="primary" disabled={busy || !active} onClick={send}>
          {busy ? 'Sending…' : 'Send a test event'}
        </button>
      </div>
      {!active && <p class="hint">A disabled webhook sends nothing: enable it below first.</p>}
      <ErrorNotice error={error} />
      <p class="success" role="status">
        {latest && (
          <>
            The test <code>{latest.event_id}</code> {outcome(latest)}
          </>
        )}
      </p>
    </section>
  )
}

/** Only what changed is sent (PATCH); the form then shows the webhook as the API answered it. */
function EditWebhook({ webhook, onSaved }: { webhook: WebhookRecord; onSaved: (webhook: WebhookRecord) => void }) {
  const [url, setUrl] = useState(webhook.url)
  const [description, setDescription] = useState(webhook.description ?? '')
  const [choice, setChoice] = useState(choiceOf(webhook.events))
  const [active, setActive] = useState(webhook.status === 'active')
  const [saved, setSaved] = useState(false)
  const { busy, error, setError, run } = useSubmit()

  const submit = (event: Event) => {
    event.preventDefault()
    setSaved(false)
    const events = eventsOf(choice)
    if (!events) return setError(new Error('Choose the events to send: tick one at least, or "All events".'))
    const status: WebhookRecord['status'] = active ? 'active' : 'disabled'
    const body = {
      ...(url.trim() !== webhook.url && { url: url.trim() }),
      ...(description.trim() !== (webhook.description ?? '') && { description: description.trim() || null }),
      ...(eventList(events) !== eventList(webhook.events) && { events }),
      ...(status !== webhook.status && { status }),
    }
    if (Object.keys(body).length === 0) return setError(new Error('Nothing changed: edit a field first.'))
    void run(async () => {
      onSaved(ran(must(await api.PATCH('/api/v1/webhooks/{id}', { params: { path: { id: webhook.id } }, body })).data))
      setSaved(true)
    })
  }

  return (
    <section aria-labelledby="edit-webhook-title" class="card">
      <h2 id="edit-webhook-title">Edit</h2>
      <form onSubmit={submit}>
        <div class="field wide">
          <label for="edit-webhook-url">Endpoint URL</label>
          <input id="edit-webhook-url" type="url" required maxLength={2048} value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        </div>
        <div class="field wide">
          <label for="edit-webhook-description">Description</label>
          <input id="edit-webhook-description" maxLength={500} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </div>
        <EventsField id="edit-webhook-all-events" choice={choice} onChange={setChoice} />
        <div class="field wide">
          <label class="check">
            <input type="checkbox" checked={active} aria-describedby="edit-webhook-active-hint" onChange={(e) => setActive(e.currentTarget.checked)} /> Active: send events to this endpoint
          </label>
          <span id="edit-webhook-active-hint" class="hint">
            Disabled, it is sent nothing and its pending deliveries fail.
          </span>
        </div>
        <div class="actions">
          <button type="submit" disabled={busy}>
            {busy ? 'Saving…' : 'Save changes'}
          </button>
        </div>
      </form>
      <ErrorNotice error={error} />
      {saved && (
        <p class="success" role="status">
          Saved.
        </p>
      )}
    </section>
  )
}

/** A new signing secret (shown once) and deletion: both asked first, in the page's one dialog. */
function SecretAndDeletion({ webhook }: { webhook: WebhookRecord }) {
  // The question stays set while the dialog closes, so its words do not change under the closing dialog.
  const [question, setQuestion] = useState<'rotate' | 'delete'>('rotate')
  const [open, setOpen] = useState(false)
  const [secret, setSecret] = useState<string | null>(null)
  const rotation = useSubmit()
  const deletion = useSubmit({ leavesPage: true })
  const ask = (what: 'rotate' | 'delete') => {
    setQuestion(what)
    setOpen(true)
  }
  const confirm = () => {
    setOpen(false)
    if (question === 'rotate')
      void rotation.run(async () => {
        setSecret(ran(must(await api.POST('/api/v1/webhooks/{id}/rotate-secret', { params: { path: { id: webhook.id } } })).data).secret)
      })
    if (question === 'delete')
      void deletion.run(async () => {
        must(await api.DELETE('/api/v1/webhooks/{id}', { params: { path: { id: webhook.id } } }))
        navigate(WEBHOOKS)
      })
  }
  return (
    <>
      <section aria-labelledby="secret-title">
        <h2 id="secret-title">Signing secret</h2>
        <p>Rotate it when it may have leaked or someone who knew it left. For 24 hours the old secret keeps signing beside the new one, so your receiver accepts events while you switch it over.</p>
        <button type="button" disabled={rotation.busy} onClick={() => ask('rotate')}>
          {rotation.busy ? 'Rotating…' : 'Rotate secret'}
        </button>
        <ErrorNotice error={rotation.error} />
        {secret && (
          <ShownOnce
            title="The new signing secret"
            secret={secret}
            copyLabel="Copy the new signing secret"
            kept="The service keeps it encrypted, to sign each delivery."
            onDone={() => setSecret(null)}
          >
            <p>The old secret keeps signing beside it for 24 hours (each event carries both signatures); after that only this one does.</p>
          </ShownOnce>
        )}
      </section>
      <section aria-labelledby="delete-title">
        <h2 id="delete-title">Delete</h2>
        <button type="button" class="danger" disabled={deletion.busy} onClick={() => ask('delete')}>
          Delete webhook
        </button>
        <ErrorNotice error={deletion.error} />
      </section>
      <ConfirmDialog
        open={open}
        title={question === 'delete' ? 'Delete this webhook?' : 'Rotate the signing secret?'}
        confirm={question === 'delete' ? 'Delete webhook' : 'Rotate secret'}
        onConfirm={confirm}
        onCancel={() => setOpen(false)}
      >
        {question === 'delete' ? (
          <p>
            Nothing more is sent to <strong>{webhook.url}</strong>, and its pending deliveries are dropped. This cannot be undone.
          </p>
        ) : (
          <p>A new secret is made and shown once. The old one keeps signing beside it for 24 hours, then stops: give your receiver the new one within that time.</p>
        )}
      </ConfirmDialog>
    </>
  )
}
