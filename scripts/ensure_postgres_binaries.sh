#!/usr/bin/env bash
# What the PostgreSQL tests need of the machine, and nothing more
# (docs/decisions/test-postgres.md). The tests start a throwaway server of their
# own (tests/postgres_server.py); this only makes sure its binaries are here.
#
# 1. The superuser `boardgen_test` (password `boardgen_test`) that earlier
#    versions of this set-up created in the machine's cluster is dropped, in
#    every machine cluster that runs. A cluster that is down is not started for
#    it (nothing listens there, so nothing can log in); should its catalogue
#    hold the name, this says how to drop it once the cluster runs again.
# 2. Where initdb and postgres are missing, as root with apt-get, Debian's
#    postgresql package is installed WITHOUT its `main` cluster: a drop-in
#    createcluster.d file tells postgresql-common not to create one (so
#    nothing is started either), and is removed after the install, leaving
#    the machine's settings as they were.
#
# It never starts a cluster, creates a role or sets a password. Where it can do
# nothing (not root, no apt-get), it says what to do and exits 0: the tests then
# fail with their own message (no test is skipped to make CI green). A role it
# cannot drop is disarmed (NOLOGIN, no superuser, no password) and named; one it
# can neither drop nor disarm fails it (exit 1).
#
#   bash scripts/ensure_postgres_binaries.sh                          # what make test runs
#   bash scripts/ensure_postgres_binaries.sh --drop-old-role-at URL   # step 1 only, on the server at URL
#                                                                     # (tests/test_postgres_setup.py)
set -u
OLD_ROLE=boardgen_test
say() { echo "ensure_postgres_binaries: $*" >&2; }

have_binaries() {
    local d
    for d in /usr/lib/postgresql/*/bin; do
        [ -x "$d/initdb" ] && [ -x "$d/postgres" ] && return 0
    done
    command -v initdb >/dev/null 2>&1 && command -v postgres >/dev/null 2>&1
}

# one statement on the server at hand: a machine cluster as its owner (Debian's pg_wrapper: --cluster
# VERSION/NAME, over its unix socket), or the server a URL names
TARGET_CLUSTER="" TARGET_OWNER="" TARGET_URL=""
server_sql() {
    if [ -n "$TARGET_URL" ]; then
        psql "$TARGET_URL" -XAtq -v ON_ERROR_STOP=1 -c "$1"
    else
        (cd / && runuser -u "$TARGET_OWNER" -- psql --cluster "$TARGET_CLUSTER" -XAtq -v ON_ERROR_STOP=1 -d postgres -c "$1")
    fi
}

drop_old_role() {
    local where=$1 exists dbs db
    exists=$(server_sql "select 1 from pg_roles where rolname = '$OLD_ROLE'" 2>/dev/null)
    [ "$exists" = "1" ] || return 0
    say "$where has the superuser $OLD_ROLE (known password) an earlier set-up created: dropping it"
    # the databases the old fixtures made and a failed test left behind (boardgen_ and 12 hex digits)
    dbs=$(server_sql "select datname from pg_database d join pg_roles r on r.oid = d.datdba
                      where r.rolname = '$OLD_ROLE' and datname ~ '^boardgen_[0-9a-f]{12}\$'")
    for db in $dbs; do
        server_sql "drop database if exists \"$db\" with (force)" >/dev/null || say "could not drop the leftover test database $db"
    done
    if server_sql "drop role $OLD_ROLE" >/dev/null; then
        say "dropped the role $OLD_ROLE from $where"
    elif server_sql "alter role $OLD_ROLE nologin nosuperuser nocreatedb nocreaterole noreplication nobypassrls password null" \
            >/dev/null; then
        # it still owns something of the user's: what made it a hole is taken away, and what is left said
        say "$OLD_ROLE owns objects in $where, so it stays, disarmed (NOLOGIN, NOSUPERUSER, no password); drop it" \
            "by hand: REASSIGN OWNED BY $OLD_ROLE TO postgres; DROP OWNED BY $OLD_ROLE; DROP ROLE $OLD_ROLE"
    else
        say "could NOT drop nor disarm the role $OLD_ROLE in $where: drop it by hand (DROP ROLE $OLD_ROLE)"
        return 1
    fi
}

if [ "${1:-}" = "--drop-old-role-at" ]; then
    TARGET_URL=${2:?--drop-old-role-at needs a URL}
    drop_old_role "the server at the given URL"
    exit $?
fi

status=0
if command -v pg_lsclusters >/dev/null 2>&1; then
    while read -r version name _port state owner datadir _rest; do
        [ -n "${version:-}" ] || continue
        if [ "$state" = "online" ] || [ "${state#online}" != "$state" ]; then
            if [ "$(id -u)" -eq 0 ]; then
                TARGET_CLUSTER="$version/$name" TARGET_OWNER=$owner
                drop_old_role "the machine's cluster $version/$name" || status=1
            fi
        elif [ -r "$datadir/global/1260" ] && grep -q "$OLD_ROLE" "$datadir/global/1260" 2>/dev/null; then
            # pg_authid's file names the role (or a dead row of it): left as it is, since starting the cluster
            # is not this script's to do and nothing can log in while it is down
            say "the machine's cluster $version/$name is down and may hold the role $OLD_ROLE an earlier set-up" \
                "created (a superuser with a known password); it is not started here: once it runs, run this" \
                "script again (or DROP ROLE $OLD_ROLE)"
        fi
    done < <(pg_lsclusters --no-header 2>/dev/null)
fi

if have_binaries; then
    exit $status
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    say "no PostgreSQL server binaries (initdb, postgres) and this is not root with apt-get: install them"
    say "(Debian: sudo apt-get install postgresql, without starting its cluster), or set"
    say "BOARDGEN_TEST_POSTGRES_URL to a server of your own; tests/test_postgres_instance.py fails without either"
    exit $status
fi
say "installing Debian's postgresql (apt-get) without creating or starting a cluster"
DROPIN=/etc/postgresql-common/createcluster.d/zz-boardgen-no-main-cluster.conf
made_dir=0
[ -d "$(dirname "$DROPIN")" ] || { mkdir -p "$(dirname "$DROPIN")" && made_dir=1; }
printf '%s\n' "# written by boardgen's scripts/ensure_postgres_binaries.sh during its apt-get install; removed after" \
              "create_main_cluster = false" > "$DROPIN"
export DEBIAN_FRONTEND=noninteractive
if apt-get update -qq && apt-get install -y -qq --no-install-recommends postgresql >/dev/null; then
    say "installed: $(ls -d /usr/lib/postgresql/*/bin | tr '\n' ' ')"
else
    say "apt-get install postgresql FAILED; tests/test_postgres_instance.py will fail"
fi
rm -f "$DROPIN"
# the folder too, when this made it and no package claims it
if [ "$made_dir" = 1 ] && ! dpkg -S "$(dirname "$DROPIN")" >/dev/null 2>&1; then
    rmdir --ignore-fail-on-non-empty "$(dirname "$DROPIN")" 2>/dev/null || true
fi
exit $status
