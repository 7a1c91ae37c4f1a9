// The events a webhook is sent: "all events" (`["*"]`, types added later too), or the types ticked. The
// ticked types are kept while "all" is on, so turning it off again gives back what was ticked.
import { Choices } from '../../components/Choices'
import { EVENT_WORDS, type EventsChoice } from './data'

export function EventsField({ id, choice, onChange }: { id: string; choice: EventsChoice; onChange: (choice: EventsChoice) => void }) {
  return (
    <div class="field wide events-field">
      <label class="check" for={id}>
        <input id={id} type="checkbox" checked={choice.all} onChange={(e) => onChange({ ...choice, all: e.currentTarget.checked })} /> All events, those added later too
      </label>
      <Choices
        legend="Events"
        hint={choice.all ? 'All events are sent: untick "All events" to choose.' : 'The types sent to this endpoint; tick one at least.'}
        options={EVENT_WORDS}
        chosen={choice.picked}
        onChange={(picked) => onChange({ ...choice, picked })}
        disabled={choice.all}
      />
    </div>
  )
}
