// One action a person starts (a form's submit, a button): busy while it runs, and what went wrong kept
// for the form's ErrorNotice. Every form of the dashboard goes through it, so each disables its button
// and shows the API's refusal the same way.
import { useState } from 'preact/hooks'

export interface Submit {
  busy: boolean
  error: unknown
  /** Shows a refusal found before any call (a form with nothing to send, say). */
  setError: (error: unknown) => void
  /** Runs `action` with the last error cleared; a throw becomes `error`. */
  run: (action: () => Promise<void>) => Promise<void>
}

/**
 * `leavesPage`: the action ends by leaving the page (to a checkout, to the page of what it created), so
 * after it succeeds the form stays busy: a second click during the navigation must not start it again.
 */
export function useSubmit({ leavesPage = false }: { leavesPage?: boolean } = {}): Submit {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const run = async (action: () => Promise<void>) => {
    setBusy(true)
    setError(null)
    try {
      await action()
      if (!leavesPage) setBusy(false)
    } catch (failure) {
      setError(failure)
      setBusy(false)
    }
  }
  return { busy, error, setError, run }
}
