// docs/webhooks.md's receiver, run as written (its port read from PORT): it accepts what the dispatcher
// sends, logs each event once however often it comes, and refuses a request signed with another secret.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { call, show, type TestApp } from '../../../test/support/api'
import { newAccount } from '../../../test/support/fixtures'
import { freePort } from '../../../test/support/processes'
import { until } from '../../../test/support/wait'
import { newWebhook, testDispatcher, webhookApi } from '../../../test/support/webhooks'

const ROOT = resolve(import.meta.dir, '../../..')
const PORT_IN_DOC = 'port: 8080'

/** The first ```ts block of the page's "Receiving an event" section. */
function receiverOfDoc(): string {
  const page = readFileSync(join(ROOT, 'docs/webhooks.md'), 'utf8')
  const section = page.slice(page.indexOf('\n## Receiving an event\n'))
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1]
  if (!block?.includes(PORT_IN_DOC)) throw new Error(`docs/webhooks.md: no receiver listening on ${PORT_IN_DOC}`)
  return block.replace(PORT_IN_DOC, 'port: Number(process.env.PORT)')
}

let api: Awaited<ReturnType<typeof webhookApi>>
let app: TestApp
let receiver: ReturnType<typeof Bun.spawn> | undefined
let output = ''

beforeAll(async () => {
  api = await webhookApi()
  app = api.app
})
afterAll(() => receiver?.kill())

describe('the receiver of docs/webhooks.md', () => {
  test('verifies and logs a delivered event once, and refuses a forged one', async () => {
    const human = await newAccount(api.deps.db)
    const port = await freePort()
    const url = `http://127.0.0.1:${port}/`
    const { id, secret } = await newWebhook(app, human.key, url)
    // Beside the project's packages, so `standardwebhooks` resolves as in a receiver's own project.
    const dir = mkdtempSync(join(tmpdir(), 'webhook-receiver-'))
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
    writeFileSync(join(dir, 'receiver.ts'), receiverOfDoc())
    receiver = Bun.spawn([process.execPath, join(dir, 'receiver.ts')], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', WEBHOOK_SECRET: secret, PORT: String(port) },
      stdout: 'pipe',
      stderr: 'inherit',
    })
    void (async () => {
      const decoder = new TextDecoder()
      for await (const chunk of receiver!.stdout as ReadableStream<Uint8Array>) output += decoder.decode(chunk, { stream: true })
    })()
    await until(
      async () =>
        (await fetch(url, { method: 'POST', body: '{}' }).then(
          (res) => res.status,
          () => 0,
        )) === 400,
      'the receiver listens and refuses an unsigned request',
    )

    const queued = (await call(app, 'POST', `/api/v1/webhooks/${id}/test`, { token: human.key })).body.data.delivery
    const dispatcher = testDispatcher(api.deps.db, api.deps.config, { only: [id] })
    await dispatcher.runDue()
    const again = await call(app, 'POST', `/api/v1/webhooks/${id}/deliveries/${queued.id}/redeliver`, { token: human.key })
    expect(again.status, show(again)).toBe(201)
    await dispatcher.runDue()
    const deliveries = await call(app, 'GET', `/api/v1/webhooks/${id}/deliveries`, { token: human.key })
    expect(
      deliveries.body.data.deliveries.map((d: { status: string; response_status: number }) => [d.status, d.response_status]),
      show(deliveries),
    ).toEqual([
      ['delivered', 204],
      ['delivered', 204],
    ])
    await until(
      () => output.includes('ping'),
      () => `the receiver logged: ${output}`,
    )
    expect(output.match(/ping/g), output).toHaveLength(1)
    expect(output).toContain(id)

    const body = JSON.stringify({ id: 'evt_forged', type: 'link.deleted', created_at: new Date().toISOString(), data: {} })
    const forged = new Webhook(`whsec_${Buffer.from('not the secret, 32 bytes long ok').toString('base64')}`)
    const headers = { 'webhook-id': 'evt_forged', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'content-type': 'application/json' }
    const refused = await fetch(url, { method: 'POST', body, headers: { ...headers, 'webhook-signature': forged.sign('evt_forged', new Date(), body) } })
    expect(refused.status).toBe(400)
    expect(output).not.toContain('link.deleted')
  })
})
