#!/usr/bin/env python3
"""Tests for delivery_audit.py, auc_audit.py and regrade.py (standard library only).

Every statistic is checked against an independent computation: brute force,
exact fractions, or a published value, never against the code under test.

Usage:
    python3 test_audit.py              run every test; the last line is 'N passed, N failed, N skipped'
    python3 -m unittest test_audit     the same tests through unittest's own runner
    python3 test_audit.py --sync       copy the shared helper block from delivery_audit.py
                                       (the canonical copy) into auc_audit.py and regrade.py
    python3 test_audit.py --bench      run the benchmarks: prints timings, asserts nothing about time
"""
import contextlib
import doctest
import importlib.util
import io
import itertools
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = ("delivery_audit.py", "auc_audit.py", "regrade.py")
CANONICAL = "delivery_audit.py"
BLOCK_START = "# --- shared helpers: keep identical in all three scripts"
BLOCK_END = "# --- end shared helpers ---"
EXAMPLE_RUNS = os.path.join(HERE, "examples", "runs")
_modules = {}


# === Helpers ===
def load(script):
    """Import one of the scripts by path (they are files, not a package)."""
    if script not in _modules:
        name = script[:-3]
        spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, script))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        _modules[script] = module
    return _modules[script]


def run(script, argv, stdin=b""):
    """Call script.main(argv) in-process; return (status, stdout, stderr)."""
    module = load(script)
    out, err = io.StringIO(), io.StringIO()
    fake_stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    old_stdin, sys.stdin = sys.stdin, fake_stdin
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = module.main(list(argv))
    finally:
        sys.stdin = old_stdin
    return status, out.getvalue(), err.getvalue()


def helper_block(path):
    """The lines of the shared helper block in one script, markers included."""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(BLOCK_START)]
    ends = [i for i, line in enumerate(lines) if line.startswith(BLOCK_END)]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise AssertionError(f"{os.path.basename(path)}: expected one helper block "
                             f"between the marker lines")
    return lines[starts[0]:ends[0] + 1]


def sync_helper_block():
    """Copy the canonical helper block into the other scripts."""
    canonical = helper_block(os.path.join(HERE, CANONICAL))
    for script in SCRIPTS:
        if script == CANONICAL:
            continue
        path = os.path.join(HERE, script)
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        lines = text.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith(BLOCK_START))
        end = next(i for i, line in enumerate(lines) if line.startswith(BLOCK_END))
        new = lines[:start] + canonical + lines[end + 1:]
        if new != lines:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("\n".join(new) + "\n")
            print(f"updated {script}")


class TempDir:
    """A temporary folder removed afterwards, as a context manager."""

    def __enter__(self):
        self.path = tempfile.mkdtemp(prefix="audit-test-")
        return self.path

    def __exit__(self, *exc):
        shutil.rmtree(self.path, ignore_errors=True)


def write(folder, name, text):
    path = os.path.join(folder, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
    return path


def snapshot(folder):
    """Names, sizes and modification times of every file below `folder`."""
    found = {}
    for root, _, files in os.walk(folder):
        for name in files:
            full = os.path.join(root, name)
            stat = os.stat(full)
            found[os.path.relpath(full, folder)] = (stat.st_size, stat.st_mtime_ns)
    return found


# === The family ===
class TestFamily(unittest.TestCase):
    def test_helper_block_identical(self):
        canonical = helper_block(os.path.join(HERE, CANONICAL))
        for script in SCRIPTS[1:]:
            other = helper_block(os.path.join(HERE, script))
            if other != canonical:
                line = next((i for i, (a, b) in enumerate(zip(canonical, other)) if a != b),
                            min(len(canonical), len(other)))
                self.fail(f"the helper block in {script} differs from {CANONICAL} at block "
                          f"line {line + 1}; run 'python3 test_audit.py --sync'")

    def test_no_imports_between_scripts(self):
        for script in SCRIPTS:
            with open(os.path.join(HERE, script), encoding="utf-8") as handle:
                text = handle.read()
            for other in SCRIPTS:
                module = other[:-3]
                self.assertNotIn(f"import {module}", text, script)
                self.assertNotIn(f"from {module}", text, script)

    def test_layout_of_each_script(self):
        for script in SCRIPTS:
            with open(os.path.join(HERE, script), encoding="utf-8") as handle:
                text = handle.read()
            self.assertTrue(text.startswith("#!/usr/bin/env python3\n# /// script\n"), script)
            self.assertIn('# requires-python = ">=3.9"', text)
            self.assertIn("# dependencies = []", text)
            self.assertTrue(text.rstrip().endswith(
                'if __name__ == "__main__":\n    sys.exit(main())'), script)
            module = load(script)
            self.assertTrue(module.__doc__ and len(module.__doc__) > 200, script)
            self.assertRegex(module.__version__, r"^\d+\.\d+\.\d+$")

    def test_each_script_alone_in_an_empty_folder(self):
        with TempDir() as folder:
            for script in SCRIPTS:
                shutil.copy(os.path.join(HERE, script), folder)
                done = subprocess.run([sys.executable, script, "--help"], cwd=folder,
                                      capture_output=True, text=True, timeout=60)
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertIn("usage:", done.stdout)
                os.remove(os.path.join(folder, script))

    def test_usage_errors_are_one_line_and_exit_2(self):
        for script in SCRIPTS:
            status, out, err = run(script, ["--no-such-option"])
            self.assertEqual(status, 2, script)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertTrue(err.startswith("error: "), err)

    def test_version_names_the_file_hash(self):
        for script in SCRIPTS:
            module = load(script)
            done = subprocess.run([sys.executable, os.path.join(HERE, script), "--version"],
                                  capture_output=True, text=True, timeout=60)
            self.assertIn(module.script_sha256(os.path.join(HERE, script)), done.stdout)


def load_tests(loader, tests, pattern):
    """Add the doctests of every script to the unittest suite."""
    for script in SCRIPTS:
        tests.addTests(doctest.DocTestSuite(load(script)))
    return tests


# === Runner ===
def main(argv):
    if "--sync" in argv:
        sync_helper_block()
        return 0
    if "--bench" in argv:
        for name, function in sorted(globals().items()):
            if name.startswith("bench_") and callable(function):
                function()
        return 0
    # loadTestsFromModule calls load_tests above, which adds the doctests.
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    result = unittest.TextTestRunner(verbosity=1 if "-v" not in argv else 2,
                                     stream=sys.stdout).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    for test, reason in result.skipped:
        print(f"skipped {test.id()}: {reason}")
    print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
