#!/usr/bin/env python3
"""Tests of check_native.py: it passes each built library for its own platform, and fails it for
every other platform, when JNI_OnLoad is not exported, when it links something a stock machine
lacks, when it is cut short, and (signed Mach-O) when the code no longer matches its signature.

Usage: python3 tests/test_check_native.py <platform>=<library> ...
The build passes every library it built: this machine's for `gradle check`, all five when it
publishes. Prints one line per failure and ends with "N passed, M failed"; exits 1 on a failure.
"""

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_native  # noqa: E402  (found beside this file)

results = {"passed": 0, "failed": 0}


def expect(name, condition, detail):
    if condition:
        results["passed"] += 1
    else:
        results["failed"] += 1
        print("FAILED %s: %s" % (name, detail))


def problems_of(platform, data):
    with tempfile.NamedTemporaryFile(suffix=".lib") as f:
        f.write(data)
        f.flush()
        return check_native.check(platform, f.name)[0]


def mentions(found, text):
    return any(text in problem for problem in found)


def test_built_library(platform, path):
    with open(path, "rb") as f:
        data = f.read()
    fmt, arch = check_native.PLATFORMS[platform]
    name = "%s (%s)" % (platform, path)

    found = check_native.check(platform, path)[0]
    expect(name + " passes for its platform", found == [], found)

    for other, (other_fmt, other_arch) in check_native.PLATFORMS.items():
        if other == platform:
            continue
        found = problems_of(other, data)
        wanted = ("is built for %s, not %s" % (arch, other_arch)) if other_fmt == fmt \
            else ("is %s, not %s" % (fmt, other_fmt))
        expect("%s fails as %s" % (name, other), mentions(found, wanted), found)

    renamed = data.replace(check_native.EXPORT.encode() + b"\0", b"JNI_OnLoaX\0")
    expect(name + " fails without " + check_native.EXPORT, renamed != data
           and mentions(problems_of(platform, renamed), "does not export JNI_OnLoad"), "still passes")

    first = check_native.read(data).imports[0]
    foreign = "x" * len(first)
    relinked = data.replace(first.encode() + b"\0", foreign.encode() + b"\0")
    expect(name + " fails linking " + foreign, mentions(problems_of(platform, relinked), "links " + foreign),
           problems_of(platform, relinked))

    found = problems_of(platform, data[:200])
    expect(name + " cut short fails", mentions(found, "cannot be read as a library"), found)

    if check_native.read(data).signature == "valid":  # Zig's linker signs for Apple silicon only
        altered = bytearray(data)
        altered[len(data) // 2] ^= 0xFF
        found = problems_of(platform, bytes(altered))
        expect(name + " fails once its code changed after signing",
               mentions(found, "does not match its hash: the file changed after signing"), found)


def test_rules():
    """The rules on what a library links and carries, beyond what the built files show."""
    def library(fmt, arch, imports, signature=None, oldest_os=None):
        return check_native.Library(fmt, "DLL" if fmt == "PE" else "shared library", arch,
                                    {check_native.EXPORT}, imports, signature, oldest_os)

    windows = library("PE", "x86_64", ["KERNEL32.dll", "api-ms-win-crt-runtime-l1-1-0.dll", "WS2_32.dll"])
    expect("Windows system DLLs in any case pass", check_native.problems("windows-x86_64", windows) == [],
           check_native.problems("windows-x86_64", windows))
    for mingw in ("libgcc_s_seh-1.dll", "libwinpthread-1.dll"):
        found = check_native.problems("windows-x86_64", library("PE", "x86_64", ["KERNEL32.dll", mingw]))
        expect("MinGW's " + mingw + " fails", found == ["links %s, which a stock windows machine lacks" % mingw],
               found)
    system = ["/usr/lib/libSystem.B.dylib"]
    brewed = check_native.problems("macos-x86_64", library("Mach-O", "x86_64", system + ["/opt/homebrew/lib/libpq.5.dylib"],
                                                           oldest_os=(10, 12)))
    expect("a Homebrew library fails", brewed == ["links /opt/homebrew/lib/libpq.5.dylib, which a stock macos machine lacks"],
           brewed)
    unsigned = check_native.problems("macos-aarch64", library("Mach-O", "arm64", system, oldest_os=(11, 0)))
    expect("unsigned Apple silicon code fails", unsigned == ["has no code signature: Apple silicon refuses to map unsigned code"],
           unsigned)
    intel = check_native.problems("macos-x86_64", library("Mach-O", "x86_64", system, oldest_os=(10, 12)))
    expect("unsigned Intel macOS code passes", intel == [], intel)
    newer = check_native.problems("macos-aarch64", library("Mach-O", "arm64", system, "valid", (14, 0)))
    expect("a library for a newer macOS fails", newer == ["needs macOS 14.0, newer than 11.0"], newer)
    unnamed = check_native.problems("macos-x86_64", library("Mach-O", "x86_64", system))
    expect("a library naming no macOS version fails", unnamed == ["names no oldest macOS version (no LC_BUILD_VERSION)"],
           unnamed)
    executable = check_native.Library("PE", "executable", "x86_64", {check_native.EXPORT}, ["KERNEL32.dll"])
    found = check_native.problems("windows-x86_64", executable)
    expect("a PE executable fails", found == ["is a PE executable, not a DLL"], found)


def main(argv):
    pairs = [arg.split("=", 1) for arg in argv[1:]]
    if not pairs or any(len(p) != 2 or p[0] not in check_native.PLATFORMS for p in pairs):
        sys.stderr.write("usage: test_check_native.py <platform>=<library> ...\n")
        return 2
    test_rules()
    for platform, path in pairs:
        test_built_library(platform, path)
    print("%d passed, %d failed" % (results["passed"], results["failed"]))
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
