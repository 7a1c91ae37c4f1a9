// Not a test: what the event tests share (named .test.ts so that, like them, it may import the test
// harness). An endpoint subscribed to some types, and the events committed for an account, read from
// the outbox as their bodies (what every attempt sends): an event exists exactly when its row does.
import { and, asc, eq } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { webhookEvents } from '../../db/schema'
import { call, show, type TestApp } from '../../../test/support/api'

export interface SentEvent {
  id: string
  type: string
  created_at: string
  data: Record<string, any>
}

/** Creates an endpoint of the account (its URL is never called here) for `events`; its id. */
export async function subscribe(app: TestApp, token: string, events: string[]): Promise<string> {
  const res = await call(app, 'POST', '/api/v1/webhooks', { token, body: { url: 'https://hooks.example.com/events', events } })
  if (res.status !== 201) throw new Error(`create webhook: ${show(res)}`)
  return res.body.data.id
}

/** The account's events in the order they were written, of one type when given. */
export async function eventsOf(db: Db, accountId: string, type?: string): Promise<SentEvent[]> {
  const rows = await db
    .select({ body: webhookEvents.body })
    .from(webhookEvents)
    .where(and(eq(webhookEvents.accountId, accountId), type === undefined ? undefined : eq(webhookEvents.type, type)))
    .orderBy(asc(webhookEvents.createdAt), asc(webhookEvents.id))
  return rows.map((row) => JSON.parse(row.body) as SentEvent)
}
