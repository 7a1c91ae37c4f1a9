// The redirector's Redis source against a Redis server of the test's own, which it stops and restarts.
// Needs the redis-server binary (.ci/run installs it before both passes, and fails a pass that skips this).
import { afterAll, describe, expect, test } from 'bun:test'
import { Redis } from 'ioredis'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../test/support/processes'
import { within } from '../test/support/wait'
import { redisLinkSource } from './source'

const binary = Bun.which('redis-server')

async function startRedis(port: number, dir: string) {
  const proc = Bun.spawn([binary!, '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir], { stdout: 'ignore', stderr: 'ignore' })
  const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
  probe.on('error', () => {})
  for (let i = 0; i < 100; i++) {
    try {
      await probe.connect()
      break
    } catch {
      await Bun.sleep(50)
    }
  }
  probe.disconnect()
  return proc
}

describe.skipIf(!binary)('redis link source', () => {
  const dir = mkdtempSync(join(tmpdir(), 'redis-source-'))
  const cleanup: (() => void)[] = []
  afterAll(() => cleanup.forEach((f) => f()))

  test('gets fail fast while Redis is down; a drop and a return each reset once; delivery resumes', async () => {
    const port = await freePort()
    let server = await startRedis(port, dir)
    cleanup.push(() => server.kill('SIGKILL'))
    const source = redisLinkSource(`redis://127.0.0.1:${port}`, 50)
    cleanup.push(() => void source.close?.())
    const messages: string[] = []
    let resets = 0
    await source.subscribe('chan', (m) => messages.push(m), () => resets++)
    const publisher = new Redis(port, '127.0.0.1')
    publisher.on('error', () => {})
    cleanup.push(() => publisher.disconnect())
    await publisher.publish('chan', 'one')
    await Bun.sleep(50)
    expect(messages).toEqual(['one'])

    server.kill('SIGKILL')
    await server.exited
    await Bun.sleep(1500) // several reconnect attempts
    expect(resets).toBe(1)
    // Redis stays down until the restart below: a get that waited for a reconnect would miss the deadline.
    const outcome = await within(source.get('link:x:y').then(() => 'answered', () => 'failed'), 'a get while Redis is down')
    expect(outcome).toBe('failed')

    server = await startRedis(port, dir)
    const deadline = Date.now() + 5000
    while (resets < 2 && Date.now() < deadline) await Bun.sleep(20)
    expect(resets).toBe(2)
    while (Date.now() < deadline) {
      await publisher.publish('chan', 'two')
      await Bun.sleep(50)
      if (messages.includes('two')) break
    }
    expect(messages).toContain('two')
    expect(await source.get('link:x:y')).toBeNull()
  }, 20_000)
})
