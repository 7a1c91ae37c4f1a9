// The id table's shapes: every new id passes its own kind's check and no other kind's; anything else
// (a foreign prefix, a wrong length, characters outside base64url) fails before any lookup.
import { describe, expect, test } from 'bun:test'
import { ID_PREFIXES, idPattern, isId, newId, type IdKind } from './ids'

const kinds = Object.keys(ID_PREFIXES) as IdKind[]

describe('isId and idPattern', () => {
  test('a new id of each kind is of its kind only', () => {
    for (const kind of kinds) {
      const id = newId(kind)
      expect(isId(kind, id), id).toBe(true)
      expect(new RegExp(idPattern(kind)).test(id), id).toBe(true)
      for (const other of kinds) if (ID_PREFIXES[other] !== ID_PREFIXES[kind]) expect(isId(other, id), `${other}: ${id}`).toBe(false)
    }
  })

  test.each([
    ['a character short', newId('agent').slice(0, -1)],
    ['a character long', `${newId('agent')}A`],
    ['a character outside base64url', `${newId('agent').slice(0, -1)}=`],
    ['the prefix alone', 'agt_'],
    ['the prefix in capitals', newId('agent').replace('agt_', 'AGT_')],
    ['a line break after it', `${newId('agent')}\n`],
  ])('an Agent id with %s is refused', (_, value) => {
    expect(isId('agent', value)).toBe(false)
  })
})
