// What a log line may say about an error: its class and its code, never its message. Messages carry
// values: a driver's "Failed query: … params: …" holds customer ids and amounts, a parser's quotes the
// bytes it choked on, an SMTP server's names the address. The stack frames (file:line) stay, for the
// developer; the first line of a stack is the message, so it is dropped.

export function errorSummary(error: unknown): string {
  if (!(error instanceof Error)) return typeof error
  const fields = error as Error & { code?: unknown; errno?: unknown; type?: unknown }
  const code = [fields.code, fields.errno, fields.type].find((v) => typeof v === 'string' || typeof v === 'number')
  const cause = error.cause instanceof Error ? ` (cause: ${errorSummary(error.cause)})` : ''
  return `${error.name}${code !== undefined ? ` ${String(code).slice(0, 40)}` : ''}${cause}`
}

/** The "at …" lines of a stack, without the message line(s) before them. */
export function stackFrames(error: unknown, max = 8): string {
  if (!(error instanceof Error) || !error.stack) return ''
  return error.stack
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .slice(0, max)
    .join('\n')
}
