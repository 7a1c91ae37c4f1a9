// The A/B test of a link's routing: 2-4 variants with a destination and a weight, the split drawn as the
// weights are typed (and said when they do not sum to 100), sticky visitors, and an optional end with
// how the winner is chosen. An ended test is shown as it ended, read-only; it can be replaced.
import { formatDate } from '../../components/ui'
import { emptyVariant, evenWeights, MAX_VARIANTS, MIN_VARIANTS, newTest, weightTotal, WINNER_WORDS, type AbDraft, type AbRead, type Place, type VariantDraft, type WinnerBy } from './draft'

type Editing = Extract<AbDraft, { kind: 'edit' }>

export function AbEditor({ ab, onChange, invalid }: { ab: AbDraft; onChange: (ab: AbDraft) => void; invalid: Place | null }) {
  return (
    <div class="ab">
      <h3>A/B test</h3>
      <p class="hint">Visitors no rule sends elsewhere are split between the variants by weight.</p>
      {ab.kind === 'none' && (
        <>
          <p class="empty">No A/B test: those visitors go to the link's URL.</p>
          <button type="button" onClick={() => onChange(newTest())}>
            Add an A/B test
          </button>
        </>
      )}
      {ab.kind === 'completed' && (
        <>
          <EndedTest test={ab.test} />
          <button type="button" onClick={() => onChange(newTest())}>
            Replace it with a new test
          </button>
        </>
      )}
      {ab.kind === 'edit' && <RunningTest ab={ab} onChange={onChange} invalid={invalid} />}
    </div>
  )
}

function RunningTest({ ab, onChange, invalid }: { ab: Editing; onChange: (ab: AbDraft) => void; invalid: Place | null }) {
  const set = (change: Partial<Editing>) => onChange({ ...ab, ...change })
  const setVariant = (key: number, change: Partial<VariantDraft>) => set({ variants: ab.variants.map((v) => (v.key === key ? { ...v, ...change } : v)) })
  const total = weightTotal(ab.variants)
  const invalidField = (index: number) => (invalid?.in === 'variant' && invalid.index === index ? invalid.field : null)
  const abInvalid = invalid?.in === 'ab' ? invalid.field : null
  return (
    <>
      {ab.variants.map((variant, index) => (
        <div class="variant" key={variant.key}>
          <div class="field">
            <label for={`variant-${variant.key}-url`}>Destination of variant {index + 1}</label>
            <input
              id={`variant-${variant.key}-url`}
              type="url"
              required
              maxLength={2048}
              placeholder="https://example.com/landing-a"
              aria-invalid={invalidField(index) === 'url' || undefined}
              value={variant.url}
              onInput={(e) => setVariant(variant.key, { url: e.currentTarget.value })}
            />
          </div>
          <div class="field weight">
            <label for={`variant-${variant.key}-weight`}>Weight of variant {index + 1} (%)</label>
            <input
              id={`variant-${variant.key}-weight`}
              type="number"
              required
              min={1}
              max={100}
              step={1}
              aria-invalid={invalidField(index) === 'weight' || abInvalid === 'variants' || undefined}
              value={variant.weight}
              onInput={(e) => setVariant(variant.key, { weight: e.currentTarget.value })}
            />
          </div>
          <span class="variant-end">
            <span class="muted">{variant.id ? <>Id {variant.id}</> : 'Not saved yet'}</span>
            <button
              type="button"
              class="small danger"
              aria-label={`Remove variant ${index + 1}`}
              disabled={ab.variants.length <= MIN_VARIANTS}
              onClick={() => set({ variants: ab.variants.filter((v) => v.key !== variant.key) })}
            >
              Remove
            </button>
          </span>
        </div>
      ))}
      <SplitBar variants={ab.variants} total={total} />
      <div class="actions">
        <button type="button" disabled={ab.variants.length >= MAX_VARIANTS} onClick={() => set({ variants: [...ab.variants, emptyVariant(Math.max(0, 100 - total))] })}>
          Add a variant
        </button>
        <button type="button" onClick={() => set({ variants: ab.variants.map((v, i) => ({ ...v, weight: String(evenWeights(ab.variants.length)[i]) })) })}>
          Split evenly
        </button>
      </div>
      <label class="check">
        <input type="checkbox" checked={ab.sticky} aria-describedby="ab-sticky-hint" onChange={(e) => set({ sticky: e.currentTarget.checked })} /> Sticky: a returning visitor gets the same variant
      </label>
      <span id="ab-sticky-hint" class="hint">
        Unticked, every click is a new pick by weight.
      </span>
      <div class="ab-end">
        <div class="field">
          <label for="ab-ends-at">Ends at</label>
          <input
            id="ab-ends-at"
            type="datetime-local"
            aria-describedby="ab-ends-at-hint"
            aria-invalid={abInvalid === 'ends_at' || undefined}
            value={ab.endsAt}
            onInput={(e) => set({ endsAt: e.currentTarget.value })}
          />
          <span id="ab-ends-at-hint" class="hint">
            Optional, within a year: the winner then becomes the link's URL.
          </span>
        </div>
        <div class="field">
          <label for="ab-winner-by">Winner</label>
          <select id="ab-winner-by" aria-invalid={abInvalid === 'winner_by' || undefined} value={ab.winnerBy} onChange={(e) => set({ winnerBy: e.currentTarget.value as WinnerBy | '' })}>
            <option value="">Not chosen (the test runs until changed)</option>
            {(Object.keys(WINNER_WORDS) as WinnerBy[]).map((by) => (
              <option key={by} value={by}>
                {WINNER_WORDS[by]}
              </option>
            ))}
          </select>
          <span class="hint">Needed with an end; counted over the test's clicks.</span>
        </div>
      </div>
      <button type="button" class="small danger" onClick={() => onChange({ kind: 'none' })}>
        Remove the A/B test
      </button>
    </>
  )
}

/**
 * The weights as one bar (SVG geometry, since the page's policy allows no inline style) and in words;
 * a live note when they do not sum to 100. The bar is decoration: the words say the same.
 */
function SplitBar({ variants, total }: { variants: VariantDraft[]; total: number }) {
  const weights = variants.map((v) => Math.max(0, Number(v.weight) || 0))
  // Out of 100, or of the total when it is more (the bar then still fits).
  const scale = Math.max(total, 100)
  const starts = weights.map((_, i) => weights.slice(0, i).reduce((sum, w) => sum + w, 0) * (100 / scale))
  const unassigned = 100 - Math.min(total, 100)
  return (
    <div class="split">
      <svg class="split-bar" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true" focusable="false">
        {weights.map((w, i) => (
          <rect key={variants[i]!.key} class={`seg seg-${i}`} x={starts[i]} y={0} width={(w * 100) / scale} height={10} />
        ))}
        {unassigned > 0 && <rect class="seg seg-rest" x={100 - unassigned} y={0} width={unassigned} height={10} />}
      </svg>
      <ul class="split-legend" aria-label="Traffic split">
        {variants.map((v, i) => (
          <li key={v.key}>
            <span class={`swatch seg-${i}`} aria-hidden="true" /> Variant {i + 1}: {weights[i]}%
          </li>
        ))}
        {unassigned > 0 && (
          <li>
            <span class="swatch seg-rest" aria-hidden="true" /> Not assigned: {unassigned}%
          </li>
        )}
      </ul>
      <p class="split-note" aria-live="polite">
        {total !== 100 && `The weights sum to ${total}; they must sum to 100.`}
      </p>
    </div>
  )
}

/** A test that has ended: its winner (now the link's URL) and its variants as they were. */
function EndedTest({ test }: { test: AbRead }) {
  const winner = test.variants.find((v) => v.id === test.winner)
  return (
    <>
      <p>
        <strong>Ended {formatDate(test.completed_at)}.</strong> Variant <code>{test.winner ?? '—'}</code> won
        {test.winner_by && <> on {test.winner_by}</>}, and its destination{winner && <> ({winner.url})</>} is now the link's URL. An ended test splits no traffic.
      </p>
      <div class="table-wrap">
        <table>
          <caption>Variants of the ended test</caption>
          <thead>
            <tr>
              <th scope="col">Variant</th>
              <th scope="col">Destination</th>
              <th scope="col" class="num">
                Weight
              </th>
            </tr>
          </thead>
          <tbody>
            {test.variants.map((v) => (
              <tr key={v.id}>
                <th scope="row">
                  <code>{v.id}</code>
                  {v.id === test.winner && <span class="badge">winner</span>}
                </th>
                <td class="destination">{v.url}</td>
                <td class="num">{v.weight}%</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  )
}
