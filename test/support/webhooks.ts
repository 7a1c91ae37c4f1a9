// Webhook receivers for tests: a Bun.serve on loopback that records every request and answers as the
// test says (a status, or a hold until the test releases it), and the API with the test-only setting
// that lets webhooks reach loopback over http (WEBHOOKS_ALLOW_PRIVATE_TARGETS).
import { Webhook } from 'standardwebhooks'
import type { Config } from '../../core/config'
import type { Db } from '../../src/db/client'
import { createDispatcher, type DispatcherOptions } from '../../src/modules/webhooks/dispatcher'
import { call, show, testApi, testConfig, type TestApp } from './api'

export interface Received {
  headers: Record<string, string>
  body: string
}

/** How the receiver answers the n-th request (0-based): a status, maybe after a wait the test controls. */
export type Answer = (request: Received, index: number) => number | Promise<number>

export interface Receiver {
  url: string
  received: Received[]
  /** Answer the next requests this way (default: 204). */
  answer(how: Answer): void
  stop(): void
}

export function startReceiver(path = '/hook'): Receiver {
  const received: Received[] = []
  let how: Answer = () => 204
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const entry = { headers: Object.fromEntries(request.headers), body: await request.text() }
      received.push(entry)
      return new Response('ok', { status: await how(entry, received.length - 1) })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}${path}`,
    received,
    answer: (next) => {
      how = next
    },
    stop: () => void server.stop(true),
  }
}

/** A promise and the function that settles it: a held answer the test releases. */
export function gate(): { wait: Promise<void>; open: () => void } {
  let open = () => {}
  const wait = new Promise<void>((resolve) => {
    open = resolve
  })
  return { wait, open }
}

/** The body verified the way a receiver verifies it (the npm package standardwebhooks); throws if not. */
export function verified(secret: string, received: Received): { id: string; type: string; created_at: string; data: Record<string, unknown> } {
  return new Webhook(secret).verify(received.body, received.headers) as { id: string; type: string; created_at: string; data: Record<string, unknown> }
}

export function webhookConfig(env: Record<string, string> = {}): Config {
  return testConfig({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true', ...env })
}

/** The API whose webhooks may point at loopback receivers. */
export function webhookApi(env: Record<string, string> = {}) {
  return testApi({ config: webhookConfig(env) })
}

export function testDispatcher(db: Db, config: Config, options: Partial<DispatcherOptions> = {}) {
  return createDispatcher({ db, config, ...options })
}

/** Creates a webhook with the key; answers its id and secret (or throws with the answer). */
export async function newWebhook(app: TestApp, token: string, url: string, events: string[] = ['*']): Promise<{ id: string; secret: string }> {
  const res = await call(app, 'POST', '/api/v1/webhooks', { token, body: { url, events } })
  if (res.status !== 201) throw new Error(`create webhook: ${show(res)}`)
  return { id: res.body.data.id, secret: res.body.data.secret }
}
