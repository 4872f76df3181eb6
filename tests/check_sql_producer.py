#!/usr/bin/env python3
"""Enqueues through FlexiQ's SQL function from Python and checks that Java deduplicates against it.

Python (standard library only, driving psql) stands for "any language": it computes keys with
the recipe of tests/check_vectors.py, hashes them itself and calls {schema}.enqueue. The Java
API (java/flexiq/src/test/java/io/flexiq/SqlProducerPeer.java, run on the flexiq project's test
classpath) enqueues the same requests, and each side must replay the job the other created:

- every reference vector, enqueued from SQL with its derived key, replays from Java with
  idempotent(true);
- a derived key Java used first replays from SQL; the same key with another payload comes back
  from SQL as outcome 'conflict', not as an error;
- an idempotency key hashed here replays against Java's idempotencyKey(k), both ways, when SQL
  asks for Java's default retention of such keys ({"keyRetentionMs": 86400000}); without it the
  request differs, a conflict;
- an unknown option raises SQLSTATE 22023;
- every ```sql block of README.md and docs/**/*.md runs as written against the migrated `flexiq`
  schema (at least one once a document has the section "Enqueue from any language", which
  docs/sql-producers.md holds).

PostgreSQL: the database of FLEXIQ_TEST_DATABASE_URL when set (on a schema of its own, dropped
at the end), else a throwaway cluster from the machine's binaries (FLEXIQ_PG_BIN, else
`pg_config --bindir`) on a free loopback port, run as the OS user postgres when we are root, and
removed at the end, also on failure.

Usage: python3 tests/check_sql_producer.py --classpath CP [--java PATH] [--docs ROOT]

Prints one line per failure and ends with "N passed, M failed"; exits non-zero on any failure.
"""

import argparse
import glob
import hashlib
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from check_vectors import DEFAULT_PATH as VECTORS_PATH, auto_key, canonicalize

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PEER = "io.flexiq.SqlProducerPeer"
# What Java's idempotencyKey(k) keeps a key bound for by default (EnqueueOptions).
JAVA_IDEMPOTENCY_RETENTION = {"keyRetentionMs": 86400000}
# Java writes Double.MIN_VALUE with a digit too many and refuses it (see VectorsTest).
JAVA_REFUSES = {"float_min_subnormal"}
SQL_SECTION = "Enqueue from any language"


# --- the key recipe, as every binding applies it ---------------------------------------------

def preview(key):
    """What FlexiQ shows of a key: at most a third of its characters, at most 8, then '…'."""
    return key[:min(len(key) // 3, 8)] + "\u2026"


def ascii_json(text):
    """The same JSON text with every non-ASCII character escaped, to pass on a command line
    whatever the locale (JSON allows such characters only inside strings, where escapes mean
    the same)."""
    def escape(match):
        units = match.group(0).encode("utf-16-be")
        return "".join("\\u%02x%02x" % (units[i], units[i + 1]) for i in range(0, len(units), 2))
    return re.sub(r"[^\x00-\x7f]", escape, text)


# --- PostgreSQL -----------------------------------------------------------------------------------

class SqlError(Exception):
    def __init__(self, sqlstate, message):
        super().__init__("%s: %s" % (sqlstate, message))
        self.sqlstate = sqlstate


def as_postgres(command):
    """Runs PostgreSQL's server tools as the OS user postgres when we are root (initdb refuses
    root)."""
    return (["runuser", "-u", "postgres", "--"] + command) if os.geteuid() == 0 else command


class Cluster:
    """A throwaway PostgreSQL on a free loopback port, in a temporary directory."""

    def __init__(self):
        self.bindir = os.environ.get("FLEXIQ_PG_BIN") or subprocess.run(
            ["pg_config", "--bindir"], check=True, capture_output=True, text=True).stdout.strip()
        self.directory = tempfile.mkdtemp(prefix="flexiq-sql-producer-")
        self.data = os.path.join(self.directory, "data")
        self.started = False
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.directory, user.pw_uid, user.pw_gid)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = "postgres://postgres@127.0.0.1:%d/postgres" % self.port

    def start(self):
        self._tool("initdb", "-D", self.data, "-U", "postgres", "-A", "trust", "-E", "UTF8",
                   "--no-locale")
        settings = "-c listen_addresses=127.0.0.1 -p %d -c unix_socket_directories=%s " \
                   "-c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
                   % (self.port, self.directory)
        self._tool("pg_ctl", "-D", self.data, "-l", os.path.join(self.directory, "postgres.log"),
                   "-o", settings, "-w", "start")
        self.started = True

    def remove(self):
        try:
            if self.started:
                self._tool("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)

    def _tool(self, name, *args):
        result = subprocess.run(as_postgres([os.path.join(self.bindir, name)] + list(args)),
                                capture_output=True, text=True)
        if result.returncode != 0:
            log = os.path.join(self.directory, "postgres.log")
            tail = open(log, errors="replace").read()[-2000:] if os.path.exists(log) else ""
            raise RuntimeError("%s failed (exit %d): %s%s\n%s" % (
                name, result.returncode, result.stdout, result.stderr, tail))


class Database:
    """psql against one database and schema."""

    def __init__(self, url, schema):
        self.url = url
        self.schema = schema

    def psql(self, sql, variables=None):
        """Runs `sql` (psql variables interpolated) and returns its rows as lists of fields;
        raises SqlError with the SQLSTATE when a statement fails."""
        command = ["psql", "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1",
                   "-v", "VERBOSITY=verbose", "-d", self.url]
        for name, value in (variables or {}).items():
            command += ["-v", "%s=%s" % (name, value)]
        env = dict(os.environ, PGCLIENTENCODING="UTF8")
        result = subprocess.run(command, input=sql, capture_output=True, text=True,
                                encoding="utf-8", env=env)
        if result.returncode != 0:
            match = re.search(r"ERROR:\s+([0-9A-Z]{5}): (.*)", result.stderr)
            if match is None:
                raise RuntimeError("psql failed (exit %d): %s" % (result.returncode, result.stderr))
            raise SqlError(match.group(1), match.group(2))
        return [line.split("\t") for line in result.stdout.splitlines() if line]

    def enqueue(self, task, payload, key=None, options=None):
        """Calls {schema}.enqueue; returns (job id, outcome, accepted request or None)."""
        variables = {"task": task, "payload": payload.hex()}
        key_args = "NULL, NULL"
        if key is not None:
            variables["digest"] = hashlib.sha256(key.encode("utf-8")).hexdigest()
            variables["preview"] = preview(key)
            key_args = "decode(:'digest', 'hex'), :'preview'"
        option_arg = ""
        if options is not None:
            variables["options"] = json.dumps(options)
            option_arg = ", options => :'options'"
        rows = self.psql("SELECT job_id, outcome, accepted FROM %s.enqueue(:'task', "
                         "decode(:'payload', 'hex'), %s%s);\n" % (self.schema, key_args, option_arg),
                         variables)
        job_id, outcome, accepted = rows[0]
        return job_id, outcome, json.loads(accepted) if accepted else None


def java_peer(args, database, requests):
    """Runs SqlProducerPeer with `requests` (lists of its arguments); returns its (job id,
    outcome) lines."""
    command = [args.java, "-ea", "-cp", args.classpath, PEER, database.url, database.schema]
    for request in requests:
        command += request
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError("%s failed (exit %d):\n%s%s" % (PEER, result.returncode, result.stdout,
                                                           result.stderr))
    return [tuple(line.split(" ")) for line in result.stdout.splitlines()]


# --- the checks -------------------------------------------------------------------------------------

class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def equal(self, what, expected, actual):
        if expected == actual:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL %s: expected %r, got %r" % (what, expected, actual))


def documents(root):
    """README.md, then every .md file under docs/, sorted by path: the documentation."""
    docs = sorted(glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))
    return [os.path.join(root, "README.md")] + docs


def sql_examples(root, schema):
    """The ```sql blocks of the documentation, on `schema` rather than `flexiq` if need be, and
    whether a document has the section SQL_SECTION."""
    has_section, blocks = False, []
    for path in documents(root):
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except FileNotFoundError:
            continue
        has_section = has_section or SQL_SECTION in text
        blocks += re.findall(r"```sql\n(.*?)```", text, re.DOTALL)
    if schema != "flexiq":
        blocks = [re.sub(r"\bflexiq\.", schema + ".", block) for block in blocks]
    return has_section, blocks


def run(args, database, checks):
    with open(VECTORS_PATH, encoding="utf-8") as handle:
        vectors = [v for v in json.load(handle)["vectors"] if v["name"] not in JAVA_REFUSES]

    # Migrates the schema, so that SQL can go first.
    java_peer(args, database, [])

    # SQL first: every vector with its derived key, an idempotency key, the docs' examples.
    sql_ids = {}
    for v in vectors:
        canonical = canonicalize(v["payload"])
        checks.equal(v["name"] + ": canonical", v["canonical"].encode("utf-8"), canonical)
        key = auto_key(v["task"], canonical)
        job_id, outcome, _ = database.enqueue(v["task"], canonical, key)
        expected = "replayed" if key in sql_ids else "accepted"
        checks.equal(v["name"] + ": SQL enqueue", expected, outcome)
        sql_ids.setdefault(key, job_id)
    keyed_task = "webhook.received"
    keyed_payload = '{"event":"invoice.paid","amount":12.5,"currency":"EUR"}'
    sql_keyed, outcome, _ = database.enqueue(keyed_task, canonicalize(keyed_payload),
                                             "evt-sql-first", JAVA_IDEMPOTENCY_RETENTION)
    checks.equal("idempotency key from SQL", "accepted", outcome)
    has_section, examples = sql_examples(args.docs, database.schema)
    if has_section:
        checks.equal("the docs have psql examples", True, len(examples) > 0)
    for n, example in enumerate(examples):
        rows = database.psql(example)
        checks.equal("docs example %d: first run" % n, "accepted", rows[0][1])
        checks.equal("docs example %d: second run" % n, [[rows[0][0], "replayed", ""]],
                     database.psql(example))

    # Java: replays what SQL accepted, and goes first for the rest.
    java_first_task = "report.render"
    java_first_payload = '{"title":"Caf\u00e9 \u2603 \U0001f600","pages":[1,2.0,-0.0,1e21]}'
    requests = [["auto", v["task"], ascii_json(v["payload"])] for v in vectors]
    requests.append(["key", "evt-sql-first", keyed_task, keyed_payload])
    requests.append(["auto", java_first_task, ascii_json(java_first_payload)])
    requests.append(["key", "evt-java-first", keyed_task, keyed_payload])
    lines = java_peer(args, database, requests)
    checks.equal("Java printed one line per request", len(requests), len(lines))
    lines += [("?", "?")] * (len(requests) - len(lines))
    for v, (job_id, outcome) in zip(vectors, lines):
        key = auto_key(v["task"], v["canonical"].encode("utf-8"))
        checks.equal(v["name"] + ": Java replays SQL's job", (sql_ids[key], "REPLAYED"),
                     (job_id, outcome))
    java_keyed_replay, java_first, java_keyed = lines[len(vectors):len(vectors) + 3]
    checks.equal("Java idempotencyKey replays SQL's job", (sql_keyed, "REPLAYED"),
                 java_keyed_replay)
    checks.equal("Java derived key first", "ACCEPTED", java_first[1])
    checks.equal("Java idempotency key first", "ACCEPTED", java_keyed[1])

    # SQL after Java.
    canonical = canonicalize(java_first_payload)
    key = auto_key(java_first_task, canonical)
    for what, job_id, job_key in (("derived", java_first[0], key),
                                  ("idempotency", java_keyed[0], "evt-java-first")):
        checks.equal("Java's %s key preview is ours" % what, [[preview(job_key)]], database.psql(
            "SELECT key_preview FROM %s.jobs WHERE id = %s;\n" % (database.schema, int(job_id))))
    checks.equal("SQL replays Java's derived key", (java_first[0], "replayed", None),
                 database.enqueue(java_first_task, canonical, key))
    other = canonicalize('{"title":"Other","pages":[]}')
    job_id, outcome, accepted = database.enqueue(java_first_task, other, key)
    checks.equal("another payload for the key: a conflict as data", (java_first[0], "conflict"),
                 (job_id, outcome))
    checks.equal("the conflict names the accepted payload",
                 hashlib.sha256(canonical).hexdigest(), (accepted or {}).get("payloadSha256"))
    checks.equal("SQL replays Java's idempotency key", (java_keyed[0], "replayed", None),
                 database.enqueue(keyed_task, canonicalize(keyed_payload), "evt-java-first",
                                  JAVA_IDEMPOTENCY_RETENTION))
    job_id, outcome, accepted = database.enqueue(keyed_task, canonicalize(keyed_payload),
                                                 "evt-java-first")
    checks.equal("without Java's retention the request differs",
                 (java_keyed[0], "conflict", 86400000),
                 (job_id, outcome, (accepted or {}).get("keyRetentionMs")))
    try:
        database.enqueue(keyed_task, b"{}", "evt-typo", {"keyRetention": 1000})
        checks.equal("an unknown option is refused", "SQLSTATE 22023", "no error")
    except SqlError as error:
        checks.equal("an unknown option is refused", "22023", error.sqlstate)
        checks.equal("the refusal names the option", True, "keyRetention" in str(error))

    # Pausing and resuming a queue, as a service in another language would.
    pause = "SELECT %s.pause_queue('reports');\n" % database.schema
    checks.equal("pause_queue from SQL", [["t"]], database.psql(pause))
    checks.equal("pause_queue again changes nothing", [["f"]], database.psql(pause))
    checks.equal("the pause is listed", [["reports"]],
                 database.psql("SELECT queue FROM %s.paused_queues;\n" % database.schema))
    resume = "SELECT %s.resume_queue('reports');\n" % database.schema
    checks.equal("resume_queue from SQL", [["t"]], database.psql(resume))
    checks.equal("resume_queue again changes nothing", [["f"]], database.psql(resume))
    try:
        database.psql("SELECT %s.pause_queue('');\n" % database.schema)
        checks.equal("an empty queue name is refused", "SQLSTATE 22023", "no error")
    except SqlError as error:
        checks.equal("an empty queue name is refused", "22023", error.sqlstate)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classpath", required=True,
                        help="the flexiq project's test runtime classpath")
    parser.add_argument("--java", default="java")
    parser.add_argument("--docs", default=ROOT,
                        help="the directory holding README.md and docs/ (default: the repository)")
    args = parser.parse_args(argv[1:])

    # Gradle ends a cancelled build's processes with SIGTERM: clean up as on any failure.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    checks = Checks()
    shared = os.environ.get("FLEXIQ_TEST_DATABASE_URL")
    cluster = None
    started = time.monotonic()
    try:
        if shared:
            database = Database(shared, "flexiq_sqlp_%d" % os.getpid())
        else:
            cluster = Cluster()
            cluster.start()
            database = Database(cluster.url, "flexiq")
        try:
            run(args, database, checks)
        finally:
            if shared:
                database.psql("DROP SCHEMA IF EXISTS %s CASCADE;\n" % database.schema)
    except Exception as error:  # reported as a failure, after the cleanup
        checks.failed += 1
        print("FAIL %s: %s" % (type(error).__name__, error))
    finally:
        if cluster is not None:
            cluster.remove()
    print("%d passed, %d failed (%.1f s)" % (checks.passed, checks.failed,
                                             time.monotonic() - started))
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
