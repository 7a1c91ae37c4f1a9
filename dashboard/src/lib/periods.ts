// The periods the statistics API answers for, in words: the link's statistics and its routing results
// each offer them.

export type Period = '24H' | '7D' | '30D' | 'ALL'

export const PERIODS: Array<{ value: Period; label: string }> = [
  { value: '24H', label: 'Last 24 hours' },
  { value: '7D', label: 'Last 7 days' },
  { value: '30D', label: 'Last 30 days' },
  { value: 'ALL', label: 'All time' },
]

/** The label of the period the API answered for (the switch may already show the next one). */
export const periodLabel = (period: string) => PERIODS.find((p) => p.value === period)?.label ?? period
