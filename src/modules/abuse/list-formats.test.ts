// Each list format, recognised from its lines and read into host and URL-prefix entries. The samples are
// written here for the test, in the shapes the published lists use.
import { describe, expect, test } from 'bun:test'
import { csvFields, ListFormatError, ListParser } from './list-formats'

async function parse(text: string, pieceLength = text.length || 1) {
  const hosts: string[] = []
  const prefixes: string[] = []
  const parser = new ListParser({ host: (host) => hosts.push(host), prefix: (host, path) => prefixes.push(`${host} ${path}`) })
  for (let at = 0; at < text.length; at += pieceLength) await parser.push(text.slice(at, at + pieceLength))
  const summary = await parser.end()
  return { summary, hosts, prefixes }
}

const HOST_LIST = ['\uFEFF# my own block list', '', 'evil.example', 'Phish.Example.', 'Mixed.Case.example', 'bücher.example   # an IDN', '203.0.113.7', '2001:db8::7', '0x7f000001', ''].join('\r\n')

const HOSTS_FILE = [
  '# a hosts file',
  '127.0.0.1 localhost',
  '127.0.0.1 localhost.localdomain',
  '::1 localhost ip6-localhost ip6-loopback',
  '255.255.255.255 broadcasthost',
  'fe80::1%lo0 localhost',
  '0.0.0.0 0.0.0.0',
  '',
  '0.0.0.0 ads.example',
  '127.0.0.1\ttracker.example   metrics.tracker.example  # two on one line',
  ':: v6blocked.example',
].join('\n')

const URL_LIST = ['# phishing kits', 'https://evil.example/phish/', 'http://203.0.113.9:8080/bins/x.sh', 'kit.example/login/', 'https://frag.example/page#not-a-comment', 'whole-host.example'].join(
  '\n',
)

// The shape of URLhaus's CSV dump: a banner of comments, the header inside the last one, quoted fields
// (a field with commas in it), columns found by name.
const URLHAUS_LIKE = [
  '##########################################',
  '# Example feed dump (CSV)                #',
  '# generated for a test                   #',
  '##########################################',
  '#',
  '# id,dateadded,url,url_status,threat,tags,reporter',
  '"101","2026-01-02 03:04:05","http://malware.example/bin.sh","online","malware_download","elf,mips","someone"',
  '"102","2026-01-02 03:04:06","https://203.0.113.20/files/a.exe?x=1","online","malware_download","exe","someone"',
  '"103","2026-01-02 03:04:07","https://Quoted.Example/with,comma/","offline","malware_download","","some ""one"""',
].join('\n')

describe('the formats', () => {
  test('a host per line: comments, blank lines, CRLF and a BOM; IDNs, IPv4 and IPv6 entries normalised', async () => {
    const { summary, hosts, prefixes } = await parse(HOST_LIST)
    expect(summary).toEqual({ format: 'hosts', lines: 7, skipped: 0, firstSkipped: undefined })
    expect(hosts).toEqual(['evil.example', 'phish.example', 'mixed.case.example', 'xn--bcher-kva.example', '203.0.113.7', '[2001:db8::7]', '127.0.0.1'])
    expect(prefixes).toEqual([])
  })

  test("hosts-file lines: every host after the address, the file's own names (localhost, broadcasthost, ip6-…) left out", async () => {
    const { summary, hosts } = await parse(HOSTS_FILE)
    expect(summary.format).toBe('hosts-file')
    expect(summary.skipped).toBe(0)
    expect(hosts).toEqual(['ads.example', 'tracker.example', 'metrics.tracker.example', 'v6blocked.example'])
  })

  test('a URL or URL prefix per line, with or without a scheme; a bare host among them is a host entry', async () => {
    const { summary, hosts, prefixes } = await parse(URL_LIST)
    expect(summary.format).toBe('urls')
    expect(prefixes).toEqual(['evil.example /phish/', '203.0.113.9 /bins/x.sh', 'kit.example /login/', 'frag.example /page'])
    expect(hosts).toEqual(['whole-host.example'])
  })

  test('a CSV whose header sits in a # comment line (URLhaus): the url column by name, quoted fields with commas', async () => {
    const { summary, prefixes } = await parse(URLHAUS_LIKE)
    expect(summary).toEqual({ format: 'csv', lines: 3, skipped: 0, firstSkipped: undefined })
    expect(prefixes).toEqual(['malware.example /bin.sh', '203.0.113.20 /files/a.exe?x=1', 'quoted.example /with,comma/'])
  })

  test('a CSV with a plain header line, the url column anywhere', async () => {
    const { summary, hosts, prefixes } = await parse('reason,URL\nphishing,https://csv.example/a\nspam,"csv-host.example"\n')
    expect(summary.format).toBe('csv')
    expect(prefixes).toEqual(['csv.example /a'])
    expect(hosts).toEqual(['csv-host.example'])
  })

  test('host lines read in place (the sink takes text ranges, once the format is known) give the same entries as read as strings', async () => {
    const many = Array.from({ length: 150 }, (_, i) => `host-${i}.example`)
    for (const eol of ['\r\n', '\n']) {
      const text = [...many, 'Mixed.Case.example', 'trailing.dot.example.', '0x7f000002', 'evil.example # a note', ''].join(eol)
      const inPlace: string[] = []
      const parser = new ListParser({ host: (host) => inPlace.push(host), hostAt: (text, start, end) => inPlace.push(`${text.slice(start, end)} (in place)`), prefix: () => {} })
      await parser.push(text)
      await parser.end()
      // The first lines are read before the format is known (as strings); the rest in place where they can be.
      const expected = [...many.map((host, i) => (i < 100 ? host : `${host} (in place)`)), 'mixed.case.example', 'trailing.dot.example', '127.0.0.2', 'evil.example']
      expect(inPlace, JSON.stringify(eol)).toEqual(expected)
    }
  })

  test('a name longer than a DNS name (253 characters) is no entry', async () => {
    const long = `${`${'a'.repeat(60)}.`.repeat(4)}example` // 251 characters: a name
    const tooLong = `${`${'a'.repeat(60)}.`.repeat(4)}example.org`
    const { summary, hosts } = await parse(`a.example\nb.example\n${long}\n${tooLong}\n${tooLong.toUpperCase()}\n`)
    expect(hosts).toEqual(['a.example', 'b.example', long])
    expect(summary.skipped).toBe(2)
  })

  test('a list read in small pieces gives what it gives whole (lines cut across pieces)', async () => {
    for (const text of [HOST_LIST, HOSTS_FILE, URL_LIST, URLHAUS_LIKE]) {
      const whole = await parse(text)
      expect(await parse(text, 7)).toEqual(whole)
    }
  })
})

describe('sniffing', () => {
  test('the lines decide, not a name: the same hosts in either shape are read in their format', async () => {
    const asHostsFile = await parse('0.0.0.0 a.example\n0.0.0.0 b.example\n')
    const asHostList = await parse('a.example\nb.example\n')
    expect([asHostsFile.summary.format, asHostList.summary.format]).toEqual(['hosts-file', 'hosts'])
    expect(asHostsFile.hosts).toEqual(asHostList.hosts)
  })

  test('a line that does not fit the format is skipped and counted, with its line number', async () => {
    const { summary, hosts } = await parse('# list\na.example\nnot a host at all\nb.example\n')
    expect(summary).toEqual({ format: 'hosts', lines: 3, skipped: 1, firstSkipped: 3 })
    expect(hosts).toEqual(['a.example', 'b.example'])
  })

  test('a header with a url column but rows that are not CSV of it: the rows decide (a URL list)', async () => {
    const { summary, prefixes } = await parse('# id,url\nhttps://a.example/x\nhttps://b.example/y\n')
    expect(summary.format).toBe('urls')
    expect(prefixes).toEqual(['a.example /x', 'b.example /y'])
  })

  test('a page that is no list (an HTML error page) is refused', async () => {
    const html = '<!DOCTYPE html>\n<html>\n<head><title>502 Bad Gateway</title></head>\n<body>\n<h1>Bad Gateway</h1>\n</body>\n</html>\n'
    await expect(parse(html)).rejects.toBeInstanceOf(ListFormatError)
  })

  test('a file of comments only is an empty host list', async () => {
    const { summary, hosts } = await parse('# nothing listed yet\n\n')
    expect(summary).toEqual({ format: 'hosts', lines: 0, skipped: 0, firstSkipped: undefined })
    expect(hosts).toEqual([])
  })
})

describe('csvFields', () => {
  test('quoted fields with commas and doubled quotes; unclosed quotes are no line', () => {
    expect(csvFields('"a,b","c ""d""",e')).toEqual(['a,b', 'c "d"', 'e'])
    expect(csvFields('"open,b')).toBeNull()
  })
})
