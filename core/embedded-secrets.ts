// Secrets of the embedded default that nobody configured: generated once into DATA_DIR and reused, so
// a restart keeps what they protect. INTERNAL_SECRET keys the click signatures (mu_sig) and the e-mail
// code pepper; IP_HASH_SECRET keeps IP hashes comparable across runs. A random secret per process
// would break every signature issued before a restart.
//
// The file is JSON, mode 0600 (the owner alone reads it), written to a temporary name and renamed, so a
// crash never leaves half a file. Set the variables to keep secrets out of DATA_DIR altogether.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export const SECRETS_FILE = 'secrets.json'

/** 32 random bytes as hex: 64 characters, well above the 32 a configured secret must have. */
function newSecret(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')
}

function read(path: string): Record<string, string> {
  if (!existsSync(path)) return {}
  const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'))
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`${path}: not a JSON object`)
  return Object.fromEntries(Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === 'string'))
}

/** The secret `name` stored under dataDir, generated and stored on first use. */
export function storedSecret(name: string, dataDir: string): string {
  const path = join(dataDir, SECRETS_FILE)
  const secrets = read(path)
  const existing = secrets[name]
  if (existing && existing.length >= 32) return existing
  secrets[name] = newSecret()
  mkdirSync(dataDir, { recursive: true })
  const temporary = `${path}.${process.pid}.tmp`
  writeFileSync(temporary, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 })
  chmodSync(temporary, 0o600)
  renameSync(temporary, path)
  return secrets[name]!
}
