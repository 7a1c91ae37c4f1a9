// One link at /app/links/<domain>/<alias>: its facts, the edit form, its QR code, its routing and its
// statistics.
import { useEffect, useState } from 'preact/hooks'
import { api, must } from '../api'
import { CopyButton, ErrorNotice, formatDate, Loading } from '../components/ui'
import { BASE, Link } from '../router'
import { EditLinkForm } from './EditLinkForm'
import { LinkStats } from './LinkStats'
import { QrPanel } from './QrPanel'
import { RoutingPanel } from './routing/RoutingPanel'
import type { LinkDetails } from '../types'

/** The address of a link's page (the domain first: an alias is unique only within its domain). */
export const linkPagePath = (domain: string, alias: string) => `${BASE}/links/${encodeURIComponent(domain)}/${encodeURIComponent(alias)}`

export function LinkPage({ domain, alias }: { domain: string; alias: string }) {
  const [link, setLink] = useState<LinkDetails | null>(null)
  // The account's plan, from the same answer: the routing panel asks nothing a Free account is refused.
  const [plan, setPlan] = useState<string | undefined>(undefined)
  const [error, setError] = useState<unknown>(null)
  // Bumped by "Refresh statistics", so the all-time count above agrees with the statistics below.
  const [version, setVersion] = useState(0)
  useEffect(() => {
    let current = true
    setError(null)
    api
      .GET('/api/v1/links/{alias}', { params: { path: { alias }, query: { domain } } })
      .then((result) => {
        if (!current) return
        const answer = must(result)
        setLink(answer.data)
        setPlan(answer.meta.account_type)
      })
      .catch((failure) => current && setError(failure))
    return () => {
      current = false
    }
  }, [domain, alias, version])

  const back = (
    <p>
      <Link href={BASE}>← All links</Link>
    </p>
  )
  if (!link) {
    return (
      <>
        {back}
        <h1>Link {alias}</h1>
        {error ? <ErrorNotice error={error} /> : <Loading what="the link" />}
      </>
    )
  }
  return (
    <>
      {back}
      <h1>{link.short_url.replace(/^https?:\/\//, '')}</h1>
      <section aria-labelledby="facts-title" class="card">
        <h2 id="facts-title">Details</h2>
        <dl class="facts">
          <dt>Short link</dt>
          <dd>
            <a href={link.short_url} target="_blank" rel="noopener">
              {link.short_url}
            </a>{' '}
            <CopyButton text={link.short_url} label={`Copy ${link.short_url}`} />
          </dd>
          <dt>Destination</dt>
          <dd class="destination">{link.full_url}</dd>
          <dt>Created</dt>
          <dd>{formatDate(link.created_at)}</dd>
          <dt>Expires</dt>
          <dd>{link.expires_at ? formatDate(link.expires_at) : 'Never'}</dd>
          <dt>Password</dt>
          <dd>{link.has_password ? 'Yes: visitors enter it before the redirect' : 'No'}</dd>
          <dt>Clicks of all time</dt>
          <dd>
            {(link.clicks ?? 0).toLocaleString()} (last {formatDate(link.last_clicked_at)})
          </dd>
        </dl>
      </section>
      <div class="link-columns">
        <EditLinkForm link={link} onSaved={setLink} />
        <QrPanel alias={link.alias} domain={link.domain} shortUrl={link.short_url} />
      </div>
      <RoutingPanel alias={link.alias} domain={link.domain} plan={plan} />
      <LinkStats alias={link.alias} domain={link.domain} onRefresh={() => setVersion((n) => n + 1)} />
    </>
  )
}
