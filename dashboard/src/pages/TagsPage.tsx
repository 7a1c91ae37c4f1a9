// Tags: list, create (a name and one of the nine colours, named in words), delete after confirming.
// Deleting a tag removes it from every link that carries it; the links stay.
import { useState } from 'preact/hooks'
import { api, must } from '../api'
import { ConfirmDialog, ErrorNotice, formatDate, Loading } from '../components/ui'
import { useSubmit } from '../lib/useSubmit'
import { colourName, swatchClass, TAG_COLOURS, type Tag, type TagColour } from '../tags/colours'
import { useTags } from '../tags/useTags'

/** A tag name has 1-30 characters. */
const NAME_MAX = 30

export function TagsPage() {
  const { tags, limit, error: loadError, setTags } = useTags()
  const [doomed, setDoomed] = useState<Tag | null>(null)
  const [error, setError] = useState<unknown>(null)

  const remove = async (tag: Tag) => {
    setDoomed(null)
    setError(null)
    try {
      must(await api.DELETE('/api/v1/tags/{tagId}', { params: { path: { tagId: String(tag.id) } } }))
      setTags((tags ?? []).filter((t) => t.id !== tag.id))
    } catch (failure) {
      setError(failure)
    }
  }

  return (
    <>
      <h1>Tags</h1>
      <CreateTagForm onCreated={(tag) => setTags([...(tags ?? []), tag])} />
      <section aria-labelledby="tags-title">
        <h2 id="tags-title">Your tags</h2>
        <ErrorNotice error={loadError ?? error} />
        {tags === null ? (
          loadError ? null : (
            <Loading what="tags" />
          )
        ) : tags.length === 0 ? (
          <p class="empty">No tags yet: create one above, then assign it to links from the links table.</p>
        ) : (
          <>
            <p class="muted">{limit === null ? `${tags.length} tags.` : `${tags.length} of ${limit} tags used.`}</p>
            <TagList tags={tags} onDelete={setDoomed} />
          </>
        )}
      </section>
      <ConfirmDialog open={doomed !== null} title="Delete this tag?" confirm="Delete tag" onConfirm={() => doomed && remove(doomed)} onCancel={() => setDoomed(null)}>
        <p>
          The tag <strong>{doomed?.name}</strong> is removed from every link that carries it. The links themselves stay.
        </p>
      </ConfirmDialog>
    </>
  )
}

function TagList({ tags, onDelete }: { tags: Tag[]; onDelete: (tag: Tag) => void }) {
  return (
    <ul class="tag-list">
      {tags.map((tag) => (
        <li key={tag.id}>
          <span class={swatchClass(tag.color)} aria-hidden="true" />
          <strong>{tag.name}</strong>
          <span class="muted">{colourName(tag.color)}</span>
          <span class="muted">created {formatDate(tag.created_at)}</span>
          <button type="button" class="small danger" aria-label={`Delete tag ${tag.name}`} onClick={() => onDelete(tag)}>
            Delete
          </button>
        </li>
      ))}
    </ul>
  )
}

function CreateTagForm({ onCreated }: { onCreated: (tag: Tag) => void }) {
  const [name, setName] = useState('')
  const [colour, setColour] = useState<TagColour>('#6b7280')
  const { busy, error, run } = useSubmit()

  const submit = (event: Event) => {
    event.preventDefault()
    void run(async () => {
      const created = must(await api.POST('/api/v1/tags', { body: { name: name.trim(), color: colour } }))
      // Only an Agent's call is ever held for approval; the signed-in human's runs.
      if (!('tag' in created)) throw new Error('The tag was held for approval.')
      onCreated(created.tag)
      setName('')
    })
  }

  return (
    <section aria-labelledby="create-tag-title" class="card">
      <h2 id="create-tag-title">Create a tag</h2>
      <form onSubmit={submit}>
        <div class="field">
          <label for="tag-name">Tag name</label>
          <input id="tag-name" required maxLength={NAME_MAX} value={name} aria-describedby="tag-name-hint" onInput={(e) => setName(e.currentTarget.value)} />
          <span id="tag-name-hint" class="hint">
            1 to {NAME_MAX} characters, unique regardless of case.
          </span>
        </div>
        <div class="field">
          <label for="tag-colour">Colour</label>
          <span class="colour-pick">
            <span class={swatchClass(colour)} aria-hidden="true" />
            <select id="tag-colour" value={colour} onChange={(e) => setColour(e.currentTarget.value as TagColour)}>
              {TAG_COLOURS.map((c) => (
                <option key={c.hex} value={c.hex}>
                  {c.name}
                </option>
              ))}
            </select>
          </span>
          <span class="hint" />
        </div>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create tag'}
          </button>
        </div>
      </form>
      <ErrorNotice error={error} />
    </section>
  )
}
