// The nine tag colours the API accepts, each with the name a person reads: a tag's colour is
// always said in words too, never shown by colour alone. The class paints the swatch (the page's CSP
// allows no inline style).
import type { Schemas } from '../api'

export type Tag = Schemas['TagListResponse']['tags'][number]
export type TagColour = Tag['color']

export const TAG_COLOURS: ReadonlyArray<{ hex: TagColour; name: string }> = [
  { hex: '#6b7280', name: 'Grey' },
  { hex: '#ef4444', name: 'Red' },
  { hex: '#f97316', name: 'Orange' },
  { hex: '#eab308', name: 'Yellow' },
  { hex: '#22c55e', name: 'Green' },
  { hex: '#06b6d4', name: 'Cyan' },
  { hex: '#3b82f6', name: 'Blue' },
  { hex: '#8b5cf6', name: 'Violet' },
  { hex: '#ec4899', name: 'Pink' },
]

export const colourName = (hex: string) => TAG_COLOURS.find((c) => c.hex === hex)?.name ?? hex

/** The swatch's class: `swatch c-6b7280` (styles.css, "Tags and domains"). */
export const swatchClass = (hex: string) => `swatch c-${hex.replace('#', '')}`

/** A tag as a small chip: its swatch (decoration) and its name (the information). */
export function TagChip({ tag }: { tag: Tag }) {
  return (
    <span class="tag-chip">
      <span class={swatchClass(tag.color)} aria-hidden="true" />
      {tag.name}
    </span>
  )
}
