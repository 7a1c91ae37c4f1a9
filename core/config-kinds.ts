// The kinds of setting core/config-schema.ts declares, and how one environment variable becomes its value.
// A setting is a TypeBox schema of the parsed value: its bounds are JSON Schema keywords (minimum,
// minLength, pattern…) that Value.Check enforces, and `read` names our step from the variable's text to
// that value (a size with a unit, a URL of allowed protocols, a comma list). A problem becomes one
// ConfigError line naming the variable; the value of a secret is never in it.
import { Type, type Static, type TLiteral, type TObject, type TOptional, type TSchema, type TUnion } from '@sinclair/typebox'
import { Value, ValueErrorType } from '@sinclair/typebox/value'
import { isIP } from 'node:net'
import { parseRedisUrl, RedisUrlError } from './redis-url'

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`configuration: ${variable} ${problem}`)
    this.name = 'ConfigError'
  }
}

export type Env = Record<string, string | undefined>

/** What every setting says besides its type and bounds; scripts/config-docs.ts writes the docs table from it. */
export interface Described {
  /** What it does (Markdown: a cell of the table in docs/configuration.md). */
  description: string
  /** What leaving it unset means when that is no one fixed value: derived from another variable, or a feature off. */
  unset?: string
}

/** What a problem of the value says after "must be", e.g. "a header name": in the error and the table. */
interface Shaped {
  shape?: string
}

/** Thrown by a read step: what is wrong, without the variable's name (readEnv adds it). */
class Problem extends Error {}

const BYTE_UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }

/**
 * The read steps, by the name a setting gives in `read`: text in, value out, or a Problem. Every step but
 * `secret` ignores spaces around the text; a secret is taken exactly as given, so a configured key hashes
 * and signs the same whatever reads it.
 */
const READERS: Record<string, (raw: string, schema: TSchema) => unknown> = {
  integer(raw) {
    const text = raw.trim()
    if (!/^\d+$/.test(text)) throw new Problem(`must be a whole number, got ${JSON.stringify(text)}`)
    return Number(text)
  },
  /** A size in bytes, optionally with a binary unit: 512M, 2G, 65536. */
  size(raw) {
    const match = /^(\d+)([kmg]?)b?$/i.exec(raw.trim())
    if (!match) throw new Problem(`must be a size in bytes, optionally with K, M or G (e.g. 512M), got ${JSON.stringify(raw.trim())}`)
    return Number(match[1]) * BYTE_UNITS[match[2]!.toLowerCase()]!
  },
  boolean(raw) {
    const text = raw.trim().toLowerCase()
    if (text === 'true' || text === '1') return true
    if (text === 'false' || text === '0') return false
    throw new Problem(`must be true or false, got ${JSON.stringify(raw.trim())}`)
  },
  text: (raw, schema) => (schema.lowercase ? raw.trim().toLowerCase() : raw.trim()),
  secret: (raw) => raw,
  /** The text as given (trimmed); a URL only has to parse and use one of the schema's protocols. */
  url(raw, schema) {
    const text = raw.trim()
    let parsed: URL
    try {
      parsed = new URL(text)
    } catch {
      // Not the text: a URL may carry a password.
      throw new Problem('is not a valid URL')
    }
    const protocols = schema.protocols as string[]
    if (!protocols.includes(parsed.protocol)) throw new Problem(`must use ${protocols.join(' or ')}, got ${parsed.protocol}`)
    return text
  },
  /** One server, a cluster or Sentinel (core/redis-url.ts says how each is written). */
  redisUrl(raw) {
    const text = raw.trim()
    try {
      parseRedisUrl(text)
    } catch (error) {
      if (error instanceof RedisUrlError) throw new Problem(error.message)
      throw error
    }
    return text
  },
  /** An IP address (127.0.0.1, ::) or a name such as localhost: what a server listens on. */
  host(raw, schema) {
    const text = raw.trim()
    if (isIP(text) === 0 && !/^[a-z0-9.-]+$/i.test(text)) throw new Problem(`must be ${schema.shape}, got ${JSON.stringify(text)}`)
    return text
  },
  /** "ip", "ip:port" or "[ipv6]:port", comma-separated: what node:dns Resolver.setServers accepts. */
  dnsServers(raw, schema) {
    return raw.split(',').map((entry) => {
      const server = entry.trim()
      const match = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+)|([0-9a-fA-F:]+))(?::(\d{1,5}))?$/.exec(server)
      const ip = match?.[1] ?? match?.[2] ?? (match?.[4] === undefined ? match?.[3] : undefined)
      const port = match?.[4] === undefined ? 53 : Number(match[4])
      if (!ip || isIP(ip) === 0 || port < 1 || port > 65_535) throw new Problem(`must be ${schema.shape}, got ${JSON.stringify(server)}`)
      return server
    })
  },
  /** Web origins exactly as a browser sends them in Origin (scheme, host, port when not the default; no path). */
  origins(raw, schema) {
    return raw.split(',').map((entry) => {
      const origin = entry.trim().toLowerCase()
      let parsed: URL | undefined
      try {
        parsed = new URL(origin)
      } catch {
        // reported below
      }
      if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin) throw new Problem(`must be ${schema.shape}, got ${JSON.stringify(origin)}`)
      return origin
    })
  },
  /** "kid1:secret1,kid2:secret2", each kid and secret checked against the schema's item. */
  clickKeys(raw, schema) {
    const item = (schema.items as TObject).properties as { kid: TSchema; secret: TSchema }
    const keys = raw.split(',').map((entry) => {
      const colon = entry.indexOf(':')
      const kid = entry.slice(0, colon).trim()
      const secret = entry.slice(colon + 1).trim()
      if (colon < 0 || !Value.Check(item.kid, kid)) throw new Problem(`must be ${schema.shape}`)
      if (!Value.Check(item.secret, secret)) throw new Problem(`secret of key ${JSON.stringify(kid)} must be at least ${item.secret.minLength} characters`)
      return { kid, secret }
    })
    if (new Set(keys.map((k) => k.kid)).size !== keys.length) throw new Problem('names a key id twice')
    return keys
  },
  /** "type:count,…": a type not named falls under `*`, whose count is the default's unless given. */
  typeCounts(raw, schema) {
    const counts: Record<string, number> = { '*': (schema.default as Record<string, number>)['*']! }
    const count = Object.values(schema.patternProperties as Record<string, TSchema>)[0]!
    for (const entry of raw.split(',')) {
      const match = /^\s*([a-z_*][a-z0-9_.-]{0,39})\s*:\s*(\d{1,9})\s*$/i.exec(entry)
      if (!match || !Value.Check(count, Number(match[2]))) throw new Problem(`${JSON.stringify(entry.trim())} is not ${schema.shape}`)
      counts[match[1]!.toLowerCase()] = Number(match[2])
    }
    return counts
  },
}

/** The first thing wrong with a value the read step produced, as the words after the variable's name. */
function problemWith(schema: TSchema, value: unknown, text: string): string | undefined {
  const unit = schema.read === 'size' ? ' bytes' : ''
  const error = Value.Errors(schema, value).First()
  // Past 2^53 a whole number is no longer exact: refused where the setting itself sets no lower maximum.
  if (!error) return typeof value === 'number' && !Number.isSafeInteger(value) ? `must be at most ${Number.MAX_SAFE_INTEGER}${unit}, got ${text.trim()}` : undefined
  const got = schema.secret ? '' : `, got ${JSON.stringify(text.trim())}`
  switch (error.type) {
    case ValueErrorType.IntegerMinimum:
      return `must be at least ${error.schema.minimum}${unit}, got ${value}${unit}`
    case ValueErrorType.IntegerMaximum:
      return `must be at most ${error.schema.maximum}${unit}, got ${text.trim()}`
    case ValueErrorType.StringMinLength:
      return `must be at least ${error.schema.minLength} characters`
    default:
      return `must be ${schema.shape ?? error.message}${got}`
  }
}

/**
 * Every variable of `schema` read from `env`: an unset or blank one is its default (or absent when it has
 * none), a set one goes through its read step and its schema's check, or stops here with a ConfigError.
 */
export function readEnv<T extends TObject>(schema: T, env: Env): Static<T> {
  const values: Record<string, unknown> = {}
  for (const [name, setting] of Object.entries(schema.properties)) {
    const raw = env[name]
    if (raw === undefined || raw.trim() === '') {
      if (setting.default !== undefined) values[name] = Value.Clone(setting.default)
      continue
    }
    try {
      const value = READERS[setting.read as string]!(raw, setting)
      const problem = problemWith(setting, value, raw)
      if (problem) throw new Problem(problem)
      values[name] = value
    } catch (error) {
      if (error instanceof Problem) throw new ConfigError(name, error.message)
      throw error
    }
  }
  return values as Static<T>
}

/** A setting with a default is always present after readEnv; one without is optional. */
type Declared<T extends TSchema, O> = O extends { default: NonNullable<unknown> } ? T : TOptional<T>

function declared<T extends TSchema, O extends object>(schema: T, options: O): Declared<T, O> {
  return ('default' in options ? schema : Type.Optional(schema)) as Declared<T, O>
}

interface Bounds {
  minimum?: number
  maximum?: number
}

/** The kinds, each a TypeBox schema with its read step; options are the schema's keywords and annotations. */
export const Setting = {
  /** A whole number; `unit` names what it counts, for the table (ms, days). */
  integer: <O extends Described & Bounds & { default?: number; unit?: 'ms' | 'days' }>(options: O) => declared(Type.Integer({ ...options, read: 'integer' }), options),
  /** Bytes, or with K, M or G. */
  size: <O extends Described & Bounds & { default: number }>(options: O) => declared(Type.Integer({ ...options, read: 'size' }), options),
  /** true or false (1 or 0). */
  boolean: <O extends Described & { default: boolean }>(options: O) => declared(Type.Boolean({ ...options, read: 'boolean' }), options),
  /** Text, trimmed; `pattern` (checked) and `shape` (said) when it has a form; `secret`: never shown. */
  text: <O extends Described & Shaped & { default?: string; pattern?: string; lowercase?: boolean; secret?: boolean }>(options: O) => declared(Type.String({ ...options, read: 'text' }), options),
  /** A path on disk. */
  path: <O extends Described & { default?: string }>(options: O) => declared(Type.String({ ...options, read: 'text', path: true }), options),
  /** A shared secret or key, taken exactly as given; 32 characters keep an HMAC key or a token out of brute-force reach. */
  secret: <O extends Described>(options: O) => declared(Type.String({ ...options, minLength: 32, secret: true, read: 'secret' }), options),
  /** A URL using one of `protocols` ('https:'…). */
  url: <O extends Described & { default?: string; protocols: string[] }>(options: O) => declared(Type.String({ ...options, read: 'url' }), options),
  redisUrl: <O extends Described>(options: O) => declared(Type.String({ ...options, read: 'redisUrl' }), options),
  host: <O extends Described & Shaped & { default: string }>(options: O) => declared(Type.String({ ...options, read: 'host' }), options),
  /** One of `values`, written in any case. */
  oneOf: <const V extends readonly string[], O extends Described & { default: V[number] }>(values: V, options: O) =>
    declared(Type.Union(values.map((v) => Type.Literal(v)) as TLiteral<V[number]>[], { ...options, shape: `one of ${values.join(', ')}`, read: 'text', lowercase: true }), options),
  /** Days to keep: 0 for ever, otherwise at least `minimum` (below it the service would break a promise). */
  days: <O extends Described & Shaped & { default: 0; minimum: number; maximum: number }>({ minimum, maximum, ...options }: O) =>
    declared(Type.Union([Type.Literal(0), Type.Integer({ minimum, maximum })], { ...options, read: 'integer', unit: 'days' }) as TUnion<[TLiteral<0>, ReturnType<typeof Type.Integer>]>, options),
  dnsServers: <O extends Described & Shaped>(options: O) => declared(Type.Array(Type.String(), { ...options, read: 'dnsServers' }), options),
  origins: <O extends Described & Shaped>(options: O) => declared(Type.Array(Type.String(), { ...options, read: 'origins' }), options),
  /** Click signing keys: `kid` matching `kidPattern`, each secret at least 32 characters (as `secret`). */
  clickKeys: <O extends Described & Shaped & { kidPattern: string }>({ kidPattern, ...options }: O) =>
    declared(Type.Array(Type.Object({ kid: Type.String({ pattern: kidPattern }), secret: Type.String({ minLength: 32 }) }), { ...options, minItems: 1, secret: true, read: 'clickKeys' }), options),
  /** A count for each type, `*` for the others. */
  typeCounts: <O extends Described & Shaped & Bounds & { default: Record<string, number> }>({ minimum, maximum, ...options }: O) =>
    declared(Type.Record(Type.String(), Type.Integer({ minimum, maximum }), { ...options, read: 'typeCounts' }), options),
}
