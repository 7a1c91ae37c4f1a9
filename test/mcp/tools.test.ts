// Every tool through the official client against the app in process: each is its REST operation
// (same arguments, same answers, same error codes), arguments the REST model refuses are refused, and a
// dry_run never hides a write.
import { beforeAll, describe, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/client'
import { ShortenRequest, UpdateLinkRequest } from '../../src/modules/links/model'
import { call, show, testApi, type TestApp } from '../support/api'
import { newAccount, type TestAccount, agentToken } from '../support/fixtures'
import { callTool, inProcessClient, showResult, type ToolResult } from '../support/mcp'

const ALL_SCOPES = ['links:read', 'links:write', 'links:delete', 'tags:read', 'tags:write', 'stats:read', 'account:read']
/** Nothing held for approval: these tests are about the tools, the approval path has its own. */
const NO_APPROVALS = { require_approval: [] }

let app: TestApp
let db: Awaited<ReturnType<typeof testApi>>['deps']['db']

beforeAll(async () => {
  const api = await testApi()
  app = api.app
  db = api.deps.db
})

async function connected(plan: 'free' | 'pro' = 'free'): Promise<{ client: Client; human: TestAccount }> {
  const human = await newAccount(db, plan)
  const { token } = await agentToken(app, human, ALL_SCOPES, NO_APPROVALS)
  return { client: await inProcessClient(app, token), human }
}

const ok = (result: ToolResult, what: string) => {
  expect(result.isError, `${what}: ${showResult(result)}`).toBeFalsy()
  return result.structuredContent!
}
const refused = (result: ToolResult, code: string, what: string) => {
  expect(result.isError, `${what}: ${showResult(result)}`).toBe(true)
  expect(result.structuredContent?.error, `${what}: ${showResult(result)}`).toBe(code)
  expect(result.content[0]!.text).toStartWith(`${code}: `)
}
const newAlias = () => `t-${crypto.randomUUID().slice(0, 10)}`

describe('idempotency_key', () => {
  test('create_link retried with the same key replays the first link; with another call the key is refused', async () => {
    const { client, human } = await connected()
    const key = crypto.randomUUID()
    const first = ok(await callTool(client, 'create_link', { url: 'https://example.com/retried', idempotency_key: key }), 'first')
    const again = ok(await callTool(client, 'create_link', { url: 'https://example.com/retried', idempotency_key: key }), 'retry')
    expect(again.data.alias).toBe(first.data.alias)
    const list = await call(app, 'GET', '/api/v1/links', { token: human.key })
    expect(list.body.data.links.length, show(list)).toBe(1)
    refused(await callTool(client, 'create_link', { url: 'https://example.com/other', idempotency_key: key }), 'IDEMPOTENCY_KEY_REUSED', 'another call')
    await client.close()
  })
})

describe('tools/list', () => {
  test('each tool names its scope, arguments are the REST fields and nothing else', async () => {
    const { client } = await connected()
    const { tools } = await client.listTools()
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]))
    expect(Object.keys(byName.create_link!.inputSchema.properties!).sort()).toEqual([...Object.keys(ShortenRequest.properties), 'dry_run', 'idempotency_key'].sort())
    expect(Object.keys(byName.update_link!.inputSchema.properties!).sort()).toEqual(['alias', 'domain', ...Object.keys(UpdateLinkRequest.properties), 'dry_run', 'idempotency_key'].sort())
    for (const tool of tools) expect('idempotency_key' in tool.inputSchema.properties!, tool.name).toBe(!tool.annotations!.readOnlyHint)
    expect(byName.create_link!.inputSchema.required).toEqual(['url'])
    for (const tool of tools) {
      expect(tool.inputSchema.additionalProperties, tool.name).toBe(false)
      expect(tool.description, tool.name).toMatch(['check_alias', 'get_approval'].includes(tool.name) ? /Needs no scope\.$/ : /Needs the OAuth scope [a-z]+:[a-z]+\.$/)
      const hints = tool.annotations!
      expect([typeof hints.readOnlyHint, typeof hints.destructiveHint, typeof hints.idempotentHint], tool.name).toEqual(['boolean', 'boolean', 'boolean'])
      if (hints.readOnlyHint) expect(hints.destructiveHint, tool.name).toBe(false)
    }
    expect(
      tools
        .filter((tool) => tool.annotations!.destructiveHint)
        .map((tool) => tool.name)
        .sort(),
    ).toEqual(['delete_link', 'delete_tag', 'set_link_routing', 'untag_link', 'update_link'])
    expect(
      tools
        .filter((tool) => tool.annotations!.readOnlyHint)
        .map((tool) => tool.name)
        .sort(),
    ).toEqual(['account_status', 'check_alias', 'get_approval', 'get_link', 'get_link_routing', 'link_stats', 'list_links', 'list_tags'])
    await client.close()
  })
})

describe('links', () => {
  test('create_link, get_link, list_links, update_link, check_alias, delete_link do what their REST routes do', async () => {
    const { client, human } = await connected()
    const alias = newAlias()
    const created = ok(await callTool(client, 'create_link', { url: 'https://example.com/a', alias }), 'create')
    expect(created.data).toMatchObject({ alias, full_url: 'https://example.com/a', short_url: `https://sho.rt/${alias}`, domain: 'sho.rt' })
    expect(created.meta.account_type).toBe('free')

    const got = ok(await callTool(client, 'get_link', { alias }), 'get')
    expect(got.data).toMatchObject({ alias, full_url: 'https://example.com/a', clicks: 0 })

    const listed = ok(await callTool(client, 'list_links', { search: alias, limit: 5 }), 'list')
    expect(listed.data.pagination.total).toBe(1)
    expect(listed.data.links[0].alias).toBe(alias)

    const updated = ok(await callTool(client, 'update_link', { alias, url: 'https://example.com/b', password: 'open sesame' }), 'update')
    expect(updated.data).toMatchObject({ full_url: 'https://example.com/b', has_password: true })
    const cleared = ok(await callTool(client, 'update_link', { alias, password: null }), 'clear the password')
    expect(cleared.data).toMatchObject({ full_url: 'https://example.com/b', has_password: false })
    const rest = await call(app, 'GET', `/api/v1/links/${alias}`, { token: human.key })
    expect([rest.body.data?.full_url, rest.body.data?.has_password], show(rest)).toEqual(['https://example.com/b', false])

    expect(ok(await callTool(client, 'check_alias', { alias }), 'check')).toEqual({ exists: true })
    expect(ok(await callTool(client, 'check_alias', { alias: newAlias() }), 'check a free one')).toEqual({ exists: false })

    const deleted = await callTool(client, 'delete_link', { alias })
    expect(ok(deleted, 'delete').message).toBe(`Link sho.rt/${alias} deleted.`)
    refused(await callTool(client, 'get_link', { alias }), 'LINK_NOT_FOUND', 'get after delete')
    expect((await call(app, 'GET', `/api/v1/links/${alias}`, { token: human.key })).status).toBe(404)
    await client.close()
  })

  test("REST refusals come back as tool errors with the API's code and hint", async () => {
    const { client } = await connected()
    const alias = newAlias()
    ok(await callTool(client, 'create_link', { url: 'https://example.com/first', alias }), 'create')
    refused(await callTool(client, 'create_link', { url: 'https://example.com/second', alias }), 'ALIAS_TAKEN', 'same alias')
    refused(await callTool(client, 'create_link', { url: 'javascript:alert(1)' }), 'INVALID_URL', 'a script URL')
    refused(await callTool(client, 'create_link', { url: 'https://sho.rt/loop' }), 'DESTINATION_LOOPS', 'a loop')
    refused(await callTool(client, 'create_link', { url: 'https://example.com/x', expiration: '2001-01-01T00:00:00Z' }), 'VALIDATION_FAILED', 'an expiry in the past')
    refused(await callTool(client, 'update_link', { alias: newAlias(), url: 'https://example.com/x' }), 'LINK_NOT_FOUND', 'an unknown link')
    await client.close()
  })

  test('arguments outside the REST model are refused before anything runs', async () => {
    const { client, human } = await connected()
    for (const [args, what] of [
      [{ url: 'https://example.com/typo', alais: 'typo-alias' }, 'an unknown argument'],
      [{ url: 'https://example.com/bad', alias: 'no spaces here' }, 'an alias outside the pattern'],
      [{ alias: 'no-url' }, 'without url'],
      [{ url: 42 }, 'url as a number'],
    ] as const) {
      const result = await callTool(client, 'create_link', args)
      expect(result.isError, `${what}: ${showResult(result)}`).toBe(true)
    }
    const links = await call(app, 'GET', '/api/v1/links', { token: human.key })
    expect(links.body.data.pagination.total, show(links)).toBe(0)
    await client.close()
  })

  test('dry_run on create_link, update_link and delete_link: the would-be result, nothing written, nothing held', async () => {
    const human = await newAccount(db)
    // The default policy holds deletes for the human; a dry run is not held (nothing would run).
    const { token } = await agentToken(app, human, ALL_SCOPES)
    const client = await inProcessClient(app, token)
    const rest = (alias: string) => call(app, 'GET', `/api/v1/links/${alias}`, { token: human.key })

    const alias = newAlias()
    const dry = await callTool(client, 'create_link', { url: 'https://example.com/dry', alias, dry_run: true })
    expect(ok(dry, 'dry create').meta.dry_run).toBe(true)
    expect(dry.structuredContent?.data).toMatchObject({ alias, full_url: 'https://example.com/dry' })
    expect(dry.content[0]!.text).toStartWith(`Created https://sho.rt/${alias} → https://example.com/dry (dry run: nothing was written)`)
    expect((await rest(alias)).status, 'nothing created').toBe(404)

    ok(await callTool(client, 'create_link', { url: 'https://example.com/real', alias }), 'create')
    const dryUpdate = await callTool(client, 'update_link', { alias, url: 'https://example.com/other', dry_run: true })
    expect(ok(dryUpdate, 'dry update').data.full_url).toBe('https://example.com/other')
    expect((await rest(alias)).body.data.full_url, 'nothing changed').toBe('https://example.com/real')

    const dryDelete = await callTool(client, 'delete_link', { alias, dry_run: true })
    expect(ok(dryDelete, 'dry delete').meta.dry_run).toBe(true)
    expect(dryDelete.structuredContent?.held, 'a dry run is not held').toBeUndefined()
    expect((await rest(alias)).status, 'nothing deleted').toBe(200)
    const approvals = await call(app, 'GET', '/api/v1/agent/approvals', { token: human.key })
    expect(approvals.body.data.approvals, show(approvals)).toEqual([])
    await client.close()
  })
})

describe('tags, statistics and the plan', () => {
  test('create_tag, tag_link, list_tags, untag_link, delete_tag', async () => {
    const { client } = await connected()
    const alias = newAlias()
    ok(await callTool(client, 'create_link', { url: 'https://example.com/tagged', alias }), 'create link')
    const tag = ok(await callTool(client, 'create_tag', { name: 'campaign', color: '#3b82f6' }), 'create tag').tag
    expect(tag).toMatchObject({ name: 'campaign', color: '#3b82f6' })
    refused(await callTool(client, 'create_tag', { name: 'Campaign' }), 'TAG_EXISTS', 'the same name')

    expect(ok(await callTool(client, 'tag_link', { alias, tagId: tag.id }), 'tag').message).toBe(`Tag ${tag.id} assigned to sho.rt/${alias}.`)
    expect(ok(await callTool(client, 'tag_link', { alias, tagId: tag.id }), 'tag again').message).toBe(`Tag ${tag.id} was already assigned to sho.rt/${alias}.`)
    const ofLink = await callTool(client, 'list_tags', { alias })
    expect(ok(ofLink, 'tags of the link').tags.map((t: { id: number }) => t.id)).toEqual([tag.id])
    expect(ofLink.content[0]!.text).toStartWith(`1 tags: campaign (id ${tag.id})`)
    expect(ok(await callTool(client, 'list_tags', {}), 'all tags').tags.map((t: { name: string }) => t.name)).toEqual(['campaign'])

    expect(ok(await callTool(client, 'untag_link', { alias, tagId: tag.id }), 'untag').message).toBe(`Tag ${tag.id} removed from sho.rt/${alias}.`)
    expect(ok(await callTool(client, 'list_tags', { alias }), 'tags after untag').tags).toEqual([])
    // list_links filters by the tag and sorts as GET /api/v1/links does, by the same argument names.
    const untagged = newAlias()
    ok(await callTool(client, 'create_link', { url: 'https://example.com/untagged', alias: untagged }), 'create an untagged link')
    ok(await callTool(client, 'tag_link', { alias, tagId: tag.id }), 'tag it again')
    const byTag = ok(await callTool(client, 'list_links', { tag: tag.id }), 'list by tag')
    expect([byTag.data.links.map((l: { alias: string }) => l.alias), byTag.data.pagination.total]).toEqual([[alias], 1])
    const oldest = ok(await callTool(client, 'list_links', { sort: 'created_asc' }), 'list oldest first')
    expect(oldest.data.links.map((l: { alias: string }) => l.alias)).toEqual([alias, untagged])
    const newest = ok(await callTool(client, 'list_links', { sort: 'clicks_desc', limit: 1 }), 'list by clicks')
    expect(newest.data.links.map((l: { alias: string }) => l.alias)).toEqual([untagged])
    const second = ok(await callTool(client, 'list_links', { sort: 'clicks_desc', limit: 1, cursor: newest.data.pagination.next_cursor }), 'next page by clicks')
    expect(second.data.links.map((l: { alias: string }) => l.alias)).toEqual([alias])
    refused(await callTool(client, 'list_links', { tag: 2147483647 }), 'TAG_NOT_FOUND', 'an unknown tag')
    refused(await callTool(client, 'list_links', { cursor: newest.data.pagination.next_cursor }), 'VALIDATION_FAILED', 'a clicks cursor under another sort')
    const badSort = await callTool(client, 'list_links', { sort: 'clicks' })
    expect(badSort.isError, showResult(badSort)).toBe(true)
    ok(await callTool(client, 'delete_tag', { tagId: tag.id }), 'delete tag')
    refused(await callTool(client, 'delete_tag', { tagId: tag.id }), 'TAG_NOT_FOUND', 'delete it again')
    refused(await callTool(client, 'tag_link', { alias: newAlias(), tagId: tag.id }), 'LINK_NOT_FOUND', 'tag an unknown link')
    await client.close()
  })

  test('link_stats on a Free account is STATS_REQUIRES_PRO with the basic totals; account_status shows the plan', async () => {
    const { client } = await connected()
    const alias = newAlias()
    ok(await callTool(client, 'create_link', { url: 'https://example.com/stats', alias }), 'create')
    const stats = await callTool(client, 'link_stats', { alias, period: '24H' })
    refused(stats, 'STATS_REQUIRES_PRO', 'stats on Free')
    expect(stats.structuredContent?.data).toMatchObject({ alias, total_clicks: 0 })
    const period = await callTool(client, 'link_stats', { alias, period: '1Y' })
    expect(period.isError, showResult(period)).toBe(true)
    const status = ok(await callTool(client, 'account_status'), 'status')
    expect(status.data).toMatchObject({ account_type: 'free', plan: { name: 'free' } })
    expect(status.data.usage.links_this_month).toBe(1)
    await client.close()
  })
})

describe('routing', () => {
  test('set_link_routing and get_link_routing do what the REST routes do; dry_run writes nothing; Free is PRO_REQUIRED', async () => {
    const { client, human } = await connected('pro')
    const alias = newAlias()
    ok(await callTool(client, 'create_link', { url: 'https://example.com/r', alias, routing: { rules: [{ url: 'https://apps.example/ios', when: { device: ['ios'] } }] } }), 'create with routing')
    expect(ok(await callTool(client, 'get_link_routing', { alias }), 'get').data.rules).toEqual([{ id: 'r1', url: 'https://apps.example/ios', when: { device: ['ios'] } }])
    const preview = ok(await callTool(client, 'set_link_routing', { alias, rules: [], dry_run: true }), 'preview')
    expect(preview.meta.dry_run).toBe(true)
    expect((await call(app, 'GET', `/api/v1/links/${alias}/routing`, { token: human.key })).body.data.rules).toHaveLength(1)
    const ab = {
      variants: [
        { url: 'https://example.com/a', weight: 70 },
        { url: 'https://example.com/b', weight: 30 },
      ],
    }
    ok(await callTool(client, 'set_link_routing', { alias, ab }), 'set')
    const rest = await call(app, 'GET', `/api/v1/links/${alias}/routing`, { token: human.key })
    expect(rest.body.data, show(rest)).toMatchObject({
      rules: [],
      ab: {
        status: 'running',
        variants: [
          { id: 'a', weight: 70 },
          { id: 'b', weight: 30 },
        ],
      },
    })
    refused(
      await callTool(client, 'set_link_routing', {
        alias,
        ab: {
          variants: [
            { url: 'https://example.com/a', weight: 70 },
            { url: 'https://example.com/b', weight: 70 },
          ],
        },
      }),
      'VALIDATION_FAILED',
      'weights',
    )

    const free = await connected('free')
    const freeAlias = newAlias()
    ok(await callTool(free.client, 'create_link', { url: 'https://example.com/f', alias: freeAlias }), 'free create')
    refused(await callTool(free.client, 'set_link_routing', { alias: freeAlias, rules: [] }), 'PRO_REQUIRED', 'free set')
    await client.close()
    await free.client.close()
  })
})
