// The account's tags (GET /api/v1/tags: one call, at most a few dozen tags), for the pages that offer
// them, with how many the account may have (the operator sets it; meta.usage says it).
import { useEffect, useState } from 'preact/hooks'
import { api, must } from '../api'
import type { Tag } from './colours'

export function useTags(): { tags: Tag[] | null; limit: number | null; error: unknown; setTags: (tags: Tag[]) => void } {
  const [tags, setTags] = useState<Tag[] | null>(null)
  const [limit, setLimit] = useState<number | null>(null)
  const [error, setError] = useState<unknown>(null)
  useEffect(() => {
    api
      .GET('/api/v1/tags')
      .then((result) => {
        const body = must(result)
        setTags(body.tags)
        const allowed = body.meta.usage?.tags_limit
        if (typeof allowed === 'number') setLimit(allowed)
      })
      .catch(setError)
  }, [])
  return { tags, limit, error, setTags }
}
