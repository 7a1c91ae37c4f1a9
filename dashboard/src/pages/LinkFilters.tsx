// The links list's filters and order: by tag, by domain, and the sort the API offers. Each change starts
// again from the first page (a cursor belongs to its filters and sort).
import { useEffect, useState } from 'preact/hooks'
import { api, must } from '../api'
import type { Tag } from '../tags/colours'

export type Sort = 'created_desc' | 'created_asc' | 'clicks_desc'
export type Filters = { tag: string; domain: string; sort: Sort }
export const NO_FILTERS: Filters = { tag: '', domain: '', sort: 'created_desc' }

const SORTS: Array<{ value: Sort; label: string }> = [
  { value: 'created_desc', label: 'Newest first' },
  { value: 'created_asc', label: 'Oldest first' },
  { value: 'clicks_desc', label: 'Most clicks first' },
]

/** The query parameters of GET /api/v1/links for these filters (the defaults left out). */
export function filterQuery(filters: Filters) {
  return {
    ...(filters.tag && { tag: Number(filters.tag) }),
    ...(filters.domain && { domain: filters.domain }),
    ...(filters.sort !== 'created_desc' && { sort: filters.sort }),
  }
}

export function LinkFilters(props: { filters: Filters; tags: Tag[] | null; onChange: (filters: Filters) => void }) {
  const { filters, onChange } = props
  const [domains, setDomains] = useState<string[]>([])
  useEffect(() => {
    api
      .GET('/api/v1/domains')
      .then((result) => setDomains(must(result).data.domains.map((d) => d.hostname)))
      // Without the custom domains the filter still offers "All domains".
      .catch(() => setDomains([]))
  }, [])

  return (
    <>
      <label>
        Tag{' '}
        <select value={filters.tag} onChange={(e) => onChange({ ...filters, tag: e.currentTarget.value })}>
          <option value="">All tags</option>
          {(props.tags ?? []).map((tag) => (
            <option key={tag.id} value={String(tag.id)}>
              {tag.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Domain{' '}
        <select value={filters.domain} onChange={(e) => onChange({ ...filters, domain: e.currentTarget.value })}>
          <option value="">All domains</option>
          {domains.map((hostname) => (
            <option key={hostname} value={hostname}>
              {hostname}
            </option>
          ))}
        </select>
      </label>
      <label>
        Sort{' '}
        <select value={filters.sort} onChange={(e) => onChange({ ...filters, sort: e.currentTarget.value as Sort })}>
          {SORTS.map((sort) => (
            <option key={sort.value} value={sort.value}>
              {sort.label}
            </option>
          ))}
        </select>
      </label>
    </>
  )
}
