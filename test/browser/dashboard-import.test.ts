// Import and export in Chromium against the embedded product: a CSV of 250 rows (three batches of the
// bulk API, one row refused) imports with a progress bar and a result per row; the refused rows download
// as a CSV to fix; the export downloads every link of the account. Skipped, with a printed reason, where
// Chromium is absent.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import type { Download, Page } from 'playwright-core'
import { HAVE_CHROMIUM, reportSkip, startProduct, type Product } from '../support/dashboard'

reportSkip('test/browser/dashboard-import.test.ts')

let product: Product
let human: { email: string; apiKey: string }
let page: Page

const ROWS = 250
const REFUSED_LINE = 101 // line 101 of the file: the 100th link, the last of the first batch

async function downloaded(download: Download): Promise<string> {
  return readFileSync((await download.path())!, 'utf8')
}

describe.skipIf(!HAVE_CHROMIUM)('import and export in Chromium (the embedded product)', () => {
  beforeAll(async () => {
    product = await startProduct()
    human = await product.signUp('import')
    page = (await product.newPage()).page
    await page.goto(`${product.origin}/app/import`)
    await product.signIn(page, human.email)
    await page.waitForURL((url) => url.pathname === '/app/import')
  }, 120_000)

  afterAll(async () => {
    await product?.stop()
  })

  test(`a ${ROWS}-row CSV imports in batches with progress and a result per row; the refused row downloads to fix`, async () => {
    const lines = ['url,alias,expiration']
    for (let i = 1; i <= ROWS; i++) {
      const url = i + 1 === REFUSED_LINE ? 'not a web address' : `https://example.com/imported/${i}?a=1,b=2`
      lines.push(`"${url}",imp-${i}-${crypto.randomUUID().slice(0, 4)},${i % 2 ? '2031-01-01T00:00:00Z' : ''}`)
    }
    await page.getByLabel('CSV file').setInputFiles({ name: 'links.csv', mimeType: 'text/csv', buffer: Buffer.from(`${lines.join('\r\n')}\r\n`) })
    await page.getByRole('button', { name: `Import ${ROWS} links` }).click()
    await page
      .getByRole('status')
      .filter({ hasText: `Done: ${ROWS - 1} created, 1 refused.` })
      .waitFor({ timeout: 60_000 })
    expect(await page.getByRole('progressbar', { name: 'Progress' }).getAttribute('value')).toBe(String(ROWS))

    const refusedRow = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: String(REFUSED_LINE), exact: true }) })
    expect(await refusedRow.textContent()).toContain('Refused:')
    expect(await refusedRow.textContent()).toContain('(INVALID_URL)')
    const createdRow = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: '2', exact: true }) })
    expect(await createdRow.textContent()).toContain('Created ')

    // The API holds them all: the quote-protected comma survived, the expiry came through.
    const listed = await fetch(`${product.origin}/api/v1/links?limit=100&search=imported/1?a`, { headers: { authorization: `Bearer ${human.apiKey}` } })
    const body = (await listed.json()) as { data: { links: Array<{ full_url: string; expires_at: string | null }> } }
    const first = body.data.links.find((l) => l.full_url === 'https://example.com/imported/1?a=1,b=2')
    expect(first?.expires_at).toBe('2031-01-01T00:00:00.000Z')
    const total = (await (await fetch(`${product.origin}/api/v1/links?limit=1`, { headers: { authorization: `Bearer ${human.apiKey}` } })).json()) as { data: { pagination: { total: number } } }
    expect(total.data.pagination.total).toBe(ROWS - 1)

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download the 1 refused rows as CSV' }).click()])
    const retry = await downloaded(download)
    expect(retry.split('\r\n')[0]).toBe('url,alias,domain,password,expiration,activated_at')
    expect(retry).toContain('not a web address')
    expect(retry.trimEnd().split('\r\n')).toHaveLength(2)
    expect(product.problems).toEqual([])
  }, 120_000)

  test('a file without a url column is refused before anything is sent', async () => {
    await page.getByLabel('CSV file').setInputFiles({ name: 'bad.csv', mimeType: 'text/csv', buffer: Buffer.from('alias,destination\nx,https://example.com\n') })
    const alert = page.getByRole('alert')
    await alert.waitFor()
    expect(await alert.textContent()).toContain('unknown column(s) "destination"')
    expect(await page.getByRole('button', { name: /^Import \d+/ }).count()).toBe(0)
    expect(product.problems).toEqual([])
  })

  test('export downloads every link of the account as CSV', async () => {
    const [download] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }), page.getByRole('button', { name: 'Export all links' }).click()])
    const csv = await downloaded(download)
    const rows = csv.trimEnd().split('\r\n')
    expect(rows[0]).toBe('short_url,url,alias,domain,created_at,expires_at,has_password,clicks')
    expect(rows).toHaveLength(ROWS) // the header and the 249 links imported
    expect(csv).toContain('"https://example.com/imported/1?a=1,b=2"')
    await page
      .getByRole('status')
      .filter({ hasText: `Exported ${ROWS - 1} links to links.csv.` })
      .waitFor()
    expect(product.problems).toEqual([])
  }, 60_000)
})
