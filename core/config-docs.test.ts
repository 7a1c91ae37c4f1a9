// docs/configuration.md's variable tables are generated from the schema (scripts/config-docs.ts): the
// committed text must be what the script writes, so a variable added, bounded or described differently
// in core/config-schema.ts cannot leave the docs behind.
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import type { TSchema } from '@sinclair/typebox'
import { ENV_SCHEMA } from './config-schema'
import { CONFIG_DOC, configTables, tablesIn } from '../scripts/config-docs'

describe('docs/configuration.md', () => {
  test('its variable tables are the ones `npm run docs:config` writes from the schema', () => {
    const committed = tablesIn(readFileSync(CONFIG_DOC, 'utf8'))
    expect(committed, 'docs/configuration.md differs from core/config-schema.ts: run `npm run docs:config` and commit the result').toBe(configTables())
  })

  test('every variable of the schema has a group and a description, so its row says what it is', () => {
    const settings = Object.entries(ENV_SCHEMA.properties) as [string, TSchema][]
    const undescribed = settings.filter(([, s]) => !s.group || !s.description?.trim()).map(([name]) => name)
    expect(undescribed, JSON.stringify(settings.map(([name, s]) => [name, s.group, s.description]))).toEqual([])
  })
})
