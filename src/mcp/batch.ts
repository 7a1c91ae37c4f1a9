// JSON-RPC batches (docs/agents-and-mcp.md#mcp). The 2025-03-26 revision of MCP allows a POST to
// carry an array of messages; 2025-06-18 removed batching again and later revisions have none. The
// stateless server learns the version from the MCP-Protocol-Version header (absent: 2025-03-26, as
// the spec says a server should assume), or from an initialize request inside the batch.
// Each message is served on its own, in order, as if it had come in its own POST (so each one is a
// request against the Agent's rate limit, and a tool call in a batch can do nothing a single one
// could not); the answer is one JSON array of the responses, none for notifications.

/** The one revision whose messages may come in a batch. */
export const BATCH_PROTOCOL_VERSION = '2025-03-26'
/** Most messages in one batch (the SDK's own bound): each is a tool call, i.e. a REST call. */
export const MAX_BATCH_MESSAGES = 100

type Message = Record<string, unknown>

/** The protocol version a batch speaks. */
export function batchVersion(messages: readonly unknown[], header: string | null): string {
  const initialize = messages.find((message): message is Message => typeof message === 'object' && message !== null && (message as Message).method === 'initialize')
  const named = (initialize?.params as { protocolVersion?: unknown } | undefined)?.protocolVersion
  if (typeof named === 'string') return named
  return header?.trim() || BATCH_PROTOCOL_VERSION
}

/**
 * Why a batch cannot be served, as a JSON-RPC error answer (HTTP 400): the negotiated version has no
 * batches, or the batch is empty (JSON-RPC 2.0 section 6) or too long. Null when it can.
 */
export function batchRefusal(messages: readonly unknown[], version: string): Response | null {
  const refuse = (message: string) => Response.json({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `Invalid Request: ${message}` } }, { status: 400 })
  if (version !== BATCH_PROTOCOL_VERSION) return refuse(`JSON-RPC batches are part of protocol version ${BATCH_PROTOCOL_VERSION} only, not ${version}; send one message per POST.`)
  if (messages.length === 0) return refuse('an empty batch.')
  if (messages.length > MAX_BATCH_MESSAGES) return refuse(`a batch carries at most ${MAX_BATCH_MESSAGES} messages.`)
  return null
}

/** A JSON-RPC error for one message of a batch that was refused before it ran (its token, its rate limit). */
export function messageRefused(id: unknown, code: string, hint: string, status: number): Message {
  return { jsonrpc: '2.0', id: id ?? null, error: { code: -32000, message: `${code}: ${hint}`, data: { status, error: code } } }
}

/** The JSON-RPC responses in one answer of the handler: a JSON body, an event stream, or none (202). */
export async function responsesIn(answer: Response): Promise<Message[]> {
  const text = await answer.text()
  if (text.trim() === '') return []
  const type = answer.headers.get('content-type') ?? ''
  const payloads = type.includes('text/event-stream') ? eventData(text) : [text]
  const messages: Message[] = []
  for (const payload of payloads) {
    let value: unknown
    try {
      value = JSON.parse(payload)
    } catch {
      continue // a priming or keep-alive event carries no message
    }
    for (const message of Array.isArray(value) ? value : [value]) {
      // Responses only: a notification the server sent along (progress, a log line) has no place in a batch answer.
      if (typeof message === 'object' && message !== null && 'id' in message && ('result' in message || 'error' in message)) messages.push(message as Message)
    }
  }
  return messages
}

/** The data of each event of a text/event-stream body (multi-line data joined by newlines). */
function eventData(stream: string): string[] {
  return stream
    .split(/\r?\n\r?\n/)
    .map((event) =>
      event
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''))
        .join('\n'),
    )
    .filter((data) => data !== '')
}

/** Whether a message expects a response (a request: a method and an id). */
export const isRequest = (message: unknown): message is Message =>
  typeof message === 'object' && message !== null && typeof (message as Message).method === 'string' && (message as Message).id !== undefined && (message as Message).id !== null
