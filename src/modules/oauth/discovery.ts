// Discovery (RFC 8414 authorization server metadata, RFC 9728 protected resource metadata). One issuer
// (PUBLIC_API_URL, no trailing slash) is also the protected resource of the REST API; /mcp has its own
// document at the path-inserted URL, naming `<issuer>/mcp` (RFC 9728 3.3: the document fetched for a
// resource must name it, and VS Code, Gemini CLI and the C# SDK drop it otherwise).
import { t } from 'elysia'
import type { Config } from '../../../core/config'
import { resourcesOf, type Endpoint } from '../agents/audience'
import { SCOPES } from '../../lib/agent-access'
import { ASSERTION_ALGORITHMS } from './cimd'
import { issuerExample } from './model'

type Urls = Pick<Config, 'publicApiUrl'>

export const AUTHORIZATION_SERVER_PATH = '/.well-known/oauth-authorization-server'
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource'

export function protectedResourceMetadataUrl(config: Urls): string {
  return `${config.publicApiUrl}${PROTECTED_RESOURCE_PATH}`
}

export function authorizationServerMetadata(config: Urls) {
  const issuer = config.publicApiUrl
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    registration_endpoint: `${issuer}/oauth/register`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    // private_key_jwt: for clients whose metadata document declares it (client-auth.ts).
    token_endpoint_auth_methods_supported: ['none', 'private_key_jwt'],
    token_endpoint_auth_signing_alg_values_supported: [...ASSERTION_ALGORITHMS],
    revocation_endpoint_auth_methods_supported: ['none', 'private_key_jwt'],
    revocation_endpoint_auth_signing_alg_values_supported: [...ASSERTION_ALGORITHMS],
    scopes_supported: Object.keys(SCOPES),
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: true,
    service_documentation: `${issuer}/swagger`,
  }
}

/** The document of the REST API (the issuer), or of /mcp (`<issuer>/mcp`). */
export function protectedResourceMetadata(config: Urls, endpoint: Endpoint = 'api') {
  const issuer = config.publicApiUrl
  return {
    resource: resourcesOf(config)[endpoint],
    authorization_servers: [issuer],
    scopes_supported: Object.keys(SCOPES),
    bearer_methods_supported: ['header'],
    resource_name: endpoint === 'mcp' ? 'Link service MCP endpoint' : 'Link service API',
    resource_documentation: `${issuer}/swagger`,
  }
}

// The documents' schemas, beside what serves them: each example is the document itself, for an
// example issuer, so it cannot drift from what is served.
export const AuthorizationServerMetadata = t.Object(
  {
    issuer: t.String(),
    authorization_endpoint: t.String(),
    token_endpoint: t.String(),
    registration_endpoint: t.String(),
    revocation_endpoint: t.String(),
    response_types_supported: t.Array(t.String()),
    response_modes_supported: t.Array(t.String()),
    grant_types_supported: t.Array(t.String()),
    code_challenge_methods_supported: t.Array(t.String()),
    token_endpoint_auth_methods_supported: t.Array(t.String()),
    token_endpoint_auth_signing_alg_values_supported: t.Array(t.String()),
    revocation_endpoint_auth_methods_supported: t.Array(t.String()),
    revocation_endpoint_auth_signing_alg_values_supported: t.Array(t.String()),
    scopes_supported: t.Array(t.String()),
    authorization_response_iss_parameter_supported: t.Boolean(),
    client_id_metadata_document_supported: t.Boolean(),
    service_documentation: t.String(),
  },
  { examples: [authorizationServerMetadata({ publicApiUrl: issuerExample })] },
)

export const ProtectedResourceMetadata = t.Object(
  {
    resource: t.String(),
    authorization_servers: t.Array(t.String()),
    scopes_supported: t.Array(t.String()),
    bearer_methods_supported: t.Array(t.String()),
    resource_name: t.String(),
    resource_documentation: t.String(),
  },
  { examples: [protectedResourceMetadata({ publicApiUrl: issuerExample })] },
)

export const discoveryModels = { AuthorizationServerMetadata, ProtectedResourceMetadata }
