// The links: create, search, filter by tag or domain, sort, page through, copy, tag, delete.
import { useEffect, useState } from 'preact/hooks'
import { api, must } from '../api'
import { ConfirmDialog, CopyButton, ErrorNotice, formatDate, Loading } from '../components/ui'
import { LinkTagsCell, useLinkTags, type LinkTagState, type TagChange } from '../tags/linkTags'
import type { Tag } from '../tags/colours'
import { useTags } from '../tags/useTags'
import { CreateLinkForm } from './CreateLinkForm'
import { Link } from '../router'
import { filterQuery, LinkFilters, NO_FILTERS, type Filters } from './LinkFilters'
import { linkPagePath } from './LinkPage'
import type { LinkRecord } from '../types'

const PAGE_SIZE = 20

export function LinksPage() {
  const [search, setSearch] = useState('')
  const [query, setQuery] = useState('')
  const [filters, setFilters] = useState<Filters>(NO_FILTERS)
  const { tags } = useTags()
  // The cursors of the pages before this one, to go back; null is the first page.
  const [cursors, setCursors] = useState<Array<string | null>>([null])
  const [page, setPage] = useState<{ links: LinkRecord[]; total: number; next: string | null } | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [doomed, setDoomed] = useState<LinkRecord | null>(null)
  const [reload, setReload] = useState(0)
  const cursor = cursors[cursors.length - 1] ?? null

  useEffect(() => {
    const timer = setTimeout(() => {
      setQuery(search.trim())
      setCursors([null])
    }, 250)
    return () => clearTimeout(timer)
  }, [search])

  useEffect(() => {
    let current = true
    setError(null)
    api
      .GET('/api/v1/links', { params: { query: { limit: PAGE_SIZE, ...(query && { search: query }), ...filterQuery(filters), ...(cursor && { cursor }) } } })
      .then((result) => {
        if (!current) return
        const { links, pagination } = must(result).data
        setPage({ links, total: pagination.total, next: pagination.next_cursor ?? null })
      })
      .catch((failure) => current && setError(failure))
    return () => {
      current = false
    }
  }, [query, filters, cursor, reload])

  const linkTags = useLinkTags(page?.links)
  const filter = (next: Filters) => {
    setFilters(next)
    setCursors([null])
  }

  const remove = async (link: LinkRecord) => {
    setDoomed(null)
    try {
      must(await api.DELETE('/api/v1/links/{alias}', { params: { path: { alias: link.alias }, query: { domain: link.domain } } }))
      linkTags.forget(link)
      setReload((n) => n + 1)
    } catch (failure) {
      setError(failure)
    }
  }

  return (
    <>
      <h1>Links</h1>
      <CreateLinkForm
        onCreated={() => {
          setCursors([null])
          setReload((n) => n + 1)
        }}
      />
      <section aria-labelledby="list-title">
        <h2 id="list-title">Your links</h2>
        <div class="toolbar">
          <label>
            Search links <input type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} placeholder="alias or destination" />
          </label>
          <LinkFilters filters={filters} tags={tags} onChange={filter} />
          {page && <span aria-live="polite">{page.total.toLocaleString()} links</span>}
        </div>
        <ErrorNotice error={error} />
        {!page ? (
          <Loading what="links" />
        ) : page.links.length === 0 ? (
          <p class="empty">{query ? 'No link matches this search.' : filters.tag || filters.domain ? 'No link matches these filters.' : 'No links yet: create your first one above.'}</p>
        ) : (
          <LinkTable links={page.links} onDelete={setDoomed} tags={{ all: tags ?? [], of: linkTags.tagsOf, update: linkTags.update }} />
        )}
        <nav class="pager" aria-label="Pages of links">
          <button type="button" disabled={cursors.length === 1} onClick={() => setCursors((c) => c.slice(0, -1))}>
            Previous page
          </button>
          <button type="button" disabled={!page?.next} onClick={() => page?.next && setCursors((c) => [...c, page.next])}>
            Next page
          </button>
        </nav>
      </section>
      <ConfirmDialog open={doomed !== null} title="Delete this link?" confirm="Delete link" onConfirm={() => doomed && remove(doomed)} onCancel={() => setDoomed(null)}>
        <p>
          <strong>{doomed?.short_url}</strong> will stop redirecting at once and its alias becomes free. This cannot be undone.
        </p>
      </ConfirmDialog>
    </>
  )
}

type RowTags = { all: Tag[]; of: (link: LinkRecord) => LinkTagState | undefined; update: (link: LinkRecord, change: TagChange) => void }

function LinkTable({ links, onDelete, tags }: { links: LinkRecord[]; onDelete: (link: LinkRecord) => void; tags: RowTags }) {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Short link</th>
            <th scope="col">Destination</th>
            <th scope="col">Tags</th>
            <th scope="col">Created</th>
            <th scope="col">Expires</th>
            <th scope="col" class="num">
              Clicks
            </th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {links.map((link) => (
            <tr key={`${link.domain}/${link.alias}`}>
              <th scope="row">
                <a href={link.short_url} target="_blank" rel="noopener">
                  {link.short_url.replace(/^https?:\/\//, '')}
                </a>
                {link.has_password && <span class="badge">password</span>}
              </th>
              <td class="destination">{link.full_url}</td>
              <td>
                <LinkTagsCell link={link} state={tags.of(link)} allTags={tags.all} onChange={(change) => tags.update(link, change)} />
              </td>
              <td>{formatDate(link.created_at)}</td>
              <td>{formatDate(link.expires_at)}</td>
              <td class="num">{(link.clicks ?? 0).toLocaleString()}</td>
              <td class="row-actions">
                <CopyButton text={link.short_url} label={`Copy ${link.short_url}`} />
                <Link class="button small" href={linkPagePath(link.domain, link.alias)} aria-label={`Statistics of ${link.short_url}`}>
                  Statistics
                </Link>
                <button type="button" class="small danger" aria-label={`Delete ${link.short_url}`} onClick={() => onDelete(link)}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
