#!/usr/bin/env bash
# Local PostgreSQL and Redis for development and tests, on their own ports, with their data under
# .local/ (gitignored). Uses `docker compose` (the repo's docker-compose.yml) when a Docker engine is
# reachable, else the Debian packages, installed on demand when running as root.
#
#   bash scripts/services.sh start  [postgres|redis]   start (idempotent) and wait until they answer
#   bash scripts/services.sh stop   [postgres|redis]   stop
#   bash scripts/services.sh status [postgres|redis]   show state; exit 0 only if all asked for answer
#   bash scripts/services.sh env                       export lines for development: database linkservice,
#                                                      Redis database 0: eval "$(bash scripts/services.sh env)"
#   bash scripts/services.sh test-env                  the same for the tests (npm test, .ci/run, bench/):
#                                                      database linkservice_test, Redis database 1
#
# Environment: PG_PORT (54329), REDIS_PORT (63799), SERVICES_MODE (auto | native | docker); give env and
# test-env the same ports as start.
# Native layout: .local/pg/data (cluster), .local/pg/run (unix socket), .local/pg/postgres.log;
# .local/redis/{appendonly files, redis.pid, redis.log}.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_PORT=${PG_PORT:-54329}
REDIS_PORT=${REDIS_PORT:-63799}
SERVICES_MODE=${SERVICES_MODE:-auto}
WAIT_SECONDS=${SERVICES_WAIT_SECONDS:-30}
DB_USER=linkservice
DB_NAMES=(linkservice linkservice_test)

PG_DIR=$ROOT/.local/pg
REDIS_DIR=$ROOT/.local/redis

say() { echo "services: $*" >&2; }
show() { echo "$*"; } # status lines: stdout
die() { echo "services: error: $*" >&2; exit 1; }
is_root() { [ "$(id -u)" = 0 ]; }

# True when PID is a live (not zombie) process whose name matches the extended regex.
alive() {
  local pid=$1 name=$2 state
  [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
  grep -qE "^($name)" "/proc/$pid/comm" 2>/dev/null || return 1
  state=$(sed -E 's/^.*\) ([A-Za-z]).*$/\1/' "/proc/$pid/stat" 2>/dev/null) || return 1
  [ "$state" != Z ] && [ "$state" != X ]
}

# ---------------------------------------------------------------------------------------------------
# Mode: docker compose when an engine answers, else native processes.

docker_available() {
  command -v docker >/dev/null 2>&1 &&
    timeout 15 docker info >/dev/null 2>&1 &&
    timeout 15 docker compose version >/dev/null 2>&1
}

mode() {
  case "$SERVICES_MODE" in
    native | docker) echo "$SERVICES_MODE" ;;
    auto) if docker_available; then echo docker; else echo native; fi ;;
    *) die "SERVICES_MODE must be auto, native or docker (got '$SERVICES_MODE')" ;;
  esac
}

# ---------------------------------------------------------------------------------------------------
# Docker mode: the postgres and redis services of docker-compose.yml, published on 127.0.0.1 only.

# The compose file requires the application secrets for every command (it interpolates the whole
# file); only postgres and redis are started here, so development placeholders are enough.
docker_env() {
  export PG_PORT REDIS_PORT
  export POSTGRES_PASSWORD=${POSTGRES_PASSWORD:-linkservice-dev}
  export INTERNAL_SECRET=${INTERNAL_SECRET:-dev-only-internal-secret-0123456789abcdef}
  export IP_HASH_SECRET=${IP_HASH_SECRET:-dev-only-ip-hash-secret-0123456789abcdef}
  export CLICKHOUSE_PASSWORD=${CLICKHOUSE_PASSWORD:-linkservice-dev}
}

compose() { docker compose -f "$ROOT/docker-compose.yml" --project-directory "$ROOT" "$@"; }

docker_start() {
  local services=("$@")
  docker_env
  say "docker: compose up -d ${services[*]} (postgres on 127.0.0.1:$PG_PORT, redis on 127.0.0.1:$REDIS_PORT)"
  compose up -d "${services[@]}"
  local deadline=$((SECONDS + WAIT_SECONDS * 2)) s
  for s in "${services[@]}"; do
    say "docker: waiting for $s to be healthy"
    until [ "$(docker inspect -f '{{.State.Health.Status}}' "$(compose ps -q "$s")" 2>/dev/null)" = healthy ]; do
      if [ "$SECONDS" -ge "$deadline" ]; then
        compose logs --tail 40 "$s" >&2 || true
        die "$s did not become healthy within $((WAIT_SECONDS * 2)) s (log tail above)"
      fi
      sleep 1
    done
  done
  if printf '%s\n' "${services[@]}" | grep -qx postgres; then
    if [ -z "$(compose exec -T postgres psql -U "$DB_USER" -d linkservice -tAc \
      "select 1 from pg_database where datname = 'linkservice_test'")" ]; then
      say "docker: creating database linkservice_test"
      compose exec -T postgres psql -U "$DB_USER" -d linkservice -v ON_ERROR_STOP=1 \
        -c "create database linkservice_test owner $DB_USER" >/dev/null
    fi
  fi
  say "docker: ready"
}

docker_stop() { docker_env; say "docker: compose stop $*"; compose stop "$@"; }

docker_status() {
  docker_env
  compose ps "$@"
  local s ok=0
  for s in "$@"; do
    [ "$(docker inspect -f '{{.State.Health.Status}}' "$(compose ps -q "$s" 2>/dev/null)" 2>/dev/null)" = healthy ] || ok=1
  done
  return $ok
}

# ---------------------------------------------------------------------------------------------------
# Native mode: packages.

PG_BIN=
find_pg_bin() {
  local initdb
  # Highest installed major version wins.
  initdb=$(ls -1d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1 || true)
  [ -n "$initdb" ] && PG_BIN=$(dirname "$initdb")
  [ -n "$PG_BIN" ]
}

APT_UPDATED=
apt_install() {
  is_root || die "package(s) $* missing; install them (as root: apt-get install -y $*) or run this script as root"
  command -v apt-get >/dev/null 2>&1 || die "package(s) $* missing and apt-get is not available; install them by hand"
  if [ -z "$APT_UPDATED" ]; then
    say "apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    APT_UPDATED=1
  fi
  say "apt-get install -y $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}

ensure_packages() {
  local want_pg=$1 want_redis=$2 missing=()
  if [ "$want_pg" = 1 ] && ! find_pg_bin; then missing+=(postgresql-15); fi
  if [ "$want_redis" = 1 ] && ! command -v redis-server >/dev/null 2>&1; then missing+=(redis-server); fi
  if [ "${#missing[@]}" -gt 0 ]; then apt_install "${missing[@]}"; fi
  if [ "$want_pg" = 1 ]; then
    find_pg_bin || die "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin (package postgresql-15)"
  fi
  if [ "$want_redis" = 1 ]; then
    command -v redis-server >/dev/null 2>&1 || die "redis-server not found (package redis-server)"
    command -v redis-cli >/dev/null 2>&1 || die "redis-cli not found (package redis-tools)"
  fi
}

# ---------------------------------------------------------------------------------------------------
# Native PostgreSQL. initdb and the server refuse to run as root: as root they run as the `postgres`
# system user (created by the Debian package), otherwise as the current user.

as_pg() {
  if is_root; then runuser -u postgres -- "$@"; else "$@"; fi
}

# The postgres user must be able to reach .local/pg. When the checkout lives where it cannot (e.g.
# under /root, mode 0700), the cluster goes to a per-checkout directory under /var/tmp instead.
resolve_pg_dir() {
  is_root || return 0
  id postgres >/dev/null 2>&1 || die "system user 'postgres' is missing (it comes with package postgresql-15)"
  mkdir -p "$(dirname "$PG_DIR")"
  if ! runuser -u postgres -- test -x "$(dirname "$PG_DIR")" 2>/dev/null; then
    local alt
    alt=/var/tmp/linkservice-$(printf '%s' "$ROOT" | md5sum | cut -c1-10)/pg
    say "postgres: user 'postgres' cannot reach $(dirname "$PG_DIR"); using $alt instead"
    mkdir -p "$(dirname "$alt")"
    PG_DIR=$alt
  fi
}

pg_paths() {
  PGDATA_DIR=$PG_DIR/data
  PG_SOCK=$PG_DIR/run
  PG_LOG=$PG_DIR/postgres.log
}

pg_log_tail() { [ -f "$PG_LOG" ] && { echo "--- tail of $PG_LOG" >&2; tail -n 30 "$PG_LOG" >&2; } || true; }

pg_ready() { "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -t 2 >/dev/null 2>&1; }

# Our server runs if postmaster.pid names a live postgres process.
pg_running() {
  local pid
  [ -f "$PGDATA_DIR/postmaster.pid" ] || return 1
  pid=$(head -n 1 "$PGDATA_DIR/postmaster.pid" 2>/dev/null || true)
  alive "$pid" 'postgres|postmaster'
}

pg_psql() {
  as_pg "$PG_BIN/psql" -X -q -h "$PG_SOCK" -p "$PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 "$@"
}

pg_init() {
  if is_root; then
    mkdir -p "$PG_DIR"
    chown postgres:postgres "$PG_DIR"
    chmod 0700 "$PG_DIR"
  else
    mkdir -p "$PG_DIR"
    chmod 0700 "$PG_DIR"
  fi
  as_pg mkdir -p "$PG_SOCK"
  as_pg chmod 0700 "$PG_SOCK"
  if [ ! -f "$PGDATA_DIR/PG_VERSION" ]; then
    if [ -d "$PGDATA_DIR" ] && [ -n "$(ls -A "$PGDATA_DIR" 2>/dev/null)" ]; then
      die "$PGDATA_DIR exists but holds no cluster (no PG_VERSION); move it away and run start again"
    fi
    say "postgres: initdb $PGDATA_DIR ($("$PG_BIN/postgres" --version))"
    as_pg "$PG_BIN/initdb" -D "$PGDATA_DIR" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 \
      >"$PG_DIR/initdb.log" 2>&1 ||
      as_pg "$PG_BIN/initdb" -D "$PGDATA_DIR" -U postgres --auth=trust --encoding=UTF8 --no-locale \
        >"$PG_DIR/initdb.log" 2>&1 ||
      { cat "$PG_DIR/initdb.log" >&2; die "initdb failed (log above)"; }
    # Trust, but only over the owner-only unix socket and from 127.0.0.1: never from another host.
    # Replication too (a standby made by pg_basebackup, as in the read-replica test), from 127.0.0.1.
    as_pg sh -c "cat > '$PGDATA_DIR/pg_hba.conf'" <<'EOF'
# Written by scripts/services.sh: development cluster, trust on loopback only.
# TYPE  DATABASE     USER  ADDRESS        METHOD
local   all          all                  trust
host    all          all   127.0.0.1/32   trust
host    replication  all   127.0.0.1/32   trust
EOF
    as_pg sh -c "echo \"include_if_exists = 'linkservice.conf'\" >> '$PGDATA_DIR/postgresql.conf'"
  fi
  # A cluster made before replication was allowed gets the line now (it is not running yet).
  pg_allow_replication || true
  # Rewritten on every start so PG_PORT and the paths follow the environment and the checkout.
  as_pg sh -c "cat > '$PGDATA_DIR/linkservice.conf'" <<EOF
# Written by scripts/services.sh on every start; edits are lost.
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$PG_SOCK'
unix_socket_permissions = 0700
max_connections = 200
EOF
}

# A standby of this cluster (pg_basebackup -R, as the read-replica test makes one) streams over a
# replication connection, which "all" in pg_hba.conf does not cover. Adds pg_hba.conf's replication line
# to a cluster made without it; true when it added it (a running server must then reload).
pg_allow_replication() {
  as_pg grep -qE '^host[[:space:]]+replication[[:space:]]' "$PGDATA_DIR/pg_hba.conf" && return 1
  say "postgres: allowing replication connections from 127.0.0.1 (pg_hba.conf)"
  as_pg sh -c "echo 'host    replication all   127.0.0.1/32   trust' >> '$PGDATA_DIR/pg_hba.conf'"
}

pg_start() {
  pg_paths
  local running_port
  if pg_running && running_port=$(sed -n 4p "$PGDATA_DIR/postmaster.pid") && [ "$running_port" != "$PG_PORT" ]; then
    die "the cluster in $PGDATA_DIR already runs on port $running_port; stop it first or set PG_PORT=$running_port"
  fi
  if pg_running; then
    if pg_ready; then
      say "postgres: already running on 127.0.0.1:$PG_PORT"
      if pg_allow_replication; then pg_psql -c 'select pg_reload_conf()' >/dev/null; fi
      pg_bootstrap
      return
    fi
  elif [ -f "$PGDATA_DIR/postmaster.pid" ]; then
    # Left by a crash (or its PID now belongs to another process): pg_ctl would refuse to start.
    say "postgres: removing stale $PGDATA_DIR/postmaster.pid"
    rm -f "$PGDATA_DIR/postmaster.pid"
  fi
  # Same for the socket lock: postgres trusts kill(pid, 0), which also succeeds for an unreaped zombie.
  local lock
  for lock in "$PG_SOCK"/.s.PGSQL.*.lock; do
    [ -f "$lock" ] || continue
    if ! alive "$(head -n 1 "$lock" 2>/dev/null)" 'postgres|postmaster'; then
      say "postgres: removing stale $lock"
      rm -f "$lock" "${lock%.lock}"
    fi
  done
  if ! pg_running && pg_ready; then
    die "something else already answers on 127.0.0.1:$PG_PORT; stop it or set PG_PORT"
  fi
  pg_init
  if ! pg_running; then
    say "postgres: starting on 127.0.0.1:$PG_PORT (log $PG_LOG)"
    as_pg "$PG_BIN/pg_ctl" -D "$PGDATA_DIR" -l "$PG_LOG" -w -t "$WAIT_SECONDS" start >/dev/null 2>&1 ||
      { pg_log_tail; die "postgres did not start within $WAIT_SECONDS s (log tail above)"; }
  fi
  local deadline=$((SECONDS + WAIT_SECONDS))
  until pg_ready; do
    if [ "$SECONDS" -ge "$deadline" ]; then pg_log_tail; die "postgres does not answer on 127.0.0.1:$PG_PORT after $WAIT_SECONDS s (log tail above)"; fi
    sleep 0.5
  done
  pg_bootstrap
  say "postgres: ready (postgres://$DB_USER@127.0.0.1:$PG_PORT/{${DB_NAMES[*]}})"
}

pg_bootstrap() {
  if [ -z "$(pg_psql -tAc "select 1 from pg_roles where rolname = '$DB_USER'")" ]; then
    say "postgres: creating role $DB_USER (LOGIN CREATEDB)"
    pg_psql -c "create role $DB_USER login createdb"
  fi
  local db
  for db in "${DB_NAMES[@]}"; do
    if [ -z "$(pg_psql -tAc "select 1 from pg_database where datname = '$db'")" ]; then
      say "postgres: creating database $db owned by $DB_USER"
      pg_psql -c "create database $db owner $DB_USER"
    fi
  done
}

pg_stop() {
  pg_paths
  if ! pg_running; then say "postgres: not running"; return 0; fi
  say "postgres: stopping"
  as_pg "$PG_BIN/pg_ctl" -D "$PGDATA_DIR" -m fast -w -t "$WAIT_SECONDS" stop >/dev/null ||
    { pg_log_tail; die "postgres did not stop within $WAIT_SECONDS s"; }
  say "postgres: stopped"
}

pg_status() {
  pg_paths
  local running_port
  if pg_running && running_port=$(sed -n 4p "$PGDATA_DIR/postmaster.pid") && [ "$running_port" != "$PG_PORT" ]; then
    show "postgres: running on port $running_port (pid $(head -n 1 "$PGDATA_DIR/postmaster.pid")), not on $PG_PORT"
    return 1
  elif pg_running && pg_ready; then
    show "postgres: running, pid $(head -n 1 "$PGDATA_DIR/postmaster.pid"), 127.0.0.1:$PG_PORT, data $PGDATA_DIR"
  elif pg_running; then
    show "postgres: process running (pid $(head -n 1 "$PGDATA_DIR/postmaster.pid")) but not answering on 127.0.0.1:$PG_PORT"
    return 1
  elif pg_ready; then
    show "postgres: not running from $PGDATA_DIR, but something answers on 127.0.0.1:$PG_PORT"
    return 1
  else
    show "postgres: stopped"
    return 1
  fi
}

# ---------------------------------------------------------------------------------------------------
# Native Redis.

REDIS_PID=$REDIS_DIR/redis.pid
REDIS_LOG=$REDIS_DIR/redis.log
REDIS_PORT_FILE=$REDIS_DIR/redis.port

redis_ping() { [ "$(timeout 3 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]; }

redis_pid() {
  local pid
  [ -f "$REDIS_PID" ] || return 1
  pid=$(head -n 1 "$REDIS_PID" 2>/dev/null || true)
  alive "$pid" redis && echo "$pid"
}

redis_log_tail() { [ -f "$REDIS_LOG" ] && { echo "--- tail of $REDIS_LOG" >&2; tail -n 30 "$REDIS_LOG" >&2; } || true; }

redis_start() {
  local running_port
  if redis_pid >/dev/null && running_port=$(cat "$REDIS_PORT_FILE" 2>/dev/null) && [ "$running_port" != "$REDIS_PORT" ]; then
    die "the Redis of $REDIS_DIR already runs on port $running_port; stop it first or set REDIS_PORT=$running_port"
  fi
  if redis_pid >/dev/null; then
    if redis_ping; then say "redis: already running on 127.0.0.1:$REDIS_PORT"; return; fi
  elif redis_ping; then
    die "something else already answers on 127.0.0.1:$REDIS_PORT; stop it or set REDIS_PORT"
  else
    mkdir -p "$REDIS_DIR"
    rm -f "$REDIS_PID"
    say "redis: starting on 127.0.0.1:$REDIS_PORT (dir $REDIS_DIR, log $REDIS_LOG)"
    redis-server --daemonize yes --port "$REDIS_PORT" --bind 127.0.0.1 --protected-mode yes \
      --dir "$REDIS_DIR" --appendonly yes --save '' \
      --pidfile "$REDIS_PID" --logfile "$REDIS_LOG" ||
      { redis_log_tail; die "redis-server failed to start (log tail above)"; }
    echo "$REDIS_PORT" >"$REDIS_PORT_FILE"
  fi
  local deadline=$((SECONDS + WAIT_SECONDS))
  until redis_ping; do
    if [ "$SECONDS" -ge "$deadline" ]; then redis_log_tail; die "redis does not answer on 127.0.0.1:$REDIS_PORT after $WAIT_SECONDS s (log tail above)"; fi
    sleep 0.5
  done
  say "redis: ready (redis://127.0.0.1:$REDIS_PORT)"
}

redis_stop() {
  local pid
  if ! pid=$(redis_pid); then say "redis: not running"; rm -f "$REDIS_PID" "$REDIS_PORT_FILE"; return 0; fi
  say "redis: stopping (pid $pid)"
  kill -TERM "$pid" # Redis shuts down gracefully on SIGTERM (fsyncs the append-only file).
  local deadline=$((SECONDS + WAIT_SECONDS))
  while alive "$pid" redis; do
    if [ "$SECONDS" -ge "$deadline" ]; then redis_log_tail; die "redis (pid $pid) did not stop within $WAIT_SECONDS s"; fi
    sleep 0.2
  done
  rm -f "$REDIS_PORT_FILE"
  say "redis: stopped"
}

redis_status() {
  local pid
  local running_port
  running_port=$(cat "$REDIS_PORT_FILE" 2>/dev/null || echo "$REDIS_PORT")
  if pid=$(redis_pid) && [ "$running_port" != "$REDIS_PORT" ]; then
    show "redis: running on port $running_port (pid $pid), not on $REDIS_PORT"
    return 1
  elif pid=$(redis_pid) && redis_ping; then
    show "redis: running, pid $pid, 127.0.0.1:$REDIS_PORT, dir $REDIS_DIR"
  elif pid=$(redis_pid); then
    show "redis: process running (pid $pid) but not answering on 127.0.0.1:$REDIS_PORT"
    return 1
  elif redis_ping; then
    show "redis: not running from $REDIS_DIR, but something answers on 127.0.0.1:$REDIS_PORT"
    return 1
  else
    show "redis: stopped"
    return 1
  fi
}

# ---------------------------------------------------------------------------------------------------

# Development and tests get a database each (tests write throwaway accounts and links, and a
# development database should keep only what a person made) and a Redis database number each, so cached
# links of one never answer for the other.
print_env() {
  local database=$1 redis_db=$2 auth=$DB_USER
  if [ "$(mode)" = docker ]; then
    docker_env
    auth=$DB_USER:$POSTGRES_PASSWORD
  fi
  echo "export DATABASE_URL=postgres://$auth@127.0.0.1:$PG_PORT/$database"
  echo "export REDIS_URL=redis://127.0.0.1:$REDIS_PORT/$redis_db"
  # The app requires these (32+ characters) once an engine URL is set; development values, kept when
  # already set in the shell that evaluates this.
  echo 'export INTERNAL_SECRET="${INTERNAL_SECRET:-dev-only-internal-secret-0123456789abcdef}"'
  echo 'export IP_HASH_SECRET="${IP_HASH_SECRET:-dev-only-ip-hash-secret-0123456789abcdef}"'
}

usage() {
  echo "usage: bash scripts/services.sh start|stop|status [postgres|redis]  |  bash scripts/services.sh env|test-env" >&2
  exit 2
}

main() {
  local cmd=${1:-} which=${2:-all} want_pg=0 want_redis=0 services=()
  case "$which" in
    all) want_pg=1 want_redis=1 services=(postgres redis) ;;
    postgres | pg) want_pg=1 services=(postgres) ;;
    redis) want_redis=1 services=(redis) ;;
    *) usage ;;
  esac
  case "$cmd" in
    env) print_env linkservice 0; return ;;
    test-env) print_env linkservice_test 1; return ;;
    start | stop | status) ;;
    *) usage ;;
  esac

  local m
  m=$(mode)
  if [ "$m" = docker ]; then
    case "$cmd" in
      start) docker_start "${services[@]}" ;;
      stop) docker_stop "${services[@]}" ;;
      status) docker_status "${services[@]}" ;;
    esac
    return
  fi

  local rc=0
  if [ "$cmd" = start ]; then
    ensure_packages "$want_pg" "$want_redis"
  else
    # stop/status never install anything; without binaries nothing of ours can be running.
    if [ "$want_pg" = 1 ] && ! find_pg_bin; then
      say "postgres: not installed (package postgresql-15)"
      want_pg=0
      [ "$cmd" = stop ] || rc=1
    fi
    if [ "$want_redis" = 1 ] && ! command -v redis-cli >/dev/null 2>&1; then
      say "redis: not installed (package redis-server)"
      want_redis=0
      [ "$cmd" = stop ] || rc=1
    fi
  fi
  if [ "$want_pg" = 1 ]; then resolve_pg_dir; fi

  case "$cmd" in
    start)
      if [ "$want_pg" = 1 ]; then pg_start; fi
      if [ "$want_redis" = 1 ]; then redis_start; fi
      ;;
    stop)
      if [ "$want_redis" = 1 ]; then redis_stop; fi
      if [ "$want_pg" = 1 ]; then pg_stop; fi
      ;;
    status)
      if [ "$want_pg" = 1 ]; then pg_status || rc=1; fi
      if [ "$want_redis" = 1 ]; then redis_status || rc=1; fi
      ;;
  esac
  return $rc
}

main "$@"
