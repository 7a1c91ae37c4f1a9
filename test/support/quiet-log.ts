// Preloaded by `bun test` (bunfig.toml): the API runs in-process in most tests, and a JSON line per
// request would bury the report. Lines go nowhere unless LOG_LEVEL asks for them; a test that reads the
// log (src/plugins/request-log.test.ts) points it at its own stream with logTo.
import { logLevelOf, logTo, setLogLevel } from '../../src/lib/log'

if (process.env.LOG_LEVEL) setLogLevel(logLevelOf(process.env))
else logTo({ write() {} })
