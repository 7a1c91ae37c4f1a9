// CSV as RFC 4180 writes it (and as spreadsheets export it): fields separated by commas, quoted with
// double quotes when they hold a comma, a quote or a line break, quotes doubled inside; lines end with
// CRLF or LF. Pure functions (no DOM): tested with bun test beside this file.

/** The rows of a CSV text; a trailing line break does not make an empty last row. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let field = ''
  let quoted = false
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0 // a byte-order mark, as Excel writes one
  for (; i < text.length; i++) {
    const c = text[i]!
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"'
        i++
      } else if (c === '"') quoted = false
      else field += c
    } else if (c === '"' && field === '') quoted = true
    else if (c === ',') {
      row.push(field)
      field = ''
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++
      row.push(field)
      rows.push(row)
      row = []
      field = ''
    } else field += c
  }
  if (quoted) throw new Error('the file ends inside a quoted field (a " is not closed)')
  if (field !== '' || row.length > 0) {
    row.push(field)
    rows.push(row)
  }
  return rows.filter((r) => r.length > 1 || r[0] !== '')
}

/** One field, quoted when it must be; a leading =, +, - or @ is prefixed so a spreadsheet does not run it. */
export function csvField(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe
}

export function toCsv(rows: readonly (readonly string[])[]): string {
  return `${rows.map((row) => row.map(csvField).join(',')).join('\r\n')}\r\n`
}

/** Columns an import understands: those of POST /api/v1/shorten. */
export const IMPORT_COLUMNS = ['url', 'alias', 'domain', 'password', 'expiration', 'activated_at'] as const
export type ImportColumn = (typeof IMPORT_COLUMNS)[number]
export type ImportRow = { line: number } & Partial<Record<ImportColumn, string>> & { url: string }

/**
 * The rows of an import file: a header naming its columns (any order, any case; `url` required; unknown
 * columns are an error so a typo does not silently drop a field), then one link a line. Empty cells are
 * left out. `line` is the row's line in the file, for the results a person reads.
 */
export function importRows(text: string): ImportRow[] {
  const [header, ...body] = parseCsv(text)
  if (!header) throw new Error('the file is empty')
  const columns = header.map((name) => name.trim().toLowerCase())
  const unknown = columns.filter((c) => !(IMPORT_COLUMNS as readonly string[]).includes(c))
  if (unknown.length > 0) throw new Error(`unknown column(s) ${unknown.map((c) => `"${c}"`).join(', ')}; the columns are ${IMPORT_COLUMNS.join(', ')}`)
  if (!columns.includes('url')) throw new Error('the first line must name the columns, "url" among them')
  return body.map((cells, index) => {
    const row: Record<string, string | number> = { line: index + 2 }
    columns.forEach((column, i) => {
      // csvField's guard undone, so an exported file imports as it was ("-spring" stays "-spring").
      const value = (cells[i]?.trim() ?? '').replace(/^'(?=[=+\-@])/, '')
      if (value !== '') row[column] = value
    })
    row.url ??= ''
    return row as ImportRow
  })
}
