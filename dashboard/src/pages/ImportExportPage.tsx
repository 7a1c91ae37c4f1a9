// Links in and out as CSV. Import: the file's rows go to POST /api/v1/links/bulk 100 at a time (the
// API's batch), with a progress bar and every row's result in words; rows the API refuses are listed
// with its hint and can be downloaded as a CSV to fix and import again. Export: every link, page by
// page through the list's cursor, as one CSV file. A 429 waits for the window the API names, then goes on.
import { useState } from 'preact/hooks'
import { api, describeFailure, must, type Schemas } from '../api'
import { ErrorNotice } from '../components/ui'
import { IMPORT_COLUMNS, importRows, toCsv, type ImportRow } from '../lib/csv'
import { useSubmit } from '../lib/useSubmit'

const BATCH = 100
const EXPORT_PAGE = 100
const EXPORT_COLUMNS = ['short_url', 'url', 'alias', 'domain', 'created_at', 'expires_at', 'has_password', 'clicks'] as const

type Outcome = { line: number; url: string; ok: true; shortUrl: string } | { line: number; url: string; ok: false; reason: string; row: ImportRow }

/** Runs `call`; on 429 waits for the Retry-After the API sent (at most a minute), then once more. */
async function withRateLimit<T extends { response: Response }>(call: () => Promise<T>, onWait: (seconds: number) => void): Promise<T> {
  for (;;) {
    const result = await call()
    if (result.response.status !== 429) return result
    const seconds = Math.min(60, Number(result.response.headers.get('retry-after')) || 5)
    onWait(seconds)
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
  }
}

function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }))
  const a = Object.assign(document.createElement('a'), { href: url, download: name })
  a.click()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}

export function ImportExportPage() {
  return (
    <>
      <h1>Import and export</h1>
      <ImportPanel />
      <ExportPanel />
    </>
  )
}

function ImportPanel() {
  const [rows, setRows] = useState<ImportRow[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [done, setDone] = useState(0)
  const [status, setStatus] = useState('')
  const [outcomes, setOutcomes] = useState<Outcome[]>([])
  const [running, setRunning] = useState(false)

  const read = async (file: File | undefined) => {
    setError(null)
    setOutcomes([])
    setDone(0)
    setStatus('')
    try {
      setRows(file ? importRows(await file.text()) : null)
    } catch (failure) {
      setRows(null)
      setError(failure)
    }
  }

  const start = async () => {
    if (!rows) return
    setRunning(true)
    setOutcomes([])
    const results: Outcome[] = []
    try {
      for (let at = 0; at < rows.length; at += BATCH) {
        const batch = rows.slice(at, at + BATCH)
        setStatus(`Importing rows ${at + 1}–${at + batch.length} of ${rows.length}…`)
        const links = batch.map(({ line: _line, ...fields }) => fields)
        const { data } = must(
          await withRateLimit(
            () => api.POST('/api/v1/links/bulk', { body: { links } }),
            (s) => setStatus(`Waiting ${s} s for the request limit…`),
          ),
        )
        if (!('results' in data)) throw new Error('The import was held for approval.')
        for (const result of data.results as Array<Record<string, unknown>>) {
          const row = batch[Number(result.index)]!
          results.push(
            result.success
              ? { line: row.line, url: row.url, ok: true, shortUrl: String((result.data as { short_url: string }).short_url) }
              : { line: row.line, url: row.url, ok: false, reason: `${String(result.hint ?? '')} (${String(result.error)})`, row },
          )
        }
        setDone(at + batch.length)
        setOutcomes([...results])
      }
      const failed = results.filter((r) => !r.ok).length
      setStatus(`Done: ${results.length - failed} created, ${failed} refused.`)
    } catch (failure) {
      setStatus(`Stopped after ${results.length} of ${rows.length} rows: ${describeFailure(failure)}`)
    } finally {
      setRunning(false)
    }
  }

  const refused = outcomes.filter((o): o is Extract<Outcome, { ok: false }> => !o.ok)
  const retryFile = () => toCsv([[...IMPORT_COLUMNS], ...refused.map((o) => IMPORT_COLUMNS.map((c) => o.row[c] ?? ''))])

  return (
    <section aria-labelledby="import-title" class="card">
      <h2 id="import-title">Import links from CSV</h2>
      <p class="hint">
        The first line names the columns: <code>{IMPORT_COLUMNS.join(', ')}</code> (only <code>url</code> is required). Dates as ISO 8601, e.g. 2030-01-31T12:00:00Z.
      </p>
      <div class="field">
        <label for="import-file">CSV file</label>
        <input id="import-file" type="file" accept=".csv,text/csv" disabled={running} onChange={(e) => read(e.currentTarget.files?.[0])} />
      </div>
      <ErrorNotice error={error} />
      {rows && (
        <div class="actions">
          <button type="button" class="primary" disabled={running || rows.length === 0} onClick={start}>
            Import {rows.length} {rows.length === 1 ? 'link' : 'links'}
          </button>
        </div>
      )}
      {rows && (running || outcomes.length > 0) && (
        <div>
          <label for="import-progress">Progress</label> <progress id="import-progress" max={rows.length} value={done} /> {done} of {rows.length}
        </div>
      )}
      <p role="status">{status}</p>
      {outcomes.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Result of each row</caption>
            <thead>
              <tr>
                <th scope="col">Line</th>
                <th scope="col">Destination</th>
                <th scope="col">Result</th>
              </tr>
            </thead>
            <tbody>
              {outcomes.map((o) => (
                <tr key={o.line}>
                  <th scope="row">{o.line}</th>
                  <td class="destination">{o.url}</td>
                  <td>{o.ok ? <>Created {o.shortUrl}</> : <span class="refused">Refused: {o.reason}</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {!running && refused.length > 0 && (
        <div class="actions">
          <button type="button" onClick={() => download('refused-rows.csv', retryFile())}>
            Download the {refused.length} refused rows as CSV
          </button>
        </div>
      )}
    </section>
  )
}

type LinkPage = Schemas['LinkListResponse']['data']

/** The account's links page after page, following the list's cursor. */
async function* allPages(onWait: (seconds: number) => void): AsyncGenerator<LinkPage> {
  let cursor: string | null = null
  do {
    const after: string | null = cursor
    const page: LinkPage = must(await withRateLimit(() => api.GET('/api/v1/links', { params: { query: { limit: EXPORT_PAGE, ...(after && { cursor: after }) } } }), onWait)).data
    yield page
    cursor = page.pagination.next_cursor ?? null
  } while (cursor)
}

function ExportPanel() {
  const [status, setStatus] = useState('')
  const { busy: running, error, run } = useSubmit()
  const start = () =>
    run(async () => {
      const lines: string[][] = [[...EXPORT_COLUMNS]]
      try {
        for await (const data of allPages((seconds) => setStatus(`Waiting ${seconds} s for the request limit…`))) {
          for (const l of data.links) lines.push([l.short_url, l.full_url, l.alias, l.domain, l.created_at, l.expires_at ?? '', String(l.has_password ?? false), String(l.clicks ?? 0)])
          setStatus(`Exported ${lines.length - 1} of ${data.pagination.total} links…`)
        }
        download('links.csv', toCsv(lines))
        setStatus(`Exported ${lines.length - 1} links to links.csv.`)
      } catch (failure) {
        // The error says what stopped it; a count of links on their way would be stale.
        setStatus('')
        throw failure
      }
    })
  return (
    <section aria-labelledby="export-title" class="card">
      <h2 id="export-title">Export links to CSV</h2>
      <p class="hint">Every link of the account, one a line: {EXPORT_COLUMNS.join(', ')}. Passwords are never exported.</p>
      <div class="actions">
        <button type="button" disabled={running} onClick={start}>
          Export all links
        </button>
      </div>
      <ErrorNotice error={error} />
      <p role="status">{status}</p>
    </section>
  )
}
