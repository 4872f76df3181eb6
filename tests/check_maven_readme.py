#!/usr/bin/env python3
"""Builds a fresh Maven project from the README's Maven block, as it stands, with the machine's
Maven (Debian's 3.8.7 here), against the artifacts that `gradle publishToBuildRepo` wrote to
build/repo: its main code compiles against io.flexiq:flexiq, and its test enqueues through
io.flexiq:flexiq-test's PostgreSQL.

The block's one placeholder, file:///path/to/flexiq/build/repo, becomes this checkout's
build/repo; nothing else is changed. Maven keeps what it downloads from Maven Central (its
plugins, Jackson, JUnit, the PostgreSQL binaries of flexiq-test: about 100 MB, once) in
build/maven-readme/m2, not in ~/.m2; later runs find them there and download nothing. FlexiQ's
own artifacts are removed from there before each run, so that Maven takes those of build/repo
through the block's repository rather than a copy of an earlier build. (Maven's --offline would
refuse that file:// repository too, so the run is never offline.)
"""

import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PLACEHOLDER = "file:///path/to/flexiq/build/repo"
WORK = ROOT / "build" / "maven-readme"

MAIN = """package com.example.checkout;

import io.flexiq.Task;

/** Application code: a record (Java 16 and later) as a payload. */
public final class Checkout {
    private Checkout() {}

    /** An order to charge. */
    public record Order(long customerId, long amountCents) {}

    /** Charges an order once per payload. */
    public static final Task<Order> CHARGE_CUSTOMER = Task.of("charge_customer", Order.class).idempotent(true);
}
"""

TEST = """package com.example.checkout;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flexiq.FlexiQ;
import io.flexiq.test.FlexiQTest;
import org.junit.jupiter.api.Test;

@FlexiQTest
class CheckoutTest {
    @Test
    void aDoubleClickEnqueuesOneCharge(FlexiQ queue) {
        Checkout.Order order = new Checkout.Order(42, 1000);
        assertEquals(queue.enqueue(Checkout.CHARGE_CUSTOMER, order), queue.enqueue(Checkout.CHARGE_CUSTOMER, order));
    }
}
"""


def readme_pom(repo: pathlib.Path) -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```xml\n(.*?)```", readme, re.DOTALL)
    if len(blocks) != 1:
        sys.exit(f"check_maven_readme: README.md has {len(blocks)} ```xml blocks; expected the one Maven block")
    pom = blocks[0]
    if pom.count(PLACEHOLDER) != 1:
        sys.exit(f"check_maven_readme: the README's Maven block does not name the repository as {PLACEHOLDER}")
    return pom.replace(PLACEHOLDER, repo.as_uri())


def main() -> int:
    repo = ROOT / "build" / "repo"
    if not (repo / "io" / "flexiq" / "flexiq-test" / "0.1.0").is_dir():
        sys.exit("check_maven_readme: build/repo holds no FlexiQ artifacts: run `gradle publishToBuildRepo` first")
    mvn = shutil.which("mvn")
    if mvn is None:
        sys.exit("check_maven_readme: Maven is missing (apt-get install maven)")

    project = WORK / "project"
    local_repo = WORK / "m2"
    shutil.rmtree(project, ignore_errors=True)
    shutil.rmtree(local_repo / "io" / "flexiq", ignore_errors=True)
    (project / "src/main/java/com/example/checkout").mkdir(parents=True)
    (project / "src/test/java/com/example/checkout").mkdir(parents=True)
    (project / "pom.xml").write_text(readme_pom(repo), encoding="utf-8")
    (project / "src/main/java/com/example/checkout/Checkout.java").write_text(MAIN, encoding="utf-8")
    (project / "src/test/java/com/example/checkout/CheckoutTest.java").write_text(TEST, encoding="utf-8")

    # Maven colours its version line even in batch mode.
    version = re.sub(r"\x1b\[[0-9;]*m", "", subprocess.run([mvn, "--version"], capture_output=True, text=True).stdout)
    command = [mvn, "--batch-mode", f"-Dmaven.repo.local={local_repo}", "test"]
    run = subprocess.run(command, cwd=project, capture_output=True, text=True)
    output = run.stdout + run.stderr
    (WORK / "mvn.log").write_text(output, encoding="utf-8")
    passed = re.search(r"Tests run: (\d+), Failures: 0, Errors: 0, Skipped: 0\s*$", output, re.MULTILINE)
    if run.returncode != 0 or passed is None or passed.group(1) == "0":
        print("\n".join(output.splitlines()[-60:]), file=sys.stderr)
        print(f"check_maven_readme: `mvn test` on the README's Maven block failed (exit {run.returncode}); "
              f"the whole log is in {WORK / 'mvn.log'}", file=sys.stderr)
        return 1
    print(f"check_maven_readme: the README's Maven block built and ran {passed.group(1)} test(s) with "
          f"{version.splitlines()[0] if version else 'Maven'} against build/repo")
    return 0


if __name__ == "__main__":
    sys.exit(main())
