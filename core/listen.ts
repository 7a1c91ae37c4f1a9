// What a process prints about where it listens: the truth about HOST, and a URL a person can open.

/** `http://<host>:<port>` for an address one can connect to; for "every interface", says so. */
export function listenUrl(host: string, port: number): string {
  if (host === '0.0.0.0' || host === '::') return `http://0.0.0.0:${port} (every interface; from this machine http://127.0.0.1:${port})`
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`
}
