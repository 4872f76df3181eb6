#!/bin/sh
# A Gradle daemon keeps the environment of the command that started it. This checks that
# `gradle -q demo` still uses the FLEXIQ_DATABASE_URL of the command being run when a daemon
# started earlier without it is alive. The URL points at a closed port, so the demo fails fast
# after saying which database it uses.
set -u
cd "$(dirname "$0")/.."
cache=$(mktemp -d)
trap 'gradle --stop >/dev/null 2>&1; rm -rf "$cache"' EXIT
# Builds of its own, beside any running one: a separate cache and no build of the Java projects
# beyond what the demo needs.
env -u FLEXIQ_DATABASE_URL gradle --daemon -q --project-cache-dir "$cache" help >/dev/null 2>&1 || {
    echo "gradle_environment: could not start a Gradle daemon" >&2
    exit 1
}
output=$(FLEXIQ_DATABASE_URL='postgres://flexiq@127.0.0.1:1/elsewhere' \
    gradle -q --project-cache-dir "$cache" demo 2>&1)
if printf '%s\n' "$output" | grep -q 'using the database in FLEXIQ_DATABASE_URL (127.0.0.1:1/elsewhere)'; then
    echo "gradle -q demo used the caller's FLEXIQ_DATABASE_URL beside a daemon started without it"
    exit 0
fi
echo "gradle_environment: gradle -q demo ignored the caller's FLEXIQ_DATABASE_URL; it printed:" >&2
printf '%s\n' "$output" | head -n 20 >&2
exit 1
