"""Instruction counts from valgrind's callgrind, for benches whose wall-time ratios are tight: counts repeat on
another machine where times do not, and need no hardware counters (this kind of VM exposes none to perf).
User space only: kernel work (system calls, copies into sockets) is not counted."""
import os
import re
import shutil
import subprocess
import tempfile


def available():
    return shutil.which("valgrind") is not None


def without_debug_info(binary, folder):
    """A copy of `binary` in `folder` without its debug sections (the same machine code): valgrind 3.19 gives up
    on the DWARF 5 that Swift 6.3 writes ("Possibly corrupted debuginfo file")."""
    copy = os.path.join(folder, os.path.basename(binary) + "-nodebug")
    n = 0
    while os.path.exists(copy):
        n += 1
        copy = os.path.join(folder, f"{os.path.basename(binary)}-nodebug-{n}")
    subprocess.run(["objcopy", "--strip-debug", binary, copy], check=True)
    return copy


def total(dump):
    """The instruction total of a callgrind output file."""
    with open(dump) as f:
        return int(re.search(r"^summary: (\d+)", f.read(), re.M).group(1))


def count(argv, functions_of=None):
    """Instructions `argv` executes to completion, every thread. With `functions_of` (a file name), also the
    (mangled) names of the functions it ran in the object of that name: (count, names)."""
    folder = tempfile.mkdtemp(prefix="flipbook-callgrind-")
    try:
        out = os.path.join(folder, "callgrind.out")
        subprocess.run(["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}", *argv],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        return total(out) if functions_of is None else (total(out), executed(out, functions_of))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def executed(dump, object_name):
    """The functions a callgrind output saw run inside the object whose path ends with `object_name`, in the
    order the file first names them. Names and objects are compressed ("fn=(12) name" once, "fn=(12)" after),
    and a name may first appear as a callee (cfn=)."""
    objects, functions, seen = {}, {}, {}
    current = ""
    with open(dump, errors="replace") as f:
        for line in f:
            m = re.match(r"^(c?ob|c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
            if not m:
                continue
            kind, key, name = m.groups()
            table = objects if kind.endswith("ob") else functions
            if name:
                table[key] = name
            if kind == "ob":
                current = objects.get(key, "")
            elif kind == "fn" and current.endswith(object_name):
                seen.setdefault(functions[key], None)
    return list(seen)
