#!/usr/bin/python3
"""Runs the shell examples of the documentation, so they cannot rot.

  doc_examples.py BIN_DIR REPO_ROOT FILE.md...

Every ```sh block of each FILE is run, line by line, with bash, in a new temporary folder that holds a link to
REPO_ROOT/samples and nothing else (no `out/`: the commands make the folders they write into, as they must in
a fresh checkout), with BIN_DIR first on the PATH (where `flipbook` is). A block right after an HTML comment
`<!-- not-run: REASON -->` is skipped and its reason printed. Comment lines and blank lines are skipped; a
trailing `# ...` comment stays (bash ignores it). Prints "ok"/"FAIL"/"skip" per command, then
"examples: N passed, N failed, N skipped"; exit status 1 if any failed or if a FILE has no example that ran.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def blocks(path):
    """(line number, skip reason or None, [command lines]) for each ```sh block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```sh":
            reason = None
            j = i - 1
            while j >= 0 and not lines[j].strip():
                j -= 1
            if j >= 0:
                m = re.match(r"\s*<!--\s*not-run:\s*(.*?)\s*-->", lines[j])
                if m:
                    reason = m.group(1)
            body, k = [], i + 1
            while k < len(lines) and lines[k].strip() != "```":
                body.append(lines[k])
                k += 1
            found.append((i + 1, reason, body))
            i = k
        i += 1
    return found


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    bin_dir, root, files = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3:]
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
    passed = failed = skipped = 0
    for path in files:
        ran_here = 0
        for line_no, reason, body in blocks(path):
            name = f"{os.path.basename(path)}:{line_no}"
            if reason is not None:
                skipped += 1
                print(f"skip {name}: {reason}")
                continue
            work = tempfile.mkdtemp(prefix="flipbook-doc-examples-")
            try:
                os.symlink(os.path.join(root, "samples"), os.path.join(work, "samples"))
                for command in body:
                    if not command.strip() or command.lstrip().startswith("#"):
                        continue
                    run = subprocess.run(["bash", "-c", "set -o pipefail; " + command], cwd=work, env=env,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=600)
                    if run.returncode == 0:
                        passed += 1
                        ran_here += 1
                        print(f"ok   {name}: {command.strip()[:100]}")
                    else:
                        failed += 1
                        print(f"FAIL {name}: {command.strip()}\n     exit {run.returncode}: {run.stderr.strip()[-400:]}")
            finally:
                shutil.rmtree(work, ignore_errors=True)
        if ran_here == 0:
            failed += 1
            print(f"FAIL {path}: no example ran")
    print(f"examples: {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
