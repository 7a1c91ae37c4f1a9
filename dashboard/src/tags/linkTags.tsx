// Each listed link's tags, and the per-row menu that assigns and removes them.
//
// The link list does not carry tags and the API has no "tags of many links" call, only
// GET /api/v1/links/{alias}/tags: so the tags are fetched for the visible page only (at most one page of
// links), in parallel, and kept per link while the page is open, so paging back, sorting or filtering
// does not ask again. Every call counts against the plan's requests a minute.
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, describeFailure, must } from '../api'
import { BASE, Link } from '../router'
import type { LinkRecord } from '../types'
import { TagChip, type Tag } from './colours'

const keyOf = (link: Pick<LinkRecord, 'domain' | 'alias'>) => `${link.domain}/${link.alias}`

export type LinkTagState = Tag[] | { failed: unknown }
export type TagChange = (tags: Tag[]) => Tag[]

export function useLinkTags(links: LinkRecord[] | undefined) {
  const known = useRef(new Map<string, LinkTagState>())
  const [, setVersion] = useState(0)
  const refresh = () => setVersion((n) => n + 1)

  useEffect(() => {
    const missing = (links ?? []).filter((link) => !known.current.has(keyOf(link)))
    if (missing.length === 0) return
    let current = true
    Promise.all(
      missing.map(async (link) => {
        try {
          const { tags } = must(await api.GET('/api/v1/links/{alias}/tags', { params: { path: { alias: link.alias }, query: { domain: link.domain } } }))
          known.current.set(keyOf(link), tags)
        } catch (failure) {
          known.current.set(keyOf(link), { failed: failure })
        }
      }),
    ).then(() => current && refresh())
    return () => {
      current = false
    }
  }, [links])

  return {
    tagsOf: (link: LinkRecord) => known.current.get(keyOf(link)),
    /** A deleted link: its alias may come back as a new link, without these tags. */
    forget: (link: LinkRecord) => void known.current.delete(keyOf(link)),
    /** Changes one link's tags from what is known now (two quick changes of one row both count). */
    update: (link: LinkRecord, change: TagChange) => {
      const now = known.current.get(keyOf(link))
      known.current.set(keyOf(link), change(Array.isArray(now) ? now : []))
      refresh()
    },
  }
}

/** The tags of one row: the chips, then a menu button opening a checklist of the account's tags. */
export function LinkTagsCell(props: { link: LinkRecord; state: LinkTagState | undefined; allTags: Tag[]; onChange: (change: TagChange) => void }) {
  const { link, state } = props
  if (state === undefined) return <span class="loading">Loading tags…</span>
  if (!Array.isArray(state)) return <span class="error-inline">Tags unavailable: {describeFailure(state.failed)}</span>
  return (
    <div class="link-tags">
      {state.length === 0 ? <span class="muted">No tags</span> : state.map((tag) => <TagChip key={tag.id} tag={tag} />)}
      <TagMenu link={link} assigned={state} allTags={props.allTags} onChange={props.onChange} />
    </div>
  )
}

function TagMenu({ link, assigned, allTags, onChange }: { link: LinkRecord; assigned: Tag[]; allTags: Tag[]; onChange: (change: TagChange) => void }) {
  const [open, setOpen] = useState(false)
  // Tags whose change is on its way: their box ignores clicks meanwhile (not disabled: focus stays).
  const [pending, setPending] = useState<ReadonlySet<number>>(new Set())
  const [error, setError] = useState<string | null>(null)
  const [saved, setSaved] = useState(false)
  const button = useRef<HTMLButtonElement>(null)
  const panelId = `tags-${link.domain}-${link.alias}`.replace(/[^A-Za-z0-9_-]/g, '-')
  const close = () => {
    setOpen(false)
    button.current?.focus()
  }

  // The box shows its new state at once (a controlled checkbox would otherwise spring back while the
  // call runs); a refusal puts the previous tags back and says why.
  const toggle = async (tag: Tag, on: boolean) => {
    setPending((p) => new Set(p).add(tag.id))
    setError(null)
    setSaved(false)
    const without = (tags: Tag[]) => tags.filter((t) => t.id !== tag.id)
    onChange((tags) => (on ? [...without(tags), tag] : without(tags)))
    try {
      const path = { alias: link.alias }
      if (on) must(await api.POST('/api/v1/links/{alias}/tags', { params: { path }, body: { tagId: tag.id, domain: link.domain } }))
      else must(await api.DELETE('/api/v1/links/{alias}/tags/{tagId}', { params: { path: { ...path, tagId: String(tag.id) }, query: { domain: link.domain } } }))
      setSaved(true)
    } catch (failure) {
      onChange((tags) => (on ? without(tags) : [...without(tags), tag]))
      setError(describeFailure(failure))
    } finally {
      setPending((p) => new Set([...p].filter((id) => id !== tag.id)))
    }
  }

  const closeOnEscape = (e: KeyboardEvent) => {
    if (e.key !== 'Escape' || !open) return
    e.stopPropagation()
    close()
  }

  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: Escape pressed on any control of the menu (buttons, checkboxes) closes it; the wrapper is no control itself
    <div class="tag-menu" onKeyDown={closeOnEscape}>
      <button ref={button} type="button" class="small" aria-expanded={open} aria-controls={panelId} onClick={() => setOpen(!open)}>
        Tags<span class="visually-hidden"> of {link.short_url}</span>
      </button>
      {open && (
        <fieldset id={panelId} class="tag-menu-panel" aria-busy={pending.size > 0}>
          <legend>Tags of {link.short_url.replace(/^https?:\/\//, '')}</legend>
          {allTags.length === 0 && (
            <p class="muted">
              No tags yet: create them on the <Link href={`${BASE}/tags`}>Tags page</Link>.
            </p>
          )}
          {allTags.map((tag) => (
            <label key={tag.id} class="check">
              <input
                type="checkbox"
                checked={assigned.some((t) => t.id === tag.id)}
                onClick={(e) => pending.has(tag.id) && e.preventDefault()}
                onChange={(e) => toggle(tag, e.currentTarget.checked)}
              />
              <TagChip tag={tag} />
            </label>
          ))}
          <p class="hint" role="status">
            {pending.size > 0 ? 'Saving…' : saved && !error ? 'Saved.' : ''}
          </p>
          {error && (
            <p class="error" role="alert">
              {error}
            </p>
          )}
          <button type="button" class="small" onClick={close}>
            Done
          </button>
        </fieldset>
      )}
    </div>
  )
}
