// The MCP hosts people use, replayed as their published source (or a public issue thread quoting what
// they send) has them talk to a server: discovery, registration or client ID metadata document,
// authorize, the human's consent, token, then initialize, tools/list and create_link. Each case cites
// where its requests come from. DESIGN "Machine access": every one of them must connect first time.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { replay, startDocumentHost, type DocumentHost, type HostSpec } from '../support/hosts'
import { newHuman, startMcpStack, type McpStack } from '../support/mcp'
import type { TestAccount } from '../support/fixtures'
import { CHATGPT_REDIRECT_URI, chatgptClientDocument } from '../support/oauth'

let stack: McpStack
let human: TestAccount
let documents: DocumentHost

beforeAll(async () => {
  // Client ID metadata documents are served on loopback here (CIMD_ALLOW_HTTP_LOOPBACK is for tests only).
  stack = await startMcpStack({ CIMD_ALLOW_HTTP_LOOPBACK: 'true' })
  human = await newHuman(stack)
  documents = startDocumentHost()
  // The first file of a run opens the embedded engines (PGlite, chDB): slow on a loaded machine.
}, 120_000)

afterAll(async () => {
  await documents?.stop()
  await stack?.stop()
})

const asChallenged = (scope: string) => scope
/** The 401's scope (what SDK-based hosts ask for) and a refresh token. */
const withOfflineAccess = (scope: string) => `${scope} offline_access`
const fromMetadata = (resource: string) => resource

const HOSTS: Record<string, HostSpec> = {
  // Claude's connector (claude.ai, Claude Desktop): its registration body as quoted in
  // https://github.com/anthropics/claude-code/issues/5826 (redirect https://claude.ai/api/mcp/auth_callback,
  // client_secret_post); the jwt-bearer grant it has listed since June 2026 as reported in
  // https://github.com/anthropics/claude-ai-mcp/issues/487 and https://github.com/keycloak/keycloak/issues/50362.
  'Claude connector': {
    discovery: 'challenge',
    registration: () => ({
      client_name: 'Claude',
      redirect_uris: ['https://claude.ai/api/mcp/auth_callback'],
      grant_types: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:jwt-bearer'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    }),
    redirectUri: 'https://claude.ai/api/mcp/auth_callback',
    resource: fromMetadata,
    scope: asChallenged,
    protocolVersion: '2025-06-18',
  },
  // Claude Code: the TypeScript SDK's auth flow (modelcontextprotocol/typescript-sdk src/client/auth.ts)
  // with a loopback callback; its registration as quoted in https://github.com/anthropics/claude-code/issues/2527
  // (client_name "Claude Code (<server>)", redirect http://localhost:<port>/callback).
  'Claude Code': {
    discovery: 'challenge',
    registration: () => ({
      client_name: 'Claude Code (links)',
      redirect_uris: ['http://localhost:64236/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }),
    redirectUri: 'http://localhost:64236/callback',
    resource: fromMetadata,
    scope: asChallenged,
    protocolVersion: '2025-06-18',
  },
  // ChatGPT: a client ID metadata document declaring private_key_jwt with a jwks_uri, as published at
  // https://chatgpt.com/oauth/client.json and quoted in https://github.com/django-oauth/django-oauth-toolkit/issues/1845
  // and https://github.com/Altinity/altinity-mcp/issues/118; it signs a client assertion when the server
  // advertises private_key_jwt (https://github.com/operately/operately/issues/5164).
  ChatGPT: {
    discovery: 'challenge',
    metadataDocument: (clientId, jwksUri) => chatgptClientDocument(clientId, jwksUri),
    redirectUri: CHATGPT_REDIRECT_URI,
    tokenAuth: 'private_key_jwt',
    resource: fromMetadata,
    scope: withOfflineAccess,
    protocolVersion: '2025-06-18',
  },
  // VS Code (current): fetchDynamicRegistration in microsoft/vscode src/vs/base/common/oauth.ts (grant
  // types filtered by the server's grant_types_supported, loopback and vscode.dev redirects, port 33418),
  // and the strict RFC 9728 check of src/vs/workbench/api/common/extHostMcp.ts ("Protected Resource
  // Metadata resource ... does not match MCP server resolved resource").
  'VS Code': {
    discovery: 'challenge',
    strictResource: true,
    registration: () => ({
      client_name: 'Visual Studio Code',
      client_uri: 'https://code.visualstudio.com',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: ['https://insiders.vscode.dev/redirect', 'https://vscode.dev/redirect', 'http://127.0.0.1/', 'http://127.0.0.1:33418/'],
      scope: 'links:read links:write',
      token_endpoint_auth_method: 'none',
    }),
    redirectUri: 'http://127.0.0.1:33418/',
    resource: fromMetadata,
    scope: () => 'links:read links:write',
    protocolVersion: '2025-06-18',
  },
  // VS Code 1.10x: the earlier fetchDynamicRegistration in microsoft/vscode src/vs/base/common/oauth.ts,
  // grant types hard-coded with urn:ietf:params:oauth:grant-type:device_code, localhost and 127.0.0.1
  // redirects with and without port 33418; the same strict resource check; here the vscode.dev redirect
  // (the web relay back to vscode://).
  'VS Code 1.10x': {
    discovery: 'challenge',
    strictResource: true,
    registration: () => ({
      client_name: 'Visual Studio Code',
      client_uri: 'https://code.visualstudio.com',
      grant_types: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
      response_types: ['code'],
      redirect_uris: ['https://insiders.vscode.dev/redirect', 'https://vscode.dev/redirect', 'http://localhost/', 'http://127.0.0.1/', 'http://localhost:33418/', 'http://127.0.0.1:33418/'],
      token_endpoint_auth_method: 'none',
    }),
    redirectUri: 'https://vscode.dev/redirect',
    resource: fromMetadata,
    scope: asChallenged,
    protocolVersion: '2025-03-26',
  },
  // Cursor: three redirect URIs in one registration, the private-use cursor:// one first, as recorded in
  // https://github.com/erp-mafia/accounted/pull/2225 and https://github.com/different-ai/openwork/pull/3059
  // (token_endpoint_auth_method none); the browser comes back to cursor://anysphere.cursor-mcp/oauth/callback.
  Cursor: {
    discovery: 'challenge',
    registration: () => ({
      client_name: 'Cursor',
      redirect_uris: ['cursor://anysphere.cursor-mcp/oauth/callback', 'https://www.cursor.com/agents/mcp/oauth/callback', 'http://localhost:8787/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }),
    redirectUri: 'cursor://anysphere.cursor-mcp/oauth/callback',
    resource: fromMetadata,
    scope: asChallenged,
    protocolVersion: '2025-06-18',
  },
  // The MCP Inspector runs OAuth in the page (modelcontextprotocol/inspector client/src/lib/auth.ts:
  // InspectorOAuthClientProvider, redirect window.location.origin + "/oauth/callback", the SDK's auth
  // flow in the browser), so every request is cross-origin from http://localhost:6274 and needs CORS.
  'MCP Inspector': {
    discovery: 'challenge',
    browserOrigin: 'http://localhost:6274',
    registration: () => ({
      redirect_uris: ['http://localhost:6274/oauth/callback'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      client_name: 'MCP Inspector',
      client_uri: 'https://github.com/modelcontextprotocol/inspector',
      scope: '',
    }),
    redirectUri: 'http://localhost:6274/oauth/callback',
    resource: fromMetadata,
    scope: asChallenged,
    protocolVersion: '2025-06-18',
  },
}

describe('each host connects on the first try and calls a tool', () => {
  for (const [name, host] of Object.entries(HOSTS)) {
    test(name, async () => {
      const done = await replay(stack, human, host, documents)
      expect(done.tools).toContain('create_link')
      expect(done.toolResult.isError, JSON.stringify(done.toolResult).slice(0, 500)).toBeFalsy()
      expect(done.toolResult.structuredContent?.data).toMatchObject({ alias: done.alias, full_url: 'https://example.com/from-a-host' })
      const redirect = await fetch(`${stack.origin}/${done.alias}`, { redirect: 'manual' })
      expect([redirect.status, redirect.headers.get('location')]).toEqual([302, 'https://example.com/from-a-host'])
      if (done.registered) {
        // RFC 7591 3.2.1: the answer says what was registered; a grant the server lacks is not in it.
        expect(done.registered.grant_types).toContain('authorization_code')
        for (const grant of (done.registered.grant_types as string[]) ?? []) expect(['authorization_code', 'refresh_token']).toContain(grant)
        expect(done.registered.token_endpoint_auth_method).toBe('none')
      }
    }, 30_000)
  }
})
