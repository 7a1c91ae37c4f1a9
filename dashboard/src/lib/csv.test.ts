import { describe, expect, test } from 'bun:test'
import { csvField, importRows, parseCsv, toCsv } from './csv'

describe('CSV (RFC 4180)', () => {
  test('quoted fields keep commas, quotes and line breaks; CRLF and LF both end lines; a BOM is dropped', () => {
    const text = '\ufeffurl,alias\r\n"https://example.com/a?x=1,2",one\n"say ""hi""",two\r\n"multi\nline",three\n'
    expect(parseCsv(text)).toEqual([
      ['url', 'alias'],
      ['https://example.com/a?x=1,2', 'one'],
      ['say "hi"', 'two'],
      ['multi\nline', 'three'],
    ])
  })

  test('what toCsv writes parses back to the same rows', () => {
    const rows = [
      ['a,b', 'c"d', 'e\r\nf', ''],
      ['plain', 'x', 'y', 'z'],
    ]
    expect(parseCsv(toCsv(rows))).toEqual(rows)
  })

  test('an unclosed quote is an error, not a silently merged file', () => {
    expect(() => parseCsv('url\n"https://example.com/a\n')).toThrow('quoted field')
  })

  test('a cell a spreadsheet would run as a formula is written inert', () => {
    expect(csvField('=HYPERLINK("http://evil")')).toBe(`"'=HYPERLINK(""http://evil"")"`)
    expect(csvField('+1')).toBe("'+1")
    expect(csvField('https://example.com')).toBe('https://example.com')
  })
})

describe('import rows', () => {
  test('columns in any order and case; empty cells left out; each row knows its line', () => {
    expect(importRows('Alias,URL,expiration\nspring,https://example.com/a,\n,https://example.com/b,2030-01-01T00:00:00Z\n')).toEqual([
      { line: 2, alias: 'spring', url: 'https://example.com/a' },
      { line: 3, url: 'https://example.com/b', expiration: '2030-01-01T00:00:00Z' },
    ])
  })

  test('an exported file imports as it was, formula guard included', () => {
    const exported = toCsv([
      ['url', 'alias'],
      ['https://example.com/a', '-spring'],
    ])
    expect(exported).toContain("'-spring")
    expect(importRows(exported)).toEqual([{ line: 2, url: 'https://example.com/a', alias: '-spring' }])
  })

  test('a file without a url column, or with an unknown column, is refused with the reason', () => {
    expect(() => importRows('alias\nspring\n')).toThrow('"url"')
    expect(() => importRows('url,alais\nhttps://example.com,x\n')).toThrow('unknown column(s) "alais"')
    expect(() => importRows('')).toThrow('empty')
  })
})
