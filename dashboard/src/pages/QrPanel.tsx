// The link's QR code, straight from the API (GET /api/v1/links/{alias}/qr): an <img> of the same origin
// carries the session cookie, so no script fetches the image; the downloads are links to the same route.
export function qrUrl(alias: string, domain: string, format: 'svg' | 'png', size: number): string {
  const query = new URLSearchParams({ format, size: String(size), domain })
  return `/api/v1/links/${encodeURIComponent(alias)}/qr?${query}`
}

export function QrPanel({ alias, domain, shortUrl }: { alias: string; domain: string; shortUrl: string }) {
  return (
    <section aria-labelledby="qr-title" class="card qr">
      <h2 id="qr-title">QR code</h2>
      <img src={qrUrl(alias, domain, 'svg', 256)} width={256} height={256} alt={`QR code of ${shortUrl}`} />
      <div class="actions">
        <a class="button" href={qrUrl(alias, domain, 'svg', 1024)} download={`${alias}-qr.svg`}>
          Download SVG
        </a>
        <a class="button" href={qrUrl(alias, domain, 'png', 1024)} download={`${alias}-qr.png`}>
          Download PNG
        </a>
      </div>
      <p class="hint">SVG scales to any size for print; PNG is about 1024 pixels wide.</p>
    </section>
  )
}
