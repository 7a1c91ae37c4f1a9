// `npm run docs:config`: writes the variable tables of docs/configuration.md (between the config-table
// markers) from the schema every variable is declared in, core/config-schema.ts: one table per group,
// each row the variable, its type, default, bounds and description. The prose around the markers is
// left as it is. core/config-docs.test.ts fails when the committed tables differ from what this writes.
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { TSchema } from '@sinclair/typebox'
import { ENV_SCHEMA } from '../core/config-schema'

export const CONFIG_DOC = join(resolve(import.meta.dir, '..'), 'docs/configuration.md')
const START = '<!-- config-table:start -->'
const END = '<!-- config-table:end -->'

const SIZE_UNITS: [string, number][] = [
  ['G', 1024 ** 3],
  ['M', 1024 ** 2],
  ['K', 1024],
]

/** Bytes as written in the variable: 1G, 256M, or the number when no unit divides it. */
function size(bytes: number): string {
  const [unit, factor] = SIZE_UNITS.find(([, factor]) => bytes % factor === 0) ?? ['', 1]
  return `${bytes / factor}${unit}`
}

const code = (text: string) => `\`${text}\``

function typeOf(s: TSchema): string {
  switch (s.read) {
    case 'integer':
      return s.unit === 'ms' ? 'milliseconds' : s.unit === 'days' ? 'days' : 'integer'
    case 'size':
      return 'bytes, or with K, M, G'
    case 'boolean':
      return '`true` or `false`'
    case 'text':
      return s.anyOf ? 'one of' : s.path ? 'path' : s.secret ? 'secret' : 'text'
    case 'secret':
      return 'secret'
    case 'url':
      return 'URL'
    case 'redisUrl':
      return 'Redis URL'
    case 'host':
      return 'address or host name'
    case 'dnsServers':
      return 'list of addresses'
    case 'origins':
      return 'list of origins'
    case 'clickKeys':
      return 'list of `kid:secret`'
    case 'typeCounts':
      return 'list of `type:count`'
    default:
      throw new Error(`config-docs: no type text for read step ${String(s.read)}`)
  }
}

/** The default as it would be written in the variable, else what unset means. */
function defaultOf(s: TSchema): string {
  const value: unknown = s.default
  if (value === undefined) return s.unset ?? 'unset'
  if (s.read === 'size') return size(value as number)
  if (typeof value === 'number') return String(value)
  if (typeof value === 'object')
    return code(
      Object.entries(value as Record<string, number>)
        .map(([type, count]) => `${type}:${count}`)
        .join(','),
    )
  return code(String(value))
}

function range(minimum: number | undefined, maximum: number | undefined, show: (n: number) => string = String): string {
  if (minimum !== undefined && maximum !== undefined) return `${show(minimum)} – ${show(maximum)}`
  if (minimum !== undefined) return `≥ ${show(minimum)}`
  return maximum === undefined ? '' : `≤ ${show(maximum)}`
}

/** The bounds a value must keep: the schema's keywords, or for a text of some form, the form. */
function boundsOf(s: TSchema): string {
  switch (s.read) {
    case 'integer':
      if (s.anyOf) {
        const [, days] = s.anyOf as TSchema[]
        return `0, or ${range(days!.minimum, days!.maximum)}`
      }
      return range(s.minimum, s.maximum)
    case 'size':
      return range(s.minimum, s.maximum, size)
    case 'url':
      return (s.protocols as string[]).map(code).join(', ')
    case 'clickKeys': {
      const { kid, secret } = s.items.properties as Record<string, TSchema>
      return `kid ${code(kid!.pattern!)}, secret ≥ ${secret!.minLength} characters`
    }
    case 'typeCounts': {
      const [count] = Object.values(s.patternProperties as Record<string, TSchema>)
      return `count ${range(count!.minimum, count!.maximum)}`
    }
    default:
      if (s.anyOf) return (s.anyOf as TSchema[]).map((literal) => code(literal.const)).join(', ')
      if (s.minLength !== undefined) return `≥ ${s.minLength} characters`
      return s.shape ?? ''
  }
}

/** Text for a table cell: `|` escaped, and `<` outside code spans, so "Name <address>" is not taken for HTML. */
const cell = (text: string) =>
  text
    .replaceAll('|', '\\|')
    .split('`')
    .map((part, i) => (i % 2 === 0 ? part.replaceAll('<', '&lt;') : part))
    .join('`')

/** The text between the markers: a heading and a table for each group, in the schema's order. */
export function configTables(): string {
  const groups = new Map<string, string[]>()
  for (const [name, s] of Object.entries(ENV_SCHEMA.properties) as [string, TSchema][]) {
    const row = [code(name), typeOf(s), defaultOf(s), boundsOf(s), s.description ?? ''].map(cell)
    const rows = groups.get(s.group) ?? []
    groups.set(s.group, [...rows, `| ${row.join(' | ')} |`])
  }
  const tables = [...groups].map(([heading, rows]) => [`### ${heading}`, '', '| variable | type | default | bounds | description |', '|---|---|---|---|---|', ...rows].join('\n'))
  return `\n\n${tables.join('\n\n')}\n\n`
}

/** Where the tables of `doc` begin and end: just after the start marker, at the end marker. */
function markers(doc: string): [number, number] {
  const start = doc.indexOf(START)
  const end = doc.indexOf(END)
  if (start < 0 || end < start) throw new Error(`config-docs: ${CONFIG_DOC} has no ${START} … ${END}`)
  return [start + START.length, end]
}

/** The text between the markers of `doc`. */
export function tablesIn(doc: string): string {
  return doc.slice(...markers(doc))
}

if (import.meta.main) {
  const doc = readFileSync(CONFIG_DOC, 'utf8')
  const [start, end] = markers(doc)
  const written = doc.slice(0, start) + configTables() + doc.slice(end)
  if (written === doc) {
    console.log('docs/configuration.md: the variable tables are up to date')
  } else {
    writeFileSync(CONFIG_DOC, written)
    console.log(`docs/configuration.md: variable tables written (${Object.keys(ENV_SCHEMA.properties).length} variables)`)
  }
}
