// The `admin` scope of an API key, and who may hold it: an operator of this instance, an account whose
// e-mail address is in ADMIN_EMAILS (docs/operators.md). Every account's address was verified when the
// account was made (accounts are created by e-mail verification), and both sides are lower-case (the
// accounts table stores it so, the config parser lower-cases the list). The admin API's guard
// (modules/admin/guard.ts) asks the same question here. `admin` is never an OAuth scope
// (src/lib/agent-access.ts): no Agent or OAuth client can be given it.
import type { Config } from '../../../core/config'

export const ADMIN_SCOPE = 'admin'

export function isOperator(config: Pick<Config, 'adminEmails'>, email: string): boolean {
  return config.adminEmails.includes(email.toLowerCase())
}
