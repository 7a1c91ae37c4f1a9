// A tool call is its REST call: the request the REST client would send, handled by the same app in
// process as the MCP caller (plugins/on-behalf.ts, the app's one in-process path), so the route applies its scope,
// rate limit, idempotency, approval, audit and dry_run exactly as for REST. Its answer becomes the
// tool result: the REST JSON as structuredContent, a line and the JSON as text; an error is a tool
// error (isError) with the API's code and hint, never a protocol error; a 202 is the held approval.
import type { CallToolResult } from '@modelcontextprotocol/server'
import type { Principal } from '../plugins/auth'
import type { CallAs } from '../plugins/on-behalf'
import type { Args, Json, ToolSpec } from './tools'

/** Who called /mcp, as its request authenticated them. */
export interface Caller {
  /** The at_ token, sent on with the REST call: the route sees the very credential the client sent. */
  token: string
  principal: Principal
  clientIp: string
}

export interface DispatchContext {
  /** The issuer (PUBLIC_API_URL): base of the URLs handed to people. */
  issuer: string
  callAs: CallAs
}

export async function callTool(tool: ToolSpec, args: Args, caller: Caller, context: DispatchContext): Promise<CallToolResult> {
  const call = tool.rest(args)
  const headers: Record<string, string> = { authorization: `Bearer ${caller.token}`, accept: 'application/json' }
  if (typeof args.idempotency_key === 'string') headers['idempotency-key'] = args.idempotency_key
  const response = await context.callAs({ via: 'mcp', tool: tool.name, principal: caller.principal, clientIp: caller.clientIp }, { ...call, headers })
  const body = await jsonOf(response)
  if (!body) return failure('INTERNAL_ERROR', `${call.method} ${call.path} answered ${response.status} without a JSON body.`)
  if (response.status === 202) return held(tool, body, new URL(response.headers.get('location') ?? '/api/v1/agent/approvals', context.issuer).href)
  if (response.status >= 300) return failure(typeof body.error === 'string' ? body.error : `HTTP_${response.status}`, typeof body.hint === 'string' ? body.hint : '', body)
  if (args.dry_run === true && body.meta?.dry_run !== true) {
    // Said loudly: a caller that asked for a dry run must not believe nothing happened.
    return failure('DRY_RUN_NOT_HONOURED', `The server carried ${tool.name} out: this version does not support dry_run for it. The result is in structuredContent.`, body)
  }
  return { content: [text(`${tool.summary(body, args)}\n\n${JSON.stringify(body)}`)], structuredContent: body }
}

async function jsonOf(response: Response): Promise<Json | null> {
  try {
    const value: unknown = await response.json()
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : null
  } catch {
    return null
  }
}

const text = (value: string) => ({ type: 'text' as const, text: value })

function failure(code: string, hint: string, body?: Json): CallToolResult {
  return { isError: true, content: [text(`${code}: ${hint}${body ? `\n\n${JSON.stringify(body)}` : ''}`)], structuredContent: body ?? { success: false, error: code, hint } }
}

/**
 * A 202: the operation waits for a human. The caller gets the approval, the page the human opens to
 * decide (review_url) and what to poll (get_approval, or the Location the route answered).
 */
function held(tool: ToolSpec, body: Json, location: string): CallToolResult {
  const approval: Json = body.data?.approval ?? {}
  const id = String(approval.id ?? '')
  const url = typeof approval.review_url === 'string' ? approval.review_url : location
  const line =
    `Held for approval: ${tool.name} runs only once a human approves it. Approval ${id} is ${String(approval.status ?? 'pending')}; ` +
    `ask the human to open ${url}. get_approval with this id says when it has run and what it answered.`
  return {
    content: [text(`${line}\n\n${JSON.stringify(body)}`)],
    structuredContent: { held: true, approval: { ...approval, url } },
  }
}
