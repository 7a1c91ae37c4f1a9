// What an Agent's token may be granted, as two tables: the OAuth scopes (what a token may do, in words
// for the consent page) and the operations a policy may hold for a human decision (docs/agents-and-mcp.md#approvals). Route
// declarations name their scope and operation through these types, so a typo fails the type check;
// discovery (scopes_supported), registration, consent, the Agent model and the MCP tools read them too.
// A new kind of Agent call adds its scope and its operation here, and nowhere else but its route.

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
  'webhooks:read': 'read your webhooks and their deliveries',
  'webhooks:write': 'create, change, test and delete your webhooks',
  offline_access: 'stay connected while you are away (refresh tokens)',
} as const

export type Scope = keyof typeof SCOPES

export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPES, value)
}

/** Operations a policy may hold for a human, in words for the review page and the document. */
export const OPERATIONS = {
  'links.create': 'create a link',
  'links.update': 'change a link',
  'links.delete': 'delete a link',
  'links.routing': 'change where a link sends its visitors (routing rules and A/B tests)',
  'tags.create': 'create a tag',
  'tags.delete': 'delete a tag',
  'tags.assign': 'assign or remove a tag',
  'domains.change': 'add, verify, change or remove a custom domain',
  'billing.upgrade': 'start an upgrade of the plan',
  'webhooks.change': "add, change or delete a webhook, or rotate its secret (where and how the account's events are sent)",
} as const

export type Operation = keyof typeof OPERATIONS

export const OPERATION_NAMES = Object.keys(OPERATIONS) as [Operation, ...Operation[]]

/**
 * Operations held for a human by default: link deletion, tag deletion, domain changes, billing, and
 * webhook changes (an Agent must not send the account's events elsewhere unseen).
 */
export const DEFAULT_REQUIRE_APPROVAL = ['links.delete', 'tags.delete', 'domains.change', 'billing.upgrade', 'webhooks.change'] as const satisfies readonly Operation[]
