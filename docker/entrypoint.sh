#!/bin/sh
# Initialise the cluster on first start, then run PostgreSQL in the foreground.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    if [ -z "${POSTGRES_PASSWORD:-}" ]; then
        echo "exo-postgres: set POSTGRES_PASSWORD (the superuser's password) for the first start" >&2
        exit 1
    fi
    pwfile=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
    initdb -D "$PGDATA" -E UTF8 --locale=C.UTF-8 -U postgres --pwfile="$pwfile" \
        --auth-local=peer --auth-host=scram-sha-256
    rm -f "$pwfile"
    echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
    {
        cat /etc/exocortex/postgresql.conf
        echo "listen_addresses = '*'"
        echo "cron.database_name = '$EXO_DB_NAME'"
    } > "$PGDATA/exocortex.conf"
    echo "include = 'exocortex.conf'" >> "$PGDATA/postgresql.conf"
    pg_ctl -D "$PGDATA" -w start -o "-c listen_addresses=''"
    createdb -h /var/run/postgresql "$EXO_DB_NAME"
    pg_ctl -D "$PGDATA" -w stop -m fast
fi
# Every server process starts under a soft data limit of 256 MB (sql/065_backend_memory.sql):
# sessions lift it or bound it for good at login; parallel workers and pg_cron jobs keep it.
ulimit -S -d 262144
exec postgres -D "$PGDATA"
