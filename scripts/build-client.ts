// `npm run client:build`: client/dist, the typed client as another project installs it (client/package.json):
//
//   dist/index.js      ESM, compiled from client/index.ts by the project's TypeScript (client/tsconfig.build.json)
//   dist/index.d.ts    its declarations
//   dist/schema.d.ts   a re-export of client/schema.d.ts, which the package ships as it is
//
// dist/ is committed, so a folder or tarball install needs no build step; it depends on index.ts alone
// (the API's types are re-exported, not copied), so `npm run client:generate` after an API change leaves
// it as it is. client/package.test.ts fails while it is out of date.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

const ROOT = resolve(import.meta.dir, '..')
export const CLIENT_DIR = join(ROOT, 'client')
export const DIST_DIR = join(CLIENT_DIR, 'dist')
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc')

const SCHEMA_STUB = `// The API's types: client/schema.d.ts, generated from the OpenAPI document, shipped as it is.
export * from '../schema.js'
`

/** Compiles the client into `outDir` (emptied first); returns the files written, by name. */
export function buildClient(outDir: string): Map<string, string> {
  rmSync(outDir, { recursive: true, force: true })
  mkdirSync(outDir, { recursive: true })
  const result = Bun.spawnSync([process.execPath, TSC, '-p', join(CLIENT_DIR, 'tsconfig.build.json'), '--outDir', outDir], {
    cwd: CLIENT_DIR,
    stdout: 'pipe',
    stderr: 'pipe',
  })
  if (result.exitCode !== 0) throw new Error(`tsc -p client/tsconfig.build.json exited ${result.exitCode}:\n${result.stdout}${result.stderr}`)
  writeFileSync(join(outDir, 'schema.d.ts'), SCHEMA_STUB)
  return new Map(readdirSync(outDir).map((name) => [name, readFileSync(join(outDir, name), 'utf8')]))
}

if (import.meta.main) {
  for (const name of buildClient(DIST_DIR).keys()) console.log(`client/dist/${name}: written`)
}
