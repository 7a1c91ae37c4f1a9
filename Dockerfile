# syntax=docker/dockerfile:1
# Production images for the link service: `api` (Elysia management API, owns Postgres) and `redirect`
# (the hot path). Both run on the pinned Bun and carry no embedded engine (PGlite, chDB): in production
# DATABASE_URL, REDIS_URL and CLICKHOUSE_URL point at real servers (see docker-compose.yml).
#
#   docker build --target api -t linkservice-api .
#   docker build --target redirect -t linkservice-redirect .

FROM oven/bun:1.4.5-slim AS base
WORKDIR /app
ENV NODE_ENV=production \
    DATA_DIR=/app/data

# Production dependencies from the lockfile, then the embedded engines removed: they are only the
# no-configuration default for development and tests, and the production entry points never load them.
FROM base AS deps
COPY package.json bun.lock ./
RUN bun install --frozen-lockfile --production --ignore-scripts \
 && rm -rf node_modules/chdb node_modules/@chdb node_modules/@electric-sql

# The dashboard (served by the api under /app), built from its sources with the full dependencies.
FROM base AS dashboard
COPY package.json bun.lock ./
RUN bun install --frozen-lockfile --ignore-scripts
COPY client ./client
COPY dashboard ./dashboard
COPY scripts/build-dashboard.ts ./scripts/
RUN bun scripts/build-dashboard.ts

# A writable data dir for the click spool (every click is logged there before its 302 and waits there
# until ClickHouse has it); docker-compose.yml mounts a volume on it, which takes this ownership.
FROM base AS runtime
RUN mkdir -p /app/data && chown bun:bun /app/data

FROM runtime AS api
COPY --from=deps --chown=root:root /app/node_modules ./node_modules
COPY package.json ./
COPY core ./core
COPY src ./src
COPY migrations ./migrations
COPY --from=dashboard /app/dashboard/dist ./dashboard/dist
USER bun
EXPOSE 3000
# Every interface: a container is reached through its network namespace (the default 127.0.0.1 would
# answer only inside it).
ENV PORT=3000 HOST=0.0.0.0
CMD ["bun", "--max-http-header-size=65536", "src/api.ts"]

# The hot path needs only the shared core module and redirect/: no Elysia app, no drizzle schema.
FROM runtime AS redirect
COPY --from=deps --chown=root:root /app/node_modules ./node_modules
COPY package.json ./
COPY core ./core
COPY redirect ./redirect
USER bun
EXPOSE 3001
ENV REDIRECT_PORT=3001 HOST=0.0.0.0
CMD ["bun", "--max-http-header-size=65536", "redirect/main.ts"]
