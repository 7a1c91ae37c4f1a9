import { t } from 'elysia'

/** RFC 6749 5.2 / RFC 7591 3.2.2: what every /oauth/* endpoint answers on an error. */
export const OAuthErrorResponse = t.Object(
  {
    error: t.String({ description: 'RFC 6749 / RFC 7591 error code, lower case' }),
    error_description: t.Optional(t.String({ description: 'What to do about it, for people' })),
  },
  { examples: [{ error: 'invalid_redirect_uri', error_description: 'http is allowed only on a loopback host (127.0.0.1, [::1], localhost); use https.' }] },
)

export const ClientRegistrationRequest = t.Object(
  {
    redirect_uris: t.Array(t.String({ maxLength: 2048 }), { minItems: 1, maxItems: 10, description: 'https; http on a loopback host; or a reverse-DNS private-use scheme' }),
    client_name: t.Optional(t.String({ maxLength: 200 })),
    grant_types: t.Optional(t.Array(t.String({ enum: ['authorization_code', 'refresh_token'] }))),
    response_types: t.Optional(t.Array(t.String({ enum: ['code'] }))),
    token_endpoint_auth_method: t.Optional(t.String({ description: 'Any value is accepted and registered as "none" (public clients only)' })),
    scope: t.Optional(t.String({ description: 'Space-separated scopes the client may ask for' })),
    client_uri: t.Optional(t.String({ format: 'uri' })),
    logo_uri: t.Optional(t.String({ format: 'uri' })),
    software_id: t.Optional(t.String({ maxLength: 200 })),
    software_version: t.Optional(t.String({ maxLength: 200 })),
  },
  {
    additionalProperties: true,
    examples: [{ client_name: 'Example MCP host', redirect_uris: ['http://127.0.0.1:33418/callback'], grant_types: ['authorization_code', 'refresh_token'], token_endpoint_auth_method: 'none', scope: 'links:read links:write' }],
  },
)

export const ClientRegistration = t.Object(
  {
    client_id: t.String({ pattern: '^cli_' }),
    client_id_issued_at: t.Number({ multipleOf: 1 }),
    client_name: t.Optional(t.String()),
    redirect_uris: t.Array(t.String()),
    grant_types: t.Array(t.String()),
    response_types: t.Array(t.String()),
    token_endpoint_auth_method: t.Literal('none'),
    scope: t.Optional(t.String()),
    client_uri: t.Optional(t.String()),
    logo_uri: t.Optional(t.String()),
    software_id: t.Optional(t.String()),
    software_version: t.Optional(t.String()),
  },
  {
    examples: [
      {
        client_id: 'cli_3q2V8mJcQ1aXy0bq9Wc2rA',
        client_id_issued_at: 1767225600,
        client_name: 'Example MCP host',
        redirect_uris: ['http://127.0.0.1:33418/callback'],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        scope: 'links:read links:write',
      },
    ],
  },
)

export const oauthModels = { OAuthErrorResponse, ClientRegistrationRequest, ClientRegistration }
