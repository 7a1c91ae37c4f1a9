// The MCP endpoint (docs/agents-and-mcp.md#mcp): POST /mcp, Streamable HTTP, stateless (a fresh
// server per request, no sessions; GET and DELETE are 405), both protocol eras through the SDK's
// web-standard handler. In front of it, per the MCP authorization spec:
//   1. CORS (cors.ts): an Origin is no credential here, so pages on any origin may call, unless the
//      operator narrowed that with MCP_ALLOWED_ORIGINS (then another origin is 403 ORIGIN_NOT_ALLOWED).
//   2. An OAuth access token (at_) checked by the API's own authenticator (audience, expiry, revocation,
//      kill switch, the Agent's rate limit). An API key or a guest token is 401 like no token: an MCP
//      host must not hold the account's key, and the challenge sends it to OAuth instead. Every 401
//      names the /mcp protected resource metadata and the scopes the tools need.
// A JSON-RPC batch (2025-03-26 only) is served message by message (batch.ts). Tools then run as REST
// calls made on the caller's behalf (dispatch.ts).
import { createMcpHandler, type AuthInfo } from '@modelcontextprotocol/server'
import type { Server } from 'bun'
import { Elysia, t } from 'elysia'
import { TOKEN_PREFIXES } from '../lib/secrets'
import { readBearer, type Auth, type RouteAccess } from '../plugins/auth'
import { clientIp } from '../plugins/client'
import type { CallAs } from '../plugins/on-behalf'
import { ApiError, ERROR_CODES_KEYWORD, errors, FreeForm, Int } from '../plugins/errors'
import type { Services } from '../services'
import type { Caller } from './dispatch'
import { BATCH_PROTOCOL_VERSION, batchRefusal, batchVersion, isRequest, MAX_BATCH_MESSAGES, messageRefused, responsesIn } from './batch'
import { mcpCors } from './cors'
import { mcpServer } from './server'
import { TOOL_SCOPES, TOOLS } from './tools'

export const MCP_PATH = '/mcp'

/** What the door asks of a token: none of the scopes (each tool's route asks its own). */
const MCP_DOOR: RouteAccess = { scopes: [], door: 'mcp' }

export interface McpOptions {
  /** The app's in-process path: tools call their REST routes through it, as the caller. */
  callAs: CallAs
  /** The API's RFC 9728 protected resource metadata URL; /mcp's is it followed by /mcp. */
  resourceMetadataUrl: string
}

const McpMessage = t.Object(
  {
    jsonrpc: t.Literal('2.0'),
    id: t.Optional(t.Union([t.String(), Int()])),
    method: t.Optional(t.String()),
    params: t.Optional(FreeForm()),
  },
  {
    additionalProperties: true,
    description: 'A JSON-RPC 2.0 message of the Model Context Protocol (2025 revisions, or 2026-07-28 with its _meta envelope)',
    examples: [{ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'create_link', arguments: { url: 'https://example.com/launch', alias: 'launch-2026' } } }],
  },
)

/** Whether a request URL's path is /mcp (no URL parsing: this runs for every request). */
function isMcpPath(url: string): boolean {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  return url.startsWith(MCP_PATH, start) && (url.length === start + MCP_PATH.length || url[start + MCP_PATH.length] === '?')
}

const TOOL_LIST = TOOLS.map((tool) => `${tool.name} (${tool.scope ?? 'no scope'})`).join(', ')

/** `answer` with the caller's X-RateLimit-* and no-store added. */
function withHeaders(answer: Response, extra: Record<string, string>): Response {
  const headers = new Headers(answer.headers)
  for (const [name, value] of Object.entries(extra)) headers.set(name, value)
  headers.set('cache-control', 'no-store')
  return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers })
}

export function mcpModule(services: Services, auth: Auth, options: McpOptions) {
  const issuer = services.config.publicApiUrl
  const cors = mcpCors(services.config.mcpAllowedOrigins, new URL(issuer).origin)
  const resourceMetadataUrl = `${options.resourceMetadataUrl}${MCP_PATH}`
  const context = { issuer, callAs: options.callAs }
  const handler = createMcpHandler(({ authInfo }) => mcpServer(callerOf(authInfo), context), { legacy: 'stateless' })

  /** RFC 6750 3 / RFC 9728 5.1, and the scopes to ask for (MCP authorization: the client requests these). */
  const challenge = (tokenSent: boolean) => `Bearer resource_metadata="${resourceMetadataUrl}", scope="${TOOL_SCOPES.join(' ')}"${tokenSent ? ', error="invalid_token"' : ''}`

  /**
   * The door: an Agent's at_ token, admitted without a scope (every scope is a tool's business, checked
   * by its REST route). A token refused here (revoked, expired, killed, over its rate limit) is audited
   * like a refused REST call (plugins/agent-calls.ts); tool calls are audited by their REST routes
   * (via: mcp); protocol messages (initialize, tools/list) are not operations and are not audited.
   */
  async function authenticate(request: Request, server: Server<unknown> | null): Promise<Caller> {
    const header = request.headers.get('authorization')
    try {
      const token = readBearer(header)
      if (!token.startsWith(TOKEN_PREFIXES.access)) {
        throw new ApiError(
          'UNAUTHORIZED',
          'The MCP endpoint takes an OAuth access token (at_), never an API key or a guest token: connect through OAuth, starting at the resource_metadata URL in WWW-Authenticate.',
        )
      }
      const principal = await auth.authenticate(request, 'account', MCP_DOOR)
      return { token, principal, clientIp: clientIp(services, request, server) }
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 401) throw error
      throw new ApiError(error.code, error.hint, { ...error.extra, headers: { ...error.extra.headers, 'www-authenticate': challenge(header !== null && header.trim() !== '') } })
    }
  }

  /**
   * The messages of a batch, each served as if it came alone: authenticated again (one request against
   * the rate limit each; the first was authenticated with the POST), then handled. A message refused at
   * the door gets its error in the array; the others still run.
   */
  async function serveBatch(request: Request, server: Server<unknown> | null, messages: unknown[], first: Caller): Promise<Response> {
    const refusal = batchRefusal(messages, batchVersion(messages, request.headers.get('mcp-protocol-version')))
    if (refusal) return withHeaders(refusal, first.principal.rateHeaders)
    const headers = new Headers(request.headers)
    headers.delete('content-length')
    const responses: Record<string, unknown>[] = []
    let caller = first
    for (const [index, message] of messages.entries()) {
      if (index > 0) {
        try {
          caller = await authenticate(request, server)
        } catch (error) {
          if (!(error instanceof ApiError)) throw error
          if (isRequest(message)) responses.push(messageRefused(message.id, error.code, error.hint, error.status))
          continue
        }
      }
      const answer = await handler.fetch(new Request(request.url, { method: 'POST', headers }), { authInfo: authInfoOf(caller), parsedBody: message })
      responses.push(...(await responsesIn(answer)))
    }
    // Only notifications and responses: nothing to answer (as for a single one).
    const answer = responses.length === 0 ? new Response(null, { status: 202 }) : Response.json(responses)
    return withHeaders(answer, caller.principal.rateHeaders)
  }

  return (
    new Elysia({ name: 'mcp' })
      .use(errors)
      .model({ McpMessage })
      // CORS on every answer of /mcp, errors included (the errors plugin keeps headers set here); the
      // preflight, and the 405 of GET and DELETE, answered here too, so that a browser host can read them.
      .onRequest(({ request, set }) => {
        if (!isMcpPath(request.url)) return
        if (request.method === 'OPTIONS') return cors.preflight(request)
        Object.assign(set.headers, cors.headers(request.headers.get('origin')))
        if (request.method === 'GET' || request.method === 'DELETE') {
          throw new ApiError('METHOD_NOT_ALLOWED', `${request.method} is not served here: this endpoint is stateless (no sessions, no server stream); it answers POST.`, {
            headers: { allow: 'OPTIONS, POST' },
          })
        }
      })
      .post(
        MCP_PATH,
        async ({ request, body, server }) => {
          cors.check(request.headers.get('origin'))
          const caller = await authenticate(request, server)
          if (Array.isArray(body)) return serveBatch(request, server, body, caller)
          const answer = await handler.fetch(request, { authInfo: authInfoOf(caller), parsedBody: body })
          return withHeaders(answer, caller.principal.rateHeaders)
        },
        {
          detail: {
            operationId: 'mcp',
            tags: ['mcp'],
            summary: 'The MCP endpoint (Streamable HTTP, stateless)',
            description:
              'For MCP hosts (AI agents): one JSON-RPC message per POST, answered as JSON (or an event stream for a 2025-revision client); no sessions, so GET and DELETE are 405. ' +
              `Under protocol version ${BATCH_PROTOCOL_VERSION} (MCP-Protocol-Version header, or absent) a POST may carry a JSON-RPC batch (an array of up to ${MAX_BATCH_MESSAGES} messages), answered with an array of the responses (none for notifications); later versions get 400. ` +
              'Takes only an OAuth access token (at_): without one, or with an API key, 401 with WWW-Authenticate naming the resource metadata (/.well-known/oauth-protected-resource/mcp) and the scopes the tools need. ' +
              "Answered with CORS for pages on any origin (no credentials; WWW-Authenticate exposed), unless the operator set MCP_ALLOWED_ORIGINS: then a request whose Origin is neither listed nor this API's is 403 ORIGIN_NOT_ALLOWED. " +
              `Tools, each the REST operation of the same name with its scope, limits, approvals, audit and dry_run: ${TOOL_LIST}. ` +
              'A REST error comes back as a tool result with isError and the error code; an operation held for approval as a result with the approval and the URL a human opens.',
            security: [{ oauth2: [] }],
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: { oneOf: [{ $ref: '#/components/schemas/McpMessage' }, { type: 'array', items: { $ref: '#/components/schemas/McpMessage' }, minItems: 1, maxItems: MAX_BATCH_MESSAGES }] },
                },
              },
            },
            responses: {
              200: {
                description: 'The JSON-RPC answer (a tool error is a result with isError, not an HTTP error); for a batch, the array of the responses',
                content: {
                  'application/json': { schema: { oneOf: [{ $ref: '#/components/schemas/McpMessage' }, { type: 'array', items: { $ref: '#/components/schemas/McpMessage' } }] } },
                  'text/event-stream': { schema: { type: 'string' } },
                },
              },
              202: { description: 'A notification or response accepted (no body)' },
              403: { [ERROR_CODES_KEYWORD]: ['ORIGIN_NOT_ALLOWED'], content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } } },
            },
            'x-auth': 'account',
          } as Record<string, unknown>,
        },
      )
  )
}

/** What the handler passes to the factory untouched: the caller, for the tools. */
function authInfoOf(caller: Caller): AuthInfo {
  const agent = caller.principal.kind === 'account' ? caller.principal.agent : undefined
  return { token: caller.token, clientId: agent?.clientId ?? agent?.agentId ?? '', scopes: [...(agent?.scopes ?? [])], extra: { caller } }
}

function callerOf(authInfo: AuthInfo | undefined): Caller {
  const caller = authInfo?.extra?.caller as Caller | undefined
  // Unreachable: the route authenticates before the handler builds a server.
  if (!caller) throw new ApiError('UNAUTHORIZED')
  return caller
}
