// Full flows with the SDKs hosts ship: @modelcontextprotocol/sdk 1.32.2 (the latest 1.x) and 1.29.0 (the
// latest 1.x from March to July 2026, which sends resource=<origin>/ at authorize), each with its own
// OAuthClientProvider and StreamableHTTPClientTransport: 401, discovery, registration, the browser at the
// authorization server, the human's consent, finishAuth, then tools/list and create_link. The project's
// v2 client (@modelcontextprotocol/client) has its flow in test/mcp/flow.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Client as Client132 } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as Transport132 } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { Client as Client129 } from 'mcp-sdk-1-29/client/index.js'
import { StreamableHTTPClientTransport as Transport129 } from 'mcp-sdk-1-29/client/streamableHttp.js'
import { asClient, humanConsents, MemoryOAuthProvider, newHuman, startMcpStack, type McpStack } from '../support/mcp'
import type { TestAccount } from '../support/fixtures'

let stack: McpStack
let human: TestAccount

beforeAll(async () => {
  stack = await startMcpStack()
  human = await newHuman(stack)
  // The first file of a run opens the embedded engines (PGlite, chDB): slow on a loaded machine.
}, 120_000)

afterAll(async () => {
  await stack?.stop()
})

interface Sdk {
  client: () => {
    connect(transport: never): Promise<void>
    listTools(): Promise<{ tools: { name: string }[] }>
    callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>
    close(): Promise<void>
  }
  transport: (url: URL, options: { authProvider: never; fetch: typeof fetch }) => { finishAuth(code: string): Promise<void> }
}

const SDKS: Record<string, Sdk> = {
  '@modelcontextprotocol/sdk 1.32.2': {
    client: () => new Client132({ name: 'sdk-1.32-host', version: '1.0.0' }) as never,
    transport: (url, options) => new Transport132(url, options),
  },
  '@modelcontextprotocol/sdk 1.29.0': {
    client: () => new Client129({ name: 'sdk-1.29-host', version: '1.0.0' }) as never,
    transport: (url, options) => new Transport129(url, options),
  },
}

describe('the SDKs hosts are built on connect through OAuth and call a tool', () => {
  for (const [name, sdk] of Object.entries(SDKS)) {
    test(name, async () => {
      // The SDK's provider interface is the same shape in 1.x as in the v2 client this provider was written for.
      const provider = new MemoryOAuthProvider()
      const fetchAs = asClient()
      const first = sdk.transport(stack.mcpUrl, { authProvider: provider as never, fetch: fetchAs })
      const refused = await sdk
        .client()
        .connect(first as never)
        .then(
          () => 'connected',
          (error: unknown) => error,
        )
      expect(provider.authorizationUrl, `the first connect should send the browser to authorize: ${String(refused)}`).toBeDefined()
      const params = await humanConsents(stack, provider, human, fetchAs)
      await first.finishAuth(params.get('code')!)

      const client = sdk.client()
      await client.connect(sdk.transport(stack.mcpUrl, { authProvider: provider as never, fetch: fetchAs }) as never)
      const steps = fetchAs.log.map((e) => `${e.method} ${e.path} ${e.status}`)
      expect(steps, steps.join('\n')).toEqual(expect.arrayContaining(['POST /mcp 401', 'POST /oauth/register 201', 'GET /oauth/authorize 302', 'POST /oauth/token 200', 'POST /mcp 200']))
      expect(provider.clientId).toMatch(/^cli_/)
      expect(provider.tokens()?.access_token).toMatch(/^at_/)

      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name)).toContain('create_link')
      const alias = `sdk-${crypto.randomUUID().slice(0, 8)}`
      const created = (await client.callTool({ name: 'create_link', arguments: { url: 'https://example.com/from-an-sdk', alias } })) as { isError?: boolean; structuredContent?: { data?: unknown } }
      expect(created.isError, JSON.stringify(created).slice(0, 500)).toBeFalsy()
      expect(created.structuredContent?.data).toMatchObject({ alias, full_url: 'https://example.com/from-an-sdk' })
      await client.close()
    }, 30_000)
  }
})
