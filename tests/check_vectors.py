#!/usr/bin/env python3
"""Independent check of FlexiQ's auto-key reference vectors (standard library only).

For every vector in tests/vectors/auto_keys.json this script parses the producer's `payload`
text, re-serializes it with its own RFC 8785 (JSON Canonicalization Scheme) implementation,
compares the result byte for byte with `canonical`, then recomputes
"auto:" + hex(sha256(utf8(task) || 0x00 || canonical))[:32] and compares it with `key`.
Every entry of `invalid` must be refused, for the `reason` it names: FlexiQ refuses what
canonical JSON cannot hold exactly rather than change it (integers beyond 2^53, numbers a
double does not hold to the digits given, NaN, nesting deeper than 128, unpaired surrogates,
repeated member names).
It shares no code with the Rust core, so agreement means two implementations agree.

Usage: python3 tests/check_vectors.py [path/to/auto_keys.json]

Prints one line per failure and ends with "N passed, M failed". Exits non-zero if anything
failed or if the file holds fewer than MIN_VECTORS vectors.
"""

import decimal
import hashlib
import json
import math
import os
import re
import struct
import sys

MIN_VECTORS = 30
MIN_INVALID = 10
MAX_DEPTH = 128
MAX_EXACT_INTEGER = 2 ** 53
KEY_PATTERN = re.compile(r"auto:[0-9a-f]{32}\Z")
DEFAULT_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vectors", "auto_keys.json")


class CanonicalizationError(ValueError):
    """The payload is not JSON that RFC 8785 can canonicalize; `reason` is the vectors' word."""

    def __init__(self, message, reason="not JSON"):
        super().__init__(message)
        self.reason = reason


# --- numbers: ECMAScript Number.prototype.toString (RFC 8785 section 3.2.2.3) -------------------

def format_number(value):
    """Formats a double the way ECMAScript's Number.prototype.toString does."""
    if not isinstance(value, float):
        raise CanonicalizationError("not a double: %r" % (value,))
    if math.isnan(value) or math.isinf(value):
        raise CanonicalizationError("NaN and infinities have no JSON form")
    if value == 0.0:
        return "0"  # covers -0 as well
    if value < 0:
        return "-" + format_number(-value)

    # repr() gives the shortest digit string that round-trips (closest to the value when
    # several are equally short), which is what ECMAScript asks for as k, s and n.
    text = repr(value)
    mantissa, _, exponent = text.partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    digits = int_part + frac_part
    # Decimal point position relative to the start of `digits`.
    point = len(int_part) + (int(exponent) if exponent else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k = len(digits)  # number of significant digits
    n = point        # value = 0.digits * 10^n

    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    sign = "+" if e >= 0 else "-"
    if k == 1:
        return "%se%s%d" % (digits, sign, abs(e))
    return "%s.%se%s%d" % (digits[0], digits[1:], sign, abs(e))


# --- strings (RFC 8785 section 3.2.2.2) -----------------------------------------------------------

_SHORT_ESCAPES = {
    0x08: "\\b",
    0x09: "\\t",
    0x0A: "\\n",
    0x0C: "\\f",
    0x0D: "\\r",
    0x22: '\\"',
    0x5C: "\\\\",
}


def format_string(value):
    out = ['"']
    for ch in value:
        cp = ord(ch)
        if 0xD800 <= cp <= 0xDFFF:
            raise CanonicalizationError("lone surrogate U+%04X cannot be written as UTF-8" % cp,
                                        "unpaired surrogate")
        if cp in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[cp])
        elif cp < 0x20:
            out.append("\\u%04x" % cp)
        else:
            out.append(ch)  # everything else, U+007F and non-ASCII included, is written raw
    out.append('"')
    return "".join(out)


def _utf16_units(key):
    # Big-endian UTF-16 bytes compare exactly like sequences of UTF-16 code units.
    return key.encode("utf-16-be", "surrogatepass")


# --- values ---------------------------------------------------------------------------------------

def serialize(value, depth=0):
    if isinstance(value, (list, dict)) and depth >= MAX_DEPTH:
        raise CanonicalizationError("nested deeper than %d levels" % MAX_DEPTH, "nesting")
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float):
        return format_number(value)
    if isinstance(value, str):
        return format_string(value)
    if isinstance(value, list):
        return "[" + ",".join(serialize(item, depth + 1) for item in value) + "]"
    if isinstance(value, dict):
        members = sorted(value.items(), key=lambda item: _utf16_units(item[0]))
        return "{" + ",".join(format_string(k) + ":" + serialize(v, depth + 1) for k, v in members) + "}"
    raise CanonicalizationError("unexpected value %r" % (value,))


def _parse_int(text):
    # Python's int is exact, so the limit is checked on the integer itself.
    if abs(int(text)) > MAX_EXACT_INTEGER:
        raise CanonicalizationError("integer %s is beyond 2^53" % text, "integer beyond 2^53")
    return float(text)


def _parse_float(text):
    # Decimal text straight to the nearest double (float() rounds correctly).
    number = float(text)
    if math.isinf(number):
        raise CanonicalizationError("number %s does not fit in a double" % text, "inexact number")
    # Doubles from 2^53 up to 10^21 are written as integers beyond 2^53.
    if MAX_EXACT_INTEGER < abs(number) < 1e21:
        raise CanonicalizationError("number %s is an integer beyond 2^53" % text, "integer beyond 2^53")
    # The canonical text must be the same number as the one given, to the last digit.
    if decimal.Decimal(text) != decimal.Decimal(format_number(number)):
        raise CanonicalizationError("number %s would become %s" % (text, format_number(number)),
                                    "inexact number")
    return number


def _reject_constant(name):
    raise CanonicalizationError("%s is not JSON" % name, "not JSON")


def _object_without_duplicates(pairs):
    result = {}
    for key, value in pairs:
        if key in result:
            # I-JSON (which RFC 8785 builds on) forbids duplicate member names.
            raise CanonicalizationError("duplicate member name %r" % key, "repeated member name")
        result[key] = value
    return result


def canonicalize(text):
    """Returns the RFC 8785 canonical form of the JSON text `text`, as UTF-8 bytes."""
    try:
        value = json.loads(
            text,
            parse_int=_parse_int,
            parse_float=_parse_float,
            parse_constant=_reject_constant,
            object_pairs_hook=_object_without_duplicates,
        )
    except json.JSONDecodeError as exc:
        raise CanonicalizationError("not JSON: %s" % exc) from exc
    return serialize(value).encode("utf-8")


def auto_key(task, canonical_bytes):
    digest = hashlib.sha256(task.encode("utf-8") + b"\x00" + canonical_bytes).hexdigest()
    return "auto:" + digest[:32]


# --- self-checks of the number formatter ------------------------------------------------------------

def _bits(hex_bits):
    return struct.unpack(">d", bytes.fromhex(hex_bits))[0]


# Known ECMAScript outputs, including the IEEE 754 table of RFC 8785 appendix B.
NUMBER_SELF_CHECKS = [
    (1e21, "1e+21"),
    (1e20, "100000000000000000000"),
    (1e-7, "1e-7"),
    (0.000001, "0.000001"),
    (123e-20, "1.23e-18"),
    (float(2 ** 53 + 1), "9007199254740992"),
    (1.0, "1"),
    (-0.0, "0"),
    (0.1, "0.1"),
    (-1.5, "-1.5"),
    (123456789012345680000.0, "123456789012345680000"),
    (float(12345678901234567890), "12345678901234567000"),
    (_bits("0000000000000000"), "0"),
    (_bits("8000000000000000"), "0"),
    (_bits("0000000000000001"), "5e-324"),
    (_bits("8000000000000001"), "-5e-324"),
    (_bits("7fefffffffffffff"), "1.7976931348623157e+308"),
    (_bits("ffefffffffffffff"), "-1.7976931348623157e+308"),
    (_bits("4340000000000000"), "9007199254740992"),
    (_bits("c340000000000000"), "-9007199254740992"),
    (_bits("4430000000000000"), "295147905179352830000"),
    (_bits("44b52d02c7e14af5"), "9.999999999999997e+22"),
    (_bits("44b52d02c7e14af6"), "1e+23"),
    (_bits("44b52d02c7e14af7"), "1.0000000000000001e+23"),
    (_bits("444b1ae4d6e2ef4e"), "999999999999999700000"),
    (_bits("444b1ae4d6e2ef4f"), "999999999999999900000"),
    (_bits("444b1ae4d6e2ef50"), "1e+21"),
    (_bits("3eb0c6f7a0b5ed8c"), "9.999999999999997e-7"),
    (_bits("3eb0c6f7a0b5ed8d"), "0.000001"),
    (_bits("41b3de4355555553"), "333333333.3333332"),
    (_bits("41b3de4355555554"), "333333333.33333325"),
    (_bits("41b3de4355555555"), "333333333.3333333"),
    (_bits("41b3de4355555556"), "333333333.3333334"),
    (_bits("41b3de4355555557"), "333333333.33333343"),
    (_bits("becbf647612f3696"), "-0.0000033333333333333333"),
    (_bits("43143ff3c1cb0959"), "1424953923781206.2"),
]


def run_self_checks():
    failures = []
    passed = 0
    for value, expected in NUMBER_SELF_CHECKS:
        got = format_number(value)
        if got == expected:
            passed += 1
        else:
            failures.append("self-check %r: expected %s, got %s" % (value, expected, got))
    for bad in (float("nan"), float("inf"), float("-inf")):
        try:
            format_number(bad)
        except CanonicalizationError:
            passed += 1
        else:
            failures.append("self-check %r: should have been refused" % bad)
    return passed, failures


# --- vectors --------------------------------------------------------------------------------------------

def check_vector(vector):
    """Returns a list of problems with one vector (empty when it checks out)."""
    for field in ("name", "task", "payload", "canonical", "key"):
        if not isinstance(vector.get(field), str):
            return ["field %r is missing or not a string" % field]
    problems = []
    try:
        canonical = canonicalize(vector["payload"])
    except CanonicalizationError as exc:
        return ["payload refused: %s" % exc]
    expected = vector["canonical"].encode("utf-8")
    if canonical != expected:
        problems.append("canonical differs: expected %s, got %s"
                        % (_preview(expected), _preview(canonical)))
    if canonicalize(vector["canonical"]) != expected:
        problems.append("canonical form is not a fixed point of canonicalization")
    if not KEY_PATTERN.match(vector["key"]):
        problems.append("key %r is not auto: followed by 32 lowercase hex characters" % vector["key"])
    key = auto_key(vector["task"], expected)
    if key != vector["key"]:
        problems.append("key differs: expected %s, got %s" % (vector["key"], key))
    return problems


INVALID_REASONS = {"integer beyond 2^53", "inexact number", "not JSON", "nesting",
                   "unpaired surrogate", "repeated member name"}


def check_invalid(vector):
    """Returns a list of problems with one refusal vector (empty when it checks out)."""
    for field in ("name", "payload", "path", "reason"):
        if not isinstance(vector.get(field), str):
            return ["field %r is missing or not a string" % field]
    if vector["reason"] not in INVALID_REASONS:
        return ["reason %r is not one of %s" % (vector["reason"], sorted(INVALID_REASONS))]
    if not vector["path"].startswith("$"):
        return ["path %r does not start at $" % vector["path"]]
    try:
        canonical = canonicalize(vector["payload"])
    except CanonicalizationError as exc:
        if exc.reason != vector["reason"]:
            return ["refused for %r (%s), expected %r" % (exc.reason, exc, vector["reason"])]
        return []
    return ["accepted as %s, expected a refusal" % _preview(canonical)]


def _preview(data, limit=120):
    text = data.decode("utf-8", "backslashreplace")
    if len(text) > limit:
        text = text[:limit] + "...(%d chars)" % len(text)
    return ascii(text)


def main(argv):
    path = argv[1] if len(argv) > 1 else DEFAULT_PATH
    passed, failures = run_self_checks()
    failed = len(failures)
    for line in failures:
        print("FAIL " + line)

    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
        vectors = document["vectors"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print("FAIL cannot read vectors from %s: %s" % (path, exc))
        print("%d passed, %d failed" % (passed, failed + 1))
        return 1

    seen = set()
    for index, vector in enumerate(vectors):
        name = vector.get("name", "#%d" % index) if isinstance(vector, dict) else "#%d" % index
        problems = check_vector(vector) if isinstance(vector, dict) else ["not an object"]
        if name in seen:
            problems.append("duplicate vector name")
        seen.add(name)
        if problems:
            failed += 1
            for problem in problems:
                print("FAIL %s: %s" % (name, problem))
        else:
            passed += 1

    if len(vectors) < MIN_VECTORS:
        print("FAIL only %d vectors in %s; at least %d are required" % (len(vectors), path, MIN_VECTORS))
        failed += 1

    invalid = document.get("invalid", [])
    for index, vector in enumerate(invalid):
        name = vector.get("name", "#%d" % index) if isinstance(vector, dict) else "#%d" % index
        problems = check_invalid(vector) if isinstance(vector, dict) else ["not an object"]
        if name in seen:
            problems.append("duplicate vector name")
        seen.add(name)
        if problems:
            failed += 1
            for problem in problems:
                print("FAIL %s: %s" % (name, problem))
        else:
            passed += 1
    if len(invalid) < MIN_INVALID:
        print("FAIL only %d invalid vectors in %s; at least %d are required" % (len(invalid), path, MIN_INVALID))
        failed += 1

    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
