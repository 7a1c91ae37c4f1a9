// Applies the Postgres and ClickHouse migrations and exits: `bun run migrate`. The API does the same at
// start; this is for deploys that migrate before rolling out. On the embedded engines it cannot run
// beside the service (one process at a time may open them) and says so in one line.
import { configOrExit, openRuntimeOrExit } from '../src/boot'

const runtime = await openRuntimeOrExit(configOrExit(), 'stop it first; the service applies the migrations itself when it starts')
await runtime.close()
console.log('migrations: done')
