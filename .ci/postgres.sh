#!/usr/bin/env bash
# Throwaway PostgreSQL server for the test suite (CI and local runs).
#
#   bash .ci/postgres.sh start|stop|dsn     # what `make pg-start` / `make pg-stop` run
#   source .ci/postgres.sh; pg_start        # what .ci/run does; pg_start exports LG_EVAL_PG_DSN
#
# The server listens on 127.0.0.1:$LG_EVAL_PG_PORT (default 54329) with trust auth, keeps its
# data in $LG_EVAL_PG_DIR (default /tmp/lg_eval_pg_<port>) and has a database `lg_eval_test`.
# Tuned for speed, not durability (fsync off): never point it at data you care about.
# If the binaries are missing and we are root, PostgreSQL is installed from Debian packages.

PG_PORT="${LG_EVAL_PG_PORT:-54329}"
PG_DIR="${LG_EVAL_PG_DIR:-${TMPDIR:-/tmp}/lg_eval_pg_${PG_PORT}}"
PG_DB="lg_eval_test"
PG_DSN="postgresql://postgres@127.0.0.1:${PG_PORT}/${PG_DB}?sslmode=disable"

_pg_log() { echo "[postgres] $*" >&2; }

# Print the newest /usr/lib/postgresql/<ver>/bin holding initdb + pg_ctl (Debian layout), else
# the directory of an initdb found on PATH; return 1 when there is none.
pg_bindir() {
  local dir
  dir="$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin 2>/dev/null | sort -V | tail -n 1 ||
    true)"
  if [[ -n "$dir" && -x "$dir/initdb" && -x "$dir/pg_ctl" ]]; then
    echo "$dir"
  elif command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
    dirname "$(readlink -f "$(command -v initdb)")"
  else
    return 1
  fi
}

# Install PostgreSQL from Debian packages (needs root; apt-get must run non-interactively).
pg_install() {
  if [[ $EUID -ne 0 ]]; then
    _pg_log "PostgreSQL binaries not found; install them (apt-get install postgresql) first"
    return 1
  fi
  _pg_log "installing PostgreSQL from Debian packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends postgresql
}

# Run a server binary as the `postgres` user when we are root (initdb refuses root).
_pg_as_owner() {
  if [[ $EUID -eq 0 ]]; then
    (cd / && runuser -u postgres -- "$@")
  else
    "$@"
  fi
}

# Start (or reuse) the server and export LG_EVAL_PG_DSN. Sets PG_STARTED_HERE=1 when this call
# created the cluster, so callers can tell whether stopping it is theirs to do.
pg_start() {
  local bin
  bin="$(pg_bindir)" || { pg_install && bin="$(pg_bindir)"; } || {
    _pg_log "ERROR: no initdb/pg_ctl available"
    return 1
  }
  export LG_EVAL_PG_DSN="$PG_DSN"

  if _pg_as_owner "$bin/pg_ctl" status -D "$PG_DIR/data" >/dev/null 2>&1; then
    _pg_log "already running in $PG_DIR"
  else
    # Refuse to start if something else owns the port: tests would hit the wrong server.
    if "$bin/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT"; then
      _pg_log "ERROR: port $PG_PORT is taken by another server; set LG_EVAL_PG_PORT"
      return 1
    fi
    # shellcheck disable=SC2034  # read by .ci/run
    PG_STARTED_HERE=1
    rm -rf "$PG_DIR"
    mkdir -p "$PG_DIR"
    [[ $EUID -eq 0 ]] && chown postgres: "$PG_DIR"
    _pg_log "initdb in $PG_DIR/data ($bin)"
    _pg_as_owner "$bin/initdb" -D "$PG_DIR/data" -U postgres --auth=trust -E UTF8 --locale=C \
      >"$PG_DIR/initdb.log" 2>&1 || {
      cat "$PG_DIR/initdb.log" >&2
      _pg_log "ERROR: initdb failed"
      return 1
    }
    _pg_log "starting on 127.0.0.1:$PG_PORT"
    _pg_as_owner "$bin/pg_ctl" start -w -t 60 -D "$PG_DIR/data" -l "$PG_DIR/server.log" \
      -o "-h 127.0.0.1 -p $PG_PORT -k $PG_DIR -c fsync=off -c synchronous_commit=off \
          -c full_page_writes=off" >/dev/null || {
      tail -n 50 "$PG_DIR/server.log" >&2 || true
      _pg_log "ERROR: PostgreSQL failed to start"
      return 1
    }
  fi

  local i
  for i in $(seq 1 30); do
    "$bin/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" && break
    [[ $i -eq 30 ]] && { _pg_log "ERROR: server not ready after 30s"; return 1; }
    sleep 1
  done
  if [[ "$("$bin/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -tAc \
    "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'")" != 1 ]]; then
    "$bin/createdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres "$PG_DB" || {
      _pg_log "ERROR: createdb $PG_DB failed"
      return 1
    }
  fi
  _pg_log "ready: LG_EVAL_PG_DSN=$LG_EVAL_PG_DSN"
}

# Stop the server and delete its data directory.
pg_stop() {
  local bin
  bin="$(pg_bindir)" || return 0
  if [[ -d "$PG_DIR/data" ]]; then
    _pg_as_owner "$bin/pg_ctl" stop -D "$PG_DIR/data" -m fast -w >/dev/null 2>&1 || true
    _pg_log "stopped; removing $PG_DIR"
  fi
  rm -rf "$PG_DIR"
}

# Executed (not sourced): dispatch on the first argument.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail
  case "${1:-}" in
    start)
      pg_start
      echo "export LG_EVAL_PG_DSN='$LG_EVAL_PG_DSN'"
      ;;
    stop) pg_stop ;;
    dsn) echo "$PG_DSN" ;;
    *)
      echo "usage: $0 start|stop|dsn" >&2
      exit 2
      ;;
  esac
fi
