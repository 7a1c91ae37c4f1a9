// HTTPS on demand for custom domains through a real Caddy (Debian's /usr/bin/caddy): the product in one
// process (one-process/main.ts) with a loopback DNS server for domain verification, and a Caddy whose
// catch-all site gets certificates on demand from its own local CA after asking the product's /tls/ask.
// A verified custom domain gets a certificate and its short link answers over HTTPS; an unknown host and
// an unverified one get none (the handshake fails; Caddy logs the refusal from /tls/ask). Plus
// deploy/Caddyfile, checked by the same Caddy. Everything on loopback, Caddy's state in a temp dir.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Subprocess } from 'bun'
import { stopProcess } from '../bench/procs'
import { openDatabase } from '../src/db/client'
import { startTestDnsServer, type TestDnsServer } from './support/dns'
import { newAccount, newLink, type TestAccount } from './support/fixtures'
import { freePort, startEntry, type Child } from './support/processes'
import { eventually } from './support/stack'
import { ANSWER_DEADLINE_MS, until } from './support/wait'

const CADDY = '/usr/bin/caddy'
const haveCaddy = existsSync(CADDY)
if (!haveCaddy) console.info(`test/tls.e2e.test.ts: SKIPPED: no ${CADDY} (apt-get install caddy)`)

const ROOT = resolve(import.meta.dir, '..')
/** Caddy starting, or making its local CA, on a loaded 2-core machine: only a hang should fail here. */
const CADDY_START_MS = 30_000

/** A Caddy process with its own XDG dirs (data: certificates and the local CA) and its log in a file. */
interface RunningCaddy {
  httpsPort: number
  dataDir: string
  log(): string
  stop(): Promise<void>
}

function caddyEnv(dir: string): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: dir, XDG_DATA_HOME: join(dir, 'data'), XDG_CONFIG_HOME: join(dir, 'config') }
}

async function startCaddy(productPort: number): Promise<RunningCaddy> {
  const dir = mkdtempSync(join(tmpdir(), 'e2e-caddy-'))
  const [httpPort, httpsPort] = [await freePort(), await freePort()]
  // `debug` is what makes Caddy 2.6 log a handshake refused by the ask endpoint. No admin endpoint, no
  // HTTP/3 (UDP) listener, no port-80 redirects, nothing bound beyond loopback, no trust store touched.
  const config = `{
	admin off
	debug
	default_bind 127.0.0.1
	http_port ${httpPort}
	https_port ${httpsPort}
	auto_https disable_redirects
	skip_install_trust
	servers {
		protocols h1 h2
	}
	on_demand_tls {
		ask http://127.0.0.1:${productPort}/tls/ask
	}
}

https:// {
	tls internal {
		on_demand
	}
	reverse_proxy 127.0.0.1:${productPort}
}
`
  writeFileSync(join(dir, 'Caddyfile'), config)
  const logPath = join(dir, 'caddy.log')
  const proc: Subprocess = Bun.spawn([CADDY, 'run', '--config', join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], {
    cwd: dir,
    env: caddyEnv(dir),
    stdout: Bun.file(logPath),
    stderr: Bun.file(logPath),
  })
  const log = () => (existsSync(logPath) ? readFileSync(logPath, 'utf8') : '')
  const dataDir = join(dir, 'data', 'caddy')
  const caddy = { httpsPort, dataDir, log, stop: async () => void (await stopProcess(proc, 10_000)) }
  try {
    await until(
      async () => {
        if (proc.exitCode !== null) throw new Error(`caddy exited with ${proc.exitCode}:\n${log()}`)
        if (!existsSync(rootCertificate(caddy))) return false
        try {
          ;(await Bun.connect({ hostname: '127.0.0.1', port: httpsPort, socket: { data() {} } })).end()
          return true
        } catch {
          return false
        }
      },
      () => `caddy listening on ${httpsPort} with its local CA:\n${log()}`,
      CADDY_START_MS,
    )
  } catch (error) {
    await caddy.stop()
    throw error
  }
  return caddy
}

/** Caddy's local CA root: what a client trusts to accept the certificates it issues. */
const rootCertificate = (caddy: Pick<RunningCaddy, 'dataDir'>) => join(caddy.dataDir, 'pki', 'authorities', 'local', 'root.crt')
/** Where Caddy keeps a certificate its local CA issued for `host`. */
const storedCertificate = (caddy: RunningCaddy, host: string) => join(caddy.dataDir, 'certificates', 'local', host, `${host}.crt`)

/**
 * GET https://<host>/<path> through Caddy as a browser resolving `host` to loopback would send it: SNI
 * and Host are the name, the certificate is checked against the name and Caddy's root alone.
 */
async function overHttps(caddy: RunningCaddy, host: string, path: string): Promise<{ status: number; location: string | null } | { error: string }> {
  try {
    const response = await fetch(`https://127.0.0.1:${caddy.httpsPort}${path}`, {
      headers: { host },
      redirect: 'manual',
      tls: { ca: readFileSync(rootCertificate(caddy), 'utf8'), serverName: host },
      signal: AbortSignal.timeout(ANSWER_DEADLINE_MS),
    })
    await response.arrayBuffer()
    return { status: response.status, location: response.headers.get('location') }
  } catch (error) {
    return { error: String((error as { code?: unknown }).code ?? error) }
  }
}

describe.skipIf(!haveCaddy)('HTTPS on demand for custom domains, through a real Caddy', () => {
  const host = `tls-${crypto.randomUUID().slice(0, 8)}.example.com`
  const pendingHost = `pending-${crypto.randomUUID().slice(0, 8)}.example.com`
  let dns: TestDnsServer
  let product: Child
  let caddy: RunningCaddy
  let account: TestAccount
  let other: TestAccount
  let link: { alias: string; url: string }

  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'e2e-tls-'))
    const database = await openDatabase({ databaseUrl: undefined, dataDir })
    await database.migrate()
    // Free accounts (one custom domain each): a Pro link's redirect would carry attribution parameters.
    account = await newAccount(database.db)
    other = await newAccount(database.db)
    link = await newLink(database.db, account.id, host, 'go', 'https://example.com/over-https')
    await database.close()

    dns = await startTestDnsServer()
    const port = await freePort()
    product = await startEntry('one-process/main.ts', { PORT: String(port), DATA_DIR: dataDir, DNS_SERVERS: dns.server }, port)
    const call = (method: string, path: string, body?: unknown, as = account) =>
      fetch(`${product.url}${path}`, { method, headers: { authorization: `Bearer ${as.key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
    for (const [hostname, owner] of [
      [host, account],
      [pendingHost, other],
    ] as const) {
      const added = await call('POST', '/api/v1/domains', { hostname }, owner)
      const body = (await added.json()) as { data: { verification: { name: string; value: string } } }
      if (added.status !== 201) throw new Error(`add ${hostname}: ${added.status} ${JSON.stringify(body)}`)
      if (hostname === host) dns.setTxt(body.data.verification.name, [body.data.verification.value])
    }
    const verified = await call('POST', `/api/v1/domains/${host}/verify`)
    if (verified.status !== 200) throw new Error(`verify: ${verified.status} ${await verified.text()}`)
    caddy = await startCaddy(port)
  }, 150_000)

  afterAll(async () => {
    await caddy?.stop()
    if (product) expect(await product.stop(), product.output()).toBe(0)
    await dns?.close()
  }, 60_000)

  test('Caddy gets a certificate for the verified custom domain, and its short link answers over HTTPS: 302 to its destination', async () => {
    const { value } = await eventually(
      () => overHttps(caddy, host, `/${link.alias}`),
      (r) => 'status' in r && r.status === 302,
      ANSWER_DEADLINE_MS,
      {
        what: `https://${host}/${link.alias} through Caddy`,
      },
    )
    expect(value, caddy.log().slice(-4000)).toEqual({ status: 302, location: link.url })
    expect(existsSync(storedCertificate(caddy, host)), "the certificate is in Caddy's storage").toBe(true)
    // Obtained on demand, when the handshake asked for the name (Caddy was configured with no name at all).
    const obtained = caddy
      .log()
      .split('\n')
      .filter((line) => line.includes('tls.on_demand') && line.includes(host))
    expect(obtained.length, caddy.log().slice(-4000)).toBeGreaterThan(0)
  })

  test('a handshake for an unknown host or an unverified one fails: /tls/ask refused it, no certificate was issued', async () => {
    const unknown = `unknown-${crypto.randomUUID().slice(0, 8)}.example.org`
    for (const refused of [unknown, pendingHost]) {
      const answer = await overHttps(caddy, refused, `/${link.alias}`)
      expect(answer, `${refused}: ${JSON.stringify(answer)}`).toHaveProperty('error')
      // Caddy logs the refusal once the ask has answered: the marker that the refusal came from /tls/ask.
      await until(
        () =>
          caddy
            .log()
            .split('\n')
            .some((line) => line.includes(refused) && line.includes('not allowed') && line.includes('404')),
        () => `Caddy logging that /tls/ask refused ${refused}:\n${caddy.log().slice(-4000)}`,
      )
      expect(existsSync(join(caddy.dataDir, 'certificates', 'local', refused)), `no certificate for ${refused}`).toBe(false)
    }
  })
})

describe.skipIf(!haveCaddy)('deploy/Caddyfile and the compose file', () => {
  test('the real Caddy validates deploy/Caddyfile; it asks the compose api service, and the compose caddy service mounts it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'caddyfile-'))
    mkdirSync(join(dir, 'data'))
    const file = join(ROOT, 'deploy', 'Caddyfile')
    const validate = Bun.spawnSync([CADDY, 'validate', '--config', file, '--adapter', 'caddyfile'], { cwd: dir, env: caddyEnv(dir), stdout: 'pipe', stderr: 'pipe' })
    expect(validate.exitCode, `${validate.stdout}${validate.stderr}`).toBe(0)

    const adapt = Bun.spawnSync([CADDY, 'adapt', '--config', file, '--adapter', 'caddyfile'], { cwd: dir, env: caddyEnv(dir), stdout: 'pipe', stderr: 'pipe' })
    expect(adapt.exitCode, adapt.stderr.toString()).toBe(0)
    const adapted = JSON.parse(adapt.stdout.toString()) as { apps: { tls: { automation: { on_demand: { ask: string }; policies: { on_demand?: boolean }[] } } } }
    const ask = new URL(adapted.apps.tls.automation.on_demand.ask)
    expect(
      adapted.apps.tls.automation.policies.some((policy) => policy.on_demand === true),
      'a policy issues on demand',
    ).toBe(true)

    type Service = { image?: string; environment?: Record<string, string>; ports?: string[]; volumes?: string[]; depends_on?: Record<string, unknown> }
    const compose = Bun.YAML.parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as { services: Record<string, Service>; volumes: Record<string, unknown> }
    const api = compose.services[ask.hostname]
    expect(api, `the ask URL's host ${ask.hostname} is a compose service`).toBeDefined()
    expect(api!.environment?.PORT, "the ask URL names the API service's port").toBe(ask.port)
    expect(ask.pathname).toBe('/tls/ask')
    const caddyService = compose.services.caddy!
    expect(caddyService.volumes).toContain('./deploy/Caddyfile:/etc/caddy/Caddyfile:ro')
    const dataVolume = caddyService.volumes!.find((volume) => volume.endsWith(':/data'))!.split(':')[0]!
    expect(Object.keys(compose.volumes)).toContain(dataVolume)
    expect(caddyService.ports!.map((port) => port.split(':').pop())).toEqual(expect.arrayContaining(['80', '443']))
    expect(Object.keys(caddyService.depends_on ?? {}).sort()).toEqual(['api', 'redirect'])
  })
})
