import { describe, expect, test } from 'bun:test'
import { serverEnvOption } from './procs'

describe('--server-env', () => {
  test('every NAME=VALUE given, in any place among the other options; a value may hold = and be empty', () => {
    const args = ['--duration', '8s', '--server-env', 'MIMALLOC_PURGE_DELAY=-1', '--pin', '--server-env', 'BUN_JSC_logGC=a=b', '--server-env', 'EMPTY=']
    expect(serverEnvOption(args)).toEqual({ MIMALLOC_PURGE_DELAY: '-1', BUN_JSC_logGC: 'a=b', EMPTY: '' })
  })

  test('none given: nothing added', () => {
    expect(serverEnvOption(['--duration', '8s', '--pin'])).toEqual({})
  })

  test('anything but NAME=VALUE is refused with the option named, so a typo never runs a bench without it', () => {
    expect(() => serverEnvOption(['--server-env'])).toThrow('--server-env needs NAME=VALUE, got ""')
    expect(() => serverEnvOption(['--server-env', '--pin'])).toThrow('--server-env needs NAME=VALUE, got "--pin"')
    expect(() => serverEnvOption(['--server-env', '1X=2'])).toThrow('--server-env needs NAME=VALUE')
    expect(() => serverEnvOption(['--server-env', 'NOVALUE'])).toThrow('--server-env needs NAME=VALUE')
  })

  test('a variable the bench sets for each server (ports, data, secrets, engines) cannot be overridden', () => {
    for (const name of ['PORT', 'DATA_DIR', 'REDIS_URL', 'REDIRECT_WORKERS', 'METRICS_TOKEN']) {
      expect(() => serverEnvOption(['--server-env', `${name}=x`])).toThrow(`--server-env cannot set ${name}`)
    }
  })
})
