import { t } from 'elysia'
import { idPattern } from '../../lib/ids'

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
    redirect_uris: t.Array(t.String({ maxLength: 2048 }), {
      minItems: 1,
      maxItems: 10,
      description: 'https; http on a loopback host (any port); or a private-use scheme (cursor://…, com.example.app:/…); never a fragment',
    }),
    client_name: t.Optional(t.String({ maxLength: 200 })),
    grant_types: t.Optional(
      t.Array(t.String(), { description: 'Must include authorization_code; grants other than authorization_code and refresh_token are dropped (the answer lists what was registered)' }),
    ),
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
    examples: [
      {
        client_name: 'Example MCP host',
        redirect_uris: ['http://127.0.0.1:33418/callback'],
        grant_types: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_method: 'none',
        scope: 'links:read links:write',
      },
    ],
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

/** RFC 6749 4.1.3 / 6: the form of POST /oauth/token (schema for the document; the handler checks it). */
export const TokenRequest = t.Object(
  {
    grant_type: t.String({ enum: ['authorization_code', 'refresh_token'] }),
    client_id: t.String({ description: 'The registered client_id (or the URL of its metadata document)' }),
    code: t.Optional(t.String({ description: 'authorization_code: the code from the redirect' })),
    code_verifier: t.Optional(t.String({ description: 'authorization_code: the PKCE verifier (43-128 characters)' })),
    redirect_uri: t.Optional(t.String({ description: 'authorization_code: the redirect_uri of the authorization request' })),
    refresh_token: t.Optional(t.String({ description: 'refresh_token: the current rt_ token (each is used once)' })),
    scope: t.Optional(t.String({ description: 'refresh_token: a subset of the granted scopes' })),
    resource: t.Optional(t.String({ description: 'RFC 8707: the resource of the code (the issuer or <issuer>/mcp; an issuer code may be narrowed to <issuer>/mcp); another one is invalid_target' })),
    client_assertion_type: t.Optional(
      t.String({ enum: ['urn:ietf:params:oauth:client-assertion-type:jwt-bearer'], description: 'private_key_jwt clients (their metadata document declares it): RFC 7523' }),
    ),
    client_assertion: t.Optional(
      t.String({
        description: 'private_key_jwt clients: a JWT signed with a key of the document, iss = sub = client_id, aud = the token endpoint or the issuer, exp within 10 minutes, a jti used once',
      }),
    ),
  },
  {
    examples: [
      {
        grant_type: 'authorization_code',
        client_id: 'cli_3q2V8mJcQ1aXy0bq9Wc2rA',
        code: 'n0tAr3alC0de-n0tAr3alC0de-n0tAr3alC0de12',
        code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
        redirect_uri: 'http://127.0.0.1:33418/callback',
        resource: 'https://api.example.com',
      },
    ],
  },
)

export const TokenResponse = t.Object(
  {
    access_token: t.String({ pattern: '^at_', description: 'Opaque; send as Authorization: Bearer' }),
    token_type: t.Literal('Bearer'),
    expires_in: t.Number({ description: 'Seconds (900)' }),
    refresh_token: t.Optional(t.String({ pattern: '^rt_', description: 'Single use: each refresh returns a new one' })),
    scope: t.String({ description: 'The scopes granted, space-separated' }),
  },
  {
    examples: [
      {
        access_token: 'at_Jx8hQk2sYb7M0fL4tPzq1wVn6cRaE5dG3uKoZy9iB_A',
        token_type: 'Bearer',
        expires_in: 900,
        refresh_token: 'rt_8Zc1Lq4mWn0vXb6tRy2pHs9kDa3fGe7jUo5iQw_Pz-E',
        scope: 'links:read links:write',
      },
    ],
  },
)

export const RevokeRequest = t.Object(
  {
    token: t.String({ description: 'An at_ or rt_ token; revoking an rt_ revokes every token of its grant' }),
    token_type_hint: t.Optional(t.String({ enum: ['access_token', 'refresh_token'] })),
    client_id: t.String(),
  },
  { examples: [{ token: 'rt_8Zc1Lq4mWn0vXb6tRy2pHs9kDa3fGe7jUo5iQw_Pz-E', token_type_hint: 'refresh_token', client_id: 'cli_3q2V8mJcQ1aXy0bq9Wc2rA' }] },
)

/** The issuer of the examples. */
export const issuerExample = 'https://api.example.com'

const ConsentRequest = t.Object({
  request_id: t.String({ pattern: '^oreq_' }),
  client: t.Object({ client_id: t.String(), client_name: t.Union([t.String(), t.Null()]), redirect_uri: t.String() }),
  scopes: t.Array(t.String()),
  resource: t.String(),
  status: t.String({ enum: ['pending', 'approved', 'denied', 'expired'] }),
  expires_at: t.String({ format: 'date-time' }),
})

export const ConsentRequestResponse = t.Object(
  { success: t.Literal(true), data: ConsentRequest, meta: t.Object({}, { additionalProperties: true }) },
  {
    examples: [
      {
        success: true,
        data: {
          request_id: 'oreq_Vb0c3Xw9Lk2Qm8Rt5Yp1Za',
          client: { client_id: 'cli_3q2V8mJcQ1aXy0bq9Wc2rA', client_name: 'Example MCP host', redirect_uri: 'http://127.0.0.1:33418/callback' },
          scopes: ['links:read', 'links:write'],
          resource: issuerExample,
          status: 'pending',
          expires_at: '2026-11-24T10:10:00.000Z',
        },
        meta: {},
      },
    ],
  },
)

export const ConsentApproveRequest = t.Object(
  {
    request_id: t.String({ pattern: idPattern('oauthRequest') }),
    approve: t.Optional(t.Boolean({ default: true, description: 'false denies the request' })),
    scopes: t.Optional(t.Array(t.String({ maxLength: 40 }), { maxItems: 20, description: 'A subset of the requested scopes; absent: all of them' })),
  },
  { examples: [{ request_id: 'oreq_Vb0c3Xw9Lk2Qm8Rt5Yp1Za', approve: true, scopes: ['links:read'] }] },
)

export const ConsentApproveResponse = t.Object(
  { success: t.Literal(true), data: t.Object({ redirect_to: t.String({ format: 'uri' }) }), meta: t.Object({}, { additionalProperties: true }) },
  {
    examples: [
      {
        success: true,
        data: { redirect_to: `http://127.0.0.1:33418/callback?code=n0tAr3alC0de-n0tAr3alC0de-n0tAr3alC0de12&state=af0ifjsldkj&iss=${encodeURIComponent(issuerExample)}` },
        meta: {},
      },
    ],
  },
)

export const oauthFlowModels = {
  TokenRequest,
  TokenResponse,
  RevokeRequest,
  ConsentRequestResponse,
  ConsentApproveRequest,
  ConsentApproveResponse,
}
