// A docs page's worked examples, run as written: its ```sh blocks go, one by one, to one bash, as a
// reader pastes them beside `npm start`. Each comment in a block is a line the block prints (`…` stands
// for what differs between runs): expectShown asserts the output is those lines. Used by the tests of
// docs/routing.md, docs/operators.md and docs/webhooks.md and the README's tour; startDocWalk starts the
// service and the shell they run against.
import { expect } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { freePort, startEntry, type Child } from './processes'

const ROOT = resolve(import.meta.dir, '../..')

/** A section of a docs page, from its `## ` heading to the next one, and its ```sh blocks in order. */
export function examplesOf(page: string, heading: string): { section: string; blocks: string[] } {
  const text = readFileSync(join(ROOT, page), 'utf8')
  const start = text.indexOf(`\n## ${heading}\n`)
  if (start < 0) throw new Error(`${page}: no "## ${heading}" section`)
  const end = text.indexOf('\n## ', start + 1)
  const section = text.slice(start, end < 0 ? undefined : end)
  return { section, blocks: [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!) }
}

/** `NAME=value … npm start` → the variables it sets; anything else is not a start line. */
export function startVariables(block: string): Record<string, string> {
  const match = /^((?:[A-Z][A-Z0-9_]*=\S+ +)*)npm start\n?$/.exec(block)
  if (!match) throw new Error(`not a start line "NAME=value npm start":\n${block}`)
  return Object.fromEntries(
    match[1]!
      .trim()
      .split(/ +/)
      .filter(Boolean)
      .map((pair) => pair.split('=', 2) as [string, string]),
  )
}

/** The lines a block's comments say it prints: whole-line comments and comments after two spaces. */
export function shownLines(block: string): string[] {
  return block.split('\n').flatMap((line) => {
    const comment = /^\s*# (.*)$/.exec(line) ?? /\s{2,}# (.*)$/.exec(line)
    return comment ? [comment[1]!.trimEnd()] : []
  })
}

/** A shown line as a pattern of a whole output line: `…` is anything. */
export function linePattern(shown: string): RegExp {
  return new RegExp(
    `^${shown
      .split('…')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  )
}

/** The entry `npm start` runs: the .ts file package.json's start script names. */
export function startEntryPath(): string {
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts
  const entry = scripts.start?.split(/\s+/).find((word) => word.endsWith('.ts'))
  if (!entry) throw new Error(`package.json: no .ts entry in the start script: ${scripts.start}`)
  return entry
}

export interface BlockRun {
  status: number
  lines: string[]
  /** The block, its stdout and stderr: the message of every assertion on it. */
  shown: string
}

/** One bash for the whole walk: each block is written to its stdin, then a line marking its end and status. */
export function startShell(cwd: string) {
  const proc = Bun.spawn(['bash', '--noprofile', '--norc'], {
    cwd,
    // The Bun running the tests first on PATH, for the blocks that run `bun`.
    env: { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`, HOME: process.env.HOME ?? '' },
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const reader = proc.stdout.getReader()
  const decoder = new TextDecoder()
  let stdout = ''
  let stderr = ''
  let blocks = 0
  void (async () => {
    const errorDecoder = new TextDecoder()
    for await (const chunk of proc.stderr) stderr += errorDecoder.decode(chunk, { stream: true })
  })()

  async function run(block: string): Promise<BlockRun> {
    const marker = `__docs_block_${++blocks}_done__`
    const errorsBefore = stderr.length
    proc.stdin.write(`${block}\nprintf '\\n${marker} %s\\n' "$?"\n`)
    proc.stdin.flush()
    const end = new RegExp(`\\n${marker} (\\d+)\\n`)
    let found: RegExpExecArray | null
    while (!(found = end.exec(stdout))) {
      const { value, done } = await reader.read()
      if (done) throw new Error(`bash ended during the block:\n${block}\nstdout: ${stdout}\nstderr: ${stderr}`)
      stdout += decoder.decode(value, { stream: true })
    }
    const output = stdout.slice(0, found.index)
    stdout = stdout.slice(found.index + found[0].length)
    const lines = output.split(/\r?\n/).filter((line) => line !== '')
    return { status: Number(found[1]), lines, shown: `block:\n${block}\nstdout:\n${output}\nstderr:\n${stderr.slice(errorsBefore)}` }
  }

  return { run, stop: () => proc.kill() }
}

/** The block ended with status 0 and printed exactly the lines its comments show. */
export function expectShown(block: string, run: BlockRun): void {
  expect(run.status, run.shown).toBe(0)
  const shown = shownLines(block)
  expect(run.lines.length, `${shown.length} lines shown:\n${shown.join('\n')}\n${run.shown}`).toBe(shown.length)
  for (const [i, line] of shown.entries()) expect(run.lines[i], `line ${i + 1} shown as: ${line}\n${run.shown}`).toMatch(linePattern(line))
}

/** How the pages name the service: each walk's own origin replaces it in every block. */
export const DOC_ORIGIN = 'http://localhost:3000'

export interface DocWalk {
  /** The running service's origin, as the blocks name it once localised. */
  origin: string
  /** The reader's directory: the shell's working directory, holding DATA_DIR. */
  dir: string
  app: Child
  shell: ReturnType<typeof startShell>
  /** A block with the page's origin (and the walk's other replacements) made this run's. */
  localise(block: string): string
  /** Runs a block, localised, and asserts it printed what its comments show. */
  run(block: string): Promise<BlockRun>
  /** Ends what a block left in the background, the shell, the service, and removes the directory. */
  stop(): Promise<void>
}

export interface DocWalkOptions {
  /** Names the temporary directory. */
  name: string
  /** The entry's environment beside PORT and DATA_DIR (a start line's variables), given the reader's directory. */
  env?: (dir: string) => Record<string, string>
  /** Runs before the service starts, in the reader's directory; returns more replacements for the blocks. */
  prepare?: (dir: string, shell: ReturnType<typeof startShell>) => Promise<Record<string, string> | undefined>
}

/**
 * A walk through a page's examples as a reader makes it: a temporary directory holding DATA_DIR, one
 * bash there, and the entry `npm start` runs on a free port with the start line's variables.
 */
export async function startDocWalk(options: DocWalkOptions): Promise<DocWalk> {
  const dir = mkdtempSync(join(tmpdir(), `e2e-${options.name}-`))
  const shell = startShell(dir)
  let app: Child | undefined
  const stop = async () => {
    // A block that failed may have left a job running (not waited for long: one that failed inside
    // its wait loop still holds the shell).
    await Promise.race([shell.run('kill $(jobs -p) 2>/dev/null; true').catch(() => undefined), Bun.sleep(2000)])
    shell.stop()
    await app?.stop()
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    const port = await freePort()
    const origin = `http://localhost:${port}`
    const replacements: Record<string, string> = { [DOC_ORIGIN]: origin, ...(await options.prepare?.(dir, shell)) }
    app = await startEntry(startEntryPath(), { ...options.env?.(dir), PORT: String(port), DATA_DIR: join(dir, 'data') }, port)
    const localise = (block: string) => Object.entries(replacements).reduce((text, [from, to]) => text.replaceAll(from, to), block)
    const run = async (block: string) => {
      const local = localise(block)
      const result = await shell.run(local)
      expectShown(local, result)
      return result
    }
    return { origin, dir, app, shell, localise, run, stop }
  } catch (error) {
    await stop()
    throw error
  }
}
