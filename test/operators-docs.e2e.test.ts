// The worked examples of docs/operators.md, run as written. The section's first ```sh block starts the
// service: its lines before the last go to the shell (they write the block list), and its last line is
// the start line, whose variables become the environment of the entry package.json's start script names,
// beside a free port and a temporary DATA_DIR. A value starting with `./` is a path in the reader's
// directory, which here is the shell's (the directory that holds DATA_DIR), so it is made absolute
// there: the entry itself runs in the repository. Every later block goes, one by one, to that one bash;
// each comment in a block is a line the block prints (`…` for what differs between runs), and the output
// must be those lines. After some blocks the test also asserts what the prose says and the comments
// cannot pin: the link a ban disabled, and the link the audit names.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { resolve } from 'node:path'
import { examplesOf, startDocWalk, startVariables, type BlockRun, type DocWalk, type startShell } from './support/doc-examples'

/** A start, a request: far longer than any takes, short of a hang. */
const STEP_DEADLINE_MS = 60_000

/** The start block: the lines that prepare the start, and the start line itself. */
function splitStartBlock(block: string): { setup: string; startLine: string } {
  const lines = block.trimEnd().split('\n')
  return { setup: lines.slice(0, -1).join('\n'), startLine: lines.at(-1)! }
}

/** The start line's variables, a `./` path made absolute in `dir`, the reader's directory. */
function entryEnvironment(startLine: string, dir: string): Record<string, string> {
  return Object.fromEntries(Object.entries(startVariables(startLine)).map(([name, value]) => [name, value.startsWith('./') ? resolve(dir, value) : value]))
}

interface AdminLink {
  url: string
  state: string
  state_reason: string | null
}

describe('docs/operators.md: the worked examples, against npm start', () => {
  const { section, blocks } = examplesOf('docs/operators.md', 'Worked examples')
  let walk: DocWalk

  const runBlock = (index: number): Promise<BlockRun> => walk.run(blocks[index]!)

  /** A shell variable a block set. */
  async function shellValue(name: string): Promise<string> {
    const run = await walk.shell.run(`printf '%s\\n' "$${name}"`)
    expect(run.lines.length, run.shown).toBe(1)
    return run.lines[0]!
  }

  /** GET of the admin API with the operator's key the blocks made. */
  async function admin<T>(path: string): Promise<T> {
    const response = await fetch(`${walk.origin}/api/v1/admin/${path}`, { headers: { authorization: `Bearer ${await shellValue('A')}` } })
    const text = await response.text()
    expect(response.status, text).toBe(200)
    return (JSON.parse(text) as { data: T }).data
  }

  beforeAll(async () => {
    const { setup, startLine } = splitStartBlock(blocks[0]!)
    const prepare = async (_dir: string, shell: ReturnType<typeof startShell>) => {
      const prepared = await shell.run(setup)
      if (prepared.status !== 0) throw new Error(`the start block's setup failed:\n${prepared.shown}`)
      return undefined
    }
    walk = await startDocWalk({ name: 'operators', env: (dir) => entryEnvironment(startLine, dir), prepare })
  }, 120_000)

  afterAll(() => walk?.stop())

  test('the examples are a start block (a list file, then the operator, the list and one proxy hop) and seven shell blocks', () => {
    expect(blocks.length, section).toBe(8)
    const { setup, startLine } = splitStartBlock(blocks[0]!)
    expect(setup, blocks[0]).toContain('blocklist.txt')
    expect(startVariables(startLine), blocks[0]).toEqual({ ADMIN_EMAILS: 'you@example.com', BLOCKLIST_FILES: './blocklist.txt', TRUSTED_PROXY_HOPS: '1' })
  })

  test(
    '1. the operator registers through the outbox; its admin key opens the admin API, its full-access key gets 404',
    async () => {
      await runBlock(1)
      expect(await shellValue('A'), 'the admin key').toMatch(/^mk_[A-Za-z0-9_-]+$/)
    },
    STEP_DEADLINE_MS,
  )

  test(
    '2. a subdomain of a listed host is refused 400 DESTINATION_BLOCKED; two guest links to another host are made',
    async () => {
      await runBlock(2)
    },
    STEP_DEADLINE_MS,
  )

  test(
    '3. reports from three networks through the inspect form flag the guest link: its visitors get the warning page',
    async () => {
      await runBlock(3)
    },
    STEP_DEADLINE_MS,
  )

  test(
    '4. the queue lists the three open reports with the flagged link; a host search finds both links',
    async () => {
      await runBlock(4)
    },
    STEP_DEADLINE_MS,
  )

  test(
    '5. disabling the link closes its reports; its visitors get the 410 page',
    async () => {
      await runBlock(5)
    },
    STEP_DEADLINE_MS,
  )

  test(
    '6. banning the host disables the other link there and refuses a new one to a subdomain',
    async () => {
      await runBlock(6)
      const { links } = await admin<{ links: AdminLink[] }>('links?q=bank-login.example')
      const states = Object.fromEntries(links.map((link) => [link.url, [link.state, link.state_reason]]))
      expect(states, JSON.stringify(links)).toEqual({
        'https://bank-login.example/verify': ['disabled', 'phishing page imitating a bank'],
        'https://bank-login.example/reset': ['disabled', 'host banned: bank-login.example'],
      })
    },
    STEP_DEADLINE_MS,
  )

  test(
    "7. the audit lists the ban and the disable of the reported link, with the operator's address",
    async () => {
      const run = await runBlock(7)
      expect(run.lines[1], run.shown).toContain(`"target":"${await shellValue('LINK')}"`)
    },
    STEP_DEADLINE_MS,
  )
})
