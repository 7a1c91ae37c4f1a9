// The links list's filters and order: by tag, by domain, and the sort the API offers. Each change starts
// again from the first page (a cursor belongs to its filters and sort).
import { useEffect, useState } from 'preact/hooks'
import type { ComponentChildren } from 'preact'
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
      <FilterSelect id="filter-tag" label="Tag" value={filters.tag} onChange={(tag) => onChange({ ...filters, tag })}>
        <option value="">All tags</option>
        {(props.tags ?? []).map((tag) => (
          <option key={tag.id} value={String(tag.id)}>
            {tag.name}
          </option>
        ))}
      </FilterSelect>
      <FilterSelect id="filter-domain" label="Domain" value={filters.domain} onChange={(domain) => onChange({ ...filters, domain })}>
        <option value="">All domains</option>
        {domains.map((hostname) => (
          <option key={hostname} value={hostname}>
            {hostname}
          </option>
        ))}
      </FilterSelect>
      <FilterSelect id="filter-sort" label="Sort" value={filters.sort} onChange={(sort) => onChange({ ...filters, sort: sort as Sort })}>
        {SORTS.map((sort) => (
          <option key={sort.value} value={sort.value}>
            {sort.label}
          </option>
        ))}
      </FilterSelect>
    </>
  )
}

/** A labelled <select> of the toolbar (label and control kept together when the row wraps). */
function FilterSelect(props: { id: string; label: string; value: string; onChange: (value: string) => void; children: ComponentChildren }) {
  return (
    <span class="filter">
      <label for={props.id}>{props.label}</label>
      <select id={props.id} value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
        {props.children}
      </select>
    </span>
  )
}
