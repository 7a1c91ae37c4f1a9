import { defineConfig } from 'drizzle-kit'

// Generates the committed SQL under migrations/postgres: `bun run db:generate` after a schema change.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/schema/index.ts',
  out: './migrations/postgres',
})
