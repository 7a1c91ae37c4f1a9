// What k6 checks of a script's options before it starts, as far as the bench scripts use them: the
// scenarios (executor, its required fields, `exec` naming an exported function) and the thresholds (a
// known metric, tag selectors, an aggregation the metric's type has). A threshold on a check or a
// scenario that never runs guards nothing, so those are found after the run (unguardedThresholds).
import { state } from './state'

const DURATION = /^(\d+(\.\d+)?(ms|s|m|h))+$/
const BUILT_IN: Record<string, 'counter' | 'gauge' | 'rate' | 'trend'> = {
  http_reqs: 'counter',
  http_req_failed: 'rate',
  http_req_duration: 'trend',
  http_req_blocked: 'trend',
  http_req_connecting: 'trend',
  http_req_tls_handshaking: 'trend',
  http_req_sending: 'trend',
  http_req_waiting: 'trend',
  http_req_receiving: 'trend',
  iterations: 'counter',
  iteration_duration: 'trend',
  dropped_iterations: 'counter',
  checks: 'rate',
  data_sent: 'counter',
  data_received: 'counter',
  vus: 'gauge',
  vus_max: 'gauge',
  group_duration: 'trend',
}
const AGGREGATIONS = { counter: /^(count|rate)$/, gauge: /^value$/, rate: /^rate$/, trend: /^(avg|min|max|med|p\(\d+(\.\d+)?\))$/ }
const THRESHOLD = /^\s*([a-z]+(?:\(\d+(?:\.\d+)?\))?)\s*(<=|>=|===|==|!=|<|>)\s*-?\d+(\.\d+)?\s*$/
const CONSTANT_ARRIVAL_RATE = new Set(['executor', 'rate', 'timeUnit', 'duration', 'preAllocatedVUs', 'maxVUs', 'exec', 'startTime', 'gracefulStop', 'env', 'tags'])

export interface Scenario {
  name: string
  executor: string
  exec: string
}

/** The scenarios to run (a `default` one when the script has none), or throws what k6 would refuse. */
export function validateOptions(options: Record<string, any>, exports: Record<string, unknown>): Scenario[] {
  const scenarios: Scenario[] = []
  for (const [name, scenario] of Object.entries<Record<string, any>>(options.scenarios ?? {})) {
    if (scenario.executor !== 'constant-arrival-rate') throw new Error(`scenario ${name}: executor ${scenario.executor} is not in the stand-in`)
    for (const key of Object.keys(scenario)) if (!CONSTANT_ARRIVAL_RATE.has(key)) throw new Error(`scenario ${name}: unknown field ${key}`)
    if (!Number.isInteger(scenario.rate) || scenario.rate <= 0) throw new Error(`scenario ${name}: rate must be a positive integer`)
    if (!Number.isInteger(scenario.preAllocatedVUs) || scenario.preAllocatedVUs <= 0) throw new Error(`scenario ${name}: preAllocatedVUs must be a positive integer`)
    if (scenario.maxVUs !== undefined && scenario.maxVUs < scenario.preAllocatedVUs) throw new Error(`scenario ${name}: maxVUs below preAllocatedVUs`)
    for (const field of ['duration', 'timeUnit', 'startTime', 'gracefulStop']) {
      if (field === 'duration' || scenario[field] !== undefined) {
        if (!DURATION.test(String(scenario[field]))) throw new Error(`scenario ${name}: ${field} "${scenario[field]}" is not a duration`)
      }
    }
    const exec = scenario.exec ?? 'default'
    if (typeof exports[exec] !== 'function') throw new Error(`scenario ${name}: exec "${exec}" is not an exported function`)
    scenarios.push({ name, executor: scenario.executor, exec })
  }
  if (scenarios.length === 0) scenarios.push({ name: 'default', executor: 'per-vu-iterations', exec: 'default' })
  for (const [key, list] of Object.entries<unknown[]>(options.thresholds ?? {})) validateThreshold(key, list)
  return scenarios
}

function validateThreshold(key: string, list: unknown[]): void {
  const parsed = /^([A-Za-z_][A-Za-z0-9_]*)(\{([^{}]*)\})?$/.exec(key)
  if (!parsed) throw new Error(`threshold "${key}": not metric{tag:value}`)
  const metric = parsed[1]!
  const type = BUILT_IN[metric] ?? state.metrics.get(metric)?.type
  if (!type) throw new Error(`threshold "${key}": no metric named ${metric}`)
  if (parsed[3] !== undefined && !parsed[3].split(',').every((pair) => /^[^:]+:.+$/.test(pair))) throw new Error(`threshold "${key}": tag selector is not tag:value`)
  for (const entry of list) {
    const expression = typeof entry === 'string' ? entry : (entry as { threshold?: unknown }).threshold
    const match = typeof expression === 'string' ? THRESHOLD.exec(expression) : null
    if (!match) throw new Error(`threshold "${key}": "${String(expression)}" is not aggregation op number`)
    if (!AGGREGATIONS[type].test(match[1]!)) throw new Error(`threshold "${key}": ${match[1]} is not an aggregation of a ${type}`)
  }
}

/** Thresholds on a check or a scenario the run never met: they would pass on no samples. */
export function unguardedThresholds(options: Record<string, any>, scenarios: Scenario[]): string[] {
  const problems: string[] = []
  for (const key of Object.keys(options.thresholds ?? {})) {
    for (const [, tag, value] of key.matchAll(/[{,]([^:{},]+):([^{},]+)/g)) {
      if (tag === 'check' && !state.checks.has(value!)) problems.push(`threshold "${key}" names a check no iteration made`)
      if (tag === 'scenario' && !scenarios.some((s) => s.name === value)) problems.push(`threshold "${key}" names no scenario`)
    }
  }
  return problems
}
