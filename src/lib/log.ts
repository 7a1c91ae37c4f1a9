// The one logger of the API process and of the embedded default: pino, one JSON object per line on
// stdout, written synchronously (a line is on its way before the next statement, so nothing is lost when
// the process exits right after; the API is not the redirect hot path, which logs no request). No
// transport: pino's transports run in worker threads, and this process's threads are counted
// (core/threads.ts). Modules import `log` and pass fields, never a request, a header or a body:
// what a line may say is decided where it is written (plugins/request-log.ts for requests).
//
// The redirector (redirect/) imports only core, so it keeps its few plain start and outage lines.
import pino, { type DestinationStream, type LevelWithSilent } from 'pino'
import { ConfigError } from '../../core/config'

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const satisfies readonly LevelWithSilent[]
export type LogLevel = (typeof LOG_LEVELS)[number]

/** LOG_LEVEL, parsed at boot with the other settings (src/boot.ts): default info, a bad value stops the process. */
export function logLevelOf(env: Record<string, string | undefined>): LogLevel {
  const raw = env.LOG_LEVEL?.trim().toLowerCase()
  if (!raw) return 'info'
  if (!(LOG_LEVELS as readonly string[]).includes(raw)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`)
  return raw as LogLevel
}

const stdout: DestinationStream = pino.destination({ dest: 1, sync: true })
let destination: DestinationStream = stdout

export const log = pino(
  {
    level: 'info',
    // "level":"info" and an ISO time read without a table; pid and hostname tell processes apart.
    formatters: { level: (label) => ({ level: label }) },
    timestamp: pino.stdTimeFunctions.isoTime,
  },
  // Through this indirection so a test can read the lines (logTo) without touching process.stdout.
  { write: (line: string) => destination.write(line) },
)

export type Logger = typeof log

export function setLogLevel(level: LogLevel): void {
  log.level = level
}

/** Sends the lines to `to` (stdout when undefined) and returns where they went before. */
export function logTo(to: DestinationStream | undefined): DestinationStream {
  const previous = destination
  destination = to ?? stdout
  return previous
}
