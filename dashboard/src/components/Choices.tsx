// A set of labelled checkboxes in a fieldset: the scopes of a key or an Agent, the operations held for
// approval. Each box is named by its code and its words, so a person and a screen reader read the same.
// A secret shown once (a new key, a new token) is here too: both belong to granting access.
import type { ComponentChildren } from 'preact'
import { CopyButton } from './ui'

export function Choices<T extends string>(props: { legend: string; hint?: string; options: Record<T, string>; chosen: readonly T[]; onChange: (chosen: T[]) => void; disabled?: boolean }) {
  const { options, chosen } = props
  const names = Object.keys(options) as T[]
  const toggle = (name: T, on: boolean) => props.onChange(names.filter((o) => (o === name ? on : chosen.includes(o))))
  return (
    <fieldset class="choices" disabled={props.disabled}>
      <legend>{props.legend}</legend>
      {props.hint && <p class="hint">{props.hint}</p>}
      <ul>
        {names.map((name) => (
          <li key={name}>
            <label>
              <input type="checkbox" checked={chosen.includes(name)} onChange={(e) => toggle(name, e.currentTarget.checked)} /> <code>{name}</code> <span class="words">{options[name]}</span>
            </label>
          </li>
        ))}
      </ul>
    </fieldset>
  )
}

/** A secret the API shows once: the value, a copy button and a warning that it will not be shown again; `kept` says how the service keeps it (default: only its hash). */
export function ShownOnce(props: { title: string; secret: string; copyLabel: string; kept?: string; children?: ComponentChildren; onDone: () => void }) {
  return (
    <section class="shown-once" aria-label={props.title}>
      <h3>{props.title}</h3>
      <p class="warning">
        <strong>Copy it now: it will not be shown again.</strong> {props.kept ?? 'The service keeps only its hash.'}
      </p>
      <p class="secret">
        <code>{props.secret}</code> <CopyButton text={props.secret} label={props.copyLabel} />
      </p>
      {props.children}
      <button type="button" class="small" onClick={props.onDone}>
        Done, hide it
      </button>
    </section>
  )
}
