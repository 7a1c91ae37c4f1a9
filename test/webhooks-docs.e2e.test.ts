// The worked example of docs/webhooks.md, run as written: the section's first ```sh block is the start
// line (its variables become the environment of the entry package.json's start script names, beside a
// free port and a temporary DATA_DIR), and every later block goes, one by one, to one bash in the
// directory that holds DATA_DIR, as a reader pastes them beside `npm start`. The receiver is the page's
// own (the first ```ts block of "Receiving an event"), saved as receiver.ts in that directory beside the
// project's packages, where `standardwebhooks` resolves as in the reader's project. Each comment in a block
// is a line the block prints (`…` for what differs between runs): the output must be those lines.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { examplesOf, startDocWalk, startVariables, type BlockRun, type DocWalk } from './support/doc-examples'
import { freePort } from './support/processes'
import { until } from './support/wait'

const ROOT = resolve(import.meta.dir, '..')
/** How the page names the receiver; the test's own port replaces it. */
const DOC_RECEIVER = '127.0.0.1:8080'
const DOC_RECEIVER_PORT = 'port: 8080'
/** A start, a request, a delivery: far longer than any takes, short of a hang. */
const STEP_DEADLINE_MS = 60_000

/** The first ```ts block of the page's "Receiving an event" section: the receiver a reader saves. */
function receiverOfPage(): string {
  const { section } = examplesOf('docs/webhooks.md', 'Receiving an event')
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1]
  if (!block?.includes(DOC_RECEIVER_PORT)) throw new Error(`docs/webhooks.md: no receiver listening on ${DOC_RECEIVER_PORT}`)
  return block
}

describe('docs/webhooks.md: the worked example, against npm start', () => {
  const { section, blocks } = examplesOf('docs/webhooks.md', 'Worked example')
  let walk: DocWalk
  let receiverPort = 0

  const runBlock = (index: number): Promise<BlockRun> => walk.run(blocks[index]!)

  beforeAll(async () => {
    // The reader's receiver.ts, on a port of this run, beside the project's packages.
    const prepare = async (dir: string) => {
      receiverPort = await freePort()
      writeFileSync(join(dir, 'receiver.ts'), receiverOfPage().replace(DOC_RECEIVER_PORT, `port: ${receiverPort}`))
      symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
      return { [DOC_RECEIVER]: `127.0.0.1:${receiverPort}` }
    }
    walk = await startDocWalk({ name: 'webhooks', env: () => startVariables(blocks[0]!), prepare })
  }, 120_000)

  afterAll(() => walk?.stop())

  test('the example is a start line allowing a loopback receiver and two shell blocks', () => {
    expect(blocks.length, section).toBe(3)
    expect(startVariables(blocks[0]!), blocks[0]).toEqual({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' })
  })

  test(
    "1. a key, an endpoint for link.created whose secret starts the page's receiver",
    async () => {
      await runBlock(1)
      const secret = await walk.shell.run('printf "%s\\n" "$SECRET"')
      expect(secret.lines[0], secret.shown).toMatch(/^whsec_[A-Za-z0-9+/=]+$/)
      // The receiver started in the background listens: it refuses an unsigned request (its verify).
      const unsigned = () =>
        fetch(`http://127.0.0.1:${receiverPort}/`, { method: 'POST', body: '{}' }).then(
          (response) => response.status,
          () => 0,
        )
      await until(async () => (await unsigned()) === 400, 'the receiver refusing an unsigned request', STEP_DEADLINE_MS)
    },
    STEP_DEADLINE_MS,
  )

  test(
    '2. a new link reaches the receiver verified, logged once with its alias, and the receiver stops',
    async () => {
      await runBlock(2)
      const log = readFileSync(join(walk.dir, 'receiver.log'), 'utf8')
      expect(log, log).toStartWith('link.created')
      expect(log, log).toContain('launch')
      expect(log.match(/^link\.created/gm), log).toHaveLength(1)
    },
    STEP_DEADLINE_MS,
  )
})
