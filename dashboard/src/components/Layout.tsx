// The frame of every page: the navigation, who is signed in, sign-out (the sign-in module's form, with the
// session's CSRF token), and the page itself as the main landmark.
import type { ComponentChildren } from 'preact'
import { BASE, Link } from '../router'

const csrf = document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')?.content ?? ''

const SECTIONS = [
  { href: `${BASE}`, label: 'Links', match: (path: string) => path === '/' || path.startsWith('/links') },
  { href: `${BASE}/import`, label: 'Import / export', match: (path: string) => path.startsWith('/import') },
  { href: `${BASE}/tags`, label: 'Tags', match: (path: string) => path === '/tags' },
  { href: `${BASE}/domains`, label: 'Domains', match: (path: string) => path === '/domains' },
  { href: `${BASE}/agents`, label: 'Agents', match: (path: string) => path.startsWith('/agents') },
  { href: `${BASE}/approvals`, label: 'Approvals', match: (path: string) => path.startsWith('/approvals') },
  { href: `${BASE}/account`, label: 'Account', match: (path: string) => path.startsWith('/account') },
]

export function Layout({ path, children }: { path: string; children: ComponentChildren }) {
  return (
    <>
      <header class="top">
        <span class="brand">Link service</span>
        <nav aria-label="Sections">
          <ul>
            {SECTIONS.map((s) => (
              <li key={s.href}>
                <Link href={s.href} aria-current={s.match(path) ? 'page' : undefined}>
                  {s.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <form method="post" action="/signout" class="signout">
          <input type="hidden" name="csrf" value={csrf} />
          <input type="hidden" name="next" value={BASE} />
          <button type="submit">Sign out</button>
        </form>
      </header>
      <main>{children}</main>
    </>
  )
}
