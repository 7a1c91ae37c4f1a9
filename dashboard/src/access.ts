// What a key or an Agent may be granted, in words: the service's own tables (src/lib/agent-access.ts has
// no imports and no server code), so a scope or an operation added there shows here with no second list.
import { DEFAULT_REQUIRE_APPROVAL, OPERATIONS, SCOPES, type Operation } from '../../src/lib/agent-access.ts'

export type { Operation }

/** Scopes a key or an Agent created here may hold; offline_access only means something in OAuth. */
export const GRANTABLE_SCOPES: Record<string, string> = Object.fromEntries(Object.entries(SCOPES).filter(([scope]) => scope !== 'offline_access'))

export const OPERATION_WORDS: Record<Operation, string> = OPERATIONS

export const DEFAULT_HELD: Operation[] = [...DEFAULT_REQUIRE_APPROVAL]

/** A list of scopes in words for a table cell; null is a key's full access. */
export const scopeList = (scopes: readonly string[] | null) => (scopes === null ? 'Full access' : scopes.length === 0 ? 'None' : scopes.join(', '))
