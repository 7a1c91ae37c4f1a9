// The typed client as another project gets it: client/package.json packed as npm packs it (only its
// `files`), installed as a file: dependency of a scratch project outside the repository, type-checked by
// that project with Node's own module resolution, and called from Node.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildClient, CLIENT_DIR, DIST_DIR } from '../scripts/build-client'

const ROOT = join(CLIENT_DIR, '..')
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc')

/** Runs a command; its stdout, or an error with all it printed. */
function run(cmd: string[], cwd: string): string {
  const result = Bun.spawnSync(cmd, { cwd, stdout: 'pipe', stderr: 'pipe', env: { ...process.env, NO_COLOR: '1' } })
  const stdout = result.stdout.toString()
  if (result.exitCode !== 0) throw new Error(`${cmd.join(' ')} exited ${result.exitCode} in ${cwd}:\n${stdout}${result.stderr.toString()}`)
  return stdout
}

// What the other project writes: typed calls, and one wrong path that must not compile (so the types are
// really there, not `any`).
const USAGE_TS = `import { createLinkClient, type LinkClient, type components } from '@linkservice/client'

export async function shorten(client: LinkClient, url: string): Promise<string> {
  const { data, error } = await client.POST('/api/v1/shorten', { body: { url } })
  if (error) throw new Error(error.error + ': ' + error.hint)
  if ('approval' in data.data) return data.data.approval.review_url
  return data.data.short_url
}

export const guest = createLinkClient('http://localhost:3000')
export type ErrorBody = components['schemas']['ErrorResponse']
// @ts-expect-error: no such route
export const wrong = guest.GET('/api/v1/no-such-route')
`

// The package at run time, from Node (plain ESM, nothing of Bun): one call, printed as it came back.
const RUN_MJS = `import { createLinkClient } from '@linkservice/client'
const links = createLinkClient(process.argv[2], 'mk_from-another-project')
const { data, response } = await links.POST('/api/v1/shorten', { body: { url: 'https://example.com/from-another-project' } })
console.log(JSON.stringify({ status: response.status, data }))
`

const TSCONFIG = {
  compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM'], types: [], strict: true, noEmit: true },
  files: ['usage.ts'],
}

describe('client/ as a package of its own', () => {
  let scratch: string

  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'client-consumer-'))
  })
  afterAll(() => rmSync(scratch, { recursive: true, force: true }))

  test('client/dist is what npm run client:build makes of client/index.ts', () => {
    const built = buildClient(join(scratch, 'dist'))
    const committed = new Map(readdirSync(DIST_DIR).map((name) => [name, readFileSync(join(DIST_DIR, name), 'utf8')]))
    expect([...committed.keys()].sort(), 'client/dist is out of date: run npm run client:build').toEqual([...built.keys()].sort())
    for (const [name, text] of built) expect(committed.get(name), `client/dist/${name} is out of date: run npm run client:build`).toBe(text)
  }, 60_000)

  test('packed, installed as a file: dependency, it type-checks in another project and runs under Node', async () => {
    // npm pack ships `files` only: what the package really carries.
    const packed = run(['npm', 'pack', CLIENT_DIR, '--pack-destination', scratch, '--json'], scratch)
    const tarball = (JSON.parse(packed) as { filename: string; files: { path: string }[] }[])[0]!
    expect(tarball.files.map((f) => f.path).sort()).toEqual(['dist/index.d.ts', 'dist/index.js', 'dist/schema.d.ts', 'package.json', 'schema.d.ts'])

    const project = join(scratch, 'project')
    run(['mkdir', '-p', project], scratch)
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies: { '@linkservice/client': `file:${join(scratch, tarball.filename)}` } }),
    )
    // openapi-fetch from the local cache the repository's own install filled; the registry only if it is not there.
    try {
      run([process.execPath, 'install', '--offline', '--no-save'], project)
    } catch {
      run([process.execPath, 'install', '--prefer-offline', '--no-save'], project)
    }
    writeFileSync(join(project, 'usage.ts'), USAGE_TS)
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(TSCONFIG))
    expect(run([process.execPath, TSC, '-p', project], project).trim()).toBe('')

    // What Node sends is what counts here (the API's answers are client.test.ts's): a server that takes
    // the request down and answers with it. Not the app itself, whose first requests still change its
    // OpenAPI document, which client.test.ts compares in this same process.
    const seen: unknown[] = []
    const server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: async (request) => {
        const got = { method: request.method, path: new URL(request.url).pathname, authorization: request.headers.get('authorization'), body: await request.json() }
        seen.push(got)
        return Response.json({ data: got })
      },
    })
    try {
      writeFileSync(join(project, 'run.mjs'), RUN_MJS)
      // Spawned without blocking: the server answering it runs on this process's event loop.
      const node = Bun.spawn([Bun.which('node') ?? process.execPath, 'run.mjs', server.url.origin], { cwd: project, stdout: 'pipe', stderr: 'pipe' })
      const [stdout, stderr, code] = await Promise.all([new Response(node.stdout).text(), new Response(node.stderr).text(), node.exited])
      expect(code, stderr).toBe(0)
      const sent = { method: 'POST', path: '/api/v1/shorten', authorization: 'Bearer mk_from-another-project', body: { url: 'https://example.com/from-another-project' } }
      expect(seen).toEqual([sent])
      expect(JSON.parse(stdout)).toEqual({ status: 200, data: { data: sent } })
    } finally {
      server.stop(true)
    }
  }, 120_000)
})
