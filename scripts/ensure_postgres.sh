#!/usr/bin/env bash
# Make sure a real PostgreSQL server answers for the tests of a PostgreSQL-backed
# Dagster instance (tests/test_postgres_instance.py, issue 28), the way
# ensure_chromium.sh makes sure of the browser: a server already answering is
# used; else, as root, the machine's cluster is started (pg_ctlcluster), or
# Debian's postgresql package is installed and its cluster started. Then the
# test role exists (a superuser that may create the tests' throwaway databases).
# Where none of that can be done it says so and exits 0: the tests fail with
# their own clear message (no test is skipped to make CI green).
set -u
HOST=${BOARDGEN_TEST_PGHOST:-127.0.0.1}
PORT=${BOARDGEN_TEST_PGPORT:-5432}
ROLE=${BOARDGEN_TEST_PGUSER:-boardgen_test}
PASSWORD=${BOARDGEN_TEST_PGPASSWORD:-boardgen_test}

answers() { pg_isready -q -h "$HOST" -p "$PORT" >/dev/null 2>&1; }
say() { echo "ensure_postgres: $*" >&2; }

if [ -n "${BOARDGEN_TEST_POSTGRES_URL:-}" ]; then
    exit 0  # the user named their own server: the tests use it as it is
fi
if ! answers; then
    if [ "$(id -u)" -ne 0 ]; then
        say "no PostgreSQL answers at $HOST:$PORT and this is not root: start one, or set BOARDGEN_TEST_POSTGRES_URL"
        exit 0
    fi
    if ! command -v pg_ctlcluster >/dev/null 2>&1; then
        say "installing Debian's postgresql (apt-get)"
        export DEBIAN_FRONTEND=noninteractive
        if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends postgresql >/dev/null; }; then
            say "apt-get install postgresql FAILED; tests/test_postgres_instance.py will fail"
            exit 0
        fi
    fi
    cluster=$(pg_lsclusters --no-header 2>/dev/null | awk 'NR==1 {print $1, $2}')
    if [ -z "$cluster" ]; then
        version=$(ls /usr/lib/postgresql | sort -n | tail -1)
        pg_createcluster "$version" main >/dev/null && cluster="$version main"
    fi
    # shellcheck disable=SC2086
    pg_ctlcluster --skip-systemctl-redirect $cluster start || say "pg_ctlcluster $cluster start FAILED"
    for _ in $(seq 1 50); do answers && break; sleep 0.2; done
    answers || { say "the cluster $cluster did not come up at $HOST:$PORT"; exit 0; }
fi
if [ "$(id -u)" -eq 0 ] && id postgres >/dev/null 2>&1; then
    exists=$(su postgres -c "psql -h $HOST -p $PORT -tAc \"select 1 from pg_roles where rolname = '$ROLE'\"" 2>/dev/null \
             || su postgres -c "psql -p $PORT -tAc \"select 1 from pg_roles where rolname = '$ROLE'\"" 2>/dev/null)
    if [ "$exists" != "1" ]; then
        su postgres -c "psql -p $PORT -qc \"create role $ROLE login superuser password '$PASSWORD'\"" \
            || say "could not create the role $ROLE"
    fi
fi
exit 0
