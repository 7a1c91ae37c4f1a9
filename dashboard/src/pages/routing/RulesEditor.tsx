// The rules of a link's routing in the order they are tried: add, move up or down, remove; each rule's
// destination and conditions. After a move, focus stays on the moved rule's button and a live region
// says where the rule went, so the order can be changed from the keyboard alone.
import { useLayoutEffect, useRef, useState } from 'preact/hooks'
import { DEVICE_WORDS, emptyRule, type Device, type Place, type RuleDraft } from './draft'

/** The API's limit (docs/routing.md). */
const MAX_RULES = 20
const DEVICES = Object.keys(DEVICE_WORDS) as Device[]

export function RulesEditor({ rules, onChange, invalid }: { rules: RuleDraft[]; onChange: (rules: RuleDraft[]) => void; invalid: Place | null }) {
  const [said, setSaid] = useState('')
  // The control to focus once the list has re-rendered (after a move, an addition, a removal). A layout
  // effect: focus moves in the same commit as the list, before the next key or click is handled (an
  // effect runs after paint, when a keystroke may already have gone to the control it then leaves).
  const focusNext = useRef<string | null>(null)
  useLayoutEffect(() => {
    if (focusNext.current === null) return
    document.getElementById(focusNext.current)?.focus()
    focusNext.current = null
  })

  const update = (key: number, change: Partial<RuleDraft>) => onChange(rules.map((rule) => (rule.key === key ? { ...rule, ...change } : rule)))
  const move = (index: number, step: -1 | 1) => {
    const to = index + step
    const rule = rules[index]!
    const next = rules.filter((_, i) => i !== index)
    next.splice(to, 0, rule)
    // The same button, unless the rule reached the end it was moving to (that button is then disabled).
    const atEnd = step === -1 ? to === 0 : to === rules.length - 1
    const direction = (step === -1) !== atEnd ? 'up' : 'down'
    focusNext.current = `rule-${rule.key}-${direction}`
    setSaid(`Rule moved to position ${to + 1} of ${rules.length}.`)
    onChange(next)
  }
  const remove = (index: number) => {
    focusNext.current = 'add-rule'
    setSaid(`Rule ${index + 1} removed.`)
    onChange(rules.filter((_, i) => i !== index))
  }
  const add = () => {
    const rule = emptyRule()
    focusNext.current = `rule-${rule.key}-url`
    setSaid('')
    onChange([...rules, rule])
  }

  return (
    <div class="rules">
      <h3>Rules</h3>
      <p class="hint">Tried in order: the first rule whose conditions all match sends the visitor to its destination.</p>
      {rules.length === 0 && <p class="empty">No rules.</p>}
      {rules.map((rule, index) => (
        <RuleFields
          key={rule.key}
          rule={rule}
          index={index}
          count={rules.length}
          invalidField={invalid?.in === 'rule' && invalid.index === index ? invalid.field : null}
          onChange={(change) => update(rule.key, change)}
          onMove={(step) => move(index, step)}
          onRemove={() => remove(index)}
        />
      ))}
      <p class="visually-hidden" aria-live="polite">
        {said}
      </p>
      <button type="button" id="add-rule" onClick={add} disabled={rules.length >= MAX_RULES}>
        Add a rule
      </button>
      {rules.length >= MAX_RULES && <span class="hint"> At most {MAX_RULES} rules.</span>}
    </div>
  )
}

function RuleFields(props: {
  rule: RuleDraft
  index: number
  count: number
  invalidField: string | null
  onChange: (change: Partial<RuleDraft>) => void
  onMove: (step: -1 | 1) => void
  onRemove: () => void
}) {
  const { rule, index, count, invalidField, onChange } = props
  const id = (name: string) => `rule-${rule.key}-${name}`
  const n = index + 1
  const toggle = (device: Device, on: boolean) => onChange({ devices: DEVICES.filter((d) => (d === device ? on : rule.devices.includes(d))) })
  return (
    <fieldset class={invalidField ? 'rule invalid' : 'rule'}>
      <legend>Rule {n}</legend>
      <div class="rule-head">
        <span class="muted">
          {rule.id ? (
            <>
              Id {rule.id} (“Rule {rule.id}” in the results)
            </>
          ) : (
            'Not saved yet'
          )}
        </span>
        <span class="actions">
          <button type="button" class="small" id={id('up')} aria-label={`Move rule ${n} up`} disabled={index === 0} onClick={() => props.onMove(-1)}>
            Up
          </button>
          <button type="button" class="small" id={id('down')} aria-label={`Move rule ${n} down`} disabled={index === count - 1} onClick={() => props.onMove(1)}>
            Down
          </button>
          <button type="button" class="small danger" aria-label={`Remove rule ${n}`} onClick={props.onRemove}>
            Remove
          </button>
        </span>
      </div>
      <div class="field wide">
        <label for={id('url')}>Destination of rule {n}</label>
        <input
          id={id('url')}
          type="url"
          required
          maxLength={2048}
          placeholder="https://apps.apple.com/app/id123"
          aria-invalid={invalidField === 'url' || undefined}
          value={rule.url}
          onInput={(e) => onChange({ url: e.currentTarget.value })}
        />
      </div>
      <fieldset class="conditions" aria-invalid={invalidField === 'when' || undefined}>
        <legend>When all of these match</legend>
        <p class="hint">An empty field is no condition; a rule needs at least one.</p>
        <fieldset class="devices" aria-invalid={invalidField === 'device' || undefined}>
          <legend>Devices (any of)</legend>
          {DEVICES.map((device) => (
            <label class="check" key={device}>
              <input type="checkbox" checked={rule.devices.includes(device)} onChange={(e) => toggle(device, e.currentTarget.checked)} /> {DEVICE_WORDS[device]}
            </label>
          ))}
        </fieldset>
        <div class="condition-fields">
          <Condition
            id={id('country')}
            label="Countries"
            hint="ISO codes, comma-separated: DE, AT, CH"
            invalid={invalidField === 'country'}
            value={rule.countries}
            onInput={(countries) => onChange({ countries })}
          />
          <Condition
            id={id('language')}
            label="Languages"
            hint="Comma-separated: en is every English, pt-BR only Brazil's"
            invalid={invalidField === 'language'}
            value={rule.languages}
            onInput={(languages) => onChange({ languages })}
          />
          <Condition
            id={id('query')}
            label="Query parameters"
            kind="lines"
            hint="One name=value a line; a name alone matches any value"
            invalid={invalidField === 'query'}
            value={rule.query}
            onInput={(query) => onChange({ query })}
          />
          <Condition
            id={id('ip')}
            label="Client addresses"
            kind="lines"
            hint="One address or CIDR block a line: 203.0.113.0/24"
            invalid={invalidField === 'ip'}
            value={rule.ip}
            onInput={(ip) => onChange({ ip })}
          />
          <Condition
            id={id('after')}
            label="From"
            kind="datetime-local"
            hint="Clicks at or after this time (your time zone)"
            invalid={invalidField === 'after'}
            value={rule.after}
            onInput={(after) => onChange({ after })}
          />
          <Condition
            id={id('before')}
            label="Before"
            kind="datetime-local"
            hint="Clicks before this time (your time zone)"
            invalid={invalidField === 'before'}
            value={rule.before}
            onInput={(before) => onChange({ before })}
          />
        </div>
      </fieldset>
    </fieldset>
  )
}

/** One condition's input, its label and its hint (the allowed values, in words). */
function Condition(props: { id: string; label: string; hint: string; invalid: boolean; value: string; onInput: (value: string) => void; kind?: 'text' | 'lines' | 'datetime-local' }) {
  const { id, kind = 'text' } = props
  const shared = {
    id,
    value: props.value,
    'aria-describedby': `${id}-hint`,
    'aria-invalid': props.invalid || undefined,
    onInput: (e: { currentTarget: { value: string } }) => props.onInput(e.currentTarget.value),
  }
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {kind === 'lines' ? <textarea rows={2} spellcheck={false} {...shared} /> : kind === 'text' ? <input type="text" spellcheck={false} {...shared} /> : <input type="datetime-local" {...shared} />}
      <span id={`${id}-hint`} class="hint">
        {props.hint}
      </span>
    </div>
  )
}
