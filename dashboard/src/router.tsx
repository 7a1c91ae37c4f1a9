// A few pages under /app, addressed by the path so every page can be bookmarked and reloaded (the API
// serves the same shell for every /app path). History API only: no router library for five routes.
import { useEffect, useState } from 'preact/hooks'
import type { ComponentChildren } from 'preact'

export const BASE = '/app'

export function navigate(path: string): void {
  history.pushState(null, '', path)
  dispatchEvent(new PopStateEvent('popstate'))
}

/** The current /app path (without the base) and query; re-renders on navigation. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const read = () => ({ path: location.pathname.slice(BASE.length) || '/', query: new URLSearchParams(location.search) })
  const [where, setWhere] = useState(read)
  useEffect(() => {
    const update = () => setWhere(read())
    addEventListener('popstate', update)
    return () => removeEventListener('popstate', update)
  }, [])
  return where
}

/** An in-app link: a real <a href> (open in a new tab works), followed without reloading the page. */
export function Link(props: { href: string; children: ComponentChildren; class?: string; 'aria-current'?: 'page'; 'aria-label'?: string }) {
  const { href, children, ...rest } = props
  const onClick = (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
    event.preventDefault()
    navigate(href)
  }
  return (
    <a {...rest} href={href} onClick={onClick}>
      {children}
    </a>
  )
}
