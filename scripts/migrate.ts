// Applies the Postgres and ClickHouse migrations and exits: `bun run migrate`. The API does the same at
// start; this is for deploys that migrate before rolling out.
import { configOrExit, openRuntime } from '../src/boot'

const runtime = await openRuntime(configOrExit())
await runtime.close()
console.log('migrations: done')
