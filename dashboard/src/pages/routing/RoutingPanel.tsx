// A link's routing (GET, PUT and DELETE /api/v1/links/{alias}/routing): its rules and A/B test edited as
// a whole and saved with one PUT (the API replaces the routing), removed after confirming, and the
// results of each route. A refusal shows the API's hint with the place of the form it names, and marks
// that field. Routing is Pro's: a Free account sees what it is and the way to upgrade, and the panel
// makes no call that would be refused.
import { useEffect, useState } from 'preact/hooks'
import { api, ApiFailure, describeFailure, must } from '../../api'
import { ConfirmDialog, ErrorNotice, Loading } from '../../components/ui'
import { useSubmit } from '../../lib/useSubmit'
import { BASE, Link } from '../../router'
import type { RoutingData } from '../../types'
import { AbEditor } from './AbEditor'
import { bodyOf, draftOf, placeOf, placeWords, type Place, type RoutingDraft } from './draft'
import { RoutingResults } from './RoutingResults'
import { RulesEditor } from './RulesEditor'

const isProRequired = (error: unknown) => error instanceof ApiFailure && error.code === 'PRO_REQUIRED'

/** `plan`: the account's, from the link's answer (meta.account_type); a Free account is not asked. */
export function RoutingPanel({ alias, domain, plan }: { alias: string; domain: string; plan: string | undefined }) {
  const [saved, setSaved] = useState<RoutingData | null>(null)
  const [draft, setDraft] = useState<RoutingDraft | null>(null)
  const [loadError, setLoadError] = useState<unknown>(null)
  const [proRequired, setProRequired] = useState(plan === 'free')
  const [confirming, setConfirming] = useState(false)
  const [done, setDone] = useState('')
  // Bumped by a save or a removal, so the results list the routes configured now.
  const [changes, setChanges] = useState(0)
  const { busy, error, run } = useSubmit()

  useEffect(() => {
    if (plan === 'free') return
    let current = true
    api
      .GET('/api/v1/links/{alias}/routing', { params: { path: { alias }, query: { domain } } })
      .then((answer) => {
        if (!current) return
        const data = must(answer).data
        setSaved(data)
        setDraft(draftOf(data))
      })
      .catch((failure) => current && (isProRequired(failure) ? setProRequired(true) : setLoadError(failure)))
    return () => {
      current = false
    }
  }, [alias, domain, plan])

  const title = <h2 id="routing-title">Routing</h2>
  if (proRequired) {
    return (
      <section aria-labelledby="routing-title" class="card">
        {title}
        <div class="offer">
          <p>
            Routing is a Pro feature. It sends each visitor to the destination that suits them (by device, country, language, query parameter, address or time) and splits traffic between destinations
            in A/B tests, with the results of every route.
          </p>
          <p>
            <Link href={`${BASE}/account`}>Upgrade to Pro for routing</Link>
          </p>
        </div>
      </section>
    )
  }
  if (!saved || !draft) {
    return (
      <section aria-labelledby="routing-title" class="card">
        {title}
        {loadError ? <ErrorNotice error={loadError} /> : <Loading what="the routing" />}
      </section>
    )
  }

  const applied = (data: RoutingData, message: string) => {
    setSaved(data)
    setDraft(draftOf(data))
    setDone(message)
    setChanges((n) => n + 1)
  }
  const save = (event: Event) => {
    event.preventDefault()
    setDone('')
    void run(async () => {
      const { data } = must(await api.PUT('/api/v1/links/{alias}/routing', { params: { path: { alias }, query: { domain } }, body: bodyOf(draft) }))
      // Only an Agent's call is ever held for approval; the signed-in human's runs.
      if (!('rules' in data)) throw new Error('The change was held for approval.')
      applied(data, 'Saved. The short link follows the new routing within a second.')
    })
  }
  const remove = () => {
    setConfirming(false)
    setDone('')
    void run(async () => {
      must(await api.DELETE('/api/v1/links/{alias}/routing', { params: { path: { alias }, query: { domain } } }))
      applied({ rules: [], ab: null }, "Routing removed: every visitor goes to the link's URL.")
    })
  }

  const place: Place | null = error instanceof ApiFailure && error.hint ? placeOf(error.hint) : null
  const hasRouting = saved.rules.length > 0 || saved.ab !== null
  const unsaved = JSON.stringify(bodyOf(draft)) !== JSON.stringify(bodyOf(draftOf(saved)))
  return (
    <section aria-labelledby="routing-title" class="card">
      {title}
      <p>The first rule whose conditions all match gives the destination; otherwise a running A/B test picks a variant; otherwise the visitor goes to the link's URL.</p>
      <form class="routing" onSubmit={save} aria-label="Routing rules and A/B test">
        <RulesEditor rules={draft.rules} onChange={(rules) => setDraft({ ...draft, rules })} invalid={place} />
        <AbEditor ab={draft.ab} onChange={(ab) => setDraft({ ...draft, ab })} invalid={place} />
        <div class="actions routing-actions">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Saving…' : 'Save routing'}
          </button>
          <button type="button" class="danger" disabled={busy || !hasRouting} onClick={() => setConfirming(true)}>
            Remove routing
          </button>
          {unsaved && <span class="hint">Unsaved changes</span>}
        </div>
      </form>
      {error !== null && (
        <p class="error" role="alert">
          {place && <strong>{placeWords(place)}: </strong>}
          {describeFailure(error)}
        </p>
      )}
      {done && (
        <p class="success" role="status">
          {done}
        </p>
      )}
      <RoutingResults alias={alias} domain={domain} reload={changes} />
      <ConfirmDialog open={confirming} title="Remove this link's routing?" confirm="Remove routing" onConfirm={remove} onCancel={() => setConfirming(false)}>
        <p>Every rule and the A/B test are removed, and every visitor goes to the link's URL. The results of past clicks stay in the statistics.</p>
      </ConfirmDialog>
    </section>
  )
}
