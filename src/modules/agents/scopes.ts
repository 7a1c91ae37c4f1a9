// The scopes an OAuth client may ask for, and what each lets a token do, in words for the consent page.
// One table: discovery (scopes_supported), registration and authorization read it.
export const SCOPES = {
  'links:read': 'read your links',
  'links:write': 'create and change your links',
  'links:delete': 'delete your links',
  'tags:read': 'read your tags',
  'tags:write': 'create, delete and assign your tags',
  'domains:read': 'read your custom domains',
  'domains:write': 'add, verify and remove your custom domains',
  'stats:read': 'read the statistics of your links',
  'conversions:write': 'report conversions of your links',
  'account:read': 'read your plan and usage',
  'billing:write': 'start an upgrade of your plan',
  offline_access: 'stay connected while you are away (refresh tokens)',
} as const

export type Scope = keyof typeof SCOPES

export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPES, value)
}
