// The frame of every page: the navigation (its entries and the current one are handed in from the route
// table, routes.tsx), sign-out (the sign-in module's form, with the session's CSRF token), and the page
// itself as the main landmark.
import type { ComponentChildren } from 'preact'
import { BASE, Link } from '../router'

const csrf = document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')?.content ?? ''

interface Props {
  sections: ReadonlyArray<{ label: string; href: string }>
  /** The label of the entry the page shown belongs to; null on an address with no page. */
  current: string | null
  children: ComponentChildren
}

export function Layout({ sections, current, children }: Props) {
  return (
    <>
      <header class="top">
        <span class="brand">Link service</span>
        <nav aria-label="Sections">
          <ul>
            {sections.map((s) => (
              <li key={s.href}>
                <Link href={s.href} aria-current={s.label === current ? 'page' : undefined}>
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
