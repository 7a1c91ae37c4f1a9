// The tool table (tools.ts) against the routes it calls: a tool restates its route's method and path
// (in rest() and in words in its description) and its scope, so this test reads the app's own route
// declarations and fails when the two drift: a tool calling a route that is not there, a scope its
// route does not ask, dry_run offered where the route has none (or hidden where it has one), a tool
// marked read-only in front of a route a policy can hold.
import { beforeAll, describe, expect, test } from 'bun:test'
import type { TSchema } from 'elysia'
import { testApi } from '../support/api'
import { TOOLS, type Args, type ToolSpec } from '../../src/mcp/tools'

interface RouteEntry {
  method: string
  path: string
  hooks?: { detail?: Record<string, unknown> }
}

let routes: RouteEntry[]

beforeAll(async () => {
  const api = await testApi()
  routes = api.app.routes as unknown as RouteEntry[]
})

/** The route a concrete request reaches: a literal path beats one with parameters. */
function routeOf(method: string, path: string): RouteEntry | undefined {
  const matches = routes.filter((r) => r.method === method && new RegExp(`^${r.path.replace(/:[^/]+/g, '[^/]+')}$`).test(path))
  return matches.sort((a, b) => a.path.split(':').length - b.path.split(':').length)[0]
}

/** A value of a schema's type; only its kind matters (rest() only places arguments). */
function sample(schema: TSchema): unknown {
  if (schema.type === 'integer' || schema.type === 'number') return 7
  if (schema.type === 'boolean') return true
  if (schema.type === 'object') return {}
  return 'sample'
}

/** The tool's arguments: all of them, and only the required ones (a tool may choose its route by them). */
function argumentSets(tool: ToolSpec): Args[] {
  const input = tool.input as unknown as { properties: Record<string, TSchema>; required?: string[] }
  const all = Object.fromEntries(Object.entries(input.properties).map(([name, schema]) => [name, sample(schema)]))
  const required = Object.fromEntries(Object.entries(all).filter(([name]) => input.required?.includes(name)))
  return [all, required]
}

/** Every way a tool disagrees with the route it calls; empty when they agree. */
export function driftOf(tools: readonly ToolSpec[]): string[] {
  const problems: string[] = []
  for (const tool of tools) {
    for (const args of argumentSets(tool)) {
      const call = tool.rest(args)
      const route = routeOf(call.method, call.path)
      if (!route) {
        problems.push(`${tool.name}: ${call.method} ${call.path} is no route`)
        continue
      }
      const detail = route.hooks?.detail ?? {}
      const where = `${tool.name} → ${route.method} ${route.path}`
      const scopes = (detail['x-scopes'] as string[] | undefined) ?? []
      if (JSON.stringify(scopes) !== JSON.stringify(tool.scope ? [tool.scope] : [])) problems.push(`${where}: the tool says scope ${tool.scope}, the route asks ${scopes.join(' ') || 'none'}`)
      if (!['account', 'guestOrAccount', undefined].includes(detail['x-auth'] as string | undefined))
        problems.push(`${where}: the route does not take an Agent's token (x-auth ${String(detail['x-auth'])})`)
      const offersDryRun = 'dry_run' in (tool.input as unknown as { properties: Record<string, unknown> }).properties
      if (offersDryRun !== (detail['x-dry-run'] === true))
        problems.push(`${where}: dry_run ${offersDryRun ? 'offered' : 'not offered'} but the route ${detail['x-dry-run'] ? 'declares' : 'does not declare'} one`)
      if (tool.annotations.readOnlyHint && detail['x-operation']) problems.push(`${where}: read-only, but a policy can hold ${String(detail['x-operation'])}`)
      if (!tool.annotations.readOnlyHint && call.method === 'GET') problems.push(`${where}: changes something, yet the route is a GET`)
    }
    // The description names its routes in words, "(GET /api/v1/links/{alias})": each must be one.
    for (const [, method, path] of tool.description.matchAll(/\((GET|POST|PATCH|PUT|DELETE) (\/[^)\s]+)\)/g)) {
      const concrete = path!.replace(/\{[^}]+\}/g, 'sample')
      if (!routeOf(method!, concrete)) problems.push(`${tool.name}: its description names ${method} ${path}, which is no route`)
    }
  }
  return problems
}

describe('the tool table against the route declarations', () => {
  test("every tool calls a route that exists, with the route's own scope, dry run and kind of change", () => {
    expect(driftOf(TOOLS)).toEqual([])
  })

  test('a drifted tool is caught: a wrong path, a wrong scope, a dry run the route does not have', () => {
    const getLink = TOOLS.find((tool) => tool.name === 'get_link')!
    const createTag = TOOLS.find((tool) => tool.name === 'create_tag')!
    const drifted: ToolSpec[] = [
      { ...getLink, name: 'moved', rest: () => ({ method: 'GET', path: '/api/v1/link/sample' }) },
      { ...getLink, name: 'rescoped', scope: 'links:write' },
      { ...createTag, name: 'previewed', input: { ...createTag.input, properties: { ...createTag.input.properties, dry_run: { type: 'boolean' } } } as unknown as TSchema },
      { ...getLink, name: 'misnamed', description: 'Reads a link (GET /api/v1/linkz/{alias}).' },
    ]
    const problems = driftOf(drifted)
    expect(problems.find((p) => p.startsWith('moved:'))).toContain('is no route')
    expect(problems.find((p) => p.startsWith('rescoped →'))).toContain('the route asks links:read')
    expect(problems.find((p) => p.startsWith('previewed →'))).toContain('dry_run offered')
    expect(problems.find((p) => p.startsWith('misnamed:'))).toContain('GET /api/v1/linkz/{alias}')
  })
})
