#!/usr/bin/env python3
"""Checks a built FlexiQ JNI library against the platform whose folder of the jar it goes into.

For each platform it reads the file's own headers (ELF, Mach-O or PE; standard library only, so
no platform's binutils are needed) and fails when:
- the format, the file type (a shared library, a DLL) or the CPU is not the platform's;
- `JNI_OnLoad` is not exported: the JVM calls it, and it registers every native method;
- the library links a library that a stock machine of that platform lacks (ALLOWED below);
- on macOS, the library asks for a newer macOS than 11, or its code signature is missing or
  does not match the code: Apple silicon refuses to map unsigned or altered code, and the
  linker's ad-hoc signature is all it needs.

Usage: python3 tests/check_native.py <platform> <library>
platform: one of PLATFORMS' keys, e.g. windows-x86_64. Prints what it found, or every problem
and exits 1.
"""

import hashlib
import struct
import sys

# Platform folder of the jar: the file format and the CPU as each format names it.
PLATFORMS = {
    "linux-x86_64": ("ELF", "x86_64"),
    "linux-aarch64": ("ELF", "aarch64"),
    "macos-aarch64": ("Mach-O", "arm64"),
    "macos-x86_64": ("Mach-O", "x86_64"),
    "windows-x86_64": ("PE", "x86_64"),
}
# The oldest macOS each must load on: the build asks for 11 (Big Sur) for both, the oldest that
# runs on Apple silicon.
OLDEST_MACOS = {"macos-aarch64": (11, 0), "macos-x86_64": (11, 0)}

# What each platform may link: what the library needs and every installation of the platform has.
ALLOWED = {
    # glibc's own libraries (which symbol versions they may be asked for is check_glibc.sh's
    # business), and GCC's unwinder, which a plain Cargo build links and glibc itself needs.
    "ELF": {
        "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2",
        "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1", "libgcc_s.so.1",
    },
    # libSystem: the C library, threads and dyld. libiconv and libcharset, named by Rust's
    # standard library. CoreFoundation and SystemConfiguration, named by the user-name lookup
    # that sqlx uses (the whoami crate). All are part of every macOS.
    "Mach-O": {
        "/usr/lib/libSystem.B.dylib", "/usr/lib/libiconv.2.dylib", "/usr/lib/libcharset.1.dylib",
        "/System/Library/Frameworks/CoreFoundation.framework/Versions/A/CoreFoundation",
        "/System/Library/Frameworks/SystemConfiguration.framework/Versions/A/SystemConfiguration",
    },
    # Windows' own DLLs, compared without case as Windows does: kernel32 and ntdll (threads,
    # files, the native API), ws2_32 (sockets), bcrypt and bcryptprimitives (random numbers),
    # advapi32 and secur32 (the user name), shell32, combase and userenv (the profile folder, for
    # ~/.pgpass), the API set of WaitOnAddress (Windows 8 and later), and below, the API sets of
    # the universal C runtime, part of Windows 10 and later. Never MinGW's DLLs
    # (libgcc_s_seh-1, libwinpthread-1).
    "PE": {
        "kernel32.dll", "ntdll.dll", "ws2_32.dll", "bcrypt.dll", "bcryptprimitives.dll", "advapi32.dll",
        "secur32.dll", "shell32.dll", "combase.dll", "userenv.dll", "api-ms-win-core-synch-l1-2-0.dll",
    },
}
# api-ms-win-crt-runtime-l1-1-0.dll and its siblings.
ALLOWED_PE_PREFIX = "api-ms-win-crt-"

EXPORT = "JNI_OnLoad"


class FormatError(ValueError):
    """The file is not what its header claims, or is cut short."""


class Library:
    """What the check needs of one file: format, kind, CPU, exports, linked libraries."""

    def __init__(self, fmt, kind, arch, exports, imports, signature=None, oldest_os=None):
        self.format = fmt
        self.kind = kind
        self.arch = arch
        self.exports = exports
        self.imports = imports
        # Mach-O only: None (unsigned), or a text saying what is wrong, or "valid".
        self.signature = signature
        # Mach-O only: the oldest macOS it loads on, as (major, minor), if it names one.
        self.oldest_os = oldest_os


def unpack(fmt, data, offset):
    size = struct.calcsize(fmt)
    if offset < 0 or offset + size > len(data):
        raise FormatError("cut short: %d bytes wanted at offset %d of %d" % (size, offset, len(data)))
    return struct.unpack_from(fmt, data, offset)


def c_string(data, offset):
    if offset < 0 or offset >= len(data):
        raise FormatError("a name at offset %d lies outside the file" % offset)
    end = data.find(b"\0", offset)
    if end < 0:
        raise FormatError("the name at offset %d has no end" % offset)
    return data[offset:end].decode("utf-8", "replace")


def read(data):
    if data[:4] == b"\x7fELF":
        return read_elf(data)
    if data[:4] in (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe"):
        return read_macho(data)
    if data[:2] == b"MZ":
        return read_pe(data)
    raise FormatError("neither ELF, Mach-O nor PE (starts with %s)" % data[:4].hex())


# ELF: https://refspecs.linuxfoundation.org/elf/gabi4+/contents.html
ELF_MACHINES = {62: "x86_64", 183: "aarch64", 3: "x86", 40: "arm"}
ELF_TYPES = {1: "relocatable file", 2: "executable", 3: "shared library", 4: "core dump"}


def read_elf(data):
    elf_class, encoding = data[4], data[5]
    if elf_class != 2 or encoding != 1:
        raise FormatError("ELF of class %d, encoding %d: not 64-bit little-endian" % (elf_class, encoding))
    e_type, e_machine = unpack("<HH", data, 16)
    e_shoff, = unpack("<Q", data, 40)
    e_shentsize, e_shnum = unpack("<HH", data, 58)
    sections = [unpack("<IIQQQQIIQQ", data, e_shoff + i * e_shentsize) for i in range(e_shnum)]
    exports, imports = set(), []
    for _, sh_type, _, _, offset, size, link, _, _, entsize in sections:
        if sh_type == 11:  # SHT_DYNSYM
            strings = sections[link][4]
            for i in range(1, size // entsize):
                st_name, st_info, st_other, st_shndx = unpack("<IBBH", data, offset + i * entsize)
                defined = st_shndx != 0
                visible = (st_info >> 4) in (1, 2) and (st_other & 3) == 0  # global or weak, default
                if defined and visible:
                    exports.add(c_string(data, strings + st_name))
        elif sh_type == 6:  # SHT_DYNAMIC
            strings = sections[link][4]
            for i in range(size // 16):
                tag, value = unpack("<qQ", data, offset + i * 16)
                if tag == 1:  # DT_NEEDED
                    imports.append(c_string(data, strings + value))
    return Library("ELF", ELF_TYPES.get(e_type, "ELF type %d" % e_type),
                   ELF_MACHINES.get(e_machine, "machine %d" % e_machine), exports, imports)


# Mach-O: <mach-o/loader.h>, <mach-o/nlist.h>; code signatures: <kern/cs_blobs.h> (big-endian).
MACHO_CPUS = {0x0100000C: "arm64", 0x01000007: "x86_64", 7: "i386", 12: "arm"}
MACHO_TYPES = {1: "object file", 2: "executable", 6: "shared library", 8: "bundle"}
LC_SYMTAB, LC_DYSYMTAB, LC_CODE_SIGNATURE = 0x2, 0xB, 0x1D
LC_VERSION_MIN_MACOSX, LC_BUILD_VERSION = 0x24, 0x32
LC_LINKED_DYLIBS = {0xC, 0x20, 0x80000018, 0x8000001F, 0x80000023}  # load, lazy, weak, re-export, upward
N_PEXT = 0x10
CSMAGIC_EMBEDDED_SIGNATURE, CSMAGIC_CODEDIRECTORY = 0xFADE0CC0, 0xFADE0C02
CS_HASHES = {1: hashlib.sha1, 2: hashlib.sha256}


def read_macho(data):
    magic, = unpack("<I", data, 0)
    if magic != 0xFEEDFACF:
        raise FormatError("a 32-bit or universal Mach-O (magic %08x); one 64-bit architecture is expected" % magic)
    cputype, _, filetype, ncmds, _, _ = unpack("<iIIIII", data, 4)
    exports, imports, signature, oldest = set(), [], None, None
    symtab = dysymtab = None
    offset = 32
    for _ in range(ncmds):
        cmd, cmdsize = unpack("<II", data, offset)
        if cmdsize < 8:
            raise FormatError("load command %x at offset %d has size %d" % (cmd, offset, cmdsize))
        if cmd in LC_LINKED_DYLIBS:
            name_offset, = unpack("<I", data, offset + 8)
            imports.append(c_string(data[:offset + cmdsize], offset + name_offset))
        elif cmd == LC_SYMTAB:
            symtab = unpack("<IIII", data, offset + 8)
        elif cmd == LC_DYSYMTAB:
            dysymtab = unpack("<IIIIII", data, offset + 8)
        elif cmd == LC_CODE_SIGNATURE:
            signature = check_code_signature(data, *unpack("<II", data, offset + 8))
        elif cmd in (LC_VERSION_MIN_MACOSX, LC_BUILD_VERSION):
            # xxxx.yy.zz in nibbles; LC_BUILD_VERSION puts its platform first.
            version, = unpack("<I", data, offset + (12 if cmd == LC_BUILD_VERSION else 8))
            oldest = (version >> 16, (version >> 8) & 0xFF)
        offset += cmdsize
    if symtab is not None and dysymtab is not None:
        symoff, _, stroff, _ = symtab
        iextdefsym, nextdefsym = dysymtab[2], dysymtab[3]
        for i in range(iextdefsym, iextdefsym + nextdefsym):
            n_strx, n_type = unpack("<IB", data, symoff + i * 16)
            if not n_type & N_PEXT:
                name = c_string(data, stroff + n_strx)
                exports.add(name[1:] if name.startswith("_") else name)  # C names carry a leading _
    return Library("Mach-O", MACHO_TYPES.get(filetype, "Mach-O type %d" % filetype),
                   MACHO_CPUS.get(cputype, "CPU type %x" % cputype), exports, imports, signature, oldest)


def check_code_signature(data, dataoff, datasize):
    """Recomputes every page hash of the code directory; returns "valid" or what is wrong."""
    magic, _, count = unpack(">III", data, dataoff)
    if magic != CSMAGIC_EMBEDDED_SIGNATURE:
        return "no embedded signature at offset %d (magic %08x)" % (dataoff, magic)
    for i in range(count):
        _, blob = unpack(">II", data, dataoff + 12 + i * 8)
        start = dataoff + blob
        if unpack(">I", data, start)[0] != CSMAGIC_CODEDIRECTORY:
            continue
        _, _, _, _, hash_offset, _, _, code_slots, code_limit, hash_size, hash_type, _, page_log2 = \
            unpack(">IIIIIIIIIBBBB", data, start)
        if hash_type not in CS_HASHES:
            return "code directory hash type %d is unknown" % hash_type
        page = 1 << page_log2 if page_log2 else code_limit
        if code_slots != (code_limit + page - 1) // page or code_limit > dataoff + datasize:
            return "code directory covers %d pages of %d bytes, not the %d bytes of code" % (
                code_slots, page, code_limit)
        for slot in range(code_slots):
            chunk = data[slot * page:min((slot + 1) * page, code_limit)]
            expected = data[start + hash_offset + slot * hash_size:start + hash_offset + (slot + 1) * hash_size]
            if CS_HASHES[hash_type](chunk).digest()[:hash_size] != expected:
                return "page %d (bytes %d to %d) does not match its hash: the file changed after signing" % (
                    slot, slot * page, slot * page + len(chunk))
        return "valid"
    return "the signature holds no code directory"


# PE: https://learn.microsoft.com/windows/win32/debug/pe-format
PE_MACHINES = {0x8664: "x86_64", 0xAA64: "aarch64", 0x14C: "x86"}
IMAGE_FILE_DLL = 0x2000


def read_pe(data):
    pe, = unpack("<I", data, 0x3C)
    if data[pe:pe + 4] != b"PE\0\0":
        raise FormatError("an MZ header without a PE signature")
    machine, nsections, _, _, _, optional_size, characteristics = unpack("<HHIIIHH", data, pe + 4)
    optional = pe + 24
    magic, = unpack("<H", data, optional)
    if magic != 0x20B:
        raise FormatError("optional header magic %x: not PE32+ (64-bit)" % magic)
    ndirs, = unpack("<I", data, optional + 108)
    dirs = [unpack("<II", data, optional + 112 + 8 * i) for i in range(min(ndirs, 16))]
    sections = [unpack("<IIII", data, optional + optional_size + 40 * i + 8) for i in range(nsections)]

    def at(rva):
        for virtual_size, address, raw_size, raw_offset in sections:
            if address <= rva < address + max(virtual_size, raw_size):
                return raw_offset + rva - address
        raise FormatError("address %x lies in no section" % rva)

    exports, imports = set(), []
    if len(dirs) > 0 and dirs[0][0]:
        directory = at(dirs[0][0])
        names, names_rva = unpack("<I", data, directory + 24)[0], unpack("<I", data, directory + 32)[0]
        for i in range(names):
            exports.add(c_string(data, at(unpack("<I", data, at(names_rva) + 4 * i)[0])))
    for index, size in ((1, 20), (13, 32)):  # imports, delay-load imports
        if len(dirs) > index and dirs[index][0]:
            entry = at(dirs[index][0])
            while any(data[entry:entry + size]):
                name_rva, = unpack("<I", data, entry + (12 if index == 1 else 4))
                imports.append(c_string(data, at(name_rva)))
                entry += size
    kind = "DLL" if characteristics & IMAGE_FILE_DLL else "executable"
    return Library("PE", kind, PE_MACHINES.get(machine, "machine %x" % machine), exports, imports)


def allowed(fmt, name):
    if fmt == "PE":
        lower = name.lower()
        return lower in ALLOWED["PE"] or lower.startswith(ALLOWED_PE_PREFIX)
    return name in ALLOWED[fmt]


def problems(platform, library):
    """Everything that keeps `library` from loading on a stock machine of `platform`."""
    fmt, arch = PLATFORMS[platform]
    found = []
    if library.format != fmt:
        return ["is %s, not %s as %s needs" % (library.format, fmt, platform)]
    wanted_kind = "DLL" if fmt == "PE" else "shared library"
    if library.kind != wanted_kind:
        found.append("is a %s %s, not a %s" % (fmt, library.kind, wanted_kind))
    if library.arch != arch:
        found.append("is built for %s, not %s as %s needs" % (library.arch, arch, platform))
    if EXPORT not in library.exports:
        found.append("does not export %s, which the JVM calls to register the natives" % EXPORT)
    for name in library.imports:
        if not allowed(fmt, name):
            found.append("links %s, which a stock %s machine lacks" % (name, platform.split("-")[0]))
    if platform in OLDEST_MACOS:
        wanted = OLDEST_MACOS[platform]
        if library.oldest_os is None:
            found.append("names no oldest macOS version (no LC_BUILD_VERSION)")
        elif library.oldest_os > wanted:
            found.append("needs macOS %d.%d, newer than %d.%d" % (library.oldest_os + wanted))
    if platform == "macos-aarch64" and library.signature is None:
        found.append("has no code signature: Apple silicon refuses to map unsigned code")
    if library.signature not in (None, "valid"):
        found.append("code signature: " + library.signature)
    return found


def check(platform, path):
    """Returns (problems, summary) for the file at `path`."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        library = read(data)
    except FormatError as e:
        return ["cannot be read as a library: %s" % e], None
    summary = "%s %s for %s, exports %s, links %s%s%s" % (
        library.format, library.kind, library.arch, EXPORT, ", ".join(library.imports) or "nothing",
        ", for macOS %d.%d and later" % library.oldest_os if library.oldest_os else "",
        ", code signature valid" if library.signature == "valid" else "")
    return problems(platform, library), summary


def main(argv):
    if len(argv) != 3 or argv[1] not in PLATFORMS:
        sys.stderr.write("usage: check_native.py <%s> <library>\n" % "|".join(PLATFORMS))
        return 2
    platform, path = argv[1], argv[2]
    found, summary = check(platform, path)
    if found:
        for problem in found:
            sys.stderr.write("check_native: %s (for %s) %s\n" % (path, platform, problem))
        return 1
    print("%s (for %s): %s" % (path, platform, summary))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
