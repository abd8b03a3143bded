#!/usr/bin/env python3
"""Tests for delivery_audit.py, auc_audit.py and regrade.py (standard library only).

Every statistic is checked against an independent computation: brute force,
exact fractions, or a published value, never against the code under test.

Usage:
    python3 test_audit.py              run every test; the last line is 'N passed, N failed, N skipped'
    python3 test_audit.py --quick      every test but regrade.py's (the slow ones that check out
                                       repositories and run test suites), in well under a minute
    python3 test_audit.py NAME ...     only the named classes or tests, e.g. TestAucStatistics or
                                       TestDeliveryReport.test_demo_prints_the_report_figures
    python3 test_audit.py -v           name each test as it runs (combines with the above)
    python3 -m unittest test_audit     the same tests through unittest's own runner
    python3 test_audit.py --sync       copy the shared helper block from delivery_audit.py
                                       (the canonical copy) into auc_audit.py and regrade.py,
                                       stamping its end marker with the body's hash; refuses,
                                       naming the line, a copy edited by hand since
    python3 test_audit.py --sync --force  the same, discarding such hand edits
    python3 test_audit.py --write-golden  write examples/golden/ anew (the shipped examples'
                                       reports, which TestGoldenReports compares byte for byte)
    python3 test_audit.py --write-readme  rewrite README.md's options tables (between their
                                       marker lines) from each script's parser; a test
                                       fails when they are stale
    python3 test_audit.py --bench      run the benchmarks: prints timings, asserts nothing about time
    python3 test_audit.py --help       this text
"""
# Map of this file: its sections in order, each under a `# === ... ===` banner
# (`# --- ... ---` for a part of one). python3 test_audit.py NAME runs one class.
#   Helpers and fixtures (loading the scripts, main() in-process, folders, shared helpers)
#   The family (the scripts as one: block copies, maps, one home per rule, manuals, README)
#   The shared block
#     tables and rating sheets (reading runs tables, rating sheets and kappa)
#     grader verdicts (SWE-bench and sb-cli reports joined to runs)
#     harness readers (agent output folders: the format registry, measures, errors, real shapes)
#   delivery_audit.py (statistics against enumeration, the report, verdicts, sampling mode)
#   auc_audit.py (AUC, DeLong, the permutation null, gates, the command line)
#   regrade.py (in the order of its manual)
#     instances, runs, settings and the shipped example (Basic usage: what is read and refused)
#     the procedure end to end, per runner (steps 1-9 with unittest and pytest)
#     step 1: check-out and kept trees (a checkout holds its base commit alone)
#     steps 2-3: the diff and the test tree
#     step 6: only the listed tests run
#     step 7: results from the signed recorder only (the exploits of the outside review)
#     step 8: the verdict (ids, xfail, subtests, uncollected tests, the environment record)
#     runners (Django, SymPy, instance fields)
#     statuses, outputs and the summary
#     large jobs (signals, shards, one --out; --out never an input, interruptions, making)
#     the sandbox
#     making instances
#     auditing instances and comparing with a grader
#   Paste-ready output (footers that rerun, Markdown and SVG that read where pasted, no home paths)
#   Benchmarks (python3 test_audit.py --bench)
#     the family (how much of the shared block each script never reaches)
#     delivery_audit.py
#     auc_audit.py
#     harness readers
#     regrade.py
#   Golden reports: every format of every shipped example, byte for byte
#   Runner (the doctests, --quick, NAME..., --help, main)

import argparse
import ast
import collections
import contextlib
import doctest
import errno
import hashlib
import importlib.util
import inspect
import io
import itertools
import json
import math
import multiprocessing
import os
import platform
import random
import re
import shlex
import shutil
import signal
import stat
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
import unittest.mock
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = ("delivery_audit.py", "auc_audit.py", "regrade.py")
CANONICAL = "delivery_audit.py"
BLOCK_START = "# --- shared helpers: keep identical in all three scripts"
BLOCK_END = "# --- end shared helpers"
EXAMPLE_RUNS = os.path.join(HERE, "examples", "runs")
_modules = {}


# === Helpers and fixtures ===
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


def block_body_sha256(block):
    """The hash the end marker carries: SHA-256 of the body (the lines between the two
    marker lines, each ended by a newline), first 16 hex digits, as the scripts'
    shared_block_sha256 computes it."""
    body = "".join(line + "\n" for line in block[1:-1])
    return hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]


def marker_sha256(block):
    """The hash written in a block's end marker line ('' when it carries none)."""
    found = re.search(r"body sha256 ([0-9a-f]{16})\b", block[-1])
    return found.group(1) if found else ""


def end_marker(block):
    """The end marker line for a block whose body is block[1:-1]."""
    return f"{BLOCK_END} body sha256 {block_body_sha256(block)} ---"


def first_changed_line(block, canonical):
    """Index in `block` of its first line that differs from `canonical` (or where it ends)."""
    return next((i for i, (a, b) in enumerate(zip(block, canonical)) if a != b),
                min(len(block), len(canonical)))


def hand_edits(root=HERE):
    """The non-canonical copies edited by hand, as messages: a copy whose body no longer
    matches the hash its own end marker carries was changed after the last --sync, and
    --sync would overwrite that change."""
    canonical = helper_block(os.path.join(root, CANONICAL))
    found = []
    for script in SCRIPTS:
        if script == CANONICAL:
            continue
        path = os.path.join(root, script)
        block = helper_block(path)
        if marker_sha256(block) == block_body_sha256(block):
            continue
        with open(path, encoding="utf-8") as handle:
            start = handle.read().splitlines().index(block[0])
        at = first_changed_line(block, canonical)
        shown = block[at] if at < len(block) else "(the block ends here)"
        what = ("was edited by hand (its shared helper block no longer matches the hash in "
                "its end marker)" if marker_sha256(block) else "may hold an edit made by "
                "hand (its end marker carries no hash, so an edit cannot be told from an "
                "old copy)")
        found.append(f"{script} line {start + at + 1} {what}; first line that differs from "
                     f"{CANONICAL}'s copy:\n    {shown}")
    return found


def sync_helper_block(root=HERE, force=False):
    """--sync: stamp the canonical block's end marker with its body's hash and copy the
    block into the other scripts. A copy edited by hand is refused (status 2) unless
    force is set, so --sync never silently discards an edit."""
    edits = hand_edits(root)
    if edits and not force:
        for message in edits:
            print(f"error: {message}", file=sys.stderr)
        print(f"carry the edit over: make it in {CANONICAL}'s block (the canonical copy) and "
              f"run python3 test_audit.py --sync again; or discard it with "
              f"python3 test_audit.py --sync --force", file=sys.stderr)
        return 2
    for script in SCRIPTS:
        path = os.path.join(root, script)
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith(BLOCK_START))
        end = next(i for i, line in enumerate(lines) if line.startswith(BLOCK_END))
        if script == CANONICAL:
            canonical = lines[start:end] + [end_marker(lines[start:end + 1])]
        new = lines[:start] + canonical + lines[end + 1:]
        if new != lines:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("\n".join(new) + "\n")
            print(f"updated {script}")
        elif script != CANONICAL:
            print(f"{script}: helper block already identical to {CANONICAL}'s")
    return 0


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


def runs_csv(rows, header="run_id,task_id,claimed,verified"):
    return header + "\n" + "\n".join(",".join(str(c) for c in row) for row in rows) + "\n"


def audit_json(argv, stdin=b""):
    status, out, err = run("delivery_audit.py", list(argv) + ["--format", "json"], stdin)
    if status != 0:
        raise AssertionError(f"exit {status}: {err}")
    return json.loads(out)


AUC = "auc_audit.py"


def best(auc):
    return max(auc, 1 - auc)


def csv_text(header, rows):
    return "\n".join([",".join(header)] + [",".join(str(c) for c in r) for r in rows]) + "\n"


def report_body(out):
    """A report without its provenance footer."""
    return out.split("-- provenance --")[0].split("Provenance:\n")[0]


def draw(script, argv):
    """(the JSON result, the SVG) of one run of a script on `argv`."""
    with TempDir() as folder:
        path = os.path.join(folder, "figure.svg")
        status, out, err = run(script, argv + ["--svg", path, "--format", "json"])
        assert status == 0, err
        with open(path, encoding="utf-8") as handle:
            return json.loads(out), handle.read()


def assert_one_error(case, status, out, err, *names):
    """Exit 2, nothing on stdout, one 'error:' line naming each of `names`."""
    case.assertEqual((status, out), (2, ""), err)
    case.assertEqual(len(err.strip().splitlines()), 1, err)
    case.assertTrue(err.startswith("error: "), err)
    for name in names:
        case.assertIn(name, err)


AGENTS = os.path.join(HERE, "examples", "agents")
REGRADE_EXAMPLE = os.path.join(HERE, "examples", "regrade")
AGENT_FORMATS = ("swe-agent", "mini-swe-agent", "openhands", "claude-code", "codex")
# Worked out by hand from the story in examples/agents/make_agents.py (times in
# seconds from the task message; each call's own turn k uses 100 k + 110 tokens):
#   model-a  read@10+2 search@15+1 edit@20+1 test@30+5, ends 40:
#            orient 20 - 0 = 20, impl (20 + 1) - 20 = 1, verify 40 - 21 = 19;
#            turns 0..4 (4 = the final message): 110 + 210 | 310 | 410 + 510
#   model-b  read@5+1 test@10+4 edit@20+2 test@30+3 edit@40+2, ends 50:
#            20, 42 - 20 = 22, 50 - 42 = 8; 110 + 210 | 310 + 410 + 510 | 610;
#            its only tests ran before its last edit
#   model-c  read, search, bash: never edits, every phase measure undefined
#   model-d  read@5+1 edit@10+1 edit@20+1 test@25+5 read@35+1, ends 45:
#            10, 21 - 10 = 11, 45 - 21 = 24; 110 | 210 + 310 | 410 + 510 + 610
TIMED = {"model-a": ("20", "1", "19", "320", "310", "920", "1"),
         "model-b": ("20", "22", "8", "320", "1230", "610", "0"),
         "model-c": ("", "", "", "", "", "", ""),
         "model-d": ("10", "11", "24", "110", "520", "1530", "1")}
# SWE-agent records only each step's execution_time (no timestamps, no per-turn
# tokens), and ends with a submit step of 0.5 s:
#   a: read 0-2, search 2-3, edit 3-4, test 4-9, submit 9-9.5 -> 3, 1, 5.5
#   b: read 0-1, test 1-5, edit 5-7, test 7-10, edit 10-12, submit -12.5 -> 5, 7, 0.5
#   d: read 0-1, edit 1-2, edit 2-3, test 3-8, read 8-9, submit -9.5 -> 1, 2, 6.5
SWE_AGENT = {"model-a": ("3", "1", "5.5", "", "", "", "1"),
             "model-b": ("5", "7", "0.5", "", "", "", "0"),
             "model-c": ("", "", "", "", "", "", ""),
             "model-d": ("1", "2", "6.5", "", "", "", "1")}
PHASE_COLUMNS = ("orient_seconds", "impl_seconds", "verify_seconds", "orient_tokens",
                 "impl_tokens", "verify_tokens", "ran_tests_after_last_edit")
# (read, edit, search, bash, test, other) calls per model; SWE-agent adds a submit
# (other) call to each run, mini-swe-agent's calls are the four stories exactly.
CALLS = {"model-a": (1, 1, 1, 0, 1, 0), "model-b": (1, 2, 0, 0, 2, 0),
         "model-c": (1, 0, 1, 1, 0, 0), "model-d": (2, 2, 0, 0, 1, 0)}
CLAUDE_SESSIONS = {"synthetic-0a": "model-a", "synthetic-0b": "model-b",
                   "synthetic-0c": "model-c", "synthetic-0d": "model-d"}


def psi(a, b):
    return Fraction(1) if a > b else Fraction(1, 2) if a == b else Fraction(0)


# === The family ===
class TestFamily(unittest.TestCase):
    def test_helper_block_identical(self):
        canonical = helper_block(os.path.join(HERE, CANONICAL))
        for script in SCRIPTS:                 # each copy's body against its own marker
            block = helper_block(os.path.join(HERE, script))
            self.assertEqual(marker_sha256(block), block_body_sha256(block),
                             f"{script}: the shared helper block's body does not match the "
                             f"hash in its end marker; edit {CANONICAL}'s copy and run "
                             f"'python3 test_audit.py --sync'")
        for script in SCRIPTS[1:]:
            other = helper_block(os.path.join(HERE, script))
            if other != canonical:
                line = next((i for i, (a, b) in enumerate(zip(canonical, other)) if a != b),
                            min(len(canonical), len(other)))
                self.fail(f"the helper block in {script} differs from {CANONICAL} at block "
                          f"line {line + 1}; run 'python3 test_audit.py --sync'")

    def test_no_top_level_name_defined_twice(self):
        # A script's own function named like a shared helper silently replaces the
        # helper for every caller in that file (a csv_text did exactly that once).
        # In this file a second test class or method of the same name would drop the
        # first one's tests without a word.
        import ast
        for script in SCRIPTS + ("test_audit.py",):
            with open(os.path.join(HERE, script), encoding="utf-8") as handle:
                tree = ast.parse(handle.read())
            bodies = [(script, tree.body)] + [(f"{script} class {n.name}", n.body)
                                              for n in tree.body if isinstance(n, ast.ClassDef)]
            for where, body in bodies:
                seen = {}
                for node in body:
                    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                        self.assertNotIn(node.name, seen, f"{where}: {node.name} defined at "
                                         f"lines {seen.get(node.name)} and {node.lineno}")
                        seen[node.name] = node.lineno

    def test_no_imports_between_scripts(self):
        for script in SCRIPTS:
            with open(os.path.join(HERE, script), encoding="utf-8") as handle:
                text = handle.read()
            for other in SCRIPTS:
                pattern = rf"(?m)^\s*(import|from)\s+{other[:-3]}\b"
                self.assertIsNone(re.search(pattern, text), f"{script} imports {other}")

    def test_runner_help_names_and_typos(self):
        """--help prints usage, a typo is an error, and a name runs that test alone: none of
        the three starts the whole suite."""
        def run(*argv):
            return subprocess.run([sys.executable, os.path.join(HERE, "test_audit.py"), *argv],
                                  capture_output=True, text=True, timeout=600, cwd=HERE)
        shown = run("--help")
        self.assertEqual(shown.returncode, 0)
        self.assertIn("--quick", shown.stdout)
        self.assertNotRegex(shown.stdout, r"(?m)^\d+ passed")
        for typo in (("--quik",), ("TestNoSuchClass",), ("--force",)):
            wrong = run(*typo)
            self.assertEqual(wrong.returncode, 2, typo)
            self.assertTrue(wrong.stderr.startswith("error: "), wrong.stderr)
            self.assertNotRegex(wrong.stdout, r"(?m)^\d+ passed")
        named = run("TestFamily.test_no_imports_between_scripts")
        self.assertEqual(named.stdout.splitlines()[-1], "1 passed, 0 failed", named.stdout)

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

    def test_provenance_footer_hashes_check_out(self):
        for script, argv in (("delivery_audit.py", [EXAMPLE_RUNS, "--boot", "10"]),
                             ("auc_audit.py", [EXAMPLE_RUNS, "--perms", "20", "--boot", "20"])):
            status, out, err = run(script, argv)
            self.assertEqual(status, 0, err)
            footer = out.split("sha256 of the script and its inputs:\n", 1)[1].strip()
            lines = footer.split("\nmanifest: ")[0].splitlines()
            self.assertGreaterEqual(len(lines), 2)
            for line in lines:                     # sha256sum -c format: '<hex>  <path>'
                digest, path = line.split("  ", 1)
                path = os.path.join(HERE, path) if path == script else path
                with open(path, "rb") as handle:
                    self.assertEqual(hashlib.sha256(handle.read()).hexdigest(), digest, path)
            markdown = run(script, argv + ["--format", "markdown"])[1]
            self.assertIn("\n".join(lines[-1:]) + "\n```\n\nmanifest: ", markdown)
            self.assertIn(f"command: python3 {os.path.relpath(os.path.join(HERE, script))} "
                          f"{os.path.relpath(EXAMPLE_RUNS)}", out)
            self.assertIn("seed: 20260801", out)

    def test_a_failed_write_leaves_nothing_behind(self):
        for script in SCRIPTS:
            module = load(script)
            with TempDir() as folder:
                target = os.path.join(folder, "a-folder")
                os.makedirs(target)
                with self.assertRaises(module.InputError):
                    module.write_atomic(target, "text")
                self.assertEqual(os.listdir(folder), ["a-folder"])
                self.assertEqual(os.listdir(target), [])

    def test_only_a_runs_folder_brings_its_sibling_tables(self):
        with TempDir() as folder:
            write(folder, "criteria.csv", "run_id,criterion,passed\nzz,c1,1\n")
            table = runs_csv([["r1", "t1", "yes", "1"], ["r2", "t2", "no", "0"]])
            write(folder, "mine.csv", table)
            write(folder, "runs.csv", table)
            status, _, err = run("delivery_audit.py", [os.path.join(folder, "mine.csv")])
            self.assertEqual(status, 0, err)          # a lone table ignores its neighbours
            for path in (folder, os.path.join(folder, "runs.csv")):
                status, _, err = run("delivery_audit.py", [path])
                self.assertEqual(status, 2)           # the runs folder's criteria are read
                self.assertIn("not in the runs table: zz", err)

    def test_version_names_the_file_hash(self):
        for script in SCRIPTS:
            module = load(script)
            done = subprocess.run([sys.executable, os.path.join(HERE, script), "--version"],
                                  capture_output=True, text=True, timeout=60)
            self.assertIn(module.script_sha256(os.path.join(HERE, script)), done.stdout)


class TestWalkthroughFixes(unittest.TestCase):
    def test_claims_from_a_table_beside_agent_output_are_not_called_the_harness(self):
        # A new user saw SWE-agent claims (from a rater's runs.csv) labelled as "the
        # harness's own explicit claim"; only OpenHands records one.
        header = ["run_id", "task_id", "format", "claimed", "verified"]
        with TempDir() as folder:
            path = write(folder, "runs.csv", csv_text(header, [
                ["r1", "t1", "swe-agent", "yes", "1"], ["r2", "t2", "swe-agent", "no", "0"]]))
            status, text, err = run("delivery_audit.py", [path, "--boot", "0",
                                                          "--format", "json"])
        self.assertEqual(status, 0, err)
        result = json.loads(text)
        self.assertNotIn("harness's own", result["claim_source"])
        self.assertIn("from the runs table beside", result["claim_source"])
        self.assertEqual(result["claim_definition"], "column")

    def test_help_fits_100_columns(self):
        # A '\\' at a docstring line's end joined two example lines into one of 282.
        for script in SCRIPTS:
            done = subprocess.run([sys.executable, os.path.join(HERE, script), "--help"],
                                  capture_output=True, text=True, timeout=120)
            self.assertEqual(done.returncode, 0, done.stderr)
            wide = [line for line in done.stdout.splitlines() if len(line) > 100]
            self.assertEqual(wide, [], script)

    def test_rating_sheet_hint_says_to_add_the_verdicts(self):
        with TempDir() as folder:
            sheet = os.path.join(folder, "sheet.csv")
            status, out, err = run("delivery_audit.py", [os.path.join(HERE, "examples",
                                                                       "verdicts"),
                                                          "--rating-sheet", sheet])
        self.assertEqual(status, 0, err)
        self.assertIn("add --verdicts FILE", out)
        self.assertLessEqual(max(len(line) for line in out.splitlines()), 100, out)

    def test_written_files_get_the_umask_mode_not_private(self):
        # mkstemp's 0600 survived the rename, so shared reports were unreadable to others.
        module = load(CANONICAL)
        old = os.umask(0o022)
        try:
            with TempDir() as folder:
                path = os.path.join(folder, "out.csv")
                module.write_atomic(path, "a\n")
                self.assertEqual(os.stat(path).st_mode & 0o777, 0o644)
                os.umask(0o077)
                module.write_atomic(path, "b\n")
                self.assertEqual(os.stat(path).st_mode & 0o777, 0o600)
        finally:
            os.umask(old)


TEMPLATES = os.path.join(HERE, "examples", "templates")


README_MARK = ("<!-- {edge} generated from {script} --help by python3 test_audit.py "
               "--write-readme -->")


def option_rows(script):
    """The Markdown table of a script's options, from its own argparse parser: each option
    as the manual's options list gives it (flags, metavar, help), in the parser's order.
    Formatted here, not by argparse, so no terminal width enters it."""
    parser = load(script).build_parser()
    rows = ["| option | what it does |", "|---|---|"]
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
            continue
        if action.option_strings:
            if action.nargs == 0:
                shown = ", ".join(action.option_strings)
            else:
                metavar = action.metavar or (
                    "{" + ",".join(action.choices) + "}" if action.choices
                    else action.dest.upper())
                shown = ", ".join(f"{flag} {metavar}" for flag in action.option_strings)
        else:
            shown = action.metavar or action.dest.upper()
        text = " ".join((action.help or "").split())
        if "%(" in text:
            text = text % {**vars(action), "prog": parser.prog}
        if action.default not in (None, False, [], argparse.SUPPRESS) and "default" not in text:
            text += f" (default: {action.default})"
        cell = lambda t: t.replace("|", "\\|")
        rows.append(f"| `{cell(shown)}` | {cell(text)} |")
    return "\n".join(rows) + "\n"


def readme_with_options(readme):
    """The README with each script's generated options table rewritten between its marker
    lines; LookupError names a script whose markers are missing."""
    for script in SCRIPTS:
        begin = README_MARK.format(edge="begin", script=script)
        end = README_MARK.format(edge="end", script=script)
        if readme.count(begin) != 1 or readme.count(end) != 1:
            raise LookupError(f"README.md: no single pair of markers for {script}")
        head, rest = readme.split(begin + "\n", 1)
        _, tail = rest.split(end, 1)
        readme = head + begin + "\n" + option_rows(script) + end + tail
    return readme


def write_readme():
    """--write-readme: rewrite the README's generated options tables from the scripts."""
    path = os.path.join(HERE, "README.md")
    with open(path, encoding="utf-8") as handle:
        readme = handle.read()
    fresh = readme_with_options(readme)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(fresh)
    print("README.md: options tables " + ("rewritten" if fresh != readme else "already current"))


class TestReadmeReference(unittest.TestCase):
    """The README restates no manual: its options tables are generated from each script's
    parser between marker lines (python3 test_audit.py --write-readme rewrites them, as
    cog does), and every manual section it points to by name is in that manual."""

    def readme(self):
        with open(os.path.join(HERE, "README.md"), encoding="utf-8") as handle:
            return handle.read()

    def test_the_options_tables_are_current(self):
        readme = self.readme()
        if readme_with_options(readme) != readme:
            self.fail("README.md: an options table is stale; run "
                      "python3 test_audit.py --write-readme")

    def test_every_option_of_every_script_is_in_its_table(self):
        readme = self.readme()
        for script in SCRIPTS:
            with self.subTest(script):
                table = readme.split(README_MARK.format(edge="begin", script=script))[1]
                table = table.split(README_MARK.format(edge="end", script=script))[0]
                flags = set(load(script).build_parser()._option_string_actions) - {"-h",
                                                                                    "--help"}
                self.assertEqual(sorted(f for f in flags if f"`{f}" not in table
                                        and f", {f}" not in table), [])

    def test_the_table_does_not_depend_on_the_terminal(self):
        old = os.environ.get("COLUMNS")
        try:
            os.environ["COLUMNS"] = "40"
            narrow = option_rows("regrade.py")
            os.environ["COLUMNS"] = "250"
            self.assertEqual(option_rows("regrade.py"), narrow)
        finally:
            if old is None:
                os.environ.pop("COLUMNS", None)
            else:
                os.environ["COLUMNS"] = old

    def test_a_stale_table_is_seen_and_rewritten(self):
        readme = self.readme()
        begin = README_MARK.format(edge="begin", script="auc_audit.py")
        stale = readme.replace(begin + "\n", begin + "\n| `--gone` | an old option |\n")
        self.assertNotEqual(readme_with_options(stale), stale)
        self.assertEqual(readme_with_options(stale), readme_with_options(readme))
        with self.assertRaises(LookupError):
            readme_with_options(readme.replace(begin, ""))

    def test_every_manual_section_the_readme_names_is_in_that_manual(self):
        # A pointer row reads: | subject | `script --help`, "Section", "Another" |
        rows = [row for row in self.readme().splitlines()
                if re.match(r"\| .* \| `(delivery_audit|auc_audit|regrade)\.py --help`", row)]
        self.assertGreaterEqual(len(rows), 10)
        manuals = {s: " ".join(load(s).build_parser().format_help().split()) for s in SCRIPTS}
        for row in rows:
            script = re.search(r"`(\w+\.py) --help`", row).group(1)
            for quote in re.findall(r'"([^"]+)"', row.rsplit("`", 1)[1]):
                self.assertTrue(quoted_rule_found(quote, manuals[script]), (script, quote))


class TestReadmeTemplates(unittest.TestCase):
    """Each runs.csv template the README points to is accepted by its script, as copied."""

    def test_the_readme_names_every_template(self):
        with open(os.path.join(HERE, "README.md"), encoding="utf-8") as handle:
            readme = handle.read()
        for name in sorted(os.listdir(TEMPLATES)):
            with self.subTest(name):
                self.assertTrue(f"examples/templates/{name}" in readme, name)

    def test_the_delivery_template_is_audited(self):
        counts = audit_json([os.path.join(TEMPLATES, "delivery_runs.csv"), "--boot", "0"])["counts"]
        # Two runs, both claimed: run-1 verified, run-2 not.
        self.assertEqual([counts[k] for k in ("tp", "fp", "fn", "tn")], [1, 1, 0, 0])

    def test_the_auc_template_is_audited(self):
        status, out, err = run(AUC, [os.path.join(TEMPLATES, "auc_runs.csv"),
                                     "--format", "json", "--perms", "50", "--boot", "50"])
        self.assertEqual(status, 0, err)
        self.assertEqual(json.loads(out)["n_runs"], 2)


class TestHelpFirstScreen(unittest.TestCase):
    def test_the_first_screen_is_usage_and_three_commands(self):
        # A screen of 26 lines holds argparse's usage, the summary and the basic commands.
        for script in SCRIPTS:
            with self.subTest(script):
                done = subprocess.run([sys.executable, os.path.join(HERE, script), "--help"],
                                      capture_output=True, text=True, timeout=120)
                screen = done.stdout.splitlines()[:26]
                self.assertIn("Basic usage", "\n".join(screen))
                commands = [line for line in screen
                            if line.startswith(f"    python3 {script} ")]
                self.assertGreaterEqual(len(commands), 3, screen)


class RegradeReadmeTemplates(unittest.TestCase):
    """The regrade templates grade on the shipped bundle, and their verdicts join the runs
    template (left out of --quick: it checks the repository out)."""

    def test_the_regrade_templates_grade_then_audit(self):
        with TempDir() as folder:
            out = os.path.join(folder, "out")
            status, _, err = run("regrade.py", [
                os.path.join(TEMPLATES, "regrade_instances.jsonl"),
                os.path.join(TEMPLATES, "regrade_predictions.jsonl"),
                "--repo", os.path.join(REGRADE_EXAMPLE, "calc.bundle"),
                "--sandbox", "none", "--out", out])
            self.assertEqual(status, 0, err)
            with open(os.path.join(out, "verdicts.jsonl"), encoding="utf-8") as handle:
                verdicts = {row["run_id"]: row["status"] for row in map(json.loads, handle)}
            # run-1 is the one-line fix of the failing test; run-2 changes nothing.
            self.assertEqual(verdicts, {"run-1": "resolved", "run-2": "unresolved"})
            counts = audit_json([os.path.join(TEMPLATES, "regrade_runs.csv"), "--boot", "0",
                                 "--verdicts", os.path.join(out, "verdicts.csv")])["counts"]
            self.assertEqual([counts[k] for k in ("tp", "fp", "fn", "tn")], [1, 1, 0, 0])


MAP_ROW = re.compile(r"#   (\S+(?: \S+)*)  +(.*)$")        # a section: its title, then names
MAP_MORE = re.compile(r"#  {4,}(.*)$")                    # the row goes on
BANNER = re.compile(r"# === (.+) ===$")


def file_map(path):
    """[(section title, [entry names])] from the map under a script's docstring: the
    comment lines after its closing quotes. Names run up to the row's 'rules:'."""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith('"""'))
    end = next(i for i in range(first + 1, len(lines)) if lines[i].endswith('"""'))
    sections, in_rules = [], False
    for line in itertools.takewhile(lambda l: l.startswith("#"), lines[end + 1:]):
        row, more = MAP_ROW.match(line), MAP_MORE.match(line)
        if more and sections:
            text = more.group(1)
        elif row:
            sections.append((row.group(1), []))
            text, in_rules = row.group(2), False
        else:
            continue
        if not in_rules:
            sections[-1][1].extend(text.split("rules:")[0].split())
        in_rules = in_rules or "rules:" in text
    return sections


def top_level_banners(path):
    """The `# === Title ===` banners of a script outside the shared block, in order (the
    block keeps its own sub-banners and, if it has one, its own table)."""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    found, inside = [], False
    for line in lines:
        if line.startswith(BLOCK_START):
            inside = True
        elif line.startswith("# --- end shared helpers"):
            inside = False
        elif not inside and BANNER.match(line):
            found.append(BANNER.match(line).group(1))
    return found


def top_level_names(path):
    """Every name a script defines at its top level (functions, classes, constants)."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def map_rules(path):
    """{section title: the text of its 'rules:'} from the map under a script's docstring."""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith('"""'))
    end = next(i for i in range(first + 1, len(lines)) if lines[i].endswith('"""'))
    rules, title = {}, None
    for line in itertools.takewhile(lambda l: l.startswith("#"), lines[end + 1:]):
        row, more = MAP_ROW.match(line), MAP_MORE.match(line)
        if more and title:
            text = more.group(1)
        elif row:
            title, text = row.group(1), row.group(2)
            rules[title] = None
        else:
            continue
        if rules[title] is not None:
            rules[title] += " " + text
        elif "rules:" in text:
            rules[title] = text.split("rules:", 1)[1]
    return {title: " ".join((text or "").split()) for title, text in rules.items()}


def section_spans(path):
    """{section title: (first line, last line)} of a script, numbered from 1: each top-level
    `# === Title ===` banner runs to the next, and the Shared block is its marker lines."""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    start = next(i for i, l in enumerate(lines, 1) if l.startswith(BLOCK_START))
    end = next(i for i, l in enumerate(lines, 1) if l.startswith(BLOCK_END))
    spans, title, opened = {"Shared block": (start, end)}, None, None
    for number, line in enumerate(lines, 1):
        found = BANNER.match(line)
        if start <= number <= end or not found or found.group(1) == "Shared block":
            continue
        if title:
            spans[title] = (opened, number - 1)
        title, opened = found.group(1), number
    if title:
        spans[title] = (opened, len(lines))
    return spans


def block_sections(path):
    """{sub-section title: (first line, last line)} of the shared block's `# ---- x ----`
    banners, numbered from 1, each running to the next or to the block's end marker; the
    lines before the first banner are the block's "(its head)"."""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    end = next(i for i, l in enumerate(lines, 1) if l.startswith(BLOCK_END))
    begin = next(i for i, l in enumerate(lines, 1) if l.startswith(BLOCK_START))
    starts = [(begin, "(its head)")] + [
        (number, found.group(1)) for number, line in enumerate(lines, 1)
        for found in [re.match(r"# ---- (.+) ----$", line)] if found]
    return {title: (number, (starts[k + 1][0] - 1) if k + 1 < len(starts) else end)
            for k, (number, title) in enumerate(starts)}


def block_table(path):
    """[(sub-section title, the text of its row)] from the shared block's own table (the
    comment rows after 'Sections of the block')."""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    first = next(i for i, l in enumerate(lines) if l.startswith("# Sections of the block"))
    rows = []
    for line in itertools.takewhile(lambda l: l.startswith("#"), lines[first + 1:]):
        found = re.match(r"#   (\S+(?: \S+)*)  +(.*)$", line)
        if found:
            rows.append([found.group(1), found.group(2)])
        elif rows and re.match(r"#  {4,}\S", line):
            rows[-1][1] += " " + line[1:].strip()
    return [tuple(row) for row in rows]


def definitions(tree):
    """{name: [top-level nodes that define it]}: functions, classes and assigned names (a
    name assigned twice, as a text built in steps, has both nodes)."""
    found = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.setdefault(node.name, []).append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        found.setdefault(name.id, []).append(node)
    return found


def referenced_words(nodes):
    """The names the nodes read (a bare name) and the attributes they use (as '.attr')."""
    words = set()
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                words.add(sub.id)
            elif isinstance(sub, ast.Attribute):
                words.add("." + sub.attr)
    return words


def is_method(node):
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))


def reached_nodes(tree, roots=("main", "_main")):
    """The ids of the top-level nodes (and methods) a script reaches from its own code: its
    entry points main and _main, and every top-level statement that is not a definition
    (`if __name__ == "__main__":`). A reached node reaches every top-level name it reads,
    called or passed as a value (argparse's dispatch, a registry's reader); a reached class
    reaches its dunder methods and every method whose name some reached code uses as an
    attribute (self.add, store.add: by name, so a shared method name over-reaches, never
    under-reaches)."""
    defined = definitions(tree)
    words = set(roots) | referenced_words(
        [n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom, ast.Assign,
                                                    ast.AnnAssign, ast.AugAssign))
         and not is_method(n) and not isinstance(n, ast.ClassDef)])
    reached, grown = set(), True
    while grown:
        grown = False
        for name, nodes in defined.items():
            for node in nodes:
                if name in words and id(node) not in reached:
                    reached.add(id(node))
                    grown = True
                    if isinstance(node, ast.ClassDef):
                        words |= referenced_words(
                            [s for s in node.body if not is_method(s)] + node.bases
                            + node.decorator_list + node.keywords)
                    else:
                        words |= referenced_words([node])
                if isinstance(node, ast.ClassDef) and id(node) in reached:
                    for method in filter(is_method, node.body):
                        dunder = method.name.startswith("__") and method.name.endswith("__")
                        if id(method) not in reached and (dunder or "." + method.name in words):
                            reached.add(id(method))
                            grown = True
                            words |= referenced_words([method])
    return reached


def reached_names(path):
    """The top-level names a script reaches from its own code (reached_nodes)."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    reached = reached_nodes(tree)
    return {name for name, nodes in definitions(tree).items()
            if any(id(node) in reached for node in nodes)}


def unreached_block_lines(path):
    """(lines of the shared block's code the script never reaches, lines of code in the
    block, [what they hold]): the top-level statements inside the block's markers that
    reached_nodes leaves out, and the unreached methods of classes it reaches."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    start, end = section_spans(path)["Shared block"]
    reached = reached_nodes(tree)
    unreached, code, names = 0, 0, []
    for node in tree.body:
        if not start <= node.lineno <= end or isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        code += node.end_lineno - first + 1
        label = getattr(node, "name", None) or next(
            (n.id for n in ast.walk(node) if isinstance(n, ast.Name)), "?")
        if id(node) not in reached:
            unreached += node.end_lineno - first + 1
            names.append(label)
        elif isinstance(node, ast.ClassDef):
            for method in filter(is_method, node.body):
                if id(method) not in reached:
                    unreached += method.end_lineno - method.lineno + 1
                    names.append(f"{node.name}.{method.name}")
    return unreached, code, names


CODE_NAME = re.compile(r"\b(?:[A-Za-z]\w*_\w*|[A-Z][a-z]+[A-Z]\w*)\b")   # snake_case, CamelCase


def quoted_rule_found(rule, manual):
    """Whether a rule the map quotes is in the manual, whitespace aside; '...' in the quote
    stands for the rest of a long heading."""
    at = 0
    for part in (p.strip() for p in rule.split("...")):
        at = manual.find(part, at)
        if at < 0:
            return False
        at += len(part)
    return True


def map_problems(path, manual):
    """What misleads in a script's map, one line each (empty when it can be trusted): an
    entry not defined in the section its row names, or not reached from the script's own
    code; a quoted rule the manual (its --help text) does not hold; a name in backticks in
    a row's rules not defined in that row's section. The shared block's own table: a name
    it gives not defined in the sub-section its row names."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    defined = definitions(tree)
    spans, reached = section_spans(path), reached_names(path)
    manual = " ".join(manual.split())
    name = os.path.basename(path)

    def home(word, span):
        return any(span[0] <= node.lineno <= span[1] for node in defined.get(word, ()))

    problems = []
    for title, names in file_map(path):
        span = spans.get(title, (0, -1))
        problems += [f"{name}: {title}: {n} is not defined in this section"
                     for n in names if not home(n, span)]
        problems += [f"{name}: {title}: {n} is never reached from the script's own code"
                     for n in names if n in defined and n not in reached]
    for title, rules in map_rules(path).items():
        span = spans.get(title, (0, -1))
        problems += [f"{name}: {title}: the manual holds no {quote!r}"
                     for quote in re.findall(r'"([^"]+)"', rules)
                     if not quoted_rule_found(quote, manual)]
        problems += [f"{name}: {title}: `{n}` (a rule's home) is not defined in this section"
                     for n in re.findall(r"`(\w+)`", rules) if not home(n, span)]
    subsections = block_sections(path)
    for title, text in block_table(path):
        text = re.sub(r"\b\w+\.py\b", "", text)        # a script's file name is no code name
        span = next((s for t, s in subsections.items()
                     if t == title or t.startswith(title + " (")), (0, -1))
        problems += [f"{name}: the block's {title}: {n} is not defined in this sub-section"
                     for n in dict.fromkeys(re.findall(r"\b[A-Za-z_]\w*", text))
                     if n in defined and not home(n, span)]
        problems += [f"{name}: the block's {title}: {n} is defined nowhere"
                     for n in dict.fromkeys(CODE_NAME.findall(text))
                     if n not in defined and "_" in n]
    return problems + manual_name_problems(path, manual, defined)


def manual_name_problems(path, manual, defined):
    """The code names the manual cites (a constant, class or function the script defines,
    such as MAX_DIFF_BYTES) that the map does not place: one defined inside a section must
    be named in that section's row (in the shared block, its sub-section's row of the
    block's table). A constant above the block, under the imports, is its own home."""
    name, problems = os.path.basename(path), []
    rows = {title: " ".join(names) + " " + map_rules(path).get(title, "")
            for title, names in file_map(path)}
    spans = section_spans(path)
    block_rows = dict(block_table(path))
    subsections = block_sections(path)
    for word in sorted(set(CODE_NAME.findall(manual)) & set(defined)):
        line = defined[word][0].lineno
        title = next((t for t, (a, b) in spans.items() if a <= line <= b), None)
        if title is None:
            continue
        text = rows.get(title, "")
        if title == "Shared block":
            sub = next((t for t, (a, b) in subsections.items() if a <= line <= b), None)
            if sub is None:                   # the block's preamble, above its sub-sections
                continue
            text = next((row for t, row in block_rows.items()
                         if sub == t or sub.startswith(t + " (")), "")
            title = f"the block's {sub}"
        if not re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text):
            problems.append(f"{name}: the manual cites {word}, which {title} defines "
                            "and its map row does not name")
    return problems


class TestMaps(unittest.TestCase):
    """Each script opens with a map under its docstring: its sections in order, their entry
    functions and the manual's rules they implement, so a reader reaches the code of any
    rule by the map. The map cannot go stale in silence: its sections are exactly the
    file's top-level banners, in order; every entry it lists is defined in the section its
    row names and reached from the script's own code (main, _main and what they call or
    pass on); every rule it quotes is in the manual (--help); and every code name the
    manual cites is named by the map row of the section that defines it."""

    def test_every_banner_is_listed_in_order(self):
        for script in SCRIPTS:
            with self.subTest(script=script):
                path = os.path.join(HERE, script)
                listed = [title for title, _ in file_map(path)]
                banners = top_level_banners(path)
                self.assertGreaterEqual(len(listed), 5)
                if "Shared block" not in banners:     # its banner went inside the block
                    listed.remove("Shared block")
                self.assertEqual(listed, banners)

    def test_every_listed_name_exists(self):
        for script in SCRIPTS:
            with self.subTest(script=script):
                path = os.path.join(HERE, script)
                defined = top_level_names(path)
                for title, names in file_map(path):
                    self.assertTrue(names, f"{script}: section {title!r} lists no function")
                    self.assertEqual([n for n in names if n not in defined], [],
                                     f"{script}: section {title!r}")

    def test_every_entry_rule_and_cited_name_has_its_home(self):
        for script in SCRIPTS:
            with self.subTest(script=script):
                manual = load(script).build_parser().format_help()
                self.assertEqual(map_problems(os.path.join(HERE, script), manual), [])

    def test_every_name_in_the_block_table_is_reached_by_some_script(self):
        reached = set().union(*(reached_names(os.path.join(HERE, s)) for s in SCRIPTS))
        path = os.path.join(HERE, CANONICAL)
        defined = top_level_names(path)
        for title, text in block_table(path):
            names = [n for n in re.findall(r"\b[A-Za-z_]\w*", text) if n in defined]
            self.assertTrue(names, title)
            self.assertEqual([n for n in names if n not in reached], [], title)

    def test_the_map_check_sees_each_way_a_map_misleads(self):
        source = (
            '"""Doc.\n"""\n# Map\n#\n'
            '#   Shared block  helper\n'
            '#   One           f moved dead rules: "Usage"; "Nothing here"; `g`\n'
            '#   Two           k rules: "Long heading (a ...)"\nimport os\n'
            '# --- shared helpers: keep identical in all three scripts ---\n'
            '# Sections of the block:\n#   tables    helper, LIMIT_ROWS\n'
            'import sys\n# ---- tables ----\nLIMIT_ROWS = 3\ndef helper(): return 1\n'
            '# --- end shared helpers ---\n'
            '# === One ===\ndef f(): return helper()\ndef dead(): return 0\n'
            'SEEN_ROWS = 2\n'
            '# === Two ===\ndef g(): return f\ndef moved(): return 0\n'
            'def k(): return LIMIT_ROWS\n'
            'def main(argv=None): return [g, k, moved]\n')
        manual = "Usage\n Long heading (a b)\n LIMIT_ROWS and SEEN_ROWS"
        with tempfile.TemporaryDirectory() as folder:
            path = write(folder, "x.py", source)
            self.assertEqual(map_problems(path, manual), [
                "x.py: One: moved is not defined in this section",
                "x.py: One: dead is never reached from the script's own code",
                "x.py: One: the manual holds no 'Nothing here'",
                "x.py: One: `g` (a rule's home) is not defined in this section",
                "x.py: the manual cites SEEN_ROWS, which One defines and its map row does "
                "not name"])
            # Functions passed as values are reached: g returns f, main lists g, k, moved.
            self.assertTrue({"f", "g", "k", "moved", "helper", "main"}
                            <= reached_names(path))
            self.assertNotIn("dead", reached_names(path))

    def test_a_method_is_reached_through_its_name(self):
        with tempfile.TemporaryDirectory() as folder:
            path = write(folder, "x.py", 'class Store:\n    def __init__(self): pass\n'
                         '    def add(self): return 1\n    def drop(self): return 0\n'
                         'def main(argv=None):\n    Store().add()\n')
            with open(path, encoding="utf-8") as handle:
                tree = ast.parse(handle.read())
            reached = reached_nodes(tree)
            methods = {m.name for m in tree.body[0].body if id(m) in reached}
            self.assertEqual(methods, {"__init__", "add"})

    def test_sections_that_hold_alike_things_have_one_name_in_all_three(self):
        # A reader who knows one file knows the others.
        maps = {script: [title for title, _ in file_map(os.path.join(HERE, script))]
                for script in SCRIPTS}
        for title in ("Statistics", "The audit", "Input", "Report", "Main"):
            scripts = [s for s in SCRIPTS if title in maps[s]]
            self.assertGreaterEqual(len(scripts), 2, title)
        for script in SCRIPTS:
            self.assertEqual((maps[script][0], maps[script][-1]), ("Shared block", "Main"),
                             script)

    def test_the_map_reader_sees_a_stale_map(self):
        with tempfile.TemporaryDirectory() as folder:
            path = write(folder, "x.py", '"""Doc.\n"""\n# Map\n#\n#   One     f g\n'
                         '#           h rules: "One"\n#   Two     k\n#           rules: x y\n'
                         'def f(): pass\n# === One ===\n# === Three ===\n')
            self.assertEqual(file_map(path), [("One", ["f", "g", "h"]), ("Two", ["k"])])
            self.assertEqual(top_level_banners(path), ["One", "Three"])
            self.assertEqual(top_level_names(path), {"f"})


class TestNothingDead(unittest.TestCase):
    """No function, class or constant a script defines outside the shared block is left
    that nothing uses: each is named somewhere else in its file, or by a test."""

    def test_every_name_outside_the_block_is_used(self):
        with open(os.path.join(HERE, "test_audit.py"), encoding="utf-8") as handle:
            tests = set(re.findall(r"\w+", handle.read()))
        for script in SCRIPTS:
            with self.subTest(script=script):
                with open(os.path.join(HERE, script), encoding="utf-8") as handle:
                    text = handle.read()
                tree = ast.parse(text)
                lines = text.splitlines()
                start = next(i for i, l in enumerate(lines, 1) if l.startswith(BLOCK_START))
                end = next(i for i, l in enumerate(lines, 1)
                           if l.startswith("# --- end shared helpers"))
                used = {}
                for node in tree.body:
                    owner = getattr(node, "name", None)
                    for sub in ast.walk(node):
                        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                            word = sub.id
                        elif isinstance(sub, ast.Attribute):
                            word = sub.attr
                        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                            word = sub.value    # a name looked up by string (globals())
                        else:
                            continue
                        used.setdefault(word, set()).add(owner)
                unused = []
                for node in tree.body:
                    if start <= node.lineno <= end:
                        continue
                    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                        names = [node.name]
                    elif isinstance(node, ast.Assign):
                        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
                    else:
                        continue
                    unused += [n for n in names if not used.get(n, set()) - {n}
                               and n not in tests and not n.startswith("__")]
                self.assertEqual(unused, [])


class TestDeclaredInputs(unittest.TestCase):
    """The state an audit's Inputs record carries is declared in Inputs.__init__: --task-map
    and the agent-output cache are fields, not attributes set from outside or kept in
    __dict__, and every inputs.NAME the scripts use is a declared field or a method."""

    def test_every_attribute_used_is_declared_in_the_record(self):
        for script in SCRIPTS:
            with self.subTest(script=script):
                with open(os.path.join(HERE, script), encoding="utf-8") as handle:
                    tree = ast.parse(handle.read())
                record = next(n for n in tree.body
                              if isinstance(n, ast.ClassDef) and n.name == "Inputs")
                methods = {n.name for n in record.body if isinstance(n, ast.FunctionDef)}
                init = next(n for n in record.body
                            if isinstance(n, ast.FunctionDef) and n.name == "__init__")
                fields = {t.attr for n in ast.walk(init) if isinstance(n, ast.Assign)
                          for t in n.targets if isinstance(t, ast.Attribute)}
                used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                        and isinstance(n.value, ast.Name) and n.value.id == "inputs"}
                self.assertIn("task_map", used)
                self.assertEqual(sorted(used - fields - methods), [])
                self.assertNotIn("__dict__", used)
                self.assertFalse([n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call)
                                  and isinstance(n.func, ast.Name) and n.func.id == "getattr"
                                  and n.args and isinstance(n.args[0], ast.Name)
                                  and n.args[0].id == "inputs"])

    def test_a_new_record_has_no_task_map_and_an_empty_cache(self):
        for script in SCRIPTS:
            module = load(script)
            inputs = module.Inputs()
            self.assertEqual((inputs.task_map, inputs.agent_cache, inputs.files), (None, {}, []))
            self.assertEqual(module.Inputs(task_map="map.csv").task_map, "map.csv")


def copy_of_the_scripts(folder):
    """The three scripts copied into folder, for a --sync that must not touch the real ones."""
    for script in SCRIPTS:
        shutil.copy(os.path.join(HERE, script), folder)


def edit_line(path, old, new):
    """Replace the first line of path equal to old with new; return its line number."""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    at = lines.index(old)
    lines[at] = new
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines))
    return at + 1


class TestSharedBlockCopies(unittest.TestCase):
    """Copies that cannot lose an edit: the end marker carries the body's hash, --sync
    refuses a copy edited by hand and names the line, --version prints the block's hash."""

    def sync(self, folder, *options):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = sync_helper_block(folder, force="--force" in options)
        return status, out.getvalue(), err.getvalue()

    def test_the_hash_is_sha256_of_the_body(self):
        block = ["# --- shared helpers: keep identical", "x = 1", "", "# --- end shared helpers"]
        self.assertEqual(block_body_sha256(block),
                         hashlib.sha256(b"x = 1\n\n").hexdigest()[:16])
        for script in SCRIPTS:
            with open(os.path.join(HERE, script), encoding="utf-8") as handle:
                text = handle.read()
            body = text.split(BLOCK_START, 1)[1].split("\n", 1)[1].split("\n" + BLOCK_END, 1)[0] + "\n"
            marker = re.search(r"(?m)^# --- end shared helpers body sha256 ([0-9a-f]{16}) ---$",
                               text)
            self.assertIsNotNone(marker, script)
            self.assertEqual(hashlib.sha256(body.encode()).hexdigest()[:16], marker.group(1))

    def test_an_edit_in_a_non_canonical_copy_is_refused_and_named(self):
        with TempDir() as folder:
            copy_of_the_scripts(folder)
            path = os.path.join(folder, "auc_audit.py")
            with open(path, encoding="utf-8") as handle:
                before = handle.read()
            line = edit_line(path, "def fmt(value, digits=3):", "def fmt(value, digits=4):")
            with open(path, encoding="utf-8") as handle:
                edited = handle.read()
            status, out, err = self.sync(folder)
            self.assertEqual(status, 2)
            self.assertIn(f"error: auc_audit.py line {line} ", err)
            self.assertIn("def fmt(value, digits=4):", err)
            self.assertIn("--sync --force", err)
            self.assertIn("delivery_audit.py's block", err)
            with open(path, encoding="utf-8") as handle:
                self.assertEqual(handle.read(), edited)       # the edit is still there
            status, out, err = self.sync(folder, "--force")   # --force discards it
            self.assertEqual(status, 0, err)
            with open(path, encoding="utf-8") as handle:
                self.assertEqual(handle.read(), before)

    def test_an_edit_in_the_canonical_copy_is_stamped_and_carried(self):
        with TempDir() as folder:
            copy_of_the_scripts(folder)
            edit_line(os.path.join(folder, CANONICAL), "def fmt(value, digits=3):",
                      "def fmt(value, digits=4):")
            status, out, err = self.sync(folder)
            self.assertEqual((status, err), (0, ""))
            blocks = [helper_block(os.path.join(folder, script)) for script in SCRIPTS]
            self.assertEqual(blocks[0], blocks[1])
            self.assertEqual(blocks[0], blocks[2])
            self.assertIn("def fmt(value, digits=4):", blocks[2])
            self.assertEqual(marker_sha256(blocks[2]), block_body_sha256(blocks[2]))
            self.assertEqual(self.sync(folder)[0], 0)         # a second sync is content

    def test_version_prints_the_block_hash_and_a_hand_edit(self):
        canonical = helper_block(os.path.join(HERE, CANONICAL))
        with TempDir() as folder:
            copy_of_the_scripts(folder)
            edit_line(os.path.join(folder, "regrade.py"), "def fmt(value, digits=3):",
                      "def fmt(value, digits=5):")
            for script in SCRIPTS:
                done = subprocess.run([sys.executable, os.path.join(HERE, script), "--version"],
                                      capture_output=True, text=True, timeout=60)
                self.assertRegex(done.stdout, rf"^{script} \d+\.\d+\.\d+ \(sha256 [0-9a-f]{{64}}\) "
                                 rf"shared helpers {marker_sha256(canonical)}\n$")
            done = subprocess.run([sys.executable, os.path.join(folder, "regrade.py"),
                                   "--version"], capture_output=True, text=True, timeout=60)
            self.assertIn(f"(edited by hand: its end marker says {marker_sha256(canonical)})",
                          done.stdout)


class TestSharedBlockOneHome(unittest.TestCase):
    """A rule the scripts share has one home, in the block: fmt_p, plural, FEW_CLUSTERS,
    the significance level and interval confidence, and the run-id rule are defined there
    and nowhere else in any script."""

    def test_each_shared_rule_is_defined_in_the_block_only(self):
        import ast
        names = ("fmt_p", "plural", "FEW_CLUSTERS", "too_few_clusters", "SIGNIFICANCE",
                 "CONFIDENCE", "number_run_ids", "instance_at_model", "set_aside",
                 "set_aside_text")
        for script in SCRIPTS:
            path = os.path.join(HERE, script)
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            lines = text.splitlines()
            start = next(i for i, line in enumerate(lines) if line.startswith(BLOCK_START))
            end = next(i for i, line in enumerate(lines) if line.startswith(BLOCK_END))
            homes = {name: [] for name in names}
            for node in ast.parse(text).body:
                defined = [node.name] if isinstance(node, ast.FunctionDef) else \
                    [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
                for name in set(defined) & set(names):
                    homes[name].append(start < node.lineno - 1 < end)
            for name in names:
                self.assertEqual(homes[name], [True], f"{script}: {name} defined at "
                                 f"{homes[name]} (True: inside the shared block)")

    def test_only_too_few_clusters_compares_a_count_with_few_clusters(self):
        # delivery_audit compared counts with FEW_CLUSTERS in three functions of its own
        # (the interval withheld, the pooled question, the verdict's note), and its
        # pooled_and_within a fourth time by a rule of its own (issue 25's review).
        import ast
        for script in SCRIPTS:
            with open(os.path.join(HERE, script), encoding="utf-8") as handle:
                tree = ast.parse(handle.read())
            comparing = set()
            for function in ast.walk(tree):
                if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for node in ast.walk(function):
                    if isinstance(node, ast.Compare) and any(
                            isinstance(n, ast.Name) and n.id == "FEW_CLUSTERS"
                            for n in ast.walk(node)):
                        comparing.add(function.name)
            self.assertLessEqual(comparing, {"too_few_clusters"}, script)

    def test_fmt_p_is_one_rule_in_both_audits(self):
        delivery, auc = load("delivery_audit.py"), load("auc_audit.py")
        grid = [i / 20000 for i in range(20001)] + [0.0, 1e-12, 0.00049999, 0.0005]
        for p in grid:
            shown = delivery.fmt_p(p)
            self.assertEqual(auc.fmt_p(p), shown, p)
            if p < 0.0005:
                self.assertEqual(shown, "<0.001", p)
            elif not 0.0495 <= p < 0.05:        # where the two old copies printed alike
                self.assertEqual(shown, "%.3f" % p, p)
            elif shown != "<0.050":              # never rounded across 0.05
                decimals = len(shown) - 2
                self.assertLess(float(shown), 0.05, p)
                self.assertLessEqual(abs(float(shown) - p), 0.5 * 10 ** -decimals + 1e-15, p)
        self.assertEqual(auc.fmt_p(1 / 2001, floor=1 / 2001), "<=0.001")
        self.assertEqual(delivery.fmt_p(None), "undefined")

    def test_regrade_and_the_audits_name_runs_by_one_rule(self):
        regrade, delivery = load("regrade.py"), load("delivery_audit.py")
        graded = regrade.default_run_ids([{"instance_id": "a__b-1", "model": "m"},
                                          {"instance_id": "a__b-1", "model": "m"},
                                          {"instance_id": "a__b-1", "model": None},
                                          {"instance_id": "c__d-2", "run_id": "given"}])
        harness = [delivery.new_run("swe-agent", f"w{i}", task_id="a__b-1", model=model)
                   for i, model in enumerate(("m", "m", None))]
        harness.append(delivery.new_run("codex", "w3", session="s-9"))
        delivery.assign_run_ids(harness)
        self.assertEqual([run["run_id"] for run in graded],
                         ["a__b-1@m", "a__b-1@m#2", "a__b-1", "given"])
        self.assertEqual([run["run_id"] for run in harness],
                         ["a__b-1@m", "a__b-1@m#2", "a__b-1", "s-9"])


class TestAuditsReadFlagsInMain(unittest.TestCase):
    """The audits' _main resolves the flags once and passes plain values down: no other
    function of delivery_audit.py or auc_audit.py takes the argparse namespace, and
    _main never hands it on whole, stores it, or rewrites one of its flags."""

    NAMESPACE_NAMES = {"args", "opts", "options", "namespace", "ns", "parsed", "flags"}

    def script_tree(self, script):
        with open(os.path.join(HERE, script), encoding="utf-8") as handle:
            text = handle.read()
        lines = text.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith(BLOCK_START))
        end = next(i for i, line in enumerate(lines) if line.startswith(BLOCK_END))
        return ast.parse(text), start + 1, end + 1

    def test_no_function_but_main_takes_the_namespace(self):
        # The block's shell readers name a command's words `args`; they are a list, not
        # the namespace, and the block is held to the second test instead.
        for script in ("delivery_audit.py", "auc_audit.py"):
            tree, start, end = self.script_tree(script)
            takers = []
            for node in ast.walk(tree):
                if not isinstance(node, (ast.FunctionDef, ast.Lambda)):
                    continue
                name = getattr(node, "name", "<lambda>")
                if name in ("_main", "build_parser") or start < node.lineno < end:
                    continue
                params = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                if {p.arg for p in params} & self.NAMESPACE_NAMES:
                    takers.append(f"{name} (line {node.lineno})")
            self.assertEqual(takers, [], f"{script}: these take the argparse namespace; "
                             f"resolve the flags in _main and pass plain values")

    def test_main_never_hands_the_namespace_on(self):
        for script in ("delivery_audit.py", "auc_audit.py"):
            tree, _, _ = self.script_tree(script)
            main = next(node for node in tree.body
                        if isinstance(node, ast.FunctionDef) and node.name == "_main")
            bound = {target.id for node in ast.walk(main) if isinstance(node, ast.Assign)
                     and isinstance(node.value, ast.Call)
                     and isinstance(node.value.func, ast.Attribute)
                     and node.value.func.attr == "parse_args"
                     for target in node.targets if isinstance(target, ast.Name)}
            self.assertTrue(bound, f"{script}: _main parses no arguments")
            leaks = []
            for node in ast.walk(main):
                if isinstance(node, ast.Call):
                    handed = node.args + [k.value for k in node.keywords]
                    leaks += [f"passed to a call, line {node.lineno}" for value in handed
                              if isinstance(value, ast.Name) and value.id in bound]
                if isinstance(node, (ast.Assign, ast.AnnAssign)) and \
                        isinstance(node.value, ast.Name) and node.value.id in bound:
                    leaks.append(f"stored, line {node.lineno}")
                if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and \
                        isinstance(node.value, ast.Name) and node.value.id in bound:
                    leaks.append(f"--{node.attr.replace('_', '-')} rewritten, "
                                 f"line {node.lineno}")
            self.assertEqual(leaks, [], f"{script}: _main's namespace {sorted(bound)}")


# === The shared block ===
# --- The shared block: tables and rating sheets ---
class TestDelimiterHint(unittest.TestCase):
    def test_semicolon_and_tab_files_named_csv_get_a_hint(self):
        with TempDir() as folder:
            for name, text, words in (
                    ("semi.csv", "run_id;task_id;claimed;verified\nr1;t1;yes;1\n",
                     "separated by semicolons, not commas"),
                    ("tabs.csv", "run_id\ttask_id\tclaimed\tverified\nr1\tt1\tyes\t1\n",
                     "separated by tabs, not commas: name it .tsv"),
                    ("commas.tsv", "run_id,task_id,claimed,verified\nr1,t1,yes,1\n",
                     "separated by commas, not tabs")):
                path = write(folder, name, text)
                for script in ("delivery_audit.py", "auc_audit.py"):
                    status, out, err = run(script, [path])
                    self.assertEqual(status, 2, (script, name))
                    self.assertIn(words, err)
                    self.assertIn(f"{name} row 1: one column", err)
                    self.assertEqual(len(err.strip().splitlines()), 1)
            # A one-column header with no other delimiter in it gets no such hint.
            path = write(folder, "one.csv", "run_id\nr1\n")
            status, _, err = run("delivery_audit.py", [path])
            self.assertEqual(status, 2)
            self.assertNotIn("looks separated", err)


def option_names(script):
    """Every option the script's parser accepts."""
    return set(load(script).build_parser()._option_string_actions)


def assert_hints_exist(case, script, err):
    """Every --option an error message names is one the script accepts."""
    for option in re.findall(r"(?<![\w-])--[a-z][a-z-]*", err):
        case.assertIn(option, option_names(script), err)


def fleiss_by_hand(rows, categories=("claimed", "not", "equivocal")):
    """Fleiss' kappa as a Fraction, from its textbook definition."""
    n, raters = len(rows), len(rows[0])
    agree = [Fraction(sum(row.count(c) * (row.count(c) - 1) for c in categories),
                      raters * (raters - 1)) for row in rows]
    shares = [Fraction(sum(row.count(c) for row in rows), n * raters) for c in categories]
    p_bar, p_chance = sum(agree) / n, sum(s * s for s in shares)
    return (p_bar - p_chance) / (1 - p_chance)


class TestWrongKindOfFile(unittest.TestCase):
    """Files that are no text table, made here with the standard library in the layout
    their programs write (a workbook is a zip whose parts name it), refused by their
    first bytes with one line naming what they are and what to do."""

    def samples(self, folder):
        import zipfile
        xlsx = os.path.join(folder, "runs.xlsx")
        with zipfile.ZipFile(xlsx, "w") as book:
            book.writestr("[Content_Types].xml", "<?xml version='1.0'?><Types/>")
            book.writestr("xl/workbook.xml", "<workbook/>")
            book.writestr("xl/worksheets/sheet1.xml", "<worksheet/>")
        ods = os.path.join(folder, "runs.ods")
        with zipfile.ZipFile(ods, "w") as book:
            book.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
            book.writestr("content.xml", "<office:document-content/>")
        archive = os.path.join(folder, "runs.zip")
        with zipfile.ZipFile(archive, "w") as packed:
            packed.writestr("runs/runs.csv", "run_id,claimed\nr1,yes\n")
        binary = {"runs.xls": b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504),
                  "runs.pdf": b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n",
                  "runs.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
                  "runs.jpg": b"\xff\xd8\xff\xe0\x00\x10JFIF",
                  "runs.csv": b"<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\">"
                              b"<rect/></svg>\n",
                  "runs.html": b"<!DOCTYPE html>\n<html><body><table></table></body></html>\n",
                  "runs.xml": b"<?xml version=\"1.0\"?>\n<runs><run id=\"r1\"/></runs>\n"}
        for name, data in binary.items():
            with open(os.path.join(folder, name), "wb") as handle:
                handle.write(data)
        return {xlsx: ("an Excel workbook (.xlsx)", "save the sheet as CSV"),
                ods: ("an OpenDocument spreadsheet (.ods)", "save the sheet as CSV"),
                archive: ("a zip archive", "unpack it"),
                os.path.join(folder, "runs.xls"): ("an Excel 97-2003 workbook (.xls)",
                                                   "save the sheet as CSV"),
                os.path.join(folder, "runs.pdf"): ("a PDF document", "CSV"),
                os.path.join(folder, "runs.png"): ("a PNG image", "table"),
                os.path.join(folder, "runs.jpg"): ("a JPEG image", "table"),
                os.path.join(folder, "runs.csv"): ("an SVG figure", "runs table"),
                os.path.join(folder, "runs.html"): ("an HTML page", "CSV"),
                os.path.join(folder, "runs.xml"): ("an XML file", "CSV")}

    def test_refused_by_first_bytes_in_one_line(self):
        with TempDir() as folder:
            for path, (kind, advice) in self.samples(folder).items():
                for script in ("delivery_audit.py", "auc_audit.py"):
                    status, out, err = run(script, [path])
                    assert_one_error(self, status, out, err, f"{path}: {kind}", advice)

    def test_a_workbook_given_as_verdicts(self):
        with TempDir() as folder:
            path = next(p for p in self.samples(folder) if p.endswith(".xlsx"))
            status, out, err = run("delivery_audit.py", [EXAMPLE_RUNS, "--verdicts", path])
        assert_one_error(self, status, out, err, "an Excel workbook (.xlsx)",
                         "save the sheet as CSV")


class TestRatingSheets(unittest.TestCase):
    # Twelve runs whose ids, models and outcomes must not reach the sheet.
    RUNS = [[f"secret-run-{i:02d}", f"inst-{i % 5}", "model-zeta-9", "1" if i % 3 else "0",
             f"Final message {i}: I changed parser {i} and the tests pass."] for i in range(12)]
    # Three raters' labels per run, chosen by hand: unanimous on runs 0-8, a majority
    # only on 9 and 10, no majority on 11.
    LABELS = ["ccc", "ccc", "nnn", "ccc", "eee", "ccc", "ccc", "nnn", "ccc", "cce", "nne",
              "cne"]
    WORDS = {"c": "claimed", "n": "not claimed", "e": "equivocal"}

    def write_runs(self, folder):
        return write(folder, "runs.csv", csv_text(
            ["run_id", "task_id", "model", "verified", "final_message"], self.RUNS))

    def read_csv(self, path):
        import csv
        with open(path, encoding="utf-8", newline="") as handle:
            return list(csv.reader(handle))

    def fill(self, folder, sheet_rows, key, rater, change=None):
        index = {run[0]: i for i, run in enumerate(self.RUNS)}
        rows = []
        for sheet_id, message, claim in sheet_rows:
            self.assertEqual(claim, "")
            label = self.WORDS[self.LABELS[index[key[sheet_id]]][rater]]
            rows.append([sheet_id, message, change.get(sheet_id, label) if change else label])
        return write(folder, f"rater{rater}.csv",
                     csv_text(["sheet_id", "final_message", "claim"], rows))

    def test_round_trip(self):
        with TempDir() as folder:
            runs = self.write_runs(folder)
            sheet = os.path.join(folder, "sheet.csv")
            status, out, err = run("delivery_audit.py", [runs, "--rating-sheet", sheet])
            self.assertEqual(status, 0, err)
            with open(sheet, encoding="utf-8") as handle:
                sheet_text = handle.read()
            for hidden in ("secret-run", "model-zeta", "verified", "inst-"):
                self.assertNotIn(hidden, sheet_text)
            rows = self.read_csv(sheet)
            self.assertEqual(rows[0], ["sheet_id", "final_message", "claim"])
            keyfile = os.path.join(folder, "sheet.key.csv")
            key_rows = self.read_csv(keyfile)
            self.assertEqual(key_rows[0], ["sheet_id", "run_id"])
            key = dict(key_rows[1:])
            # One row per run, each message beside the id that maps back to its run.
            message_of = {run[0]: run[4] for run in self.RUNS}
            self.assertEqual(sorted(key.values()), sorted(message_of))
            self.assertEqual({r[0]: r[1] for r in rows[1:]},
                             {s: message_of[r] for s, r in key.items()})
            order = [key[r[0]] for r in rows[1:]]
            self.assertNotEqual(order, [run[0] for run in self.RUNS])     # shuffled
            # Seeded: the same seed rewrites the same bytes; another seed reorders.
            before = snapshot(folder)
            self.assertEqual(run("delivery_audit.py", [runs, "--rating-sheet", sheet])[0], 0)
            self.assertEqual(snapshot(folder).keys(), before.keys())
            with open(sheet, encoding="utf-8") as handle:
                self.assertEqual(handle.read(), sheet_text)
            other = os.path.join(folder, "other.csv")
            run("delivery_audit.py", [runs, "--rating-sheet", other, "--seed", "7"])
            self.assertNotEqual(self.read_csv(other)[1:], rows[1:])
            # Three filled sheets back as raters.
            filled = [self.fill(folder, rows[1:], key, r) for r in range(3)]
            result = audit_json([runs, "--ratings", ",".join(filled), "--rating-key", keyfile,
                                 "--boot", "0"])
        labels = [[{"c": "claimed", "n": "not", "e": "equivocal"}[x] for x in row]
                  for row in self.LABELS]
        kappa = fleiss_by_hand(labels)
        # By hand: P = (9 + 1/3 + 1/3 + 0) / 12 = 29/36; category shares 21/36, 9/36,
        # 6/36, chance 31/72; kappa = (29/36 - 31/72) / (41/72) = 27/41.
        self.assertEqual(kappa, Fraction(27, 41))
        raters = result["raters"]
        self.assertEqual((raters["raters"], raters["runs"], raters["unanimous"],
                          raters["majority_only"], raters["no_majority"]), (3, 12, 9, 2, 1))
        self.assertAlmostEqual(raters["fleiss_kappa"], float(kappa), places=12)
        # Majority claims by hand: claimed on runs 0,1,3,5,6,8,9; the rest not (10 'not',
        # 11 no majority, read as equivocal, so not claiming; 4 equivocal).
        claimed = {0, 1, 3, 5, 6, 8, 9}
        verified = {i for i, run in enumerate(self.RUNS) if run[3] == "1"}
        self.assertEqual((result["counts"]["tp"], result["counts"]["fp"],
                          result["counts"]["fn"], result["counts"]["tn"]),
                         (len(claimed & verified), len(claimed - verified),
                          len(verified - claimed), 12 - len(claimed | verified)))
        self.assertEqual(result["counts"]["equivocal"], 2)                # runs 4 and 11
        self.assertIn("blind rating sheets", result["claim_source"])

    def test_fleiss_by_hand_on_a_paper_case(self):
        # The oracle itself, on a table worked on paper: two subjects,
        # three raters: (c, c, c) and (c, n, n). P = (1 + 1/3) / 2 = 2/3; shares
        # 4/6 and 2/6, chance 5/9; kappa = (2/3 - 5/9) / (4/9) = 1/4.
        self.assertEqual(fleiss_by_hand([["claimed"] * 3, ["claimed", "not", "not"]]),
                         Fraction(1, 4))

    def test_a_bad_value_names_file_row_and_value(self):
        with TempDir() as folder:
            runs = self.write_runs(folder)
            sheet = os.path.join(folder, "sheet.csv")
            run("delivery_audit.py", [runs, "--rating-sheet", sheet])
            rows = self.read_csv(sheet)[1:]
            keyfile = os.path.join(folder, "sheet.key.csv")
            key = dict(self.read_csv(keyfile)[1:])
            target = rows[4][0]
            good = [self.fill(folder, rows, key, r) for r in (0, 1)]
            for value, message in (("maybe", "unknown claim 'maybe'"), ("", "not rated")):
                bad = self.fill(folder, rows, key, 2, change={target: value})
                before = snapshot(folder)
                status, out, err = run("delivery_audit.py", [
                    runs, "--ratings", ",".join(good + [bad]), "--rating-key", keyfile])
                assert_one_error(self, status, out, err, f"{bad} row 6, column 'claim'",
                                 f"sheet id {target}", message)
                self.assertEqual(snapshot(folder), before)

    def test_an_empty_rater_cell_is_not_rated_as_on_a_sheet(self):
        # One rule for a rater's label, --raters columns and filled sheets alike.
        header = ["run_id", "task_id", "verified", "a", "b", "c"]
        with TempDir() as folder:
            path = write(folder, "runs.csv", csv_text(header, [
                ["r1", "t1", "1", "yes", "yes", "no"], ["r2", "t2", "0", "no", "", "no"]]))
            status, out, err = run("delivery_audit.py", [path, "--raters", "a,b,c"])
            assert_one_error(self, status, out, err, "row 3, column 'b'", "not rated")

    def test_harness_claims_are_named_and_missing_claims_say_how_to_rate(self):
        header = ["run_id", "task_id", "format", "claimed", "verified", "final_message"]
        with TempDir() as folder:
            path = write(folder, "runs.csv", csv_text(header, [
                ["r1", "t1", "openhands", "yes", "1", "done"],
                ["r2", "t2", "openhands", "no", "0", "stuck"]]))
            result = audit_json([path, "--boot", "0"])
            # a table with a format column is still a table: its claim is its column's
            self.assertEqual(result["claim_definition"], "column")
            self.assertIn("does not say how it was made", result["claim_definition_text"])
            blank = write(folder, "blank.csv", csv_text(header, [
                ["r1", "t1", "swe-agent", "", "1", "done"]]))
            status, out, err = run("delivery_audit.py", [blank])
        assert_one_error(self, status, out, err, "blank.csv row 2, column 'claimed'",
                         "--rating-sheet")
        assert_hints_exist(self, "delivery_audit.py", err)

    def test_a_different_key_is_never_overwritten(self):
        with TempDir() as folder:
            runs = self.write_runs(folder)
            sheet = os.path.join(folder, "sheet.csv")
            run("delivery_audit.py", [runs, "--rating-sheet", sheet])
            before = snapshot(folder)
            status, out, err = run("delivery_audit.py", [runs, "--rating-sheet", sheet,
                                                         "--seed", "3"])
            assert_one_error(self, status, out, err, "sheet.key.csv",
                             "a different key is already there")
            self.assertEqual(snapshot(folder), before)


# --- The shared block: grader verdicts ---
EXAMPLE_VERDICTS = os.path.join(HERE, "examples", "verdicts")
# examples/verdicts/runs.csv, by hand: runs 101, 108 and 129 resolved, 115, 122 and 150
# unresolved, 136 an empty patch; 143 a grading error in every form. Claims: yes but
# 136 (no) and 150 (equivocal, read as not claiming). Each form adds its own grading
# error on 122 (or none), which must leave 122 unchecked rather than failed.
VERDICT_FORMS = {
    # file: (format, joined on, unchecked {status: runs})
    "swebench/example-org__agent-a.eval-1.json": (
        "SWE-bench run report", "model and instance id",
        {"error": ["run-143"], "infra_failure (out_of_memory)": ["run-122"]}),
    "logs/run_evaluation/eval-1": (
        "SWE-bench logs/run_evaluation folder", "model and instance id",
        {"error (no report.json)": ["run-143"], "infra_failure (out_of_memory)": ["run-122"]}),
    "sb-cli/swe-bench_lite__test__eval-2.json": (
        "sb-cli report", "instance id", {"error": ["run-143"]}),
    "openhands/output.swebench_eval.jsonl": (
        "OpenHands output.swebench_eval.jsonl", "model and instance id",
        {"error_eval": ["run-143"], "test_timeout": ["run-122"]}),
    "regrade/verdicts.csv": ("regrade.py verdicts", "run id",
                             {"test_patch_failed": ["run-143"]}),
    "regrade/verdicts.jsonl": ("regrade.py verdicts", "run id",
                               {"test_patch_failed": ["run-143"]}),
}
EXAMPLE_OUTCOMES = {"run-101": True, "run-108": True, "run-115": False, "run-122": False,
                    "run-129": True, "run-136": False, "run-150": False}
EXAMPLE_CLAIMS = {"run-101": True, "run-108": True, "run-115": True, "run-122": True,
                  "run-129": True, "run-136": False, "run-143": True, "run-150": False}


class TestVerdictForms(unittest.TestCase):
    def expected_counts(self, unchecked):
        left_out = {run for runs in unchecked.values() for run in runs}
        counts = dict.fromkeys(("tp", "fp", "fn", "tn"), 0)
        for run, verified in EXAMPLE_OUTCOMES.items():
            if run not in left_out:
                claimed = EXAMPLE_CLAIMS[run]
                counts[("tp" if verified else "fp") if claimed
                       else ("fn" if verified else "tn")] += 1
        return counts

    def test_every_form_joins_with_grading_errors_unchecked(self):
        runs = os.path.join(EXAMPLE_VERDICTS, "runs.csv")
        for name, (form, key, unchecked) in VERDICT_FORMS.items():
            with self.subTest(name):
                path = os.path.join(EXAMPLE_VERDICTS, name)
                result = audit_json([runs, "--verdicts", path, "--boot", "0"])
                self.assertEqual({k: result["verdict_source"][k]
                                  for k in ("file", "format", "joined_on")},
                                 {"file": os.path.relpath(path), "format": form,
                                  "joined_on": key})
                self.assertEqual(result["grading_error_runs"], unchecked)
                got = {k: result["counts"][k] for k in ("tp", "fp", "fn", "tn")}
                self.assertEqual(got, self.expected_counts(unchecked))
                self.assertEqual(result["n_checked"], 8 - sum(map(len, unchecked.values())))
                status, out, err = run("delivery_audit.py",
                                       [runs, "--verdicts", path, "--boot", "0"])
                text = " ".join(out.split())
                self.assertIn("(left out, not counted as failures): ", text)
                for status_name, ids in unchecked.items():
                    self.assertIn(f"{status_name} {len(ids)}: {', '.join(ids)}", text)

    def test_every_form_feeds_auc_audit(self):
        runs = os.path.join(EXAMPLE_VERDICTS, "runs.csv")
        for name, (form, key, unchecked) in VERDICT_FORMS.items():
            with self.subTest(name):
                status, out, err = run(AUC, [runs, "--verdicts",
                                             os.path.join(EXAMPLE_VERDICTS, name), "--perms",
                                             "20", "--boot", "20", "--format", "json"])
                self.assertEqual(status, 0, err)
                result = json.loads(out)
                left_out = {r for ids in unchecked.values() for r in ids}
                kept = [v for r, v in EXAMPLE_OUTCOMES.items() if r not in left_out]
                self.assertEqual((result["n_runs"], result["n_successes"]),
                                 (len(kept), sum(kept)))
                self.assertIn(f"joined on {key}", result["outcome"])
                self.assertIn(f"{plural_runs(len(left_out))} left out: no verdict, a grading "
                              f"error", " ".join(result["notes"]))

    def test_report_json_file_and_model_names_as_swebench_writes_them(self):
        d = load("delivery_audit.py")
        report = {"inst-1": {"patch_is_None": False, "patch_exists": True,
                             "patch_successfully_applied": True, "resolved": False,
                             "infra_failure": False}}
        with TempDir() as folder:
            single = write(folder, "report.json", json.dumps(report))
            source = d.read_verdicts(d.Inputs(), single)
            self.assertEqual(source["format"], "SWE-bench report.json")
            self.assertEqual([(r["instance_id"], r["verified"], r["status"])
                              for r in source["records"]], [("inst-1", False, "unresolved")])
            # The run report's model is in its file name, '/' written as '__'.
            named = write(folder, "org__model-b.my.run.json", json.dumps(
                {"resolved_ids": ["inst-1"], "unresolved_ids": ["inst-2"]}))
            runs = [{"run_id": "r1", "task": "inst-1", "model": "org/model-a"},
                    {"run_id": "r2", "task": "inst-1", "model": "org/model-b"},
                    {"run_id": "r3", "task": "inst-2", "model": "org/model-b"}]
            joined = d.join_verdicts(d.read_verdicts(d.Inputs(), named), runs[1:])
            self.assertEqual(joined["key"], "model and instance id")
            self.assertEqual([v["verified"] for v in joined["verdicts"]], [True, False])
            # Runs of a model the report is not about are refused, naming both models.
            with self.assertRaises(d.InputError) as caught:
                d.join_verdicts(d.read_verdicts(d.Inputs(), named), runs)
            self.assertIn("grades model 'org/model-b' (from its file name org__model-b.my.run"
                          ".json), but 1 of 3 runs are of model 'org/model-a'",
                          str(caught.exception))


def plural_runs(n):
    return f"{n} run" + ("" if n == 1 else "s")


class TestVerdictJoinErrors(unittest.TestCase):
    SB_CLI = {"resolved_ids": ["inst-1"], "unresolved_ids": ["inst-2"], "error_ids": [],
              "pending_instances": 0, "failed_instances": 0}

    def check_refused(self, files, argv_of, *names):
        """Both audits: exit 2, one error line naming `names`, nothing written."""
        with TempDir() as folder:
            paths = {name: write(folder, name, text) for name, text in files.items()}
            before = snapshot(folder)
            for script in ("delivery_audit.py", AUC):
                with self.subTest(script):
                    svg = os.path.join(folder, "out.svg")
                    status, out, err = run(script, argv_of(paths) + ["--svg", svg])
                    assert_one_error(self, status, out, err,
                                     *[paths.get(n, n) for n in names])
                    assert_hints_exist(self, script, err)
            self.assertEqual(snapshot(folder), before)
            return err

    def runs_table(self, rows):
        return csv_text(["run_id", "task_id", "claimed", "tool_calls", "f"], rows)

    def test_a_verdict_file_that_matches_no_run(self):
        runs = self.runs_table([["r1", "inst-7", "yes", 3, 1], ["r2", "inst-8", "no", 5, 2]])
        err = self.check_refused(
            {"runs.csv": runs, "sb.json": json.dumps(self.SB_CLI)},
            lambda p: [p["runs.csv"], "--verdicts", p["sb.json"]], "sb.json",
            "no verdict in it matches any run")
        self.assertIn("inst-1, inst-2", err)

    def test_several_runs_of_one_instance_against_an_instance_keyed_file(self):
        runs = self.runs_table([["r1", "inst-1", "yes", 3, 1], ["r2", "inst-1", "no", 5, 2],
                                ["r3", "inst-2", "no", 4, 3]])
        err = self.check_refused(
            {"runs.csv": runs, "sb.json": json.dumps(self.SB_CLI)},
            lambda p: [p["runs.csv"], "--verdicts", p["sb.json"]], "sb.json",
            "keyed by instance id", "2 runs (r1, r2)", "'inst-1'")
        self.assertIn("this file names no model", err)       # sb-cli names none
        openhands = json.dumps({"instance_id": "inst-1", "metadata": {
            "llm_config": {"model": "org/a"}}, "test_result": {"report": {"resolved": True}}})
        err = self.check_refused(
            {"runs.csv": runs, "eval.jsonl": openhands + "\n"},
            lambda p: [p["runs.csv"], "--verdicts", p["eval.jsonl"]], "eval.jsonl",
            "keyed by instance id", "2 runs (r1, r2)")
        self.assertIn("add a model column", err)

    def test_a_run_report_whose_name_matches_no_model_says_so(self):
        runs = csv_text(["run_id", "task_id", "model", "claimed", "tool_calls", "f"],
                        [["r1", "inst-1", "org/a", "yes", 3, 1],
                         ["r2", "inst-1", "org/b", "no", 5, 2],
                         ["r3", "inst-2", "org/a", "no", 4, 3]])
        report = json.dumps({"resolved_ids": ["inst-1"], "unresolved_ids": ["inst-2"]})
        self.check_refused({"runs.csv": runs, "org__c.eval.json": report},
                           lambda p: [p["runs.csv"], "--verdicts", p["org__c.eval.json"]],
                           "org__c.eval.json", "model 'org__c' (from its file name",
                           "3 of 3 runs are of model 'org/a', 'org/b'", "--any-model")

    def test_every_verdict_a_grading_error_names_the_file_and_which(self):
        runs = self.runs_table([["r1", "inst-1", "yes", 3, 1], ["r2", "inst-2", "no", 5, 2]])
        verdicts = csv_text(["run_id", "instance_id", "completed", "status"],
                            [["r1", "inst-1", "", "test_patch_failed"],
                             ["r2", "inst-2", "", "error"]])
        self.check_refused(
            {"runs.csv": runs, "verdicts.csv": verdicts},
            lambda p: [p["runs.csv"], "--verdicts", p["verdicts.csv"]], "verdicts.csv",
            "no run has a verified outcome: every verdict is a grading error",
            "error 1: r2; test_patch_failed 1: r1")

    def test_no_verified_outcome_in_the_table_names_it(self):
        with TempDir() as folder:
            path = write(folder, "runs.csv", runs_csv([["r1", "t1", "yes", ""],
                                                       ["r2", "t2", "no", ""]]))
            status, out, err = run("delivery_audit.py", [path])
        assert_one_error(self, status, out, err, path, "column 'verified' is empty")

    def test_hints_name_options_that_exist(self):
        # A verdicts file with no run id column: the old hints sent the user to
        # '--verdicts run id' (no such option) or --run-id (which names the runs
        # table's column, not the verdict file's).
        runs = self.runs_table([["r1", "inst-1", "yes", 3, 1], ["r2", "inst-2", "no", 5, 2]])
        err = self.check_refused(
            {"runs.csv": runs, "v.csv": "outcome_of_run,completed\nr1,true\nr2,false\n"},
            lambda p: [p["runs.csv"], "--verdicts", p["v.csv"]], "v.csv",
            "not a verdict file this script knows")
        self.assertNotIn("--verdicts run id", err)
        self.assertNotIn("--run-id", err)      # names the runs table's column, not this
        # Run-id-keyed verdicts against a runs table with no run id column.
        self.check_refused(
            {"runs.csv": csv_text(["claimed", "tool_calls", "f"], [["yes", 3, 1], ["no", 5, 2]]),
             "v.csv": "run_id,completed\nr1,true\nr2,false\n"},
            lambda p: [p["runs.csv"], "--verdicts", p["v.csv"]], "v.csv",
            "keyed by run id", "--run-id")

    def test_duplicate_verdicts_are_refused(self):
        runs = self.runs_table([["r1", "inst-1", "yes", 3, 1], ["r2", "inst-2", "no", 5, 2]])
        verdicts = "run_id,completed\nr1,true\nr2,false\nr1,false\n"
        self.check_refused({"runs.csv": runs, "v.csv": verdicts},
                           lambda p: [p["runs.csv"], "--verdicts", p["v.csv"]],
                           "v.csv row 4", "a second verdict for run id 'r1'")


# Synthetic files shaped like what SWE-bench, sb-cli and their users really wrote:
# a gold-patch run report named gold.<run_id>.json, a logs/run_evaluation/<run_id>/
# <model>/<instance>/ tree whose instance folders may hold only patch.diff, the
# older flat report.json named by its folder, an sb-cli report named by run id.
def shaped_runs(model, instances, verified=None):
    """A runs table of one model, every run claiming; an optional verified column."""
    header = ["run_id", "instance_id", "model", "claimed", "tool_calls", "search_calls"]
    header += ["verified"] if verified is not None else []
    rows = [[f"r{n}", iid, model, "yes", 10 + n, 3 - n] + ([verified[n]] if verified else [])
            for n, iid in enumerate(instances)]
    return csv_text(header, rows)


def run_report(resolved, unresolved, errors=(), dataset=()):
    """A SWE-bench run report (schema_version 2 keys), as make_run_report writes it:
    incomplete_ids is every instance of the dataset that had no prediction."""
    submitted = sorted([*resolved, *unresolved, *errors])
    return json.dumps({
        "total_instances": 500, "submitted_instances": len(submitted),
        "completed_instances": len(resolved) + len(unresolved),
        "resolved_instances": len(resolved), "unresolved_instances": len(unresolved),
        "empty_patch_instances": 0, "error_instances": len(errors),
        "completed_ids": sorted([*resolved, *unresolved]),
        "incomplete_ids": sorted(set(dataset) - set(submitted)),
        "empty_patch_ids": [], "submitted_ids": submitted, "resolved_ids": sorted(resolved),
        "unresolved_ids": sorted(unresolved), "error_ids": sorted(errors),
        "schema_version": 2}, indent=4)


def instance_report(iid, resolved, flat=False):
    """A per-instance report.json: keyed by instance id, or the older flat shape."""
    body = {"patch_is_None": False, "patch_exists": True, "patch_successfully_applied": True,
            "resolved": resolved,
            "tests_status": {"FAIL_TO_PASS": {"success": ["t1"] if resolved else [],
                                              "failure": [] if resolved else ["t1"]},
                             "PASS_TO_PASS": {"success": ["t2"], "failure": []},
                             "FAIL_TO_FAIL": {"success": [], "failure": []},
                             "PASS_TO_FAIL": {"success": [], "failure": []}}}
    return json.dumps(body if flat else {iid: body}, indent=4)


INSTANCES_3 = ["proj__proj-101", "proj__proj-102", "proj__proj-103"]


class TestVerdictsRealShapes(unittest.TestCase):
    def run_both(self, files, argv_of, auc_extra=("--perms", "20", "--boot", "20")):
        """Both audits over `files` written to a temp folder: [(status, out, err)]."""
        with TempDir() as folder:
            paths = {name: write(folder, name, text) for name, text in files.items()}
            for name in list(paths):
                paths[os.path.dirname(name)] = os.path.join(folder, os.path.dirname(name))
            paths[""] = folder
            return [run("delivery_audit.py", argv_of(paths) + ["--boot", "0"]),
                    run(AUC, argv_of(paths) + list(auc_extra))]

    def test_a_gold_report_is_not_joined_to_another_models_runs(self):
        # SWE-bench names the report <model>.<run_id>.json: gold.<run>.json is the
        # harness's own gold-patch run. Joined on instance id alone it said 3 of 3.
        files = {"runs.csv": shaped_runs("coder-x-v1", INSTANCES_3),
                 "gold.fresh-run.json": run_report(INSTANCES_3, [])}
        for script, (status, out, err) in zip(
                ("delivery_audit.py", AUC),
                self.run_both(files, lambda p: [p["runs.csv"], "--verdicts",
                                                p["gold.fresh-run.json"]])):
            with self.subTest(script):
                assert_one_error(self, status, out, err, "model 'gold'",
                                 "gold.fresh-run.json", "'coder-x-v1'", "--any-model")
                assert_hints_exist(self, script, err)

    def test_any_model_joins_anyway_and_says_the_model_was_not_checked(self):
        files = {"runs.csv": shaped_runs("coder-x-v1", INSTANCES_3),
                 "gold.fresh-run.json": run_report(INSTANCES_3[:2], INSTANCES_3[2:])}
        with TempDir() as folder:
            paths = {n: write(folder, n, t) for n, t in files.items()}
            result = audit_json([paths["runs.csv"], "--verdicts", paths["gold.fresh-run.json"],
                                 "--any-model", "--boot", "0"])
        self.assertEqual((result["counts"]["tp"], result["counts"]["fp"]), (2, 1))
        self.assertIn("not checked (--any-model)", result["verdict_source"]["model_check"])
        self.assertIn("'gold'", result["verdict_source"]["model_check"])

    def test_the_runs_own_report_joins_on_model_and_instance(self):
        files = {"runs.csv": shaped_runs("coder-x-v1", INSTANCES_3),
                 "coder-x-v1.batch_1.json": run_report([], INSTANCES_3[:2], INSTANCES_3[2:])}
        with TempDir() as folder:
            paths = {n: write(folder, n, t) for n, t in files.items()}
            result = audit_json([paths["runs.csv"], "--verdicts",
                                 paths["coder-x-v1.batch_1.json"], "--boot", "0"])
        self.assertEqual(result["verdict_source"]["joined_on"], "model and instance id")
        self.assertEqual(result["grading_error_runs"], {"error": ["r2"]})
        self.assertEqual((result["counts"]["tp"], result["counts"]["fp"]), (0, 2))

    def test_a_folder_of_run_reports_joins_each_batch(self):
        # Two batches of one model: each report lists the other's instances (and
        # the rest of the dataset) as incomplete_ids, which is no verdict.
        dataset = INSTANCES_3 + ["proj__proj-104"]
        files = {"runs.csv": shaped_runs("coder-x-v1", INSTANCES_3),
                 "reports/coder-x-v1.batch_1.json": run_report(INSTANCES_3[:1], [],
                                                               dataset=dataset),
                 "reports/coder-x-v1.batch_2.json": run_report([], INSTANCES_3[1:],
                                                               dataset=dataset)}
        with TempDir() as folder:
            paths = {n: write(folder, n, t) for n, t in files.items()}
            result = audit_json([paths["runs.csv"], "--verdicts",
                                 os.path.join(folder, "reports"), "--boot", "0"])
        self.assertEqual(result["verdict_source"]["format"], "SWE-bench run report folder")
        self.assertEqual((result["counts"]["tp"], result["counts"]["fp"]), (1, 2))
        self.assertEqual(result["verdict_source"]["joined_on"], "model and instance id")

    def test_a_log_folder_of_another_model_names_both(self):
        files = {"runs.csv": shaped_runs("coder-x-v1", INSTANCES_3)}
        for iid in INSTANCES_3:
            files[f"logs/run_evaluation/batch_1/other-model/{iid}/report.json"] = \
                instance_report(iid, True)
        for script, (status, out, err) in zip(
                ("delivery_audit.py", AUC),
                self.run_both(files, lambda p: [p["runs.csv"], "--verdicts", os.path.join(
                    p[""], "logs", "run_evaluation", "batch_1")])):
            with self.subTest(script):
                assert_one_error(self, status, out, err, "'other-model'", "'coder-x-v1'",
                                 "3 of 3 runs", "--any-model")

    def test_an_sb_cli_report_names_no_model_and_the_report_says_so(self):
        report = json.loads(run_report(INSTANCES_3[:1], INSTANCES_3[1:]))
        del report["empty_patch_instances"], report["empty_patch_ids"]
        report.update({"pending_instances": 0, "failed_instances": 0, "pending_ids": [],
                       "failed_ids": []})
        name = "sb-cli-reports/swe-bench_verified__test__batch-7.json"
        with TempDir() as folder:
            runs = write(folder, "runs.csv", shaped_runs("coder-x-v1", INSTANCES_3))
            path = write(folder, name, json.dumps(report, indent=4))
            result = audit_json([runs, "--verdicts", path, "--boot", "0"])
            self.assertEqual(result["verdict_source"]["format"], "sb-cli report")
            self.assertEqual(result["verdict_source"]["model_check"],
                             "not checked: the report names no model (sb-cli run id "
                             "'batch-7')")
            self.assertEqual(result["counts"]["tp"], 1)
            status, out, err = run("delivery_audit.py", [runs, "--verdicts", path, "--boot",
                                                         "0", "--format", "markdown"])
            self.assertIn("model: not checked: the report names no model (sb-cli run id "
                          "'batch-7').", " ".join(out.split()))

    def test_flat_report_json_takes_its_instance_from_its_folder(self):
        # As published with SWE-bench's experiments: logs/<instance>/report.json,
        # the report itself not keyed by instance.
        files = {"runs.csv": shaped_runs("coder-x-v1", INSTANCES_3)}
        for iid, resolved in zip(INSTANCES_3, (True, False, True)):
            files[f"logs/{iid}/report.json"] = instance_report(iid, resolved, flat=True)
        with TempDir() as folder:
            paths = {n: write(folder, n, t) for n, t in files.items()}
            result = audit_json([paths["runs.csv"], "--verdicts", os.path.join(folder, "logs"),
                                 "--boot", "0"])
            self.assertEqual((result["counts"]["tp"], result["counts"]["fp"]), (2, 1))
            self.assertEqual(result["verdict_source"]["format"],
                             "SWE-bench logs/run_evaluation folder")
            d = load("delivery_audit.py")
            one = d.read_verdicts(d.Inputs(), paths[f"logs/{INSTANCES_3[1]}/report.json"])
            self.assertEqual([(r["instance_id"], r["verified"]) for r in one["records"]],
                             [(INSTANCES_3[1], False)])
            status, out, err = run("delivery_audit.py", ["-", "--verdicts", "-"],
                                   instance_report("x", True, flat=True).encode())
            self.assertEqual(status, 2)

    def test_an_instance_folder_with_only_patch_diff_is_unchecked(self):
        # The harness wrote patch.diff and stopped: no test ran, no report.json.
        root = "logs/run_evaluation/batch_1/coder-x-v1"
        files = {"runs.csv": shaped_runs("coder-x-v1", INSTANCES_3),
                 f"{root}/{INSTANCES_3[0]}/patch.diff": "diff --git a/x b/x\n",
                 f"{root}/{INSTANCES_3[1]}/patch.diff": "diff --git a/x b/x\n",
                 f"{root}/{INSTANCES_3[1]}/eval.sh": "#!/bin/bash\n",
                 f"{root}/{INSTANCES_3[1]}/test_output.txt": "collected 2 items\n",
                 f"{root}/{INSTANCES_3[1]}/report.json": instance_report(INSTANCES_3[1], False),
                 f"{root}/{INSTANCES_3[2]}/patch.diff": "diff --git a/x b/x\n",
                 f"{root}/{INSTANCES_3[2]}/report.json": instance_report(INSTANCES_3[2], True)}
        with TempDir() as folder:
            paths = {n: write(folder, n, t) for n, t in files.items()}
            result = audit_json([paths["runs.csv"], "--verdicts",
                                 os.path.join(folder, "logs", "run_evaluation", "batch_1"),
                                 "--boot", "0"])
        self.assertEqual(result["grading_error_runs"], {"error (no report.json)": ["r0"]})
        self.assertEqual((result["counts"]["tp"], result["counts"]["fp"]), (1, 1))
        self.assertEqual(result["verdict_source"]["joined_on"], "model and instance id")

    def test_verdicts_over_a_verified_column_say_how_many_disagree(self):
        report = {"coder-x-v1.batch_1.json": run_report(INSTANCES_3[:1], INSTANCES_3[1:])}
        files = {"runs.csv": shaped_runs("coder-x-v1", INSTANCES_3, ["no", "yes", "yes"]),
                 **report}
        results = self.run_both(files, lambda p: [p["runs.csv"], "--verdicts",
                                                  p["coder-x-v1.batch_1.json"], "--format",
                                                  "json"])
        delivery, auc = (json.loads(out) for _, out, _ in results)
        self.assertEqual(delivery["verdict_source"]["replaces"],
                         {"column": "verified", "runs_compared": 3, "disagree": 3,
                          "winner": "--verdicts"})
        self.assertEqual(delivery["counts"]["tp"], 1)
        self.assertIn("the table's own column 'verified' is set aside: --verdicts wins; the "
                      "two disagree on 3 of 3 runs both define", auc["notes"])
        self.assertNotIn("verified", [f["name"] for f in auc["features"]])
        with TempDir() as folder:
            paths = {n: write(folder, n, t) for n, t in files.items()}
            status, out, err = run("delivery_audit.py", [
                paths["runs.csv"], "--verdicts", paths["coder-x-v1.batch_1.json"], "--boot", "0"])
        self.assertIn("--verdicts wins; the two disagree on 3 of 3 runs both define",
                      " ".join(out.split()))

    def test_counts_needs_all_four_cells(self):
        for given, missing in (("tp=46,fp=22,fn=3", "tn"), ("tp=4,tn=2", "fp, fn")):
            with self.subTest(given):
                status, out, err = run("delivery_audit.py", ["--counts", given])
                assert_one_error(self, status, out, err, f"--counts: no {missing}",
                                 "all four cells")

    def test_counts_refuses_a_cell_given_twice(self):
        # The second tp silently replaced the first: tp=1,...,tp=3 audited tp=3, exit 0.
        status, out, err = run("delivery_audit.py", ["--counts", "tp=1,fp=1,fn=1,tn=1,tp=3"])
        assert_one_error(self, status, out, err, "--counts: tp is given twice (1 and 3)")


AGENT_VERDICTS = os.path.join(HERE, "examples", "verdicts", "agents")


def readme_commands(needle):
    """The README's shell commands (continuations joined) that mention `needle`."""
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as handle:
        text = handle.read().replace("\\\n", " ")
    found = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words and needle in line and words[0] == "python3":
                found.append(words[1:])
    return found


class TestShippedGraderExamples(unittest.TestCase):
    # model-a resolved (submitted), model-b unresolved (submitted), model-c an empty
    # patch (stopped at a cost limit: not submitted), model-d resolved (submitted; in
    # OpenHands its finish says task_completed partial: equivocal, read as not claiming).
    EXPECTED = {"swebench": ({"tp": 1, "fp": 1, "fn": 1, "tn": 1}, {}),
                "sb-cli-reports": ({"tp": 1, "fp": 1, "fn": 1, "tn": 1}, {}),
                "logs/run_evaluation/calc-eval": (
                    {"tp": 1, "fp": 1, "fn": 1, "tn": 0},
                    {"error (no report.json)": ["example__calc-1@model-c"]})}
    SUBMITTED = {"swebench": {"tp": 2, "fp": 1, "fn": 0, "tn": 1},
                 "sb-cli-reports": {"tp": 2, "fp": 1, "fn": 0, "tn": 1},
                 "logs/run_evaluation/calc-eval": {"tp": 2, "fp": 1, "fn": 0, "tn": 0}}

    def test_each_agent_folder_joins_each_shipped_report(self):
        for agent in ("swe-agent", "mini-swe-agent", "openhands"):
            for name, (counts, unchecked) in self.EXPECTED.items():
                counts = counts if agent == "openhands" else self.SUBMITTED[name]
                with self.subTest(agent=agent, report=name):
                    result = audit_json([os.path.join(HERE, "examples", "agents", agent),
                                         "--verdicts", os.path.join(AGENT_VERDICTS, name),
                                         "--boot", "0"])
                    self.assertEqual({k: result["counts"][k] for k in counts}, counts)
                    self.assertEqual(result.get("grading_error_runs", {}), unchecked)
                    self.assertEqual(result["verdict_source"]["joined_on"],
                                     "model and instance id")

    def test_the_readme_commands_run_as_written(self):
        commands = readme_commands("examples/verdicts/agents")
        self.assertEqual(len(commands), 3, commands)
        old = os.getcwd()
        os.chdir(HERE)
        try:
            for argv in commands:
                with self.subTest(argv):
                    status, out, err = run(argv[0], argv[1:] + (
                        ["--perms", "50", "--boot", "50"] if argv[0] == AUC else ["--boot", "0"]))
                    self.assertEqual(status, 0, err)
        finally:
            os.chdir(old)

    def test_the_generator_rewrites_the_shipped_files(self):
        with TempDir() as folder:
            target = os.path.join(folder, "examples")
            os.makedirs(os.path.join(target, "verdicts"))
            shutil.copy(os.path.join(HERE, "examples", "verdicts", "make_agent_verdicts.py"),
                        os.path.join(target, "verdicts"))
            shutil.copytree(os.path.join(HERE, "examples", "regrade"),
                            os.path.join(target, "regrade"))
            subprocess.run([sys.executable, os.path.join(target, "verdicts",
                                                         "make_agent_verdicts.py")],
                           check=True, capture_output=True, timeout=120)
            made = os.path.join(target, "verdicts", "agents")
            self.assertEqual(sorted(snapshot_bytes(made)), sorted(snapshot_bytes(AGENT_VERDICTS)))
            self.assertEqual(snapshot_bytes(made), snapshot_bytes(AGENT_VERDICTS))


def snapshot_bytes(folder):
    """{relative path: bytes} of every file below `folder`."""
    found = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as handle:
                found[os.path.relpath(path, folder)] = handle.read()
    return found


# --- The shared block: harness readers ---
def derived_rows(fmt, task_map=None):
    module = load("delivery_audit.py")
    inputs = module.Inputs()
    inputs.task_map = task_map
    derived = module.agent_output(inputs, os.path.join(AGENTS, fmt))
    return {row["run_id"]: row for row in derived["runs"].rows}, derived


def story_of(run_id):
    return CLAUDE_SESSIONS.get(run_id) or run_id.split("@")[1]


class TestAgentOutputMeasures(unittest.TestCase):
    def check_format(self, fmt, phases):
        rows, derived = derived_rows(fmt)
        self.assertEqual(len(rows), 4)
        for run_id, row in rows.items():
            story = story_of(run_id)
            with self.subTest(fmt=fmt, run=run_id):
                self.assertEqual(row["task_id"], "example__calc-1")
                self.assertEqual(tuple(row[c] for c in PHASE_COLUMNS), phases[story])
                counts = list(CALLS[story])
                if fmt == "swe-agent":
                    counts[5] += 1
                self.assertEqual(tuple(int(row[f"{c}_calls"]) for c in
                                       ("read", "edit", "search", "bash", "test", "other")),
                                 tuple(counts))
                self.assertEqual(int(row["tool_calls"]), sum(counts))
        return rows, derived

    def test_swe_agent_durations_only(self):
        rows, derived = self.check_format("swe-agent", SWE_AGENT)
        row = rows["example__calc-1@model-a"]
        self.assertEqual((row["cost_usd"], row["tokens_total"], row["claimed"],
                          row["submitted"]), ("0.5", "1100", "", "yes"))
        self.assertEqual(rows["example__calc-1@model-c"]["submitted"], "no")   # exit_cost
        self.assertEqual(len(derived["predictions"]), 4)

    def test_timestamped_formats(self):
        for fmt in ("mini-swe-agent", "openhands", "codex"):
            rows, _ = self.check_format(fmt, TIMED)
            # tokens_total = every turn: a 110+210+310+410+510 = 1550
            self.assertEqual(rows[next(r for r in rows if story_of(r) == "model-a")]
                             ["tokens_total"], "1550")
            self.assertEqual(rows[next(r for r in rows if story_of(r) == "model-a")]
                             ["turns"], "5")

    def test_claude_code_dedupes_repeated_message_entries(self):
        # Each call's message is written as two entries (text, then tool_use) with
        # one id and one usage: 5 turns and 1550 tokens, not 9 turns and 2650.
        # model-d is a stream-json log: no timestamps, so no phase seconds.
        timed = dict(TIMED, **{"model-d": ("", "", "", "110", "520", "1530", "1")})
        rows, _ = self.check_format("claude-code", timed)
        self.assertEqual((rows["synthetic-0a"]["turns"], rows["synthetic-0a"]["tokens_total"]),
                         ("5", "1550"))
        self.assertEqual(rows["synthetic-0d"]["cost_usd"], "0.75")   # the result line's

    def test_codex_counts_a_repeated_token_report_once(self):
        rows, _ = derived_rows("codex")
        self.assertEqual(rows["synthetic-0b"]["tokens_total"], "2160")  # 110 + ... + 610

    def test_openhands_claims_are_the_harness_own(self):
        # The finish action, refined by task_completed, is the harness's submission;
        # the claimed column (the seed's claim, a rating) stays blank.
        rows, _ = derived_rows("openhands")
        self.assertEqual([rows[r]["submitted"] for r in sorted(rows)],
                         ["yes", "yes", "no", "equivocal"])
        self.assertEqual({rows[r]["claimed"] for r in rows}, {""})

    def test_run_ids_and_models(self):
        rows, _ = derived_rows("mini-swe-agent")
        self.assertEqual(sorted(rows), [f"example__calc-1@model-{m}" for m in "abcd"])
        rows, _ = derived_rows("codex")
        self.assertEqual(sorted(rows), sorted(CLAUDE_SESSIONS))
        self.assertEqual({r["model"] for r in rows.values()}, {"gpt-synthetic"})

    def test_mini_swe_agent_format_1_commands_from_the_text(self):
        # Format 1 messages carry no extra: the command is the reply's one bash block,
        # and with no timestamps or usage the phase seconds and tokens are unknown.
        blocks = ["grep -rn clamp calc", "sed -i 's/low$/high/' calc/ops.py", "pytest -q"]
        messages = [{"role": "user", "content": "fix it"}] + [
            m for block in blocks for m in (
                {"role": "assistant", "content": f"Next.\n```bash\n{block}\n```"},
                {"role": "user", "content": "<returncode>0</returncode>"})]
        with TempDir() as folder:
            write(folder, "x__y-1/x__y-1.traj.json", json.dumps(
                {"info": {"exit_status": "Submitted", "submission": ""},
                 "messages": messages}))
            rows, _ = derived_rows(folder)
        row = rows["x__y-1"]
        self.assertEqual([row[f"{c}_calls"] for c in ("search", "edit", "test", "bash")],
                         ["1", "1", "1", "0"])
        self.assertEqual(tuple(row[c] for c in PHASE_COLUMNS), ("",) * 6 + ("1",))
        self.assertEqual((row["turns"], row["tokens_total"]), ("3", ""))

    def test_swe_agent_older_flat_layout_with_all_preds(self):
        with TempDir() as folder:
            shutil.copy(os.path.join(AGENTS, "swe-agent", "model-a", "example__calc-1",
                                     "example__calc-1.traj"), folder)
            write(folder, "all_preds.jsonl", json.dumps(
                {"instance_id": "example__calc-1", "model_name_or_path": "gpt4__old",
                 "model_patch": ""}) + "\n")
            rows, _ = derived_rows(folder)
        self.assertEqual(sorted(rows), ["example__calc-1@gpt4__old"])

    def test_command_rules(self):
        category = load("delivery_audit.py").command_category
        cases = {"tox -e py39": "test", "python3 -m unittest -v": "test",
                 "./tests/runtests.py basic": "test", "cd /r && pytest -x": "test",
                 "perl -pi -e 's/a/b/' x.py": "edit", "git apply fix.diff": "edit",
                 "echo x >> notes/todo.txt": "edit", "python x.py > /dev/null": "bash",
                 "rg clamp": "search", "cd src; find . -name '*.py'": "search",
                 "head -n 5 a.py": "read", "sed -n 1,5p a.py": "read",
                 "python -c 'import x; x.find(1)'": "bash", "pip install -e .": "bash"}
        for command, expected in cases.items():
            self.assertEqual(category(command), expected, command)

    def test_make_agents_rebuilds_the_committed_samples(self):
        with TempDir() as folder:
            shutil.copytree(AGENTS, os.path.join(folder, "agents"))
            shutil.copytree(REGRADE_EXAMPLE, os.path.join(folder, "regrade"))
            before = {}
            for root, _, files in os.walk(os.path.join(folder, "agents")):
                for name in files:
                    with open(os.path.join(root, name), "rb") as handle:
                        before[os.path.join(root, name)] = handle.read()
            subprocess.run([sys.executable, os.path.join(folder, "agents", "make_agents.py")],
                           check=True, capture_output=True, timeout=60)
            for path, data in before.items():
                with open(path, "rb") as handle:
                    self.assertEqual(handle.read(), data, path)


def copy_sample(fmt, folder, drop=()):
    target = os.path.join(folder, fmt)
    shutil.copytree(os.path.join(AGENTS, fmt), target)
    for name in drop:
        os.remove(os.path.join(target, name))
    return target


class TestAgentOutputErrors(unittest.TestCase):
    def assert_refused(self, argv, *needles, script="delivery_audit.py"):
        if script == "regrade.py":
            argv = [os.path.join(REGRADE_EXAMPLE, "instances.jsonl")] + argv + [
                "--repo", os.path.join(REGRADE_EXAMPLE, "calc.bundle")]
        with TempDir() as out:
            target = os.path.join(out, "derived")
            status, stdout, stderr = run(script, argv + ["--write-runs", target])
            self.assertEqual(status, 2, stderr)
            self.assertEqual(len(stderr.splitlines()), 1, stderr)
            self.assertTrue(stderr.startswith("error: "), stderr)
            for needle in needles:
                self.assertIn(needle, stderr)
            self.assertEqual(stdout, "")
            self.assertFalse(os.path.exists(target))

    def edit_json(self, path, change):
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        change(data)
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(data, handle)

    def test_trajectory_missing_a_field(self):
        with TempDir() as folder:
            root = copy_sample("swe-agent", folder)
            traj = os.path.join(root, "model-b", "example__calc-1", "example__calc-1.traj")
            self.edit_json(traj, lambda d: d.pop("info"))
            self.assert_refused([root], traj + ": no field 'info'")
            root = copy_sample("mini-swe-agent", folder)
            traj = os.path.join(root, "model-a", "example__calc-1", "example__calc-1.traj.json")
            self.edit_json(traj, lambda d: d["messages"][3].pop("role"))
            self.assert_refused([root], traj + ", messages[3]: no field 'role'")

    def test_truncated_jsonl_line(self):
        with TempDir() as folder:
            root = copy_sample("openhands", folder)
            path = os.path.join(root, "model-c", "output.jsonl")
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            write(root, "model-c/output.jsonl", text[:len(text) // 2])
            for script in SCRIPTS:
                self.assert_refused([root], path + " line 1: not valid JSON", script=script)
            root = copy_sample("claude-code", folder)
            path = os.path.join(root, "synthetic-0b.jsonl")
            with open(path, encoding="utf-8") as handle:
                lines = handle.read().splitlines()
            write(root, "synthetic-0b.jsonl", "\n".join(lines[:-1] + [lines[-1][:30]]) + "\n")
            self.assert_refused([root], f"{path} line {len(lines)}: not valid JSON")

    def test_transcript_with_no_task_mapping(self):
        # Without a map each session is its own task, and both reports say so.
        for fmt in ("claude-code", "codex"):
            with TempDir() as folder:
                root = copy_sample(fmt, folder, drop=("runs.csv",))
                rows, _ = derived_rows(root)
                self.assertEqual({r: row["task_id"] for r, row in rows.items()},
                                 {r: r for r in rows})
                status, out, err = run("auc_audit.py", [root, "--verdicts", os.path.join(
                    root, "verdicts.csv"), "--perms", "99", "--boot", "99"])
                self.assertEqual(status, 0, err)
                self.assertIn(f"4 runs ({fmt}) name no task, so each is its own task",
                              " ".join(out.split()))

    def test_task_map_names_the_tasks(self):
        with TempDir() as folder:
            root = copy_sample("claude-code", folder, drop=("runs.csv",))
            task_map = write(folder, "tasks.csv", "session_id,task_id\n" + "".join(
                f"{s},example__calc-1\n" for s in CLAUDE_SESSIONS))
            rows, _ = derived_rows(os.path.relpath(root, AGENTS), task_map)
            self.assertEqual({r["task_id"] for r in rows.values()}, {"example__calc-1"})
            self.assertEqual({r["claimed"] for r in rows.values()}, {""})   # never guessed

    def test_swe_agent_step_without_a_duration(self):
        # One step's execution_time missing: the phase seconds are unknown, not zero.
        with TempDir() as folder:
            root = copy_sample("swe-agent", folder)
            traj = os.path.join(root, "model-a", "example__calc-1", "example__calc-1.traj")
            self.edit_json(traj, lambda d: d["trajectory"][0].pop("execution_time"))
            rows, _ = derived_rows(os.path.relpath(root, AGENTS))
            row = rows["example__calc-1@model-a"]
            self.assertEqual(tuple(row[c] for c in PHASE_COLUMNS), ("",) * 6 + ("1",))
            self.assertEqual(rows["example__calc-1@model-b"]["orient_seconds"], "5")

    def test_write_runs_needs_agent_output(self):
        with TempDir() as folder:
            status, _, stderr = run("delivery_audit.py", [EXAMPLE_RUNS, "--boot", "0",
                                                          "--write-runs", folder + "/x"])
            self.assertEqual(status, 2)
            self.assertIn("is not agent output", stderr)
            self.assertFalse(os.path.exists(folder + "/x"))

    def test_openhands_v1_events_are_named_not_misread(self):
        with TempDir() as folder:
            path = write(folder, "output.jsonl", json.dumps(
                {"instance_id": "x__y-1", "history": [
                    {"kind": "ActionEvent", "timestamp": "2026-01-05T12:00:00"}]}) + "\n")
            self.assert_refused([folder], path + " line 1, history[0]", "V1")

    def test_side_table_row_that_matches_no_run(self):
        with TempDir() as folder:
            root = copy_sample("codex", folder)
            with open(os.path.join(root, "runs.csv"), "a", encoding="utf-8") as handle:
                handle.write("synthetic-0z,example__calc-1,yes\n")
            self.assert_refused([root], "runs.csv row 6, column 'run_id'", "synthetic-0z")

    def test_side_table_that_disagrees(self):
        with TempDir() as folder:
            root = copy_sample("openhands", folder)
            write(root, "runs.csv", "run_id,model\nexample__calc-1@model-c,model-x\n")
            self.assert_refused([root], "runs.csv row 2, column 'model'", "disagrees")

    def test_regrade_refuses_transcripts_without_diffs(self):
        status, _, stderr = run("regrade.py", [
            os.path.join(REGRADE_EXAMPLE, "instances.jsonl"), os.path.join(AGENTS, "codex"),
            "--repo", os.path.join(REGRADE_EXAMPLE, "calc.bundle")])
        self.assertEqual(status, 2)
        self.assertIn("carries no diff", stderr)


def without_provenance(text, *names):
    data = json.loads(text)
    data.pop("provenance", None)
    text = json.dumps(data, sort_keys=True)
    relative = load("delivery_audit.py").relative_path    # how reports now show paths
    for name in names:
        for form in (relative(name), name):
            text = text.replace(json.dumps(form)[1:-1], "RUNS")
    return text


class TestAgentOutputPipeline(unittest.TestCase):
    def regrade(self, fmt, out):
        status, _, stderr = run("regrade.py", [
            os.path.join(REGRADE_EXAMPLE, "instances.jsonl"), os.path.join(AGENTS, fmt),
            "--repo", os.path.join(REGRADE_EXAMPLE, "calc.bundle"), "--out", out,
            "--write-runs", os.path.join(out, "flat")])
        self.assertEqual(status, 0, stderr)
        with open(os.path.join(out, "verdicts.csv"), encoding="utf-8") as handle:
            return handle.read()

    def test_trajectories_regrade_and_both_audits(self):
        expected = ("run_id,instance_id,completed,status\n"
                    "example__calc-1@model-a,example__calc-1,true,resolved\n"
                    "example__calc-1@model-b,example__calc-1,false,unresolved\n"
                    "example__calc-1@model-c,example__calc-1,false,unresolved\n"
                    "example__calc-1@model-d,example__calc-1,true,resolved\n")
        with TempDir() as out:
            for fmt in ("swe-agent", "mini-swe-agent", "openhands"):
                folder = os.path.join(AGENTS, fmt)
                verdicts = os.path.join(out, fmt, "verdicts.csv")
                self.assertEqual(self.regrade(fmt, os.path.join(out, fmt)), expected, fmt)
                status, text, stderr = run("delivery_audit.py", [
                    folder, "--verdicts", verdicts, "--boot", "0", "--format", "json"])
                self.assertEqual(status, 0, stderr)
                # claims yes, yes, no, equivocal against verified a, d: tp 1 (a),
                # fp 1 (b), and c, d not claiming; SWE-agent and mini-swe-agent record
                # d's submission as a plain yes: tp 2 (a, d)
                self.assertEqual([json.loads(text)["counts"][k] for k in ("tp", "fp", "fn", "tn")],
                                 [1, 1, 1, 1] if fmt == "openhands" else [2, 1, 0, 1])
                status, _, stderr = run("auc_audit.py", [folder, "--verdicts", verdicts,
                                                         "--perms", "50", "--boot", "50"])
                self.assertEqual(status, 0, stderr)
                # regrade.py --write-runs writes what the audits derive, byte for byte
                run("delivery_audit.py", [folder, "--verdicts", verdicts, "--boot", "0",
                                          "--write-runs", os.path.join(out, fmt, "audit")])
                for name in ("runs.csv", "tool_calls.csv", "predictions.jsonl"):
                    with open(os.path.join(out, fmt, "flat", name), "rb") as one, \
                            open(os.path.join(out, fmt, "audit", name), "rb") as other:
                        self.assertEqual(one.read(), other.read(), (fmt, name))
        for fmt in ("claude-code", "codex"):
            folder = os.path.join(AGENTS, fmt)
            for script in ("delivery_audit.py", "auc_audit.py"):
                status, _, stderr = run(script, [folder, "--verdicts",
                                                 os.path.join(folder, "verdicts.csv"),
                                                 "--boot", "50"])
                self.assertEqual(status, 0, (fmt, script, stderr))

    def test_predictions_keyed_by_instance_get_the_same_run_id(self):
        with TempDir() as out:
            status, _, stderr = run("regrade.py", [
                os.path.join(REGRADE_EXAMPLE, "instances.jsonl"),
                os.path.join(AGENTS, "swe-agent", "model-b", "preds.json"),
                "--repo", os.path.join(REGRADE_EXAMPLE, "calc.bundle"), "--out", out])
            self.assertEqual(status, 0, stderr)
            with open(os.path.join(out, "verdicts.csv"), encoding="utf-8") as handle:
                self.assertIn("example__calc-1@model-b,", handle.read())

    def test_auc_family_is_the_derived_measures(self):
        module = load("auc_audit.py")
        with TempDir() as out:
            verdicts = write(out, "v.csv", "run_id,completed\n" + "".join(
                f"{s},{'true' if s[-1] in 'ad' else 'false'}\n" for s in CLAUDE_SESSIONS))
            status, text, stderr = run("auc_audit.py", [os.path.join(AGENTS, "codex"),
                                                        "--verdicts", verdicts, "--perms", "20",
                                                        "--boot", "20", "--format", "json"])
        self.assertEqual(status, 0, stderr)
        data = json.loads(text)
        names = [f["name"] for f in data["features"]] + [d["name"] for d in data["degenerate"]]
        self.assertEqual(sorted(names), sorted(module.PROCESS_MEASURES))
        self.assertEqual(data["baseline"]["name"], "tool_calls")

    def test_write_runs_then_audit_the_flat_tables_to_the_same_figures(self):
        with TempDir() as out:
            for fmt in AGENT_FORMATS:
                folder = os.path.join(AGENTS, fmt)
                flat = os.path.join(out, fmt)
                verdicts = write(out, f"{fmt}.csv", "run_id,completed\n" + "".join(
                    f"{r},{'true' if story_of(r) in ('model-a', 'model-d') else 'false'}\n"
                    for r in derived_rows(fmt)[0]))
                for script, extra in (("delivery_audit.py", ["--boot", "50"]),
                                      ("auc_audit.py", ["--perms", "50", "--boot", "50"])):
                    argv = ["--verdicts", verdicts, "--format", "json"] + extra
                    first = run(script, [folder, "--write-runs", flat] + argv)
                    second = run(script, [flat] + argv)
                    self.assertEqual(first[0], 0, first[2])
                    names = (folder + " (tool calls)", os.path.join(flat, "tool_calls.csv"),
                             os.path.join(flat, "runs.csv"), folder)
                    self.assertEqual(without_provenance(first[1], *names),
                                     without_provenance(second[1], *names), (fmt, script))
                written = {}
                for name in os.listdir(flat):
                    with open(os.path.join(flat, name), "rb") as handle:
                        written[name] = handle.read()
                again = os.path.join(out, fmt + "-again")
                run("delivery_audit.py", [folder, "--verdicts", verdicts, "--boot", "0",
                                          "--write-runs", again])
                for name, data in written.items():
                    with open(os.path.join(again, name), "rb") as handle:
                        self.assertEqual(handle.read(), data, (fmt, name))
                self.assertEqual("predictions.jsonl" in written,
                                 fmt in ("swe-agent", "mini-swe-agent", "openhands"))


# Synthetic samples shaped like what the harnesses really wrote (the field names,
# nesting and messages of each tool's own output; the text is made up). Every count
# below is worked out by hand from the sample, never by the code under test.
def mini_v1_trajectory(replies, model="synthetic/model-x"):
    """A mini-swe-agent 1.x trajectory (trajectory_format mini-swe-agent-1): no
    extra.actions or timestamps, the command in the reply's text, usage per response.
    `replies` are (text, observation) pairs; the last observation is the diff."""
    messages = [{"role": "system", "content": "You are a synthetic helper."},
                {"role": "user", "content": "<pr_description>synthetic</pr_description>"}]
    for k, (text, observation) in enumerate(replies):
        messages.append({"role": "assistant", "content": text, "extra": {"response": {
            "id": f"gen-{k}", "usage": {"prompt_tokens": 100, "completion_tokens": 10}}}})
        messages.append({"role": "user", "content": observation})
    info = {"exit_status": "Submitted", "submission": "diff --git a/x b/x\n",
            "model_stats": {"instance_cost": 0.1, "api_calls": len(replies)},
            "mini_version": "1.15.0", "config": {"model": {"model_name": model}}}
    return {"info": info, "messages": messages, "trajectory_format": "mini-swe-agent-1"}


def bash(command, thought="THOUGHT: next."):
    return f"{thought}\n\n```bash\n{command}\n```"


FORMAT_ERROR = ("Please always provide EXACTLY ONE action in triple backticks, found 2 "
                "actions.\n\nPlease format your action in triple backticks.")
OK = "<returncode>0</returncode>\n<output>\n</output>"
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"


def mini_run(extra_reads=0, refused=True):
    """One synthetic run: a read, a refused two-block reply (sed -i and a heredoc into a
    file), a read, the edit that ran, a test, extra reads, the submission."""
    replies = [(bash("cat app/core.py"), OK)]
    if refused:
        replies.append((bash("sed -i 's/a/b/' app/core.py") + "\n\nOr:\n\n" +
                        bash("cat <<'EOF' > fix.py\nprint(1)\nEOF"), FORMAT_ERROR))
    replies += [(bash("nl -ba app/core.py | sed -n '1,9p'"), OK),
                (bash("sed -i 's/a/b/' app/core.py"), OK),
                (bash("python -m pytest tests -q"), "<returncode>1</returncode>")]
    replies += [(bash(f"head -n 5 app/m{k}.py"), OK) for k in range(extra_reads)]
    return replies + [(bash(SUBMIT), "diff --git a/app/core.py b/app/core.py\n")]


class TestRealShapeMiniSweAgent(unittest.TestCase):
    def test_a_format_error_reply_ran_nothing(self):
        # mini-swe-agent runs a reply only when it holds exactly one ```bash block: the
        # two-block reply (a sed -i and a heredoc into fix.py) is a format error.
        with TempDir() as folder:
            write(folder, "x__y-1/x__y-1.traj.json", json.dumps(mini_v1_trajectory(
                mini_run())))
            rows, derived = derived_rows(folder)
        row = rows["x__y-1@synthetic/model-x"]
        # ran: cat (read), nl|sed -n (read), sed -i (edit), pytest (test), submit (bash)
        self.assertEqual({c: row[c] for c in ("tool_calls", "attempted_calls", "failed_calls",
                                              "read_calls", "edit_calls", "test_calls",
                                              "bash_calls", "turns")},
                         {"tool_calls": "5", "attempted_calls": "7", "failed_calls": "2",
                          "read_calls": "2", "edit_calls": "1", "test_calls": "1",
                          "bash_calls": "1", "turns": "6"})
        self.assertEqual(len(derived["tool_calls"].rows), 5)     # only what ran
        self.assertEqual((row["tokens_total"], row["tokens_source"]),
                         ("660", "responses' usage summed"))     # 6 responses x 110

    def test_the_trajectory_own_action_regex_is_the_rule(self):
        # A config that parses ```sh blocks: the one such block ran, bash blocks are text.
        data = mini_v1_trajectory([("```sh\ncat a.py\n```\n```bash\nls\n```", OK),
                                   (bash(SUBMIT), "diff")])
        data["info"]["config"]["agent"] = {"action_regex": r"```sh\s*\n(.*?)\n```"}
        with TempDir() as folder:
            write(folder, "x__y-1/x__y-1.traj.json", json.dumps(data))
            row = derived_rows(folder)[0]["x__y-1@synthetic/model-x"]
        self.assertEqual((row["tool_calls"], row["read_calls"], row["failed_calls"]),
                         ("1", "1", "0"))

    def test_baseline_auc_counts_what_ran(self):
        # Four runs; the two that succeed made format errors. Executed calls: a 5+2=7,
        # b 5+1=6 (successes), c 5+3=8, d 5+0=5 (failures); with the refused replies the
        # successes count 9 and 8. AUC by pair counting, higher count = success:
        #   executed  (7>8? 0, 7>5 1, 6>8 0, 6>5 1) = 2/4 -> 0.5 either direction
        #   attempted (9>8 1, 9>5 1, 8>8 1/2, 8>5 1) = 3.5/4 = 0.875
        runs = {"a": mini_run(2), "b": mini_run(1), "c": mini_run(3, refused=False),
                "d": mini_run(0, refused=False)}
        with TempDir() as folder:
            for name, replies in runs.items():
                write(folder, f"x__{name}-1/x__{name}-1.traj.json",
                      json.dumps(mini_v1_trajectory(replies)))
            verdicts = write(folder, "verdicts.csv", "instance_id,completed\n"
                             "x__a-1,true\nx__b-1,true\nx__c-1,false\nx__d-1,false\n")
            status, text, stderr = run("auc_audit.py", [folder, "--verdicts", verdicts,
                                                        "--perms", "20", "--boot", "20",
                                                        "--format", "json"])
        self.assertEqual(status, 0, stderr)
        self.assertAlmostEqual(json.loads(text)["baseline"]["auc"], 0.5, places=12)


def claude_stream_log(session="synthetic-s1"):
    """A `claude -p --output-format stream-json --verbose` log as 2.1.x writes it: one
    line per content block, each repeating the message's streaming usage (output 8, a
    placeholder), a Write refused before it ran, a Bash that ran and exited 1, and the
    result line holding the session's real usage."""
    lines = [{"type": "system", "subtype": "init", "session_id": session,
              "model": "claude-synthetic", "tools": ["Bash", "Read", "Write"]}]

    def message(k, *blocks):
        usage = {"input_tokens": 2, "cache_creation_input_tokens": 100,
                 "cache_read_input_tokens": 1000, "output_tokens": 8}
        for block in blocks:
            lines.append({"type": "assistant", "session_id": session, "message": {
                "id": f"msg_{k}", "role": "assistant", "model": "claude-synthetic",
                "stop_reason": None, "usage": usage, "content": [block]}})

    def result(tool_use_id, content, is_error):
        lines.append({"type": "user", "session_id": session, "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_use_id,
                                         "content": content, "is_error": is_error}]}})
    message(0, {"type": "thinking", "thinking": "synthetic"},
            {"type": "tool_use", "id": "t0", "name": "Read", "input": {"file_path": "/r/a"}})
    result("t0", "1\tsynthetic", None)
    message(1, {"type": "tool_use", "id": "t1", "name": "Write",
                "input": {"file_path": "/r/b.md", "content": "x"}})
    result("t1", "<tool_use_error>File has not been read yet. Read it first before "
                 "writing to it.</tool_use_error>", True)
    message(2, {"type": "tool_use", "id": "t2", "name": "Bash",
                "input": {"command": "git add b.md && git commit -m \"$(cat <<'EOF'\n"
                                     "Add b (see cat notes)\nEOF\n)\""}})
    result("t2", "Exit code 1\nnothing to commit", True)
    message(3, {"type": "text", "text": "Nothing to do."})
    lines.append({"type": "result", "subtype": "success", "is_error": False,
                  "num_turns": 5, "result": "Nothing to do.", "session_id": session,
                  "total_cost_usd": 0.25, "permission_denials": [],
                  "usage": {"input_tokens": 8, "cache_creation_input_tokens": 400,
                            "cache_read_input_tokens": 4000, "output_tokens": 777}})
    return "".join(json.dumps(line) + "\n" for line in lines)


def claude_transcript(session="synthetic-t1"):
    """A Claude Code 2.1.14 session transcript: the same placeholders (stop_reason null)
    and no result line, so no record of the output tokens exists."""
    entries, second = [], 0
    for k, command in enumerate(["cat src/a.py", "git add a.py && git commit -m \"$(cat "
                                 "<<'EOF'\nFix a\n\nCo-Authored-By: synthetic\nEOF\n)\"",
                                 "pip install -e . && python setup.py develop"]):
        second += 10
        entries.append({"type": "assistant", "sessionId": session, "isSidechain": False,
                        "timestamp": f"2026-01-05T12:00:{second:02d}.000Z", "message": {
                            "id": f"msg_{k}", "role": "assistant", "stop_reason": None,
                            "model": "claude-synthetic",
                            "usage": {"input_tokens": 3, "output_tokens": 1},
                            "content": [{"type": "tool_use", "id": f"t{k}", "name": "Bash",
                                         "input": {"command": command}}]}})
        entries.append({"type": "user", "sessionId": session, "isSidechain": False,
                        "timestamp": f"2026-01-05T12:00:{second + 1:02d}.000Z", "message": {
                            "role": "user", "content": [{"type": "tool_result",
                                                         "tool_use_id": f"t{k}",
                                                         "content": "ok", "is_error": False}]}})
    entries.append({"type": "assistant", "sessionId": session, "isSidechain": False,
                    "timestamp": "2026-01-05T12:00:59.000Z", "message": {
                        "id": "msg_end", "role": "assistant", "stop_reason": None,
                        "usage": {"input_tokens": 3, "output_tokens": 1},
                        "content": [{"type": "text", "text": "Done."}]}})
    return "".join(json.dumps(entry) + "\n" for entry in entries)


class TestRealShapeClaudeCode(unittest.TestCase):
    def derive(self, name, text, session):
        with TempDir() as folder:
            write(folder, name, text)
            task_map = write(folder, "map.csv", f"session_id,task_id\n{session},x__y-1\n")
            return derived_rows(folder, task_map)[0][session]

    def test_stream_json_tokens_from_the_result_line(self):
        row = self.derive("lead.jsonl", claude_stream_log(), "synthetic-s1")
        # the result line: 8 + 400 + 4000 in, 777 out (the messages' 4 x 8 = 32 out
        # are streaming placeholders)
        self.assertEqual((row["tokens_in"], row["tokens_out"], row["tokens_source"]),
                         ("4408", "777", "result line"))
        # Read ran; Write was refused before it ran; the Bash ran (and exited 1)
        self.assertEqual({c: row[c] for c in ("attempted_calls", "failed_calls", "tool_calls",
                                              "read_calls", "edit_calls", "bash_calls")},
                         {"attempted_calls": "3", "failed_calls": "1", "tool_calls": "2",
                          "read_calls": "1", "edit_calls": "0", "bash_calls": "1"})

    def test_transcript_placeholders_leave_output_unknown(self):
        row = self.derive("t.jsonl", claude_transcript(), "synthetic-t1")
        self.assertEqual((row["tokens_in"], row["tokens_out"], row["tokens_total"]),
                         ("12", "", ""))
        self.assertIn("placeholders", row["tokens_source"])
        # cat src/a.py is the one read: git add/commit with a heredoc message, pip
        # install and python setup.py are bash
        self.assertEqual((row["read_calls"], row["bash_calls"], row["tool_calls"]),
                         ("1", "2", "3"))

    def test_a_permission_denial_never_ran(self):
        text = claude_stream_log().replace('"permission_denials": []',
                                           '"permission_denials": [{"tool_name": "Read", '
                                           '"tool_use_id": "t0", "tool_input": {}}]')
        row = self.derive("lead.jsonl", text, "synthetic-s1")
        self.assertEqual((row["failed_calls"], row["read_calls"]), ("2", "0"))


class CommandCases:
    """A mixin: each of the class's CASES, {command: category}, is read by command_category."""
    CASES = {}

    def test_commands_by_what_they_run(self):
        category = load("delivery_audit.py").command_category
        self.assertTrue(self.CASES)
        for command, expected in self.CASES.items():
            self.assertEqual(category(command), expected, command)


class TestRealShapeShellCommands(CommandCases, unittest.TestCase):
    CASES = {
        "git commit -m \"$(cat <<'EOF'\nFix (cat a.py)\nEOF\n)\"": "bash",
        "git add -A && git commit -m x": "bash", "pip install -e .": "bash",
        "python setup.py build_ext -i": "bash", "env X=1 pytest -q": "test",
        "X=1 Y=2 python -m pytest": "test", "cd src && cat a.py": "read",
        "sudo -u me timeout -s 9 60 ./tests/runtests.py": "test",
        "cat <<'EOF' > t.py\nimport pytest\npytest.main()\nEOF": "edit",
        "echo `head -n 3 a.py`": "read", "ls -R d | grep ops.py": "search",
        "pip list | grep six": "bash", "find . -name '*.py' | xargs grep -l x": "search",
        "bash -lc 'sed -i s/a/b/ f.py'": "edit", "ls tests/runtests.py": "read",
        "for f in *.py; do wc -l \"$f\"; done": "read", "grep -A 3 x": "bash",
        "grep -A 3 x a.py": "search", "perl -Mstrict -e 'print 1'": "bash",
        "npm run test": "test", "git -C repo grep clamp": "search",
        "python x.py > out/log.txt 2>&1": "edit", "cat a.py 2>/dev/null || true": "read"}

    def test_the_manual_prints_the_one_table(self):
        module = load("delivery_audit.py")
        text = module.build_parser().format_help()
        for category, programs, when in module.SHELL_RULES:
            self.assertRegex(text, rf"\n +{category} +{re.escape(when)} +"
                                   rf"{re.escape(programs)}\n")


class TestEditsAndTestsThroughOtherTools(CommandCases, unittest.TestCase):
    # Shaped like mini-swe-agent 2.x runs that edit only through an inline program, and
    # SWE-agent runs on a Java benchmark (mvn, gradle): commands written for this test.
    CASES = {
        "python - <<'PY'\nfrom pathlib import Path\np = Path('pkg/mod.py')\n"
        "s = p.read_text()\np.write_text(s.replace('a', 'b'))\nPY": "edit",
        "python3 - <<'PY'\nimport re\nwith open('pkg/mod.py', 'w') as f:\n"
        "    f.write('x')\nPY": "edit",
        "python -c \"open('a.py', 'a').write('x = 1')\"": "edit",
        "python -c \"import shutil; shutil.copy('a.py', 'b.py')\"": "edit",
        "python -c \"import shutil; shutil.move('a.py', 'b.py')\"": "edit",
        "python -c \"import os; os.replace('a.tmp', 'a.py')\"": "edit",
        "python - <<'PY'\np = __import__('pathlib').Path('x.bin')\n"
        "p.write_bytes(b'1')\nPY": "edit",
        "perl -e 'open(my $fh, \">\", \"f.txt\"); print $fh 1'": "edit",
        "node -e \"require('fs').writeFileSync('a.js', 'x')\"": "edit",
        "python - <<'PY'\nprint(open('pkg/mod.py').read())\nPY": "bash",
        "python -c \"print(open('a.py', 'rb').read())\"": "bash",
        "git commit -m \"$(cat <<'EOF'\nopen(x, 'w')\nEOF\n)\"": "bash",
        "mvn test": "test", "mvn -q clean test -Dtest=JsonParserTest": "test",
        "./mvnw -B -pl core test": "test", "gradle test": "test",
        "./gradlew test --info": "test", "./gradlew :core:test": "test",
        "mvn -q compile": "bash", "./gradlew build -x test": "bash",
        "uv run pytest -q": "test", "poetry run pytest tests": "test",
        "hatch run pytest": "test", "tox -e py39": "test"}

    def test_a_run_that_edits_only_through_a_script_gets_its_phase_split(self):
        # mini-swe-agent 2.x shape: actions in extra, epoch timestamps in extra.
        edit = ("python - <<'PY'\nfrom pathlib import Path\np = Path('pkg/mod.py')\n"
                "p.write_text(p.read_text().replace('a', 'b'))\nPY")
        steps = [("cat pkg/mod.py", 10, 12), (edit, 20, 21), ("python -m pytest -q", 30, 35)]
        messages = [{"role": "system", "content": "s"},
                    {"role": "user", "content": "fix it", "extra": {"timestamp": 1000}}]
        for command, start, end in steps:
            messages += [{"role": "assistant", "content": "next",
                          "extra": {"actions": [{"command": command}], "timestamp": 1000 + start}},
                         {"role": "tool", "content": "ok", "extra": {"timestamp": 1000 + end}}]
        messages.append({"role": "exit", "content": "",
                         "extra": {"exit_status": "Submitted", "timestamp": 1040}})
        with TempDir() as folder:
            write(folder, "a__b-1/a__b-1.traj.json", json.dumps(
                {"info": {"exit_status": "Submitted", "submission": "diff",
                          "mini_version": "2.2.4"}, "messages": messages,
                 "trajectory_format": "mini-swe-agent-1.1"}))
            rows, _ = derived_rows(folder)
        row = rows["a__b-1"]
        # by hand: first edit starts at 20 (orient 20 - 0), ends at 21 (impl 1),
        # the run's last timestamp is 40 (verify 19); a test follows the edit
        self.assertEqual((row["edit_calls"], row["test_calls"]), ("1", "1"))
        self.assertEqual(tuple(row[c] for c in ("orient_seconds", "impl_seconds",
                                                "verify_seconds", "ran_tests_after_last_edit")),
                         ("20", "1", "19", "1"))


class TestRealShapeSweAgentAndOpenHands(unittest.TestCase):
    def test_swe_agent_edits_it_did_not_apply(self):
        # 0.x: the linting edit reverts ("Your changes have NOT been applied"); 1.x
        # str_replace_editor: "No replacement was performed". Neither edited.
        steps = [("open app.py", "[File: /r/app.py (9 lines total)]"),
                 ("edit 2:2\n  x = 1\nend_of_edit", "Your proposed edit has introduced new "
                  "syntax error(s). Please understand the fixes and retry your edit command."
                  "\n\nYour changes have NOT been applied."),
                 ("str_replace_editor str_replace /r/app.py --old_str a --new_str b",
                  "No replacement was performed, old_str `a` did not appear verbatim in "
                  "/r/app.py."),
                 ("edit 2:2\n    x = 1\nend_of_edit", "[File: /r/app.py (9 lines total)]"),
                 ("submit", "diff --git a/app.py b/app.py\n")]
        traj = {"environment": "synthetic", "history": [], "info": {
            "exit_status": "submitted", "submission": "diff --git a/app.py b/app.py\n",
            "model_stats": {"instance_cost": 0.5, "tokens_sent": 900, "tokens_received": 90,
                            "api_calls": 5}},
                "trajectory": [{"action": a, "observation": o, "response": "", "thought": "",
                                "state": ""} for a, o in steps]}
        with TempDir() as folder:
            write(folder, "x__y-1.traj", json.dumps(traj))
            row = derived_rows(folder)[0]["x__y-1"]
        self.assertEqual({c: row[c] for c in ("attempted_calls", "failed_calls", "tool_calls",
                                              "edit_calls", "read_calls", "tokens_source")},
                         {"attempted_calls": "5", "failed_calls": "2", "tool_calls": "3",
                          "edit_calls": "1", "read_calls": "1", "tokens_source": "model_stats"})

    def test_openhands_editor_errors_and_refused_calls(self):
        def event(k, second, **fields):
            return dict({"id": k, "timestamp": f"2025-04-30T16:46:{second:02d}.000000",
                         "source": "agent", "message": ""}, **fields)

        def action(k, second, name, args):
            return event(k, second, action=name, args=args, tool_call_metadata={
                "function_name": "str_replace_editor", "tool_call_id": f"c{k}",
                "model_response": {"id": f"gen-{k}", "usage": {"prompt_tokens": 50,
                                                              "completion_tokens": 5}}})
        history = [
            action(1, 1, "read", {"path": "/w/a.c"}),
            event(2, 2, cause=1, observation="read", content="Here's the result of "
                  "running `cat -n` on /w/a.c:\n     1\tint x;"),
            event(3, 3, observation="error", content="Parameter 'command' is expected to "
                  "be one of ['view', 'create', 'str_replace', 'insert', 'undo_edit'].",
                  extras={"error_id": ""}),
            action(4, 4, "edit", {"path": "/w/a.c", "command": "str_replace"}),
            event(5, 5, cause=4, observation="edit", content="ERROR:\nNo replacement was "
                  "performed, old_str `int y;` did not appear verbatim in /w/a.c."),
            action(6, 6, "edit", {"path": "/w/a.c", "command": "str_replace"}),
            event(7, 7, cause=6, observation="edit", content="The file /w/a.c has been "
                  "edited."),
            action(8, 8, "finish", {"final_thought": "done", "task_completed": "true"})]
        record = {"instance_id": "x__y-1", "history": history, "error": None,
                  "metadata": {"llm_config": {"model": "synthetic"}},
                  "test_result": {"git_patch": "diff"},
                  "metrics": {"accumulated_cost": 0.0, "accumulated_token_usage": {
                      "prompt_tokens": 200, "completion_tokens": 20}}}
        with TempDir() as folder:
            write(folder, "output.jsonl", json.dumps(record) + "\n")
            row = derived_rows(folder)[0]["x__y-1@synthetic"]
        self.assertEqual({c: row[c] for c in ("attempted_calls", "failed_calls", "tool_calls",
                                              "edit_calls", "read_calls", "tokens_source")},
                         {"attempted_calls": "4", "failed_calls": "2", "tool_calls": "2",
                          "edit_calls": "1", "read_calls": "1",
                          "tokens_source": "accumulated_token_usage"})
        # five model responses: read, the refused call, two edits, finish; the refused
        # one's usage is not recorded, so the per-turn phase tokens are unknown
        self.assertEqual((row["turns"], row["impl_tokens"]), ("5", ""))


class TestRealShapeCommandLine(unittest.TestCase):
    def test_a_predictions_file_as_the_runs(self):
        preds = {"x__y.1a2b3c.combine__q": {"model_name_or_path": "synthetic/model",
                                            "instance_id": "x__y.1a2b3c.combine__q",
                                            "model_patch": "diff --git a/a b/a\n"}}
        with TempDir() as folder:
            path = write(folder, "preds.json", json.dumps(preds, indent=2))
            for script in ("delivery_audit.py", "auc_audit.py"):
                status, out, err = run(script, [path])
                self.assertEqual((status, out), (2, ""), script)
                self.assertEqual(len(err.splitlines()), 1, err)
                self.assertIn("a predictions file", err)
                self.assertIn("regrade.py", err)
                self.assertNotIn("column", err)

    def test_write_runs_before_any_outcome(self):
        with TempDir() as folder:
            write(folder, "trajs/x__y-1/x__y-1.traj.json",
                  json.dumps(mini_v1_trajectory(mini_run())))
            for script in ("delivery_audit.py", "auc_audit.py"):
                out = os.path.join(folder, script)
                status, text, err = run(script, [os.path.join(folder, "trajs"),
                                                 "--write-runs", out])
                self.assertEqual(status, 0, err)
                self.assertEqual(sorted(os.listdir(out)),
                                 ["predictions.jsonl", "runs.csv", "tool_calls.csv"])
                self.assertIn("no run has an outcome yet", text)
                self.assertIn("regrade.py", text)
                self.assertIn("--verdicts", text)
                with open(os.path.join(out, "runs.csv"), encoding="utf-8") as handle:
                    self.assertIn("x__y-1@synthetic/model-x", handle.read())

    def test_the_stop_before_any_outcome_is_one_rule_for_both_audits(self):
        # write_runs_first writes the tables either way; it stops (a note) only when no
        # outcome is there and no --verdicts brings one.
        with TempDir() as folder:
            trajs = os.path.join(folder, "trajs")
            write(trajs, "x__y-1/x__y-1.traj.json", json.dumps(mini_v1_trajectory(mini_run())))
            for script in ("delivery_audit.py", "auc_audit.py"):
                module = load(script)
                for verdicts in (None, "graded/verdicts.csv"):
                    out = os.path.join(folder, f"{script}-{bool(verdicts)}")
                    note = module.write_runs_first(module.Inputs(), trajs, out, None, verdicts)
                    self.assertEqual(sorted(os.listdir(out)),
                                     ["predictions.jsonl", "runs.csv", "tool_calls.csv"])
                    self.assertEqual(note is None, bool(verdicts), (script, note))
            # The audits call it, rather than spell the rule again.
            for script in ("delivery_audit.py", "auc_audit.py"):
                source = inspect.getsource(load(script)._main)
                self.assertNotIn("no_outcome_yet", source, script)

    def test_task_map_with_a_rating_sheet(self):
        with TempDir() as folder:
            write(folder, "runs/t.jsonl", claude_transcript())
            task_map = write(folder, "map.csv", "session_id,task_id\nsynthetic-t1,x__y-1\n")
            sheet = os.path.join(folder, "sheet.csv")
            status, text, err = run("delivery_audit.py", [
                os.path.join(folder, "runs"), "--task-map", task_map, "--rating-sheet",
                sheet])
            self.assertEqual(status, 0, err)
            self.assertTrue(os.path.isfile(sheet))
            self.assertIn("--task-map", text)


class TestSharedBlockHarnessRegistry(unittest.TestCase):
    """One record per harness format in the block: file test, sniff, reader, id rule,
    task-map keys and manual paragraph; an unrecognised harness's file is not dropped."""

    def test_the_manual_lists_each_records_refusals_and_token_source(self):
        # Generated from the records: each read format's refusal rule and token source
        # is in --help under its own label, and no format is described twice.
        d = load("delivery_audit.py")
        manual = " ".join(d.HARNESS_MANUAL.split())
        for record in d.HARNESS_FORMATS:
            self.assertTrue({"tools", "refusals", "tokens"} <= set(record), record["format"])
            if record["reader"] is None:
                continue
            self.assertTrue(record["refusals"] and record["tokens"], record["format"])
            refusal = f"{record['label']} {' '.join(record['refusals'])}"
            self.assertEqual(manual.count(" ".join(refusal.split())), 1, record["format"])
            self.assertEqual(manual.count(" ".join(record["tokens"].split())), 1,
                             record["format"])

    def test_each_refusal_rule_refuses_what_its_manual_text_quotes(self):
        # The record's refused function is the rule its reader applies; the messages
        # its manual text quotes are refused, and a call that ran is not.
        d = load("delivery_audit.py")
        rules = {r["format"]: r["refused"] for r in d.HARNESS_FORMATS}
        self.assertEqual({f for f, rule in rules.items() if rule is None}, {"codex", "aider"})
        swe = rules["swe-agent"]
        for message in ("No replacement was performed. Multiple occurrences",
                        "Usage: str_replace_editor <command>",
                        "Your proposed edit has introduced new syntax error(s). Your "
                        "changes have NOT been applied."):
            self.assertTrue(swe("str_replace_editor", message), message)
        self.assertFalse(swe("str_replace_editor", "The file /r/a.py has been edited."))
        self.assertFalse(swe("bash", "Usage: grep [OPTION]..."))     # bash ran
        self.assertEqual([rules["mini-swe-agent"](b) for b in ([], ["ls"], ["ls", "pwd"])],
                         [True, False, True])
        hands = rules["openhands"]
        self.assertTrue(hands({"observation": "edit", "content": "ERROR:\nNo replacement"}))
        self.assertTrue(hands({"observation": "read", "content": "ERROR: no such file"}))
        self.assertFalse(hands({"observation": "run", "content": "ERROR: exit 1"}))
        claude = rules["claude-code"]
        block = {"is_error": True, "content": "Exit code 1\nFAILED tests/test_a.py"}
        self.assertFalse(claude("Bash", block))                       # it ran
        self.assertTrue(claude("Bash", dict(block, content="<tool_use_error>Denied")))
        self.assertTrue(claude("Edit", {"is_error": True,
                                        "content": "File has not been read yet."}))
        # Each reader asks its own rule, so a changed rule changes what it counts.
        for reader, rule in (("read_swe_agent", swe), ("mini_actions", rules["mini-swe-agent"]),
                             ("openhands_events", hands), ("read_claude_code", claude)):
            tree = ast.parse(textwrap.dedent(inspect.getsource(getattr(d, reader))))
            called = {n.func.id for n in ast.walk(tree)
                      if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
            self.assertIn(rule.__name__, called, reader)

    def test_the_manuals_tool_categories_match_the_records_tables(self):
        # "Tool categories" is written by category, for people; each named tool of a
        # record's tables must be listed under its own category there, so the two
        # cannot drift. A tool written as a family (scroll_*) counts for its members.
        d = load("delivery_audit.py")
        manual = d.HARNESS_MANUAL
        paragraph = manual[manual.index("    Tool categories"):manual.index("    Shell commands")]
        lines = {}
        category = None
        for line in paragraph.splitlines()[1:]:
            words = line.split()
            if line.startswith("      ") and not line.startswith("       ") and words:
                category, words = words[0], words[1:]
            lines.setdefault(category, []).extend(words)
        listed = {category: re.findall(r"[A-Za-z_*]+", " ".join(words))
                  for category, words in lines.items()}
        for record in d.HARNESS_FORMATS:
            for table in record["tools"]:
                for tool, category in table.items():
                    names = listed.get(category, [])
                    family = [n for n in names if n.endswith("*")
                              and tool.startswith(n[:-1])]
                    self.assertTrue(tool in names or family,
                                    f"{record['label']}: {tool} ({category}) is not under "
                                    f"{category} in the manual's tool categories")

    def test_each_record_names_every_part_and_reads_its_shipped_example(self):
        module = load("delivery_audit.py")
        parts = {"format", "label", "names", "json_keys", "line", "truncated", "reader",
                 "run_id", "task_map", "submitted", "records", "manual", "tools", "refused",
                 "refusals", "tokens", "tokens_note"}
        shipped = {"swe-agent": "swe-agent", "mini-swe-agent": "mini-swe-agent",
                   "openhands": "openhands", "claude-code": "claude-code", "codex": "codex"}
        for record in module.HARNESS_FORMATS:
            self.assertEqual(set(record), parts, record["format"])
            self.assertIn(f"      {record['label']:<16}{record['manual'][0]}\n",
                          module.HARNESS_MANUAL)
            if record["reader"] is None:
                continue
            self.assertIn(record["run_id"], ("instance@model", "session"))
            folder = os.path.join(EXAMPLE_RUNS, "..", "agents", shipped.pop(record["format"]))
            found = module.agent_files(folder)
            self.assertTrue(found, folder)
            self.assertEqual({fmt for fmt, _ in found}, {record["format"]})
        self.assertEqual(shipped, {})              # every shipped harness has its record

    def test_an_aider_history_in_an_agent_folder_is_refused_not_dropped(self):
        with TempDir() as folder:
            shutil.copytree(os.path.join(HERE, "examples", "agents", "swe-agent"),
                            os.path.join(folder, "runs"))
            write(folder, "runs/.aider.chat.history.md", "# aider chat started\n\n#### fix it\n")
            for script in ("delivery_audit.py", "auc_audit.py"):
                status, out, err = run(script, [os.path.join(folder, "runs")])
                self.assertEqual(status, 2, script)
                self.assertEqual(len(err.strip().splitlines()), 1, err)
                self.assertRegex(err, r"^error: .*\.aider\.chat\.history\.md: Aider output, "
                                      r"which these scripts do not read")

    def test_a_new_format_is_one_record_plus_one_reader(self):
        import csv
        module = load("delivery_audit.py")

        def read_toy(inputs, path):
            with open(path, encoding="utf-8") as handle:
                record = json.loads(handle.readline())
            return [module.new_run("toy", path, task_id=record["task"], model="m",
                                   claimed="yes")]
        toy = {"format": "toy", "label": "Toy", "names": (), "json_keys": None,
               "line": lambda record: "toy" in record, "truncated": ('"toy"',),
               "reader": read_toy, "run_id": "instance@model", "task_map": (),
               "submitted": lambda run: "yes", "records": "a toy's word",
               "manual": ("toy.jsonl (one line)",)}
        formats = module.HARNESS_FORMATS + (toy,)
        with TempDir() as folder, \
                unittest.mock.patch.object(module, "HARNESS_FORMATS", formats), \
                unittest.mock.patch.object(module, "HARNESS_BY_FORMAT",
                                           {r["format"]: r for r in formats}):
            write(folder, "agent/a.jsonl", '{"toy": 1, "task": "t1"}\n')
            write(folder, "agent/b.jsonl", '{"toy": 1, "task": "t1"}\n')
            status, out, err = run("delivery_audit.py", [os.path.join(folder, "agent"),
                                                         "--write-runs", os.path.join(folder, "out")])
            self.assertEqual(status, 0, err)
            with open(os.path.join(folder, "out", "runs.csv"), encoding="utf-8") as handle:
                rows = list(csv.DictReader(handle))
            self.assertEqual([(r["run_id"], r["format"], r["submitted"]) for r in rows],
                             [("t1@m", "toy", "yes"), ("t1@m#2", "toy", "yes")])


# Synthetic runs shaped like each harness's real files, with the endings its own source
# writes (SWE-agent agents.py and run/common.py, mini-swe-agent 1.x agents/default.py
# and 2.x exceptions.py, OpenHands' finish action, Claude Code's result subtypes,
# Codex's task_complete / turn_aborted events); the expected claim is each harness's
# rule as its documentation states it, written out by hand.
def swe_agent_traj(status, submission="diff --git a/x b/x"):
    info = {"model_stats": {"instance_cost": 0.5, "tokens_sent": 10, "tokens_received": 1,
                            "api_calls": 2}}
    if status is not None:
        info["exit_status"], info["submission"] = status, submission
    return json.dumps({"environment": "synthetic", "history": [], "info": info,
                       "trajectory": [{"action": "ls", "observation": "a.py", "thought": "t",
                                       "response": "r", "execution_time": 1.0}]})


def mini_traj(status, version="2.2.4"):
    return json.dumps({"info": {"exit_status": status, "submission": "", "mini_version": version},
                       "messages": [{"role": "user", "content": "fix it"},
                                    {"role": "assistant", "content": "```bash\nls\n```"}],
                       "trajectory_format": "mini-swe-agent-1.1" if version[0] == "2"
                       else "mini-swe-agent-1"})


def openhands_line(instance, finish_args):
    history = [{"id": 0, "timestamp": "2026-01-05T12:00:00", "source": "user",
                "action": "message", "args": {"content": "fix it"}}]
    if finish_args is not None:
        history.append({"id": 1, "timestamp": "2026-01-05T12:00:10", "source": "agent",
                        "action": "finish", "args": finish_args})
    return json.dumps({"instance_id": instance, "history": history,
                       "metadata": {"llm_config": {"model": "m"}},
                       "test_result": {"git_patch": ""}}) + "\n"


def claude_stream(session, prompt, result=None):
    lines = [{"type": "system", "subtype": "init", "session_id": session, "model": "claude-x",
              "cwd": "/workspace/repo"},
             {"type": "user", "session_id": session, "message": {"role": "user",
                                                                 "content": prompt}},
             {"type": "assistant", "session_id": session, "message": {
                 "id": "m1", "content": [{"type": "text", "text": "done"}],
                 "usage": {"input_tokens": 5, "output_tokens": 2}, "stop_reason": "end_turn"}}]
    if result:
        lines.append(dict({"type": "result", "session_id": session, "result": "done"}, **result))
    return "".join(json.dumps(line) + "\n" for line in lines)


def codex_rollout(session, prompt, events):
    lines = [{"timestamp": "2026-01-05T12:00:00Z", "type": "session_meta",
              "payload": {"id": session, "cwd": "/workspace"}},
             {"timestamp": "2026-01-05T12:00:01Z", "type": "response_item",
              "payload": {"type": "message", "role": "user",
                          "content": [{"type": "input_text", "text": prompt}]}}]
    lines += [{"timestamp": "2026-01-05T12:00:09Z", "type": "event_msg",
               "payload": {"type": event}} for event in events]
    return "".join(json.dumps(line) + "\n" for line in lines)


class TestHarnessSubmissions(unittest.TestCase):
    def submitted(self, folder):
        rows, _ = derived_rows(folder)
        return {run_id: row["submitted"] for run_id, row in rows.items()}

    def test_swe_agent_exit_status(self):
        cases = {"a__a-1": ("submitted", "yes"), "a__a-2": ("submitted (exit_cost)", "no"),
                 "a__a-3": ("submitted (exit_context)", "no"), "a__a-4": ("exit_cost", "no"),
                 "a__a-5": ("exit_format", "no"), "a__a-6": (None, "no")}
        with TempDir() as folder:
            for instance, (status, _) in cases.items():
                write(folder, f"trajs/{instance}.traj", swe_agent_traj(status))
            self.assertEqual(self.submitted(folder),
                             {i: claim for i, (_, claim) in cases.items()})

    def test_mini_swe_agent_exit_status_1_and_2(self):
        cases = {"b__b-1": ("Submitted", "1.15.0", "yes"), "b__b-2": ("LimitsExceeded", "1.15.0", "no"),
                 "b__b-3": ("RuntimeError", "1.15.0", "no"), "b__b-4": ("Submitted", "2.2.4", "yes"),
                 "b__b-5": ("TimeExceeded", "2.2.4", "no"),
                 "b__b-6": ("RepeatedFormatError", "2.2.4", "no"), "b__b-7": ("", "2.2.4", "no")}
        with TempDir() as folder:
            for instance, (status, version, _) in cases.items():
                write(folder, f"{instance}/{instance}.traj.json", mini_traj(status, version))
            self.assertEqual(self.submitted(folder),
                             {i: claim for i, (_, _, claim) in cases.items()})

    def test_codex_counts_each_cumulative_total_once(self):
        # The dedupe compared each token_count with the previous one only: an older total
        # repeated after a newer one counted as a third turn and lowered the totals to it.
        def usage(i, o):
            return {"input_tokens": i, "output_tokens": o, "total_tokens": i + o}
        def count(total, last):
            return {"timestamp": "2026-01-05T12:00:05Z", "type": "event_msg", "payload": {
                "type": "token_count", "info": {"total_token_usage": total,
                                                "last_token_usage": last}}}
        lines = [count(usage(100, 10), usage(100, 10)), count(usage(100, 10), usage(100, 10)),
                 count(usage(300, 30), usage(200, 20)), count(usage(100, 10), usage(100, 10))]
        with TempDir() as folder:
            write(folder, "rollout-2026-01-05-c1.jsonl", codex_rollout(
                "c1", "hi", ["task_started"]) + "".join(json.dumps(l) + "\n" for l in lines))
            rows, _ = derived_rows(folder)
        row = rows["c1"]
        self.assertEqual((row["tokens_in"], row["tokens_out"], row["turns"]), ("300", "30", "2"))

    def test_openhands_finish_refined_by_task_completed(self):
        # A fork's finish without task_completed is still the agent's own stop.
        cases = {"c__c-1": ({"final_thought": "done", "task_completed": "true"}, "yes"),
                 "c__c-2": ({"final_thought": "stuck", "task_completed": "false"}, "no"),
                 "c__c-3": ({"final_thought": "most", "task_completed": "partial"}, "equivocal"),
                 "c__c-4": ({"thought": "done"}, "yes"), "c__c-5": (None, "no"),
                 # A JSON boolean: false read as '' (no task_completed), so as "yes".
                 "c__c-6": ({"final_thought": "stuck", "task_completed": False}, "no"),
                 "c__c-7": ({"final_thought": "done", "task_completed": True}, "yes")}
        with TempDir() as folder:
            write(folder, "output.jsonl", "".join(openhands_line(i, args)
                                                  for i, (args, _) in cases.items()))
            self.assertEqual(self.submitted(folder),
                             {f"{i}@m": claim for i, (_, claim) in cases.items()})

    def test_claude_code_result_subtype_and_codex_task_complete(self):
        with TempDir() as folder:
            write(folder, "s1.jsonl", claude_stream("s1", "hi", {"subtype": "success",
                                                                 "is_error": False}))
            write(folder, "s2.jsonl", claude_stream("s2", "hi", {"subtype": "error_max_turns",
                                                                 "is_error": True}))
            write(folder, "s3.jsonl", claude_stream("s3", "hi", {"subtype": "success",
                                                                 "is_error": True}))
            write(folder, "s4.jsonl", claude_stream("s4", "hi"))   # no result line
            write(folder, "r1.jsonl", codex_rollout("c1", "hi", ["task_started",
                                                                 "task_complete"]))
            write(folder, "r2.jsonl", codex_rollout("c2", "hi", ["task_started",
                                                                 "turn_aborted"]))
            write(folder, "r3.jsonl", codex_rollout("c3", "hi", ["task_started"]))
            self.assertEqual(self.submitted(folder), {"s1": "yes", "s2": "no", "s3": "no",
                                                      "s4": "", "c1": "yes", "c2": "no",
                                                      "c3": ""})

    def java_folder(self, folder, beside=None):
        """Four SWE-agent runs and a verdicts table: by hand, submitted and resolved
        (tp), submitted and unresolved (fp), autosubmitted and resolved (fn),
        stopped at a limit and unresolved (tn)."""
        runs = {"j__j-1": "submitted", "j__j-2": "submitted", "j__j-3": "submitted (exit_cost)",
                "j__j-4": "exit_cost"}
        for instance, status in runs.items():
            write(folder, f"agent/trajs/{instance}.traj", swe_agent_traj(status))
        if beside:
            write(folder, "agent/runs.csv", beside)
        return os.path.join(folder, "agent"), write(
            folder, "verdicts.csv", "instance_id,completed\nj__j-1,true\nj__j-2,false\n"
            "j__j-3,true\nj__j-4,false\n")

    def test_a_harness_folder_with_no_table_beside_it_gives_a_report(self):
        with TempDir() as folder:
            agent, verdicts = self.java_folder(folder)
            result = audit_json([agent, "--verdicts", verdicts, "--boot", "0"])
            status, text, err = run("delivery_audit.py", [agent, "--verdicts", verdicts,
                                                          "--boot", "0"])
        self.assertEqual((result["counts"]["tp"], result["counts"]["fp"],
                          result["counts"]["fn"], result["counts"]["tn"]), (1, 1, 1, 1))
        self.assertEqual(result["claim_definition"], "submitted")
        self.assertIn("weaker claim", result["claim_definition_text"])
        self.assertEqual(status, 0, err)
        prose = " ".join(text.split())
        self.assertIn("A claim here is the harness's own record of how each run ended", prose)
        self.assertIn("XO Labs, What Observational Data Can't Tell You About Work Done, "
                      "August 2026", prose)

    def test_both_definitions_side_by_side(self):
        # Rated claims beside the harness's record: claimed yes on j-1, j-2, j-3 (2 of 3
        # verified: 0.667); submitted on j-1, j-2 (1 of 2: 0.5).
        beside = "run_id,claimed\nj__j-1,yes\nj__j-2,yes\nj__j-3,yes\nj__j-4,no\n"
        with TempDir() as folder:
            agent, verdicts = self.java_folder(folder, beside)
            result = audit_json([agent, "--verdicts", verdicts, "--boot", "0"])
            other = audit_json([agent, "--verdicts", verdicts, "--boot", "0",
                                "--claim-from", "submitted"])
            status, text, err = run("delivery_audit.py", [agent, "--verdicts", verdicts,
                                                          "--boot", "0", "--format", "markdown"])
        self.assertEqual(result["claim_definition"], "column")
        self.assertEqual(result["delivery_rate"]["value"], 2 / 3)
        self.assertEqual([(d["definition"], d["claims"], d["verified"],
                           d["delivery_rate"]["value"]) for d in result["other_definitions"]],
                         [("submitted", 2, 1, 0.5)])
        self.assertEqual(other["claim_definition"], "submitted")
        self.assertEqual([(d["definition"], d["delivery_rate"]["value"])
                          for d in other["other_definitions"]], [("column", 2 / 3)])
        self.assertEqual(status, 0, err)
        self.assertIn("| submitted | submitted | 2 | 1 | 0.500 |", text)

    def test_claim_from_asks_for_what_it_needs(self):
        with TempDir() as folder:
            agent, verdicts = self.java_folder(folder)
            status, out, err = run("delivery_audit.py", [agent, "--verdicts", verdicts,
                                                         "--claim-from", "rated"])
            assert_one_error(self, status, out, err, "--claim-from rated", "--raters")
            table = write(folder, "runs.csv", runs_csv([["r1", "t1", "yes", "1"],
                                                        ["r2", "t2", "no", "0"]]))
            status, out, err = run("delivery_audit.py", [table, "--claim-from", "submitted"])
            assert_one_error(self, status, out, err, "--claim-from submitted",
                             "not agent output")

    def test_an_empty_diff_the_grader_skipped_counts_failed(self):
        # mini-swe-agent 2.x: a run that submitted an empty diff, which SWE-bench's
        # harness never grades (no instance folder), as in a real eval_results folder.
        with TempDir() as folder:
            for instance, diff, resolved in (("d__d-1", "diff --git a/x b/x", True),
                                             ("d__d-2", "diff --git a/y b/y", False),
                                             ("d__d-3", "", None)):
                data = json.loads(mini_traj("Submitted"))
                data["info"].update(submission=diff, config={"model": {"model_name": "m/x"}})
                write(folder, f"agent/{instance}/{instance}.traj.json", json.dumps(data))
                if resolved is not None:
                    write(folder, f"eval/m__x/{instance}/report.json", json.dumps(
                        {instance: {"patch_is_None": False, "resolved": resolved}}))
            agent, logs = os.path.join(folder, "agent"), os.path.join(folder, "eval")
            result = audit_json([agent, "--verdicts", logs, "--boot", "0"])
            status, out, err = run(AUC, [agent, "--verdicts", logs, "--perms", "99",
                                         "--boot", "99"])
        # by hand: three claims, d-1 verified, d-2 and the ungraded empty d-3 failed
        self.assertEqual((result["counts"]["tp"], result["counts"]["fp"]), (1, 2))
        self.assertIn("1 run with an empty diff, not in the verdicts, counted failed",
                      result["assumptions"][0])
        self.assertIn("d__d-3@m/x", result["assumptions"][0])
        # auc_audit joins the same way: it stops later, at the constant baseline (every
        # run here makes one call), not at the join
        self.assertEqual(status, 2, out)
        self.assertIn("constant baseline", err)
        self.assertNotIn("no verdict for", err)

    def test_a_transcript_with_no_ending_names_the_limit(self):
        with TempDir() as folder:
            write(folder, "t/s4.jsonl", claude_stream("s4", "hi"))
            verdicts = write(folder, "v.csv", "run_id,completed\ns4,true\n")
            status, out, err = run("delivery_audit.py", [os.path.join(folder, "t"),
                                                         "--verdicts", verdicts])
        assert_one_error(self, status, out, err, "records no ending", "--rating-sheet")


class TestTasksWithoutAMap(unittest.TestCase):
    def test_instance_id_in_the_first_prompt_else_each_run_its_own_task(self):
        with TempDir() as folder:
            write(folder, "s1.jsonl", claude_stream(
                "s1", "Fix the issue in astropy__astropy-12907 and run its tests.",
                {"subtype": "success"}))
            write(folder, "s2.jsonl", claude_stream("s2", "Tidy up the README.",
                                                    {"subtype": "success"}))
            write(folder, "r1.jsonl", codex_rollout("c1", "Solve django__django-11066.",
                                                    ["task_complete"]))
            rows, derived = derived_rows(folder)
        self.assertEqual({r: row["task_id"] for r, row in rows.items()},
                         {"s1": "astropy__astropy-12907", "s2": "s2",
                          "c1": "django__django-11066"})
        notes = " ".join(derived["runs"].notes)
        self.assertIn("2 runs (claude-code, codex) name no task; each task is the instance "
                      "id its first prompt names", notes)
        self.assertIn("1 run (claude-code) name no task, so each is its own task", notes)


# === delivery_audit.py ===
def binomial_tail_at_least(k, n, p):
    """P(X >= k) for X ~ Binomial(n, p), summed term by term."""
    return math.fsum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k, n + 1))


def solve_increasing(function, target):
    """Bisection for function(x) = target on [0, 1], function increasing."""
    low, high = 0.0, 1.0
    for _ in range(200):
        middle = (low + high) / 2
        if function(middle) < target:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def brute_force_clopper_pearson(k, n):
    """Clopper-Pearson by inverting binomial tails directly (no beta function)."""
    low = 0.0 if k == 0 else solve_increasing(lambda p: binomial_tail_at_least(k, n, p), 0.025)
    # Upper: P(X <= k) = 0.025, i.e. P(X >= k + 1) = 0.975 (increasing in p).
    high = 1.0 if k == n else solve_increasing(
        lambda p: binomial_tail_at_least(k + 1, n, p), 1 - 0.025)
    return low, high


def brute_force_fisher(tp, fp, fn, tn):
    """Two-sided Fisher p by enumerating every way to pick row 1 from the n items."""
    n, row1, column1 = tp + fp + fn + tn, tp + fp, tp + fn
    items = [1] * column1 + [0] * (n - column1)
    tally = {}
    for chosen in itertools.combinations(range(n), row1):
        x = sum(items[i] for i in chosen)
        tally[x] = tally.get(x, 0) + 1
    total = sum(tally.values())
    observed = tally[tp]
    return Fraction(sum(c for c in tally.values() if c <= observed), total)


def exact_fisher_p(tp, fp, fn, tn):
    """Two-sided Fisher p with every table's weight an exact integer (for large tables)."""
    row1, row2, column1 = tp + fp, fn + tn, tp + fn
    weights = [math.comb(row1, x) * math.comb(row2, column1 - x)
               for x in range(max(0, column1 - row2), min(row1, column1) + 1)]
    observed = math.comb(row1, tp) * math.comb(row2, column1 - tp)
    return Fraction(sum(w for w in weights if w <= observed), sum(weights))


def brute_force_mcnemar(b, c):
    """Exact McNemar p: sign sequences at least as unbalanced as the observed one."""
    n = b + c
    extreme = abs(b - n / 2)
    hits = sum(1 for signs in itertools.product((0, 1), repeat=n)
               if abs(sum(signs) - n / 2) >= extreme - 1e-12)
    return Fraction(hits, 2 ** n)


def kappa_from_labels(first, second):
    """Cohen's kappa straight from two label vectors."""
    n = len(first)
    observed = Fraction(sum(a == b for a, b in zip(first, second)), n)
    labels = set(first) | set(second)
    chance = sum(Fraction(first.count(c), n) * Fraction(second.count(c), n) for c in labels)
    return (observed - chance) / (1 - chance)


class TestDeliveryStatistics(unittest.TestCase):
    def setUp(self):
        self.d = load("delivery_audit.py")

    def test_clopper_pearson_against_binomial_tails(self):
        for k, n in [(22, 68), (46, 68), (0, 10), (10, 10), (1, 23), (46, 49), (3, 7),
                     (1, 1), (0, 1), (250, 400), (5, 400)]:
            low, high = self.d.clopper_pearson(k, n)
            want_low, want_high = brute_force_clopper_pearson(k, n)
            for got, want in ((low, want_low), (high, want_high)):
                if want == 0:
                    self.assertEqual(got, 0.0)
                else:
                    self.assertLess(abs(got - want) / want, 1e-9, (k, n, got, want))

    def test_clopper_pearson_closed_forms_and_the_report(self):
        # k = 0 and k = n have closed forms: 1 - (alpha/2)^(1/n) and (alpha/2)^(1/n).
        for n in (1, 5, 23, 68, 1000):
            self.assertAlmostEqual(self.d.clopper_pearson(0, n)[1], 1 - 0.025 ** (1 / n),
                                   delta=1e-12)
            self.assertAlmostEqual(self.d.clopper_pearson(n, n)[0], 0.025 ** (1 / n),
                                   delta=1e-12)
        # The report's false-completion rate: 22 of 68, [0.215, 0.448].
        self.assertEqual([round(v, 3) for v in self.d.clopper_pearson(22, 68)], [0.215, 0.448])

    def test_fisher_against_enumeration(self):
        for table in [(3, 1, 1, 3), (46, 22, 3, 1), (1, 9, 11, 3), (0, 5, 5, 0), (2, 2, 2, 2),
                      (4, 0, 0, 4), (5, 1, 2, 3), (0, 0, 3, 4)]:
            want = brute_force_fisher(*table) if sum(table) <= 16 else None
            got = self.d.fisher_exact(*table)
            if want is not None:
                self.assertAlmostEqual(got, float(want), delta=1e-12, msg=table)
        # Published: Fisher's lady tasting tea, 0.4857; the textbook dieting table 0.002759.
        self.assertEqual(round(self.d.fisher_exact(3, 1, 1, 3), 4), 0.4857)
        self.assertEqual(round(self.d.fisher_exact(1, 9, 11, 3), 6), 0.002759)
        self.assertEqual(self.d.fisher_exact(46, 22, 3, 1), 1.0)

    def test_fisher_large_tables_log_space_agrees_with_exact_integers(self):
        # Above 1000 runs the sum runs in log space; compare with exact integers here.
        for table in [(600, 400, 500, 500), (520, 480, 500, 500)]:
            want = exact_fisher_p(*table)
            self.assertLess(abs(self.d.fisher_exact(*table) - float(want)) / float(want), 1e-9)

    def test_fisher_large_tables_keep_tables_tied_in_probability(self):
        # With column 1 holding half the runs, P(x) = P(row1 - x) exactly, but the
        # two log-space sums round differently; the tie must still count.
        table = (285, 315, 365, 335)
        tp, fp, fn, tn = table
        self.assertEqual(2 * (tp + fn), sum(table))
        want = exact_fisher_p(*table)
        self.assertLess(abs(self.d.fisher_exact(*table) - float(want)) / float(want), 1e-9)

    def test_fisher_large_tables_work_out_each_table_once(self):
        # One log probability per possible table, not one for the test and one for the sum.
        calls = []
        real = self.d.log_hypergeometric
        def counted(*args):
            calls.append(args[0])
            return real(*args)
        table = (600, 400, 500, 500)           # tables x = 100 .. 1000 share these margins
        with unittest.mock.patch.object(self.d, "log_hypergeometric", counted):
            p = self.d.fisher_exact(*table)
        self.assertEqual(sorted(calls), list(range(100, 1001)))
        want = exact_fisher_p(*table)
        self.assertLess(abs(p - float(want)) / float(want), 1e-9)

    def test_tie_tolerance_is_one_constant(self):
        # R's relative tolerance for tables tied in probability has one home,
        # R_TIE_TOLERANCE: no script spells 1e-7 again in its code.
        for script in ("delivery_audit.py", "auc_audit.py"):
            with open(os.path.join(HERE, script), encoding="utf-8") as handle:
                tree = ast.parse(handle.read())
            spelled = [node.lineno for node in ast.walk(tree)
                       if isinstance(node, ast.Constant) and not isinstance(node.value, bool)
                       and isinstance(node.value, float) and node.value == 1e-7]
            self.assertEqual(spelled, [], f"{script}: 1e-7 written at lines {spelled}; "
                             f"use R_TIE_TOLERANCE")
        self.assertEqual(float(self.d.R_TIE_TOLERANCE), 1e-7)

    def test_mcnemar_against_sign_enumeration(self):
        for b, c in [(2, 3), (0, 6), (1, 7), (5, 5), (0, 0), (3, 9), (0, 1)]:
            want = brute_force_mcnemar(b, c) if b + c else Fraction(1)
            self.assertAlmostEqual(self.d.mcnemar_exact(b, c), float(want), delta=1e-12)

    def test_cohen_kappa_against_label_vectors(self):
        for tp, fp, fn, tn in [(46, 22, 3, 1), (10, 2, 3, 9), (5, 0, 0, 5), (1, 4, 4, 1)]:
            claims = [1] * (tp + fp) + [0] * (fn + tn)
            verified = [1] * tp + [0] * fp + [1] * fn + [0] * tn
            self.assertAlmostEqual(self.d.cohen_kappa(tp, fp, fn, tn),
                                   float(kappa_from_labels(claims, verified)), delta=1e-12)
            self.assertAlmostEqual(self.d.kappa_float(tp, fp, fn, tn),
                                   float(kappa_from_labels(claims, verified)), delta=1e-12)
        self.assertEqual(round(self.d.cohen_kappa(46, 22, 3, 1), 3), -0.023)
        self.assertIsNone(self.d.cohen_kappa(5, 0, 0, 0))

    def test_fleiss_kappa_published_example_and_rater_pairs(self):
        # Fleiss (1971) style example as tabulated on Wikipedia: 10 subjects,
        # 14 raters, 5 categories; published kappa 0.210.
        table = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0],
                 [2, 2, 8, 1, 1], [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2],
                 [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
        self.assertEqual(round(self.d.fleiss_kappa(table), 3), 0.210)
        # Independently: agreement as the share of agreeing ordered rater pairs.
        rows = [[0, 0, 0], [0, 0, 1], [1, 1, 1], [2, 1, 0], [1, 1, 1], [0, 0, 0]]
        agreement = Fraction(0)
        for labels in rows:
            pairs = [(a, b) for i, a in enumerate(labels) for j, b in enumerate(labels) if i != j]
            agreement += Fraction(sum(a == b for a, b in pairs), len(pairs))
        agreement /= len(rows)
        flat = [x for row in rows for x in row]
        chance = sum(Fraction(flat.count(c), len(flat)) ** 2 for c in set(flat))
        counts = [[labels.count(c) for c in (0, 1, 2)] for labels in rows]
        self.assertAlmostEqual(self.d.fleiss_kappa(counts),
                               float((agreement - chance) / (1 - chance)), delta=1e-12)

    def test_cluster_bootstrap_matches_exact_resampling_distribution(self):
        # Three tasks: every ordered draw of 3 tasks out of 3 is equally likely
        # (27 draws), so the bootstrap distribution of r is known exactly.
        tasks = [(4, 0, 0, 0, 0, 0), (1, 3, 0, 0, 0, 0), (2, 2, 0, 0, 0, 0)]
        exact = sorted(sum(tasks[i][0] for i in draw) / sum(tasks[i][0] + tasks[i][1]
                                                           for i in draw)
                       for draw in itertools.product(range(3), repeat=3))
        low_atom, high_atom = exact[0], exact[-1]
        # With 27 equally likely atoms, the 2.5% and 97.5% quantiles are the
        # smallest and largest atoms (each has probability 1/27 > 2.5%).
        got = self.d.cluster_bootstrap(tasks, 20000, 7)["headline"]["delivery_rate"]["ci"]
        self.assertAlmostEqual(got[0], low_atom, delta=1e-12)
        self.assertAlmostEqual(got[1], high_atom, delta=1e-12)

    def test_bootstrap_is_the_same_in_one_process_or_two(self):
        rng = random.Random(3)
        tasks = [tuple(rng.randint(0, 4) for _ in range(4)) + (0, 0) for _ in range(30)]
        serial = self.d.cluster_bootstrap(tasks, 2500, 11, jobs=1)
        self.assertEqual(self.d.cluster_bootstrap(tasks, 2500, 11, jobs=2), serial)
        if "fork" in multiprocessing.get_all_start_methods():   # the forked path really ran
            packed = [sum(c << (self.d.FIELD_BITS * i) for i, c in enumerate(counts))
                      for counts in tasks]
            chunks = self.d.parallel_chunks(packed, 11, [(0, 10), (1, 10)], 2)
            self.assertIsNotNone(chunks)
            self.assertEqual(chunks[0], self.d.bootstrap_chunk(packed, 11, 0, 10))

    def test_bootstrap_of_identical_tasks_collapses_to_the_point(self):
        tasks = [(3, 1, 1, 2, 0, 0)] * 6
        got = self.d.cluster_bootstrap(tasks, 500, 1)["headline"]
        self.assertEqual(got["delivery_rate"]["ci"], [0.75, 0.75])
        self.assertAlmostEqual(got["kappa"]["ci"][0], float(kappa_from_labels(
            [1, 1, 1, 1, 0, 0, 0], [1, 1, 1, 0, 1, 0, 0])), delta=1e-12)

    def test_percentile_is_linear_between_order_statistics(self):
        values = [1.0, 2.0, 4.0, 8.0, 16.0]
        self.assertEqual(self.d.percentile(values, 0.0), 1.0)
        self.assertEqual(self.d.percentile(values, 1.0), 16.0)
        self.assertEqual(self.d.percentile(values, 0.5), 4.0)
        self.assertEqual(self.d.percentile(values, 0.625), 6.0)   # position 2.5: 4 + 0.5 * 4


class TestDeliveryReport(unittest.TestCase):
    def test_demo_prints_the_report_figures(self):
        status, out, err = run("delivery_audit.py", ["--demo"])
        self.assertEqual(status, 0, err)
        self.assertRegex(out, r"false-completion rate 1 - r\s+0\.324\s+\[0\.215, 0\.448\]")
        self.assertRegex(out, r"specificity .*\s0\.043\s")
        self.assertRegex(out, r"claim AUC .*\s0\.491\s")
        self.assertRegex(out, r"Cohen's kappa .*\s-0\.023\s")
        self.assertRegex(out, r"false-completion rate 1 - r\s+0\.324\s+0\.319")
        self.assertIn("72 runs; no task column, so each run is its own cluster", out)

    def test_example_folder_reproduces_the_published_table(self):
        result = audit_json([EXAMPLE_RUNS, "--raters", "rater_a,rater_b,rater_c", "--boot",
                             "2000"])
        self.assertEqual(result["counts"]["tp"], 46)
        self.assertEqual(result["counts"]["fp"], 22)
        self.assertEqual(result["counts"]["fn"], 3)
        self.assertEqual(result["counts"]["tn"], 1)
        self.assertEqual(result["counts"]["equivocal"], 4)
        self.assertEqual((result["n_runs"], result["n_tasks"]), (72, 18))
        self.assertAlmostEqual(result["false_completion_rate"]["value"], 22 / 68, delta=1e-15)
        self.assertEqual([round(v, 3) for v in result["false_completion_rate"]["ci"]],
                         [0.215, 0.448])
        self.assertAlmostEqual(result["specificity"]["value"], 1 / 23, delta=1e-15)
        self.assertAlmostEqual(result["claim_auc"]["value"], (46 / 49 + 1 / 23) / 2, delta=1e-15)
        self.assertEqual(round(result["kappa"]["value"], 3), -0.023)
        self.assertAlmostEqual(result["equivocal_as_claims"]["false_completion_rate"]["value"],
                               23 / 72, delta=1e-15)
        self.assertEqual({k: result["mcnemar"][k] for k in ("b", "c", "pairs")},
                         {"b": 2, "c": 3, "pairs": 36})
        self.assertEqual(result["mcnemar"]["p"], 1.0)
        self.assertEqual([(t["condition"], t["verified"], t["runs"])
                          for t in result["conditions"]],
                         [("plain", 24, 36), ("scaffold", 25, 36)])
        self.assertEqual((result["raters"]["unanimous"], result["raters"]["no_majority"]),
                         (71, 1))
        status, out, _ = run("delivery_audit.py", [EXAMPLE_RUNS, "--boot", "200"])
        self.assertIn("exact p 1.00", out)

    def test_example_generator_writes_the_committed_files(self):
        with TempDir() as folder:
            subprocess.run([sys.executable, os.path.join(HERE, "examples", "make_example.py"),
                            folder], check=True, timeout=120)
            for name in ("runs.csv", "tool_calls.csv", "criteria.csv"):
                with open(os.path.join(folder, name), "rb") as made, \
                        open(os.path.join(EXAMPLE_RUNS, name), "rb") as committed:
                    self.assertEqual(made.read(), committed.read(), name)

    def test_same_seed_same_bytes_and_seed_matters(self):
        first = run("delivery_audit.py", [EXAMPLE_RUNS, "--boot", "300", "--seed", "5"])[1]
        second = run("delivery_audit.py", [EXAMPLE_RUNS, "--boot", "300", "--seed", "5"])[1]
        third = run("delivery_audit.py", [EXAMPLE_RUNS, "--boot", "300", "--seed", "6"])[1]
        self.assertEqual(first, second)
        self.assertNotEqual(first.split("-- provenance")[0], third.split("-- provenance")[0])

    def test_counts_mode_and_formats(self):
        for style in ("text", "markdown"):
            status, out, err = run("delivery_audit.py",
                                   ["--counts", "tp=46,fp=22,fn=3,tn=1", "--format", style])
            self.assertEqual(status, 0, err)
            self.assertIn("0.324", out)
        status, out, _ = run("delivery_audit.py", ["--demo", "--format", "markdown"])
        self.assertIn("| claimed | 46 | 22 | 68 |", out)
        result = audit_json(["--counts", "tp=46,fp=22,fn=3,tn=1,eq_verified=3,eq_failed=1"])
        for key in ("n_runs", "n_tasks", "counts", "delivery_rate", "false_completion_rate",
                    "inflation", "completion_rate", "sensitivity", "specificity", "claim_auc",
                    "kappa", "fisher_p", "equivocal_as_claims", "provenance"):
            self.assertIn(key, result)
        low, high = brute_force_clopper_pearson(46, 68)
        self.assertLess(abs(result["inflation"]["ci"][0] - 1 / high) * high, 1e-9)
        self.assertLess(abs(result["inflation"]["ci"][1] - 1 / low) * low, 1e-9)
        self.assertAlmostEqual(result["inflation"]["value"], 68 / 46, delta=1e-15)

    def test_cost_and_sampling_mode(self):
        rows = [["r1", "t1", "yes", "1", "2.0"], ["r2", "t1", "yes", "0", "3.0"],
                ["r3", "t2", "yes", "1", "5.0"], ["r4", "t2", "no", "0", "1.0"],
                ["r5", "t3", "yes", "", "4.0"], ["r6", "t3", "yes", "", "4.0"]]
        with TempDir() as folder:
            path = write(folder, "runs.csv", runs_csv(
                rows, "run_id,task_id,claimed,verified,cost"))
            result = audit_json([path, "--cost", "cost", "--boot", "100"])
        cost = result["cost"]
        self.assertEqual(cost["total"], 19.0)              # every priced run
        self.assertEqual(cost["per_claim"], 19.0 / 5)
        self.assertEqual(cost["per_verified_delivery"], 11.0 / 2)   # verified runs only
        self.assertEqual(cost["spent_on_false_claims"], 3.0)
        sampling = result["sampling"]
        self.assertEqual((sampling["runs_checked"], sampling["claims"],
                          sampling["claims_checked"], sampling["verified_deliveries_seen"]),
                         (4, 5, 3, 2))
        # 2 deliveries seen, plus r = 2/3 of the 2 unchecked claims.
        self.assertAlmostEqual(sampling["expected_verified_deliveries"]["value"], 2 + 2 * 2 / 3)
        low, high = brute_force_clopper_pearson(2, 3)
        self.assertAlmostEqual(sampling["expected_verified_deliveries"]["ci"][0], 2 + 2 * low)
        self.assertAlmostEqual(sampling["expected_verified_deliveries"]["ci"][1], 2 + 2 * high)
        # Inflation: all 5 claims over the expected deliveries (the high end from r's low).
        self.assertAlmostEqual(sampling["inflation"]["ci"][0], 5 / (2 + 2 * high))
        self.assertAlmostEqual(sampling["inflation"]["ci"][1], 5 / (2 + 2 * low))

    def test_runs_with_no_cost_are_left_out_and_the_report_says_so(self):
        # A blank cost left the run out of 'per run' and 'per claim' with no word in text
        # or Markdown (only JSON's runs_priced told).
        rows = [["r1", "t1", "yes", "1", "2.0"], ["r2", "t1", "yes", "0", ""],
                ["r3", "t2", "yes", "1", "5.0"], ["r4", "t2", "no", "0", "1.0"]]
        with TempDir() as folder:
            path = write(folder, "runs.csv", runs_csv(rows, "run_id,task_id,claimed,verified,cost"))
            result = audit_json([path, "--cost", "cost", "--boot", "100"])
            self.assertEqual(result["cost"]["per_run"], 8.0 / 3)
            for style in ("text", "markdown"):
                status, out, err = run("delivery_audit.py", [path, "--cost", "cost", "--boot",
                                                             "100", "--format", style])
                self.assertIn("1 run with no cost is left out: every figure reads the 3 priced "
                              "runs.", " ".join(out.split()), style)

    def test_one_class_only_says_undefined(self):
        rows = [[f"r{i}", f"t{i % 3}", "yes", "1"] for i in range(6)]
        with TempDir() as folder:
            path = write(folder, "runs.csv", runs_csv(rows))
            status, out, err = run("delivery_audit.py", [path, "--boot", "100"])
        self.assertEqual(status, 0, err)
        self.assertIn("undefined: no run failed verification", out)
        self.assertIn("undefined: needs both verified and failed runs", out)

    def test_regrade_verdicts_feed_the_delivery_audit(self):
        example = os.path.join(HERE, "examples", "regrade")
        with TempDir() as folder:
            out = os.path.join(folder, "regraded")
            status, _, err = run("regrade.py", [
                os.path.join(example, "instances.jsonl"),
                os.path.join(example, "predictions.jsonl"),
                "--repo", os.path.join(example, "calc.bundle"), "--out", out])
            self.assertEqual(status, 0, err)
            result = audit_json([os.path.join(example, "runs.csv"), "--verdicts",
                                 os.path.join(out, "verdicts.csv")])
        # Six runs all claim completion; the maintainers' tests pass only one.
        self.assertEqual({k: result["counts"][k] for k in ("tp", "fp", "fn", "tn")},
                         {"tp": 1, "fp": 5, "fn": 0, "tn": 0})
        self.assertEqual(result["n_tasks"], 1)                # instance_id from the verdicts

    def test_one_task_gives_no_bootstrap_and_no_false_verdict(self):
        rows = [["r1", "t1", "yes", "1"], ["r2", "t1", "yes", "0"], ["r3", "t1", "no", "0"],
                ["r4", "t1", "yes", "1"]]
        with TempDir() as folder:
            path = write(folder, "one.csv", runs_csv(rows))
            result = audit_json([path])
            status, out, _ = run("delivery_audit.py", [path])
        self.assertEqual(result["kappa"]["ci"], [None, None])
        self.assertEqual(result["boot"], 0)
        self.assertIn("Pooled over all runs, too few runs to tell", " ".join(out.split()))
        self.assertIn("only one cluster, nothing to resample", " ".join(out.split()))

    def test_verdict_reads_a_negative_kappa_as_the_wrong_direction(self):
        status, out, _ = run("delivery_audit.py", ["--counts", "tp=5,fp=40,fn=40,tn=5",
                                                   "--boot", "500"])
        self.assertIn("information in the wrong direction", out)
        self.assertIn("Fisher p <0.001", out)

    def test_inflation_intervals_are_r_intervals_transformed(self):
        result = audit_json(["--counts", "tp=1,fp=9,fn=1,tn=5", "--boot", "2000"])
        r, inflation = result["delivery_rate"], result["inflation"]
        self.assertEqual(r["ci_cluster"][0], 0.0)
        self.assertEqual(inflation["ci_cluster"][1], "inf")   # infinite, written as "inf"
        self.assertAlmostEqual(inflation["ci_cluster"][0], 1 / r["ci_cluster"][1])
        self.assertAlmostEqual(inflation["ci"][0], 1 / r["ci"][1])
        status, out, _ = run("delivery_audit.py", ["--counts", "tp=1,fp=9,fn=1,tn=5"])
        low, high = brute_force_clopper_pearson(1, 10)
        self.assertRegex(out, rf"inflation 1/r .*10\.000\s+\[{1 / high:.3f}, {1 / low:.3f}\]"
                              r"\s+\[3\.000, inf\]")

    def test_text_fits_100_columns_and_headings_stay_apart(self):
        outputs = [run("delivery_audit.py", argv)[1] for argv in (
            [EXAMPLE_RUNS, "--boot", "200", "--cost", "cost_usd", "--raters",
             "rater_a,rater_b,rater_c"], ["--counts", "tp=0,fp=5,fn=0,tn=3"],
            ["--demo", "--boot", "0"])]
        for out in outputs:
            body = out.split("-- provenance --")[0]
            self.assertEqual([l for l in body.splitlines() if len(l) > 100], [])
        self.assertTrue(outputs[0].startswith(
            "Delivery audit: " + os.path.relpath(os.path.join(EXAMPLE_RUNS, "runs.csv")) +
            "\n===="))
        self.assertIn("No bootstrap", outputs[2])

    def test_inconsistent_tables_are_refused(self):
        with TempDir() as folder:
            pairs = write(folder, "rep.csv", "run_id,task_id,claimed,verified,condition,"
                          "replicate\nr1,t1,yes,1,A,1\nr2,t1,yes,0,A,1\nr3,t1,no,0,B,1\n")
            blank = write(folder, "cond.csv", "run_id,task_id,claimed,verified,condition\n"
                          "r1,t1,yes,1,A\nr2,t1,yes,0,\n")
            runs = write(folder, "runs.csv", runs_csv([["r1", "t1", "yes", "1"],
                                                       ["r2", "t2", "no", "0"]]))
            conflict = write(folder, "c1.csv", "run_id,criterion,passed\nr1,c1,1\nr1,c1,0\n")
            unknown = write(folder, "c2.csv", "run_id,criterion,passed\nzz,c1,1\n")
            cases = [([pairs], "runs r1 and r2 are both replicate '1' of task 't1'"),
                     ([blank], "cond.csv row 3, column 'condition': empty condition"),
                     ([runs, "--criteria", conflict], "run 'r1' has two verdicts"),
                     ([runs, "--criteria", unknown], "1 run id(s) not in the runs table: zz"),
                     ([runs, "--raters", "claimed"], "--raters: name at least two")]
            for argv, message in cases:
                status, out, err = run("delivery_audit.py", argv)
                self.assertEqual((status, out), (2, ""), argv)
                self.assertIn(message, err)
                self.assertEqual(len(err.strip().splitlines()), 1)

    def test_criteria_summary_by_hand(self):
        d = load("delivery_audit.py")
        rows = [("a", "c1", True), ("b", "c1", False), ("a", "c2", True), ("b", "c2", False),
                ("a", "c3", True), ("b", "c3", True), ("c", "c1", True), ("c", "c2", False)]
        got = d.criteria_summary(rows, ["a", "b", "c"])
        self.assertEqual((got["criteria"], got["never_vary"]), (3, 1))
        self.assertEqual((got["runs_with_varying_criteria"],
                          got["runs_where_varying_criteria_agree"]), (3, 2))

    def test_verdicts_join_and_missing_verdicts(self):
        rows = [["r1", "t1", "yes"], ["r2", "t1", "yes"], ["r3", "t2", "no"]]
        with TempDir() as folder:
            runs = write(folder, "runs.csv", runs_csv(rows, "run_id,task_id,claimed"))
            verdicts = write(folder, "verdicts.csv",
                             "run_id,instance_id,completed\nr1,t1,true\nr2,t1,false\n"
                             "r3,t2,false\n")
            before = snapshot(folder)
            result = audit_json([runs, "--verdicts", verdicts, "--boot", "50"])
            self.assertEqual(result["counts"], {**result["counts"], "tp": 1, "fp": 1, "tn": 1})
            graded = write(folder, "graded.csv", "run_id,instance_id,completed,status\n"
                           "r1,t1,true,resolved\nr2,t1,,test_patch_failed\nr3,t2,false,"
                           "unresolved\n")
            status, out, err = run("delivery_audit.py", [runs, "--verdicts", graded, "--boot",
                                                         "20"])
            self.assertEqual(status, 0, err)
            self.assertIn("Only 2 of 3 runs were verified", out)
            self.assertIn("(left out, not counted as failures): test_patch_failed 1: r2.", out)
            write(folder, "partial.csv", "run_id,completed\nr1,true\n")
            status, _, err = run("delivery_audit.py",
                                 [runs, "--verdicts", os.path.join(folder, "partial.csv")])
            self.assertEqual(status, 2)
            self.assertIn("no verdict for 2 runs: r2, r3", err)
            after = snapshot(folder)
            self.assertEqual({k: after[k] for k in before}, before)

    def test_bom_crlf_tsv_jsonl_and_stdin_all_read_the_same(self):
        rows = [["r1", "t1", "yes", "1"], ["r2", "t1", "no", "0"], ["r3", "t2", "claimed", "1"],
                ["r4", "t2", "equivocal", "0"]]
        plain = runs_csv(rows)
        want = audit_json(["-", "--boot", "0"], plain.encode())["counts"]
        with TempDir() as folder:
            bom = write(folder, "bom.csv", "\ufeff" + plain.replace("\n", "\r\n"))
            tsv = write(folder, "runs.tsv", plain.replace(",", "\t"))
            jsonl = write(folder, "runs.jsonl", "".join(
                json.dumps(dict(zip(["run_id", "task_id", "claimed", "verified"], r))) + "\n"
                for r in rows))
            for path in (bom, tsv, jsonl):
                self.assertEqual(audit_json([path, "--boot", "0"])["counts"], want, path)
        self.assertEqual((want["tp"], want["fn"], want["tn"], want["equivocal"]), (2, 0, 2, 1))

    def test_bad_input_is_one_line_exit_2_and_writes_nothing(self):
        with TempDir() as folder:
            write(folder, "missing.csv", "run_id,task_id,verified\nr1,t1,1\n")
            write(folder, "spelling.csv", "run_id,task_id,claimed,verified\nr1,t1,perhaps,1\n")
            write(folder, "dup.csv", "run_id,task_id,claimed,verified\nr1,t1,yes,1\nr1,t1,no,0\n")
            write(folder, "empty.csv", "")
            os.makedirs(os.path.join(folder, "norunsfolder"))
            write(folder, "norunsfolder/tool_calls.csv", "run_id,seq,tool\nr1,1,Bash\n")
            cases = [
                (["missing.csv"], "no claim column"),
                (["spelling.csv"], "spelling.csv row 2, column 'claimed': unknown claim 'perhaps'"),
                (["dup.csv"], "dup.csv row 3, column 'run_id': duplicate run id 'r1'"),
                (["empty.csv"], "empty.csv: empty file"),
                (["norunsfolder"], "norunsfolder: runs folder has no runs table"),
                (["nothere.csv"], "nothere.csv: no such file"),
                (["--counts", "tp=1,fq=2"], "--counts: expected"),
                (["--demo", "--boot", "-1"], "--boot"),
            ]
            before = snapshot(folder)
            cwd = os.getcwd()
            os.chdir(folder)
            try:
                for argv, message in cases:
                    status, out, err = run("delivery_audit.py", argv + ["--svg", "out.svg"])
                    self.assertEqual(status, 2, argv)
                    self.assertEqual(out, "")
                    self.assertEqual(len(err.strip().splitlines()), 1, err)
                    self.assertIn(message, err)
                    self.assertTrue(err.startswith("error: "))
            finally:
                os.chdir(cwd)
            self.assertEqual(snapshot(folder), before)

    def test_svg_refuses_to_overwrite_an_input(self):
        with TempDir() as folder:
            path = write(folder, "runs.csv", runs_csv([["r1", "t1", "yes", "1"],
                                                        ["r2", "t2", "no", "0"]]))
            status, _, err = run("delivery_audit.py", [path, "--svg", path])
            self.assertEqual(status, 2)
            self.assertIn("refusing to overwrite an input", err)
            status, _, err = run("delivery_audit.py",
                                 [path, "--svg", os.path.join(folder, "f.svg"), "--boot", "10"])
            self.assertEqual(status, 0, err)
            with open(os.path.join(folder, "f.svg"), encoding="utf-8") as handle:
                self.assertIn("<svg", handle.read())

    def test_alone_in_an_empty_folder(self):
        with TempDir() as folder:
            shutil.copy(os.path.join(HERE, "delivery_audit.py"), folder)
            write(folder, "runs.csv", runs_csv([["r1", "t1", "yes", "1"], ["r2", "t2", "no", "0"],
                                                ["r3", "t2", "yes", "0"]]))
            for argv in (["--demo"], ["--help"], ["runs.csv"]):
                done = subprocess.run([sys.executable, "delivery_audit.py"] + argv, cwd=folder,
                                      capture_output=True, text=True, timeout=120)
                self.assertEqual(done.returncode, 0, done.stderr)
            self.assertEqual(sorted(os.listdir(folder)), ["delivery_audit.py", "runs.csv"])


# Issue 11, items 8-12: verdict cases, degenerate intervals, infinity, pairing and the
# stratified exact test, the three-level claim AUC. Every oracle here is computed
# independently of the script: enumeration, exact fractions, pair counting.
def delivery_csv(rows, header):
    return header + "\n" + "\n".join(",".join(str(c) for c in row) for row in rows) + "\n"


class TestDeliveryInfinity(unittest.TestCase):
    def test_json_writes_infinity_as_a_string_and_keeps_null_for_undefined(self):
        # r = 0 on the claims: inflation 1/r is infinite, a value, not missing.
        result = audit_json(["--counts", "tp=0,fp=5,fn=2,tn=3", "--boot", "0"])
        self.assertEqual(result["inflation"]["value"], "inf")
        self.assertEqual(result["inflation"]["ci"][1], "inf")
        # No claim at all: r is undefined, so 1/r is undefined (null), not infinite.
        result = audit_json(["--counts", "tp=0,fp=0,fn=2,tn=3", "--boot", "0"])
        self.assertIsNone(result["inflation"]["value"])
        d = load("delivery_audit.py")
        text = d.to_json({"a": math.inf, "b": -math.inf, "c": math.nan, "d": None})
        self.assertEqual(json.loads(text), {"a": "inf", "b": "-inf", "c": None, "d": None})

    def test_sampling_mode_prints_inf_where_r_is_zero(self):
        # Three checked claims, all false; five claims unchecked. r = 0, r's exact
        # interval [0, 0.708]: expected deliveries 0 [0, 3.54], so the inflation is
        # inf with the interval [8 / 3.54, inf]. It used to print [2.261, undefined].
        rows = [["r1", "t1", "yes", "0"], ["r2", "t2", "yes", "0"], ["r3", "t3", "yes", "0"],
                ["r4", "t4", "no", "1"]] + [[f"r{i}", f"t{i}", "yes", ""] for i in range(5, 10)]
        low, high = brute_force_clopper_pearson(0, 3)
        with TempDir() as folder:
            path = write(folder, "runs.csv", delivery_csv(rows, "run_id,task_id,claimed,verified"))
            status, out, err = run("delivery_audit.py", [path, "--boot", "0"])
            result = audit_json([path, "--boot", "0"])
        self.assertEqual(status, 0, err)
        flat = " ".join(out.split())
        self.assertIn(f"inflation inf [{8 / (5 * high):.3f}, inf]", flat)
        self.assertNotIn("undefined]", flat)
        self.assertEqual(result["sampling"]["inflation"]["value"], "inf")
        self.assertEqual(result["sampling"]["inflation"]["ci"][1], "inf")
        self.assertAlmostEqual(result["sampling"]["inflation"]["ci"][0], 8 / (5 * high))


def verdict_text(argv):
    """The Verdict section of a text report, on one line."""
    status, out, err = run("delivery_audit.py", argv)
    if status != 0:
        raise AssertionError(f"exit {status}: {err}")
    return " ".join(out.split("\nVerdict\n")[1].split("-- provenance --")[0].split())


class TestDeliveryVerdictCases(unittest.TestCase):
    """Item 8: informative (with direction), no useful agreement, too few runs to tell."""

    def test_perfect_agreement_on_six_runs_is_too_few_to_tell(self):
        # It used to say "the claim carries no usable information (kappa 1.000 ...)".
        text = verdict_text(["--counts", "tp=3,fp=0,fn=0,tn=3", "--boot", "2000"])
        self.assertNotIn("no usable information", text)
        self.assertIn("Pooled over all runs, too few runs to tell", text)
        # Both extreme tables with margins 3/3, 3/3 have Fisher p 1/20 + 1/20 = 0.1.
        self.assertEqual(brute_force_fisher(3, 0, 0, 3), Fraction(1, 10))
        self.assertEqual(brute_force_fisher(0, 3, 3, 0), Fraction(1, 10))
        self.assertIn("no table could reach Fisher p < 0.05 (the smallest attainable is 0.100)",
                      text)
        self.assertIn("A kappa interval narrower than 0.2 always tells", text)

    def test_smallest_attainable_fisher_p_against_every_table(self):
        d = load("delivery_audit.py")
        rng = random.Random(4)
        for _ in range(40):
            tp, fp, fn, tn = (rng.randint(0, 4) for _ in range(4))
            row1, row2, column1 = tp + fp, fn + tn, tp + fn
            want = min(brute_force_fisher(x, row1 - x, column1 - x, row2 - column1 + x)
                       for x in range(max(0, column1 - row2), min(row1, column1) + 1))
            self.assertAlmostEqual(d.smallest_fisher_p(tp, fp, fn, tn), float(want),
                                   delta=1e-12, msg=(tp, fp, fn, tn))

    def test_too_few_runs_gives_the_width_and_the_runs_needed(self):
        rows = [[f"r{i}", f"t{i}", "yes" if i % 3 else "no", "1" if i % 2 else "0"]
                for i in range(27)]
        with TempDir() as folder:
            path = write(folder, "runs.csv", runs_csv(rows))
            result = audit_json([path, "--boot", "2000"])
            text = verdict_text([path, "--boot", "2000"])
        case = result["verdict_case"]
        self.assertEqual(case["case"], "too_few_runs")
        low, high = result["kappa"]["ci"]
        self.assertTrue(low < 0 < 0.2 < high, (low, high))
        self.assertAlmostEqual(case["width"], high - low, delta=1e-15)
        self.assertEqual(case["runs_needed"], math.ceil(27 * ((high - low) / 0.2) ** 2))
        self.assertEqual(case["clusters_needed"], math.ceil(27 * ((high - low) / 0.2) ** 2))
        self.assertIn(f"this one is {high - low:.3f} wide", text)
        self.assertIn(f"1/sqrt(tasks), so roughly {case['clusters_needed']:,} tasks "
                      f"({case['runs_needed']:,} runs at today's runs per task)", text)
        # Without a task column each run is its own cluster: the need is said in runs.
        result = audit_json(["--counts", "tp=6,fp=3,fn=4,tn=5", "--boot", "2000"])
        low, high = result["kappa"]["ci"]
        want = math.ceil(18 * ((high - low) / 0.2) ** 2)
        self.assertEqual(result["verdict_case"]["runs_needed"], want)
        text = verdict_text(["--counts", "tp=6,fp=3,fn=4,tn=5", "--boot", "2000"])
        self.assertIn(f"1/sqrt(runs), so roughly {want:,} runs would be needed", text)

    def test_the_report_lands_on_no_useful_agreement(self):
        # The report's kappa -0.023 [-0.161, 0.182]: the upper end lies below 0.2.
        for argv in (["--demo"], [EXAMPLE_RUNS]):
            result = audit_json(argv + ["--boot", "4000"])
            self.assertEqual(result["verdict_case"]["case"], "no_useful_agreement", argv)
            self.assertLess(result["kappa"]["ci"][1], 0.2)
            self.assertGreater(result["kappa"]["ci"][1], 0)
            text = verdict_text(argv + ["--boot", "4000"])
            self.assertIn("the data exclude any useful agreement", text)
            self.assertIn("kappa -0.023 [", text)
        d = load("delivery_audit.py")
        fake = {"kappa": {"value": -0.023, "ci": [-0.161, 0.182]}, "fisher_p": 1.0,
                "boot": 200000, "n_clusters": 18, "counts": {"tp": 46, "fp": 22, "fn": 3, "tn": 1, "claims": 68,
                                           "runs": 72}}
        self.assertEqual(d.claim_verdict(fake)["case"], "no_useful_agreement")
        # The bound is strict: an interval reaching 0.2 no longer excludes it.
        fake["kappa"]["ci"] = [-0.161, 0.2]
        self.assertEqual(d.claim_verdict(fake)["case"], "too_few_runs")

    def test_information_in_either_direction(self):
        result = audit_json(["--counts", "tp=400,fp=300,fn=300,tn=360", "--boot", "1000"])
        self.assertLess(exact_fisher_p(400, 300, 300, 360), 0.05)
        self.assertEqual((result["verdict_case"]["case"], result["verdict_case"]["direction"]),
                         ("informative", "right"))
        self.assertGreater(result["kappa"]["ci"][0], 0)
        text = verdict_text(["--counts", "tp=400,fp=300,fn=300,tn=360", "--boot", "1000"])
        self.assertIn("Pooled over all runs, the claim carries information about success", text)
        self.assertIn("at best slight agreement", text)      # its interval ends below 0.2
        text = verdict_text(["--counts", "tp=5,fp=40,fn=40,tn=5", "--boot", "2000"])
        self.assertIn("carries information in the wrong direction", text)

    def test_fisher_alone_decides_where_the_interval_is_withheld(self):
        # 30 + 30 runs in perfect agreement: every resample gives kappa 1, so there is
        # no interval; Fisher's p (exactly 2 / C(60, 30)) carries the verdict alone.
        self.assertEqual(exact_fisher_p(30, 0, 0, 30), Fraction(2, math.comb(60, 30)))
        result = audit_json(["--counts", "tp=30,fp=0,fn=0,tn=30", "--boot", "2000"])
        self.assertEqual(result["verdict_case"]["case"], "informative")
        self.assertEqual(result["kappa"]["ci"], [None, None])
        text = verdict_text(["--counts", "tp=30,fp=0,fn=0,tn=30", "--boot", "2000"])
        self.assertIn("no usable interval: all 2000 resamples give 1.000", text)

    def test_a_constant_claim_carries_nothing_by_construction(self):
        text = verdict_text(["--counts", "tp=20,fp=20,fn=0,tn=0", "--boot", "500"])
        self.assertIn("The claim never varies (every run claims completion)", text)


def clustered_runs(tasks, per_task, seed):
    """Runs in `tasks` tasks; claim and outcome independent coin flips (kappa near 0)."""
    rng = random.Random(seed)
    return [[f"r{t}-{i}", f"t{t}", rng.choice(["yes", "no"]), rng.choice(["1", "0"])]
            for t in range(tasks) for i in range(per_task)]


class TestDeliveryDegenerateIntervals(unittest.TestCase):
    """Item 9: no zero-width or few-cluster bootstrap interval is printed or leaned on."""

    def test_zero_width_intervals_become_a_note(self):
        status, out, _ = run("delivery_audit.py", ["--counts", "tp=30,fp=0,fn=0,tn=30",
                                                   "--boot", "2000"])
        self.assertNotIn("[1.000, 1.000]", out)
        self.assertNotIn("[0.000, 0.000]", out)
        flat = " ".join(out.split())
        self.assertIn("No run bootstrap interval for false-completion rate 1 - r: all 2000 "
                      "resamples give 0.000", flat)
        result = audit_json(["--counts", "tp=30,fp=0,fn=0,tn=30", "--boot", "2000"])
        r = result["delivery_rate"]
        self.assertEqual(r["ci_cluster"], [None, None])
        self.assertEqual(r["cluster_interval_withheld"]["percentiles"], [1.0, 1.0])
        self.assertEqual(result["inflation"]["ci_cluster"], [None, None])
        # The completion rate does vary across resamples: its interval stays.
        low, high = result["completion_rate"]["ci_cluster"]
        self.assertLess(low, 0.5)
        self.assertGreater(high, 0.5)

    def test_perfect_agreement_on_six_runs_prints_no_cluster_interval(self):
        status, out, _ = run("delivery_audit.py", ["--counts", "tp=3,fp=0,fn=0,tn=3"])
        self.assertNotIn("[1.000, 1.000]", out)
        self.assertIn("[0.292, 1.000]", out)                 # the exact interval stays
        self.assertIn("only 6 clusters to resample (fewer than 10)", " ".join(out.split()))

    def test_few_tasks_are_never_weighed_by_pooled_fisher(self):
        # Two tasks where every run claims and is verified, two where none does:
        # kappa 1 and a pooled Fisher p near 1e-35, yet only four tasks and no
        # comparison inside any of them. It used to say "carries information".
        between = [[f"r{t}-{i}", f"t{t}", "yes" if t < 2 else "no", int(t < 2)]
                   for t in range(4) for i in range(30)]
        # Three tasks of six runs where the claim tracks the outcome inside each task.
        within = [[f"r{t}-{i}", f"t{t}", "yes" if i < 3 else "no", int(i < 3)]
                  for t in range(3) for i in range(6)]
        with TempDir() as folder:
            first = write(folder, "between.csv", runs_csv(between))
            second = write(folder, "within.csv", runs_csv(within))
            results = [audit_json([path, "--boot", "1000"]) for path in (first, second)]
            texts = [verdict_text([path, "--boot", "1000"]) for path in (first, second)]
        self.assertLess(results[0]["fisher_p"], 1e-30)
        self.assertEqual(results[0]["verdict_case"]["case"], "too_few_runs")
        self.assertIn("within tasks nothing can be compared: no task has both claimed and "
                      "unclaimed runs", texts[0])
        want = enumerated_stratified_p([(3, 3, 0, 3)] * 3)      # 20^3 labellings
        self.assertEqual(want, Fraction(2, 8000))
        self.assertAlmostEqual(results[1]["claim_within_tasks"]["p"], float(want), delta=1e-15)
        # Issue 22: the first sentence answers the pooled question at every task count
        # (too few tasks here); the within-task answer stands beside it, not in its place.
        self.assertEqual(results[1]["verdict_case"]["case"], "too_few_runs")
        self.assertTrue(results[1]["verdict_case"]["needs_tasks"])
        self.assertTrue(results[1]["questions"]["within_tasks"]["shown"])
        self.assertTrue(texts[1].startswith("Pooled over all runs, too few tasks to tell"))
        # Pooled unanswered is not pooled hidden: no 'the two disagree' either way.
        self.assertFalse(results[1]["questions"]["within_only"])
        self.assertNotIn("The two disagree", texts[1])
        self.assertIn("within tasks (exact test stratified by task, 3 tasks) p is <0.001",
                      texts[1])

    def test_few_clusters_never_carry_the_verdict(self):
        # 4 tasks of 60 runs: a 4-cluster bootstrap gives a narrow kappa interval
        # below 0.2, but 4 clusters cannot show the uncertainty between tasks.
        rows = clustered_runs(4, 60, seed=3)
        d = load("delivery_audit.py")
        with TempDir() as folder:
            path = write(folder, "runs.csv", runs_csv(rows))
            result = audit_json([path, "--boot", "2000"])
            status, out, _ = run("delivery_audit.py", [path, "--boot", "2000"])
        withheld = result["kappa"]["cluster_interval_withheld"]
        self.assertLess(withheld["percentiles"][1], 0.2)     # it would have "excluded" 0.2
        self.assertEqual(result["kappa"]["ci"], [None, None])
        self.assertEqual(result["verdict_case"]["case"], "too_few_runs")
        self.assertIn("Pooled over all runs, too few tasks to tell", " ".join(out.split()))
        self.assertNotIn(d.fmt_ci(withheld["percentiles"]), out)


def enumerated_stratified_p(strata):
    """Exact conditional p by listing every joint labelling, with R's two-sided rule.

    Each stratum is (verified in the first condition, runs in the first, verified in
    the second, runs in the second). Given the margins, every choice of which of each
    stratum's runs are the verified ones is equally likely with no condition effect;
    S counts the verified runs in the first condition. Two-sided: the values of S
    whose probability is at most the observed one's times (1 + 1e-7).
    """
    per_stratum = []
    for verified_first, first, verified_second, second in strata:
        choices = itertools.combinations(range(first + second), verified_first + verified_second)
        per_stratum.append([sum(1 for i in chosen if i < first) for chosen in choices])
    tally = {}
    for labelling in itertools.product(*per_stratum):
        tally[sum(labelling)] = tally.get(sum(labelling), 0) + 1
    observed = tally[sum(t[0] for t in strata)]
    limit = Fraction(observed) * (1 + Fraction(1, 10 ** 7))
    return Fraction(sum(c for c in tally.values() if c <= limit), sum(tally.values()))


def condition_rows(tasks, swap=()):
    """Runs of two conditions, two runs each per task, all claiming completion.

    `tasks` lists (plain outcomes, scaffold outcomes) per task; for tasks in `swap`
    the scaffold runs' ids are exchanged, which changes nothing but their order.
    """
    rows = []
    for number, (plain, scaffold) in enumerate(tasks):
        task = f"t{number:02d}"
        for condition, outcomes in (("plain", plain), ("scaffold", scaffold)):
            ids = [f"{task}-{condition}-{k}" for k in (1, 2)]
            if condition == "scaffold" and number in swap:
                ids.reverse()
            rows += [[run_id, task, "yes", outcome, condition]
                     for run_id, outcome in zip(ids, outcomes)]
    return rows


class TestDeliveryPairedConditions(unittest.TestCase):
    """Item 11: McNemar only on real pairs; the exact test stratified by task always."""

    # Six tasks where plain completes once and scaffold never, four where each completes once.
    TASKS = [((1, 0), (0, 0))] * 6 + [((1, 0), (1, 0))] * 4

    def audit_rows(self, rows, header="run_id,task_id,claimed,verified,condition", fmt="json"):
        with TempDir() as folder:
            path = write(folder, "runs.csv", delivery_csv(rows, header))
            if fmt == "json":
                return audit_json([path, "--boot", "0"])
            status, out, err = run("delivery_audit.py", [path, "--boot", "0"])
            self.assertEqual(status, 0, err)
            return " ".join(out.split())

    def test_run_order_no_longer_moves_a_p_value(self):
        # Paired by run id order, this table gave McNemar p 0.03 (b = 6, c = 0); with the
        # scaffold ids of the last four tasks exchanged it gave 0.18 (b = 10, c = 4).
        self.assertEqual(brute_force_mcnemar(6, 0), Fraction(1, 32))
        self.assertEqual(round(float(brute_force_mcnemar(10, 4)), 2), 0.18)
        results = [self.audit_rows(condition_rows(self.TASKS, swap)) for swap in
                   ((), (6, 7, 8, 9))]
        for result in results:
            self.assertNotIn("mcnemar", result)
            self.assertIn("no replicate or pair column", result["mcnemar_skipped"])
        self.assertEqual(results[0]["stratified_exact"], results[1]["stratified_exact"])
        # R 4.2, mantelhaen.test(x, exact = TRUE) on these ten 2x2 tables (rows plain,
        # scaffold; columns verified, not): p-value 0.132884837962963, estimate 3.05718.
        self.assertAlmostEqual(results[0]["stratified_exact"]["p"], 0.132884837962963,
                               delta=1e-14)
        self.assertEqual(round(results[0]["stratified_exact"]["odds_ratio"], 4), 3.0572)
        text = self.audit_rows(condition_rows(self.TASKS), fmt="text")
        self.assertIn("McNemar skipped: no replicate or pair column", text)
        self.assertIn("Exact test stratified by task, plain vs scaffold", text)

    def test_swapping_replicate_numbers_inside_a_task_leaves_the_stratified_p(self):
        rows = condition_rows(self.TASKS)
        header = "run_id,task_id,claimed,verified,condition,replicate"
        plain = [row + [row[0][-1]] for row in rows]
        swapped = [row + [str(3 - int(row[0][-1])) if row[4] == "scaffold" and
                          row[1] >= "t06" else row[0][-1]] for row in rows]
        first, second = (self.audit_rows(r, header) for r in (plain, swapped))
        self.assertEqual(first["stratified_exact"], second["stratified_exact"])
        # A named replicate column is taken as real pairs: there McNemar runs.
        self.assertEqual((first["mcnemar"]["b"], first["mcnemar"]["c"]), (6, 0))
        self.assertEqual((second["mcnemar"]["b"], second["mcnemar"]["c"]), (10, 4))

    def test_the_mcnemar_line_says_how_runs_were_paired_and_how_many_were_not(self):
        rows = [row + [row[0][-1]] for row in condition_rows(self.TASKS[:3])]
        rows.append(["t00-plain-3", "t00", "yes", "1", "plain", "3"])      # no partner
        rows.append(["t01-plain-4", "t01", "yes", "0", "plain", ""])       # blank replicate
        header = "run_id,task_id,claimed,verified,condition,replicate"
        result = self.audit_rows(rows, header)
        self.assertEqual((result["mcnemar"]["pairs"], result["mcnemar"]["unpaired"]), (6, 2))
        self.assertEqual(result["mcnemar"]["paired_by"], ["task", "replicate"])
        text = self.audit_rows(rows, header, fmt="text")
        self.assertIn("6 pairs matched on task and column 'replicate', 2 runs left unpaired",
                      text)

    def test_a_pair_column_without_partners_skips_mcnemar_and_says_why(self):
        rows = [["a1", "t1", "yes", "1", "plain", "1"], ["a2", "t1", "yes", "0", "plain", "2"],
                ["b1", "t2", "yes", "1", "scaffold", "1"], ["b2", "t2", "no", "0", "scaffold", "2"]]
        header = "run_id,task_id,claimed,verified,condition,pair"
        result = self.audit_rows(rows, header)
        self.assertNotIn("mcnemar", result)
        self.assertEqual(result["mcnemar_skipped"],
                         "no task and pair value has a run in two conditions")
        # No task was run in both conditions: the stratified test has nothing to weigh.
        self.assertEqual((result["stratified_exact"]["tasks"],
                          result["stratified_exact"]["runs_in_one_condition_tasks"],
                          result["stratified_exact"]["p"]), (0, 4, None))
        text = self.audit_rows(rows, header, fmt="text")
        self.assertIn("Exact test stratified by task, plain vs scaffold: undefined, since no "
                      "task was run in both conditions", text)

    def test_the_example_folder_keeps_mcnemar_and_gains_the_stratified_test(self):
        status, out, _ = run("delivery_audit.py", [EXAMPLE_RUNS, "--boot", "0"])
        flat = " ".join(out.split())
        self.assertIn("36 pairs matched on task and column 'replicate', no run left unpaired; "
                      "5 discordant (2 complete only in plain, 3 only in scaffold); exact p 1.00",
                      flat)
        result = audit_json([EXAMPLE_RUNS, "--boot", "0"])
        self.assertEqual(result["stratified_exact"]["tasks"], 18)
        self.assertEqual(result["stratified_exact"]["verified_first"], 24)

    def test_stratified_exact_test_against_enumeration(self):
        d = load("delivery_audit.py")
        rng = random.Random(5)
        checked = 0
        while checked < 60:
            strata = []
            for _ in range(rng.randint(1, 4)):
                first, second = rng.randint(1, 3), rng.randint(1, 3)
                strata.append((rng.randint(0, first), first, rng.randint(0, second), second))
            if math.prod(math.comb(t[1] + t[3], t[0] + t[2]) for t in strata) > 5000:
                continue
            want = enumerated_stratified_p(strata)
            self.assertAlmostEqual(d.stratified_exact_test(strata)["p"], float(want),
                                   delta=1e-12, msg=strata)
            checked += 1

    def test_stratified_exact_test_matches_r_documentation_and_float_path(self):
        d = load("delivery_audit.py")
        # R's ?mantelhaen.test example (penicillin and rabbits), exact = TRUE:
        # S = 16, p-value = 0.03994. Strata as (cured first, first, cured second, second).
        rabbits = [(0, 6, 0, 5), (3, 6, 0, 6), (6, 6, 2, 6), (5, 6, 6, 6), (2, 2, 5, 5)]
        test = d.stratified_exact_test(rabbits)
        self.assertEqual(test["verified_first"], 16)
        self.assertEqual(round(test["p"], 5), 0.03994)
        self.assertEqual(round(test["odds_ratio"], 2), 10.36)    # R: 10.36102 (uniroot)
        # The float convolution used for large inputs agrees with the exact integers.
        rng = random.Random(8)
        strata = [(rng.randint(0, 2), 2, rng.randint(0, 2), 2) for _ in range(300)]
        exact = d.stratified_exact_test(strata)
        saved = d.EXACT_STRATIFIED_RUNS
        try:
            d.EXACT_STRATIFIED_RUNS = 0
            floating = d.stratified_exact_test(strata)
        finally:
            d.EXACT_STRATIFIED_RUNS = saved
        self.assertLess(abs(exact["p"] - floating["p"]), 1e-12)
        self.assertLess(abs(exact["odds_ratio"] / floating["odds_ratio"] - 1), 1e-9)

    def test_conditional_odds_ratio_solves_its_score_equation_exactly(self):
        # The conditional MLE makes E_psi[S] equal the observed S: check it in Fractions
        # on a law built by enumeration, independently of the script's convolution.
        d = load("delivery_audit.py")
        rng = random.Random(9)
        for _ in range(40):
            strata = [(rng.randint(0, 2), 2, rng.randint(0, 3), 3) for _ in range(3)]
            tally = {}
            for labelling in itertools.product(*[
                    [sum(1 for i in chosen if i < 2)
                     for chosen in itertools.combinations(range(5), t[0] + t[2])]
                    for t in strata]):
                tally[sum(labelling)] = tally.get(sum(labelling), 0) + 1
            observed = sum(t[0] for t in strata)
            psi = d.stratified_exact_test(strata)["odds_ratio"]
            if len(tally) == 1:
                self.assertIsNone(psi)
            elif observed in (min(tally), max(tally)):
                self.assertEqual(psi, 0.0 if observed == min(tally) else math.inf)
            else:
                ratio = Fraction(psi)
                weights = {s: c * ratio ** s for s, c in tally.items()}
                mean = sum(s * w for s, w in weights.items()) / sum(weights.values())
                self.assertLess(abs(float(mean) - observed), 1e-9, strata)


def brute_force_ordinal_auc(tp, fp, fn, tn, eq_verified, eq_failed):
    """P(a verified run outscores a failed one) + P(tie) / 2, over every pair of runs."""
    verified = [2] * tp + [1] * eq_verified + [0] * (fn - eq_verified)
    failed = [2] * fp + [1] * eq_failed + [0] * (tn - eq_failed)
    total = Fraction(0)
    for a in verified:
        for b in failed:
            total += 1 if a > b else Fraction(1, 2) if a == b else 0
    return total / (len(verified) * len(failed))


class TestDeliveryOrdinalClaim(unittest.TestCase):
    """Item 12: the AUC of claimed > equivocal > not claimed, beside the binary one."""

    def test_against_pair_counting_with_fractions(self):
        d = load("delivery_audit.py")
        rng = random.Random(12)
        for _ in range(200):
            tp, fp, fn, tn = (rng.randint(0, 9) for _ in range(4))
            eq_verified, eq_failed = rng.randint(0, fn), rng.randint(0, tn)
            got = d.ordinal_claim_auc(tp, fp, fn, tn, eq_verified, eq_failed)
            if tp + fn == 0 or fp + tn == 0:
                self.assertIsNone(got)
                continue
            want = brute_force_ordinal_auc(tp, fp, fn, tn, eq_verified, eq_failed)
            self.assertEqual(got, float(want), (tp, fp, fn, tn, eq_verified, eq_failed))

    def test_reported_beside_the_binary_claim_auc(self):
        argv = ["--counts", "tp=10,fp=5,fn=6,tn=8,eq_verified=4,eq_failed=1", "--boot", "2000"]
        result = audit_json(argv)
        want = brute_force_ordinal_auc(10, 5, 6, 8, 4, 1)
        self.assertEqual(want, Fraction(284, 416))
        self.assertEqual(result["ordinal_claim_auc"]["value"], float(want))
        low, high = result["ordinal_claim_auc"]["ci_cluster"]
        self.assertLess(low, float(want))
        self.assertGreater(high, float(want))
        # Equivocal read as claims or not, the three-level score is the same.
        self.assertEqual(result["equivocal_as_claims"]["ordinal_claim_auc"]["value"],
                         float(want))
        status, out, _ = run("delivery_audit.py", argv)
        self.assertRegex(out, r"claim AUC \(\(sensitivity \+ specificity\) / 2\)\s+0\.620\s")
        self.assertRegex(out, r"claim AUC, 3 levels \(yes > equivocal > no\)\s+0\.683\s+\[")
        # The report's table: all four not-claimed messages were equivocal, so the
        # three-level AUC equals the binary one, 0.491.
        demo = audit_json(["--demo", "--boot", "0"])
        self.assertEqual(demo["ordinal_claim_auc"]["value"],
                         float(brute_force_ordinal_auc(46, 22, 3, 1, 3, 1)))
        self.assertEqual(round(demo["ordinal_claim_auc"]["value"], 3), 0.491)


# Sampling mode's predictive interval, the pooled and within-task questions side by
# side, p-values that never round across 0.05, kappa's ceiling and the BCa interval.
# Oracles: enumeration, exact fractions, closed forms; R and scipy outside the repo.
def simpson_runs(n_tasks, seed=4, per_task=16):
    """Claims track success inside every task, and hard tasks (every other one) draw
    far more claims: pooled over runs the association all but vanishes."""
    rng = random.Random(seed)
    rows = []
    for t in range(n_tasks):
        hard = t % 2 == 0
        for r in range(per_task):
            y = int(rng.random() < (0.15 if hard else 0.85))
            claim = rng.random() < ((0.97 if y else 0.6) if hard else (0.4 if y else 0.03))
            rows.append([f"r{t}_{r}", f"t{t:02d}", "yes" if claim else "no", y])
    return rows


def confounded_runs(tasks_per_kind):
    """Claims and successes both follow task difficulty; within tasks, none at all.

    Easy tasks: five runs, all claimed, all verified. Hard: five, none either.
    Mixed: two claimed (one verified), two not (one verified): in every task with
    both claimed and unclaimed runs the outcome splits alike in both rows.
    """
    rows = []
    for k in range(tasks_per_kind):
        for kind, spec in (("easy", [("yes", 1)] * 5), ("hard", [("no", 0)] * 5),
                           ("mixed", [("yes", 1), ("yes", 0), ("no", 1), ("no", 0)])):
            rows += [[f"{kind}{k}-{i}", f"{kind}{k}", claim, verified]
                     for i, (claim, verified) in enumerate(spec)]
    return rows


class TestDeliveryBothQuestions(unittest.TestCase):
    """Finding 5: at every task count the verdict asks both questions and says which
    is which; at 9 and 12 tasks one confounded process gets one story."""

    def test_nine_and_twelve_tasks_answer_the_pooled_question_by_one_rule(self):
        # Within tasks only the mixed tasks weigh in: each (1 of 2, 1 of 2), so S is
        # a sum of hypergeometrics at their modes and p is 1 exactly.
        self.assertEqual(enumerated_stratified_p([(1, 2, 1, 2)] * 3), 1)
        self.assertEqual(enumerated_stratified_p([(1, 2, 1, 2)] * 4), 1)
        texts, results = [], []
        with TempDir() as folder:
            for per_kind in (3, 4):
                path = write(folder, f"c{per_kind}.csv", runs_csv(confounded_runs(per_kind)))
                texts.append(verdict_text([path, "--boot", "2000"]))
                results.append(audit_json([path, "--boot", "2000"]))
        self.assertEqual([r["n_tasks"] for r in results], [9, 12])
        for text, result in zip(texts, results):
            self.assertIn("Within tasks (among runs of the same task", text)
            self.assertIn("3 tasks with claimed and unclaimed runs, p 1.000"
                          if result["n_tasks"] == 9 else
                          "4 tasks with claimed and unclaimed runs, p 1.000", text)
            self.assertIn("Pooled over all runs (does a claimed run succeed more often", text)
            self.assertEqual(result["questions"]["within_tasks"]["p"], 1.0)
        # At 12 tasks the pooled figures decide the first sentence; the second names
        # the question it answers, and the two disagree.
        self.assertIn("Pooled over all runs, the claim carries information about success "
                      "(kappa 0.714 [", texts[1])
        self.assertTrue(results[1]["questions"]["pooled"]["shown"])
        self.assertTrue(results[1]["questions"]["through_tasks"])
        self.assertIn("the association runs through the tasks, not within them", texts[1])
        self.assertFalse(results[1]["questions"]["pooled"]["runs_counted_as_independent"])
        # At 9 the first sentence says too few tasks to tell (issue 22), and the second
        # answers the pooled question by the same rule. It used to call the pooled
        # association shown on Fisher's p alone, and then say it runs through the tasks,
        # two sentences after 'too few tasks to tell'.
        self.assertTrue(texts[0].startswith("Pooled over all runs, too few tasks to tell"))
        self.assertLess(results[0]["fisher_p"], 0.05)
        self.assertTrue(results[0]["questions"]["pooled"]["runs_counted_as_independent"])
        self.assertFalse(results[0]["questions"]["pooled"]["shown"])
        self.assertFalse(results[0]["questions"]["through_tasks"])
        self.assertIn("counting runs of one task as independent: too few tasks to tell. "
                      "Within tasks", texts[0])
        self.assertNotIn("The two disagree", texts[0])

    def test_agreeing_answers_add_no_disagreement_sentence(self):
        # Claim tracks the outcome inside each of 12 tasks: both questions say yes.
        rows = [[f"r{t}-{i}", f"t{t}", "yes" if i < 3 else "no", int(i < 3)]
                for t in range(12) for i in range(6)]
        with TempDir() as folder:
            path = write(folder, "within.csv", runs_csv(rows))
            result = audit_json([path, "--boot", "1000"])
            text = verdict_text([path, "--boot", "1000"])
        self.assertEqual(result["claim_within_tasks"]["p"],
                         float(Fraction(2, 20 ** 12)))   # only the two extreme labellings
        self.assertTrue(result["questions"]["pooled"]["shown"])
        self.assertTrue(result["questions"]["within_tasks"]["shown"])
        self.assertNotIn("The two disagree", text)

    def test_simpson_headline_names_its_question_at_every_task_count(self):
        # Issue 22: claims track success inside every task, hard tasks draw more claims.
        # The first sentence said "carries information" at 9 tasks (the within-task
        # test in the pooled question's place) and "carries no usable information" at
        # 20, two paragraphs above a within-task p < 0.001.
        texts, results = [], []
        with TempDir() as folder:
            for n_tasks in (9, 20):
                path = write(folder, f"s{n_tasks}.csv", runs_csv(simpson_runs(n_tasks)))
                texts.append(verdict_text([path, "--boot", "2000"]))
                results.append(audit_json([path, "--boot", "2000"]))
        for text, result in zip(texts, results):
            self.assertTrue(text.startswith("Pooled over all runs, "), text[:80])
            self.assertLess(result["claim_within_tasks"]["p"], 0.001)
            self.assertGreater(result["claim_within_tasks"]["odds_ratio"], 5)
            self.assertTrue(result["questions"]["within_tasks"]["shown"])
            self.assertNotIn("no usable information", text)
            self.assertNotIn("The claim carries information", text)
        self.assertTrue(texts[0].startswith("Pooled over all runs, too few tasks to tell"))
        self.assertEqual(results[1]["verdict_case"]["case"], "no_useful_agreement")
        self.assertIn("That answers the pooled question only: within tasks the claim does "
                      "tell a success from a failure", texts[1])

    def test_no_task_column_asks_only_the_pooled_question(self):
        result = audit_json(["--demo", "--boot", "0"])
        self.assertNotIn("questions", result)
        self.assertNotIn("Two questions", verdict_text(["--demo", "--boot", "0"]))


class TestDeliveryPValuesNeverRoundAcross(unittest.TestCase):
    """Finding 6: McNemar printed 'exact p 0.05' for 0.0490."""

    def test_mcnemar_just_below_five_percent(self):
        # 4 pairs complete only in A, 13 only in B: 2 P(X <= 4), X ~ Binomial(17, 1/2).
        want = brute_force_mcnemar(4, 13)
        self.assertEqual(want, Fraction(2 * sum(math.comb(17, i) for i in range(5)), 2 ** 17))
        self.assertEqual(round(float(want), 4), 0.049)
        rows = []
        for i in range(17):
            a, b = (1, 0) if i < 4 else (0, 1)
            rows += [[f"a{i}", f"t{i}", "yes", a, "A", 1], [f"b{i}", f"t{i}", "yes", b, "B", 1]]
        rows += [[f"a{i}", f"t{i}", "yes", 1, "A", 1] for i in range(17, 20)]
        rows += [[f"b{i}", f"t{i}", "yes", 1, "B", 1] for i in range(17, 20)]
        with TempDir() as folder:
            path = write(folder, "pairs.csv", runs_csv(
                rows, "run_id,task_id,claimed,verified,condition,replicate"))
            status, out, err = run("delivery_audit.py", [path, "--boot", "0"])
        self.assertEqual(status, 0, err)
        flat = " ".join(out.split())
        self.assertIn("exact p 0.049.", flat)
        self.assertNotIn("exact p 0.05.", flat)

    def test_three_decimals_and_never_onto_the_line(self):
        d = load("delivery_audit.py")
        cases = {0.0490: "0.049", 0.0497: "0.0497", 0.04999: "0.04999", 0.0499999999: "<0.050",
                 0.05: "0.050", 0.0504: "0.050", 1.0: "1.000", 0.0004: "<0.001"}
        for p, want in cases.items():
            self.assertEqual(d.fmt_p(p), want, p)
            shown = float(want.lstrip("<"))
            self.assertEqual(shown < 0.05 or want == "<0.050", p < 0.05, p)
        # The report's McNemar 1.00 is 1.000 at three decimals.
        status, out, _ = run("delivery_audit.py", [EXAMPLE_RUNS, "--boot", "0"])
        self.assertIn("exact p 1.000.", " ".join(out.split()))


class TestDeliveryKappaCeiling(unittest.TestCase):
    """Kappa's maximum given the margins, beside kappa: 392/1760 on the report's table."""

    def test_against_every_table_with_the_same_margins(self):
        d = load("delivery_audit.py")
        rng = random.Random(19)
        for _ in range(150):
            tp, fp, fn, tn = (rng.randint(0, 7) for _ in range(4))
            if d.cohen_kappa(tp, fp, fn, tn) is None:
                self.assertIsNone(d.kappa_max(tp, fp, fn, tn))
                continue
            claims, verified, n = tp + fp, tp + fn, tp + fp + fn + tn
            best = max(kappa_from_labels([1] * claims + [0] * (n - claims),
                                         [1] * x + [0] * (claims - x) + [1] * (verified - x)
                                         + [0] * (n - claims - verified + x))
                       for x in range(max(0, claims + verified - n), min(claims, verified) + 1))
            self.assertAlmostEqual(d.kappa_max(tp, fp, fn, tn), float(best), delta=1e-12)

    def test_printed_beside_kappa_and_read_by_the_verdict(self):
        # 68 claims, 49 verified of 72: agreement at most (49 + 4) / 72.
        want = (Fraction(53, 72) - Fraction(68 * 49 + 4 * 23, 72 ** 2)) / (
            1 - Fraction(68 * 49 + 4 * 23, 72 ** 2))
        self.assertEqual(want, Fraction(392, 1760))
        result = audit_json(["--demo", "--boot", "0"])
        self.assertAlmostEqual(result["kappa"]["max_given_margins"], float(want), delta=1e-15)
        status, out, _ = run("delivery_audit.py", ["--demo", "--boot", "0"])
        self.assertRegex(out, r"kappa's maximum given the margins\s+0\.223\s")
        self.assertIn("with these margins kappa is at most 0.223", " ".join(out.split()))
        # 60 of 70 claims verified, every one of the 60 verified runs claimed: at most
        # (60 + 1) / 71 agreement, a ceiling below 0.2, and the verdict says so.
        text = verdict_text(["--counts", "tp=60,fp=10,fn=0,tn=1", "--boot", "0"])
        self.assertIn("No table with these margins reaches kappa 0.2 (the most is 0.145)", text)


def sampled_runs(tasks, checked, verified_checked, unchecked):
    """Each task: `checked` verified claims of which `verified_checked` delivered, and
    `unchecked` claims nobody checked."""
    rows = []
    for t in range(tasks):
        rows += [[f"r{t}-c{i}", f"t{t}", "yes", int(i < verified_checked)]
                 for i in range(checked)]
        rows += [[f"r{t}-u{i}", f"t{t}", "yes", ""] for i in range(unchecked)]
    return rows


class TestDeliveryRealisedDeliveries(unittest.TestCase):
    """Finding 4: sampling mode's interval was for the expected deliveries; the bill
    meets the realised count, which needs a predictive interval."""

    def test_every_claim_checked_prints_the_count_not_an_interval(self):
        # The shipped OpenHands runs with the logs folder: one unclaimed run has no report,
        # both claims were checked, 1 delivered. Nothing is projected, so no "[1.0, 1.0]".
        status, out, _ = run("delivery_audit.py", [
            os.path.join(HERE, "examples", "agents", "openhands"), "--verdicts",
            os.path.join(HERE, "examples", "verdicts", "agents", "logs", "run_evaluation",
                         "calc-eval")])
        self.assertEqual(status, 0, out)
        sampling = out.split("Sampling mode", 1)[1].split("Verdict", 1)[0]
        self.assertNotIn("Expected verified deliveries", sampling)
        self.assertNotIn("[1.0, 1.0]", sampling)
        self.assertIn("Realised verified deliveries: 1 (every claim was checked); "
                      "inflation 2.000.", " ".join(sampling.split()))

    def test_no_spread_between_tasks_is_a_binomial_prediction(self):
        # 12 alike tasks: 2 of 4 checked claims delivered, 2 unchecked claims each.
        # Every resample gives r = 1/2 and no spread, so the realised deliveries are
        # 24 seen + Binomial(24, 1/2): exact quantiles from the binomial law.
        with TempDir() as folder:
            path = write(folder, "runs.csv", runs_csv(sampled_runs(12, 4, 2, 2)))
            result = audit_json([path, "--boot", "4000"])
            status, out, _ = run("delivery_audit.py", [path, "--boot", "4000"])
        cdf = [Fraction(sum(math.comb(24, i) for i in range(k + 1)), 2 ** 24) for k in range(25)]
        low = 24 + next(k for k in range(25) if cdf[k] >= Fraction(1, 40))
        high = 24 + next(k for k in range(25) if cdf[k] >= Fraction(39, 40))
        self.assertEqual((low, high), (24 + 7, 24 + 17))
        realised = result["sampling"]["realised_verified_deliveries"]
        self.assertLessEqual(abs(realised["ci"][0] - low), 1, realised)
        self.assertLessEqual(abs(realised["ci"][1] - high), 1, realised)
        # The expectation's interval is far narrower than the count's.
        expected = result["sampling"]["expected_verified_deliveries"]
        self.assertEqual(expected["value"], 36.0)
        self.assertLess(realised["ci"][0], expected["ci"][0])
        self.assertGreater(realised["ci"][1], expected["ci"][1])
        self.assertEqual(result["sampling"]["realised_inflation"]["ci"],
                         [72 / realised["ci"][1], 72 / realised["ci"][0]])
        flat = " ".join(out.split())
        self.assertIn("(the expectation, not the count a bill will meet)", flat)
        self.assertIn(f"Realised verified deliveries, 95% predictive interval (task-cluster "
                      f"bootstrap, beta-binomial within tasks, 4,000 draws): "
                      f"[{realised['ci'][0]}, {realised['ci'][1]}]", flat)

    def test_claims_of_one_task_rise_and_fall_together(self):
        # Tasks that deliver all or nothing: the unchecked claims of a task that is
        # unchecked share one fate, so the count spreads far wider than Binomial.
        rows = sampled_runs(10, 4, 4, 0) + sampled_runs(10, 4, 0, 0)
        rows = [[f"a{r[0]}", f"a{r[1]}"] + r[2:] for r in rows[:40]] + rows[40:]
        rows += [[f"u{t}-{i}", f"u{t}", "yes", ""] for t in range(10) for i in range(4)]
        with TempDir() as folder:
            path = write(folder, "runs.csv", runs_csv(rows))
            realised = audit_json([path, "--boot", "4000"])["sampling"][
                "realised_verified_deliveries"]
        # 40 seen; 10 unchecked tasks of 4 claims, each all or none (rho 1) at the rate
        # of a resample of the 20 checked tasks, M / 20 with M ~ Binomial(20, 1/2):
        # 40 + 4 X, X a Binomial(10, M / 20) mixture, its law exact in fractions.
        law = [Fraction(0)] * 11
        for m in range(21):
            q = Fraction(m, 20)
            for k in range(11):
                law[k] += (Fraction(math.comb(20, m), 2 ** 20) * math.comb(10, k)
                           * q ** k * (1 - q) ** (10 - k))
        cdf = list(itertools.accumulate(law))
        low = next(k for k in range(11) if cdf[k] >= Fraction(1, 40))
        high = next(k for k in range(11) if cdf[k] >= Fraction(39, 40))
        self.assertEqual((low, high), (1, 9))
        self.assertEqual(realised["ci"], [40 + 4 * low, 40 + 4 * high])
        # Binomial(40, 1/2) claims, as if each claim were its own task, spread half as far.
        self.assertEqual(self_binomial_quantiles(40), (14, 26))

    def test_few_tasks_withhold_the_prediction(self):
        with TempDir() as folder:
            path = write(folder, "runs.csv", runs_csv(sampled_runs(6, 4, 2, 2)))
            result = audit_json([path, "--boot", "1000"])
            status, out, _ = run("delivery_audit.py", [path, "--boot", "1000"])
        realised = result["sampling"]["realised_verified_deliveries"]
        self.assertIsNone(realised["ci"])
        self.assertEqual(realised["withheld"], "only 6 clusters to resample (fewer than 10)")
        self.assertIn("No predictive interval for the realised verified deliveries: only 6 "
                      "clusters to resample (fewer than 10).", " ".join(out.split()))

    def test_clustering_that_cannot_be_estimated_is_taken_at_the_all_or_none_bound(self):
        # Issue 22: 12 tasks with one checked claim each (7 verified) and 3 unchecked
        # tasks of 20 claims. The intraclass correlation cannot be estimated and was
        # set to 0: a binomial interval, though such tasks may deliver all or none.
        rows = [[f"a{t}", f"s{t:02d}", "yes", int(t < 7)] for t in range(12)]
        rows += [[f"b{t}-{r}", f"u{t}", "yes", ""] for t in range(3) for r in range(20)]
        with TempDir() as folder:
            path = write(folder, "sampled.csv", runs_csv(rows))
            result = audit_json([path, "--boot", "4000"])
            text = " ".join(run("delivery_audit.py", [path, "--boot", "4000"])[1].split())
        realised = result["sampling"]["realised_verified_deliveries"]
        self.assertIn("at the all-or-none bound", realised["method"])
        self.assertIn("at the all-or-none bound", text)
        self.assertEqual(realised["at_bound"], realised["draws"])
        # At rho = 1: the pooled rate resampled over the 12 tasks, m* = B / 12 with
        # B ~ Binomial(12, 7/12), and each unchecked task delivering all 20 claims with
        # probability m*: 7 + 20 X, X ~ Binomial(3, m*). Exact law, then its 2.5% and
        # 97.5% points.
        law = [Fraction(0)] * 4
        for b in range(13):
            weight = math.comb(12, b) * Fraction(7, 12) ** b * Fraction(5, 12) ** (12 - b)
            m = Fraction(b, 12)
            for x in range(4):
                law[x] += weight * math.comb(3, x) * m ** x * (1 - m) ** (3 - x)
        cumulative = list(itertools.accumulate(law))
        low = next(x for x in range(4) if cumulative[x] > Fraction(1, 40))
        high = next(x for x in range(4) if cumulative[x] >= Fraction(39, 40))
        self.assertEqual(realised["ci"], [7 + 20 * low, 7 + 20 * high])


def self_binomial_quantiles(n):
    """The 2.5% and 97.5% points of Binomial(n, 1/2): the least k with CDF at least each."""
    cdf = [Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2 ** n) for k in range(n + 1)]
    return (next(k for k in range(n + 1) if cdf[k] >= Fraction(1, 40)),
            next(k for k in range(n + 1) if cdf[k] >= Fraction(39, 40)))



class TestDeliveryBcaInterval(unittest.TestCase):
    """The BCa task interval in the JSON beside the percentile one (scipy agrees
    outside the repo; the bench shows why the percentile interval stays printed)."""

    def test_levels_by_hand(self):
        d = load("delivery_audit.py")
        # 3 of 10 resamples below the estimate: z0 = inverse normal of 0.3. The
        # jackknife (0, 0, 1) has deviations (1/3, 1/3, -2/3) from its mean:
        # sum of cubes -2/9, of squares 2/3, so a = (-2/9) / (6 (2/3)^1.5).
        values = [float(v) for v in range(10)]
        normal = statistics.NormalDist()
        z0, a = normal.inv_cdf(0.3), (-2 / 9) / (6 * (2 / 3) ** 1.5)
        want = [normal.cdf(z0 + (z0 + z) / (1 - a * (z0 + z)))
                for z in (normal.inv_cdf(0.025), normal.inv_cdf(0.975))]
        got = d.bca_levels(values, 2.5, [0.0, 0.0, 1.0])
        for g, w in zip(got, want):
            self.assertAlmostEqual(g, w, delta=1e-12)
        # Every resample on one side: no correction, no interval.
        self.assertIsNone(d.bca_levels(values, -1.0, [0.0, 1.0]))

    def test_json_carries_both_and_prints_the_percentile(self):
        result = audit_json([EXAMPLE_RUNS, "--boot", "2000"])
        self.assertEqual(len(result["kappa"]["ci_bca"]), 2)
        self.assertEqual(len(result["delivery_rate"]["ci_cluster_bca"]), 2)
        self.assertNotEqual(result["kappa"]["ci_bca"], result["kappa"]["ci"])
        # Below FEW_CLUSTERS clusters there is neither.
        result = audit_json(["--counts", "tp=3,fp=1,fn=1,tn=3", "--boot", "500"])
        self.assertNotIn("ci_bca", result["kappa"])


# === auc_audit.py ===
class RowRecorder:
    """A stand-in for auc_audit's NullFamily with one word per run (1 on that run, 0
    elsewhere), so task_null_aucs, the task shuffle the script runs, hands back each
    shuffle's drawn runs instead of AUCs: production's own draws, observed."""

    def __init__(self, n):
        self.words = [[int(row == word) for row in range(n)] for word in range(n)]
        self.totals = [1] * n

    def aucs_of_sums(self, packed, are_successes):
        return [row for row, drawn in enumerate(packed) if drawn], are_successes


def task_shuffle_draws(module, labels, strata_codes, task_codes, perms, rng):
    """The task shuffle's draws as (rows, are_successes), the form shuffled_draws yields
    for the other two shuffles, read off task_null_aucs through a RowRecorder."""
    return module.task_null_aucs(RowRecorder(len(labels)), labels, strata_codes,
                                 task_codes, perms, rng)


def brute_pairs(scores, labels, groups=None, rows=None, weights=None):
    """Exact AUC (Fraction) by visiting every success/failure pair; None with no pairs."""
    rows = range(len(scores)) if rows is None else rows
    credit = pairs = 0
    for i in rows:
        for j in rows:
            if not labels[i] or labels[j]:
                continue
            if groups is not None and groups[i] != groups[j]:
                continue
            w = 1 if weights is None else weights[i] * weights[j]
            pairs += w
            if scores[i] > scores[j]:
                credit += 2 * w
            elif scores[i] == scores[j]:
                credit += w
    return (Fraction(credit, 2 * pairs) if pairs else None), pairs


class TestAucStatistics(unittest.TestCase):
    def setUp(self):
        self.a = load(AUC)

    def test_auc_matches_brute_force_pair_counting_with_ties(self):
        rng = random.Random(11)
        for _ in range(200):
            n = rng.randint(2, 25)
            labels = [rng.randint(0, 1) for _ in range(n)]
            scores = [rng.randint(0, 4) for _ in range(n)]       # many ties
            expected, pairs = brute_pairs(scores, labels)
            twice_u, got_pairs = self.a.pair_count(scores, labels)
            self.assertEqual(got_pairs, pairs)
            if pairs:
                self.assertEqual(Fraction(twice_u, 2 * pairs), expected)
                auc, direction = self.a.better_direction(twice_u, pairs)
                self.assertEqual(auc, float(best(expected)))
                self.assertEqual(direction, "+" if expected >= Fraction(1, 2) else "-")

    def test_auc_published_value_hanley_mcneil(self):
        # Hanley & McNeil (1982), Table 1: 58 normal and 51 abnormal images rated 1-5;
        # the area under the curve is 0.893.
        normal = [1] * 33 + [2] * 6 + [3] * 6 + [4] * 11 + [5] * 2
        abnormal = [1] * 3 + [2] * 2 + [3] * 2 + [4] * 11 + [5] * 33
        scores, labels = normal + abnormal, [0] * 58 + [1] * 51
        auc, direction = self.a.better_direction(*self.a.pair_count(scores, labels))
        self.assertEqual((round(auc, 3), direction), (0.893, "+"))

    def test_stratified_auc_counts_only_pairs_inside_a_stratum(self):
        rng = random.Random(12)
        for _ in range(150):
            n = rng.randint(2, 25)
            labels = [rng.randint(0, 1) for _ in range(n)]
            scores = [rng.randint(0, 5) for _ in range(n)]
            strata = [rng.choice("xyz") for _ in range(n)]
            expected, pairs = brute_pairs(scores, labels, strata)
            twice_u, got_pairs = self.a.pair_count(scores, labels, strata)
            self.assertEqual(got_pairs, pairs)
            if pairs:
                self.assertEqual(Fraction(twice_u, 2 * pairs), expected)

    def test_stratified_differs_from_pooled(self):
        # Within each stratum the score separates perfectly; pooled, it does not.
        scores = [1, 2, 11, 12]
        labels = [0, 1, 0, 1]
        strata = ["p", "p", "q", "q"]
        self.assertEqual(self.a.pair_count(scores, labels, strata), (4, 2))  # AUC 1
        self.assertEqual(self.a.pair_count(scores, labels), (6, 4))          # AUC 0.75

    def test_delong_hand_worked_example(self):
        # Successes are rows 2, 3; failures rows 0, 1.
        # Feature x = 1,2,3,4: both successes beat both failures: V10 = V01 = (1, 1),
        #   AUC 1.
        # Baseline y = 1,3,2,4: success 2 beats failure 1, loses to 3 -> V10 = 0.5;
        #   success 4 beats both -> V10 = 1; failure 1 is beaten by both -> V01 = 1;
        #   failure 3 by one -> V01 = 0.5. AUC 0.75.
        # diff of V10 = (0.5, 0): sample variance 0.125, / 2 successes = 0.0625;
        # diff of V01 = (0, 0.5): 0.125 / 2 failures = 0.0625. var = 0.125.
        # z = 0.25 / sqrt(0.125) = 1/sqrt(2); two-sided p = erfc(z / sqrt 2) = erfc(0.5).
        p = self.a.delong_p([1, 2, 3, 4], [1, 3, 2, 4], [0, 0, 1, 1], None, range(4))
        self.assertAlmostEqual(p, 0.4795001221869535, places=12)
        self.assertAlmostEqual(p, math.erfc(0.5), places=12)

    def test_delong_matches_direct_structural_components(self):
        # The components computed pair by pair, straight from DeLong et al. (1988).
        rng = random.Random(13)

        def psi(a, b):
            return 1.0 if a > b else 0.5 if a == b else 0.0

        for _ in range(60):
            n = rng.randint(6, 20)
            labels = [0, 0, 1, 1] + [rng.randint(0, 1) for _ in range(n - 4)]
            x = [rng.randint(0, 6) for _ in range(n)]
            y = [rng.randint(0, 6) for _ in range(n)]
            pos = [i for i in range(n) if labels[i]]
            neg = [i for i in range(n) if not labels[i]]
            comps = []
            for s in (x, y):
                v10 = [sum(psi(s[i], s[j]) for j in neg) / len(neg) for i in pos]
                v01 = [sum(psi(s[i], s[j]) for i in pos) / len(pos) for j in neg]
                comps.append((v10, v01))

            def cov(a, b):
                ma, mb = sum(a) / len(a), sum(b) / len(b)
                return sum((p - ma) * (q - mb) for p, q in zip(a, b)) / (len(a) - 1)

            (x10, x01), (y10, y01) = comps
            var = ((cov(x10, x10) + cov(y10, y10) - 2 * cov(x10, y10)) / len(pos)
                   + (cov(x01, x01) + cov(y01, y01) - 2 * cov(x01, y01)) / len(neg))
            diff = sum(x10) / len(pos) - sum(y10) / len(pos)
            got = self.a.delong_p(x, y, labels, None, range(n))
            if var <= 1e-15:
                continue
            expected = math.erfc(abs(diff) / math.sqrt(var) / math.sqrt(2))
            self.assertAlmostEqual(got, expected, places=10)

    def test_stratified_delong_matches_per_stratum_components(self):
        # Strata are independent: the difference is the pair-weighted sum of the
        # strata's differences, its variance the sum of weight^2 x their variances,
        # each from DeLong's components computed pair by pair.
        rng = random.Random(29)

        def psi(a, b):
            return 1.0 if a > b else 0.5 if a == b else 0.0

        def var(values):
            mean = sum(values) / len(values)
            return sum((v - mean) ** 2 for v in values) / (len(values) - 1)

        checked = 0
        for _ in range(40):
            n = rng.randint(12, 30)
            groups = [rng.randint(0, 2) for _ in range(n)]
            labels = [rng.randint(0, 1) for _ in range(n)]
            x = [rng.randint(0, 5) for _ in range(n)]
            y = [rng.randint(0, 5) for _ in range(n)]
            parts = []
            for g in sorted(set(groups)):
                pos = [i for i in range(n) if groups[i] == g and labels[i]]
                neg = [i for i in range(n) if groups[i] == g and not labels[i]]
                if pos and neg:
                    parts.append((pos, neg))
            total = sum(len(p) * len(q) for p, q in parts)
            if not total:
                continue
            diff = variance = 0.0
            for pos, neg in parts:
                w = len(pos) * len(neg) / total
                d10 = [sum(psi(x[i], x[j]) - psi(y[i], y[j]) for j in neg) / len(neg)
                       for i in pos]
                d01 = [sum(psi(x[i], x[j]) - psi(y[i], y[j]) for i in pos) / len(pos)
                       for j in neg]
                diff += w * sum(d10) / len(pos)
                if len(pos) > 1:
                    variance += w * w * var(d10) / len(pos)
                if len(neg) > 1:
                    variance += w * w * var(d01) / len(neg)
            got = self.a.delong_p(x, y, labels, groups, range(n))
            # Issue 11 item 4: with fewer than 2 successes or failures in a stratum that
            # has pairs, DeLong's variance is undefined and no p is printed.
            if any(len(pos) < 2 or len(neg) < 2 for pos, neg in parts):
                self.assertIsNone(got)
                checked += 1
                continue
            if variance <= 1e-12:
                continue
            self.assertAlmostEqual(got, math.erfc(abs(diff) / math.sqrt(variance) / math.sqrt(2)),
                                   places=10)
            checked += 1
        self.assertGreater(checked, 20)

    def test_adjusted_p_equals_exact_enumeration_of_all_permutations(self):
        # 8 runs, 4 successes: all C(8,4) = 70 label assignments, brute-force AUCs.
        labels = [1, 1, 0, 1, 0, 0, 1, 0]
        features = {"a": [3, 5, 1, 4, 2, 2, 6, 0],
                     "b": [1, None, 2, 2, 3, None, 1, 4],
                     "c": [7, 7, 1, 2, 7, 3, 3, 1]}
        n = len(labels)
        subsets = list(itertools.combinations(range(n), 4))
        exact_maxima = []
        for successes in subsets:
            shuffled = [1 if i in successes else 0 for i in range(n)]
            best_value = 0.0
            for values in features.values():
                rows = [i for i in range(n) if values[i] is not None]
                auc, _ = brute_pairs(values, shuffled, rows=rows)
                if auc is not None:
                    best_value = max(best_value, float(best(auc)))
            exact_maxima.append(best_value)
        null = self.a.NullFamily(list(features.values()), [0] * n, 1)
        got = self.a.null_maxima(null, [(list(s), True) for s in subsets])
        self.assertEqual(got, exact_maxima)
        for values in features.values():
            rows = [i for i in range(n) if values[i] is not None]
            observed = float(best(brute_pairs(values, labels, rows=rows)[0]))
            expected = Fraction(1 + sum(m >= observed for m in exact_maxima), 1 + len(subsets))
            self.assertEqual(self.a.adjusted_p(observed, sorted(got)), float(expected))
        # And the command line's Monte Carlo p approaches the exact permutation p.
        rows = [[f"r{i}", labels[i], 10 + i % 3] + [("" if v[i] is None else v[i])
                                                    for v in features.values()]
                for i in range(n)]
        table = csv_text(["run_id", "verified", "tool_calls", "a", "b", "c"], rows)
        status, out, err = run(AUC, ["-", "--format", "json", "--perms", "20000",
                                     "--boot", "10"], stdin=table.encode())
        self.assertEqual(status, 0, err)
        for feature in json.loads(out)["features"]:
            values = features[feature["name"]]
            rows_defined = [i for i in range(n) if values[i] is not None]
            observed = float(best(brute_pairs(values, labels, rows=rows_defined)[0]))
            exact = sum(m >= observed for m in exact_maxima) / len(subsets)
            self.assertAlmostEqual(feature["max_auc_p"], exact, delta=0.015)

    def test_stratified_null_family_matches_brute_force_under_shuffles(self):
        rng = random.Random(14)
        for _ in range(60):
            n = rng.randint(4, 30)
            strata = [rng.randint(0, 2) for _ in range(n)]
            family = []
            for _ in range(rng.randint(1, 9)):       # several features share a word
                if rng.random() < 0.5:
                    family.append([rng.randint(0, 4) for _ in range(n)])
                else:
                    family.append([None if rng.random() < 0.3 else rng.random()
                                   for _ in range(n)])
            null = self.a.NullFamily(family, strata, 3)
            for _ in range(5):
                labels = [rng.randint(0, 1) for _ in range(n)]
                expected = []
                for values in family:
                    rows = [i for i in range(n) if values[i] is not None]
                    auc, _ = brute_pairs(values, labels, strata, rows)
                    expected.append(None if auc is None else float(best(auc)))
                successes = [i for i in range(n) if labels[i]]
                failures = [i for i in range(n) if not labels[i]]
                self.assertEqual(null.best_aucs(self.a.picker(successes), True), expected)
                self.assertEqual(null.best_aucs(self.a.picker(failures), False), expected)

    def test_null_family_packs_large_tables_without_overflow(self):
        # 3,000 runs: rank sums need 25 bits, so two features share a 62-bit word.
        rng = random.Random(16)
        n = 3000
        strata = [rng.randint(0, 1) for _ in range(n)]
        labels = [rng.randint(0, 1) for _ in range(n)]
        family = [[rng.random() for _ in range(n)] for _ in range(3)]
        null = self.a.NullFamily(family, strata, 2)
        got = null.best_aucs(self.a.picker([i for i in range(n) if labels[i]]), True)
        for values, value in zip(family, got):
            twice_u = pairs = 0
            for level in (0, 1):
                rows = sorted((i for i in range(n) if strata[i] == level),
                              key=values.__getitem__)
                seen_failures = 0
                for i in rows:                      # no ties among random floats
                    if labels[i]:
                        twice_u += 2 * seen_failures
                    else:
                        seen_failures += 1
                ones = sum(labels[i] for i in rows)
                pairs += ones * (len(rows) - ones)
            self.assertEqual(value, max(twice_u, 2 * pairs - twice_u) / (2 * pairs))

    def test_task_permutation_moves_whole_task_vectors(self):
        labels = [1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0]
        tasks = [0, 0, 0, 1, 1, 1, 2, 2, 3, 3, 4, 4]
        # A task receives another task's number of successes (on random runs of its own).
        vectors_by_size = {3: [1, 2], 2: [1, 1, 2]}
        draws = task_shuffle_draws(self.a, labels, [0] * 12, tasks, 50, random.Random(3))
        for picked, are_successes in draws:
            shuffled = [int(not are_successes)] * 12
            for row in picked:
                shuffled[row] = int(are_successes)
            seen = {3: [], 2: []}
            for task in range(5):
                members = [i for i in range(12) if tasks[i] == task]
                seen[len(members)].append(sum(shuffled[i] for i in members))
            self.assertEqual({k: sorted(v) for k, v in seen.items()}, vectors_by_size)

    def test_bootstrap_sweep_matches_weighted_brute_force(self):
        rng = random.Random(15)
        for trial in range(150):
            n = rng.randint(3, 20)
            labels = [rng.randint(0, 1) for _ in range(n)]
            strata = [rng.randint(0, 1) for _ in range(n)]
            tasks = [rng.randint(0, 4) for _ in range(n)]
            # Alternate tie-heavy counts and mostly distinct values: both sweep paths.
            draw = (lambda: rng.randint(0, 4)) if trial % 2 else (lambda: rng.randint(0, 60))
            scores = [None if rng.random() < 0.2 else draw() for _ in range(n)]
            rows = [i for i in range(n) if scores[i] is not None]
            task_weights = [rng.randint(0, 3) for _ in range(5)]
            sweep = self.a.BootstrapSweep(scores, labels, strata, tasks, rows)
            twice_u, pairs = sweep.pair_count(task_weights)
            expected, expected_pairs = brute_pairs(scores, labels, strata, rows,
                                                   [task_weights[t] for t in tasks])
            self.assertEqual(pairs, expected_pairs)
            if pairs:
                self.assertEqual(Fraction(twice_u, 2 * pairs), expected)

    def test_leave_one_out_task_rate_and_percentile(self):
        self.assertEqual(self.a.leave_one_out_task_rate([1, 1, 0, 0, 1], list("aaabb")),
                         [0.5, 0.5, 1.0, 1.0, 0.0])
        # numpy.percentile([3, 1, 4, 1, 5], [2.5, 97.5]) == [1.0, 4.9]
        self.assertAlmostEqual(self.a.percentile(sorted([3, 1, 4, 1, 5]), 0.025), 1.0)
        self.assertAlmostEqual(self.a.percentile(sorted([3, 1, 4, 1, 5]), 0.975), 4.9)


def trap_rows():
    """A hand-built §6 trap: 'impl' is undefined on the four runs that gave up early.

    On all 12 runs the baseline (fewer calls = success) is muddled by the early
    quitters (few calls, failed): 16 of 32 pairs, AUC 0.5. The feature (less time =
    success) scores 15/16 = 0.938 on its 8 rows, but on those same 8 rows the
    baseline separates perfectly: 1.0.
    """
    header = ["run_id", "task_id", "verified", "tool_calls", "impl", "noise"]
    rows = [
        # successes: moderate calls, edited
        ["r01", "a", 1, 20, 50, 3], ["r02", "a", 1, 22, 55, 1],
        ["r03", "b", 1, 24, 70, 4], ["r04", "b", 1, 26, 40, 2],
        # failures that edited: many calls
        ["r05", "c", 0, 40, 90, 5], ["r06", "c", 0, 42, 60, 2],
        ["r07", "d", 0, 44, 95, 3], ["r08", "d", 0, 46, 80, 1],
        # failures that gave up early: few calls, never edited
        ["r09", "e", 0, 5, "", 4], ["r10", "e", 0, 6, "", 2],
        ["r11", "f", 0, 7, "NA", 5], ["r12", "f", 0, 8, "null", 3],
    ]
    return header, rows


class TestAucCommandLine(unittest.TestCase):
    def audit_json(self, table, *argv, name="runs.csv", extra=None):
        with TempDir() as folder:
            write(folder, name, table)
            for other, text in (extra or {}).items():
                write(folder, other, text)
            status, out, err = run(AUC, [os.path.join(folder, name), "--format", "json",
                                         "--perms", "200", "--boot", "200", *argv])
        self.assertEqual(status, 0, err)
        return json.loads(out)

    def assert_one_line_error(self, table, argv, *needles, name="runs.csv", extra=None):
        with TempDir() as folder:
            write(folder, name, table)
            for other, text in (extra or {}).items():
                write(folder, other, text)
            status, out, err = run(AUC, [os.path.join(folder, name), *argv])
        self.assertEqual(status, 2, err)
        self.assertEqual(out, "")
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertTrue(err.startswith("error: "), err)
        for needle in needles:
            self.assertIn(needle, err)
        return err

    def test_same_row_trap_is_flagged(self):
        header, rows = trap_rows()
        result = self.audit_json(csv_text(header, rows), "--features", "impl")
        (impl,) = result["features"]
        labels = [r[2] for r in rows]
        calls = [r[3] for r in rows]
        defined = [i for i, r in enumerate(rows) if r[4] not in ("", "NA", "null")]
        impl_values = [r[4] if i in defined else None for i, r in enumerate(rows)]
        base_all = float(best(brute_pairs(calls, labels)[0]))
        base_same = float(best(brute_pairs(calls, labels, rows=defined)[0]))
        feature = float(best(brute_pairs(impl_values, labels, rows=defined)[0]))
        self.assertEqual((impl["auc"], impl["baseline_auc_all_rows"],
                          impl["baseline_auc_same_rows"]), (feature, base_all, base_same))
        self.assertEqual(impl["n_defined"], 8)
        self.assertGreater(feature, base_all)          # looks better on all rows...
        self.assertLess(feature, base_same)            # ...and is worse on its own rows
        self.assertIn("same_row_sign_flip", impl["flags"])
        self.assertTrue(impl["verdict"].startswith("fails gate 1"))
        status, out, _ = run(AUC, ["-", "--features", "impl", "--perms", "100", "--boot",
                                   "100"], stdin=csv_text(header, rows).encode())
        self.assertIn("Same-row trap: impl beats the baseline on all rows", out)

    def test_json_has_the_issue_keys(self):
        header, rows = trap_rows()
        result = self.audit_json(csv_text(header, rows))
        for key in ("n_runs", "outcome", "baseline", "features", "family_null",
                    "task_identity_auc", "degenerate", "provenance"):
            self.assertIn(key, result)
        self.assertEqual(set(result["baseline"]) >= {"name", "auc", "direction"}, True)
        for key in ("name", "n_defined", "auc", "direction", "baseline_auc_all_rows",
                    "baseline_auc_same_rows", "delta_same_rows", "delta_ci", "delong_p",
                    "within_task_auc", "within_task_pairs", "adjusted_p", "flags"):
            self.assertIn(key, result["features"][0])
        for key in ("perms", "median_max", "p_clear_bar", "observed_max", "p_observed_max"):
            self.assertIn(key, result["family_null"])
        self.assertEqual(result["n_runs"], 12)
        self.assertEqual(result["family_null"]["perms"], 200)

    def test_every_format_renders(self):
        header, rows = trap_rows()
        table = csv_text(header, rows).encode()
        for style in ("text", "markdown", "json"):
            status, out, err = run(AUC, ["-", "--format", style, "--perms", "50",
                                         "--boot", "50"], stdin=table)
            self.assertEqual(status, 0, err)
            self.assertTrue(out.strip())
        status, out, _ = run(AUC, ["-", "--perms", "50", "--boot", "50"], stdin=table)
        self.assertIn("-- provenance --", out)
        body = out.split("-- provenance --")[0]
        self.assertLessEqual(max(len(line) for line in body.splitlines()), 100)
        status, out, _ = run(AUC, ["-", "--format", "markdown", "--perms", "50",
                                   "--boot", "50"], stdin=table)
        self.assertIn("| feature |", out)
        self.assertIn("Provenance:\n\n```", out)

    def test_same_seed_same_bytes(self):
        header, rows = trap_rows()
        table = csv_text(header, rows).encode()
        outputs = {}
        for style in ("text", "json"):
            for seed in ("7", "7", "8"):
                status, out, _ = run(AUC, ["-", "--format", style, "--seed", seed,
                                           "--perms", "300", "--boot", "300"], stdin=table)
                outputs.setdefault((style, seed), []).append(out)
        self.assertEqual(outputs[("text", "7")][0], outputs[("text", "7")][1])
        self.assertEqual(outputs[("json", "7")][0], outputs[("json", "7")][1])
        self.assertNotEqual(outputs[("json", "7")][0], outputs[("json", "8")][0])

    def test_bad_inputs_exit_2_with_one_line(self):
        header, rows = trap_rows()
        good = csv_text(header, rows)
        one_class = csv_text(header, [r[:2] + [1] + r[3:] for r in rows])
        self.assert_one_line_error(one_class, [], "one class", "verified")
        not_binary = csv_text(header, [r[:2] + [2 if i == 3 else r[2]] + r[3:]
                                       for i, r in enumerate(rows)])
        self.assert_one_line_error(not_binary, [], "row 5", "'verified'", "yes/no")
        text_feature = csv_text(header + ["notes"], [r + ["slow" if i else "3"]
                                                     for i, r in enumerate(rows)])
        self.assert_one_line_error(text_feature, ["--features", "notes"], "'notes'",
                                   "expected a number")
        empty = csv_text(header, [r[:4] + ["", "NA"] for r in rows])
        self.assert_one_line_error(empty, ["--features", "impl,noise"], "undefined",
                                   "impl")
        self.assert_one_line_error(good, ["--task", "ticket"], "no column 'ticket'",
                                   "--task")
        self.assert_one_line_error(good, ["--where", "task_id=zzz"], "--where",
                                   "no row", "task_id")
        self.assert_one_line_error(good, ["--features", "nope"], "no column 'nope'")
        self.assert_one_line_error(good, ["--permute", "strata"], "--strata")
        self.assert_one_line_error(good, ["--perms", "0"], "--perms")
        no_baseline = csv_text([h for h in header if h != "tool_calls"],
                               [r[:3] + r[4:] for r in rows])
        self.assert_one_line_error(no_baseline, [], "baseline", "tool_calls")

    def test_no_task_column_means_each_run_is_a_cluster(self):
        header, rows = trap_rows()
        table = csv_text(header[:1] + header[2:], [r[:1] + r[2:] for r in rows])
        result = self.audit_json(table)
        self.assertIsNone(result["task_identity_auc"])
        self.assertEqual(result["clusters"], "runs")
        self.assertEqual(result["bootstrap"]["clusters"], 12)
        for feature in result["features"]:
            self.assertIsNone(feature["within_task_auc"])
            self.assertEqual(feature["within_task_pairs"], 0)
        status, out, _ = run(AUC, ["-", "--perms", "50", "--boot", "50"],
                             stdin=table.encode())
        self.assertIn("each run is its own cluster", out)
        self.assertIn("undefined (no task column)", out)

    def test_within_task_auc_brute_force(self):
        # Tasks that mix successes and failures; the direction comes from this
        # test's own all-rows pair count, never from the script.
        rng = random.Random(41)
        header = ["run_id", "task_id", "verified", "tool_calls", "feature"]
        rows = [[f"r{i:02d}", f"t{i // 4}", int(rng.random() < 0.5), rng.randint(5, 60),
                 rng.randint(0, 9)] for i in range(40)]
        labels, tasks = [r[2] for r in rows], [r[1] for r in rows]
        overall, _ = brute_pairs([r[4] for r in rows], labels)
        self.assertNotEqual(overall, Fraction(1, 2))
        sign = 1 if overall > Fraction(1, 2) else -1
        expected, pairs = brute_pairs([sign * r[4] for r in rows], labels, tasks)
        result = self.audit_json(csv_text(header, rows), "--features", "feature")
        (feature,) = result["features"]
        self.assertEqual(feature["direction"], "+" if sign == 1 else "-")
        self.assertGreater(pairs, 0)
        self.assertEqual(feature["within_task_pairs"], pairs)
        self.assertAlmostEqual(feature["within_task_auc"], float(expected), delta=1e-12)

    def test_same_row_difference_and_its_interval_point_the_right_way(self):
        # A feature that separates perfectly against a noisy baseline: the
        # difference is AUC - baseline AUC on the same rows, and its task-cluster
        # interval lies above 0.
        rng = random.Random(43)
        header = ["run_id", "task_id", "verified", "tool_calls", "feature"]
        rows = []
        for i in range(60):
            label = int(rng.random() < 0.5)
            rows.append([f"r{i:02d}", f"t{i // 3}", label, rng.randint(5, 60),
                         (10 if label else 0) + rng.randint(0, 5)])
        labels = [r[2] for r in rows]
        feature_auc = best(brute_pairs([r[4] for r in rows], labels)[0])
        base_auc = best(brute_pairs([r[3] for r in rows], labels)[0])
        result = self.audit_json(csv_text(header, rows), "--features", "feature")
        (feature,) = result["features"]
        self.assertEqual(feature_auc, 1)
        self.assertAlmostEqual(feature["delta_same_rows"], float(feature_auc - base_auc),
                               delta=1e-12)
        self.assertGreater(feature["delta_ci"][0], 0)
        self.assertLessEqual(feature["delta_ci"][1], 1 - float(base_auc) + 0.5)

    def test_a_p_at_its_floor_reads_as_in_the_text_and_the_svg_stays_xml(self):
        # The null panel's caption printed fmt_p(p) raw: a p at its floor 1/2001 wrote
        # '<0.001' into the SVG's text (not XML: no viewer draws it), where the report
        # says '<=0.001'.
        import xml.dom.minidom
        rng = random.Random(7)
        rows = [[f"r{t}-{i}", f"t{t}", i % 2, rng.randint(5, 50), i % 2 + rng.random() / 2]
                for t in range(30) for i in range(4)]
        with TempDir() as folder:
            path = write(folder, "runs.csv", csv_text(
                ["run_id", "task_id", "verified", "tool_calls", "signal"], rows))
            result, drawing = draw(AUC, [path, "--perms", "2000", "--boot", "50"])
        self.assertEqual(result["family_null"]["p_observed_max"], 1 / 2001)
        xml.dom.minidom.parseString(drawing)
        self.assertIn("p of the observed maximum &lt;=0.001</text>", drawing)

    def test_nothing_is_written_into_the_inputs(self):
        header, rows = trap_rows()
        with TempDir() as folder, TempDir() as elsewhere:
            path = write(folder, "runs.csv", csv_text(header, rows))
            before = snapshot(folder)
            svg = os.path.join(elsewhere, "null.svg")
            status, out, err = run(AUC, [folder, "--svg", svg, "--perms", "50",
                                         "--boot", "50"])
            self.assertEqual(status, 0, err)
            self.assertEqual(snapshot(folder), before)
            with open(svg, encoding="utf-8") as handle:
                drawing = handle.read()
            self.assertTrue(drawing.startswith("<svg"))
            marker = "(column 'tool_calls'): AUC "
            printed = out[out.index(marker) + len(marker):][:5]
            self.assertIn(f"baseline {printed}", drawing)
            status, _, err = run(AUC, [folder, "--svg", path])
            self.assertEqual(status, 2)
            self.assertIn("refusing to overwrite", err)
            self.assertEqual(snapshot(folder), before)

    def test_verdicts_join_on_run_id(self):
        header, rows = trap_rows()
        table = csv_text(header[:2] + header[3:], [r[:2] + r[3:] for r in rows])
        verdicts = csv_text(["run_id", "instance_id", "completed"],
                            [[r[0], r[1], r[2]] for r in rows])
        with TempDir() as folder:
            write(folder, "runs.csv", table)
            write(folder, "verdicts.csv", verdicts)
            status, out, err = run(AUC, [os.path.join(folder, "runs.csv"), "--verdicts",
                                         os.path.join(folder, "verdicts.csv"), "--format",
                                         "json", "--perms", "50", "--boot", "50"])
            self.assertEqual(status, 0, err)
            result = json.loads(out)
            self.assertEqual((result["n_successes"], result["n_failures"]), (4, 8))
            calls = [r[3] for r in rows]
            self.assertEqual(result["baseline"]["auc"],
                             float(best(brute_pairs(calls, [r[2] for r in rows])[0])))
            write(folder, "verdicts.csv", csv_text(["run_id", "instance_id", "completed"],
                                                   [[r[0], r[1], r[2]] for r in rows[:-2]]))
            status, _, err = run(AUC, [os.path.join(folder, "runs.csv"), "--verdicts",
                                       os.path.join(folder, "verdicts.csv")])
            self.assertEqual(status, 2)
            self.assertIn("r11, r12", err)

    def test_baseline_recounted_from_tool_calls(self):
        header, rows = trap_rows()
        calls = csv_text(["run_id", "seq", "tool"],
                         [[r[0], k, "Read"] for r in rows for k in range(1, r[3] + 1)])
        result = self.audit_json(csv_text(header, rows), extra={"tool_calls.csv": calls})
        check = result["baseline"]["check"]
        self.assertEqual((check["equal"], check["runs_compared"], check["calls_counted"]),
                         (True, 12, sum(r[3] for r in rows)))
        wrong = [r[:3] + [r[3] + (1 if r[0] == "r04" else 0)] + r[4:] for r in rows]
        result = self.audit_json(csv_text(header, wrong), extra={"tool_calls.csv": calls})
        check = result["baseline"]["check"]
        self.assertEqual((check["equal"], check["mismatches"]), (False, 1))
        self.assertEqual(check["first_mismatch"]["run_id"], "r04")
        without = csv_text([h for h in header if h != "tool_calls"],
                           [r[:3] + r[4:] for r in rows])
        result = self.audit_json(without, extra={"tool_calls.csv": calls})
        self.assertEqual(result["baseline"]["auc"],
                         float(best(brute_pairs([r[3] for r in rows],
                                                [r[2] for r in rows])[0])))
        self.assertIn("counted from", result["baseline"]["source"])

    def test_degenerate_columns_are_left_out_with_a_reason(self):
        header, rows = trap_rows()
        table = csv_text(header + ["alarms", "calls_copy", "arm", "by_arm"],
                         [r + [0, r[3], "ab"[i % 2], 5 * (i % 2)]
                          for i, r in enumerate(rows)])
        result = self.audit_json(table, "--strata", "arm")
        reasons = {d["name"]: d["reason"] for d in result["degenerate"]}
        self.assertIn("constant", reasons["alarms"])
        self.assertIn("identical to the baseline", reasons["calls_copy"])
        self.assertIn("strata", reasons["by_arm"])
        self.assertEqual({f["name"] for f in result["features"]}, {"impl", "noise"})

    def test_where_audits_a_subset(self):
        header, rows = trap_rows()
        with TempDir() as folder:
            write(folder, "runs.csv", csv_text(header, rows))
            status, out, err = run(AUC, [folder, "--where", "noise=2", "--features", "impl",
                                         "--format", "json", "--perms", "20", "--boot", "20"])
        # noise=2 keeps r04 (success), r06, r10 (failures): two classes.
        self.assertEqual(status, 0, err)
        self.assertEqual(json.loads(out)["n_runs"], 3)

    def test_each_permutation_scheme_runs(self):
        header, rows = trap_rows()
        table = csv_text(header + ["arm"], [r + ["ab"[i % 2]] for i, r in enumerate(rows)])
        # With tasks of two runs each, the default is the task shuffle (issue 19).
        for argv in (["--permute", "rows"], ["--permute", "tasks"],
                     ["--strata", "arm"], ["--strata", "arm", "--permute", "tasks"],
                     ["--strata", "arm", "--permute", "strata"]):
            result = self.audit_json(table, *argv)
            null = result["family_null"]
            self.assertEqual(null["permute"], argv[-1] if argv[-2] == "--permute"
                             else "tasks")
            self.assertGreater(null["p_observed_max"], 0)
            self.assertLessEqual(null["p_observed_max"], 1)
            self.assertEqual(sum(null["histogram"]["counts"]), 200)
        self.assert_one_line_error(csv_text(header + ["arm"], [r + [str(r[2])] for r in rows]),
                                   ["--strata", "arm"], "no stratum holds both")

    def test_forked_workers_give_the_same_bytes(self):
        module = load(AUC)
        header, rows = trap_rows()
        table = csv_text(header, rows).encode()
        saved = module.PARALLEL_WORK
        outputs = []
        try:
            for threshold in (10 ** 18, 0):          # never fork, always fork
                module.PARALLEL_WORK = threshold
                status, out, err = run(AUC, ["-", "--format", "json", "--perms", "400",
                                             "--boot", "400"], stdin=table)
                self.assertEqual(status, 0, err)
                outputs.append(out)
        finally:
            module.PARALLEL_WORK = saved
        self.assertEqual(outputs[0], outputs[1])

    def test_demo_and_a_lone_copy(self):
        with TempDir() as folder:
            shutil.copy(os.path.join(HERE, AUC), folder)
            header, rows = trap_rows()
            write(folder, "runs.csv", csv_text(header, rows))
            for argv in (["--help"], ["--demo", "--perms", "100", "--boot", "100"],
                         ["runs.csv", "--perms", "100", "--boot", "100"]):
                done = subprocess.run([sys.executable, AUC, *argv], cwd=folder,
                                      capture_output=True, text=True, timeout=120)
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertTrue(done.stdout.strip())
        status, out, _ = run(AUC, ["--demo", "--strata", "condition"])
        self.assertIn("Same-row trap: edit_seconds", out)

    def test_example_runs_folder(self):
        status, out, err = run(AUC, [EXAMPLE_RUNS, "--strata", "condition", "--format",
                                     "json", "--perms", "500", "--boot", "500"])
        self.assertEqual(status, 0, err)
        result = json.loads(out)
        self.assertTrue(result["baseline"]["check"]["equal"])
        trapped = [f for f in result["features"] if "same_row_sign_flip" in f["flags"]]
        self.assertTrue(trapped)
        for feature in trapped:
            self.assertGreater(feature["auc"], feature["baseline_auc_all_rows"])
            self.assertLess(feature["auc"], feature["baseline_auc_same_rows"])
        names = {d["name"] for d in result["degenerate"]}
        self.assertTrue({"confab_alarms", "diff_nonempty", "tool_calls_total"} <= names)


def table_text(header, rows):
    return "\n".join([",".join(header)] + [",".join(str(c) for c in r) for r in rows]) + "\n"


def pair_auc(scores, labels, rows=None, groups=None):
    """Exact AUC by visiting every success/failure pair (ties count half); None if no pairs."""
    rows = range(len(scores)) if rows is None else rows
    credit = pairs = 0
    for i in rows:
        for j in rows:
            if labels[i] and not labels[j] and (groups is None or groups[i] == groups[j]):
                pairs += 1
                credit += 2 if scores[i] > scores[j] else (1 if scores[i] == scores[j] else 0)
    return Fraction(credit, 2 * pairs) if pairs else None


def audit_folder(files, argv):
    """Write `files` into a fresh folder and run auc_audit.py on its runs.csv."""
    with TempDir() as folder:
        for name, text in files.items():
            write(folder, name, text)
        return run(AUC, [os.path.join(folder, "runs.csv"), *argv])


def auc_audit_json(files, argv):
    status, out, err = audit_folder(files, ["--format", "json", *argv])
    if status != 0:
        raise AssertionError(err)
    return json.loads(out)


def strong_rows(tasks):
    """20 runs: 'sharp' separates success perfectly (AUC 1), the baseline does not.

    Successes have sharp 11..20, failures 1..10; tool_calls alternates so that it
    carries little signal. `tasks` maps the run index to its task."""
    header = ["run_id", "task_id", "verified", "tool_calls", "sharp"]
    rows = []
    for i in range(20):
        success = i % 2
        rows.append([f"r{i:02d}", tasks(i), success, 10 + (i // 2) % 3,
                     11 + i // 2 if success else 1 + i // 2])
    return header, rows


class TestAucFewClusters(unittest.TestCase):
    def test_one_task_has_no_interval_and_fails_gate_3(self):
        header, rows = strong_rows(lambda i: "only")
        files = {"runs.csv": table_text(header, rows)}
        result = auc_audit_json(files, ["--perms", "200", "--boot", "200"])
        (sharp,) = result["features"]
        self.assertEqual(sharp["auc"], 1.0)
        self.assertIsNone(sharp["delta_ci"])
        self.assertFalse(result["bootstrap"]["defined"])
        self.assertEqual(sharp["verdict"], "fails gate 3: fewer than 2 clusters to resample")
        self.assertIsNone(result["task_identity_auc"])
        status, out, err = audit_folder(files, ["--perms", "200", "--boot", "200"])
        self.assertEqual(status, 0, err)
        self.assertIn("1 task (task_id)", out)
        self.assertIn("undefined (fewer than 2 tasks)", out)
        self.assertIn("fewer than 2 clusters to resample", out)
        gate1 = out[out.index("base same"):].splitlines()[2]     # the gate-1 table
        self.assertIn("undefined", gate1)

    def test_fewer_than_ten_clusters_withholds_the_interval(self):
        # Issue 19: below FEW_CLUSTERS the interval is withheld and gate 3 fails, as
        # delivery_audit.py does (it used to warn "rough" and let gate 3 pass).
        for n_tasks, warned in ((3, True), (9, True), (10, False)):
            header, rows = strong_rows(lambda i: f"t{i % n_tasks}")
            status, out, err = audit_folder({"runs.csv": table_text(header, rows)},
                                            ["--perms", "50", "--boot", "50"])
            self.assertEqual(status, 0, err)
            self.assertEqual("intervals are withheld" in out, warned, (n_tasks, out))
            self.assertEqual(f"only {n_tasks} tasks" in out, warned)

    def test_task_identity_is_read_in_the_plus_direction(self):
        # No task effect: each task has one success and one failure. Leave-one-out
        # gives each success 0/1 = 0 and each failure 1/1 = 1, so read '+' the AUC is
        # 0 (every pair lost); the better direction would claim 1.0.
        header = ["run_id", "task_id", "verified", "tool_calls", "f"]
        rows = [["a1", "a", 1, 3, 1], ["a2", "a", 0, 5, 2], ["b1", "b", 1, 4, 3],
                ["b2", "b", 0, 6, 4], ["c1", "c", 1, 7, 5], ["c2", "c", 0, 2, 6]]
        labels = [r[2] for r in rows]
        loo = [0.0 if y else 1.0 for y in labels]
        expected = pair_auc(loo, labels)
        self.assertEqual(expected, 0)
        result = auc_audit_json({"runs.csv": table_text(header, rows)},
                            ["--perms", "20", "--boot", "20"])
        self.assertEqual(result["task_identity_auc"], float(expected))
        self.assertEqual(result["task_identity_direction"], "+")
        status, out, _ = audit_folder({"runs.csv": table_text(header, rows)},
                                      ["--perms", "20", "--boot", "20"])
        self.assertIn("AUC 0.000 +", out)
        self.assertIn("fixed + direction", " ".join(out.split()))
        self.assertIn("fixed +", load(AUC).__doc__)


class TestAucBaselineRecount(unittest.TestCase):
    header = ["run_id", "task_id", "verified", "tool_calls", "f"]
    rows = [[f"r{i}", f"t{i // 2}", i % 2, 2 + (i * 7) % 5, (i * 3) % 7] for i in range(12)]

    def log(self, runs_and_counts):
        return table_text(["run_id", "seq", "tool"],
                          [[run, k, "Read"] for run, count in runs_and_counts
                           for k in range(count)])

    def test_log_naming_unknown_runs_exits_2(self):
        log = self.log([(r[0], r[3]) for r in self.rows] + [("zz1", 2), ("zz2", 1)])
        status, out, err = audit_folder({"runs.csv": table_text(self.header, self.rows),
                                         "tool_calls.csv": log}, [])
        self.assertEqual(status, 2)
        self.assertEqual(out, "")
        self.assertEqual(len(err.strip().splitlines()), 1)
        self.assertIn("2 run id(s) not in the runs table: zz1, zz2", err)
        self.assertIn("tool_calls.csv", err)

    def test_where_does_not_make_logged_runs_unknown(self):
        # The log names all 12 runs; --where f=0 audits only r0 and r7 (f = 3i mod 7),
        # and the other ten are still rows of the runs table, so none is unknown.
        log = self.log([(r[0], r[3]) for r in self.rows])
        status, out, err = audit_folder({"runs.csv": table_text(self.header, self.rows),
                                         "tool_calls.csv": log},
                                        ["--where", "f=0", "--perms", "10", "--boot", "10"])
        self.assertNotIn("not in the runs table", err)
        self.assertEqual(status, 0, err)
        self.assertIn("2 of 12 runs", " ".join(out.split()))


    def test_runs_without_log_rows_count_as_zero_and_are_reported(self):
        silent = {"r3", "r8"}
        rows = [r[:3] + [0 if r[0] in silent else r[3]] + r[4:] for r in self.rows]
        log = self.log([(r[0], r[3]) for r in rows if r[0] not in silent])
        files = {"runs.csv": table_text(self.header, rows), "tool_calls.csv": log}
        check = auc_audit_json(files, ["--perms", "20", "--boot", "20"])["baseline"]["check"]
        self.assertEqual((check["runs_without_calls"], check["equal"]), (2, True))
        status, out, err = audit_folder(files, ["--perms", "20", "--boot", "20"])
        out = " ".join(out.split())
        self.assertIn("2 of 12 audited runs have no rows in", out)
        self.assertIn("(counted as zero calls), first r3", out)

    def test_mismatch_counts_print_as_integers(self):
        log = self.log([(r[0], r[3]) for r in self.rows])
        rows = [r[:3] + [r[3] + (1 if r[0] == "r4" else 0)] + r[4:] for r in self.rows]
        status, out, err = audit_folder({"runs.csv": table_text(self.header, rows),
                                         "tool_calls.csv": log},
                                        ["--perms", "20", "--boot", "20"])
        self.assertEqual(status, 0, err)
        table_value, logged = rows[4][3], self.rows[4][3]
        self.assertIn(f"first r4 ({table_value} vs {logged})", out)
        self.assertNotRegex(out.split("-- provenance --")[0], r"\(\d+\.000 vs")

    def test_constant_baseline_exits_2(self):
        rows = [r[:3] + [7] + r[4:] for r in self.rows]
        status, out, err = audit_folder({"runs.csv": table_text(self.header, rows)}, [])
        self.assertEqual(status, 2)
        self.assertEqual(len(err.strip().splitlines()), 1)
        self.assertIn("constant", err)
        self.assertIn("tool_calls", err)
        # Recounted: every run has 3 logged calls and there is no baseline column.
        header = [h for h in self.header if h != "tool_calls"]
        bare = [r[:3] + r[4:] for r in self.rows]
        log = self.log([(r[0], 3) for r in self.rows])
        status, out, err = audit_folder({"runs.csv": table_text(header, bare),
                                         "tool_calls.csv": log}, [])
        self.assertEqual(status, 2)
        self.assertIn("constant", err)
        self.assertIn("3", err)


class TestAucPermuteTasks(unittest.TestCase):
    def test_the_task_shuffle_is_drawn_in_one_place(self):
        # task_null_aucs is the task shuffle the script runs; a second drawing of it
        # (shuffled_draws once kept one that only tests reached) could drift from it.
        with open(os.path.join(HERE, AUC), encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        callers = {"task_placements": set(), "task_shape_groups": set()}
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef):
                continue
            for node in ast.walk(function):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                        and node.func.id in callers):
                    callers[node.func.id].add(function.name)
        self.assertEqual(callers, {"task_placements": {"task_null_aucs"},
                                   "task_shape_groups": {"task_null_aucs"}})

    def test_no_task_column_exits_2(self):
        header = ["run_id", "verified", "tool_calls", "f"]
        rows = [[f"r{i}", i % 2, i % 3, i] for i in range(8)]
        status, out, err = audit_folder({"runs.csv": table_text(header, rows)},
                                        ["--permute", "tasks"])
        self.assertEqual(status, 2)
        self.assertIn("needs a task column", err)

    def test_no_task_can_move_shuffles_within_cells(self):
        # Issue 22: tasks of sizes 1, 2 and 3 cannot swap, but runs still move inside
        # them; --permute tasks runs (it was refused with "every shuffle would be the
        # observed outcome") and the default shuffles within cells, never across tasks.
        header = ["run_id", "task_id", "verified", "tool_calls", "f"]
        tasks = ["a", "b", "b", "c", "c", "c"]
        rows = [[f"r{i}", t, i % 2, i % 4, i] for i, t in enumerate(tasks)]
        for argv in (["--permute", "tasks"], []):
            status, out, err = audit_folder({"runs.csv": table_text(header, rows)},
                                            argv + ["--perms", "50", "--boot", "20"])
            self.assertEqual(status, 0, err)
            self.assertIn("within task x stratum cells", " ".join(out.split()))
        result = auc_audit_json({"runs.csv": table_text(header, rows)},
                                ["--perms", "50", "--boot", "20"])
        self.assertEqual(result["family_null"]["permute"], "tasks")
        # Every run alone in its cell and no task of a shared shape: nothing can move.
        status, out, err = audit_folder({"runs.csv": table_text(
            ["run_id", "task_id", "condition", "verified", "tool_calls", "f"],
            [["r1", "a", "x", 1, 1, 1], ["r2", "a", "y", 0, 2, 2], ["r3", "b", "x", 1, 3, 3],
             ["r4", "c", "x", 0, 4, 4], ["r5", "c", "y", 1, 5, 5], ["r6", "c", "z", 0, 6, 6]])},
            ["--permute", "tasks", "--strata", "condition"])
        self.assertEqual(status, 2)
        self.assertIn("no run can move", err)

    def test_lone_sized_tasks_are_counted_and_never_move(self):
        header = ["run_id", "task_id", "verified", "tool_calls", "f"]
        # Sizes: a, b, c have 2 runs each (they move); d has 3 and e has 4 (they don't).
        tasks = ["a"] * 2 + ["b"] * 2 + ["c"] * 2 + ["d"] * 3 + ["e"] * 4
        labels = [1, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 1, 1]
        rows = [[f"r{i:02d}", t, y, (i * 5) % 7, (i * 3) % 11]
                for i, (t, y) in enumerate(zip(tasks, labels))]
        files = {"runs.csv": table_text(header, rows)}
        result = auc_audit_json(files, ["--permute", "tasks", "--perms", "50", "--boot", "20"])
        self.assertEqual(result["family_null"]["tasks_never_moved"], 2)
        status, out, err = audit_folder(files, ["--permute", "tasks", "--perms", "50",
                                                "--boot", "20"])
        self.assertIn("2 tasks of 5 have no other task with the same number of runs",
                      " ".join(out.split()))
        # Under every shuffle d and e keep their own number of successes.
        module = load(AUC)
        codes = [sorted(set(tasks)).index(t) for t in tasks]
        draws = task_shuffle_draws(module, labels, None, codes, 200, random.Random(5))
        for picked, are_successes in draws:
            chosen = set(picked)
            for task in ("d", "e"):
                members = [i for i, t in enumerate(tasks) if t == task]
                self.assertEqual(sum(i in chosen for i in members),
                                 sum(labels[i] == are_successes for i in members))


class TestAucVerdictsWithoutOutcome(unittest.TestCase):
    def test_empty_outcome_cells_are_left_out_with_their_status(self):
        header = ["run_id", "task_id", "tool_calls", "f"]
        rows = [[f"r{i}", f"t{i // 2}", 3 + (i * 7) % 9, (i * 5) % 8] for i in range(12)]
        outcome = {f"r{i}": ("true" if i % 3 == 0 else "false") for i in range(12)}
        status_of = {"r2": "test_patch_failed", "r7": "test_patch_failed", "r9": "timeout"}
        verdicts = table_text(["run_id", "instance_id", "completed", "status"],
                              [[r[0], r[1], "" if r[0] in status_of else outcome[r[0]],
                                status_of.get(r[0], "graded")] for r in rows])
        files = {"runs.csv": table_text(header, rows), "verdicts.csv": verdicts}
        with TempDir() as folder:
            for name, text in files.items():
                write(folder, name, text)
            argv = [os.path.join(folder, "runs.csv"), "--verdicts",
                    os.path.join(folder, "verdicts.csv"), "--perms", "20", "--boot", "20"]
            status, out, err = run(AUC, argv + ["--format", "json"])
            self.assertEqual(status, 0, err)
            result = json.loads(out)
            kept = [r for r in rows if r[0] not in status_of]
            labels = [int(outcome[r[0]] == "true") for r in kept]
            self.assertEqual(result["n_runs"], 9)
            self.assertEqual(result["n_successes"], sum(labels))
            expected = pair_auc([r[2] for r in kept], labels)
            self.assertEqual(result["baseline"]["auc"], float(max(expected, 1 - expected)))
            status, out, err = run(AUC, argv)
            out = " ".join(out.split())
            self.assertIn("3 runs left out: no verdict", out)
            self.assertIn("(test_patch_failed 2: r2, r7; timeout 1: r9)", out)
            # A run missing from the verdicts file entirely is still an error.
            write(folder, "verdicts.csv", "\n".join(verdicts.splitlines()[:-1]) + "\n")
            status, out, err = run(AUC, argv)
            self.assertEqual(status, 2)
            self.assertIn("no verdict for 1 run: r11", err)


class TestAucManualAndWording(unittest.TestCase):
    def test_manual_says_the_screen_sees_the_outcomes(self):
        doc = " ".join(load(AUC).__doc__.split())
        self.assertIn("the null family is the screened family", doc)
        self.assertIn("slightly optimistic", doc)
        self.assertIn("reproducing the strata only with --strata", doc)

    def test_numeric_condition_reproduces_strata_only_with_strata(self):
        header = ["run_id", "task_id", "verified", "tool_calls", "arm", "f"]
        rows = [[f"r{i}", f"t{i // 2}", int(i % 4 in (0, 3)), 5 + (i * 7) % 6, i % 2,
                 (i * 5) % 9] for i in range(16)]
        files = {"runs.csv": table_text(header, rows)}
        without = auc_audit_json(files, ["--perms", "20", "--boot", "20"])
        self.assertIn("arm", [f["name"] for f in without["features"]])
        strat = table_text(header + ["cond"], [r + ["ab"[r[4]]] for r in rows])
        within = auc_audit_json({"runs.csv": strat}, ["--strata", "cond",
                                                  "--perms", "20", "--boot", "20"])
        reasons = {d["name"]: d["reason"] for d in within["degenerate"]}
        self.assertIn("strata", reasons.get("arm", ""))
        # Named, it is refused with the reason rather than dropped (issue 11 item 2).
        status, out, err = audit_folder({"runs.csv": strat}, ["--strata", "cond",
                                                              "--features", "arm,f"])
        self.assertEqual(status, 2)
        self.assertIn("'arm' cannot be tested: constant within every stratum", err)

    def test_plurals(self):
        header, rows = strong_rows(lambda i: "only")
        status, out, err = audit_folder({"runs.csv": table_text(header, rows)},
                                        ["--perms", "30", "--boot", "30"])
        self.assertIn("1 task (task_id)", out)
        self.assertIn("1 feature tested", out)
        self.assertNotIn("1 tasks", out)
        self.assertNotIn("1 features", out)

    def test_small_perms_note(self):
        header, rows = strong_rows(lambda i: f"t{i % 10}")
        files = {"runs.csv": table_text(header, rows)}
        # One feature: the floor is 1/(1 + N), below 0.05 from N = 20 on.
        for perms, noted in ((5, True), (18, True), (19, True), (20, False)):
            status, out, err = audit_folder(files, ["--perms", str(perms), "--boot", "20"])
            self.assertEqual(status, 0, err)
            self.assertEqual("gate 2 cannot pass here" in " ".join(out.split()),
                             noted, perms)

    def test_where_lists_values_left_by_earlier_filters(self):
        header = ["run_id", "task_id", "condition", "verified", "tool_calls", "f"]
        rows = [["r1", "x", "a", 1, 3, 1], ["r2", "y", "a", 0, 4, 2],
                ["r3", "z", "b", 1, 5, 3], ["r4", "z", "b", 0, 6, 4]]
        status, out, err = audit_folder({"runs.csv": table_text(header, rows)},
                                        ["--where", "condition=a", "--where", "task_id=z"])
        self.assertEqual(status, 2)
        self.assertIn("'x', 'y'", err)
        self.assertNotIn("'z'", err.split("holds", 1)[1])
        self.assertIn("among the 2 rows left by the earlier --where", err)

    def test_id_like_columns_are_not_default_features(self):
        names = ["id_number", "run", "task", "row", "replicate", "rep", "seed", "index",
                 "Seed", "batch_id"]
        header = ["run_id", "task_id", "verified", "tool_calls", "f"] + names
        rows = [[f"r{i}", f"t{i // 2}", i % 2, 3 + (i * 7) % 5, (i * 3) % 7] +
                [i + k for k in range(len(names))] for i in range(10)]
        result = auc_audit_json({"runs.csv": table_text(header, rows)},
                            ["--perms", "20", "--boot", "20"])
        used = {f["name"] for f in result["features"]} | {d["name"] for d in result["degenerate"]}
        self.assertEqual(used, {"f", "id_number"})
        doc = " ".join(load(AUC).__doc__.split())
        for word in ("run", "task", "row", "replicate", "rep", "seed", "index", "_id"):
            self.assertIn(word, doc[doc.index("id-like"):doc.index("id-like") + 200])

    def test_help_examples_name_files_of_a_fresh_clone(self):
        done = subprocess.run([sys.executable, os.path.join(HERE, AUC), "--help"],
                              capture_output=True, text=True, timeout=60)
        out = done.stdout
        commands = [line.split() for line in out.splitlines()
                    if line.strip().startswith("python3 auc_audit.py")]
        self.assertGreaterEqual(len(commands), 6)
        for words in commands:
            target = words[2]
            if target.startswith("-") or target == "RUNS":
                continue
            if target == "my_runs.csv":
                self.assertIn("your own runs table", " ".join(out.split()))
                continue
            self.assertTrue(os.path.exists(os.path.join(HERE, target)), target)
            for word in words[3:]:
                if word.startswith("examples/"):
                    self.assertTrue(os.path.exists(os.path.join(HERE, word)), word)
        self.assertIn("--verdicts regraded/verdicts.csv", out)
        self.assertIn("--out regraded", out)


class TestAucLayout(unittest.TestCase):
    long_a = "implementation_phase_seconds_total_from_the_transcript"
    long_b = "implementation_phase_seconds_total_by_the_timer_column"

    def rows(self):
        header = ["run_id", "task_id", "condition", "verified", "tool_calls", self.long_a,
                  self.long_b, "noise"]
        rows = []
        for i in range(40):
            y = int(i % 4 in (1, 2))
            rows.append([f"r{i:02d}", f"t{i // 4}", "ab"[i % 2], y, 10 + (i * 7) % 13,
                         100 * y + i, (i * 13) % 23 + 8 * y, (i * 11) % 19])
        return header, rows

    def test_pooled_column_with_strata(self):
        header, rows = self.rows()
        files = {"runs.csv": table_text(header, rows)}
        labels = [r[3] for r in rows]
        noise = [r[7] for r in rows]
        pooled = pair_auc(noise, labels)
        pooled = float(max(pooled, 1 - pooled))
        direction = "+" if pair_auc(noise, labels) >= Fraction(1, 2) else "-"
        for style in ("text", "markdown"):
            status, out, err = audit_folder(files, ["--strata", "condition", "--format",
                                                    style, "--perms", "30", "--boot", "30"])
            self.assertEqual(status, 0, err)
            line = next(l for l in out.splitlines() if "pooled" in l and "feature" in l)
            self.assertIn("pooled", line)
            row = next(l for l in out.splitlines() if l.lstrip("| ").startswith("noise"))
            mark = {"+": "\u00a0\u2191", "-": "\u00a0\u2193"}[direction] \
                if style == "markdown" else f" {direction}"
            self.assertIn(f"{pooled:.3f}{mark}", row)
        status, out, err = audit_folder(files, ["--perms", "30", "--boot", "30"])
        self.assertFalse(any("pooled" in l and "feature" in l for l in out.splitlines()))

    def test_text_fits_100_columns_with_long_names(self):
        header, rows = self.rows()
        files = {"runs.csv": table_text(header, rows)}
        for argv in ([], ["--strata", "condition"]):
            status, out, err = audit_folder(files, argv + ["--perms", "30", "--boot", "30"])
            self.assertEqual(status, 0, err)
            body = out.split("-- provenance --")[0]
            self.assertLessEqual(max(len(l) for l in body.splitlines()), 100, body)
            self.assertIn("…", body)
            # The two names share a 30-character prefix: their cut forms must differ.
            table = body[body.index("Gates 2 and 3"):body.index("flags:")]
            cut = sorted({l.split("  ")[0] for l in table.splitlines()
                          if l.startswith("implementa")})
            self.assertEqual(len(cut), 2, table)
            status, out, err = audit_folder(files, argv + ["--format", "markdown",
                                                          "--perms", "30", "--boot", "30"])
            self.assertIn(f"| {self.long_a} |", out)
            result = auc_audit_json(files, argv + ["--perms", "30", "--boot", "30"])
            self.assertIn(self.long_b, [f["name"] for f in result["features"]])

    def test_svg_labels_stay_apart_with_long_names_and_a_maximum_near_1(self):
        header, rows = self.rows()
        with TempDir() as folder:
            write(folder, "runs.csv", table_text(header, rows))
            svg = os.path.join(folder, "out.svg")
            status, out, err = run(AUC, [os.path.join(folder, "runs.csv"), "--svg", svg,
                                         "--perms", "50", "--boot", "50", "--format", "json"])
            self.assertEqual(status, 0, err)
            self.assertEqual(json.loads(out)["family_null"]["observed_max"], 1.0)
            with open(svg, encoding="utf-8") as handle:
                drawing = handle.read()
        width = float(re.search(r'<svg[^>]* width="(\d+)"', drawing).group(1))
        # The histogram panel spans x 50..710, the feature names end left of the AUC axis
        # at x 240; 7 px per character is generous at 12 px.
        char = 7
        for x, anchor, text in re.findall(
                r'<text x="([\d.]+)" y="[\d.]+"(?: text-anchor="(\w+)")?[^>]*>([^<]*)</text>',
                drawing):
            x = float(x)
            size = char * len(text)
            start = {"end": x - size, "middle": x - size / 2}.get(anchor, x)
            self.assertGreaterEqual(start, 0, text)
            self.assertLessEqual(start + size, width + 40, text)    # bold titles run wider
            if text.startswith(("observed max", "baseline ")):
                self.assertLessEqual(start + size, 710, text)       # inside its panel
                self.assertGreaterEqual(start, 50, text)
            if text.endswith(")") and ("…" in text or text.startswith("noise")):
                self.assertLessEqual(start + size, 240, text)       # left of the AUC axis
        self.assertIn("…", drawing)
        self.assertNotIn(self.long_a, drawing)


class TestAucOtherBaseline(unittest.TestCase):
    def test_a_baseline_other_than_tool_calls_is_not_checked_against_the_log(self):
        # turns_total is tool_calls + 1 in the example: a recount check would
        # wrongly fail on all 72 runs.
        status, out, err = run("auc_audit.py", [EXAMPLE_RUNS, "--baseline", "turns_total",
                                                "--perms", "50", "--boot", "50"])
        self.assertEqual(status, 0, err)
        self.assertIn("not made: 'turns_total' is not the tool-call count", out)
        self.assertNotIn("check failed", out)


def review_orbit(labels, scheme, strata=None, tasks=None):
    """Every equally likely outcome vector of a permutation scheme, with multiplicity.

    rows: every choice of the successes among all runs; strata: within each stratum;
    tasks: every assignment of same-size tasks' success counts to those tasks, times
    every placement of each count on its task's runs (each pair is equally likely,
    since the product of the placements' numbers is the same for every assignment).
    """
    n = len(labels)
    if scheme == "rows":
        for subset in itertools.combinations(range(n), sum(labels)):
            yield tuple(int(i in subset) for i in range(n))
        return
    if scheme == "strata":
        parts = []
        for level in sorted(set(strata)):
            members = [i for i in range(n) if strata[i] == level]
            parts.append(list(itertools.combinations(members, sum(labels[i] for i in members))))
        for choice in itertools.product(*parts):
            chosen = set(itertools.chain(*choice))
            yield tuple(int(i in chosen) for i in range(n))
        return
    by_size = {}
    for task in sorted(set(tasks)):
        members = [i for i in range(n) if tasks[i] == task]
        by_size.setdefault(len(members), []).append(members)
    groups = [by_size[size] for size in sorted(by_size)]
    counts = [[sum(labels[i] for i in members) for members in group] for group in groups]
    for orders in itertools.product(*(itertools.permutations(range(len(g))) for g in groups)):
        placements = []
        for group, group_counts, order in zip(groups, counts, orders):
            for members, source in zip(group, order):
                placements.append(list(itertools.combinations(members, group_counts[source])))
        for choice in itertools.product(*placements):
            chosen = set(itertools.chain(*choice))
            yield tuple(int(i in chosen) for i in range(n))


def review_auc(values, labels, strata=None):
    """Exact better-direction AUC on the feature's defined rows (None without pairs)."""
    rows = [i for i in range(len(values)) if values[i] is not None]
    auc, _ = brute_pairs(values, labels, strata, rows)
    return None if auc is None else best(auc)


def review_stepdown(statistics_by_draw):
    """Westfall-Young free step-down minP, straight from the definition, in Fractions.

    Row 0 is the observed draw. p_j(b) = share of all draws whose statistic for j is
    >= draw b's (an undefined statistic has p 1). Feature j's adjusted p is the
    largest, over the features whose p is <= its own, of the share of draws whose
    smallest p among the features with p >= that feature's p is <= that p.
    """
    draws = len(statistics_by_draw)
    m = len(statistics_by_draw[0])

    def p(j, value):
        if value is None:
            return Fraction(1)
        return Fraction(sum(1 for row in statistics_by_draw
                            if row[j] is not None and row[j] >= value), draws)

    null_p = [[p(j, row[j]) for j in range(m)] for row in statistics_by_draw]
    raw = null_p[0]
    single = {}
    for j in range(m):
        still = [l for l in range(m) if raw[l] >= raw[j]]
        single[j] = Fraction(sum(1 for row in null_p if min(row[l] for l in still) <= raw[j]),
                             draws)
    adjusted = [max(single[l] for l in range(m) if raw[l] <= raw[j]) for j in range(m)]
    return raw, adjusted


REVIEW_LABELS = [1, 1, 0, 1, 0, 0, 1, 0, 1]
REVIEW_STRATA = ["p", "p", "p", "p", "q", "q", "q", "q", "q"]
REVIEW_TASKS = ["a", "a", "b", "b", "c", "c", "d", "d", "d"]
REVIEW_FEATURES = [
    [3, 5, 1, 4, 2, 2, 6, 0, 5],                    # ties
    [1, None, 2, 2, 3, None, 1, 4, 2],              # partial rows
    [7, 7, 1, 2, 7, 3, 3, 1, 7],                    # heavy ties
    [None, 2, 1, None, None, None, None, None, None],   # a column on 2 rows
    [7, 7, 1, 2, 7, 3, 3, 1, 7],                    # the same as the third: tied p
]


class TestAucStepDownMinP(unittest.TestCase):
    def setUp(self):
        self.a = load(AUC)

    def exact_and_script(self, scheme):
        labels, strata, tasks = REVIEW_LABELS, None, None
        if scheme == "strata":
            strata = REVIEW_STRATA
        if scheme == "tasks":
            tasks = REVIEW_TASKS
        orbit = list(review_orbit(labels, scheme, strata, tasks))
        observed = tuple(labels)
        self.assertIn(observed, orbit)
        # The exact answer: the observed draw first, then every other member of the orbit.
        others = list(orbit)
        others.remove(observed)
        statistics_by_draw = [[review_auc(v, list(draw), strata) for v in REVIEW_FEATURES]
                              for draw in [observed] + others]
        raw, adjusted = review_stepdown(statistics_by_draw)
        # The script, fed the same draws.
        codes = [0] * len(labels) if strata is None else [sorted(set(strata)).index(s)
                                                          for s in strata]
        family = self.a.NullFamily(REVIEW_FEATURES, codes, max(codes) + 1)
        draws = [([i for i, y in enumerate(draw) if y], True) for draw in others]
        null = self.a.null_aucs(family, draws)
        got_observed = family.best_aucs(self.a.picker(
            [i for i, y in enumerate(labels) if y]), True)
        got_raw, got_adjusted = self.a.stepdown_minp(got_observed, null)
        return orbit, raw, adjusted, got_raw, got_adjusted

    def test_stepdown_minp_equals_exact_enumeration_rows(self):
        orbit, raw, adjusted, got_raw, got_adjusted = self.exact_and_script("rows")
        self.assertEqual(len(orbit), 126)
        self.assertEqual(got_raw, [float(p) for p in raw])
        self.assertEqual(got_adjusted, [float(p) for p in adjusted])

    def test_stepdown_minp_equals_exact_enumeration_strata(self):
        orbit, raw, adjusted, got_raw, got_adjusted = self.exact_and_script("strata")
        self.assertEqual(len(orbit), 4 * 10)
        self.assertEqual(got_raw, [float(p) for p in raw])
        self.assertEqual(got_adjusted, [float(p) for p in adjusted])

    def test_stepdown_minp_equals_exact_enumeration_tasks(self):
        orbit, raw, adjusted, got_raw, got_adjusted = self.exact_and_script("tasks")
        # 3! orders of the 2-run tasks' counts (2, 1, 0) x 2 placements of the 1, times
        # the lone 3-run task's 3 placements of its 2 successes.
        self.assertEqual(len(orbit), 6 * 2 * 3)
        self.assertEqual(got_raw, [float(p) for p in raw])
        self.assertEqual(got_adjusted, [float(p) for p in adjusted])

    def test_tied_p_values_get_one_adjusted_p_whatever_the_feature_order(self):
        for scheme in ("rows", "strata", "tasks"):
            _, raw, adjusted, _, got = self.exact_and_script(scheme)
            self.assertEqual(raw[2], raw[4])
            self.assertEqual(got[2], got[4])
        rng = random.Random(41)
        observed = [rng.choice([0.6, 0.7, 0.8]) for _ in range(6)]
        null = [[rng.choice([0.5, 0.6, 0.7, 0.8, None]) for _ in range(6)]
                for _ in range(40)]
        raw, adjusted = self.a.stepdown_minp(observed, null)
        exact_raw, exact_adjusted = review_stepdown([observed] + null)
        self.assertEqual(adjusted, [float(p) for p in exact_adjusted])
        for _ in range(10):
            order = list(range(6))
            rng.shuffle(order)
            _, shuffled = self.a.stepdown_minp([observed[j] for j in order],
                                               [[row[j] for j in order] for row in null])
            self.assertEqual(shuffled, [adjusted[j] for j in order])

    def test_script_draws_stay_in_the_orbit_and_cover_it(self):
        for scheme in ("rows", "strata", "tasks"):
            strata = REVIEW_STRATA if scheme == "strata" else None
            tasks = REVIEW_TASKS if scheme == "tasks" else None
            orbit = set(review_orbit(REVIEW_LABELS, scheme, strata, tasks))
            n = len(REVIEW_LABELS)
            codes = None if strata is None else [sorted(set(strata)).index(s) for s in strata]
            task_codes = None if tasks is None else [sorted(set(tasks)).index(t) for t in tasks]
            seen = set()
            if scheme == "tasks":
                draws = task_shuffle_draws(self.a, REVIEW_LABELS, codes, task_codes, 3000,
                                           random.Random(7))
            else:
                draws = self.a.shuffled_draws(REVIEW_LABELS, scheme, codes, 3000,
                                              random.Random(7))
            for picked, are_successes in draws:
                draw = [int(not are_successes)] * n
                for row in picked:
                    draw[row] = int(are_successes)
                self.assertIn(tuple(draw), orbit)
                seen.add(tuple(draw))
            self.assertEqual(seen, orbit)

    def test_command_line_minp_approaches_the_exact_value(self):
        for scheme, argv in (("rows", ["--permute", "rows"]), ("tasks", ["--permute", "tasks"]),
                             ("strata", ["--strata", "condition", "--permute", "strata"])):
            tasks = REVIEW_TASKS if scheme == "tasks" else None
            strata = REVIEW_STRATA if scheme == "strata" else None
            orbit = list(review_orbit(REVIEW_LABELS, scheme, strata, tasks))
            others = list(orbit)
            others.remove(tuple(REVIEW_LABELS))
            features = REVIEW_FEATURES[:4]
            statistics_by_draw = [[review_auc(v, list(d), strata) for v in features]
                                  for d in [tuple(REVIEW_LABELS)] + others]
            raw, adjusted = review_stepdown(statistics_by_draw)
            header = ["run_id", "task_id", "condition", "verified", "tool_calls",
                      "a", "b", "c", "d"]
            rows = [[f"r{i}", REVIEW_TASKS[i], REVIEW_STRATA[i], REVIEW_LABELS[i], 10 + i % 3]
                    + ["" if v[i] is None else v[i] for v in features]
                    for i in range(len(REVIEW_LABELS))]
            result = auc_audit_json({"runs.csv": csv_text(header, rows)},
                                    ["--perms", "20000", "--boot", "10", "--features",
                                     "a,b,c,d", *argv])
            self.assertEqual(len(result["features"]), 4)
            for feature in result["features"]:
                j = "abcd".index(feature["name"])
                self.assertAlmostEqual(feature["permutation_p"], float(raw[j]), delta=0.01)
                # Where two features' exact p-values tie (here a's and b's top atoms, both
                # 2/126 under rows), Monte Carlo estimates them a hair apart and minP can
                # drop that atom: the estimate may sit up to one atom (0.016) low.
                self.assertAlmostEqual(feature["adjusted_p"], float(adjusted[j]), delta=0.03)

    def test_a_column_on_two_rows_no_longer_caps_the_family(self):
        # Issue 11 item 1: 'tiny' (2 on run-001, a success; 1 on run-002, a failure)
        # scores AUC 1 under every shuffle that keeps one of each on its two rows, so the
        # single-step max-AUC null capped search_calls' adjusted p at 0.477.
        with open(os.path.join(EXAMPLE_RUNS, "runs.csv"), encoding="utf-8") as handle:
            lines = handle.read().splitlines()
        out = [lines[0] + ",tiny"]
        for line in lines[1:]:
            run_id = line.split(",", 1)[0]
            out.append(line + "," + {"run-001": "2", "run-002": "1"}.get(run_id, ""))
        # Under the report's within-strata run shuffle (the default before issue 19).
        result = auc_audit_json({"runs.csv": "\n".join(out) + "\n"},
                                ["--strata", "condition", "--permute", "strata"])
        search = next(f for f in result["features"] if f["name"] == "search_calls")
        self.assertLess(search["adjusted_p"], 0.05)
        self.assertGreater(search["max_auc_p"], 0.4)      # the report's single-step figure

    def test_example_keeps_the_report_figures_beside_the_stepdown(self):
        with open(os.path.join(EXAMPLE_RUNS, "runs.csv"), encoding="utf-8") as handle:
            text = handle.read()
        result = auc_audit_json({"runs.csv": text}, ["--strata", "condition"])
        null = result["family_null"]
        search = next(f for f in result["features"] if f["name"] == "search_calls")
        self.assertEqual(null["observed_max_feature"], "search_calls")
        self.assertEqual(round(null["p_observed_max"], 3), round(search["max_auc_p"], 3))
        self.assertLess(search["adjusted_p"], 0.05)
        self.assertLessEqual(search["permutation_p"], search["adjusted_p"])
        rest = null["without_best"]
        self.assertEqual(rest["removed"], "search_calls")
        self.assertNotEqual(rest["observed_max_feature"], "search_calls")
        self.assertGreater(rest["p"], 0.05)


def youden_repro_table():
    """Issue 11 item 2: f and tool_calls cut at their best thresholds agree, their
    rankings do not: f scores 30/36 = 0.833 against the baseline's 21/36 = 0.583."""
    successes = [(12, 35), (76, 21), (74, 5), (56, 52), (42, 63), (79, 6)]
    failures = [(71, 56), (60, 69), (48, 71), (64, 37), (61, 93), (17, 33)]
    rows = [[f"r{i:02d}", y, calls, f] for i, (y, (calls, f)) in enumerate(
        [(1, pair) for pair in successes] + [(0, pair) for pair in failures])]
    return ["run_id", "verified", "tool_calls", "f"], rows


class TestAucNothingDroppedInSilence(unittest.TestCase):
    def test_youden_equal_column_is_flagged_and_tested(self):
        header, rows = youden_repro_table()
        labels = [r[1] for r in rows]
        self.assertEqual(best(pair_auc([r[3] for r in rows], labels)), Fraction(5, 6))
        self.assertEqual(best(pair_auc([r[2] for r in rows], labels)), Fraction(7, 12))
        files = {"runs.csv": csv_text(header, rows)}
        for argv in (["--features", "f"], []):
            result = auc_audit_json(files, argv + ["--perms", "200", "--boot", "50"])
            self.assertEqual([f["name"] for f in result["features"]], ["f"])
            feature = result["features"][0]
            self.assertEqual(feature["auc"], 5 / 6)
            self.assertEqual(feature["baseline_auc_same_rows"], 7 / 12)
            self.assertIn("youden_equal", feature["flags"])
            self.assertEqual(feature["youden_equal_to"], "the baseline 'tool_calls' binarised")
            self.assertEqual(result["degenerate"], [])

    def table(self):
        header = ["run_id", "task_id", "condition", "verified", "tool_calls", "good",
                  "const", "copy", "monotone", "flipped", "by_condition", "elapsed",
                  "claimed"]
        rows = []
        rng = random.Random(3)
        for i in range(16):
            y = int(i % 3 != 0)
            good = rng.randint(0, 9) + 4 * y
            rows.append([f"r{i:02d}", f"t{i // 2}", "ab"[i % 2], y, 10 + (i * 7) % 11, good,
                         5, 10 + (i * 7) % 11, good * good + 1, 100 - good, 3 + i % 2,
                         "8.0m" if i == 5 else ("?" if i == 9 else i * 1.5),
                         "yes" if i % 4 else "no"])
        return header, rows

    def test_only_constant_copies_and_strata_are_left_out_each_with_its_reason(self):
        header, rows = self.table()
        result = auc_audit_json({"runs.csv": csv_text(header, rows)},
                                ["--strata", "condition", "--perms", "100", "--boot", "30"])
        reasons = {d["name"]: d["reason"] for d in result["degenerate"]}
        self.assertEqual([f["name"] for f in result["features"]], ["good"])
        self.assertIn("constant (5)", reasons["const"])
        self.assertIn("identical to the baseline 'tool_calls'", reasons["copy"])
        self.assertIn("the same ranking as 'good' on the same 16 rows", reasons["monotone"])
        self.assertIn("the same ranking (reversed) as 'good'", reasons["flipped"])
        self.assertIn("reproduces the strata", reasons["by_condition"])
        # A numeric column with a few bad cells: its first bad cell, row and value.
        self.assertIn("not a number at row 7: '8.0m' (2 of 16", reasons["elapsed"])
        self.assertEqual([d["name"] for d in result["degenerate"]],
                         ["const", "copy", "monotone", "flipped", "by_condition", "elapsed"])
        self.assertEqual(result["not_candidates"][-1], {"name": "claimed", "why": "text"})
        status, out, err = audit_folder({"runs.csv": csv_text(header, rows)},
                                        ["--strata", "condition", "--perms", "100",
                                         "--boot", "30"])
        flat = " ".join(out.split())
        self.assertIn("1 feature tested, 6 columns left out (listed below); not candidates: "
                      "run_id (run id), task_id (task), condition (strata), verified "
                      "(outcome), tool_calls (baseline), claimed (text)", flat)

    def test_named_features_are_tested_or_refused_with_the_reason(self):
        header, rows = self.table()
        files = {"runs.csv": csv_text(header, rows)}
        result = auc_audit_json(files, ["--features", "good,monotone,copy", "--perms", "50",
                                        "--boot", "20"])
        self.assertEqual([f["name"] for f in result["features"]], ["good", "monotone", "copy"])
        by_name = {f["name"]: f for f in result["features"]}
        self.assertIn("duplicate", by_name["monotone"]["flags"])
        self.assertIn("'good'", by_name["monotone"]["duplicate_of"])
        self.assertIn("the baseline 'tool_calls'", by_name["copy"]["duplicate_of"])
        for name, words in (("const", "cannot be tested: constant (5)"),
                            ("elapsed", "row 7, column 'elapsed': expected a number, got '8.0m'")):
            status, out, err = audit_folder(files, ["--features", f"good,{name}"])
            self.assertEqual(status, 2)
            self.assertIn(words, err)
            self.assertNotIn("Traceback", err)
        status, out, err = audit_folder(files, ["--features", "by_condition", "--strata",
                                                "condition"])
        self.assertEqual(status, 2)
        self.assertIn("'by_condition' cannot be tested: constant within every stratum", err)


class TestAucExactNumbers(unittest.TestCase):
    def test_integers_beyond_2_53_keep_their_order_and_ties(self):
        # Issue 11 item 3: nanosecond-like values 2**53 .. 2**53 + 5. Read as floats,
        # 2**53 + 1 collapses onto 2**53 and +3, +5 onto +4: AUC 11/18 = 0.611.
        # Exactly, the alternating outcome gives 2/3 = 0.667.
        stamps = [2 ** 53 + i for i in range(6)]
        labels = [1, 0, 1, 0, 1, 0]
        self.assertEqual(best(pair_auc(stamps, labels)), Fraction(2, 3))
        self.assertEqual(best(pair_auc([float(s) for s in stamps], labels)), Fraction(11, 18))
        header = ["run_id", "verified", "tool_calls", "stamp"]
        rows = [[f"r{i}", y, 10 + i % 4, s] for i, (y, s) in enumerate(zip(labels, stamps))]
        result = auc_audit_json({"runs.csv": csv_text(header, rows)},
                                ["--features", "stamp", "--perms", "50", "--boot", "20"])
        self.assertEqual(round(result["features"][0]["auc"], 3), 0.667)
        self.assertEqual(result["features"][0]["auc"], 2 / 3)

    def test_exact_values_in_ties_copies_and_the_screen(self):
        # Two columns a float reader would make equal (and constant) differ exactly.
        big = 2 ** 53
        header = ["run_id", "verified", "tool_calls", "a", "b"]
        labels = [1, 0, 1, 1, 0, 0]
        rows = [[f"r{i}", y, 10 + i, big + (i % 2), big + 2 * (i % 3)]
                for i, y in enumerate(labels)]
        result = auc_audit_json({"runs.csv": csv_text(header, rows)},
                                ["--perms", "50", "--boot", "20"])
        self.assertEqual([f["name"] for f in result["features"]], ["a", "b"])
        self.assertEqual(result["degenerate"], [])
        a = [big + (i % 2) for i in range(6)]
        self.assertEqual(result["features"][0]["auc"], float(best(pair_auc(a, labels))))

    def test_a_constant_long_decimal_baseline_is_an_error_not_a_traceback(self):
        header = ["run_id", "verified", "tool_calls", "f"]
        rows = [["r1", 1, "0.12345678901234567", 1], ["r2", 0, "0.12345678901234567", 2],
                ["r3", 1, "0.12345678901234567", 3]]
        status, out, err = audit_folder({"runs.csv": csv_text(header, rows)}, [])
        self.assertEqual(status, 2)
        self.assertIn("is 0.12345678901234567 on every one of the 3 audited runs", err)
        self.assertNotIn("Traceback", err)

    def test_exact_reader(self):
        module = load(AUC)
        read = module.exact_number
        self.assertEqual(read("9007199254740993", "x"), 2 ** 53 + 1)
        self.assertIsInstance(read("12", "x"), int)
        self.assertEqual(read("-0.25", "x"), -0.25)
        self.assertEqual(read("0.30000000000000001", "x"), Fraction(30000000000000001, 10 ** 17))
        self.assertNotEqual(read("0.30000000000000001", "x"), read("0.3", "x"))
        self.assertEqual(read("1e20", "x"), 10 ** 20)
        self.assertIsNone(read("nan", "x"))
        with self.assertRaises(module.InputError):
            read("inf", "x")
        with self.assertRaises(module.InputError):
            read("8.0m", "x")


def obuchowski_difference(x, y, labels, clusters):
    """Obuchowski (1997) clustered variance of AUC(x) - AUC(y), term by term, in
    Fractions: S10, S01 and S11 per test and across tests, straight from the paper."""
    pos = [i for i in range(len(labels)) if labels[i]]
    neg = [i for i in range(len(labels)) if not labels[i]]
    big_m, big_n = len(pos), len(neg)
    names = sorted(set(clusters))
    count = len(names)
    comps = {}
    for key, t in (("x", x), ("y", y)):
        v10 = {i: sum(psi(t[i], t[k]) for k in neg) / big_n for i in pos}
        v01 = {k: sum(psi(t[i], t[k]) for i in pos) / big_m for k in neg}
        theta = sum(v10.values()) / big_m
        a = {c: sum(v10[i] for i in pos if clusters[i] == c)
             - theta * sum(1 for i in pos if clusters[i] == c) for c in names}
        b = {c: sum(v01[k] for k in neg if clusters[k] == c)
             - theta * sum(1 for k in neg if clusters[k] == c) for c in names}
        comps[key] = (theta, a, b)
    # The paper's I10 and I01: the clusters holding at least one success (failure).
    i10 = len({clusters[i] for i in pos})
    i01 = len({clusters[k] for k in neg})

    def s10(p, q):
        return (Fraction(i10, i10 - 1) / big_m
                * sum(comps[p][1][c] * comps[q][1][c] for c in names))

    def s01(p, q):
        return (Fraction(i01, i01 - 1) / big_n
                * sum(comps[p][2][c] * comps[q][2][c] for c in names))

    def s11(p, q):
        return Fraction(count, count - 1) * sum(comps[p][1][c] * comps[q][2][c]
                                                 for c in names)

    def cov(p, q):
        return (s10(p, q) / big_m + s01(p, q) / big_n
                + (s11(p, q) + s11(q, p)) / (big_m * big_n))

    difference = comps["x"][0] - comps["y"][0]
    return difference, cov("x", "x") + cov("y", "y") - 2 * cov("x", "y")


class TestAucDeLongAndClustered(unittest.TestCase):
    def setUp(self):
        self.a = load(AUC)

    def test_delong_undefined_with_one_failure(self):
        # Issue 11 item 4: 3 successes and 1 failure; pROC gives NaN, the old code 0.0455.
        header = ["run_id", "verified", "tool_calls", "f"]
        rows = [["r1", 1, 8, 2], ["r2", 1, 8, 3], ["r3", 0, 10, 3], ["r4", 1, 8, 3]]
        files = {"runs.csv": csv_text(header, rows)}
        result = auc_audit_json(files, ["--features", "f", "--perms", "20", "--boot", "20"])
        feature = result["features"][0]
        self.assertIsNone(feature["delong_p"])
        self.assertIn("3 successes and 1 failure", feature["delong_undefined"])
        self.assertIsNone(feature["clustered"]["p"])
        status, out, err = audit_folder(files, ["--features", "f", "--perms", "20",
                                                "--boot", "20"])
        p_values = out[out.index("feature  perm p"):]
        row = next(l for l in p_values.splitlines() if l.startswith("f "))
        self.assertTrue(row.endswith("undefined  undefined"), row)
        self.assertIn("DeLong p and clustered p undefined: 3 successes and 1 failure",
                      " ".join(out.split()))

    def test_stratified_delong_needs_two_of_each_in_every_stratum_with_pairs(self):
        labels = [1, 1, 0, 0, 1, 0, 0, 1]
        groups = ["p", "p", "p", "p", "q", "q", "q", "q"]
        x = [5, 4, 1, 2, 7, 3, 1, 2]
        y = [3, 1, 2, 4, 1, 2, 7, 5]
        self.assertIsNotNone(self.a.delong_p(x, y, labels, groups, range(8)))
        labels_one = [1, 1, 0, 0, 1, 0, 0, 0]          # stratum q: 1 success, 3 failures
        self.assertIsNone(self.a.delong_p(x, y, labels_one, groups, range(8)))
        self.assertIn("in stratum 'q'",
                      self.a.variance_undefined(labels_one, groups, range(8)))
        # A stratum with no pair at all contributes nothing and does not block.
        labels_none = [1, 1, 0, 0, 0, 0, 0, 0]
        self.assertIsNone(self.a.variance_undefined(labels_none, groups, range(8)))

    def test_clustered_variance_counts_clusters_per_outcome(self):
        # An outside review: tasks t1 (two successes) and t2 (two failures) hold one
        # outcome only, so Obuchowski's I10 = I01 = 3 of I = 4 clusters. The old
        # code's I / (I - 1) on every term gave variance 0.114583 (p 0.712). By hand
        # from the paper: 0.128255208... (p 0.727).
        labels = [1, 1, 0, 0, 1, 0, 1, 0]
        clusters = ["t1", "t1", "t2", "t2", "t3", "t3", "t4", "t4"]
        baseline = [-5, -3, -4, -6, -2, -1, -7, -8]    # tool_calls, read in its - direction
        feature = [9, 7, 2, 5, 6, 4, 3, 8]
        difference, variance = obuchowski_difference(feature, baseline, labels, clusters)
        self.assertEqual(difference, Fraction(1, 8))
        self.assertEqual(variance, Fraction(985, 7680))
        got = self.a.clustered_difference(feature, baseline, labels, None, clusters, range(8))
        self.assertAlmostEqual(got["variance"], 985 / 7680, places=12)
        self.assertAlmostEqual(got["p"], 0.727060904417455, places=9)

    def test_clustered_variance_matches_obuchowski_term_by_term(self):
        rng = random.Random(57)
        checked = 0
        for _ in range(80):
            n = rng.randint(6, 18)
            labels = [1, 1, 0, 0] + [rng.randint(0, 1) for _ in range(n - 4)]
            clusters = [rng.randint(0, 4) for _ in range(n)]
            x = [rng.randint(0, 5) for _ in range(n)]
            y = [rng.randint(0, 5) for _ in range(n)]
            if len(set(clusters)) < 2:
                continue
            difference, variance = obuchowski_difference(x, y, labels, clusters)
            got = self.a.clustered_difference(x, y, labels, None, clusters, range(n))
            self.assertAlmostEqual(got["difference"], float(difference), places=12)
            self.assertAlmostEqual(got["variance"], float(variance), places=12)
            if variance > 0:
                self.assertAlmostEqual(got["p"], math.erfc(abs(float(difference)) / math.sqrt(
                    float(variance)) / math.sqrt(2)), places=10)
                checked += 1
        self.assertGreater(checked, 50)

    def test_stratified_clustered_variance_matches_the_per_pair_influences(self):
        rng = random.Random(58)
        checked = 0
        for _ in range(40):
            n = rng.randint(10, 20)
            groups = [rng.randint(0, 1) for _ in range(n)]
            labels = [rng.randint(0, 1) for _ in range(n)]
            clusters = [rng.randint(0, 5) for _ in range(n)]
            x = [rng.randint(0, 4) for _ in range(n)]
            y = [rng.randint(0, 4) for _ in range(n)]
            parts = []
            for g in (0, 1):
                pos = [i for i in range(n) if groups[i] == g and labels[i]]
                neg = [i for i in range(n) if groups[i] == g and not labels[i]]
                if pos and neg:
                    parts.append((pos, neg))
            got = self.a.clustered_difference(x, y, labels, groups, clusters, range(n))
            if not parts or any(len(p) < 2 or len(q) < 2 for p, q in parts):
                self.assertIsNone(got["p"])
                continue
            total = sum(len(p) * len(q) for p, q in parts)
            # I counts the clusters holding a run of a stratum with pairs; I10 and I01
            # those holding a success and a failure (Obuchowski's small-sample factors).
            used = {clusters[i] for p, q in parts for i in p + q}
            i10 = len({clusters[i] for p, _ in parts for i in p})
            i01 = len({clusters[k] for _, q in parts for k in q})
            if i10 < 2 or i01 < 2:
                self.assertIsNone(got["p"])
                continue
            success = {c: Fraction(0) for c in used}
            failure = {c: Fraction(0) for c in used}
            difference = Fraction(0)
            for pos, neg in parts:
                w = Fraction(len(pos) * len(neg), total)
                d = {(i, k): psi(x[i], x[k]) - psi(y[i], y[k]) for i in pos for k in neg}
                gap = sum(d.values()) / (len(pos) * len(neg))
                difference += w * gap
                for i in pos:
                    success[clusters[i]] += w * (sum(d[i, k] for k in neg) / len(neg)
                                                 - gap) / len(pos)
                for k in neg:
                    failure[clusters[k]] += w * (sum(d[i, k] for i in pos) / len(pos)
                                                 - gap) / len(neg)
            count = len(used)
            variance = (Fraction(i10, i10 - 1) * sum(v * v for v in success.values())
                        + Fraction(i01, i01 - 1) * sum(v * v for v in failure.values())
                        + 2 * Fraction(count, count - 1)
                        * sum(success[c] * failure[c] for c in used))
            self.assertAlmostEqual(got["difference"], float(difference), places=12)
            self.assertAlmostEqual(got["variance"], float(variance), places=12)
            checked += 1
        self.assertGreater(checked, 15)


class TestAucRowOrderAndIdentity(unittest.TestCase):
    def shuffled_copy(self, seed):
        with open(os.path.join(EXAMPLE_RUNS, "runs.csv"), encoding="utf-8") as handle:
            lines = handle.read().splitlines()
        body = lines[1:]
        random.Random(seed).shuffle(body)
        return "\n".join([lines[0]] + body) + "\n"

    def report_without_provenance(self, text, argv):
        status, out, err = audit_folder({"runs.csv": text}, argv)
        self.assertEqual(status, 0, err)
        return out.split("-- provenance --")[0]

    def test_same_rows_in_any_order_give_the_same_bytes(self):
        # Issue 11 item 5: reversing rows within tasks moved edit_calls' adjusted p
        # under --permute tasks from 0.188 to 0.202 (8 Monte Carlo standard errors).
        with open(os.path.join(EXAMPLE_RUNS, "runs.csv"), encoding="utf-8") as handle:
            original = handle.read()
        for argv in (["--permute", "tasks", "--perms", "400", "--boot", "200"],
                     ["--strata", "condition", "--perms", "400", "--boot", "200"],
                     ["--perms", "400", "--boot", "200", "--format", "json"]):
            expected = self.report_without_provenance(original, argv)
            if "json" in argv:
                expected = json.dumps({k: v for k, v in json.loads(expected).items()
                                       if k != "provenance"})
            for seed in (1, 2):
                got = self.report_without_provenance(self.shuffled_copy(seed), argv)
                if "json" in argv:
                    got = json.dumps({k: v for k, v in json.loads(got).items()
                                      if k != "provenance"})
                self.assertEqual(got, expected)

    def test_rows_without_run_ids_are_ordered_by_their_cells(self):
        header = ["task_id", "verified", "tool_calls", "f", "g"]
        rng = random.Random(9)
        rows = [[f"t{i // 3}", int(rng.random() < 0.5), rng.randint(5, 30),
                 rng.randint(0, 9), round(rng.random(), 3)] for i in range(30)]
        rows[0][1], rows[1][1] = 1, 0
        argv = ["--permute", "tasks", "--perms", "300", "--boot", "100"]
        expected = self.report_without_provenance(csv_text(header, rows), argv)
        for seed in (3, 4):
            shuffled = list(rows)
            random.Random(seed).shuffle(shuffled)
            self.assertEqual(self.report_without_provenance(csv_text(header, shuffled), argv),
                             expected)

    def test_task_identity_flag_uses_the_features_own_rows(self):
        # Pure tasks (all succeed or all fail) make task identity near perfect on all
        # rows; the feature is defined only in mixed tasks, where leaving a run out
        # points the other way: identity on its own rows is far below its AUC.
        header = ["run_id", "task_id", "verified", "tool_calls", "f"]
        rows = []
        for t in range(4):                          # pure tasks, f undefined
            for r in range(4):
                rows.append([f"p{t}{r}", f"pure{t}", int(t % 2 == 0), 10 + (t * 3 + r) % 7, ""])
        for t in range(4):                          # mixed tasks: 2 of 4 succeed
            for r in range(4):
                y = int(r < 2)
                rows.append([f"m{t}{r}", f"mixed{t}", y, 10 + (t + 2 * r) % 5,
                             (t * r) % 5 + 2 * y])
        labels = [r[2] for r in rows]
        tasks = [r[1] for r in rows]
        rate = []
        for i in range(len(rows)):
            others = [labels[j] for j in range(len(rows)) if tasks[j] == tasks[i] and j != i]
            rate.append(Fraction(sum(others), len(others)))
        own = [i for i in range(len(rows)) if rows[i][4] != ""]
        identity_all = pair_auc(rate, labels)
        identity_own = pair_auc(rate, labels, own)
        feature_auc = best(pair_auc([rows[i][4] if i in own else None for i in range(len(rows))],
                                    labels, own))
        self.assertGreater(identity_all, feature_auc)
        self.assertLess(identity_own, feature_auc)
        result = auc_audit_json({"runs.csv": csv_text(header, rows)},
                                ["--perms", "50", "--boot", "30"])
        feature = result["features"][0]
        self.assertEqual(feature["auc"], float(feature_auc))
        self.assertEqual(result["task_identity_auc"], float(identity_all))
        self.assertEqual(feature["task_identity_auc_same_rows"], float(identity_own))
        self.assertNotIn("below_task_identity", feature["flags"])

    def test_youden_tie_rule_is_the_one_the_manual_states(self):
        module = load(AUC)
        doc = " ".join(module.youden_binarise.__doc__.split())
        self.assertIn("the + direction (higher = success) wins over the - direction", doc)
        self.assertIn("in + the highest cut, in - the lowest", doc)
        rng = random.Random(21)
        for _ in range(300):
            n = rng.randint(2, 12)
            labels = [rng.randint(0, 1) for _ in range(n)]
            scores = [rng.randint(0, 4) for _ in range(n)]
            n1, n0 = sum(labels), n - sum(labels)
            if not n1 or not n0:
                continue
            candidates = []           # (gain, + first, fewest called 1) per cut
            for sign in (1, -1):
                for cut in sorted(set(scores)):
                    called = [int(sign * v >= sign * cut) for v in scores]
                    hits = sum(c for c, y in zip(called, labels) if y)
                    alarms = sum(c for c, y in zip(called, labels) if not y)
                    candidates.append((hits * n0 - alarms * n1, sign, -sum(called),
                                       tuple(called)))
            top = max(candidates)
            self.assertEqual(module.youden_binarise(scores, labels), top[3])


class TestAucSpeedPathsAgree(unittest.TestCase):
    def test_grouped_and_per_run_sweeps_match_weighted_brute_force(self):
        module = load(AUC)
        rng = random.Random(61)
        for trial in range(120):
            n = rng.randint(3, 24)
            labels = [rng.randint(0, 1) for _ in range(n)]
            strata = [rng.randint(0, 1) for _ in range(n)]
            tasks = [rng.randint(0, 5) for _ in range(n)]
            draw = (lambda: rng.randint(0, 3)) if trial % 2 else (lambda: rng.random())
            scores = [None if rng.random() < 0.2 else draw() for _ in range(n)]
            rows = [i for i in range(n) if scores[i] is not None]
            weights = [rng.randint(0, 3) for _ in range(6)]
            expected, expected_pairs = brute_pairs(scores, labels, strata, rows,
                                                   [weights[t] for t in tasks])
            for grouped in (True, False):
                sweep = module.BootstrapSweep(scores, labels, strata, tasks, rows,
                                              grouped=grouped)
                twice_u, pairs = sweep.pair_count(weights)
                self.assertEqual(pairs, expected_pairs)
                if pairs:
                    self.assertEqual(Fraction(twice_u, 2 * pairs), expected)

    def test_inlined_sampler_and_task_weights_reproduce_the_standard_library(self):
        module = load(AUC)
        for seed in range(200):
            sizes = random.Random(seed)
            n = sizes.randint(1, 5000)
            k = sizes.randint(0, n)
            population = range(n) if seed % 2 else [f"r{i}" for i in range(n)]
            ours, theirs = random.Random(seed), random.Random(seed)
            self.assertEqual(module.sample(ours, population, k), theirs.sample(population, k))
            tasks = sizes.randint(1, 300)
            counts = [0] * tasks
            for task in theirs.choices(range(tasks), k=tasks):
                counts[task] += 1
            self.assertEqual(module.cluster_weights(ours, tasks), counts)


def task_clustered_sample(seed, n_tasks, per_task, n_features, baseline_shift, feature_shift):
    """Outcomes on tasks of varying ease; the baseline and each feature j are normal noise
    shifted by baseline_shift and feature_shift(j) for successes: (labels, tasks, baseline,
    features)."""
    rng = random.Random(seed)
    labels, tasks, baseline = [], [], []
    features = [[] for _ in range(n_features)]
    for t in range(n_tasks):
        ease = rng.random()
        for _ in range(per_task):
            y = int(rng.random() < ease)
            labels.append(y)
            tasks.append(f"t{t:02d}")
            baseline.append(rng.gauss(baseline_shift * y, 1))
            for j, values in enumerate(features):
                values.append(rng.gauss(feature_shift(j) * y, 1))
    return labels, tasks, baseline, features


def issue19_like_baseline(seed, n_tasks=50, per_task=4, n_features=10):
    """Issue 19 finding 2's shape: features generated exactly like the baseline (the
    same shift for successes, independent noise), on tasks of varying ease."""
    return task_clustered_sample(seed, n_tasks, per_task, n_features, 0.5, lambda j: 0.5)


def issue19_task_level(seed, n_tasks, per_task, n_columns):
    """Finding 1 and 3's shape: outcomes driven by task difficulty alone; columns that
    are constant within each task (column 0 the task's true difficulty, the others
    noise drawn once per task); a baseline of run-level noise."""
    rng = random.Random(seed)
    difficulty = [rng.random() for _ in range(n_tasks)]
    columns = [difficulty] + [[rng.random() for _ in range(n_tasks)]
                              for _ in range(n_columns - 1)]
    labels, tasks, baseline, features = [], [], [], [[] for _ in range(n_columns)]
    for t in range(n_tasks):
        for _ in range(per_task):
            labels.append(int(rng.random() < difficulty[t]))
            tasks.append(f"t{t:02d}")
            baseline.append(rng.random())
            for values, column in zip(features, columns):
                values.append(column[t])
    return labels, tasks, baseline, features


def issue19_runs_csv(labels, tasks, baseline, features, strata=None):
    header = ["run_id", "task_id"] + (["arm"] if strata else []) + \
        ["verified", "tool_calls"] + [f"f{j}" for j in range(len(features))]
    rows = []
    for i, y in enumerate(labels):
        rows.append([f"r{i:04d}", tasks[i]] + ([strata[i]] if strata else []) +
                    [y, f"{baseline[i]:.6f}"] + [f"{v[i]:.6f}" for v in features])
    return csv_text(header, rows)


def exact_task_level_p(values, labels, tasks):
    """A column constant within tasks: its exact p under the task shuffle, by visiting
    every assignment of the tasks' success counts (all tasks of one size), with the
    better direction re-chosen per assignment as the audit does."""
    order = sorted(set(tasks))
    members = [[i for i, t in enumerate(tasks) if t == task] for task in order]
    counts = [sum(labels[i] for i in m) for m in members]
    observed = best(brute_pairs(values, labels)[0])
    hits = total = 0
    for assignment in itertools.permutations(counts):
        shuffled = [0] * len(labels)
        for rows, count in zip(members, assignment):
            for i in rows[:count]:       # constant within a task: placement is irrelevant
                shuffled[i] = 1
        total += 1
        hits += best(brute_pairs(values, shuffled)[0]) >= observed
    return Fraction(hits, total)


class TestAucGatesHoldTheirRates(unittest.TestCase):
    """Issue 19: the null respects tasks, gate 1 is family-wise, gate 3 needs
    within-task evidence and 10 clusters, p-values say their floor."""

    def test_finding_1_task_level_column_on_4_tasks_does_not_pass(self):
        # A column constant within each of 4 tasks passed all three gates at p < 0.001
        # with an interval "from 4 tasks"; its exact task-level p is a few 24ths.
        rng = random.Random(19)
        rates = [0.9, 0.7, 0.3, 0.1]
        labels, tasks, baseline, column = [], [], [], []
        for t, rate in enumerate(rates):
            for r in range(10):
                labels.append(int(r < rate * 10))
                tasks.append(f"t{t}")
                baseline.append(rng.random())
                column.append(4 - t)
        text = issue19_runs_csv(labels, tasks, baseline, [column])
        result = auc_audit_json({"runs.csv": text}, ["--perms", "2000", "--boot", "200"])
        (feature,) = result["features"]
        self.assertEqual(result["family_null"]["permute"], "tasks")
        self.assertTrue(result["family_null"]["permute_default"])
        exact = exact_task_level_p(column, labels, tasks)
        self.assertAlmostEqual(feature["permutation_p"], float(exact), delta=0.02)
        self.assertGreater(feature["adjusted_p"], 0.05)
        self.assertIsNone(feature["delta_ci"])                 # 4 clusters: withheld
        self.assertNotEqual(feature["verdict"], "passes all three gates")
        # The report's run shuffle is still there, and says it is chosen.
        rows = auc_audit_json({"runs.csv": text}, ["--permute", "rows", "--perms", "500",
                                                   "--boot", "50"])
        self.assertLess(rows["features"][0]["permutation_p"], 0.01)
        self.assertFalse(rows["family_null"]["permute_default"])
        status, out, err = audit_folder({"runs.csv": text}, ["--perms", "200", "--boot", "50"])
        self.assertIn("shuffles of whole tasks among tasks of the same shape; the default",
                      " ".join(out.split()))

    def test_finding_1_task_shuffle_within_strata_matches_exact_enumeration(self):
        # 5 tasks, each with 2 runs in arm p and 1 in arm q: the shuffle moves whole
        # tasks (their per-arm counts) among tasks of that shape, placing each count
        # on a random subset of the task's runs in that arm.
        labels = [1, 0, 1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 1, 1, 0]
        tasks = [t for t in "abcde" for _ in range(3)]
        strata = ["p", "p", "q"] * 5
        values = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9]
        n = len(labels)
        # Exact: every assignment of count vectors, times every placement in each cell.
        cells = {(t, s): [i for i in range(n) if tasks[i] == t and strata[i] == s]
                 for t in "abcde" for s in "pq"}
        vectors = [(sum(labels[i] for i in cells[(t, "p")]),
                    sum(labels[i] for i in cells[(t, "q")])) for t in "abcde"]
        observed = best(brute_pairs(values, labels, strata)[0])
        hits = total = 0
        for assignment in itertools.permutations(vectors):
            options = []
            for t, (cp, cq) in zip("abcde", assignment):
                options.append(list(itertools.combinations(cells[(t, "p")], cp)))
                options.append(list(itertools.combinations(cells[(t, "q")], cq)))
            for choice in itertools.product(*options):
                chosen = set(itertools.chain(*choice))
                draw = [int(i in chosen) for i in range(n)]
                total += 1
                hits += best(brute_pairs(values, draw, strata)[0]) >= observed
        exact = Fraction(hits, total)
        text = csv_text(["run_id", "task_id", "arm", "verified", "tool_calls", "f"],
                        [[f"r{i:02d}", tasks[i], strata[i], labels[i], i % 4, values[i]]
                         for i in range(n)])
        result = auc_audit_json({"runs.csv": text}, ["--strata", "arm", "--perms", "4000",
                                                     "--boot", "10"])
        self.assertEqual(result["family_null"]["permute"], "tasks")
        # p = (1 + hits among B) / (1 + B): Monte Carlo sd about 0.008 here.
        self.assertAlmostEqual(result["features"][0]["permutation_p"], float(exact),
                               delta=0.03)

    def test_fast_task_null_sums_what_its_draws_sum_run_by_run(self):
        module = load(AUC)
        rng = random.Random(5)
        for trial in range(30):
            n_tasks = rng.randint(2, 8)
            tasks = [rng.randrange(n_tasks) for _ in range(rng.randint(6, 40))]
            strata = [rng.randint(0, 1) for _ in tasks] if trial % 2 else None
            labels = [rng.randint(0, 1) for _ in tasks]
            features = [[None if rng.random() < 0.2 else rng.randint(0, 4) for _ in tasks]
                        for _ in range(3)]
            codes = strata if strata is not None else [0] * len(tasks)
            family = module.NullFamily(features, codes, 2 if strata else 1)
            fast = module.task_null_aucs(family, labels, strata, tasks, 40, random.Random(trial))
            # The packed sums against the family's own run-by-run sums of the same draws.
            slow = module.null_aucs(family, task_shuffle_draws(
                module, labels, strata, tasks, 40, random.Random(trial)))
            self.assertEqual(fast, slow)
            for picked, are_successes in task_shuffle_draws(module, labels, strata, tasks,
                                                            20, random.Random(trial)):
                # Each stratum keeps its number of successes; each task's count vector
                # is some same-shape task's.
                chosen = set(picked)
                drawn = [int((i in chosen) == are_successes) for i in range(len(tasks))]
                for level in set(codes):
                    self.assertEqual(sum(d for d, c in zip(drawn, codes) if c == level),
                                     sum(y for y, c in zip(labels, codes) if c == level))

    def test_finding_2_features_like_the_baseline_no_longer_pass(self):
        # Seed 5 of the shape: the old per-feature interval let f9 pass; the joint
        # interval over the 10 features reaches 0.
        labels, tasks, baseline, features = issue19_like_baseline(5)
        text = issue19_runs_csv(labels, tasks, baseline, features)
        result = auc_audit_json({"runs.csv": text}, ["--perms", "300", "--boot", "300"])
        self.assertEqual(result["verdict"]["passing"], [])
        f9 = next(f for f in result["features"] if f["name"] == "f9")
        self.assertGreater(f9["delta_ci"][0], 0)                 # the per-feature interval
        self.assertLessEqual(f9["delta_joint_ci"][0], 0)         # the family-wise one
        self.assertIn("joint interval over all 10 features with an interval reaches 0",
                      f9["verdict"])

    def test_joint_interval_from_its_definition(self):
        module = load(AUC)
        rng = random.Random(7)
        for _ in range(50):
            m, b = rng.randint(1, 5), rng.randint(5, 60)
            observed = [rng.gauss(0, 1) for _ in range(m)]
            joint = [[None if rng.random() < 0.1 else o + rng.gauss(0, 1 + j)
                      for _ in range(b)] for j, o in enumerate(observed)]
            sds = []
            for values in joint:
                drawn = [v for v in values if v is not None]
                mean = sum(drawn) / len(drawn)
                sds.append(math.sqrt(sum((v - mean) ** 2 for v in drawn) / (len(drawn) - 1)))
            maxima = sorted(max([abs(joint[j][k] - observed[j]) / sds[j] for j in range(m)
                                 if joint[j][k] is not None], default=0.0) for k in range(b))
            position = 0.95 * (b - 1)
            low = int(position)
            c = maxima[low] + (maxima[min(low + 1, b - 1)] - maxima[low]) * (position - low)
            critical, bands = module.joint_interval(observed, joint)
            self.assertAlmostEqual(critical, c, places=12)
            for band, o, sd in zip(bands, observed, sds):
                self.assertAlmostEqual(band[0], o - c * sd, places=12)
                self.assertAlmostEqual(band[1], o + c * sd, places=12)

    def test_finding_3_task_difficulty_column_cannot_pass(self):
        # A column equal to each task's true difficulty beat the leave-one-out bar
        # (0.819 against 0.676) and passed. Within a task it ties on every pair.
        labels, tasks, baseline, features = issue19_task_level(3, 30, 4, 1)
        text = issue19_runs_csv(labels, tasks, baseline, features)
        for argv in ([], ["--permute", "rows"]):
            result = auc_audit_json({"runs.csv": text}, ["--perms", "500", "--boot", "500",
                                                         *argv])
            (feature,) = result["features"]
            self.assertEqual(feature["within_task_auc"], 0.5)
            self.assertIn("no_within_task_signal", feature["flags"])
            self.assertIn("below_task_identity", feature["flags"])
            self.assertNotEqual(feature["verdict"], "passes all three gates")
            # The ceiling is the best any function of the task reaches: brute force.
            rate = {t: Fraction(sum(y for y, u in zip(labels, tasks) if u == t),
                                tasks.count(t)) for t in set(tasks)}
            ceiling = brute_pairs([rate[t] for t in tasks], labels)[0]
            self.assertEqual(feature["task_ceiling_same_rows"], float(ceiling))
            self.assertLessEqual(feature["auc"], feature["task_ceiling_same_rows"])

    def test_finding_3_ceiling_beats_every_function_of_the_task(self):
        module = load(AUC)
        rng = random.Random(11)
        for _ in range(40):
            n_tasks = rng.randint(2, 5)
            tasks = [rng.randrange(n_tasks) for _ in range(rng.randint(4, 16))]
            labels = [rng.randint(0, 1) for _ in tasks]
            if len(set(labels)) < 2:
                continue
            ceiling = module.task_ceiling(labels, tasks, None, range(len(tasks)))
            # Every ranking of the tasks (with ties) is a function of the task alone.
            best_any = max(brute_pairs([scores[t] for t in tasks], labels)[0]
                           for scores in itertools.product(range(n_tasks), repeat=n_tasks))
            self.assertEqual(Fraction(ceiling).limit_denominator(10 ** 6), best_any)

    def test_ties_within_tasks_are_flagged_and_fail_gate_3(self):
        # A within-task AUC of exactly 0.5, made of ties, was neither flagged W nor failed.
        labels, tasks, baseline, features = issue19_task_level(4, 12, 4, 1)
        text = issue19_runs_csv(labels, tasks, baseline, features)
        status, out, err = audit_folder({"runs.csv": text}, ["--perms", "300", "--boot", "300"])
        self.assertEqual(status, 0, err)
        table = out[out.index("joint 95% CI"):].splitlines()[2]
        self.assertIn(" N ", f" {table} ")

    def test_fewer_than_ten_clusters_cannot_pass_gate_3(self):
        header, rows = strong_rows(lambda i: f"t{i % 5}")
        result = auc_audit_json({"runs.csv": table_text(header, rows)},
                                ["--perms", "300", "--boot", "300", "--permute", "rows"])
        (sharp,) = result["features"]
        self.assertIsNone(sharp["delta_ci"])
        self.assertIsNone(sharp["delta_joint_ci"])
        self.assertEqual(result["bootstrap"]["resamples"], 0)
        self.assertEqual(sharp["verdict"], "fails gate 3: on its rows only 5 tasks hold a "
                                           "success and 5 a failure; below 10 on either side "
                                           "no interval is given and nothing passes")
        # The clustered test's normal reference with 5 clusters: withheld, with the reason.
        self.assertIsNone(sharp["clustered"]["p"])
        self.assertIn("too few for its normal reference", sharp["clustered"]["undefined"])
        self.assertIsNotNone(sharp["clustered"]["variance"])

    def test_p_at_its_floor_is_marked_and_never_0(self):
        module = load(AUC)
        self.assertEqual(module.fmt_p(0.0), "<0.001")
        self.assertEqual(module.fmt_p(1 / 201, floor=1 / 201), "<=0.005")
        self.assertEqual(module.fmt_p(0.0499), "0.0499")     # the shared fmt_p keeps decimals
        self.assertEqual(module.fmt_p(0.04999999), "<0.050")
        header, rows = strong_rows(lambda i: f"t{i % 10}")
        files = {"runs.csv": table_text(header, rows)}
        argv = ["--perms", "200", "--boot", "200", "--permute", "rows"]
        result = auc_audit_json(files, argv)
        (sharp,) = result["features"]
        self.assertEqual(sharp["permutation_p"], 1 / 201)          # full value in JSON
        self.assertEqual(result["family_null"]["smallest_p"], 1 / 201)
        for style in ("text", "markdown"):
            status, out, err = audit_folder(files, argv + ["--format", style])
            self.assertEqual(status, 0, err)
            line = next(l for l in out.splitlines() if l.strip("| ").startswith("sharp")
                        and "0.00" in l and "<=" in l)
            self.assertIn("<=0.005", line)
            self.assertNotIn("0.000", out.split("-- provenance --")[0].split("provenance")[0])

    def test_example_keeps_the_report_figures_under_the_reports_scheme(self):
        # The seed report's figures on the shipped example, with the shuffle the
        # report used (runs within conditions): the same as before issue 19.
        with open(os.path.join(EXAMPLE_RUNS, "runs.csv"), encoding="utf-8") as handle:
            text = handle.read()
        result = auc_audit_json({"runs.csv": text}, ["--strata", "condition", "--permute",
                                                     "strata"])
        features = {f["name"]: f for f in result["features"]}
        self.assertEqual(round(result["baseline"]["auc"], 3), 0.616)
        self.assertEqual(round(result["baseline"]["auc_pooled"], 3), 0.614)
        impl = features["impl_seconds"]
        self.assertEqual((round(impl["auc"], 3), round(impl["baseline_auc_same_rows"], 3)),
                         (0.661, 0.878))
        self.assertEqual(round(result["task_identity_auc"], 3), 0.881)
        self.assertEqual(round(features["search_calls"]["auc"], 3), 0.775)
        self.assertEqual(result["family_null"]["permute"], "strata")
        self.assertEqual(round(result["family_null"]["median_max"], 3), 0.641)
        self.assertEqual(round(result["family_null"]["p_clear_bar"], 3), 0.708)


# --- auc_audit.py gate 3 as a test (issue 22) ---
def issue22_task_only(seed, n_tasks=30, strata=False):
    """Every column and the baseline carry a task effect; 1-6 runs per task. The
    column knows only the task: its ease (with strata, also the condition, which moves
    the success rate), read with run-level noise. (labels, tasks, arms, baseline,
    column)."""
    rng = random.Random(seed)
    labels, tasks, arms, baseline, column = [], [], [], [], []
    for t in range(n_tasks):
        ease, offset = rng.random(), rng.gauss(0, 1)
        for _ in range(rng.randint(1, 6)):
            arm = "ab"[rng.random() < 0.5] if strata else "a"
            rate = ease * 0.5 + (0.45 if arm == "b" else 0.0) if strata else ease
            y = int(rng.random() < rate)
            labels.append(y)
            tasks.append(f"t{t:02d}")
            arms.append(arm)
            baseline.append(offset + rng.gauss(0, 1))
            column.append(3 * ease + (2.0 if arm == "b" else 0.0) + rng.gauss(0, 0.3))
    return labels, tasks, arms, baseline, column


def issue22_few_successes(seed, n_tasks=50, n_features=10):
    """3 successes, in 3 of 50 tasks of 4 runs; ten features generated like the
    baseline (a task offset each, the same shift for successes)."""
    rng = random.Random(seed)
    winners = set(rng.sample(range(n_tasks), 3))
    labels, tasks, baseline, features = [], [], [], [[] for _ in range(n_features)]
    for t in range(n_tasks):
        offsets = [rng.gauss(0, 1) for _ in range(n_features + 1)]
        for r in range(4):
            y = int(t in winners and r == 0)
            labels.append(y)
            tasks.append(f"t{t:02d}")
            baseline.append(offsets[-1] + rng.gauss(0.8 * y, 1))
            for values, offset in zip(features, offsets):
                values.append(offset + rng.gauss(0.8 * y, 1))
    return labels, tasks, baseline, features


def issue22_pairs(seed, n_tasks=40, shift=2.0):
    """Tasks of 2 runs and no task effect; the column separates runs inside tasks."""
    rng = random.Random(seed)
    labels, tasks, baseline, column = [], [], [], []
    for t in range(n_tasks):
        for _ in range(2):
            y = int(rng.random() < 0.5)
            labels.append(y)
            tasks.append(f"t{t:02d}")
            baseline.append(rng.gauss(0, 1))
            column.append(rng.gauss(shift * y, 1))
    return labels, tasks, baseline, column


def issue22_lone(seed, n_tasks=12):
    """No two tasks share a size (1..12 runs); the outcome depends on the task only;
    f0 is the task's ease (constant in each task), f1..f3 carry a task effect."""
    rng = random.Random(seed)
    sizes = list(range(1, n_tasks + 1))
    rng.shuffle(sizes)
    labels, tasks, baseline, features = [], [], [], [[] for _ in range(4)]
    for t, size in enumerate(sizes):
        ease, offsets = rng.random(), [rng.gauss(0, 1) for _ in range(3)]
        for _ in range(size):
            y = int(rng.random() < ease)
            labels.append(y)
            tasks.append(f"t{t:02d}")
            baseline.append(rng.gauss(0, 1))
            features[0].append(round(ease, 6))
            for values, offset in zip(features[1:], offsets):
                values.append(offset + 2 * ease + rng.gauss(0, 0.5))
    return labels, tasks, baseline, features


def naive_credit(high, low):
    return Fraction(1) if high > low else Fraction(1, 2) if high == low else Fraction(0)


def brute_within_p(values, labels, tasks, strata):
    """Gate 3's p by listing every arrangement of the outcomes inside each task x
    stratum cell, from scratch: the within-task AUC (pairs inside a cell) read in the
    direction the arrangement's stratified AUC (pairs inside a stratum) chooses, its
    share of arrangements at least the observed one's. Exact fractions."""
    n = len(labels)
    cells = {}
    for i in range(n):
        cells.setdefault((tasks[i], strata[i]), []).append(i)

    def statistic(y):
        across = sum(naive_credit(values[s], values[f]) for s in range(n) for f in range(n)
                     if y[s] and not y[f] and strata[s] == strata[f])
        pairs = sum(1 for s in range(n) for f in range(n)
                    if y[s] and not y[f] and strata[s] == strata[f])
        up = across >= Fraction(pairs, 2)
        within = [(s, f) for s in range(n) for f in range(n) if y[s] and not y[f]
                  and (tasks[s], strata[s]) == (tasks[f], strata[f])]
        credit = sum(naive_credit(values[s], values[f]) if up else
                     naive_credit(values[f], values[s]) for s, f in within)
        return Fraction(credit, len(within))

    observed = statistic(labels)
    choices = [[c for c in itertools.combinations(members, sum(labels[i] for i in members))]
               for members in cells.values()]
    hits = total = 0
    for picks in itertools.product(*choices):
        y = [0] * n
        for pick in picks:
            for i in pick:
                y[i] = 1
        total += 1
        hits += statistic(y) >= observed
    return Fraction(hits, total)


class TestAucGateThreeIsATest(unittest.TestCase):
    """Issue 22: gate 3 tests the within-task AUC inside task x stratum cells, counts
    the tasks that hold the evidence, finds the task column, states power, shuffles
    lone tasks inside cells, flags I only without within-task evidence, and prints
    the minP floor."""

    def within_case(self):
        # 5 tasks of 2-4 runs, two strata, ties: small enough to list every arrangement.
        labels = [1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 0, 1, 1, 0]
        tasks = ["a", "a", "a", "b", "b", "b", "c", "c", "c", "c", "d", "d", "e", "e", "e", "e"]
        strata = ["x", "x", "y", "x", "y", "y", "x", "x", "y", "y", "x", "x", "y", "y", "x", "x"]
        values = [5, 1, 3, 2, 2, 4, 6, 6, 1, 7, 0, 3, 2, 5, 4, 4]
        return labels, tasks, strata, values

    def test_within_p_equals_full_enumeration(self):
        module = load(AUC)
        labels, tasks, strata, values = self.within_case()
        expected = brute_within_p(values, labels, tasks, strata)
        result = module.audit(labels, [("f", values)], [i % 3 for i in range(16)],
                              tasks=tasks, strata=strata, perms=50, boot=20, seed=3)
        (feature,) = result["features"]
        self.assertEqual(feature["within_task_test"]["method"], "exact")
        self.assertEqual(feature["within_task_p"], float(expected))
        # The same case without strata: cells are the tasks.
        expected = brute_within_p(values, labels, tasks, ["s"] * 16)
        result = module.audit(labels, [("f", values)], [i % 3 for i in range(16)],
                              tasks=tasks, perms=50, boot=20, seed=3)
        self.assertEqual(result["features"][0]["within_task_p"], float(expected))

    def test_a_large_cell_among_few_arrangements_is_listed_not_a_crash(self):
        # One task of 11 runs with 5 successes has 462 placements, over PLACEMENTS_LIMIT
        # (256), while all arrangements (462 x 2 x 2) stay under WITHIN_EXACT_LIMIT: the
        # exact enumeration met that cell unlisted and raised TypeError (a traceback).
        module = load(AUC)
        labels = [1, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0] + [1, 0, 0, 1]
        tasks = ["big"] * 11 + ["p", "p", "q", "q"]
        values = [9, 2, 7, 4, 4, 1, 8, 3, 6, 5, 0] + [3, 1, 2, 2]
        self.assertGreater(math.comb(11, 5), module.PLACEMENTS_LIMIT)
        result = module.audit(labels, [("f", values)], [i % 4 for i in range(15)],
                              tasks=tasks, perms=50, boot=20, seed=3)
        (feature,) = result["features"]
        self.assertEqual(feature["within_task_test"]["method"], "exact")
        self.assertEqual(feature["within_task_test"]["arrangements"], 462 * 4)
        self.assertEqual(feature["within_task_p"],
                         float(brute_within_p(values, labels, tasks, ["s"] * 15)))

    def test_monte_carlo_within_p_agrees_with_enumeration(self):
        module = load(AUC)
        labels, tasks, strata, values = self.within_case()
        exact = float(brute_within_p(values, labels, tasks, strata))
        saved = module.WITHIN_EXACT_LIMIT
        module.WITHIN_EXACT_LIMIT = 1         # force the shuffles
        try:
            result = module.audit(labels, [("f", values)], [i % 3 for i in range(16)],
                                  tasks=tasks, strata=strata, perms=4000, boot=20, seed=3)
        finally:
            module.WITHIN_EXACT_LIMIT = saved
        (feature,) = result["features"]
        self.assertEqual(feature["within_task_test"]["method"], "monte carlo")
        sd = math.sqrt(exact * (1 - exact) / 4000)
        self.assertLess(abs(feature["within_task_p"] - exact), 4 * sd + 1 / 4001)

    def test_exact_up_to_the_limit_then_drawn(self):
        # The arrangements counted by hand: C(size, successes) over the mixed cells.
        module = load(AUC)
        labels, tasks, strata, values = self.within_case()
        cells = collections.defaultdict(list)
        for label, task, stratum in zip(labels, tasks, strata):
            cells[task, stratum].append(label)
        count = math.prod(math.comb(len(c), sum(c)) for c in cells.values())
        saved, methods = module.WITHIN_EXACT_LIMIT, []
        try:
            for limit in (count, count - 1):
                module.WITHIN_EXACT_LIMIT = limit
                result = module.audit(labels, [("f", values)], [i % 3 for i in range(16)],
                                      tasks=tasks, strata=strata, perms=50, boot=20, seed=3)
                test = result["features"][0]["within_task_test"]
                methods.append((test["method"], test["arrangements"]))
        finally:
            module.WITHIN_EXACT_LIMIT = saved
        self.assertEqual(methods, [("exact", count), ("monte carlo", count)])

    def test_finding_1_task_only_column_fails_gate_3(self):
        # It knows only the task: within-task AUC 0.655 on 58 pairs passed all three
        # gates; its within p (exact under shuffles inside tasks) is 0.055.
        labels, tasks, _, baseline, column = issue22_task_only(7)
        text = issue19_runs_csv(labels, tasks, baseline, [column])
        result = auc_audit_json({"runs.csv": text}, ["--perms", "200", "--boot", "200"])
        (feature,) = result["features"]
        self.assertEqual(result["verdict"]["passing"], [])
        self.assertEqual((round(feature["within_task_auc"], 3), feature["within_task_pairs"]),
                         (0.655, 58))
        self.assertGreaterEqual(feature["within_task_p"], 0.05)
        self.assertTrue(feature["verdict"].startswith("fails gate 3: within tasks it is not "
                                                      "told from chance"), feature["verdict"])

    def test_finding_2_with_strata_pairs_stay_inside_cells(self):
        labels, tasks, arms, baseline, column = issue22_task_only(6, strata=True)
        text = issue19_runs_csv(labels, tasks, baseline, [column], strata=arms)
        result = auc_audit_json({"runs.csv": text}, ["--strata", "arm", "--perms", "200",
                                                     "--boot", "200"])
        (feature,) = result["features"]
        cell = [(t, a) for t, a in zip(tasks, arms)]
        n = len(labels)
        pairs = sum(1 for s in range(n) for f in range(n)
                    if labels[s] and not labels[f] and cell[s] == cell[f])
        self.assertEqual(feature["within_task_pairs"], pairs)
        sign = 1 if feature["direction"] == "+" else -1
        credit = sum(naive_credit(sign * column[s], sign * column[f]) for s in range(n)
                     for f in range(n) if labels[s] and not labels[f] and cell[s] == cell[f])
        self.assertAlmostEqual(feature["within_task_auc"], float(credit / pairs), places=12)
        self.assertEqual(result["verdict"]["passing"], [])

    def test_finding_3_successes_in_few_tasks_cannot_pass(self):
        labels, tasks, baseline, features = issue22_few_successes(15)
        text = issue19_runs_csv(labels, tasks, baseline, features)
        result = auc_audit_json({"runs.csv": text}, ["--perms", "200", "--boot", "200"])
        self.assertEqual(result["verdict"]["passing"], [])
        for feature in result["features"]:
            self.assertEqual(feature["evidence_clusters"], 3)
            self.assertIsNone(feature["delta_ci"])
            self.assertIsNone(feature["delta_joint_ci"])
            self.assertIsNone(feature["clustered"]["p"])
            self.assertFalse(feature["power"]["can_pass"])
        verdicts = {f["verdict"] for f in result["features"]}
        self.assertTrue(any("only 3 tasks hold a success" in v for v in verdicts), verdicts)

    def test_finding_5_task_column_taken_and_none_says_gate_3_not_applied(self):
        labels, tasks, _, baseline, column = issue22_task_only(3)
        text = issue19_runs_csv(labels, tasks, baseline, [column]).replace(
            "task_id", "problem_id", 1)
        result = auc_audit_json({"runs.csv": text}, ["--perms", "100", "--boot", "100"])
        self.assertEqual(result["task"], "problem_id")
        self.assertEqual(result["n_tasks"], 30)
        self.assertTrue(any("took 'problem_id' as the task" in n for n in result["notes"]))
        # An id-like column whose values repeat is offered too.
        text2 = text.replace("problem_id", "bug_id", 1)
        result = auc_audit_json({"runs.csv": text2}, ["--perms", "100", "--boot", "100"])
        self.assertEqual(result["task"], "bug_id")
        # No task column at all: never "all three".
        header, rows = strong_rows(lambda i: "x")
        rows = [row[:1] + row[2:] for row in rows]
        status, out, err = audit_folder({"runs.csv": table_text(header[:1] + header[2:], rows)},
                                        ["--perms", "200", "--boot", "200"])
        self.assertEqual(status, 0, err)
        flat = " ".join(out.split())
        self.assertIn("passes gates 1 and 2; gate 3 not applied: no task column", flat.lower())
        self.assertNotIn("Passes all three gates", flat)
        self.assertIn("gate 3 not applied", out)

    def test_finding_6_power_in_text_markdown_and_json(self):
        labels, tasks, baseline, column = issue22_pairs(0)
        text = issue19_runs_csv(labels, tasks, baseline, [column])
        result = auc_audit_json({"runs.csv": text}, ["--perms", "200", "--boot", "200"])
        power = result["features"][0]["power"]
        self.assertTrue(power["can_pass"])
        # (c + z_0.80) sd, from the report's own c and sd.
        self.assertAlmostEqual(power["detectable_diff_80"],
                               (power["critical"] + 0.8416212335729143) * power["sd"])
        self.assertIn("power", result)
        for style in ("text", "markdown"):
            status, out, err = audit_folder({"runs.csv": text}, ["--perms", "200", "--boot",
                                                                 "200", "--format", style])
            flat = " ".join(out.split())
            self.assertIn("The smallest same-row difference gate 1 detects with 80% power", flat)
            self.assertIn(f"f0 {power['detectable_diff_80']:.3f}", flat)

    def test_a_baseline_that_is_no_column_is_refused_even_beside_a_log(self):
        # --baseline turn_total (a typo for turns_total) beside tool_calls.csv was counted
        # from the log, printed as 'baseline turn_total (counted from ...)', and every
        # gate-1 difference was against tool calls.
        rows = [[f"r{t}-{k}", f"t{t}", (t + k) % 2, 1 + (t * 3 + k) % 6, (t * 7 + k) % 30]
                for t in range(12) for k in range(2)]
        calls = "run_id,tool\n" + "".join(f"{r[0]},bash\n" * r[3] for r in rows)
        files = {"runs.csv": csv_text(["run_id", "task_id", "verified", "tool_calls",
                                       "turns_total"], rows), "tool_calls.csv": calls}
        status, out, err = audit_folder(files, ["--baseline", "turn_total", "--perms", "50",
                                                "--boot", "50"])
        assert_one_error(self, status, out, err, "--baseline 'turn_total': no such column",
                         "turns_total")
        status, out, err = audit_folder(files, ["--baseline", "turns_total", "--perms", "50",
                                                "--boot", "50"])
        self.assertEqual(status, 0, err)
        self.assertIn("baseline turns_total (column 'turns_total')", " ".join(out.split()))

    def test_a_relabelled_outcome_is_left_out_as_a_copy(self):
        # copy_of caught only a column equal to the outcome (or reversed) on every row:
        # 10 x verified + 3, or the outcome with one NA, passed all three gates.
        rows = [[f"r{i}", f"t{i // 2}", (i // 2 + i) % 2, 1 + (i * 5) % 11,
                 10 * ((i // 2 + i) % 2) + 3, "NA" if i == 0 else (i // 2 + i) % 2,
                 (i * 37) % 17] for i in range(48)]
        files = {"runs.csv": csv_text(["run_id", "task_id", "verified", "tool_calls", "leak",
                                       "leakna", "noise"], rows)}
        result = auc_audit_json(files, ["--perms", "50", "--boot", "50"])
        self.assertEqual([f["name"] for f in result["features"]], ["noise"])
        reasons = {d["name"]: d["reason"] for d in result["degenerate"]}
        self.assertEqual(reasons["leak"], "a relabelling of the outcome on its 48 defined "
                         "rows (13 on every success, 3 on every failure)")
        self.assertIn("on its 47 defined rows", reasons["leakna"])
        status, out, err = audit_folder(files, ["--features", "leak"])
        assert_one_error(self, status, out, err, "--features: 'leak' cannot be tested")

    def test_delong_undefined_by_a_zero_variance_says_why(self):
        # The feature separates its rows perfectly where the baseline is constant: the
        # AUCs differ (1 against 0.5) and DeLong's variance is 0, so its p is undefined;
        # the report printed 'undefined' with no reason.
        module = load(AUC)
        self.assertIsNone(module.delong_p([1, 2, 3, 4, 5, 6], [5] * 6, [0, 0, 0, 1, 1, 1],
                                          None, range(6)))
        self.assertIsNone(module.variance_undefined([0, 0, 0, 1, 1, 1], None, range(6)))
        rows = [[f"r{i}", f"t{i // 2}", i % 2, 5 if i < 6 else 1 + i % 7,
                 i + 10 * (i % 2) if i < 6 else ""] for i in range(24)]
        status, out, err = audit_folder({"runs.csv": csv_text(
            ["run_id", "task_id", "verified", "tool_calls", "f"], rows)},
            ["--perms", "50", "--boot", "50"])
        self.assertEqual(status, 0, err)
        self.assertIn("f: DeLong p undefined: its variance is 0 while the two AUCs differ",
                      " ".join(out.split()))

    def test_task_identity_undefined_says_why(self):
        # Every task holds one run: task identity printed 'AUC undefined from the other
        # runs' success rate ...', as if it had been scored.
        rows = [[f"r{t}", f"t{t}", t % 2, 3 + t % 5, t % 3] for t in range(12)]
        status, out, err = audit_folder({"runs.csv": csv_text(
            ["run_id", "task_id", "verified", "tool_calls", "f"], rows)},
            ["--perms", "50", "--boot", "50"])
        self.assertEqual(status, 0, err)
        flat = " ".join(out.split())
        self.assertIn("task identity undefined: it scores only the runs that share their "
                      "task with another, and those hold no success and failure pair", flat)
        self.assertNotIn("AUC undefined", flat)

    def test_power_below_ten_tasks_says_why_no_tasks_figure(self):
        # The manual promises the tasks needed where nothing can pass; with 8 tasks in
        # all no resamples are drawn, and the sentence gave no figure and no reason.
        rng = random.Random(1)
        rows = [[f"r{t}-{i}", f"t{t}", (t + i) % 2, rng.randint(1, 20),
                 (t + i) % 2 * 2 + rng.random()] for t in range(8) for i in range(3)]
        runs = csv_text(["run_id", "task_id", "verified", "tool_calls", "f"], rows)
        result = auc_audit_json({"runs.csv": runs}, ["--perms", "50", "--boot", "50"])
        self.assertEqual(result["bootstrap"]["resamples"], 0)
        self.assertIsNone(result["features"][0]["power"]["tasks_for_observed_80"])
        status, out, err = audit_folder({"runs.csv": runs}, ["--perms", "50", "--boot", "50"])
        self.assertIn("With 8 tasks in all no resamples are drawn, so there is no spread to "
                      "give the tasks needed from: nothing can pass before 10 tasks hold a "
                      "success and 10 a failure.", " ".join(out.split()))

    def test_finding_8_lone_tasks_shuffle_within_cells(self):
        labels, tasks, baseline, features = issue22_lone(0)
        text = issue19_runs_csv(labels, tasks, baseline, features)
        result = auc_audit_json({"runs.csv": text}, ["--perms", "200", "--boot", "100"])
        null = result["family_null"]
        self.assertEqual(null["permute"], "tasks")
        self.assertEqual(null["tasks_never_moved"], 12)
        self.assertIn("within task x stratum cells", null["permute_reason"])
        # A column constant in every cell never changes under such shuffles: p = 1.
        f0 = result["features"][0]
        self.assertEqual((f0["permutation_p"], f0["adjusted_p"]), (1.0, 1.0))
        explicit = auc_audit_json({"runs.csv": text}, ["--permute", "tasks", "--perms", "200",
                                                       "--boot", "100"])
        self.assertEqual(explicit["features"][0]["adjusted_p"], 1.0)

    def test_finding_9_no_flag_i_where_the_within_test_rejects(self):
        labels, tasks, baseline, column = issue22_pairs(0)
        text = issue19_runs_csv(labels, tasks, baseline, [column])
        result = auc_audit_json({"runs.csv": text}, ["--perms", "200", "--boot", "200"])
        (feature,) = result["features"]
        self.assertLessEqual(feature["auc"], feature["task_ceiling_same_rows"])
        self.assertLess(feature["within_task_p"], 0.05)
        self.assertNotIn("below_task_identity", feature["flags"])
        status, out, err = audit_folder({"runs.csv": text}, ["--perms", "200", "--boot", "200"])
        flat = " ".join(out.split())
        self.assertNotIn("may measure task difficulty", flat)
        self.assertNotIn("Task identity alone scores", flat)

    def test_finding_10_minp_floor_is_printed(self):
        module = load(AUC)
        # Independent features: the floor is about K / (N + 1).
        rng = random.Random(22)
        null = [[rng.random() for _ in range(16)] for _ in range(200)]
        floor = module.minp_floor([0.5] * 16, null)
        self.assertGreater(floor, 12 / 201)
        self.assertLessEqual(floor, 16 / 201)
        # Brute force on a small case: the adjusted p of a feature made to beat every
        # shuffle, the others as observed.
        observed, small = [0.55, 0.6, 0.52], [[0.7, 0.1, 0.2], [0.1, 0.2, 0.9], [0.3, 0.5, 0.4]]
        best = min(load(AUC).stepdown_minp([2.0 if k == j else v for k, v in enumerate(observed)],
                                           small)[1][j] for j in range(3))
        self.assertEqual(module.minp_floor(observed, small), best)
        rng = random.Random(5)
        labels, tasks, baseline, features = task_clustered_sample(5, 30, 4, 16, 0.0,
                                                                  lambda j: 0.0)
        text = issue19_runs_csv(labels, tasks, baseline, features)
        status, out, err = audit_folder({"runs.csv": text}, ["--perms", "200", "--boot", "50"])
        flat = " ".join(out.split())
        self.assertIn("minP floor: with --perms 200 and 16 features", flat)
        self.assertIn("gate 2 cannot pass here; run --perms 2000 or more", flat)

    def test_a_floor_just_below_005_is_not_printed_as_005(self):
        # The floor is an adjusted p: it printed with fmt, so 10/201 (0.04975) read
        # '0.050' beside no 'cannot pass' clause (an outside review found it).
        module = load(AUC)
        def note(floor):
            return module.shuffle_notes({
                "features": [{}], "n_tasks": 20, "family_null": {
                    "perms": 200, "smallest_adjusted_p": floor, "family_size": 10,
                    "tasks_never_moved": None}})[0]
        below, at = note(10 / 201), note(11 / 201)
        self.assertIn("could reach is 0.0498 (", below)
        self.assertNotIn("cannot pass", below)
        self.assertIn("could reach is 0.055 (", at)
        self.assertIn("gate 2 cannot pass here", at)
        self.assertIn("could reach is <0.001 (", note(1 / 20001))

    def test_one_feature_with_an_interval_still_needs_its_joint_band_above_0(self):
        # Gate 1 skipped the joint band when only one feature had an interval, though
        # the band (diff +- c sd) is not the percentile interval gate 3 reads: on skewed
        # resamples it can reach 0 while the percentile interval does not.
        module = load(AUC)
        drawn = sorted([0.05 + 0.1 * i / 89 for i in range(90)] + [0.6] * 10)
        critical, (band,) = module.joint_interval([0.1], [drawn])
        mean = sum(drawn) / 100
        sd = math.sqrt(sum((d - mean) ** 2 for d in drawn) / 99)
        scaled = sorted(abs(d - 0.1) / sd for d in drawn)
        c = scaled[94] + 0.05 * (scaled[95] - scaled[94])     # linear, at 0.95 * 99 = 94.05
        self.assertAlmostEqual(critical, c, places=12)
        self.assertAlmostEqual(band[0], 0.1 - c * sd, places=12)
        self.assertLess(band[0], 0)
        low = drawn[2] + 0.475 * (drawn[3] - drawn[2])       # 2.5th percentile, at 2.475
        self.assertGreater(low, 0)
        feature = {"delta_same_rows": 0.1, "delta_ci": [low, drawn[97]],
                   "delta_joint_ci": band, "adjusted_p": 0.01,
                   "task_ceiling_same_rows": 0.7, "evidence_clusters": 12,
                   "clusters_holding": {"success": 12, "failure": 15}, "within_task_pairs": 30,
                   "within_task_p": 0.01, "within_task_auc": 0.7,
                   "within_task_test": {"smallest_p": 0.0005}}
        self.assertEqual(module.gate_verdict(feature, 20, 1),
                         "fails gate 1: its joint interval over the 1 feature with an "
                         "interval reaches 0, so it is not better than the baseline "
                         "family-wise")

    def test_verdict_column_names_the_failed_gate(self):
        status, out, err = run(AUC, [EXAMPLE_RUNS, "--strata", "condition", "--perms", "100",
                                     "--boot", "100"])
        table = out[out.index("joint 95% CI"):].split("\n\n")[0].splitlines()[2:]
        words = {line.split("  ")[-1].strip() for line in table}
        self.assertTrue(words <= {"passes", "fails gate 1", "fails gate 2", "fails gate 3"},
                        words)
        self.assertIn("fails gate 1", words)


# === regrade.py (in the order of its manual) ===
# --- regrade.py: instances, runs, settings and the shipped example ---
class TestRegradePure(unittest.TestCase):
    def test_diff_normalisation_and_paths(self):
        regrade = load("regrade.py")
        diff = ("Sure! Here is the patch:\r\ndiff --git a/x.py b/x.py\r\n--- a/x.py\r\n"
                "+++ b/x.py\r\n@@ -1 +1 @@\r\n-a\r\n+b")
        self.assertEqual(regrade.normalise_diff(diff),
                         "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n")
        quoted = 'diff --git "a/t\\303\\251st.py" "b/t\\303\\251st.py"\n'
        self.assertEqual(regrade.diff_paths(quoted), ["t\u00e9st.py"])

    def test_shard_partition_of_many_ids(self):
        regrade = load("regrade.py")
        ids = [f"inst-{i}@model#{i % 3}" for i in range(500)]
        for n in (1, 2, 7):
            owners = [[k for k in range(1, n + 1) if regrade.in_shard(i, (k, n))] for i in ids]
            self.assertTrue(all(len(o) == 1 for o in owners))

    def test_verdict_rules(self):
        regrade = load("regrade.py")
        # As in SWE-bench: an xfailed PASS_TO_PASS test passes, an xpassed test does not.
        decided = regrade.decide(["f"], ["p"], {"f": ["xpassed"], "p": ["xfailed"]})
        self.assertEqual((decided["completed"], decided["fail_to_pass"]["failed"],
                          decided["pass_to_pass"]["passed"]), (False, ["f"], ["p"]))
        decided = regrade.decide(["f1", "f2"], [], {"f1": ["passed"], "f2": ["error"]})
        self.assertEqual(decided["resolution"], "PARTIAL")
        decided = regrade.decide(["f"], ["p"], {"f": ["passed"], "p": ["failed"]})
        self.assertEqual(decided["resolution"], "NO")

    def test_settle_derives_completed_and_resolution_from_the_status(self):
        regrade = load("regrade.py")
        partial = {"FAIL_TO_PASS": {"success": ["a"], "failure": ["b"]},
                   "PASS_TO_PASS": {"success": ["c"], "failure": []}}
        expected = {"resolved": (True, "FULL"), "unresolved": (False, "NO"),
                    "patch_failed": (False, "NO"), "timeout": (False, "NO"),
                    "test_patch_failed": (None, "NO"), "wrong_code_under_test": (None, "NO"),
                    "error": (None, "NO")}
        self.assertEqual(set(expected), set(regrade.STATUSES))
        for status, pair in expected.items():
            # Inconsistent fields on the way in are overwritten, never kept.
            verdict = regrade.settle({"status": status, "tests_status": partial,
                                      "completed": "stale", "resolution": "stale"})
            self.assertEqual((verdict["completed"], verdict["resolution"]), pair, status)
        # Only when the tests decided an unresolved run does SWE-bench's PARTIAL apply.
        verdict = regrade.settle({"status": "unresolved", "tests_status": partial}, by_tests=True)
        self.assertEqual((verdict["completed"], verdict["resolution"]), (False, "PARTIAL"))
        # A fresh verdict is a consistent error until graded.
        run = {"run_id": "r", "instance_id": "i", "base_commit": "c", "diff": "", "key": "k"}
        instance = {"repo": "o/n", "test_patch": ""}
        fresh = regrade.empty_verdict(regrade.normalised_run(run, instance), instance,
                                      {"grader_version": "v"})
        self.assertEqual((fresh["status"], fresh["completed"], fresh["resolution"]),
                         ("error", None, "NO"))

    def test_one_flaky_rule_for_grading_and_making(self):
        regrade = load("regrade.py")
        # Written out by hand: the group each outcome belongs to. A test that did not run
        # (None; for making, absent from the run) is failing: grading called failed-then-
        # not-run flaky, where making (and the dataset audit) called it failing.
        group = {"passed": "P", "failed": "F", "error": "F", "xpassed": "F", "skipped": "S",
                 "xfailed": "S", None: "F"}
        for first, second in itertools.product(group, repeat=2):
            flaky = group[first] != group[second]
            decided = regrade.decide(["t"], [], {"t": [first, second]})
            self.assertEqual(decided["flaky"] == ["t"], flaky, (first, second))
            # The same two outcomes, before the fix and after it, are flaky for making too.
            for before, after in (([first, second], ["passed"] * 2),
                                  (["failed"] * 2, [first, second])):
                lists = regrade.derive_lists(
                    [dict({"u": "passed"}, **({"t": o} if o else {})) for o in before],
                    [dict({"u": "passed"}, **({"t": o} if o else {})) for o in after])
                self.assertEqual(lists["flaky"] == ["t"], flaky, (before, after))

    def test_a_timeout_is_a_failure_in_every_verdict_file(self):
        # swebench_summary.json listed timeouts in error_ids (unchecked to an audit) while
        # verdicts.csv, by settle, made them failures: one grading gave r 0.500 through
        # one file and 0.667 through the other.
        regrade = load("regrade.py")
        verdicts = [regrade.settle({"run_id": f"i{i}", "instance_id": f"o__r-{i}",
                                    "status": status, "diff_empty": False})
                    for i, status in enumerate(["resolved"] * 6 + ["unresolved"] * 3
                                               + ["timeout"] * 3)]
        summary = regrade.swebench_summary(verdicts, [v["instance_id"] for v in verdicts])
        self.assertEqual((summary["error_ids"], len(summary["unresolved_ids"])), ([], 6))
        with TempDir() as folder:
            write(folder, "verdicts.csv", regrade.verdicts_csv(verdicts))
            write(folder, "swebench_summary.json", json.dumps(summary))
            runs = write(folder, "runs.csv", "run_id,instance_id,claimed\n" + "".join(
                f"i{i},o__r-{i},yes\n" for i in range(12)))
            rates = [audit_json([runs, "--verdicts", os.path.join(folder, name), "--boot", "0"])
                     for name in ("verdicts.csv", "swebench_summary.json")]
        self.assertEqual([r["counts"]["tp"] + r["counts"]["fp"] for r in rates], [12, 12])
        self.assertEqual([r["counts"]["tp"] for r in rates], [6, 6])

    def test_credential_looking_variables_never_reach_the_code_under_test(self):
        # Names the word list missed (a KEY ending, PASS, JWT) and a URL with a bare token
        # as its user part passed through to the test command.
        regrade = load("regrade.py")
        leaked = {"OPENROUTER_KEY": "sk-or-1", "MISTRAL_APIKEY": "x", "STRIPE_KEY": "sk_live",
                  "KEYRING_PASS": "k", "DEPLOY_PASSPHRASE": "p", "JWT": "j",
                  "REPO_URL": "https://ghp_abc@github.com/o/r"}
        kept = {"LANG": "C.UTF-8", "PLAIN_URL": "https://pypi.example/simple"}
        with TempDir() as folder, unittest.mock.patch.dict(os.environ, {**leaked, **kept}):
            env = regrade.scrubbed_environment(folder, [folder], sys.executable, {}, ())
        self.assertEqual(sorted(set(leaked) & set(env)), [])
        self.assertEqual({k: env.get(k) for k in kept}, kept)

    def test_made_run_ids_pass_over_the_ids_runs_already_hold(self):
        # A prediction holding run_id 'x@m' and one without an id for x and m both came
        # out 'x@m', and the job exited 2 blaming the run that named none; so did a model
        # named 'm#2' beside two runs of model m.
        regrade = load("regrade.py")
        runs = [{"run_id": "x@m", "instance_id": "x", "model": "m"},
                {"run_id": None, "instance_id": "x", "model": "m"},
                {"run_id": None, "instance_id": "x", "model": "m"},
                {"run_id": None, "instance_id": "x", "model": "m#2"}]
        ids = [r["run_id"] for r in regrade.default_run_ids([dict(r) for r in runs])]
        self.assertEqual(len(set(ids)), 4, ids)
        self.assertEqual(ids[0], "x@m")
        # Where nothing collides the ids are what they always were.
        plain = [dict(r, run_id=None) for r in runs[1:3]]
        self.assertEqual([r["run_id"] for r in regrade.default_run_ids(plain)],
                         ["x@m", "x@m#2"])

    def test_only_settle_sets_completed_and_resolution(self):
        with open(os.path.join(HERE, "regrade.py"), encoding="utf-8") as handle:
            self.assertEqual(verdict_field_setters(handle.read()), [])

    def test_one_reader_for_jsonl_files(self):
        # JSONL inputs go through the block's read_jsonl_records, the record files in --out
        # through RecordFile (record_lines); the recorder's signed lines have their own MAC.
        with open(os.path.join(HERE, "regrade.py"), encoding="utf-8") as handle:
            self.assertEqual(jsonl_line_readers(handle.read()), ["record_lines", "signed_records"])

    def test_the_setter_scan_finds_each_way_of_setting(self):
        source = textwrap.dedent("""
            def a(v):
                v["completed"] = None
            def b(v):
                v.update(status="error", resolution="NO")
            def c(v):
                v["status"], v["resolution"] = "x", "NO"
            def d(v):
                return dict(v, completed=True)
            def e():
                return {"status": "error", "completed": False}
            def fresh():
                return settle({"status": "error", "completed": None, "resolution": None})
            def f(v, counts):
                counts[v["resolution"]] += 1
            def settle(v):
                v["completed"] = v["resolution"] = None
            def decided():
                return {"completed": True, "resolution": "FULL"}
        """)
        self.assertEqual(verdict_field_setters(source), ["a", "b", "c", "d", "e"])


def jsonl_line_readers(source):
    """The functions of regrade.py's own code (outside the shared block) that parse JSON line
    by line: a loop over lines that calls json.loads."""
    lines = source.split("\n")
    block = [number for number, line in enumerate(lines, 1) if line.startswith("# === ")][:2]
    found = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, ast.FunctionDef) or block[0] <= function.lineno < block[1]:
            continue
        for loop in ast.walk(function):
            names = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)} \
                if isinstance(loop, ast.For) else ()
            if any("line" in name for name in names) and any(
                    isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and
                    n.func.attr == "loads" for n in ast.walk(loop)):
                found.append(function.name)
                break
    return sorted(found)


def verdict_field_setters(source):
    """The functions of a source, other than settle, that set a verdict's completed or resolution:
    by item assignment, an update(...) or dict(...) keyword, or a verdict literal (one with a
    status) not handed straight to settle; a dict of decide's own (no status) is not a verdict."""
    fields = {"completed", "resolution"}
    found = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or \
                function.name == "settle":
            continue
        # A literal handed straight to settle only holds the fields' places (key order).
        settled = {id(call.args[0]) for call in ast.walk(function)
                   if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and
                   call.func.id == "settle" and call.args}
        for node in ast.walk(function):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            keys = set()
            while targets:              # v["k"] = ..., a, v["k"] = ...; not counts[v["k"]] += 1
                target = targets.pop()
                if isinstance(target, (ast.Tuple, ast.List)):
                    targets.extend(target.elts)
                elif isinstance(target, ast.Subscript):
                    index = target.slice.value if isinstance(target.slice, ast.Index) \
                        else target.slice
                    if isinstance(index, ast.Constant):
                        keys.add(index.value)
            if isinstance(node, ast.Call) and (
                    isinstance(node.func, ast.Attribute) and node.func.attr == "update" or
                    isinstance(node.func, ast.Name) and node.func.id == "dict"):
                keys |= {k.arg for k in node.keywords}
            if isinstance(node, ast.Dict) and id(node) not in settled:
                literal = {k.value for k in node.keys if isinstance(k, ast.Constant)}
                keys |= literal if "status" in literal else set()
            if keys & fields:
                found.append(function.name)
                break
    return found


class TestRegradeExample(unittest.TestCase):
    def test_make_repo_rebuilds_the_committed_example(self):
        example = os.path.join(HERE, "examples", "regrade")
        with TempDir() as folder:
            shutil.copy(os.path.join(example, "make_repo.py"), folder)
            subprocess.run([sys.executable, os.path.join(folder, "make_repo.py")], check=True,
                           capture_output=True, timeout=120)
            for name in ("instances.jsonl", "predictions.jsonl"):
                with open(os.path.join(folder, name), "rb") as made, \
                        open(os.path.join(example, name), "rb") as committed:
                    self.assertEqual(made.read(), committed.read(), name)
            # Pack bytes may differ between git versions; the commits may not.
            heads = [subprocess.run(["git", "bundle", "list-heads", path], capture_output=True,
                                    text=True, check=True).stdout
                     for path in (os.path.join(folder, "calc.bundle"),
                                  os.path.join(example, "calc.bundle"))]
            self.assertEqual(heads[0], heads[1])
            self.assertTrue(heads[0].strip())


def regrade_jsonl(folder, name, records):
    return write(folder, name, "".join(json.dumps(r) + "\n" for r in records))


class TestRegradeRefusesWhatItCannotGrade(unittest.TestCase):
    EXAMPLE = os.path.join(HERE, "examples", "regrade")

    def test_a_json_object_as_fail_to_pass_is_an_error_not_a_traceback(self):
        with open(os.path.join(self.EXAMPLE, "instances.jsonl"), encoding="utf-8") as handle:
            instance = json.loads(handle.readline())
        for field in ("FAIL_TO_PASS", "PASS_TO_PASS"):
            with self.subTest(field), TempDir() as folder:
                bad = dict(instance, **{field: {"tests/test_calc.py::test_add": "PASSED"}})
                instances = regrade_jsonl(folder, "instances.jsonl", [bad])
                status, out, err = run("regrade.py", [
                    instances, os.path.join(self.EXAMPLE, "predictions.jsonl"),
                    "--repo", os.path.join(self.EXAMPLE, "calc.bundle")])
                assert_one_error(self, status, out, err, field, "got a JSON object")

    def test_no_run_graded_exits_non_zero_and_says_so_last(self):
        with TempDir() as folder:
            runs = regrade_jsonl(folder, "predictions.jsonl", [
                {"instance_id": "not-an-instance", "model_name_or_path": "m",
                 "model_patch": "diff --git a/x b/x\n"}])
            for style in ("text", "markdown", "json"):
                with self.subTest(style):
                    status, out, err = run("regrade.py", [
                        os.path.join(self.EXAMPLE, "instances.jsonl"), runs, "--repo",
                        os.path.join(self.EXAMPLE, "calc.bundle"), "--format", style])
                    self.assertEqual(status, 1, err)
                    self.assertTrue(out.strip())          # the summary is still printed
                    self.assertTrue(err.strip().splitlines()[-1].startswith(
                        "error: no run could be graded: the 1 run is a grading error (error "
                        "1)"), err)


# Throwaway repositories for regrade.py: tiny, built with a fixed identity and
# date, graded with the interpreter running the tests. Each CLI call grades
# many runs at once and the tests read the verdicts from --format json.
REGRADE_IDENTITY = {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.org",
                    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.org",
                    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+0000",
                    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+0000",
                    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def regrade_git(args, cwd):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(REGRADE_IDENTITY)
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout


def regrade_write_files(root, files):
    for name, text in files.items():
        if text is None:
            os.remove(os.path.join(root, name))
        else:
            write(root, name, text)


def regrade_repo(folder, files):
    """A git repository with one commit holding `files`; return (path, commit)."""
    repo = os.path.join(folder, "origin")
    os.makedirs(repo)
    regrade_git(["init", "-q", "-b", "main"], repo)
    regrade_write_files(repo, files)
    regrade_git(["add", "-A"], repo)
    regrade_git(["commit", "-q", "-m", "base"], repo)
    return repo, regrade_git(["rev-parse", "HEAD"], repo).strip()


def regrade_diff(work, files):
    """The diff a run that left `files` so would archive (made in a scratch clone)."""
    regrade_write_files(work, files)
    regrade_git(["add", "-A"], work)
    diff = regrade_git(["diff", "--cached", "HEAD"], work)
    regrade_git(["reset", "-q", "--hard", "HEAD"], work)
    regrade_git(["clean", "-q", "-fdx"], work)
    return diff


def regrade_json(argv):
    """Run regrade.py with --format json; return (status, parsed output or None, stderr)."""
    status, out, err = run("regrade.py", list(argv) + ["--format", "json"])
    return status, (json.loads(out) if status in (0, 1) else None), err


def graded_status(report):
    """The exit status regrade.py owes a report: 1 when no run could be graded."""
    summary = (report or {}).get("summary") or {}
    return 1 if summary.get("runs") and summary["grading_errors"] == summary["runs"] else 0


def regrade_by_run(report):
    return {v["run_id"]: v for v in report["runs"]}


class RegradeRepoCase(unittest.TestCase):
    """A test class with one throwaway repository of its own, built once: make_repo
    commits the files and returns a scratch clone to make the runs' diffs in."""

    @classmethod
    def make_repo(cls, files):
        cls.temp = TempDir()
        cls.folder = cls.temp.__enter__()
        cls.repo, cls.base = regrade_repo(cls.folder, files)
        work = os.path.join(cls.folder, "work")
        regrade_git(["clone", "-q", cls.repo, work], cls.folder)
        return work

    @classmethod
    def tearDownClass(cls):
        cls.temp.__exit__(None, None, None)


class TestRelativePathNamesNoUser(unittest.TestCase):
    """The block's relative_path on the two climbs an outside review found printed."""

    def test_a_climb_hidden_in_a_relative_path_and_another_homes_folder(self):
        relative = load("delivery_audit.py").relative_path
        saved_home, saved_cwd = os.environ.get("HOME"), os.getcwd()
        with TempDir() as folder:
            home = os.path.join(folder, "alice")
            os.makedirs(os.path.join(home, "proj"))
            try:
                os.environ["HOME"] = home
                os.chdir(os.path.join(home, "proj"))
                # Relative, and not starting with '..', but it climbs into bob's folder.
                self.assertEqual(relative("sub/../../../bob/runs.csv"), "runs.csv")
                self.assertEqual(relative("sub/../data/runs.csv"), "sub/../data/runs.csv")
                # HOME=/root: /home/bob is still another user's home.
                os.environ["HOME"] = "/root"
                os.chdir(folder)
                self.assertEqual(relative("/home/bob/runs.csv"), "runs.csv")
            finally:
                os.chdir(saved_cwd)
                if saved_home is None:
                    os.environ.pop("HOME", None)
                else:
                    os.environ["HOME"] = saved_home


class TestRegradeResetPaths(unittest.TestCase):
    """Step 3's reset of the test tree, on links a run's diff can add."""

    def test_a_link_in_the_test_tree_is_reset_never_followed(self):
        # reset_paths checked where a path's link pointed, so a run's conftest.py ->
        # /elsewhere (or tests/test_x.py -> /dev/null) stayed through the reset.
        if shutil.which("git") is None:
            self.skipTest("git is not installed")
        regrade = load("regrade.py")
        with TempDir() as folder:
            repo, _ = regrade_repo(folder, CORE_BASE)
            outside = write(folder, "elsewhere/conftest.py", "import os  # not the project's\n")
            conftest = os.path.join(repo, "tests", "conftest.py")
            os.remove(conftest)
            os.symlink(outside, conftest)
            os.symlink(os.devnull, os.path.join(repo, "tests", "test_new.py"))
            # A folder that is a link out of the tree is still never written through.
            os.symlink(os.path.dirname(outside), os.path.join(repo, "linked"))
            regrade.reset_paths(repo, ["tests/conftest.py", "tests/test_new.py",
                                       "linked/conftest.py"])
            self.assertFalse(os.path.islink(conftest))
            with open(conftest, encoding="utf-8") as handle:
                self.assertEqual(handle.read(), CORE_BASE["tests/conftest.py"])
            self.assertFalse(os.path.lexists(os.path.join(repo, "tests", "test_new.py")))
            with open(outside, encoding="utf-8") as handle:
                self.assertEqual(handle.read(), "import os  # not the project's\n")


# Issue 8, sections 1, 1b, 3, 4 and 5: a verdict that cannot be trusted says so
# (a grading error with its reason), the whole test tree is reset, only the listed
# tests run, and each verdict records the environment that decided it.
CORE_BASE = {
    "calc/__init__.py": "from calc.ops import add\n",
    "calc/ops.py": "def add(a, b):\n    return a - b\n",
    "tests/__init__.py": "",
    "tests/conftest.py": "import calc  # the project's own conftest imports the package\n",
    "tests/test_ops.py": (
        "import unittest\n\nfrom calc import add\n\n\n"
        "class TestOps(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n\n"
        "    def test_zero(self):\n        self.assertEqual(add(0, 0), 0)\n\n"
        "    def test_unlisted_broken(self):\n        self.assertEqual(1, 2)\n\n"
        "    def test_unlisted_exits(self):\n        import os\n        os._exit(3)\n"),
    "checks/test_more.py": "from calc import add\n\n\ndef test_more():\n    assert add(2, 2) == 4\n",
}
CORE_FIX = {"calc/ops.py": "def add(a, b):\n    return a + b\n"}
CORE_RUNS = {
    "fix": CORE_FIX,
    "empty": {},
    "skips-on-import": dict(CORE_FIX, **{"calc/__init__.py": (
        "import pytest\npytest.skip('needs another platform', allow_module_level=True)\n")}),
    "unittest-skip-on-import": dict(CORE_FIX, **{"calc/__init__.py": (
        "import unittest\nraise unittest.SkipTest('needs another platform')\n")}),
    "syntax-error": {"calc/ops.py": "def add(a, b):\n    return a + b +\n"},
}
CORE_IDS = {
    "pytest": (["tests/test_ops.py::TestOps::test_add"], ["tests/test_ops.py::TestOps::test_zero"]),
    "unittest": (["tests.test_ops.TestOps.test_add"], ["tests.test_ops.TestOps.test_zero"]),
    "checks": (["checks/test_more.py::test_more"], []),
}


class RegradeCoreFixture(RegradeRepoCase):
    """The calc repository and its runs' diffs, built once for a class."""

    @classmethod
    def setUpClass(cls):
        work = cls.make_repo(CORE_BASE)
        cls.diffs = {name: regrade_diff(work, files) for name, files in CORE_RUNS.items()}

    def instance(self, instance_id, ids, **extra):
        f2p, p2p = CORE_IDS[ids] if isinstance(ids, str) else ids
        record = {"instance_id": instance_id, "repo": "acme/calc", "base_commit": self.base,
                  "patch": self.diffs["fix"], "test_patch": "", "FAIL_TO_PASS": json.dumps(f2p),
                  "PASS_TO_PASS": json.dumps(p2p)}
        record.update(extra)
        return record

    def grade(self, instances, runs, extra_argv=()):
        """Grade runs [(run_id, instance_id, diff name)] or a built-in set; verdicts by run id."""
        with TempDir() as folder:
            regrade_jsonl(folder, "instances.jsonl", instances)
            if isinstance(runs, str):
                predictions = runs
            else:
                predictions = regrade_jsonl(folder, "predictions.jsonl", [
                    {"run_id": run_id, "instance_id": instance_id, "model_patch":
                     self.diffs[name]} for run_id, instance_id, name in runs])
            status, report, err = regrade_json([os.path.join(folder, "instances.jsonl"),
                                                predictions, "--repo", self.repo, *extra_argv])
        self.assertEqual(status, graded_status(report), err)
        self.report = report
        return regrade_by_run(report)


class TestRegradeMalformedInput(RegradeCoreFixture):
    def run_cli(self, folder, instances, predictions, swap=False):
        regrade_jsonl(folder, "i.jsonl", instances)
        regrade_jsonl(folder, "p.jsonl", predictions)
        files = [os.path.join(folder, "i.jsonl"), os.path.join(folder, "p.jsonl")]
        return run("regrade.py", (files[::-1] if swap else files) + ["--repo", self.repo,
                                                                      "--format", "json"])

    def assert_one_error_line(self, result, expected):
        status, out, err = result
        self.assertEqual((status, out), (2, ""), err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertTrue(err.startswith("error: "), err)
        self.assertIn(expected, err)

    def test_a_file_with_no_usable_row_exits_2_with_one_line(self):
        good = self.instance("good", "unittest")
        pred = {"instance_id": "good", "model_patch": self.diffs["fix"]}
        with TempDir() as folder:
            for field, value, expected in (
                    ("test_patch", ["a list"], "field 'test_patch': expected text, got list"),
                    ("test_patch", 7.5, "field 'test_patch': expected text, got float"),
                    ("FAIL_TO_PASS", [1, 2], "field 'FAIL_TO_PASS'"),
                    ("test_env", [1], "field 'test_env': expected a JSON object"),
                    ("base_commit", {"sha": "x"}, "field 'base_commit': expected text")):
                self.assert_one_error_line(
                    self.run_cli(folder, [dict(good, **{field: value})], [pred]), expected)
            self.assert_one_error_line(self.run_cli(folder, [good], [pred], swap=True),
                                       "looks like a predictions file")
            self.assert_one_error_line(self.run_cli(folder, [good], [good]),
                                       "looks like an instances file")

    def test_one_bad_row_is_that_runs_error_and_the_rest_are_graded(self):
        good = self.instance("good", "unittest")
        bad_patch = self.instance("bad-patch", "unittest", test_patch=["diff --git a/x b/x"])
        bad_list = self.instance("bad-list", "unittest", FAIL_TO_PASS=[1, "x"])
        fix = self.diffs["fix"]
        predictions = [
            {"run_id": "good", "instance_id": "good", "model_patch": fix},
            {"run_id": "bad-patch", "instance_id": "bad-patch", "model_patch": fix},
            {"run_id": "bad-list", "instance_id": "bad-list", "model_patch": fix},
            {"run_id": "null-patch", "instance_id": "good", "model_patch": None},
            {"run_id": "list-patch", "instance_id": "good", "model_patch": [fix]},
            {"run_id": "binary", "instance_id": "good", "model_patch": fix + "\x00\x01\x02"},
            # JSON's escapes spell text no UTF-8 file holds: hashing it raised
            # UnicodeEncodeError and the whole job died with a traceback.
            {"run_id": "surrogate", "instance_id": "good", "model_patch": fix + "+\ud800\n"},
            {"run_id": "id-\udc80", "instance_id": "good", "model_patch": fix},
            {"run_id": "huge", "instance_id": "good",
             "model_patch": fix + "+" + "x" * (65 * 2 ** 20) + "\n"}]
        with TempDir() as folder:
            status, out, err = self.run_cli(folder, [good, bad_patch, bad_list], predictions)
        self.assertEqual(status, 0, err)
        verdicts = regrade_by_run(json.loads(out))
        self.assertEqual(verdicts["good"]["status"], "resolved")
        self.assertEqual((verdicts["null-patch"]["status"], verdicts["null-patch"]["patch_is_none"]),
                         ("unresolved", True))
        for name, expected in (("bad-patch", "field 'test_patch'"),
                               ("bad-list", "field 'FAIL_TO_PASS'"),
                               ("list-patch", "field 'model_patch': expected a diff as text"),
                               ("binary", "NUL byte"), ("huge", "MiB limit"),
                               ("surrogate", "the diff is not UTF-8: a lone surrogate"),
                               ("'id-\\udc80'", "field 'run_id': not UTF-8 text: a lone "
                                                 "surrogate (\\udc80) at offset 3")):
            self.assertEqual((verdicts[name]["status"], verdicts[name]["completed"]),
                             ("error", None), name)
            self.assertIn(expected, verdicts[name]["reason"])

    def test_a_runs_folder_diff_that_is_not_utf8_is_that_runs_error(self):
        with TempDir() as folder:
            regrade_jsonl(folder, "i.jsonl", [self.instance("good", "unittest")])
            for name, data in (("ok", self.diffs["fix"].encode()), ("latin", b"\xff\xfe junk\n")):
                write(folder, f"runs/{name}/run.json", json.dumps({"instance_id": "good"}))
                with open(os.path.join(folder, "runs", name, "run.diff"), "wb") as handle:
                    handle.write(data)
            status, report, err = regrade_json([os.path.join(folder, "i.jsonl"),
                                                os.path.join(folder, "runs"), "--repo", self.repo])
        self.assertEqual(status, 0, err)
        verdicts = regrade_by_run(report)
        self.assertEqual(verdicts["ok"]["status"], "resolved")
        self.assertEqual(verdicts["latin"]["status"], "error")
        self.assertIn("not UTF-8", verdicts["latin"]["reason"])


def settings_keys_read(path):
    """{key: first line} of every key regrade.py reads or writes in its settings record:
    settings[...], settings.get(...), job["settings"][...] and the like, dict(settings,
    key=...), and the names a comprehension takes from a tuple (written or named)."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    constants = {node.targets[0].id: node.value for node in tree.body
                 if isinstance(node, ast.Assign) and len(node.targets) == 1
                 and isinstance(node.targets[0], ast.Name)}

    def is_record(node):
        return (isinstance(node, ast.Name) and node.id == "settings") or (
            isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
            and node.slice.value == "settings")

    def names_from(node):
        node = constants.get(node.id, node) if isinstance(node, ast.Name) else node
        if isinstance(node, (ast.Tuple, ast.List)):
            return [e.value for e in node.elts if isinstance(e, ast.Constant)]
        raise AssertionError(f"regrade.py line {node.lineno}: a loop over settings keys "
                             f"this test cannot resolve")

    def uses(node):
        """(key node, line) of each use of the record in a node."""
        for sub in ast.walk(node):
            if isinstance(sub, ast.Subscript) and is_record(sub.value):
                yield sub.slice, sub.lineno
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) \
                    and is_record(sub.func.value) and sub.func.attr in ("get", "setdefault"):
                yield sub.args[0], sub.lineno
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) \
                    and sub.func.id == "dict" and sub.args and is_record(sub.args[0]):
                for word in sub.keywords:
                    yield ast.Constant(word.arg), sub.lineno

    found, loop_names = {}, set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            loops = {g.target.id: g.iter for g in node.generators
                     if isinstance(g.target, ast.Name)}
            loop_names.update(loops)
            for key, line in uses(node):
                if isinstance(key, ast.Name) and key.id in loops:
                    for name in names_from(loops[key.id]):
                        found.setdefault(name, line)
    for key, line in uses(tree):
        if isinstance(key, ast.Constant):
            found.setdefault(key.value, line)
        elif not (isinstance(key, ast.Name) and key.id in loop_names):
            raise AssertionError(f"regrade.py line {line}: a settings key this test cannot "
                                 f"resolve")
    return found


class TestDeclaredSettings(unittest.TestCase):
    """regrade.py's settings record is declared in one place, SETTINGS, with each key's
    meaning and its value until set; new_settings() makes exactly those keys and the code
    uses no other (an ast walk of the file, not a grep)."""

    def setUp(self):
        self.r = load("regrade.py")

    def test_every_key_the_code_uses_is_declared(self):
        used = settings_keys_read(os.path.join(HERE, "regrade.py"))
        self.assertGreater(len(used), 15)       # the walk does find them
        undeclared = sorted(set(used) - set(self.r.SETTINGS))
        self.assertEqual(undeclared, [], [f"{k} (line {used[k]})" for k in undeclared])
        self.assertEqual(sorted(set(self.r.SETTINGS) - set(used)), [])   # none declared idly
        self.assertLessEqual(set(self.r.KEY_OPTIONS), set(self.r.SETTINGS))

    def test_new_settings_makes_every_declared_key_from_the_options(self):
        args = self.r.build_parser().parse_args(
            ["i.jsonl", "p.jsonl", "--repo", "r", "--timeout", "7", "--env", "A=1",
             "--keep-env", "HOME", "--test-files", "t/*.py", "--select", "files"])
        settings = self.r.new_settings(args, repeat=2)
        self.assertEqual(list(settings), list(self.r.SETTINGS))
        self.assertEqual({k: settings[k] for k in ("timeout", "env", "keep_env", "repeat",
                                                   "test_patterns", "select", "runner")},
                         {"timeout": 7.0, "env": {"A": "1"}, "keep_env": {"HOME"}, "repeat": 2,
                          "test_patterns": ("t/*.py",), "select": "files", "runner": "auto"})
        self.assertTrue(settings["grader_version"].startswith(self.r.__version__ + "+"))
        for name, (value, meaning) in self.r.SETTINGS.items():
            self.assertTrue(meaning, name)
            if meaning.startswith("set by"):
                self.assertEqual(settings[name], value, name)

    def test_the_live_state_is_the_sessions(self):
        # The job's folder, kept trees, sandbox, private paths and opened repositories
        # live on its Session (one home for the three modes), never in the settings record.
        self.assertFalse({"scratch", "trees", "private", "sandbox"} & set(self.r.SETTINGS))
        with TempDir() as folder:
            given = write(folder, "i.jsonl", "{}\n")
            args = self.r.build_parser().parse_args(
                [given, "gold", "--repo", folder, "--sandbox", "none", "--jobs", "3"])
            settings = self.r.new_settings(args, repeat=1)
            settings["python"] = sys.executable
            session = self.r.Session(settings, args, [], self.r.Inputs(), needs_pytest=False,
                                     jobs=args.jobs, private=[given])
            self.assertEqual((session.sandbox["isolation"], settings["isolation"]),
                             ("none", "none"))
            self.assertEqual(session.keep, 0)       # trees are kept only under bwrap
            with session:
                scratch = session.scratch
                self.assertTrue(os.path.isdir(scratch))
                self.assertIn((scratch, "<session folder>"), session.private)
                self.assertIn((os.path.abspath(given), self.r.relative_path(given)),
                              session.private)
                self.assertIn(os.path.abspath(folder),       # the --repo path, too
                              [old for old, _ in session.private])
                self.assertEqual(session.trees.scratch, scratch)
                self.assertEqual(session.repo_path("o/n", "row 1"), folder)
            self.assertFalse(os.path.exists(scratch))
            self.assertEqual(list(settings), list(self.r.SETTINGS))    # no key added


# --- regrade.py: the procedure end to end, per runner ---
TOY_BASE = {
    "toy/__init__.py": "from toy.core import add, divide\n",
    "toy/core.py": "def add(a, b):\n    return a + b\n\n\ndef divide(a, b):\n    return a // b\n",
    "tests/__init__.py": "",
    "tests/test_core.py": (
        "import unittest\n\nfrom toy import add, divide\n\n\n"
        "class TestCore(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n"
        "    def test_divide_even(self):\n        self.assertEqual(divide(4, 2), 2)\n"),
    "README": "toy\n",
}
TOY_TESTS = {
    "tests/test_core.py": TOY_BASE["tests/test_core.py"] + (
        "\n    def test_divide_half(self):\n        self.assertEqual(divide(1, 2), 0.5)\n"),
    "tests/test_extra.py": (
        "import unittest\n\nfrom toy import divide\n\n\n"
        "class TestExtra(unittest.TestCase):\n"
        "    def test_divide_third(self):\n        self.assertAlmostEqual(divide(1, 3), 1 / 3)\n"),
}
TOY_PARAMS = {
    "tests/test_params.py": (
        "import pytest\n\nfrom toy import divide\n\n\n"
        "@pytest.mark.parametrize('a, b, want', [(1, 2, 0.5), (3, 4, 0.75), (1, 8, 0.125),\n"
        "                                        (5, 2, 2.5), (1, 4, 0.25)],\n"
        "                         ids=['a b', 'br[1]', 'caf\\u00e9', 'x::y', '1-[2]'])\n"
        "def test_ratio(a, b, want):\n    assert divide(a, b) == want\n\n\n"
        "class TestOuter:\n    class TestInner:\n        def test_deep(self):\n"
        "            assert divide(1, 2) == 0.5\n\n\n"
        "def test_gr\u00f6\u00dfe():\n    assert divide(3, 2) == 1.5\n"),
}
TOY_PARAM_IDS = ["tests/test_params.py::test_ratio[a b]", "tests/test_params.py::test_ratio[br[1]]",
                 "tests/test_params.py::test_ratio[caf\\xe9]",
                 "tests/test_params.py::test_ratio[x::y]",
                 "tests/test_params.py::test_ratio[1-[2]]",
                 "tests/test_params.py::TestOuter::TestInner::test_deep",
                 "tests/test_params.py::test_gr\u00f6\u00dfe"]
TOY_FIX = "def add(a, b):\n    return a + b\n\n\ndef divide(a, b):\n    return a / b\n"
TOY_WRONG = TOY_BASE["toy/core.py"].replace("return a // b",
                                            "return a / b if b == 2 else a // b")
TOY_FAKE = ("import atexit\n\nFAKE = ('PASSED tests/test_core.py::TestCore::test_divide_half\\n'\n"
            "        'PASSED tests/test_extra.py::TestExtra::test_divide_third\\n'\n"
            "        'test_divide_half (tests.test_core.TestCore.test_divide_half) ... ok\\n'\n"
            "        'test_divide_third (tests.test_extra.TestExtra.test_divide_third) ... ok\\n')\n"
            "print(FAKE, end='')\natexit.register(print, FAKE, end='')\n\n\n")
# The agent-made runs: name -> files they leave changed. Each exploit must end unresolved.
TOY_RUNS = {
    "fix": {"toy/core.py": TOY_FIX},
    "wrong-fix": {"toy/core.py": TOY_WRONG},
    "conftest-passes-all": {"toy/core.py": TOY_WRONG, "conftest.py": (
        "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
        "    report = outcome.get_result()\n    report.outcome = 'passed'\n"),
        "tests/conftest.py": "import unittest\nunittest.TestCase.run = lambda self, result=None: None\n"},
    "creates-new-test-file": {"toy/core.py": TOY_WRONG, "tests/test_extra.py": (
        "import unittest\n\n\nclass TestExtra(unittest.TestCase):\n"
        "    def test_divide_third(self):\n        pass\n")},
    "fake-passed": {"toy/core.py": TOY_FAKE + TOY_BASE["toy/core.py"]},
    "skips-f2p": {"toy/core.py": TOY_BASE["toy/core.py"].replace(
        "    return a // b", "    if a % b:\n        import unittest\n"
        "        raise unittest.SkipTest('not supported')\n    return a // b")},
    "crashes": {"toy/core.py": "import os\nos._exit(3)\n"},
}


class RegradeFixture(RegradeRepoCase):
    """One throwaway repository, its test patch and the runs' diffs, for a whole class."""

    @classmethod
    def setUpClass(cls):
        work = cls.make_repo(TOY_BASE)
        cls.test_patch = regrade_diff(work, TOY_TESTS)
        cls.param_patch = regrade_diff(work, TOY_PARAMS)
        cls.gold = regrade_diff(work, {"toy/core.py": TOY_FIX})
        cls.diffs = {name: regrade_diff(work, files) for name, files in TOY_RUNS.items()}
        cls.diffs["does-not-apply"] = cls.gold.replace("-    return a // b", "-    return a % b")
        cls.diffs["empty"] = ""

    def instance(self, instance_id, style, **extra):
        if style == "pytest":
            f2p = ["tests/test_core.py::TestCore::test_divide_half",
                   "tests/test_extra.py::TestExtra::test_divide_third"]
            p2p = ["tests/test_core.py::TestCore::test_add",
                   "tests/test_core.py::TestCore::test_divide_even"]
        else:
            f2p = ["tests.test_core.TestCore.test_divide_half",
                   "tests.test_extra.TestExtra.test_divide_third"]
            p2p = ["tests.test_core.TestCore.test_add", "tests.test_core.TestCore.test_divide_even"]
        record = {"instance_id": instance_id, "repo": "acme/toy", "base_commit": self.base,
                  "patch": self.gold, "test_patch": self.test_patch,
                  "FAIL_TO_PASS": json.dumps(f2p), "PASS_TO_PASS": json.dumps(p2p)}
        record.update(extra)
        return record

    def files(self, folder, instances, runs):
        """Write instances.jsonl and predictions.jsonl; runs: [(run_id, instance_id, diff)]."""
        regrade_jsonl(folder, "instances.jsonl", instances)
        regrade_jsonl(folder, "predictions.jsonl", [
            {"run_id": run_id, "instance_id": instance_id, "model_name_or_path": "m",
             "model_patch": diff} for run_id, instance_id, diff in runs])
        return os.path.join(folder, "instances.jsonl"), os.path.join(folder, "predictions.jsonl")

    def grade(self, style, names, extra_argv=(), **instance_extra):
        with TempDir() as folder:
            instances, predictions = self.files(
                folder, [self.instance("toy-1", style, **instance_extra)],
                [(name, "toy-1", self.diffs[name]) for name in names])
            status, report, err = regrade_json([instances, predictions, "--repo", self.repo,
                                                *extra_argv])
        self.assertEqual(status, graded_status(report), err)
        return regrade_by_run(report)

    def assert_status(self, verdicts, expected):
        got = {run_id: verdicts[run_id]["status"] for run_id in expected}
        self.assertEqual(got, expected, {k: verdicts[k]["reason"] for k in expected})

    def diff_of(self, files):
        """The diff a run that left `files` changed from the base commit would archive."""
        with TempDir() as folder:
            work = os.path.join(folder, "work")
            regrade_git(["clone", "-q", self.repo, work], folder)
            return regrade_diff(work, files)

    EVERY_STATUS = {"fix": "resolved", "wrong-fix": "unresolved",
                    "conftest-passes-all": "unresolved", "creates-new-test-file": "unresolved",
                    "fake-passed": "unresolved", "skips-f2p": "unresolved", "crashes": "error",
                    "does-not-apply": "patch_failed", "empty": "unresolved"}

    def grade_every_status(self, runner):
        """Grade the toy runs that end in each status, and check where each ends."""
        verdicts = self.grade(runner, list(self.EVERY_STATUS), ["--jobs", "2"])
        self.assert_status(verdicts, self.EVERY_STATUS)
        return verdicts


class TestRegradeUnittestRunner(RegradeFixture):
    def test_every_status_and_exploit_with_the_unittest_runner(self):
        verdicts = self.grade_every_status("unittest")
        fix = verdicts["fix"]
        self.assertIs(fix["completed"], True)
        self.assertEqual((fix["resolution"], fix["runner"], fix["results_from"]),
                         ("FULL", "unittest", "unittest runner"))
        self.assertEqual(fix["code_under_test"], "tree")
        self.assertEqual(verdicts["wrong-fix"]["fail_to_pass"]["failed"],
                         ["tests.test_extra.TestExtra.test_divide_third"])
        self.assertEqual(verdicts["wrong-fix"]["resolution"], "PARTIAL")
        self.assertEqual(verdicts["creates-new-test-file"]["touched_tests"], ["tests/test_extra.py"])
        self.assertEqual(verdicts["conftest-passes-all"]["touched_tests"],
                         ["conftest.py", "tests/conftest.py"])
        self.assertEqual(len(verdicts["skips-f2p"]["fail_to_pass"]["skipped"]), 2)
        self.assertIs(verdicts["skips-f2p"]["completed"], False)
        self.assertIsNone(verdicts["crashes"]["completed"])
        self.assertIn("exited 3", verdicts["crashes"]["reason"])
        self.assertIsNone(verdicts["does-not-apply"]["applied_with"])
        self.assertEqual(verdicts["empty"]["applied_with"], "empty")
        self.assertEqual(verdicts["empty"]["fail_to_pass"]["failed"],
                         json.loads(self.instance("x", "unittest")["FAIL_TO_PASS"]))

    def test_timeout_kills_the_whole_process_group(self):
        with TempDir() as folder:
            pid_file = os.path.join(folder, "child.pid")
            sleeper = ("import os, subprocess, sys, time\n"
                       "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
                       "open(os.environ['CHILD_PID_FILE'], 'w').write(str(child.pid))\n"
                       "time.sleep(60)\n")
            work = os.path.join(folder, "work")
            regrade_git(["clone", "-q", self.repo, work], folder)
            diff = regrade_diff(work, {"toy/core.py": sleeper + TOY_FIX})
            instances, predictions = self.files(folder, [self.instance("toy-1", "unittest")],
                                                [("hangs", "toy-1", diff)])
            # --sandbox none: the process group kill itself, without bwrap's PID namespace.
            status, report, err = regrade_json([instances, predictions, "--repo", self.repo,
                                                "--timeout", "2", "--env",
                                                f"CHILD_PID_FILE={pid_file}", "--sandbox", "none"])
            self.assertEqual(status, 0, err)
            verdict = report["runs"][0]
            self.assertEqual(verdict["status"], "timeout")
            self.assertIs(verdict["completed"], False)
            with open(pid_file) as handle:
                child = int(handle.read())

            def alive():
                try:
                    os.kill(child, 0)
                    with open(f"/proc/{child}/stat") as handle:
                        return handle.read().split()[2] != "Z"
                except (ProcessLookupError, FileNotFoundError):
                    return False
            # The kill is signalled at once; give the kernel a moment to reap it
            # (a bounded wait, not a timing assertion).
            for _ in range(100):
                if not alive():
                    break
                time.sleep(0.1)
            self.assertFalse(alive(), "the test command's child survived the timeout")

    def test_the_users_clone_is_never_changed(self):
        regrade_git(["branch", "feature"], self.repo)
        write(self.repo, "scratch.txt", "uncommitted work\n")
        write(self.repo, "toy/core.py", TOY_BASE["toy/core.py"] + "# local edit\n")
        regrade_git(["add", "toy/core.py"], self.repo)

        def state():
            return (snapshot(self.repo), regrade_git(["--no-optional-locks", "status", "--porcelain"],
                                                      self.repo),
                    regrade_git(["for-each-ref"], self.repo),
                    regrade_git(["rev-parse", "HEAD"], self.repo),
                    hashlib_sha256_of(os.path.join(self.repo, ".git", "index")))
        try:
            before = state()
            verdicts = self.grade("unittest", ["fix", "conftest-passes-all", "does-not-apply"])
            self.assertEqual(verdicts["fix"]["status"], "resolved")
            self.assertEqual(state(), before)
        finally:
            regrade_git(["reset", "-q", "--hard", "HEAD"], self.repo)
            os.remove(os.path.join(self.repo, "scratch.txt"))
            regrade_git(["branch", "-D", "feature"], self.repo)

    def test_throwaway_folders_are_removed_and_kept_on_request(self):
        import tempfile as tempfile_module
        with TempDir() as temp:
            old = tempfile_module.tempdir
            tempfile_module.tempdir = temp
            try:
                self.grade("unittest", ["fix", "does-not-apply"])
                self.assertEqual(os.listdir(temp), [])
                verdicts = self.grade("unittest", ["fix"], ["--keep-trees"])
                self.assertEqual(len(os.listdir(temp)), 1)
                self.assertTrue(any("kept" in n for n in verdicts["fix"]["notes"]))
                # Named after no owner, so no later job's sweep removes it once this one
                # has ended (it was regrade-run.HOST.PID..., swept as soon as PID died).
                regrade = load("regrade.py")
                (name,) = os.listdir(temp)
                self.assertTrue(name.startswith("regrade-kept-run."), name)
                self.assertIsNone(regrade.OWNED_FOLDER.match(name))
                self.assertEqual(regrade.sweep_leftovers(temp), 0)
            finally:
                tempfile_module.tempdir = old

    def test_ctrl_c_stops_the_tests_and_removes_the_throwaway_folders(self):
        with TempDir() as folder:
            work = os.path.join(folder, "work")
            regrade_git(["clone", "-q", self.repo, work], folder)
            diff = regrade_diff(work, {"toy/core.py": "import time\ntime.sleep(60)\n" + TOY_FIX})
            instances, predictions = self.files(folder, [self.instance("toy-1", "unittest")],
                                                [("fix", "toy-1", self.diffs["fix"]),
                                                 ("hangs", "toy-1", diff)])
            temp = os.path.join(folder, "tmp")
            os.makedirs(temp)
            out = os.path.join(folder, "out")
            process = subprocess.Popen(
                [sys.executable, os.path.join(HERE, "regrade.py"), instances, predictions,
                 "--repo", self.repo, "--out", out, "--progress"],
                env=dict(os.environ, TMPDIR=temp), stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not os.path.exists(
                    os.path.join(out, "logs", "fix.log")):
                time.sleep(0.05)
            time.sleep(0.5)
            process.send_signal(signal.SIGINT)
            stdout, stderr = process.communicate(timeout=30)
            self.assertEqual(process.returncode, 130, stderr)
            self.assertIn("error: interrupted", stderr)
            self.assertEqual(os.listdir(temp), [])
            with open(os.path.join(out, "verdicts.jsonl"), encoding="utf-8") as handle:
                self.assertEqual([json.loads(l)["run_id"] for l in handle], ["fix"])

    def test_wrong_code_under_test_with_an_editable_install_of_another_copy(self):
        with TempDir() as folder:
            venv = os.path.join(folder, "venv")
            subprocess.run([sys.executable, "-m", "venv", "--without-pip",
                            "--system-site-packages", venv], check=True, capture_output=True)
            python = os.path.join(venv, "bin", "python")
            site_dir = subprocess.run([python, "-c", "import sysconfig; print(sysconfig."
                                       "get_paths()['purelib'])"], check=True,
                                      capture_output=True, text=True).stdout.strip()
            # Legacy editable installs (easy-install.pth) move their path to the front.
            write(site_dir, "easy-install.pth",
                  f"import sys; sys.path.insert(0, {self.repo!r})\n")
            # --sandbox none: under bwrap the other copy is not visible at all.
            verdicts = self.grade("unittest", ["fix", "wrong-fix"],
                                  ["--python", python, "--sandbox", "none"])
            self.assert_status(verdicts, {"fix": "wrong_code_under_test",
                                          "wrong-fix": "wrong_code_under_test"})
            self.assertIsNone(verdicts["fix"]["completed"])
            # It names the other copy, as shared text does: relative, never absolute (so
            # the assertion holds wherever the suite runs, under /tmp included).
            self.assertIn(os.path.basename(self.repo) + "/toy", verdicts["fix"]["code_under_test"])
            # A plain editable install (path appended) loses to the tree: no false alarm.
            os.remove(os.path.join(site_dir, "easy-install.pth"))
            write(site_dir, "__editable__.toy.pth", self.repo + "\n")
            verdicts = self.grade("unittest", ["fix"], ["--python", python, "--sandbox", "none"])
            self.assertEqual(verdicts["fix"]["status"], "resolved")
            self.assertEqual(verdicts["fix"]["code_under_test"], "tree")

    def test_test_patch_failed_is_a_grading_error(self):
        broken = self.test_patch.replace(" self.assertEqual(divide(4, 2), 2)",
                                         " self.assertEqual(divide(4, 2), 3)")
        self.assertNotEqual(broken, self.test_patch)
        verdicts = self.grade("unittest", ["fix"], test_patch=broken)
        self.assertEqual(verdicts["fix"]["status"], "test_patch_failed")
        self.assertIsNone(verdicts["fix"]["completed"])

    def test_p2p_skip_fails_unless_allowed_and_repeat_marks_flaky(self):
        skip_p2p = {"toy/core.py": TOY_FIX.replace(
            "def add(a, b):\n", "def add(a, b):\n    import unittest\n"
            "    raise unittest.SkipTest('later')\n")}
        # Right in the first test process of a run, wrong in the second: flaky.
        flaky = {"toy/core.py": "import os\nPATH = os.environ['FLAKY_COUNTER']\n"
                 "N = int(open(PATH).read()) if os.path.exists(PATH) else 0\n"
                 "open(PATH, 'w').write(str(N + 1))\n\n\n" + TOY_FIX.replace(
                     "    return a / b", "    return a / b if N % 2 == 0 else a // b")}
        with TempDir() as folder:
            work = os.path.join(folder, "work")
            regrade_git(["clone", "-q", self.repo, work], folder)
            runs = [("skip-p2p", "toy-1", regrade_diff(work, skip_p2p)),
                    ("flaky", "toy-1", regrade_diff(work, flaky))]
            instances, predictions = self.files(folder, [self.instance("toy-1", "unittest")], runs)
            counter = os.path.join(folder, "counter")       # in this test's own temp folder
            # --sandbox none: the counter lives outside the tree, where bwrap would hide it.
            base = [instances, predictions, "--repo", self.repo, "--env",
                    f"FLAKY_COUNTER={counter}", "--sandbox", "none"]
            verdicts = regrade_by_run(regrade_json(base + ["--repeat", "2"])[1])
            self.assertEqual(verdicts["skip-p2p"]["status"], "unresolved")
            self.assertEqual(verdicts["skip-p2p"]["pass_to_pass"]["skipped"],
                             ["tests.test_core.TestCore.test_add"])
            self.assertEqual(verdicts["flaky"]["status"], "unresolved")
            self.assertEqual(verdicts["flaky"]["flaky"],
                             ["tests.test_core.TestCore.test_divide_half",
                              "tests.test_extra.TestExtra.test_divide_third"])
            self.assertIn("flaky", verdicts["flaky"]["reason"])
            verdicts = regrade_by_run(regrade_json(base + ["--p2p-skip-ok"])[1])
            self.assertEqual(verdicts["skip-p2p"]["status"], "resolved")

    def test_log_runner_is_marked_and_cross_checked(self):
        verdicts = self.grade("unittest", ["fix", "wrong-fix", "fake-passed"], [
            "--runner", "log", "--test-cmd", "{python} -m unittest -v {modules}"])
        # The fake '... ok' lines come after the real '... FAIL' ones: the worse outcome stands.
        self.assert_status(verdicts, {"fix": "resolved", "wrong-fix": "unresolved",
                                      "fake-passed": "unresolved"})
        for verdict in verdicts.values():
            self.assertEqual(verdict["results_from"], "log")
            self.assertTrue(any("log" in n for n in verdict["notes"]))

    def test_out_dir_resume_force_and_files(self):
        with TempDir() as folder:
            instances, predictions = self.files(
                folder, [self.instance("toy-1", "unittest")],
                [(n, "toy-1", self.diffs[n]) for n in ("fix", "wrong-fix", "does-not-apply")])
            out = os.path.join(folder, "out")
            argv = [instances, predictions, "--repo", self.repo, "--out", out]
            status, text, err = run("regrade.py", argv)
            self.assertEqual(status, 0, err)
            with open(os.path.join(out, "verdicts.jsonl"), encoding="utf-8") as handle:
                first = handle.read()
            self.assertEqual(len(first.splitlines()), 3)
            with open(os.path.join(out, "verdicts.csv"), encoding="utf-8") as handle:
                self.assertEqual(handle.read(), "run_id,instance_id,completed,status\n"
                                 "does-not-apply,toy-1,false,patch_failed\n"
                                 "fix,toy-1,true,resolved\nwrong-fix,toy-1,false,unresolved\n")
            self.assertEqual(sorted(os.listdir(os.path.join(out, "logs"))),
                             ["does-not-apply.log", "fix.log", "wrong-fix.log"])
            with open(os.path.join(out, "reports", "fix.json"), encoding="utf-8") as handle:
                report = json.load(handle)
            self.assertEqual(sorted(report["toy-1"]), ["patch_exists", "patch_is_None",
                                                       "patch_successfully_applied", "resolved",
                                                       "tests_status"])
            self.assertEqual(sorted(report["toy-1"]["tests_status"]),
                             ["FAIL_TO_FAIL", "FAIL_TO_PASS", "PASS_TO_FAIL", "PASS_TO_PASS"])
            with open(os.path.join(out, "swebench_summary.json"), encoding="utf-8") as handle:
                summary = json.load(handle)
            for key in ("total_instances", "submitted_instances", "completed_instances",
                        "resolved_instances", "unresolved_instances", "empty_patch_instances",
                        "error_instances", "completed_ids", "resolved_ids", "unresolved_ids",
                        "empty_patch_ids", "error_ids", "submitted_ids", "incomplete_ids"):
                self.assertIn(key, summary)
            self.assertEqual(summary["ids_are"], "run_id")
            # A crash mid-write leaves half a line: it is dropped, the rest is kept.
            with open(os.path.join(out, "verdicts.jsonl"), "a", encoding="utf-8") as handle:
                handle.write('{"run_id": "half')
            status, text, err = run("regrade.py", argv)
            self.assertIn("3 already graded", text)
            with open(os.path.join(out, "verdicts.jsonl"), encoding="utf-8") as handle:
                self.assertEqual(handle.read(), first)
            # New test lists mean new inputs: the runs are graded again.
            changed = self.instance("toy-1", "unittest", PASS_TO_PASS=json.dumps(
                ["tests.test_core.TestCore.test_add"]))
            regrade_jsonl(folder, "instances.jsonl", [changed])
            status, text, err = run("regrade.py", argv)
            self.assertNotIn("already graded", text)
            status, text, err = run("regrade.py", argv + ["--force"])
            self.assertNotIn("already graded", text)
            with open(os.path.join(out, "verdicts.jsonl"), encoding="utf-8") as handle:
                self.assertEqual(len(handle.read().splitlines()), 3)   # compacted: one a run
            with open(os.path.join(out, "verdicts.csv"), encoding="utf-8") as handle:
                self.assertEqual(len(handle.read().splitlines()), 4)

    def test_shards_partition_the_runs(self):
        with TempDir() as folder:
            runs = [(f"run-{i}", "toy-1", self.diffs["does-not-apply"]) for i in range(12)]
            instances, predictions = self.files(folder, [self.instance("toy-1", "unittest")], runs)
            seen = []
            for k in (1, 2, 3):
                status, report, err = regrade_json([instances, predictions, "--repo", self.repo,
                                                    "--shard", f"{k}/3"])
                self.assertEqual(status, 0, err)
                seen.append({v["run_id"] for v in report["runs"]})
            self.assertEqual(set().union(*seen), {r[0] for r in runs})
            self.assertEqual(sum(len(s) for s in seen), len(runs))
            self.assertTrue(all(seen), "each shard got runs")

    def test_runs_folder_with_task_ids_and_bundle(self):
        with TempDir() as folder:
            regrade_jsonl(folder, "instances.jsonl", [self.instance("toy-1", "unittest")])
            write(folder, "runs/runs.csv", "run_id,task_id,claimed\nr1,toy-1,yes\nr2,toy-1,yes\n")
            write(folder, "runs/r1/diff.patch", self.diffs["fix"])
            write(folder, "runs/r1/run.json", json.dumps({"run_id": "r1"}))
            write(folder, "runs/r2/changes.diff", self.diffs["wrong-fix"])
            write(folder, "runs/r2/meta.json", json.dumps({"task_id": "toy-1",
                                                           "base_commit": self.base[:10]}))
            bundle = os.path.join(folder, "toy.bundle")
            regrade_git(["bundle", "create", "-q", bundle, "main"], self.repo)
            status, report, err = regrade_json([os.path.join(folder, "instances.jsonl"),
                                                os.path.join(folder, "runs"),
                                                "--repo", f"acme/toy={bundle}"])
            self.assertEqual(status, 0, err)
            verdicts = regrade_by_run(report)
            self.assert_status(verdicts, {"r1": "resolved", "r2": "unresolved"})
            self.assertEqual(verdicts["r2"]["base_commit"], self.base)
            self.assertIn(os.path.relpath(bundle),
                          [i["path"] for i in report["provenance"]["inputs"]])

    def test_environment_is_scrubbed_and_stdin_closed(self):
        probe = ("import json, os, sys\n"
                 "facts = {'home': os.environ.get('HOME'), 'token': os.environ.get('MY_API_TOKEN'),\n"
                 "         'inst': os.environ.get('FROM_INSTANCE'), 'stdin': sys.stdin.read(),\n"
                 "         'path0': os.environ.get('PYTHONPATH', '').split(os.pathsep)[0]}\n"
                 "open(os.environ['PROBE_FILE'], 'a').write(json.dumps(facts) + '\\n')\n\n\n")
        with TempDir() as folder:
            work = os.path.join(folder, "work")
            regrade_git(["clone", "-q", self.repo, work], folder)
            diff = regrade_diff(work, {"toy/core.py": probe + TOY_FIX})
            probe_file = os.path.join(folder, "probe.jsonl")
            instances, predictions = self.files(
                folder, [self.instance("toy-1", "unittest", test_env={"FROM_INSTANCE": "yes"})],
                [("probe", "toy-1", diff)])
            # --sandbox none: the probe file lives outside the tree, where bwrap would hide it.
            argv = [instances, predictions, "--repo", self.repo, "--env",
                    f"PROBE_FILE={probe_file}", "--sandbox", "none"]
            os.environ["MY_API_TOKEN"] = "s3cret"
            try:
                first = regrade_json(argv)
                second = regrade_json(argv + ["--keep-env", "MY_API_TOKEN"])
            finally:
                del os.environ["MY_API_TOKEN"]
            self.assertEqual(first[1]["runs"][0]["status"], "resolved", first[2])
            with open(probe_file, encoding="utf-8") as handle:
                facts = [json.loads(line) for line in handle]
            self.assertEqual(len(facts), 2)
            self.assertIsNone(facts[0]["token"])
            self.assertEqual(facts[1]["token"], "s3cret")
            self.assertEqual(facts[0]["inst"], "yes")
            self.assertEqual(facts[0]["stdin"], "")
            self.assertNotEqual(facts[0]["home"], os.path.expanduser("~"))
            self.assertTrue(facts[0]["home"].startswith(os.path.dirname(facts[0]["path0"])))
            self.assertTrue(facts[0]["path0"].endswith(os.sep + "tree"))

    def test_summarize_merges_shards(self):
        with TempDir() as folder:
            runs = [(n, "toy-1", self.diffs[n]) for n in ("fix", "wrong-fix", "does-not-apply")]
            instances, predictions = self.files(folder, [self.instance("toy-1", "unittest")], runs)
            for k in (1, 2):
                status, out, err = run("regrade.py", [instances, predictions, "--repo", self.repo,
                                                      "--shard", f"{k}/2", "--out",
                                                      os.path.join(folder, f"s{k}")])
                self.assertEqual(status, 0, err)
            status, report, err = regrade_json(["--summarize", os.path.join(folder, "s1",
                                                                           "verdicts.jsonl"),
                                                os.path.join(folder, "s2", "verdicts.jsonl"),
                                                "--out", os.path.join(folder, "all")])
            self.assertEqual(status, 0, err)
            self.assertEqual(report["summary"]["runs"], 3)
            self.assertEqual(report["summary"]["statuses"]["resolved"], 1)
            with open(os.path.join(folder, "all", "verdicts.csv"), encoding="utf-8") as handle:
                self.assertEqual(len(handle.read().splitlines()), 4)

    def test_bad_input_exits_2_with_one_line(self):
        with TempDir() as folder:
            good = self.instance("toy-1", "unittest")
            instances, predictions = self.files(folder, [good], [("a", "toy-1", "")])
            write(folder, "other.jsonl", json.dumps({"instance_id": "nope", "model_patch": ""}))
            write(folder, "broken.jsonl", '{"instance_id": "toy-1", "model_patch": ""}\n{"inst\n')
            regrade_jsonl(folder, "nobase.jsonl", [dict(good, base_commit="0" * 40)])
            cases = [
                ([instances, os.path.join(folder, "broken.jsonl"), "--repo", self.repo],
                 "broken.jsonl line 2: not valid JSON"),
                ([instances, predictions, "--repo", f"other/repo={self.repo}"],
                 "no --repo for repository acme/toy"),
                ([instances, predictions, "--repo", folder], "not a git repository"),
                ([instances, predictions, "--repo", self.repo, "--shard", "4/3"], "--shard 4/3"),
                ([instances, predictions, "--repo", self.repo, "--python", "/no/python"],
                 "--python /no/python"),
                ([instances, predictions], "--repo is required"),
                ([os.path.join(folder, "missing.jsonl"), predictions, "--repo", self.repo],
                 "missing.jsonl: cannot read"),
            ]
            before = snapshot(folder)
            for argv, expected in cases:
                status, out, err = run("regrade.py", argv)
                self.assertEqual(status, 2, (argv, err))
                self.assertEqual(out, "")
                self.assertEqual(len(err.strip().splitlines()), 1, err)
                self.assertTrue(err.startswith("error: "), err)
                self.assertIn(expected, err)
            # One bad run among hundreds must not stop the job: it becomes a
            # grading error and the rest are graded.
            status, report, err = regrade_json([instances, os.path.join(folder, "other.jsonl"),
                                                "--repo", self.repo])
            self.assertEqual(status, 1, err)          # no run could be graded
            verdict = report["runs"][0]
            self.assertEqual((verdict["status"], verdict["completed"], verdict["resolution"]),
                             ("error", None, "NO"))
            self.assertIn("instance 'nope' is not in", verdict["reason"])
            status, report, err = regrade_json([os.path.join(folder, "nobase.jsonl"), "empty",
                                                "--repo", self.repo])
            self.assertEqual(status, 1, err)
            verdict = report["runs"][0]
            self.assertEqual((verdict["status"], verdict["completed"]), ("error", None))
            self.assertIn("base commit " + "0" * 40 + " of toy-1 is not in", verdict["reason"])
            self.assertEqual(snapshot(folder), before)


def hashlib_sha256_of(path):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def regrade_has_pytest():
    return importlib.util.find_spec("pytest") is not None


REGRADE_NO_PYTEST = f"pytest is not installed for {sys.executable}: pytest-runner cases skipped"


@unittest.skipUnless(regrade_has_pytest(), REGRADE_NO_PYTEST)
class TestRegradePytestRunner(RegradeFixture):
    def test_every_status_and_exploit_with_the_pytest_plugin(self):
        verdicts = self.grade_every_status("pytest")
        self.assertEqual(verdicts["fix"]["results_from"], "pytest plugin")
        self.assertEqual(verdicts["fake-passed"]["fail_to_pass"]["failed"],
                         ["tests/test_core.py::TestCore::test_divide_half",
                          "tests/test_extra.py::TestExtra::test_divide_third"])
        self.assertEqual(len(verdicts["skips-f2p"]["fail_to_pass"]["skipped"]), 2)

    def test_xfail_of_a_fail_to_pass_test_is_not_a_pass(self):
        xfail = {"toy/core.py": TOY_FIX.replace(
            "    return a / b", "    if a % b:\n        import pytest\n"
            "        pytest.xfail('known issue')\n    return a / b")}
        self.diffs["xfails"] = self.diff_of(xfail)
        verdicts = self.grade("pytest", ["xfails"])
        self.assertEqual(verdicts["xfails"]["status"], "unresolved")
        self.assertEqual(len(verdicts["xfails"]["fail_to_pass"]["skipped"]), 2)

    def test_exact_parametrised_ids(self):
        patch = self.test_patch + self.param_patch
        near_miss = "tests/test_params.py::test_ratio[a  b]"
        verdicts = self.grade("pytest", ["fix", "wrong-fix"], test_patch=patch,
                              FAIL_TO_PASS=json.dumps(TOY_PARAM_IDS))
        self.assertEqual(verdicts["fix"]["status"], "resolved", verdicts["fix"]["reason"])
        self.assertEqual(verdicts["fix"]["fail_to_pass"]["passed"], TOY_PARAM_IDS)
        self.assertEqual(verdicts["wrong-fix"]["status"], "unresolved")
        verdicts = self.grade("pytest", ["fix"], test_patch=patch,
                              FAIL_TO_PASS=json.dumps(TOY_PARAM_IDS + [near_miss]))
        self.assertEqual(verdicts["fix"]["fail_to_pass"]["missing"], [near_miss])

    def test_custom_pytest_command_still_loads_the_plugin(self):
        verdicts = self.grade("pytest", ["fix", "fake-passed"], [
            "--runner", "pytest", "--test-cmd", "{python} -m pytest -q -x {files}"])
        self.assert_status(verdicts, {"fix": "resolved", "fake-passed": "unresolved"})


# --- regrade.py step 1: check-out and kept trees (a checkout holds its base commit alone) ---
def bwrap_missing():
    """Why bubblewrap cannot sandbox a test command here, or '' where it can."""
    regrade = load("regrade.py")
    try:
        regrade.choose_sandbox("bwrap", sys.executable, False)
    except regrade.InputError as exc:
        return str(exc)
    return ""


# Issue 9's performance part: under bwrap a run's tree is kept, restored and
# reused for the next run (checking a large tree out and deleting it cost
# seconds), and the django and sympy runners run only the listed tests.
POLLUTE_TEST = (
    "import os\nimport unittest\n\n\nclass TestPollute(unittest.TestCase):\n"
    "    def test_pollute(self):\n"
    "        with open('calc/ops.py', 'a') as handle:\n"
    "            handle.write('\\nBROKEN = True\\n')\n"
    "        with open('junk.txt', 'w') as handle:\n            handle.write('left behind')\n"
    "        os.makedirs('calc/__pycache__', exist_ok=True)\n"
    "        with open('calc/__pycache__/ops.cpython-39.pyc', 'wb') as handle:\n"
    "            handle.write(b'planted')\n"
    "        for folder in ('objects', 'refs'):\n"
    "            os.makedirs('nested/.git/' + folder)\n"
    "        with open('nested/.git/HEAD', 'w') as handle:\n"
    "            handle.write('ref: refs/heads/main\\n')\n"
    "        os.remove('tests/test_ops.py')\n"
    "        os.mkfifo('calc/leftover.fifo')\n"
    "        import socket\n"
    "        socket.socket(socket.AF_UNIX).bind('calc/leftover.sock')\n"
    "        for path in (os.getcwd(), '.git'):\n"
    "            try:\n                os.rename(path, path + '-moved')\n"
    "            except OSError:\n                continue\n"
    "            raise AssertionError(path + ' could be moved aside')\n"
    "        os.chmod('calc', 0o500)\n")
CHECK_TEST = (
    "import os\nimport unittest\n\n\nclass TestCheck(unittest.TestCase):\n"
    "    def test_clean(self):\n"
    "        for path in ('junk.txt', 'nested', 'calc/__pycache__/ops.cpython-39.pyc',\n"
    "                     'tests/test_pollute.py', 'calc/leftover.fifo', 'calc/leftover.sock'):\n"
    "            self.assertFalse(os.path.exists(path), path)\n"
    "        self.assertTrue(os.path.exists('tests/test_ops.py'))\n"
    "        self.assertTrue(os.access('calc', os.W_OK))\n"
    "        with open('calc/ops.py') as handle:\n"
    "            self.assertNotIn('BROKEN', handle.read())\n")


class TestRegradeKeptTrees(RegradeCoreFixture):
    def test_a_kept_tree_comes_back_exactly_at_its_commit(self):
        if bwrap_missing():
            self.skipTest(bwrap_missing())
        with TempDir() as folder:
            work = os.path.join(folder, "work")
            regrade_git(["clone", "-q", self.repo, work], folder)
            patches = {name: regrade_diff(work, {f"tests/test_{name}.py": text})
                       for name, text in (("pollute", POLLUTE_TEST), ("check", CHECK_TEST))}
        cases = [self.instance(name, ([f"tests.test_{name}.Test{name.title()}.test_"
                                       f"{'pollute' if name == 'pollute' else 'clean'}",
                                       "tests.test_ops.TestOps.test_add"], []),
                               test_patch=patches[name]) for name in ("pollute", "check")]
        verdicts = self.grade(cases, [("a", "pollute", "fix"), ("b", "check", "fix")],
                              ["--jobs", "1", "--sandbox", "bwrap"])
        # The first run modified, added, removed and locked files, and could move
        # neither the tree nor its .git; the second found its tree as committed.
        for name in ("a", "b"):
            self.assertEqual((verdicts[name]["status"], verdicts[name]["completed"]),
                             ("resolved", True), verdicts[name]["reason"])
        self.assertEqual([verdicts[n]["work_tree"] for n in "ab"], ["fresh checkout", "kept tree"])
        self.assertEqual(self.report["summary"]["work_trees"],
                         {"fresh checkout": 1, "kept tree": 1})

    def test_no_tree_is_kept_without_bwrap(self):
        verdicts = self.grade([self.instance("u", "unittest")],
                              [("a", "u", "fix"), ("b", "u", "empty")],
                              ["--jobs", "1", "--sandbox", "none"])
        self.assertEqual([verdicts[n]["work_tree"] for n in "ab"], ["fresh checkout"] * 2)

    def test_a_tree_whose_head_or_folder_changed_is_not_restored(self):
        regrade = load("regrade.py")
        source = regrade.Source("origin", os.path.join(self.repo, ".git"))
        with TempDir() as folder:
            for change in ("commit", "swap", "none"):
                kept = os.path.join(folder, change)
                os.makedirs(kept)
                tree = regrade.make_tree(source, self.base, kept)
                identity = regrade.directory_identity(tree)
                write(tree, "calc/ops.py", "changed\n")
                if change == "commit":
                    regrade_git(["commit", "-q", "-am", "moved HEAD"], tree)
                elif change == "swap":
                    os.rename(tree, tree + "-old")
                    regrade.make_tree(source, self.base, kept)
                self.assertEqual(regrade.restore_tree(tree, self.base, identity, 0),
                                 change == "none", change)
            with open(os.path.join(folder, "none", "tree", "calc", "ops.py")) as handle:
                self.assertEqual(handle.read(), CORE_BASE["calc/ops.py"])

    def kept_tree(self, regrade, folder, name):
        kept = os.path.join(folder, name)
        os.makedirs(kept)
        source = regrade.Source("origin", os.path.join(self.repo, ".git"))
        tree = regrade.make_tree(source, self.base, kept)
        # As TreePool.take hands a tree out: what to check against, and since when.
        return tree, regrade.directory_identity(tree), time.time_ns() - 50_000_000

    def test_an_untracked_gitattributes_is_gone_before_the_reset_writes(self):
        # git reads an untracked .gitattributes while writing tracked files back:
        # left in place it would rewrite calc/ops.py with CRLF line ends.
        regrade = load("regrade.py")
        with TempDir() as folder:
            tree, identity, since = self.kept_tree(regrade, folder, "attributes")
            write(tree, "calc/.gitattributes", "ops.py eol=crlf\n")
            write(tree, "calc/ops.py", "changed\n")
            self.assertTrue(regrade.restore_tree(tree, self.base, identity, since))
            with open(os.path.join(tree, "calc", "ops.py"), "rb") as handle:
                self.assertEqual(handle.read(), CORE_BASE["calc/ops.py"].encode())

    def test_what_git_reset_and_clean_leave_alone_is_refused(self):
        regrade = load("regrade.py")

        def tag_a_folder(tree):
            os.setxattr(os.path.join(tree, "calc"), "user.left", b"behind")
        changes = {
            "a .git folder below the top": lambda tree: os.makedirs(
                os.path.join(tree, "calc", ".git", "objects")),
            "a folder with an extended attribute": tag_a_folder,
        }
        with TempDir() as folder:
            for number, (change, make) in enumerate(changes.items()):
                tree, identity, since = self.kept_tree(regrade, folder, str(number))
                self.assertTrue(regrade.tree_is_its_index(tree), change)
                try:
                    make(tree)
                except OSError as exc:       # no user xattrs on this file system
                    self.assertEqual(change, "a folder with an extended attribute", exc)
                    continue
                self.assertFalse(regrade.restore_tree(tree, self.base, identity, since), change)
            # Repaired rather than refused: a FIFO git would block reading, a
            # set-group-id, locked folder, and a file locked in the index's second
            # (git's stat check would not see it; the file is written anew).
            tree, identity, since = self.kept_tree(regrade, folder, "repaired")
            modes = [stat.S_IMODE(os.stat(os.path.join(tree, p)).st_mode)
                     for p in ("calc", "calc/ops.py")]
            os.mkfifo(os.path.join(tree, ".gitattributes"))
            os.chmod(os.path.join(tree, "calc", "ops.py"), 0o400)
            os.chmod(os.path.join(tree, "calc"), 0o2500)
            self.assertTrue(regrade.restore_tree(tree, self.base, identity, since))
            self.assertFalse(os.path.exists(os.path.join(tree, ".gitattributes")))
            self.assertEqual([stat.S_IMODE(os.stat(os.path.join(tree, p)).st_mode)
                              for p in ("calc", "calc/ops.py")], modes)

    def test_a_submodule_folder_must_come_back_empty(self):
        regrade = load("regrade.py")
        with TempDir() as folder:
            work = os.path.join(folder, "work")
            regrade_git(["clone", "-q", self.repo, work], folder)
            regrade_git(["update-index", "--add", "--cacheinfo",
                         f"160000,{self.base},vendor/lib"], work)
            regrade_git(["commit", "-q", "-m", "a submodule"], work)
            commit = regrade_git(["rev-parse", "HEAD"], work).strip()
            source = regrade.Source("work", os.path.join(work, ".git"))
            os.makedirs(os.path.join(folder, "kept"))
            tree = regrade.make_tree(source, commit, os.path.join(folder, "kept"))
            identity = regrade.directory_identity(tree)
            self.assertTrue(regrade.restore_tree(tree, commit, identity, 0))
            # Files changed since the hand-out go before git runs; git clean leaves a
            # submodule's folders alone, and the walk refuses them.
            write(tree, "vendor/lib/pkg/planted.py", "X = 1\n")
            self.assertFalse(regrade.restore_tree(tree, commit, identity, time.time_ns()))

    def test_a_folder_thousands_deep_is_removed(self):
        # shutil.rmtree recursed into it and raised RecursionError, ending the whole job.
        regrade = load("regrade.py")
        with TempDir() as folder:
            top = os.path.join(folder, "deep")
            os.makedirs(top)
            handle = os.open(top, os.O_RDONLY)
            for _ in range(3000):
                os.mkdir("d", dir_fd=handle)
                inner = os.open("d", os.O_RDONLY, dir_fd=handle)
                os.close(handle)
                handle = inner
            os.close(handle)
            regrade.remove_folder(top)
            self.assertFalse(os.path.exists(top))

    def test_a_run_cannot_make_the_grader_write_or_read_through_its_folders(self):
        # Between attempts the run's folder and the grader's folder are the code's to
        # write: links left at the next output or config file made the grader
        # overwrite a host file (the config holds the secret), and the grader read
        # its own output back by path, following a link to a host file.
        if bwrap_missing():
            self.skipTest(bwrap_missing())
        with TempDir() as outside, TempDir() as folder:
            canary, secret = write(outside, "canary.txt", "canary\n"), \
                write(outside, "secret.txt", "host secret 31337\n")
            plant = (
                "import os\nimport sys\nimport unittest\n\n\n"
                "class TestPlant(unittest.TestCase):\n    def test_plant(self):\n"
                "        folder = os.path.dirname(os.environ['HOME'])\n"
                "        grader = os.path.dirname(os.path.abspath(sys.argv[0]))   # the recorder's\n"
                f"        links = {{'output-0.txt': {secret!r}, 'output-1.txt': {canary!r},\n"
                f"                 'config-1.json': {canary!r}}}\n"
                "        for name, target in links.items():\n"
                "            path = os.path.join(grader if name.startswith('config') else folder,\n"
                "                                name)\n"
                "            if os.path.lexists(path):\n                os.remove(path)\n"
                "            os.symlink(target, path)\n")
            work = os.path.join(folder, "work")
            regrade_git(["clone", "-q", self.repo, work], folder)
            patch = regrade_diff(work, {"tests/test_plant.py": plant})
            case = self.instance("plant", (["tests.test_plant.TestPlant.test_plant"], []),
                                 test_patch=patch)
            out = os.path.join(folder, "out")
            verdicts = self.grade([case], [("a", "plant", "empty")],
                                  ["--repeat", "2", "--sandbox", "bwrap", "--out", out])
            with open(canary) as handle:
                self.assertEqual(handle.read(), "canary\n")
            with open(os.path.join(out, "logs", "a.log")) as handle:
                self.assertNotIn("31337", handle.read())
        self.assertEqual(verdicts["a"]["status"], "resolved", verdicts["a"]["reason"])

    def test_a_run_that_destroys_its_results_is_not_a_grading_error(self):
        # Removing the results file, or leaving a FIFO in its place, made the run a
        # grading error ("the recorder did not load"), which says nothing of the
        # agent: a failing run could hide its failure that way.
        with TempDir() as folder:
            work = os.path.join(folder, "work")
            regrade_git(["clone", "-q", self.repo, work], folder)
            cases = []
            for name, action in (("remove", "os.remove(path)"),
                                 ("fifo", "os.remove(path)\n            os.mkfifo(path)")):
                test = ("import glob\nimport os\nimport sys\nimport unittest\n\n\n"
                        "class TestHide(unittest.TestCase):\n    def test_hide(self):\n"
                        "        grader = os.path.dirname(os.path.abspath(sys.argv[0]))\n"
                        "        for path in glob.glob(os.path.join(grader, 'results-*')):\n"
                        f"            {action}\n")
                patch = regrade_diff(work, {"tests/test_hide.py": test})
                cases.append(self.instance(name, (["tests.test_hide.TestHide.test_hide"], []),
                                           test_patch=patch))
        verdicts = self.grade(cases, [("remove", "remove", "empty"), ("fifo", "fifo", "empty")])
        for name in ("remove", "fifo"):
            self.assertEqual((verdicts[name]["status"], verdicts[name]["completed"]),
                             ("unresolved", False), (name, verdicts[name]["reason"]))
            self.assertIn("tampered", verdicts[name]["reason"])

    def test_a_file_changed_during_the_run_is_written_anew(self):
        # git compares ctimes to the second: an attribute set in the index's second
        # survived git reset --hard into the next run.
        regrade = load("regrade.py")
        with TempDir() as folder:
            tree, identity, since = self.kept_tree(regrade, folder, "ctime")
            path = os.path.join(tree, "calc", "ops.py")
            try:
                os.setxattr(path, "user.left", b"behind")
            except OSError as exc:
                self.skipTest(f"no user xattrs here: {exc}")
            self.assertTrue(regrade.restore_tree(tree, self.base, identity, since))
            self.assertEqual(os.listxattr(path), [])

    def test_a_changed_git_config_or_a_name_that_is_not_utf8(self):
        regrade = load("regrade.py")
        with TempDir() as folder:
            tree, identity, since = self.kept_tree(regrade, folder, "config")
            with open(os.path.join(tree, ".git", "config"), "a") as handle:
                handle.write("[filter \"x\"]\n\tsmudge = id\n")
            self.assertFalse(regrade.restore_tree(tree, self.base, identity, since))
            # A tracked name that is not UTF-8 kept every tree from being reused.
            odd = os.path.join(folder, "odd")
            os.makedirs(odd)
            regrade_git(["init", "-q"], odd)
            write(odd, os.fsdecode(b"caf\xe9.txt"), "x\n")
            regrade_git(["add", "-A"], odd)
            regrade_git(["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "o"],
                        odd)
            commit = regrade_git(["rev-parse", "HEAD"], odd).strip()
            source = regrade.Source("odd", os.path.join(odd, ".git"))
            os.makedirs(os.path.join(folder, "kept-odd"))
            tree = regrade.make_tree(source, commit, os.path.join(folder, "kept-odd"))
            self.assertTrue(regrade.restore_tree(tree, commit, regrade.directory_identity(tree),
                                                 0))

    def test_a_pool_reuses_trees_and_moves_them_between_commits(self):
        regrade = load("regrade.py")
        with TempDir() as folder:
            work = os.path.join(folder, "work")
            regrade_git(["clone", "-q", self.repo, work], folder)
            write(work, "calc/extra.py", "X = 1\n")
            regrade_git(["add", "-A"], work)
            regrade_git(["commit", "-q", "-m", "second"], work)
            second = regrade_git(["rev-parse", "HEAD"], work).strip()
            source = regrade.Source("work", os.path.join(work, ".git"))
            pool = regrade.TreePool(1, folder)
            seen = []
            for commit in (self.base, self.base, second, self.base):
                tree, lease, how = pool.take(source, commit, None)
                head = regrade_git(["rev-parse", "HEAD"], tree).strip()
                seen.append((how, head == commit,
                             os.path.exists(os.path.join(tree, "calc", "extra.py"))))
                write(tree, "untracked.txt", "x")
                pool.give(lease)
            pool.close()
            self.assertEqual(seen, [("fresh checkout", True, False), ("kept tree", True, False),
                                    ("kept tree, moved to its commit", True, True),
                                    ("kept tree, moved to its commit", True, False)])
            self.assertEqual([n for n in os.listdir(folder) if n.startswith("regrade-tree-")], [])


# Issue 24: no future in the checkout. A checkout borrowed every object of the
# clone (objects/info/alternates), so code under test that asked git for the
# upstream fix found it and was graded resolved under --sandbox unshare and none.
# The hostile diff below replaces calc/ops.py with code that, as it is imported,
# looks for the fix every way history offers and behaves like the fix if any
# finds it; it prints which ways found it.
FUTURE_MARK = "FIXED" + "_UPSTREAM"
HOSTILE_OPS = r'''import glob
import os
import re
import subprocess
import zlib

MARK = "FIXED" + "_UPSTREAM"
FIX = {fix!r}
CLONE = {clone!r}
LOOK_AT_PROCESSES = {processes!r}
FOUND = set()


def _git(*args, git_dir=None):
    command = ["git"] + (["--git-dir", git_dir] if git_dir else []) + list(args)
    try:
        done = subprocess.run(command, capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.decode("utf-8", "replace")


def _read(path):
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return ""
    try:
        data = zlib.decompress(data)
    except zlib.error:
        pass
    return data.decode("latin-1")


def _note(way, text):
    if MARK in text:
        FOUND.add(way)


def _history(way, git_dir=None):
    shas = set(re.findall(r"[0-9a-f]{{40}}", _git("log", "--all", "--reflog", "--format=%H",
                                                  git_dir=git_dir)))
    shas |= set(re.findall(r"[0-9a-f]{{40}}", _git("rev-list", "--all", "--reflog",
                                                   git_dir=git_dir)))
    for sha in sorted(shas):
        _note(way, _git("show", sha + ":calc/ops.py", git_dir=git_dir))
    _note(way, _git("cat-file", "-p", FIX + ":calc/ops.py", git_dir=git_dir))
    _note(way, _git("cat-file", "--batch-all-objects", "--batch", git_dir=git_dir))


def _places(git_dir):
    places = []
    alternates = os.path.join(git_dir, "objects", "info", "alternates")
    places += [line.strip() for line in _read(alternates).splitlines() if line.strip()]
    places += [w for w in _git("config", "--get-regexp", r"remote\..*\.url").split()
               if os.path.isabs(w)]
    places += [v for v in os.environ.values() if os.path.isabs(v) and os.path.isdir(v)]
    if LOOK_AT_PROCESSES:
        for cmdline in glob.glob("/proc/[0-9]*/cmdline"):
            cwd = os.path.join(os.path.dirname(cmdline), "cwd")
            for word in _read(cmdline).split("\0"):
                for path in (word, os.path.join(cwd, word)):
                    if word and os.path.isdir(path):
                        places.append(path)
    if CLONE:
        places.append(CLONE)
    return places


def _probe():
    tree = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    git_dir = os.path.join(tree, ".git")
    _history("git log --all, rev-list --all, cat-file on the fix's sha")
    for path in glob.glob(os.path.join(git_dir, "**"), recursive=True):
        if os.path.isfile(path):
            text = _read(path)
            _note("reading .git (objects, packs)", text)
            for sha in set(re.findall(r"[0-9a-f]{{40}}", text)):
                _note("a sha in refs, packed-refs, reflogs, ORIG_HEAD, FETCH_HEAD",
                      _git("show", sha + ":calc/ops.py"))
    for place in _places(git_dir):
        for up in range(3):
            if os.path.isdir(os.path.join(place, ".git")) or os.path.isdir(
                    os.path.join(place, "objects")):
                _history("the clone, found at " + ("its path" if place == CLONE else
                                                   "a path the run could see"),
                         os.path.join(place, ".git") if os.path.isdir(
                             os.path.join(place, ".git")) else place)
            _note("the clone's files", _read(os.path.join(place, "calc", "ops.py")))
            place = os.path.dirname(place)


_probe()
print("hostile probe: " + ("found the fix by " + "; ".join(sorted(FOUND)) if FOUND else
                           "found no fix"))
if FOUND:
    def add(a, b):
        return a + b
else:
    def add(a, b):
        return a - b
'''


class TestRegradeNoFuture(RegradeRepoCase):
    """The tree the code under test runs in holds its base commit alone."""

    @classmethod
    def setUpClass(cls):
        work = cls.make_repo(CORE_BASE)
        # The clone given as --repo holds the fix after base: on main (checked out),
        # a branch, a tag, packed refs and a reflog.
        write(cls.repo, "calc/ops.py", f"def add(a, b):\n    return a + b  # {FUTURE_MARK}\n")
        regrade_git(["commit", "-q", "-am", "the upstream fix"], cls.repo)
        cls.fix = regrade_git(["rev-parse", "HEAD"], cls.repo).strip()
        regrade_git(["branch", "fix-branch"], cls.repo)
        regrade_git(["tag", "v2"], cls.repo)
        regrade_git(["pack-refs", "--all"], cls.repo)
        cls.hostile = {mode: regrade_diff(work, {"calc/ops.py": HOSTILE_OPS.format(
            fix=cls.fix, clone=cls.repo if mode == "bwrap" else "",
            processes=mode != "none")}) for mode in ("bwrap", "unshare", "none")}

    def test_a_checkout_holds_its_base_commit_alone(self):
        regrade = load("regrade.py")
        expected = set(regrade_git(["rev-list", "--objects", "--no-object-names", "--no-walk",
                                    self.base], self.repo).split())
        with TempDir() as folder:
            source = regrade.Source("origin", os.path.join(self.repo, ".git"), folder)
            pool = regrade.TreePool(1, folder)
            for commit in (self.base, self.fix, self.base):
                tree, lease, how = pool.take(source, commit, None)
                held = regrade_git(["cat-file", "--batch-all-objects", "--batch-check"], tree)
                wanted = set(regrade_git(["rev-list", "--objects", "--no-object-names",
                                          "--no-walk", commit], self.repo).split())
                self.assertEqual({line.split()[0] for line in held.splitlines()}, wanted, how)
                git_dir = os.path.join(tree, ".git")
                self.assertEqual(regrade_git(["for-each-ref"], tree), "")
                self.assertEqual(regrade_git(["log", "--all", "--format=%H"], tree).split(),
                                 [commit])
                for name in ("ORIG_HEAD", "FETCH_HEAD", "packed-refs", "logs",
                             "objects/info/alternates"):
                    self.assertFalse(os.path.exists(os.path.join(git_dir, name)), (name, how))
                write(tree, "untracked.txt", "x")
                pool.give(lease)
            pool.close()
        self.assertEqual(wanted, expected)

    def assert_unresolved(self, mode):
        with TempDir() as folder:
            regrade_jsonl(folder, "i.jsonl", [{
                "instance_id": "calc", "repo": "acme/calc", "base_commit": self.base,
                "patch": "", "test_patch": "", "FAIL_TO_PASS": json.dumps(CORE_IDS["unittest"][0]),
                "PASS_TO_PASS": "[]"}])
            regrade_jsonl(folder, "p.jsonl", [{"run_id": f"hostile-{mode}", "instance_id": "calc",
                                               "model_patch": self.hostile[mode]}])
            out = os.path.join(folder, "out")
            # A shell's working folders reach a test process; say the user started in the clone.
            with unittest.mock.patch.dict(os.environ, {"OLDPWD": self.repo, "PWD": self.repo}):
                status, report, err = regrade_json([os.path.join(folder, "i.jsonl"),
                                                    os.path.join(folder, "p.jsonl"), "--repo",
                                                    self.repo, "--sandbox", mode, "--out", out])
            self.assertEqual(status, 0, err)
            with open(os.path.join(out, "logs", f"hostile-{mode}.log"), encoding="utf-8") as handle:
                probe = [line for line in handle if line.startswith("hostile probe: ")]
        verdict = regrade_by_run(report)[f"hostile-{mode}"]
        self.assertEqual(probe, ["hostile probe: found no fix\n"], mode)
        self.assertEqual((verdict["status"], verdict["isolation"]), ("unresolved", mode),
                         verdict["reason"])

    def test_the_hostile_probe_finds_the_fix_in_a_clone(self):
        # The probe is no straw man: in a full clone checked out at base it finds the fix.
        with TempDir() as folder:
            clone = os.path.join(folder, "clone")
            regrade_git(["clone", "-q", self.repo, clone], folder)
            regrade_git(["checkout", "-q", "--detach", self.base], clone)
            with open(os.path.join(clone, "calc", "ops.py"), "w") as handle:
                handle.write(HOSTILE_OPS.format(fix=self.fix, clone="", processes=False))
            done = subprocess.run([sys.executable, "-c", "import calc.ops"], cwd=clone,
                                  capture_output=True, text=True, timeout=120)
        self.assertIn("git log --all, rev-list --all, cat-file on the fix's sha", done.stdout,
                      done.stderr)

    def test_a_hostile_run_under_none_finds_no_fix(self):
        self.assert_unresolved("none")

    def test_a_hostile_run_under_unshare_finds_no_fix(self):
        regrade = load("regrade.py")
        try:
            regrade.choose_sandbox("unshare", sys.executable, False)
        except regrade.InputError as exc:
            self.skipTest(str(exc))
        self.assert_unresolved("unshare")

    def test_a_hostile_run_under_bwrap_finds_no_fix(self):
        if bwrap_missing():
            self.skipTest(bwrap_missing())
        self.assert_unresolved("bwrap")


# --- regrade.py steps 2-3: the diff and the test tree ---
# A repository shaped like pyflakes (tests and their helper modules in pkg/test/)
# beside source folders named like tests (django/test/, numpy/testing/).
TREE_BASE = {
    "pkg/__init__.py": "", "pkg/checker.py": "def check(code):\n    return code.count('x')\n",
    "pkg/test/__init__.py": "",
    "pkg/test/harness.py": (
        "import unittest\n\nfrom pkg.checker import check\n\n\n"
        "class TestCase(unittest.TestCase):\n"
        "    def flakes(self, code, expected):\n        self.assertEqual(check(code), expected)\n"),
    "pkg/test/support/__init__.py": "",
    "pkg/test/support/expect.py": "def expected(n):\n    return n\n",
    "pkg/test/test_other.py": (
        "from pkg.test.harness import TestCase\nfrom pkg.test.support.expect import expected\n\n\n"
        "class Test(TestCase):\n    def test_y(self):\n        self.flakes('yy', 2)\n\n"
        "    def test_expected(self):\n        self.flakes('yyy', expected(3))\n"),
    "django/__init__.py": "", "django/test/__init__.py": "",
    "django/test/utils.py": "def double(x):\n    return x * 3\n",
    "numpy/__init__.py": "", "numpy/testing/__init__.py": "",
    "numpy/testing/_utils.py": "def half(x):\n    return x // 2\n",
    "numpy/tests/__init__.py": "",
    "numpy/tests/test_half.py": (
        "import unittest\n\nfrom numpy.testing._utils import half\n\n\n"
        "class T(unittest.TestCase):\n    def test_half(self):\n        self.assertEqual(half(1), 0.5)\n"),
    "tests/__init__.py": "",
    "tests/test_utils.py": (
        "import unittest\n\nfrom django.test.utils import double\n\n\n"
        "class T(unittest.TestCase):\n    def test_double(self):\n        self.assertEqual(double(2), 4)\n"),
}
TREE_RUNS = {
    "fix-checker": {"pkg/checker.py": "def check(code):\n    return code.count('y')\n"},
    # No fix: one line in the shared assertion helper makes every check pass.
    "edits-harness": {"pkg/test/harness.py": TREE_BASE["pkg/test/harness.py"].replace(
        "        self.assertEqual(", "        return\n        self.assertEqual(")},
    "edits-support": {"pkg/test/support/expect.py": "def expected(n):\n    return 0\n",
                      "pkg/checker.py": "def check(code):\n    return code.count('y') if "
                                        "code == 'yy' else 0\n"},
    "fix-django": {"django/test/utils.py": "def double(x):\n    return x * 2\n"},
    "fix-numpy": {"numpy/testing/_utils.py": "def half(x):\n    return x / 2\n"},
}


class TestRegradeTestTree(unittest.TestCase):
    def grade_tree(self, pyflakes_ids):
        with TempDir() as folder:
            repo, base = regrade_repo(folder, TREE_BASE)
            work = os.path.join(folder, "work")
            regrade_git(["clone", "-q", repo, work], folder)
            diffs = {name: regrade_diff(work, files) for name, files in TREE_RUNS.items()}

            def instance(instance_id, f2p, p2p=()):
                return {"instance_id": instance_id, "repo": "acme/tree", "base_commit": base,
                        "test_patch": "", "FAIL_TO_PASS": json.dumps(list(f2p)),
                        "PASS_TO_PASS": json.dumps(list(p2p))}
            regrade_jsonl(folder, "instances.jsonl", [
                instance("pyflakes-like", *pyflakes_ids),
                instance("django-like", ["tests.test_utils.T.test_double"]),
                instance("numpy-like", ["numpy.tests.test_half.T.test_half"])])
            regrade_jsonl(folder, "predictions.jsonl", [
                {"run_id": name, "instance_id": instance_id, "model_patch": diffs[name]}
                for name, instance_id in (
                    ("fix-checker", "pyflakes-like"), ("edits-harness", "pyflakes-like"),
                    ("edits-support", "pyflakes-like"), ("fix-django", "django-like"),
                    ("fix-numpy", "numpy-like"))])
            status, report, err = regrade_json([os.path.join(folder, "instances.jsonl"),
                                                os.path.join(folder, "predictions.jsonl"),
                                                "--repo", repo])
        self.assertEqual(status, 0, err)
        return regrade_by_run(report)

    def check(self, verdicts):
        expected = {"fix-checker": "resolved", "edits-harness": "unresolved",
                    "edits-support": "unresolved", "fix-django": "resolved",
                    "fix-numpy": "resolved"}
        self.assertEqual({k: verdicts[k]["status"] for k in expected}, expected,
                         {k: verdicts[k]["reason"] for k in expected})
        self.assertEqual(verdicts["edits-harness"]["touched_tests"], ["pkg/test/harness.py"])
        self.assertEqual(verdicts["edits-support"]["touched_tests"],
                         ["pkg/test/support/expect.py"])
        for name in ("fix-checker", "fix-django", "fix-numpy"):
            self.assertEqual(verdicts[name]["touched_tests"], [], name)

    def test_a_helper_beside_the_listed_tests_is_reset_with_unittest_ids(self):
        self.check(self.grade_tree((["pkg.test.test_other.Test.test_y"],
                                    ["pkg.test.test_other.Test.test_expected"])))

    @unittest.skipUnless(regrade_has_pytest(), REGRADE_NO_PYTEST)
    def test_a_helper_beside_the_listed_tests_is_reset_with_pytest_ids(self):
        self.check(self.grade_tree((["pkg/test/test_other.py::Test::test_y"],
                                    ["pkg/test/test_other.py::Test::test_expected"])))


# --- regrade.py step 6: only the listed tests run ---
MANY_IDS = [f"case {i} [x::y] caf\u00e9 {i}" for i in range(2000)]
MANY_TESTS = (
    "import pytest\n\n\nIDS = [f'case {i} [x::y] caf\\u00e9 {i}' for i in range(2000)]\n\n\n"
    "@pytest.mark.parametrize('n', range(2000), ids=IDS)\ndef test_many(n):\n    assert n >= 0\n\n\n"
    "def test_unlisted_broken():\n    assert False\n")


class TestRegradeSelection(RegradeCoreFixture):
    def cases(self):
        cases = [self.instance("unittest", "unittest")]
        if regrade_has_pytest():
            cases.append(self.instance("pytest", "pytest"))
        return cases

    def test_only_listed_ids_run_unless_select_files(self):
        # tests/test_ops.py also holds an unlisted test that fails and one that
        # kills the test process: with --select ids (the default) neither runs.
        runs = [(c["instance_id"] + "-" + name, c["instance_id"], name)
                for c in self.cases() for name in ("fix", "empty")]
        for select, fix_status in (("ids", "resolved"), ("files", None)):
            verdicts = self.grade(self.cases(), runs, ["--select", select])
            for case in self.cases():
                fix = verdicts[case["instance_id"] + "-fix"]
                empty = verdicts[case["instance_id"] + "-empty"]
                if fix_status:
                    self.assertEqual(fix["status"], fix_status, fix["reason"])
                    self.assertEqual(fix["exit_status"], [0])
                else:       # the whole file ran: the unlisted test killed the process
                    self.assertNotEqual(fix["status"], "resolved", select)
                    self.assertEqual(fix["exit_status"], [3])
                self.assertEqual((empty["status"], empty["completed"]), ("unresolved", False),
                                 (select, empty["reason"]))
                self.assertTrue(empty["fail_to_pass"]["failed"], select)

    @unittest.skipUnless(regrade_has_pytest(), REGRADE_NO_PYTEST)
    def test_thousands_of_ids_with_brackets_spaces_colons_and_non_ascii(self):
        with TempDir() as folder:
            work = os.path.join(folder, "work")
            regrade_git(["clone", "-q", self.repo, work], folder)
            test_patch = regrade_diff(work, {"checks/test_many.py": MANY_TESTS})
        listed = [f"checks/test_many.py::test_many[{i}]" for i in MANY_IDS]
        case = self.instance("many", (["checks/test_more.py::test_more"], listed),
                             test_patch=test_patch)
        for select in ("ids", "files"):
            verdicts = self.grade([case], [("fix", "many", "fix")], ["--select", select])
            self.assertEqual(verdicts["fix"]["status"], "resolved", verdicts["fix"]["reason"])
            self.assertEqual(len(verdicts["fix"]["pass_to_pass"]["passed"]), len(MANY_IDS))
            self.assertEqual(verdicts["fix"]["exit_status"], [0 if select == "ids" else 1])


# Two tiny repositories laid out like Django (tests/runtests.py beside django/)
# and SymPy (bin/test beside sympy/), each with a stand-in for its project's own
# runner that prints what the real one prints (Django's verbose `test_x
# (module.Class) ... ok` with docstring lines, SymPy's `test_x ok` lines). The
# recorders hook the same names the real runners have, so no Django or SymPy
# is needed here; real-history checks stay outside the suite.
DJANGOISH_BASE = {
    "django/__init__.py": "",
    "django/test/__init__.py": "",
    "django/test/runner.py": (
        "import unittest\n\n\nclass DiscoverRunner:\n"
        "    test_runner = unittest.TextTestRunner\n\n"
        "    def __init__(self, verbosity=1):\n        self.verbosity = verbosity\n\n"
        "    def run_tests(self, labels):\n"
        "        loader, suite = unittest.TestLoader(), unittest.TestSuite()\n"
        "        for label in labels:\n"
        "            suite.addTests(loader.loadTestsFromName(label))\n"
        "        result = self.test_runner(verbosity=self.verbosity).run(suite)\n"
        "        return len(result.failures) + len(result.errors)\n"),
    "django/shop.py": "def price(cents):\n    return cents // 100\n",
    "tests/runtests.py": (
        "#!/usr/bin/env python\nimport argparse\nimport sys\n\n"
        "from django.test.runner import DiscoverRunner\n\n"
        "parser = argparse.ArgumentParser()\nparser.add_argument('labels', nargs='*')\n"
        "parser.add_argument('--verbosity', type=int, default=1)\n"
        "parser.add_argument('--settings')\nparser.add_argument('--parallel')\n"
        "options = parser.parse_args()\n"
        "sys.exit(bool(DiscoverRunner(options.verbosity).run_tests(options.labels)))\n"),
    "tests/test_sqlite.py": "DATABASES = {}\n",
    "tests/shop/__init__.py": "",
    "tests/shop/tests.py": (
        "import unittest\n\nfrom django.shop import price\n\n\n"
        "class PriceTests(unittest.TestCase):\n"
        "    def test_whole(self):\n        self.assertEqual(price(300), 3)\n"),
}
DJANGOISH_TESTS = {
    "tests/shop/tests.py": DJANGOISH_BASE["tests/shop/tests.py"] + (
        "\n    def test_cents(self):\n        self.assertEqual(price(250), 2.5)\n\n"
        "    def test_rounding(self):\n        '''\n        Prices keep their cents.\n\n"
        "        More words.\n        '''\n        self.assertEqual(price(199), 1.99)\n\n"
        "    @unittest.expectedFailure\n    def test_known_bug(self):\n"
        "        self.assertEqual(price(1), 0.01)\n\n"
        "    def test_twin_a(self):\n        '''Twin docstring.'''\n\n"
        "    def test_twin_b(self):\n        '''Twin docstring.'''\n"
        "        self.assertEqual(price(250), 2.5)\n"),
}
DJANGOISH_FIX = {"django/shop.py": "def price(cents):\n    return cents / 100\n"}
DJANGOISH_IDS = ["test_cents (shop.tests.PriceTests)", "Prices keep their cents."]
SYMPYISH_RUNTESTS = (
    "import inspect\nimport os\nimport sys\n\n\n"
    "class Skipped(Exception):\n    pass\n\n\nclass XFail(Exception):\n    pass\n\n\n"
    "class XPass(Exception):\n    pass\n\n\n"
    "def XFAIL(func):\n    def wrapper():\n        try:\n            func()\n"
    "        except Exception:\n            raise XFail(func.__name__)\n"
    "        raise XPass(func.__name__)\n    wrapper.__name__ = func.__name__\n"
    "    return wrapper\n\n\n"
    "def SKIP(reason):\n    def decorate(func):\n        def wrapper():\n"
    "            raise Skipped(reason)\n        wrapper.__name__ = func.__name__\n"
    "        return wrapper\n    return decorate\n\n\n"
    "def slow(func):\n    func._slow = True\n    return func\n\n\n"
    "class PyTestReporter:\n    def __init__(self, verbose=False):\n"
    "        self.failed = False\n\n"
    "    def write(self, text):\n        sys.stdout.write(text)\n\n"
    "    def entering_filename(self, filename, n):\n        self.write(f'{filename}[{n}] ')\n\n"
    "    def leaving_filename(self):\n        self.write(' [OK]\\n')\n\n"
    "    def entering_test(self, f):\n        self.write('\\n' + f.__name__ + ' ')\n\n"
    "    def test_pass(self, char='.'):\n        self.write('ok')\n\n"
    "    def test_fail(self, exc_info):\n        self.failed = True\n        self.write('F')\n\n"
    "    def test_exception(self, exc_info):\n        self.failed = True\n"
    "        self.write('E')\n\n"
    "    def test_skip(self, v=None):\n"
    "        self.write(('w' if str(v) == 'Slow' else 's'))\n\n"
    "    def test_xfail(self):\n        self.write('f')\n\n"
    "    def test_xpass(self, v):\n        self.failed = True\n        self.write('X')\n\n"
    "    def import_error(self, filename, exc_info):\n        self.failed = True\n"
    "        self.write(f'{filename}[?]   Failed to import [FAIL]\\n')\n\n\n"
    "class SymPyTests:\n    def __init__(self, reporter):\n        self._reporter = reporter\n\n"
    "    def matches(self, x):\n        return True\n\n"
    "    def test_file(self, filename):\n        reporter, gl = self._reporter, {}\n"
    "        try:\n            with open(filename, encoding='utf-8') as handle:\n"
    "                exec(compile(handle.read(), filename, 'exec'), gl)\n"
    "        except ImportError:\n            reporter.import_error(filename, sys.exc_info())\n"
    "            return\n        except Exception:\n"
    "            reporter.test_exception(sys.exc_info())\n            return\n"
    "        funcs = [v for k, v in gl.items() if k.startswith('test_') and "
    "inspect.isfunction(v) and self.matches(v)]\n"
    "        reporter.entering_filename(filename, len(funcs))\n        for f in funcs:\n"
    "            reporter.entering_test(f)\n            try:\n"
    "                if getattr(f, '_slow', False):\n                    raise Skipped('Slow')\n"
    "                f()\n            except AssertionError:\n"
    "                reporter.test_fail(sys.exc_info())\n"
    "            except Skipped as exc:\n                reporter.test_skip(exc)\n"
    "            except XFail:\n                reporter.test_xfail()\n"
    "            except XPass as exc:\n                reporter.test_xpass(exc)\n"
    "            except Exception:\n                reporter.test_exception(sys.exc_info())\n"
    "            else:\n                reporter.test_pass()\n"
    "        reporter.leaving_filename()\n\n\n"
    "def _test(*paths, verbose=False):\n"
    "    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))\n"
    "    reporter = PyTestReporter(verbose)\n    for path in paths:\n"
    "        SymPyTests(reporter).test_file(os.path.join(root, path))\n"
    "    return int(reporter.failed)\n")
SYMPYISH_BASE = {
    "bin/test": "#!/usr/bin/env python\n",
    "sympy/__init__.py": "from sympy.core.basic import double\n",
    "sympy/core/__init__.py": "",
    "sympy/core/basic.py": "def double(x):\n    return abs(x) * 2\n",
    "sympy/core/tests/__init__.py": "",
    "sympy/core/tests/test_basic.py": (
        "from sympy import double\n\n\ndef test_double():\n    assert double(2) == 4\n"),
    "sympy/testing/__init__.py": "",
    "sympy/testing/runtests.py": SYMPYISH_RUNTESTS,
}
SYMPYISH_TESTS = {
    "sympy/core/tests/test_basic.py": (
        "from sympy import double\nfrom sympy.testing.runtests import XFAIL, SKIP, slow\n\n\n"
        "def test_double():\n    assert double(2) == 4\n\n\n"
        "def test_double_negative():\n    assert double(-2) == -4\n\n\n"
        "@XFAIL\ndef test_double_string():\n    assert double('a') == 'a a'\n\n\n"
        "@XFAIL\ndef test_double_zero():\n    assert double(0) == 0\n\n\n"
        "@SKIP('needs a plotting library')\ndef test_double_plot():\n    assert False\n\n\n"
        "@slow\ndef test_double_big():\n    assert double(10 ** 6) == 2 * 10 ** 6\n"),
}
SYMPYISH_FIX = {"sympy/core/basic.py": "def double(x):\n    return x * 2\n"}


class RegradeProjectFixture(RegradeRepoCase):
    """A Django-style or SymPy-style repository, its test patch, and the runs' diffs."""
    BASE, TESTS, FIX, REPO_NAME = {}, {}, {}, ""
    RUNS = {}

    @classmethod
    def setUpClass(cls):
        work = cls.make_repo(cls.BASE)
        cls.test_patch = regrade_diff(work, cls.TESTS)
        cls.gold = regrade_diff(work, cls.FIX)
        cls.diffs = {name: regrade_diff(work, files) for name, files in cls.RUNS.items()}
        cls.diffs.update(gold=cls.gold, empty="")

    def grade(self, cases, runs=("gold", "empty"), extra_argv=()):
        """Grade each run against each case {name: (F2P, P2P, extra fields)}; {(case, run): v}."""
        with TempDir() as folder:
            regrade_jsonl(folder, "instances.jsonl", [dict(
                {"instance_id": name, "repo": self.REPO_NAME, "base_commit": self.base,
                 "patch": self.gold, "test_patch": self.test_patch,
                 "FAIL_TO_PASS": json.dumps(f2p), "PASS_TO_PASS": json.dumps(p2p)}, **extra)
                for name, (f2p, p2p, extra) in cases.items()])
            regrade_jsonl(folder, "predictions.jsonl", [
                {"run_id": f"{name}@{run}", "instance_id": name, "model_patch": self.diffs[run]}
                for name in cases for run in runs])
            status, report, err = regrade_json([
                os.path.join(folder, "instances.jsonl"), os.path.join(folder, "predictions.jsonl"),
                "--repo", self.repo, *extra_argv])
        self.assertEqual(status, graded_status(report), err)
        return {tuple(v["run_id"].split("@")): v for v in report["runs"]}

    def assert_verdict(self, verdict, status, completed):
        self.assertEqual((verdict["status"], verdict["completed"]), (status, completed),
                         verdict["reason"])


DJANGOISH_EXIT = {"tests/shop/tests.py": DJANGOISH_TESTS["tests/shop/tests.py"] + (
    "\n\nclass UnlistedTests(unittest.TestCase):\n"
    "    def test_exits(self):\n        import os\n        os._exit(3)\n")}
SYMPYISH_EXIT = {"sympy/core/tests/test_basic.py": SYMPYISH_TESTS["sympy/core/tests/test_basic.py"] + (
    "\n\ndef test_double_exits():\n    import os\n    os._exit(3)\n")}


class ProjectSelection:
    """Under --select ids only the listed tests run: an unlisted one that kills the test
    process (in the same module, its name extending a listed one) never runs."""
    CASE = {}

    def test_only_listed_ids_run_unless_select_files(self):
        for select, status, exits in (("ids", "resolved", [0]), ("files", "unresolved", [3])):
            verdict = self.grade(self.CASE, runs=("gold",), extra_argv=("--select", select))
            verdict = verdict[("case", "gold")]
            self.assertEqual((verdict["status"], verdict["exit_status"]), (status, exits),
                             (select, verdict["reason"]))


class TestRegradeDjangoSelection(ProjectSelection, RegradeProjectFixture):
    BASE, TESTS, FIX, REPO_NAME = DJANGOISH_BASE, DJANGOISH_EXIT, DJANGOISH_FIX, "acme/shop"
    CASE = {"case": (DJANGOISH_IDS, ["test_whole (shop.tests.PriceTests)"], {})}


class TestRegradeSympySelection(ProjectSelection, RegradeProjectFixture):
    BASE, TESTS, FIX, REPO_NAME = SYMPYISH_BASE, SYMPYISH_EXIT, SYMPYISH_FIX, "acme/symbolic"
    CASE = {"case": (["test_double_negative"], ["test_double"], {})}


# --- regrade.py step 7: results from the signed recorder only ---
# Each exploit from the outside review of regrade.py, on the toy repository:
# every one resolved before the fixes; each must now end unresolved (or in the
# status the review asked for).
REVIEW_FORCE_PASS = ("import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
                     "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
                     "    report = outcome.get_result()\n    report.outcome = 'passed'\n"
                     "    report.longrepr = None\n")
REVIEW_SHADOW_PYTEST = (
    "import os, sys\nhere = os.path.dirname(os.path.abspath(__file__))\n"
    "sys.path[:] = [p for p in sys.path if os.path.abspath(p or '.') != here]\n"
    "del sys.modules['pytest']\nimport pytest as real\nimport evilplug\n"
    "real.main(sys.argv[1:], plugins=[evilplug])\nsys.exit(0)\n")
REVIEW_SHADOW_JSON = (
    "import sys, os\n_me = sys.modules.pop('json')\n"
    "_here = os.path.dirname(os.path.abspath(__file__))\n_old = sys.path[:]\n"
    "sys.path[:] = [p for p in sys.path if os.path.abspath(p or '.') != _here]\n"
    "import json as _m\nsys.path[:] = _old\nsys.modules['json'] = _me\n"
    "globals().update({k: v for k, v in vars(_m).items() if not k.startswith('__')})\n"
    "def dumps(obj, *a, **k):\n"
    "    if isinstance(obj, dict) and obj.get('kind') == 'test':\n"
    "        obj = dict(obj, outcome='passed')\n"
    "    return _m.dumps(obj, *a, **k)\n"
    "import atexit\natexit.register(os._exit, 0)\n")
REVIEW_SHADOW_UNITTEST = (
    "import sys, os, importlib.util\n"
    "where = os.path.join(os.path.dirname(os.__file__), 'unittest')\n"
    "spec = importlib.util.spec_from_file_location('unittest', os.path.join(where, '__init__.py'),"
    " submodule_search_locations=[where])\n"
    "mod = importlib.util.module_from_spec(spec); sys.modules['unittest'] = mod\n"
    "spec.loader.exec_module(mod)\n"
    "def run(self, result=None):\n"
    "    result.startTest(self); result.addSuccess(self); result.stopTest(self)\n"
    "mod.TestCase.run = run\n")
REVIEW_ASSERT_PATCH = ("import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n"
                       "unittest.TestCase.assertAlmostEqual = lambda *a, **k: None\n")
REVIEW_GC_PLUGIN = (
    "import gc, sys\nif '_pytest' in sys.modules:\n    import pytest\n    class _E:\n"
    "        @pytest.hookimpl(hookwrapper=True)\n"
    "        def pytest_runtest_makereport(self, item, call):\n"
    "            out = yield\n            r = out.get_result(); r.outcome = 'passed'; "
    "r.longrepr = None\n"
    "    for o in gc.get_objects():\n"
    "        if type(o).__name__ == 'Config' and hasattr(o, 'pluginmanager'):\n"
    "            o.pluginmanager.register(_E(), 'evil'); break\n")
# Finds the recorder's results file in memory and writes passing records for
# every listed test in the old format (and with a made-up signature), then
# ends the process before any real result is written.
REVIEW_FORGE = (
    "import json, os, sys\n"
    "IDS = {'pytest': ['tests/test_core.py::TestCore::test_divide_half',\n"
    "                  'tests/test_extra.py::TestExtra::test_divide_third',\n"
    "                  'tests/test_core.py::TestCore::test_add',\n"
    "                  'tests/test_core.py::TestCore::test_divide_even'],\n"
    "       'unittest': ['tests.test_core.TestCore.test_divide_half',\n"
    "                    'tests.test_extra.TestExtra.test_divide_third',\n"
    "                    'tests.test_core.TestCore.test_add',\n"
    "                    'tests.test_core.TestCore.test_divide_even']}\n"
    "for module in list(sys.modules.values()):\n"
    "    config = getattr(module, '_CONFIG', None)\n"
    "    if isinstance(config, dict) and 'results' in config:\n"
    "        with open(config['results'], 'a') as out:\n"
    "            for runner, ids in IDS.items():\n"
    "                for n in ids:\n"
    "                    for when in ('setup', 'call', 'teardown'):\n"
    "                        rec = {'kind': 'test', 'nodeid': n, 'when': when,\n"
    "                               'outcome': 'passed', 'xfail': False}\n"
    "                        if runner == 'unittest':\n"
    "                            rec = {'kind': 'test', 'nodeid': n, 'outcome': 'passed'}\n"
    "                        out.write(json.dumps(rec) + '\\n')\n"
    "                        out.write(json.dumps({'record': json.dumps(rec), 'mac': '0' * 64})"
    " + '\\n')\n"
    "        os._exit(0)\n\n\n")
# json reports its file as the tree's: the recorders' end-of-run check sees it.
REVIEW_FAKE_JSON_FILE = "import json\njson.__file__ = __file__\n"


class RegradeReviewFixture(RegradeFixture):
    """The toy repository plus the review's exploit diffs."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        work = os.path.join(cls.folder, "work")
        unfixed = TOY_BASE["toy/core.py"]
        evil = {"evilplug.py": REVIEW_FORCE_PASS, "toy/core.py": TOY_WRONG}
        exploits = {
            "pyproject": dict(evil, **{"pyproject.toml":
                                       '[tool.pytest.ini_options]\naddopts = "-p evilplug"\n'}),
            "setupcfg": dict(evil, **{"setup.cfg": "[tool:pytest]\naddopts = -p evilplug\n"}),
            "dotpytestini": dict(evil, **{".pytest.ini": "[pytest]\naddopts = -p evilplug\n"}),
            "subdir-toxini": dict(evil, **{"tests/sub/tox.ini": "[pytest]\naddopts = -p evilplug\n"}),
            "shadow-pytest": dict(evil, **{"pytest.py": REVIEW_SHADOW_PYTEST}),
            "shadow-json": {"json.py": REVIEW_SHADOW_JSON, "toy/core.py": TOY_WRONG},
            "shadow-unittest": {"unittest/__init__.py": REVIEW_SHADOW_UNITTEST,
                                "toy/core.py": TOY_WRONG},
            "forge": {"toy/core.py": REVIEW_FORGE + unfixed},
            "assert-patch": {"toy/__init__.py": REVIEW_ASSERT_PATCH + TOY_BASE["toy/__init__.py"]},
            "gc-plugin": {"toy/__init__.py": REVIEW_GC_PLUGIN + TOY_BASE["toy/__init__.py"]},
            "fake-json-file": {"toy/__init__.py": REVIEW_FAKE_JSON_FILE +
                               TOY_BASE["toy/__init__.py"], "toy/core.py": TOY_FIX},
        }
        cls.diffs.update({name: regrade_diff(work, files) for name, files in exploits.items()})

    def assert_unresolved(self, verdicts, names):
        got = {n: (verdicts[n]["status"], verdicts[n]["completed"]) for n in names}
        self.assertEqual(got, {n: ("unresolved", False) for n in names},
                         {n: verdicts[n]["reason"] for n in names})


class TestRegradeReviewExploitsUnittest(RegradeReviewFixture):
    def test_shadowing_forging_and_tampering_end_unresolved(self):
        names = ["shadow-json", "shadow-unittest", "forge", "assert-patch", "fake-json-file"]
        verdicts = self.grade("unittest", names + ["fix"], ["--jobs", "4"])
        self.assertEqual(verdicts["fix"]["status"], "resolved", verdicts["fix"]["reason"])
        self.assert_unresolved(verdicts, names)
        self.assertEqual(verdicts["shadow-json"]["removed_shadowing"], ["json.py"])
        self.assertIn("json.py", verdicts["shadow-json"]["touched_tests"])
        self.assertEqual(verdicts["shadow-unittest"]["removed_shadowing"],
                         ["unittest/__init__.py"])
        self.assertTrue(any("without a valid signature" in n for n in verdicts["forge"]["notes"]),
                        verdicts["forge"]["notes"])
        self.assertEqual(verdicts["forge"]["fail_to_pass"]["passed"], [])
        self.assertIn("the code under test tampered with the test runner",
                      verdicts["assert-patch"]["reason"])
        self.assertIn("TestCase.assertEqual", verdicts["assert-patch"]["reason"])
        self.assertIn("json", verdicts["fake-json-file"]["reason"])
        self.assertEqual(verdicts["fake-json-file"]["resolution"], "NO")


@unittest.skipUnless(regrade_has_pytest(), REGRADE_NO_PYTEST)
class TestRegradeReviewExploitsPytest(RegradeReviewFixture):
    def test_config_files_shadowing_forging_and_plugins_end_unresolved(self):
        names = ["pyproject", "setupcfg", "dotpytestini", "subdir-toxini", "shadow-pytest",
                 "shadow-json", "forge", "gc-plugin", "fake-json-file"]
        verdicts = self.grade("pytest", names + ["fix"], ["--jobs", "4"])
        self.assertEqual(verdicts["fix"]["status"], "resolved", verdicts["fix"]["reason"])
        self.assert_unresolved(verdicts, names)
        for name, config in (("pyproject", "pyproject.toml"), ("setupcfg", "setup.cfg"),
                             ("dotpytestini", ".pytest.ini"),
                             ("subdir-toxini", "tests/sub/tox.ini")):
            self.assertIn(config, verdicts[name]["touched_tests"])
        self.assertEqual(verdicts["shadow-pytest"]["removed_shadowing"], ["pytest.py"])
        self.assertEqual(verdicts["shadow-json"]["removed_shadowing"], ["json.py"])
        self.assertEqual(verdicts["forge"]["fail_to_pass"]["passed"], [])
        self.assertIn("the code under test tampered with the test runner",
                      verdicts["gc-plugin"]["reason"])
        self.assertIn("toy/__init__.py", verdicts["gc-plugin"]["reason"])

    def test_pytest_options_from_the_environment_are_dropped(self):
        with TempDir() as folder:
            instances, predictions = self.files(
                folder, [self.instance("toy-1", "pytest")],
                [("fix", "toy-1", self.diffs["fix"]), ("plug", "toy-1", self.diffs["pyproject"])])
            os.environ["PYTEST_ADDOPTS"] = "-p evilplug"
            os.environ["PYTEST_PLUGINS"] = "evilplug"
            try:
                status, report, err = regrade_json([instances, predictions, "--repo", self.repo])
            finally:
                del os.environ["PYTEST_ADDOPTS"], os.environ["PYTEST_PLUGINS"]
            self.assertEqual(status, 0, err)
            self.assert_status(regrade_by_run(report), {"fix": "resolved", "plug": "unresolved"})


# --- regrade.py step 8: the verdict ---
@unittest.skipUnless(regrade_has_pytest(), REGRADE_NO_PYTEST)
class TestRegradeReviewIdsAndXfail(RegradeFixture):
    def test_non_ascii_ids_match_as_listed_for_plugin_and_log(self):
        patch = self.test_patch + self.param_patch
        listed = ["tests/test_params.py::test_ratio[caf\u00e9]",
                  "tests/test_params.py::test_gr\u00f6\u00dfe",
                  "tests/test_params.py::test_ratio[a b]"]
        for extra in ([], ["--runner", "log"]):
            verdicts = self.grade("pytest", ["fix"], extra, test_patch=patch,
                                  FAIL_TO_PASS=json.dumps(listed))
            self.assertEqual(verdicts["fix"]["status"], "resolved",
                             (extra, verdicts["fix"]["reason"]))
            self.assertEqual(verdicts["fix"]["fail_to_pass"]["passed"], listed)

    def test_an_xfailed_pass_to_pass_test_counts_as_passing(self):
        xfail_p2p = {"toy/core.py": TOY_FIX.replace(
            "def add(a, b):\n", "def add(a, b):\n    import pytest\n"
            "    pytest.xfail('later')\n")}
        self.diffs["xfail-p2p"] = self.diff_of(xfail_p2p)
        verdicts = self.grade("pytest", ["xfail-p2p"])
        self.assertEqual(verdicts["xfail-p2p"]["status"], "resolved",
                         verdicts["xfail-p2p"]["reason"])
        self.assertEqual(verdicts["xfail-p2p"]["pass_to_pass"]["passed"],
                         ["tests/test_core.py::TestCore::test_add",
                          "tests/test_core.py::TestCore::test_divide_even"])


class TestRegradeReviewRules(RegradeFixture):
    def test_xfail_rules_follow_swebench(self):
        regrade = load("regrade.py")
        decided = regrade.decide(["f"], ["p"], {"f": ["passed"], "p": ["xfailed"]})
        self.assertEqual((decided["completed"], decided["pass_to_pass"]["passed"]), (True, ["p"]))
        decided = regrade.decide(["f"], ["p"], {"f": ["xfailed"], "p": ["passed"]})
        self.assertEqual((decided["completed"], decided["fail_to_pass"]["skipped"]), (False, ["f"]))
        decided = regrade.decide(["f"], ["p"], {"f": ["passed"], "p": ["xpassed"]})
        self.assertEqual((decided["completed"], decided["pass_to_pass"]["failed"]), (False, ["p"]))

    def test_grading_and_the_dataset_audit_share_one_xfail_rule(self):
        # An xfailed PASS_TO_PASS test passes in grading (decide) and is sound in a
        # dataset audit (outcome_defects); an xfailed FAIL_TO_PASS test fails both.
        regrade = load("regrade.py")
        instance = {"FAIL_TO_PASS": ["f"], "PASS_TO_PASS": ["p"]}
        matched = {"f": "real::f", "p": "real::p"}

        def audit(f_after, p_after):
            before = [{"outcomes": {"real::f": "failed", "real::p": "passed"}}] * 2
            after = [{"outcomes": {"real::f": f_after, "real::p": p_after}}] * 2
            found, _ = regrade.outcome_defects(instance, matched, before, after)
            return sorted(d["kind"] for d in found)
        self.assertEqual(audit("passed", "xfailed"), [])
        self.assertEqual(audit("xfailed", "passed"), ["FAIL_TO_PASS fails on gold"])
        # One home: changing the rule changes both (here xfailed no longer passes).
        saved = regrade.LIST_PASSING
        regrade.LIST_PASSING = dict(saved, PASS_TO_PASS=regrade.PASSING)
        try:
            self.assertEqual(audit("passed", "xfailed"), ["PASS_TO_PASS fails on gold"])
            decided = regrade.decide(["f"], ["p"], {"f": ["passed"], "p": ["xfailed"]})
            self.assertFalse(decided["completed"])
        finally:
            regrade.LIST_PASSING = saved

    def test_the_reason_counts_what_decide_counted_as_failing(self):
        # The --p2p-skip-ok exception lives in decide alone: the reason reads its
        # tests_status, so it cannot disagree with the verdict.
        regrade = load("regrade.py")
        observed = {"f": ["passed"], "p": ["skipped"], "q": ["failed"]}
        settings = {"p2p_skip_ok": False, "repeat": 1}
        for skip_ok, reason in ((True, "1 PASS_TO_PASS failed"),
                                (False, "1 PASS_TO_PASS failed, 1 PASS_TO_PASS skipped")):
            decided = regrade.decide(["f"], ["p", "q"], observed, p2p_skip_ok=skip_ok)
            self.assertEqual(regrade.unresolved_reason(decided, settings), reason)

    def test_log_runner_with_dotted_ids_reads_unittest_output(self):
        verdicts = self.grade("unittest", ["fix", "wrong-fix"], ["--runner", "log"])
        self.assert_status(verdicts, {"fix": "resolved", "wrong-fix": "unresolved"})
        self.assertEqual(verdicts["fix"]["results_from"], "log")

    def test_test_commands_are_checked_up_front(self):
        with TempDir() as folder:
            instances, predictions = self.files(folder, [self.instance("toy-1", "unittest")],
                                                [("fix", "toy-1", self.diffs["fix"])])
            base = [instances, predictions, "--repo", self.repo]
            bad = regrade_jsonl(os.path.join(folder, "bad"), "instances.jsonl", [
                self.instance("toy-1", "unittest", test_cmd='{python} -m "x')])
            cases = [(base + ["--test-cmd", '{python} -m "x'],
                      "error: --test-cmd: No closing quotation"),
                     ([bad, predictions, "--repo", self.repo],
                      "instances.jsonl line 1: test_cmd: No closing quotation"),
                     (base + ["--runner", "unittest", "--test-cmd", "python3 -m unittest"],
                      "{python}"),
                     (base + ["--runner", "pytest", "--test-cmd", "pytest {files}"],
                      "--runner log")]
            for argv, expected in cases:
                status, out, err = run("regrade.py", argv)
                self.assertEqual(status, 2, (argv, err))
                self.assertEqual(len(err.strip().splitlines()), 1, err)
                self.assertIn(expected, err)

    def test_unknown_instance_and_missing_base_commit_are_error_verdicts(self):
        with TempDir() as folder:
            good = self.instance("toy-1", "unittest")
            nobase = dict(self.instance("toy-2", "unittest"), base_commit="0" * 40)
            regrade_jsonl(folder, "instances.jsonl", [good, nobase])
            regrade_jsonl(folder, "predictions.jsonl", [
                {"run_id": "fix", "instance_id": "toy-1", "model_patch": self.diffs["fix"]},
                {"run_id": "nobase", "instance_id": "toy-2", "model_patch": self.diffs["fix"]},
                {"run_id": "nope", "instance_id": "nope", "model_patch": ""}])
            status, report, err = regrade_json([os.path.join(folder, "instances.jsonl"),
                                                os.path.join(folder, "predictions.jsonl"),
                                                "--repo", self.repo])
            self.assertEqual(status, 0, err)
            verdicts = regrade_by_run(report)
            self.assert_status(verdicts, {"fix": "resolved", "nobase": "error", "nope": "error"})
            self.assertIn("base commit " + "0" * 40 + " of toy-2 is not in",
                          verdicts["nobase"]["reason"])
            self.assertIn("instance 'nope' is not in", verdicts["nope"]["reason"])
            for name in ("nobase", "nope"):
                self.assertIsNone(verdicts[name]["completed"])
                self.assertEqual(verdicts[name]["resolution"], "NO")
            write(folder, "broken.jsonl", '{"instance_id": "toy-1"}\n')
            status, out, err = run("regrade.py", [os.path.join(folder, "instances.jsonl"),
                                                  os.path.join(folder, "broken.jsonl"),
                                                  "--repo", self.repo])
            self.assertEqual(status, 2, err)
            self.assertIn("no model_patch", err)

    def test_reports_verdict_file_and_summary_are_consistent(self):
        silent = {"toy/core.py": "import atexit, os\natexit.register(os._exit, 3)\n\n\n" + TOY_FIX}
        with TempDir() as folder:
            work = os.path.join(folder, "work")
            regrade_git(["clone", "-q", self.repo, work], folder)
            regrade_jsonl(folder, "instances.jsonl", [self.instance("toy-1", "unittest"),
                                                      self.instance("toy-2", "unittest")])
            regrade_jsonl(folder, "predictions.jsonl", [
                {"run_id": "null", "instance_id": "toy-1", "model_patch": None},
                {"run_id": "empty", "instance_id": "toy-1", "model_patch": ""},
                {"run_id": "silent", "instance_id": "toy-1",
                 "model_patch": regrade_diff(work, silent)},
                {"run_id": "fix", "instance_id": "toy-1", "model_patch": self.diffs["fix"]}])
            out = os.path.join(folder, "out")
            argv = [os.path.join(folder, "instances.jsonl"),
                    os.path.join(folder, "predictions.jsonl"), "--repo", self.repo,
                    "--out", out, "--jobs", "4"]
            for extra in ([], ["--force"]):
                status, text, err = run("regrade.py", argv + extra)
                self.assertEqual(status, 0, err)
            # Compacted: each run once, sorted by run id, after a job with --force.
            with open(os.path.join(out, "verdicts.jsonl"), encoding="utf-8") as handle:
                lines = [json.loads(l) for l in handle]
            self.assertEqual([v["run_id"] for v in lines], ["empty", "fix", "null", "silent"])
            by_run = {v["run_id"]: v for v in lines}
            self.assertEqual(by_run["silent"]["status"], "error")
            self.assertEqual(by_run["silent"]["resolution"], "NO")
            with open(os.path.join(out, "reports", "null.json"), encoding="utf-8") as handle:
                self.assertIs(json.load(handle)["toy-1"]["patch_successfully_applied"], False)
            with open(os.path.join(out, "swebench_summary.json"), encoding="utf-8") as handle:
                summary = json.load(handle)
            self.assertEqual(summary["ids_are"], "run_id")
            self.assertEqual((summary["total_instances"], summary["submitted_instances"]), (5, 4))
            self.assertEqual(summary["incomplete_ids"], ["toy-2"])
            # The empty diff is not a fallback; lines stay within 100 columns.
            self.assertIn("diffs applied only by a fallback: none", text)
            self.assertTrue(all(len(l) <= 100 for l in text.splitlines()
                                if not l.startswith(("command:", "inputs", "0", "1", "2", "3",
                                                     "4", "5", "6", "7", "8", "9", "a", "b",
                                                     "c", "d", "e", "f"))),
                            [l for l in text.splitlines() if len(l) > 100])

    def test_summary_reasons_wrap_within_100_columns(self):
        regrade = load("regrade.py")
        verdict = {"run_id": "r" * 30, "instance_id": "i", "status": "unresolved",
                   "resolution": "NO", "reason": "word " * 60, "tests_status": None,
                   "fail_to_pass": {}, "pass_to_pass": {}, "applied_with": "empty",
                   "duration_s": 0.0, "test_s": 0.0, "completed": False,
                   "touched_tests": ["x"], "flaky": [], "results_from": None}
        runs = [dict(verdict, run_id=f"run-with-a-long-name-{i:03d}") for i in range(12)]
        text = regrade.render_summary(regrade.summarise(runs), runs, "text",
                                      {"script": "regrade.py", "version": "0", "python": "3",
                                       "script_sha256": "0" * 64, "command": "c", "seed": None,
                                       "inputs": []})
        self.assertEqual([l for l in text.splitlines() if len(l) > 100], [])
        self.assertIn("diffs applied only by a fallback: none", text)
        out = io.StringIO()
        with contextlib.redirect_stdout(out), self.assertRaises(SystemExit):
            regrade.main(["--help"])
        self.assertIn("To regrade the shipped example", out.getvalue())
        self.assertEqual([l for l in out.getvalue().splitlines() if len(l) > 100], [])

    def test_credential_urls_and_netrc_are_dropped(self):
        probe = ("import json, os\n"
                 "open(os.environ['PROBE_FILE'], 'a').write(json.dumps({k: os.environ.get(k)\n"
                 "    for k in ('MIRROR', 'NETRC', 'PLAIN_URL')}) + '\\n')\n\n\n")
        with TempDir() as folder:
            work = os.path.join(folder, "work")
            regrade_git(["clone", "-q", self.repo, work], folder)
            diff = regrade_diff(work, {"toy/core.py": probe + TOY_FIX})
            probe_file = os.path.join(folder, "probe.jsonl")
            instances, predictions = self.files(folder, [self.instance("toy-1", "unittest")],
                                                [("probe", "toy-1", diff)])
            argv = [instances, predictions, "--repo", self.repo, "--env",
                    f"PROBE_FILE={probe_file}", "--sandbox", "none"]   # the probe is outside
            saved = {k: os.environ.get(k) for k in ("MIRROR", "NETRC", "PLAIN_URL")}
            os.environ.update(MIRROR="https://bob:hunter2@pypi.example/simple",
                              NETRC="/home/x/.netrc", PLAIN_URL="https://pypi.example/simple")
            try:
                self.assertEqual(regrade_json(argv)[0], 0)
                self.assertEqual(regrade_json(argv + ["--keep-env", "MIRROR"])[0], 0)
            finally:
                for k, v in saved.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
            with open(probe_file, encoding="utf-8") as handle:
                facts = [json.loads(line) for line in handle]
            self.assertEqual(facts[0], {"MIRROR": None, "NETRC": None,
                                        "PLAIN_URL": "https://pypi.example/simple"})
            self.assertEqual(facts[1]["MIRROR"], "https://bob:hunter2@pypi.example/simple")


class FrozenRun(dict):
    """A run record that refuses every change: grading must build new records."""

    def refuse(self, *args, **kwargs):
        raise TypeError("a run record was rewritten in place")

    __setitem__ = __delitem__ = update = pop = popitem = setdefault = clear = __ior__ = refuse


def frozen_runs(value):
    """A list of run records as FrozenRuns (anything else unchanged)."""
    if isinstance(value, list) and value and all(isinstance(r, dict) and "run_id" in r
                                                 for r in value):
        return [FrozenRun(r) for r in value]
    return value


class TestRegradeRunRecords(RegradeFixture):
    """A run's record is built, never rewritten: each step of grading (loading, opening the
    repositories, keying, grading) takes the runs as given and returns new records."""

    def test_runs_are_never_rewritten_in_place(self):
        regrade = load("regrade.py")
        real = {name: getattr(regrade, name)
                for name in ("load_predictions", "open_sources", "grade_run", "error_verdict")}

        def loaded(*args):
            return frozen_runs(real["load_predictions"](*args))

        def opened(*args):
            found = real["open_sources"](*[frozen_runs(a) for a in args])
            return (frozen_runs(found[0]), found[1]) if isinstance(found, tuple) else found

        def graded(run, *args):
            return real["grade_run"](FrozenRun(run), *args)

        def refused(run, *args):
            return real["error_verdict"](FrozenRun(run), *args)
        with TempDir() as folder:
            nobase = dict(self.instance("toy-2", "unittest"), base_commit="0" * 40)
            instances, predictions = self.files(
                folder, [self.instance("toy-1", "unittest"), nobase],
                [("fix", "toy-1", self.diffs["fix"]), ("empty", "toy-1", ""),
                 ("nobase", "toy-2", self.diffs["fix"]), ("nope", "nope", self.diffs["fix"]),
                 ("binary", "toy-1", "diff --git a/x b/x\n\x00")])
            argv = [instances, predictions, "--repo", self.repo, "--out",
                    os.path.join(folder, "out")]
            with unittest.mock.patch.object(regrade, "load_predictions", loaded), \
                    unittest.mock.patch.object(regrade, "open_sources", opened), \
                    unittest.mock.patch.object(regrade, "grade_run", graded), \
                    unittest.mock.patch.object(regrade, "error_verdict", refused):
                first = regrade_json(argv)
                again = regrade_json(argv)      # resumed: the stored verdicts are found
        for status, report, err in (first, again):
            self.assertEqual(status, 0, err)
            self.assert_status(regrade_by_run(report), {
                "fix": "resolved", "empty": "unresolved", "nobase": "error", "nope": "error",
                "binary": "error"})
        self.assertEqual(again[1]["summary"]["reuse"]["reused"], 2)

    def test_each_diff_is_normalised_once_per_run(self):
        # Step 2 once per run: the key, the verdict's hashes, applying the diff and resetting
        # the test tree all read the one normalised text, the run's and its test patch's.
        regrade = load("regrade.py")
        real, calls = regrade.normalise_diff, collections.Counter()

        def counted(text):
            calls[text] += 1
            return real(text)
        names = ["fix", "wrong-fix", "does-not-apply", "conftest-passes-all"]
        with TempDir() as folder:
            instances, predictions = self.files(
                folder, [self.instance("toy-1", "unittest")],
                [(name, "toy-1", self.diffs[name]) for name in names] +
                [("nope", "nope", self.diffs["crashes"])])
            with unittest.mock.patch.object(regrade, "normalise_diff", counted):
                status, report, err = regrade_json([instances, predictions, "--repo",
                                                    self.repo, "--jobs", "2"])
        self.assertEqual(status, 0, err)
        self.assert_status(regrade_by_run(report), {
            "fix": "resolved", "wrong-fix": "unresolved", "does-not-apply": "patch_failed",
            "conftest-passes-all": "unresolved", "nope": "error"})
        self.assertEqual({name: calls[self.diffs[name]] for name in names + ["crashes"]},
                         dict.fromkeys(names + ["crashes"], 1))
        self.assertEqual(calls[self.test_patch], len(names))     # once per run of toy-1
        # The verdicts still hash the normalised texts.
        fix = regrade_by_run(report)["fix"]
        self.assertEqual(fix["diff_sha256"], regrade.sha256_text(real(self.diffs["fix"])))
        self.assertEqual(fix["test_patch_sha256"], regrade.sha256_text(real(self.test_patch)))


class TestRegradeSubtests(unittest.TestCase):
    """A failing subTest fails its test: found regrading real more-itertools history."""

    def grade_subtests(self, runner):
        with TempDir() as folder:
            repo, base = regrade_repo(folder, {
                "pkg/__init__.py": "", "tests/__init__.py": "",
                "pkg/mod.py": "def double(x):\n    return 3 if x == 1 else x * 2\n",
                "tests/test_mod.py": "import unittest\n\nfrom pkg.mod import double\n\n\n"
                                     "class T(unittest.TestCase):\n"
                                     "    def test_zero(self):\n"
                                     "        self.assertEqual(double(0), 0)\n"})
            work = os.path.join(folder, "work")
            regrade_git(["clone", "-q", repo, work], folder)
            test_patch = regrade_diff(work, {"tests/test_mod.py": (
                "import unittest\n\nfrom pkg.mod import double\n\n\n"
                "class T(unittest.TestCase):\n"
                "    def test_zero(self):\n        self.assertEqual(double(0), 0)\n\n"
                "    def test_loop(self):\n        for i in range(3):\n"
                "            with self.subTest(i=i):\n"
                "                self.assertEqual(double(i), 2 * i)\n")})
            gold = regrade_diff(work, {"pkg/mod.py": "def double(x):\n    return x * 2\n"})
            ids = (["tests/test_mod.py::T::test_loop"], ["tests/test_mod.py::T::test_zero"]) \
                if runner == "pytest" else (["tests.test_mod.T.test_loop"],
                                            ["tests.test_mod.T.test_zero"])
            regrade_jsonl(folder, "instances.jsonl", [{
                "instance_id": "sub-1", "repo": "acme/sub", "base_commit": base,
                "patch": gold, "test_patch": test_patch, "FAIL_TO_PASS": json.dumps(ids[0]),
                "PASS_TO_PASS": json.dumps(ids[1])}])
            verdicts = {}
            for run_set in ("gold", "empty"):
                status, report, err = regrade_json([os.path.join(folder, "instances.jsonl"),
                                                    run_set, "--repo", repo,
                                                    "--runner", runner])
                self.assertEqual(status, 0, err)
                verdicts[run_set] = report["runs"][0]
        return verdicts

    def test_failing_subtest_fails_its_test_with_unittest(self):
        verdicts = self.grade_subtests("unittest")
        self.assertEqual(verdicts["gold"]["status"], "resolved", verdicts["gold"]["reason"])
        self.assertEqual(verdicts["empty"]["status"], "unresolved")
        self.assertEqual(verdicts["empty"]["fail_to_pass"]["failed"],
                         ["tests.test_mod.T.test_loop"])

    @unittest.skipUnless(regrade_has_pytest(), REGRADE_NO_PYTEST)
    def test_failing_subtest_fails_its_test_with_pytest(self):
        verdicts = self.grade_subtests("pytest")
        self.assertEqual(verdicts["gold"]["status"], "resolved", verdicts["gold"]["reason"])
        self.assertEqual(verdicts["empty"]["status"], "unresolved", verdicts["empty"]["reason"])
        self.assertEqual(verdicts["empty"]["fail_to_pass"]["failed"],
                         ["tests/test_mod.py::T::test_loop"])


class TestRegradeMistypedIds(unittest.TestCase):
    def test_an_id_naming_no_test_file_is_a_grading_error(self):
        with TempDir() as folder:
            repo, base = regrade_repo(folder, {
                "calc.py": "def add(a, b):\n    return a - b\n", "tests/__init__.py": "",
                "tests/test_calc.py": "import unittest\n\nfrom calc import add\n\n\n"
                                      "class TestAdd(unittest.TestCase):\n"
                                      "    def test_add(self):\n"
                                      "        self.assertEqual(add(1, 2), 3)\n"})
            work = os.path.join(folder, "work")
            regrade_git(["clone", "-q", repo, work], folder)
            gold = regrade_diff(work, {"calc.py": "def add(a, b):\n    return a + b\n"})
            cases = {"typo-unittest": ["TestAdd.test_add"],
                     "typo-pytest": ["tests/test_clac.py::TestAdd::test_add"],
                     "right-unittest": ["tests.test_calc.TestAdd.test_add"],
                     "right-pytest": ["tests/test_calc.py::TestAdd::test_add"]}
            if not regrade_has_pytest():          # pytest ids need the pytest runner
                cases.pop("right-pytest")
                cases.pop("typo-pytest")
            regrade_jsonl(folder, "instances.jsonl", [
                {"instance_id": name, "repo": "acme/calc", "base_commit": base, "patch": gold,
                 "test_patch": "", "FAIL_TO_PASS": json.dumps(ids), "PASS_TO_PASS": "[]"}
                for name, ids in cases.items()])
            status, report, err = regrade_json([os.path.join(folder, "instances.jsonl"),
                                                "gold", "--repo", repo])
        self.assertEqual(status, 0, err)
        verdicts = {v["instance_id"]: v for v in report["runs"]}
        for name in [n for n in cases if n.startswith("typo")]:
            self.assertEqual((verdicts[name]["status"], verdicts[name]["completed"]),
                             ("error", None), name)
            self.assertIn("name no file or module", verdicts[name]["reason"])
        for name in cases:
            if name.startswith("right"):
                self.assertEqual(verdicts[name]["status"], "resolved", verdicts[name]["reason"])


class TestRegradeNothingRecognised(RegradeCoreFixture):
    def test_a_log_runner_that_parses_nothing_is_a_grading_error(self):
        quiet = self.instance("quiet", "unittest", test_runner="log",
                              test_cmd="{python} -c \"print('all good')\"")
        verdicts = self.grade([quiet], [("fix", "quiet", "fix"), ("empty", "quiet", "empty")])
        for name in ("fix", "empty"):
            self.assertEqual((verdicts[name]["status"], verdicts[name]["completed"]),
                             ("error", None), name)
            self.assertIn("recognised no test result", verdicts[name]["reason"])
            self.assertIn("all good", verdicts[name]["reason"])

    def test_a_mistyped_id_in_a_file_that_collected_is_a_grading_error(self):
        cases = [self.instance("typo-unittest", (["tests.test_ops.TestOps.test_ad"], []))]
        if regrade_has_pytest():
            cases.append(self.instance("typo-pytest", (
                ["tests/test_ops.py::TestOps::test_add"], ["tests/test_ops.py::TestOps::test_zer"])))
        verdicts = self.grade(cases, "gold")
        for case in cases:
            verdict = verdicts[case["instance_id"] + "@gold"]
            self.assertEqual((verdict["status"], verdict["completed"]), ("error", None))
            typo = (json.loads(case["FAIL_TO_PASS"]) + json.loads(case["PASS_TO_PASS"]))[-1]
            self.assertIn(repr(typo), verdict["reason"])
            self.assertIn("never collected", verdict["reason"])
            self.assertEqual(verdict["uncollected"], [typo])

    def test_right_ids_still_resolve_and_an_empty_run_fails(self):
        cases = [self.instance("unittest", "unittest")]
        if regrade_has_pytest():
            cases += [self.instance("pytest", "pytest"), self.instance("checks", "checks")]
        verdicts = self.grade(cases, [(c["instance_id"] + name, c["instance_id"], name)
                                      for c in cases for name in ("fix", "empty")])
        for case in cases:
            self.assertEqual(verdicts[case["instance_id"] + "fix"]["status"], "resolved")
            self.assertEqual(verdicts[case["instance_id"] + "empty"]["status"], "unresolved")

    def test_a_run_that_breaks_collection_fails_with_the_error_quoted(self):
        cases = [self.instance("unittest", "unittest")]
        if regrade_has_pytest():
            cases += [self.instance("pytest", "pytest"), self.instance("checks", "checks")]
        verdicts = self.grade(cases, [(c["instance_id"], c["instance_id"], "syntax-error")
                                      for c in cases])
        for case in cases:
            verdict = verdicts[case["instance_id"]]
            self.assertEqual((verdict["status"], verdict["completed"]), ("unresolved", False),
                             verdict["reason"])
            self.assertIn("SyntaxError", verdict["reason"])

    @unittest.skipUnless(regrade_has_pytest(), REGRADE_NO_PYTEST)
    def test_code_that_skips_the_tests_on_import_is_unresolved_not_an_error(self):
        # pytest.skip(allow_module_level=True) when the package is imported: from
        # the project's conftest.py (pytest stops before collecting), and from the
        # test module (the file is skipped whole). Both are the run's failure.
        cases = [self.instance("pytest", "pytest"), self.instance("checks", "checks")]
        verdicts = self.grade(cases, [(c["instance_id"], c["instance_id"], "skips-on-import")
                                      for c in cases] + [("fix", "pytest", "fix")])
        for case in cases:
            verdict = verdicts[case["instance_id"]]
            self.assertEqual((verdict["status"], verdict["completed"]), ("unresolved", False),
                             verdict["reason"])
        self.assertIn("stopped pytest", verdicts["pytest"]["reason"])
        self.assertIn("skipped whole", verdicts["checks"]["reason"])
        self.assertEqual(verdicts["fix"]["status"], "resolved")

    def test_unittest_skip_on_import_is_unresolved(self):
        verdicts = self.grade([self.instance("unittest", "unittest")],
                              [("skip", "unittest", "unittest-skip-on-import")])
        self.assertEqual(verdicts["skip"]["status"], "unresolved", verdicts["skip"]["reason"])
        self.assertIn("skipped whole", verdicts["skip"]["reason"])


class TestRegradeEnvironmentRecord(RegradeCoreFixture):
    def test_each_verdict_and_the_summary_record_what_decided_it(self):
        probe = subprocess.run([sys.executable, "-c", "import platform; "
                                "print(platform.python_version())"], capture_output=True,
                               text=True, check=True).stdout.strip()
        head = regrade_git(["rev-parse", "HEAD"], self.repo).strip()
        grader = hashlib_sha256_of(os.path.join(HERE, "regrade.py"))
        cases = [self.instance("unittest", "unittest")]
        if regrade_has_pytest():
            cases.append(self.instance("pytest", "pytest"))
        runs = [(c["instance_id"], c["instance_id"], "fix") for c in cases]
        verdicts = self.grade(cases, runs, ["--python", sys.executable])
        for case in cases:
            environment = verdicts[case["instance_id"]]["environment"]
            # By name only: its folder is a path of this machine (issue 15).
            self.assertEqual(environment["python"], os.path.basename(sys.executable))
            self.assertEqual(environment["python_version"], probe)
            self.assertEqual(environment["grader_sha256"], grader)
            self.assertEqual(environment["repository"], {
                "path": os.path.relpath(self.repo), "kind": "clone", "head": head,
                "base_commits_found": True})
        self.assertIsNone(verdicts["unittest"]["environment"]["pytest_version"])
        if regrade_has_pytest():
            import importlib.metadata
            self.assertEqual(verdicts["pytest"]["environment"]["pytest_version"],
                             importlib.metadata.version("pytest"))
        # The summary says it too, above the provenance footer.
        with TempDir() as folder:
            regrade_jsonl(folder, "i.jsonl", cases)
            status, out, err = run("regrade.py", [os.path.join(folder, "i.jsonl"), "gold",
                                                  "--repo", self.repo, "--python",
                                                  sys.executable])
        self.assertEqual(status, 0, err)
        footer = " ".join(out[out.index("test interpreter:"):
                                 out.index("-- provenance --")].split())
        self.assertIn(f"{os.path.basename(sys.executable)} ({probe})", footer)
        self.assertIn(f"HEAD {head}", footer)
        self.assertIn("every base commit found", footer)
        self.assertIn(grader, footer)

    def test_a_bundle_is_named_by_its_sha256_and_a_missing_base_commit_is_said(self):
        with TempDir() as folder:
            bundle = os.path.join(folder, "calc.bundle")
            regrade_git(["bundle", "create", bundle, "--all"], self.repo)
            digest = hashlib_sha256_of(bundle)
            regrade_jsonl(folder, "i.jsonl", [self.instance("unittest", "unittest"),
                                              self.instance("gone", "unittest",
                                                            base_commit="1" * 40)])
            status, report, err = regrade_json([os.path.join(folder, "i.jsonl"), "gold",
                                                "--repo", bundle])
        self.assertEqual(status, 0, err)
        verdict = regrade_by_run(report)["unittest@gold"]
        self.assertEqual(verdict["status"], "resolved")
        self.assertEqual(verdict["environment"]["repository"],
                         {"path": os.path.relpath(bundle), "kind": "bundle", "sha256": digest,
                          "base_commits_found": False})


# --- regrade.py: runners (Django, SymPy, instance fields) ---
class TestRegradeDjangoRunner(RegradeProjectFixture):
    BASE, TESTS, FIX, REPO_NAME = DJANGOISH_BASE, DJANGOISH_TESTS, DJANGOISH_FIX, "acme/shop"
    RUNS = {"breaks-import": {"django/shop.py": "def price(cents):\n    return cents /\n"},
            "fix-and-neuter": dict(DJANGOISH_FIX, **{"tests/shop/tests.py": "import unittest\n"})}

    def test_docstring_ids_map_to_their_tests_and_only_the_fix_resolves(self):
        ids = DJANGOISH_IDS + ["test_whole (shop.tests.PriceTests.test_whole)"]
        verdicts = self.grade({"shop-1": (ids[:2], ids[2:], {})},
                              runs=("gold", "empty", "breaks-import", "fix-and-neuter"))
        gold, empty = verdicts[("shop-1", "gold")], verdicts[("shop-1", "empty")]
        self.assert_verdict(gold, "resolved", True)
        self.assertEqual(gold["runner"], "django")       # chosen from the tree's layout
        self.assertEqual(gold["results_from"], "django runner")
        self.assertEqual(sorted(gold["fail_to_pass"]["passed"]), sorted(ids[:2]))
        self.assert_verdict(empty, "unresolved", False)
        self.assertEqual(sorted(empty["fail_to_pass"]["failed"]), sorted(ids[:2]))
        self.assertEqual(empty["pass_to_pass"]["passed"], ids[2:])
        # A diff that breaks the code's import makes the test module fail to load:
        # the run's failure, not a grading error.
        broken = verdicts[("shop-1", "breaks-import")]
        self.assert_verdict(broken, "unresolved", False)
        self.assertEqual(sorted(broken["fail_to_pass"]["missing"]), sorted(ids[:2]))
        self.assert_verdict(verdicts[("shop-1", "fix-and-neuter")], "resolved", True)

    def test_a_shared_docstring_counts_when_its_tests_agree_else_is_a_grading_error(self):
        verdicts = self.grade({"twin": (["Twin docstring."], [], {}),
                               "nowhere": (["Prices keep their dollars."], [], {}),
                               "no-module": (["test_cents (shop.nothing.PriceTests)"], [], {})})
        # Both twins pass with the fix; without it one passes and one fails.
        self.assert_verdict(verdicts[("twin", "gold")], "resolved", True)
        twin = verdicts[("twin", "empty")]
        self.assert_verdict(twin, "error", None)
        self.assertIn("shop.tests.PriceTests.test_twin_a passed", twin["reason"])
        self.assertIn("shop.tests.PriceTests.test_twin_b failed", twin["reason"])
        for name in ("nowhere", "no-module"):
            self.assert_verdict(verdicts[(name, "gold")], "error", None)
            self.assertIn("name no test", verdicts[(name, "gold")]["reason"])

    def test_an_expected_failure_is_not_a_fail_to_pass_pass(self):
        verdicts = self.grade({"xfail": (["test_known_bug (shop.tests.PriceTests)"], [], {}),
                               "xfail-p2p": (DJANGOISH_IDS[:1],
                                             ["test_known_bug (shop.tests.PriceTests)"], {})},
                              runs=("empty",))
        xfail = verdicts[("xfail", "empty")]
        self.assert_verdict(xfail, "unresolved", False)
        self.assertEqual(xfail["fail_to_pass"]["skipped"], ["test_known_bug (shop.tests.PriceTests)"])
        # As a PASS_TO_PASS test an expected failure passes, as in SWE-bench.
        self.assertEqual(verdicts[("xfail-p2p", "empty")]["pass_to_pass"]["passed"],
                         ["test_known_bug (shop.tests.PriceTests)"])


class TestRegradeSympyRunner(RegradeProjectFixture):
    BASE, TESTS, FIX, REPO_NAME = SYMPYISH_BASE, SYMPYISH_TESTS, SYMPYISH_FIX, "acme/symbolic"
    RUNS = {"breaks-import": {"sympy/core/basic.py": "raise ImportError('broken')\n"},
            "fix-and-neuter": dict(SYMPYISH_FIX, **{
                "sympy/core/tests/test_basic.py": "def test_double_negative():\n    pass\n"})}

    def test_bare_names_are_found_in_the_test_patch_and_only_the_fix_resolves(self):
        verdicts = self.grade({"sym-1": (["test_double_negative"], ["test_double"], {})},
                              runs=("gold", "empty", "breaks-import", "fix-and-neuter"))
        gold, empty = verdicts[("sym-1", "gold")], verdicts[("sym-1", "empty")]
        self.assert_verdict(gold, "resolved", True)
        self.assertEqual((gold["runner"], gold["results_from"]), ("sympy", "sympy runner"))
        self.assert_verdict(empty, "unresolved", False)
        self.assertEqual(empty["fail_to_pass"]["failed"], ["test_double_negative"])
        self.assertEqual(empty["pass_to_pass"]["passed"], ["test_double"])
        broken = verdicts[("sym-1", "breaks-import")]
        self.assert_verdict(broken, "unresolved", False)
        self.assertEqual(broken["fail_to_pass"]["missing"], ["test_double_negative"])
        self.assert_verdict(verdicts[("sym-1", "fix-and-neuter")], "resolved", True)

    def test_an_id_found_nowhere_is_a_grading_error(self):
        verdict = self.grade({"typo": (["test_double_negativ"], [], {})}, runs=("gold",))
        verdict = verdict[("typo", "gold")]
        self.assert_verdict(verdict, "error", None)
        self.assertIn("test_double_negativ", verdict["reason"])

    def test_xfail_skip_and_slow_are_not_passes(self):
        verdicts = self.grade({
            "xfail": (["test_double_string"], [], {}),
            "xpass": (["test_double_negative"], ["test_double_zero"], {}),
            "skip": (["test_double_negative"], ["test_double_plot"], {}),
            "slow": (["test_double_big"], [], {})}, runs=("gold",))
        xfail = verdicts[("xfail", "gold")]
        self.assert_verdict(xfail, "unresolved", False)
        self.assertEqual(xfail["fail_to_pass"]["skipped"], ["test_double_string"])
        # An @XFAIL test that passes (XPASS) is a failure.
        self.assertEqual(verdicts[("xpass", "gold")]["pass_to_pass"]["failed"],
                         ["test_double_zero"])
        self.assertEqual(verdicts[("skip", "gold")]["pass_to_pass"]["skipped"],
                         ["test_double_plot"])
        self.assert_verdict(verdicts[("skip", "gold")], "unresolved", False)
        self.assertEqual(verdicts[("slow", "gold")]["fail_to_pass"]["skipped"],
                         ["test_double_big"])


class TestRegradeInstanceFields(RegradeProjectFixture):
    BASE, TESTS, FIX, REPO_NAME = SYMPYISH_BASE, SYMPYISH_TESTS, SYMPYISH_FIX, "acme/symbolic"

    def test_v5_fields_pick_a_runner_or_say_there_is_none(self):
        v5 = {"image": "swebench/sweb.eval.x86_64.acme", "eval_type": "pass_and_fail",
              "eval_script": "#!/bin/bash\necho never run here > /tmp/regrade-eval-script-ran\n"}
        verdicts = self.grade({
            "by-parser": (["test_double_negative"], [], dict(v5, log_parser="parse_log_sympy")),
            "go": (["test_double_negative"], [], dict(v5, log_parser="parse_log_gotest"))},
            runs=("gold",))
        by_parser = verdicts[("by-parser", "gold")]
        self.assert_verdict(by_parser, "resolved", True)
        self.assertEqual(by_parser["runner"], "sympy")
        self.assertTrue(any("eval_script" in note for note in by_parser["notes"]))
        go = verdicts[("go", "gold")]
        self.assert_verdict(go, "error", None)
        self.assertIn("no runner for this repository", go["reason"])

    def test_a_project_runner_on_a_tree_without_it_is_a_grading_error(self):
        verdicts = self.grade({"wrong": (["test_double_negative"], [],
                                         {"test_runner": "django"})}, runs=("gold",))
        verdict = verdicts[("wrong", "gold")]
        self.assert_verdict(verdict, "error", None)
        self.assertIn("tests/runtests.py", verdict["reason"])

    def test_a_bad_eval_type_is_bad_input(self):
        with TempDir() as folder:
            regrade_jsonl(folder, "i.jsonl", [{
                "instance_id": "x", "repo": "a/b", "base_commit": self.base, "test_patch": "",
                "FAIL_TO_PASS": '["test_double"]', "eval_type": "sometimes"}])
            status, out, err = run("regrade.py", [os.path.join(folder, "i.jsonl"), "gold",
                                                  "--repo", self.repo])
        self.assertEqual(status, 2)
        self.assertIn("eval_type", err)
        self.assertNotIn("Traceback", err)


class RegradeProjectRules:
    """Django and SymPy runs inside bubblewrap, under --select and the collection records."""
    RUNNER, CASE = "", {}

    def test_runs_in_bwrap_and_a_broken_import_is_the_runs_failure(self):
        if bwrap_missing():
            self.skipTest(bwrap_missing())
        verdicts = self.grade(self.CASE, runs=("gold", "breaks-import"))
        gold, broken = verdicts[("case", "gold")], verdicts[("case", "breaks-import")]
        self.assertEqual({gold["isolation"], broken["isolation"]}, {"bwrap"})
        self.assert_verdict(gold, "resolved", True)
        self.assertEqual(gold["runner"], self.RUNNER)
        # The recorder reports its own interpreter, as the pytest and unittest ones do.
        self.assertEqual(gold["environment"]["python_version"], sys.version.split()[0])
        # No test ran: the run broke the code's import, which is its own failure,
        # never the generic "listed test never collected" grading error.
        self.assert_verdict(broken, "unresolved", False)
        self.assertNotIn("uncollected", broken)
        self.assertIn(f"{self.RUNNER} failed to load", broken["reason"])

    def test_select_files_adds_no_note(self):
        verdicts = self.grade(self.CASE, runs=("gold",), extra_argv=("--select", "files"))
        gold = verdicts[("case", "gold")]
        self.assert_verdict(gold, "resolved", True)
        self.assertFalse(any("whole" in note for note in gold["notes"]), gold["notes"])


class TestRegradeDjangoRules(RegradeProjectRules, RegradeProjectFixture):
    BASE, TESTS, FIX, REPO_NAME = DJANGOISH_BASE, DJANGOISH_TESTS, DJANGOISH_FIX, "acme/shop"
    RUNS = TestRegradeDjangoRunner.RUNS
    RUNNER, CASE = "django", {"case": (DJANGOISH_IDS[:2], DJANGOISH_IDS[2:], {})}


class TestRegradeSympyRules(RegradeProjectRules, RegradeProjectFixture):
    BASE, TESTS, FIX, REPO_NAME = SYMPYISH_BASE, SYMPYISH_TESTS, SYMPYISH_FIX, "acme/symbolic"
    RUNS = TestRegradeSympyRunner.RUNS
    RUNNER, CASE = "sympy", {"case": (["test_double_negative"], ["test_double"], {})}


class TestOneRunnerRule(unittest.TestCase):
    """regrade.py's runner choice has one home, runner_for(): grading (pick_runner), the
    test-command check and the pytest pre-flight of both modes ask it, so a check made
    before the checkout can never expect another runner than the one grading will use."""

    def setUp(self):
        self.r = load("regrade.py")

    def instance(self, repo, ids, test_runner=None, test_cmd=None, **extra):
        return dict({"repo": repo, "FAIL_TO_PASS": list(ids), "PASS_TO_PASS": [],
                     "test_runner": test_runner, "test_cmd": test_cmd,
                     "where": "instances.jsonl line 1"}, **extra)

    def test_grading_and_the_pre_flight_agree_for_every_choice(self):
        with tempfile.TemporaryDirectory() as tree:      # a tree with no project layout
            for repo, ids, own, option in itertools.product(
                    ("django/django", "sympy/sympy", "o/r"), (["t.py::test_a"], ["m.C.test_a"]),
                    (None, "unittest", "log"), ("auto", "pytest", "sympy")):
                instance = self.instance(repo, ids, own)
                graded = self.r.pick_runner(instance, {"runner": option}, ids, tree)
                # Written out from the manual ("Runners"), not from the code under test.
                expected = own or option
                if expected == "auto":
                    expected = {"django/django": "django", "sympy/sympy": "sympy"}.get(
                        repo, "pytest" if "::" in ids[0] else "unittest")
                self.assertEqual(graded, expected, (repo, ids, own, option))
                self.assertEqual(self.r.runner_for(instance, option, ids), graded)
                self.assertEqual(self.r.pytest_needed([instance], option, None),
                                 graded == "pytest", (repo, ids, own, option))

    def test_the_tree_layout_counts_only_once_there_is_a_tree(self):
        with tempfile.TemporaryDirectory() as tree:
            os.makedirs(os.path.join(tree, "tests"))
            os.makedirs(os.path.join(tree, "django"))
            write(tree, "tests/runtests.py", "")
            instance = self.instance("fork/web", ["tests/t.py::test_a"])
            self.assertEqual(self.r.pick_runner(instance, {"runner": "auto"}, ["x"], tree),
                             "django")
            self.assertEqual(self.r.runner_for(instance, "auto", ["tests/t.py::test_a"]),
                             "pytest")    # before the checkout: the ids decide, pytest is checked

    def test_a_django_instance_is_not_held_to_the_pytest_rules_before_grading(self):
        # Grading runs Django's runner for django/django under --runner auto, whatever its
        # ids look like; the old pre-flight judged by the ids alone and refused this command
        # as a pytest one (and required pytest of the interpreter).
        instance = self.instance("django/django", ["tests/t.py::test_a"])
        self.r.check_test_commands({"i": instance}, "auto", "./tests/runtests.py {files}")
        self.assertFalse(self.r.pytest_needed([instance], "auto", None))
        with self.assertRaises(self.r.InputError):    # a real pytest instance still is
            self.r.check_test_commands({"i": self.instance("o/r", ["t.py::test_a"])}, "auto",
                                       "pytest {files}")

    def test_a_log_parser_without_a_runner_needs_nothing_and_grades_as_an_error(self):
        instance = self.instance("o/r", ["t.py::test_a"], no_runner="log_parser 'x': none")
        self.assertIsNone(self.r.runner_for(instance, "auto", ["t.py::test_a"]))
        self.assertFalse(self.r.pytest_needed([instance], "auto", None))
        with self.assertRaises(self.r.GradingError):
            self.r.pick_runner(instance, {"runner": "auto"}, ["t.py::test_a"], HERE)

    def test_making_instances_assumes_pytest_unless_the_repository_names_its_runner(self):
        for repo, runner, expected in (("o/r", "auto", True), ("django/django", "auto", False),
                                       ("o/r", "log", False), ("sympy/sympy", "pytest", True)):
            self.assertEqual(self.r.pytest_needed(
                [{"repo": repo, "test_runner": None, "test_cmd": None}], runner, None,
                ids_known=False), expected, (repo, runner))


# --- regrade.py: statuses, outputs and the summary ---
class TestCompletedMeansOneThing(unittest.TestCase):
    def test_summary_and_manual_say_completed_instances_means_graded(self):
        regrade = load("regrade.py")
        verdicts = [{"run_id": r, "instance_id": "i", "status": s, "diff_empty": False}
                    for r, s in (("a", "resolved"), ("b", "unresolved"), ("c", "error"))]
        summary = regrade.swebench_summary(verdicts, ["i"])
        self.assertEqual(summary["completed_instances"], 2)      # graded: a and b
        self.assertEqual(summary["resolved_instances"], 1)
        self.assertIn("graded", summary["completed_means"])
        self.assertIn("verdicts.csv's completed means resolved", summary["completed_means"])
        doc = " ".join(regrade.__doc__.split())
        self.assertIn("completed_instances keeps SWE-bench's meaning, graded", doc)
        self.assertIn("verdicts.csv's completed means resolved", doc)
        status, out, err = run("regrade.py", [
            os.path.join(HERE, "examples", "regrade", "instances.jsonl"), "empty",
            "--repo", os.path.join(HERE, "examples", "regrade", "calc.bundle")])
        self.assertEqual(status, 0, err)
        self.assertIn("'completed' in verdicts.csv means resolved; completed_instances "
                      "(SWE-bench's key) means graded", out)


class TestTimingsFit100Columns(unittest.TestCase):
    def test_regrade_timings_table_fits_100_columns(self):
        status, out, err = run("regrade.py", [
            os.path.join(HERE, "examples", "regrade", "instances.jsonl"),
            os.path.join(HERE, "examples", "regrade", "predictions.jsonl"),
            "--repo", os.path.join(HERE, "examples", "regrade", "calc.bundle"), "--timings"])
        self.assertEqual(status, 0, err)
        body = report_body(out)
        self.assertEqual([l for l in body.splitlines() if len(l) > 100], [])
        self.assertRegex(body, r"(?m)^run +tests s +all s +grader s$")


def regrade_verdict_stub(run_id, **extra):
    verdict = {"run_id": run_id, "instance_id": "i" * 30, "status": "wrong_code_under_test",
               "resolution": "NO", "reason": "a reason", "tests_status": None,
               "fail_to_pass": {}, "pass_to_pass": {}, "applied_with": "git apply",
               "duration_s": 12.25, "test_s": 10.5, "completed": None,
               "touched_tests": ["x"], "flaky": [], "results_from": "pytest plugin"}
    verdict.update(extra)
    return verdict


REGRADE_PROV = {"script": "regrade.py", "version": "0", "python": "3", "script_sha256": "0" * 64,
                "command": "c", "seed": None, "inputs": []}


class TestRegradeSummaryLayout(unittest.TestCase):
    def test_markdown_reasons_and_closing_lines_are_separate_blocks(self):
        regrade = load("regrade.py")
        runs = [regrade_verdict_stub(f"run-{i}") for i in range(3)]
        text = regrade.render_summary(regrade.summarise(runs), runs, "markdown", REGRADE_PROV)
        lines = text.splitlines()
        last_reason = max(i for i, l in enumerate(lines) if l.startswith("- run-"))
        first_note = next(i for i, l in enumerate(lines) if l.startswith("- runs that touched"))
        # A paragraph between them ends the first list (CommonMark: blank lines do not).
        between = [l for l in lines[last_reason + 1:first_note] if l.strip()]
        self.assertTrue(between and not any(l.startswith("- ") for l in between), between)
        cmark = shutil.which("cmark-gfm")
        if cmark:
            html = subprocess.run([cmark], input=text, capture_output=True, text=True).stdout
            items = re.findall(r"<ul>(.*?)</ul>", html, re.S)
            # The three reasons, then the checks (touched, flaky, fallbacks, sandbox,
            # the meaning of 'completed'): two lists, not one.
            self.assertEqual([len(re.findall("<li>", i)) for i in items], [3, 5])

    def test_timings_tables_fit_100_columns(self):
        regrade = load("regrade.py")
        runs = [regrade_verdict_stub(f"django__django-{11000 + i}@some-agent-model-v2#{i}")
                for i in range(12)]
        text = regrade.render_summary(regrade.summarise(runs), runs, "text", REGRADE_PROV,
                                      timings=True)
        self.assertEqual([l for l in text.splitlines() if len(l) > 100], [])
        for run_id in (r["run_id"] for r in runs):       # no row dropped, each timed
            self.assertEqual(len([l for l in text.splitlines() if l.startswith(run_id + " ")]),
                             2)
        self.assertIn("1.75", text)                       # 12.25 - 10.5 s of grader overhead
        self.assertIn("the instance column is left out", " ".join(text.split()))

    def test_progress_names_each_run_its_status_and_seconds(self):
        regrade = load("regrade.py")
        example = os.path.join(HERE, "examples", "regrade")
        status, out, err = run("regrade.py", [
            os.path.join(example, "instances.jsonl"), os.path.join(example, "predictions.jsonl"),
            "--repo", os.path.join(example, "calc.bundle"), "--progress", "--format", "json"])
        self.assertEqual(status, 0, err)
        verdicts = json.loads(out)["runs"]
        lines = err.strip().splitlines()
        self.assertEqual(len(lines), len(verdicts), err)
        for verdict in verdicts:
            line = next(l for l in lines if f"] {verdict['run_id']}: " in l)
            self.assertIn(f"{verdict['run_id']}: {verdict['status']} in "
                          f"{verdict['duration_s']:.1f} s", line)


# --- regrade.py: large jobs (signals, shards, one --out) ---
# Schedulers preempt with SIGTERM then SIGKILL, rerun the same task, and point
# many tasks at one --out. Each test below reproduces one failure of issue 16 on
# the code before it (checked against main's regrade.py), and the rehearsal runs
# shards the way Slurm would. Processes get generous deadlines; nothing is timed.
CLUSTER_BASE = {
    "slow/__init__.py": "def value():\n    return 1\n",
    "tests/__init__.py": "",
    "tests/test_slow.py": (
        "import time\nimport unittest\n\nimport slow\n\n\n"
        "class TestSlow(unittest.TestCase):\n"
        "    def test_value(self):\n        time.sleep(0.2)\n        self.assertEqual(slow.value(), 2)\n\n"
        "    def test_kept(self):\n        self.assertTrue(callable(slow.value))\n"),
}
CLUSTER_RUNS = {
    "fix": {"slow/__init__.py": "def value():\n    return 2\n"},
    "wrong": {"slow/__init__.py": "def value():\n    return 3\n"},
    "slow-fix": {"slow/__init__.py": "import time\n\n\ndef value():\n    time.sleep(4)\n"
                                     "    return 2\n"},
    "hangs": {"slow/__init__.py": "import time\ntime.sleep(120)\n\n\ndef value():\n"
                                  "    return 2\n"},
    "slower-fix": {"slow/__init__.py": "import time\n\n\ndef value():\n    time.sleep(2)\n"
                                       "    return 2\n"},
}
CLUSTER_DEADLINE = 240      # s for any one grading process, even at load 10


def cluster_lines(out):
    """verdicts.jsonl's lines as parsed records; raises on a cut or broken line."""
    path = os.path.join(out, "verdicts.jsonl")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    assert not text or text.endswith("\n"), "a cut last line"
    return [json.loads(line) for line in text.splitlines()]


def cluster_wait(predicate, what, deadline=CLUSTER_DEADLINE):
    end = time.monotonic() + deadline
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"waited {deadline} s for {what}")
        time.sleep(0.05)


class RegradeClusterCase(RegradeRepoCase):
    """The slow repository, its runs' diffs, and a way to start graders as a scheduler does."""

    @classmethod
    def setUpClass(cls):
        work = cls.make_repo(CLUSTER_BASE)
        cls.diffs = {name: regrade_diff(work, files) for name, files in CLUSTER_RUNS.items()}

    def job(self, folder, runs):
        """Write instances.jsonl and predictions.jsonl; runs: {run id: diff name}."""
        regrade_jsonl(folder, "instances.jsonl", [{
            "instance_id": "slow-1", "repo": "acme/slow", "base_commit": self.base,
            "patch": self.diffs["fix"], "test_patch": "",
            "FAIL_TO_PASS": json.dumps(["tests.test_slow.TestSlow.test_value"]),
            "PASS_TO_PASS": json.dumps(["tests.test_slow.TestSlow.test_kept"])}])
        regrade_jsonl(folder, "predictions.jsonl", [
            {"run_id": run_id, "instance_id": "slow-1", "model_patch": self.diffs[name]}
            for run_id, name in sorted(runs.items())])
        return [os.path.join(folder, "instances.jsonl"), os.path.join(folder, "predictions.jsonl"),
                "--repo", self.repo]

    def start(self, argv, temp):
        """Start regrade.py as a scheduler's task would, with TMPDIR=temp."""
        return subprocess.Popen([sys.executable, os.path.join(HERE, "regrade.py"), *argv,
                                 "--progress"], env=dict(os.environ, TMPDIR=temp),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def in_temp(self, temp):
        """Point this process's tempfile at `temp` while a test calls main() in-process."""
        old = tempfile.tempdir
        tempfile.tempdir = temp
        self.addCleanup(setattr, tempfile, "tempdir", old)


class TestRegradeClusterSignals(RegradeClusterCase):
    """Failure 1: SIGTERM (and SIGHUP) killed the grader silently, leaving its folders."""

    def test_sigterm_and_sighup_stop_cleanly_and_say_how_to_resume(self):
        for signum, status in ((signal.SIGTERM, 143), (signal.SIGHUP, 129)):
            with self.subTest(signal=signum.name), TempDir() as folder:
                runs = {f"fix-{i}": "fix" for i in range(3)}
                runs["hangs"] = "hangs"
                argv = self.job(folder, runs) + ["--out", os.path.join(folder, "out")]
                temp = os.path.join(folder, "tmp")
                os.makedirs(temp)
                process = self.start(argv, temp)
                # Runs go in id order: three fixes are graded, then "hangs" is running.
                cluster_wait(lambda: len(cluster_lines(os.path.join(folder, "out"))) >= 3 or
                             process.poll() is not None, "three verdicts")
                process.send_signal(signum)
                _, stderr = process.communicate(timeout=CLUSTER_DEADLINE)
                self.assertEqual(process.returncode, status, stderr)
                last = stderr.strip().splitlines()[-1]
                self.assertRegex(last, rf"^error: interrupted by {signum.name}: 3 runs graded "
                                       r"and on disk in .*verdicts\.jsonl, 1 left ungraded; "
                                       r"rerun the same command")
                self.assertEqual(sorted(v["run_id"] for v in cluster_lines(
                    os.path.join(folder, "out"))), ["fix-0", "fix-1", "fix-2"])
                self.assertEqual(os.listdir(temp), [])

    def test_a_second_signal_ends_at_once_and_the_next_run_cleans_up(self):
        with TempDir() as folder:
            argv = self.job(folder, {"fix": "fix", "hangs": "hangs"})
            argv += ["--out", os.path.join(folder, "out")]
            temp = os.path.join(folder, "tmp")
            os.makedirs(temp)
            process = self.start(argv, temp)
            cluster_wait(lambda: cluster_lines(os.path.join(folder, "out")) or
                         process.poll() is not None, "the first verdict")
            process.send_signal(signal.SIGTERM)
            process.send_signal(signal.SIGTERM)
            process.communicate(timeout=CLUSTER_DEADLINE)
            self.assertEqual(process.returncode, 143)
            self.assertEqual([v["run_id"] for v in cluster_lines(os.path.join(folder, "out"))],
                             ["fix"])
            # What the cut-short process left, the next one removes (the hanging run
            # is left out now: it would hang again).
            self.job(folder, {"fix": "fix"})
            again = self.start(argv, temp)
            _, stderr = again.communicate(timeout=CLUSTER_DEADLINE)
            self.assertEqual(again.returncode, 0, stderr)
            self.assertEqual(os.listdir(temp), [])


def cluster_host():
    """This machine's name as regrade.py's folder names spell it (an independent copy)."""
    return re.sub(r"[^A-Za-z0-9-]", "-", platform.node())[:40] or "host"


def cluster_start_time(pid):
    """Field 22 of /proc/PID/stat, read here independently of regrade.py."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
        text = handle.read()
    return int(text[text.rfind(")") + 2:].split()[19])


def cluster_boot():
    with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
        return handle.read().strip().replace("-", "")[:8]


class TestRegradeClusterLeftovers(RegradeClusterCase):
    """Failure 2: folders of a killed process stayed for ever; a live owner's must stay."""

    def test_folders_whose_owner_is_gone_are_removed_and_no_others(self):
        with TempDir() as folder:
            temp = os.path.join(folder, "tmp")
            os.makedirs(temp)
            self.in_temp(temp)
            child = subprocess.Popen(["true"])
            child.wait()                    # a PID whose process has ended
            me, host, boot = os.getpid(), cluster_host(), cluster_boot()
            names = {
                "dead": f"regrade-run.{host}.{child.pid}.{cluster_start_time(me) + 1}.{boot}.a1",
                "reused-pid": f"regrade-session.{host}.{me}.{cluster_start_time(me) + 7}.{boot}.b2",
                "earlier-boot": f"regrade-probe.{host}.{me}.{cluster_start_time(me)}.00000000.c3",
                "live": f"regrade-session.{host}.{me}.{cluster_start_time(me)}.{boot}.d4",
                "other-host": f"regrade-run.not-{host}.{child.pid}.1.{boot}.e5",
                "no-owner": "regrade-session-f6",
            }
            for name in names.values():
                os.makedirs(os.path.join(temp, name, "tree"))
            status, out, err = run("regrade.py", self.job(folder, {"fix": "fix"}))
            self.assertEqual(status, 0, err)
            self.assertIn("removed 3 folders left in", err)
            self.assertEqual(sorted(os.listdir(temp)),
                             sorted(names[k] for k in ("live", "other-host", "no-owner")))


class TestRegradeClusterSharedOut(RegradeClusterCase):
    """Failure 3: two shards on one --out both exited 0 and the last writer won."""

    def test_two_shards_at_once_on_one_folder_keep_every_verdict_once(self):
        with TempDir() as folder:
            runs = {f"run-{i:02d}": ("fix", "wrong")[i % 2] for i in range(10)}
            out = os.path.join(folder, "out")
            argv = self.job(folder, runs) + ["--out", out]
            temp = os.path.join(folder, "tmp")
            os.makedirs(temp)
            shards = [self.start(argv + ["--shard", f"{k}/2"], temp) for k in (1, 2)]
            for process in shards:
                _, stderr = process.communicate(timeout=CLUSTER_DEADLINE)
                self.assertEqual(process.returncode, 0, stderr)
            lines = cluster_lines(out)
            self.assertEqual(sorted(v["run_id"] for v in lines), sorted(runs))
            expected = {r: "resolved" if n == "fix" else "unresolved" for r, n in runs.items()}
            self.assertEqual({v["run_id"]: v["status"] for v in lines}, expected)
            with open(os.path.join(out, "verdicts.csv"), encoding="utf-8") as handle:
                self.assertEqual(len(handle.read().splitlines()), 11)
            self.assertEqual(os.listdir(temp), [])

    def test_summarize_skips_a_cut_last_line_and_says_so(self):
        with TempDir() as folder:
            graded = os.path.join(folder, "graded")
            status, _, err = run("regrade.py", self.job(folder, {"a": "fix"}) + ["--out", graded])
            self.assertEqual(status, 0, err)
            with open(os.path.join(graded, "verdicts.jsonl"), encoding="utf-8") as handle:
                whole = handle.read()
            # Cut mid-record, and cut just before its newline (what was written parses):
            # either way the writers' reader (record_lines) counts no 'b', and neither may
            # --summarize, or it reports a verdict the next grading process regrades.
            for tail in ('{"run_id": "b", "sta', '{"run_id": "b", "status": "resolved"}'):
                path = write(folder, "verdicts.jsonl", whole + tail)
                status, out, err = run("regrade.py", ["--summarize", path, "--format", "json"])
                self.assertEqual(status, 0, err)
                self.assertEqual([v["run_id"] for v in json.loads(out)["runs"]], ["a"], tail)
                self.assertIn("its last line has no newline", err)
                with open(path, "rb") as handle:
                    self.assertEqual(sorted(load("regrade.py").record_lines(
                        handle.read(), "run_id")), ["a"])


class TestRegradeClusterCheckedWrites(RegradeClusterCase):
    """Failure 4: a progress line named a run whose verdict line was cut by a full disk."""

    def faulty_writes(self, fault):
        """Make os.write misbehave on verdicts.jsonl only: fault(call number, data) returns
        the bytes to write, or raises."""
        real, calls = os.write, []

        def write_(handle, data):
            try:
                target = os.readlink(f"/proc/self/fd/{handle}")
            except OSError:
                target = ""
            if target.endswith("verdicts.jsonl"):
                calls.append(len(data))
                data = fault(len(calls), bytes(data))
            return real(handle, data)
        return calls, unittest.mock.patch.object(os, "write", write_)

    def progress_checker(self, out):
        """A stderr that checks, at each progress line, that the run's line is whole on disk."""
        seen = []

        class Checking(io.StringIO):
            def write(inner, text):
                match = re.match(r"\[\d+/\d+\] (\S+): ", text)
                if match:
                    with open(os.path.join(out, "verdicts.jsonl"), "rb") as handle:
                        data = handle.read()
                    whole = []
                    for line in data.split(b"\n")[:-1]:
                        try:
                            whole.append(json.loads(line)["run_id"])
                        except ValueError:
                            pass        # a line glued to a cut one
                    seen.append((match.group(1), data.endswith(b"\n") and
                                 match.group(1) in whole))
                return super().write(text)
        return Checking(), seen

    def test_a_short_write_is_finished_before_the_run_counts_as_graded(self):
        with TempDir() as folder:
            out = os.path.join(folder, "out")
            argv = self.job(folder, {"fix": "fix", "wrong": "wrong"}) + ["--out", out,
                                                                         "--progress"]
            # Each first write of a line gets half through, as on a filling disk.
            _, patcher = self.faulty_writes(
                lambda n, data: data[:len(data) // 2] if n % 2 else data)
            stderr, seen = self.progress_checker(out)
            with patcher, contextlib.redirect_stderr(stderr), \
                    contextlib.redirect_stdout(io.StringIO()):
                status = load("regrade.py").main(argv)
            self.assertEqual(status, 0, stderr.getvalue())
            self.assertEqual(seen, [("fix", True), ("wrong", True)])
            self.assertEqual(sorted(v["run_id"] for v in cluster_lines(out)), ["fix", "wrong"])

    def test_a_full_disk_ends_the_job_saying_what_is_safe(self):
        for code in (errno.ENOSPC, errno.EDQUOT):
            with self.subTest(errno=errno.errorcode[code]), TempDir() as folder:
                out = os.path.join(folder, "out")
                runs = {f"run-{i}": "fix" for i in range(4)}
                argv = self.job(folder, runs) + ["--out", out, "--progress"]

                def fault(n, data, code=code):
                    if n >= 3:
                        raise OSError(code, os.strerror(code))
                    return data
                calls, patcher = self.faulty_writes(fault)
                stderr, seen = self.progress_checker(out)
                with patcher, contextlib.redirect_stderr(stderr), \
                        contextlib.redirect_stdout(io.StringIO()):
                    status = load("regrade.py").main(argv)
                self.assertEqual(status, 2, stderr.getvalue())
                last = stderr.getvalue().strip().splitlines()[-1]
                self.assertEqual(last, f"error: --out {out}: cannot write ({os.strerror(code)}): "
                                       f"2 verdicts are safe in {out}/verdicts.jsonl (whole lines "
                                       f"on disk), 2 left ungraded; free space and rerun the "
                                       f"same command to grade only those")
                self.assertEqual(seen, [("run-0", True), ("run-1", True)])
                self.assertEqual([v["run_id"] for v in cluster_lines(out)], ["run-0", "run-1"])
                self.assertGreaterEqual(len(calls), 3)

    def test_a_file_size_limit_is_a_full_disk_not_a_silent_death(self):
        """The real thing: RLIMIT_FSIZE on the grader (its children get it too)."""
        import resource
        with TempDir() as folder:
            out = os.path.join(folder, "out")
            runs = {f"run-{i}": "fix" for i in range(3)}
            argv = self.job(folder, runs)
            status, _, err = run("regrade.py", argv + ["--out", os.path.join(folder, "sizes")])
            self.assertEqual(status, 0, err)
            sizes = [len(json.dumps(v, ensure_ascii=False, sort_keys=True)) + 1
                     for v in cluster_lines(os.path.join(folder, "sizes"))]
            limit = sizes[0] + sizes[1] // 2       # room for one line and half the next
            process = subprocess.Popen(
                [sys.executable, os.path.join(HERE, "regrade.py"), *argv, "--out", out,
                 "--progress", "--sandbox", "none"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))
            _, stderr = process.communicate(timeout=CLUSTER_DEADLINE)
            self.assertEqual(process.returncode, 2, stderr)
            self.assertRegex(stderr.strip().splitlines()[-1],
                             r"^error: --out .*: cannot write \(File too large\): 1 verdict is "
                             r"safe in .*, 2 left ungraded")
            self.assertEqual(len(cluster_lines(out)), 1)
            self.assertEqual(len(re.findall(r"^\[\d+/3\] ", stderr, re.M)), 1)


class TestRegradeClusterReuse(RegradeClusterCase):
    """Failure 5: a verdict graded at --timeout 1 was reused at --timeout 120."""

    def test_a_verdict_graded_under_other_options_is_graded_again(self):
        with TempDir() as folder:
            out = os.path.join(folder, "out")
            argv = self.job(folder, {"slow": "slow-fix", "fix": "fix"}) + ["--out", out,
                                                                           "--format", "json"]
            status, text, err = run("regrade.py", argv + ["--timeout", "1"])
            self.assertEqual(status, 0, err)
            self.assertEqual({v["run_id"]: v["status"] for v in cluster_lines(out)},
                             {"slow": "timeout", "fix": "resolved"})
            status, text, err = run("regrade.py", argv + ["--timeout", "120"])
            self.assertEqual(status, 0, err)
            self.assertEqual({v["run_id"]: v["status"] for v in cluster_lines(out)},
                             {"slow": "resolved", "fix": "resolved"})
            self.assertEqual(json.loads(text)["summary"]["reuse"],
                             {"reused": 0, "regraded": 2,
                              "regraded_because": {"--timeout changed": 2}})
            status, text, err = run("regrade.py", argv[:-2] + ["--timeout", "120", "--env",
                                                               "EXTRA=1"])
            self.assertIn("2 graded again, their stored verdicts graded under other inputs: "
                          "--env changed: 2", text)
            status, text, err = run("regrade.py", argv[:-2] + ["--timeout", "120", "--env",
                                                               "EXTRA=1"])
            self.assertIn("2 already graded with the same inputs", text)

    def test_the_key_covers_every_option_that_can_change_a_verdict(self):
        regrade = load("regrade.py")
        run_ = {"normalised_diff": "d", "base_commit": "b"}     # its diff, normalised
        instance = {"instance_id": "i", "where": "x:1", "FAIL_TO_PASS": ["t"]}
        settings = {"grader_version": "g", "grader_sha256": "s", "isolation": "bwrap",
                    "python": "/p", "interpreter": {"version": "3.12.1"},
                    "distributions": [["pytest", "8.0"]], "runner": "auto", "test_cmd": None,
                    "select": "ids", "timeout": 600.0, "repeat": 1, "p2p_skip_ok": False,
                    "test_patterns": None, "env": {}, "keep_env": set(), "fuzz": 3}
        key = regrade.grading_key(run_, instance, settings)
        changes = {"isolation": "unshare", "python": "/q", "interpreter": {"version": "3.12.2"},
                   "distributions": [["pytest", "8.1"]], "runner": "pytest",
                   "test_cmd": "{python} x", "select": "files", "timeout": 30.0, "repeat": 3,
                   "p2p_skip_ok": True, "test_patterns": ("t/*",), "env": {"A": "1"},
                   "keep_env": {"HOME2"}, "fuzz": 0, "grader_sha256": "t"}
        for name, value in changes.items():
            self.assertNotEqual(regrade.grading_key(run_, instance, dict(settings, **{
                name: value})), key, name)
        self.assertNotEqual(regrade.grading_key(run_, dict(instance, FAIL_TO_PASS=["u"]),
                                                settings), key)
        self.assertNotEqual(regrade.grading_key(dict(run_, normalised_diff="e"), instance,
                                                settings), key)
        # Where the instance row sits in its file is no input.
        self.assertEqual(regrade.grading_key(run_, dict(instance, where="y:9"), settings), key)


class TestRegradeClusterUnshare(RegradeClusterCase):
    """--sandbox unshare was refused as an invalid choice."""

    def test_unshare_is_a_choice_of_its_own(self):
        with TempDir() as folder:
            status, report, err = regrade_json(self.job(folder, {"fix": "fix"}) +
                                               ["--sandbox", "unshare"])
            if status == 2 and "--sandbox unshare: " in err and "invalid choice" not in err:
                self.skipTest(err.strip())
            self.assertEqual(status, 0, err)
            verdict = regrade_by_run(report)["fix"]
            self.assertEqual((verdict["status"], verdict["isolation"]), ("resolved", "unshare"))


def cluster_statuses(verdicts):
    return {v["run_id"]: (v["status"], v["resolution"], json.dumps(v["fail_to_pass"]),
                          json.dumps(v["pass_to_pass"])) for v in verdicts}


def cluster_runs(shards, per_shard):
    """Run ids and diffs: per_shard runs in each shard, the signalled shards' (1 and 2)
    second run a slower one, so that their signal lands while a run is going."""
    in_shard = load("regrade.py").in_shard
    runs, candidates = {}, [f"run-{i:03d}" for i in range(1000)]
    for k in range(1, shards + 1):
        mine = [r for r in candidates if in_shard(r, (k, shards))][:per_shard]
        for place, run_id in enumerate(mine):
            runs[run_id] = "slower-fix" if place == 1 and k <= 2 else ("fix", "wrong")[place % 2]
    return runs


def cluster_rehearsal(case, folder, shards=3, per_shard=3):
    """Shards start at once on one --out; one gets SIGTERM, one kill -9, after their first
    verdict; each is restarted as a scheduler would. Returns the figures."""
    runs = cluster_runs(shards, per_shard)
    runs_count = len(runs)
    argv = case.job(folder, runs)
    single = os.path.join(folder, "single")
    status, _, err = run("regrade.py", argv + ["--out", single, "--jobs", "2"])
    case.assertEqual(status, 0, err)
    out, temp = os.path.join(folder, "out"), os.path.join(folder, "tmp")
    os.makedirs(temp)
    commands = [argv + ["--out", out, "--shard", f"{k}/{shards}"] for k in range(1, shards + 1)]
    mine = [{r for r in runs if load("regrade.py").in_shard(r, (k, shards))}
            for k in range(1, shards + 1)]
    processes = [case.start(command, temp) for command in commands]
    signals = {0: signal.SIGTERM, 1: signal.SIGKILL}
    for index, signum in signals.items():
        cluster_wait(lambda: mine[index] & {v["run_id"] for v in cluster_lines(out)} or
                     processes[index].poll() is not None, f"shard {index + 1}'s first verdict")
        processes[index].send_signal(signum)
    statuses = []
    for process in processes:
        process.communicate(timeout=CLUSTER_DEADLINE)
        statuses.append(process.returncode)
    before = len(cluster_lines(out))
    restarted = [case.start(commands[i], temp) for i in signals]
    for process in restarted:
        _, stderr = process.communicate(timeout=CLUSTER_DEADLINE)
        case.assertEqual(process.returncode, 0, stderr)
    after = cluster_lines(out)
    return {"processes": shards, "restarted": len(restarted), "runs": runs_count,
            "signals": {i + 1: s.name for i, s in signals.items()}, "exit_statuses": statuses,
            "verdicts_before": before, "verdicts_after": len(after),
            "run_ids_once": len({v["run_id"] for v in after}) == len(after),
            "equal_to_single_run": cluster_statuses(after) ==
            cluster_statuses(cluster_lines(single)),
            "leftovers": len(os.listdir(temp))}


class TestRegradeClusterRehearsal(RegradeClusterCase):
    def test_shards_preempted_and_restarted_equal_one_uninterrupted_run(self):
        with TempDir() as folder:
            figures = cluster_rehearsal(self, folder)
        self.assertEqual(figures["exit_statuses"][:2], [143, -signal.SIGKILL])
        self.assertEqual(figures["exit_statuses"][2], 0)
        self.assertLess(figures["verdicts_before"], figures["runs"])
        self.assertEqual(figures["verdicts_after"], figures["runs"])
        self.assertTrue(figures["run_ids_once"])
        self.assertTrue(figures["equal_to_single_run"])
        self.assertEqual(figures["leftovers"], 0)


# --- regrade.py: large jobs, continued (issue 26) ---
# Nothing is written into an input, an interruption is never a verdict, and
# --make-instances survives signals, kill -9, shards on one --out and a full disk
# as grading does. Each test fails on the code before issue 26 (checked against
# main's regrade.py). The fixes below are three commits on the slow repository;
# their lists are written by hand from what each commit does.
CLUSTER_FIXES = (
    ("Fix value", {"slow/__init__.py": "def value():\n    return 2\n",
                   "tests/test_slow.py": CLUSTER_BASE["tests/test_slow.py"] +
                   "\n    def test_more(self):\n        self.assertGreater(slow.value(), 1)\n"}),
    ("Add twice", {"slow/twice.py": "def twice(x):\n    return 2 * x\n",
                   "tests/test_twice.py": "from slow.twice import twice\n\n\n"
                                          "def test_twice():\n    assert twice(2) == 4\n"}),
    ("Add half", {"slow/half.py": "def half(x):\n    return x / 2\n",
                  "tests/test_half.py": "from slow.half import half\n\n\n"
                                        "def test_half():\n    assert half(4) == 2\n"}),
)
CLUSTER_MADE_LISTS = {
    "acme__slow-fix1": (["tests/test_slow.py::TestSlow::test_more",
                         "tests/test_slow.py::TestSlow::test_value"],
                        ["tests/test_slow.py::TestSlow::test_kept"]),
    "acme__slow-fix2": (["tests/test_twice.py::test_twice"], []),
    "acme__slow-fix3": (["tests/test_half.py::test_half"], []),
}
# A git that, at its first call in the AT-th run's folder, kills itself with SIGTERM
# and signals its parent (the grader) half a second later: the job's own signal
# reaching git before the grader's handler runs, as Ctrl-C does to a process group.
CLUSTER_FAKE_GIT = """#!/bin/sh
folder=$(printf '%s\\n' "$PWD $*" | grep -o 'regrade-run[.][^/ ]*' | head -n 1)
if [ -n "$folder" ] && ! grep -qxF "$folder" "$FAKE_GIT_SEEN" 2>/dev/null; then
    echo "$folder" >> "$FAKE_GIT_SEEN"
    if [ "$(wc -l < "$FAKE_GIT_SEEN")" -eq "$FAKE_GIT_AT" ]; then
        (sleep 0.5; kill -TERM $PPID) </dev/null >/dev/null 2>&1 &
        kill -TERM $$
    fi
fi
exec "$REAL_GIT" "$@"
"""


def cluster_file_lines(path):
    """A record file's lines as parsed records; raises on a cut or broken line."""
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    assert not text or text.endswith("\n"), f"a cut last line in {path}"
    return [json.loads(line) for line in text.splitlines()]


def cluster_read(path):
    with open(path, "rb") as handle:
        return handle.read()


class RegradeClusterMakeCase(RegradeClusterCase):
    """The slow repository with three fixes on top, and one uninterrupted --make-instances,
    built once for every class of this kind (making it is the slow part)."""
    shared = {}

    @classmethod
    def setUpClass(cls):
        if not RegradeClusterMakeCase.shared:
            RegradeClusterMakeCase.shared.update(cls.build())
        for name, value in RegradeClusterMakeCase.shared.items():
            setattr(cls, name, value)

    @classmethod
    def tearDownClass(cls):
        pass        # the shared repository goes when the process ends (build's atexit)

    @classmethod
    def build(cls):
        RegradeClusterCase.setUpClass.__func__(cls)
        import atexit
        atexit.register(cls.temp.__exit__, None, None, None)
        shas = []
        for message, files in CLUSTER_FIXES:
            regrade_write_files(cls.repo, files)
            regrade_git(["add", "-A"], cls.repo)
            regrade_git(["commit", "-q", "-m", message], cls.repo)
            shas.append(regrade_git(["rev-parse", "HEAD"], cls.repo).strip())
        cls.fixes = write(cls.folder, "fixes.txt", "".join(
            f"{sha} acme__slow-fix{n}\n" for n, sha in enumerate(shas, 1)))
        cls.make_argv = ["--make-instances", cls.fixes, "--repo", f"acme/slow={cls.repo}",
                         "--repeat", "1", "--sandbox", "none", "--timeout", "120"]
        cls.reference = os.path.join(cls.folder, "reference")
        status, _, err = run("regrade.py", cls.make_argv + ["--out", cls.reference])
        assert status == 0, err
        return {name: getattr(cls, name) for name in (
            "temp", "folder", "repo", "base", "diffs", "fixes", "make_argv", "reference")}

    def made_ids(self, out):
        return [r["instance_id"] for r in cluster_file_lines(os.path.join(out, "made.jsonl"))]

    def assert_made_as_reference(self, out):
        for name in ("instances.jsonl", "rejected.jsonl"):
            self.assertEqual(cluster_read(os.path.join(out, name)),
                             cluster_read(os.path.join(self.reference, name)), name)
        self.assertEqual(sorted(self.made_ids(out)), sorted(CLUSTER_MADE_LISTS))
        self.assertEqual([n for n in os.listdir(out) if n.startswith(".tmp-")], [])


@unittest.skipUnless(regrade_has_pytest(), REGRADE_NO_PYTEST)
class TestRegradeClusterOutNeverAnInput(RegradeClusterMakeCase):
    """--out in the clone wrote .verdicts.lock, logs/ and the verdicts into it; --out at the
    FIXES file ended in a NotADirectoryError traceback."""

    def test_out_at_or_in_the_clone_or_at_an_input_is_refused_before_any_write(self):
        with TempDir() as folder:
            grading = self.job(folder, {"fix": "fix"})
            instances, predictions = grading[0], grading[1]
            cases = [("grading", grading, out) for out in (
                self.repo, os.path.join(self.repo, "verdicts"), instances, predictions)]
            cases += [("making", self.make_argv, out) for out in (
                self.repo, os.path.join(self.repo, "tests", "made"), self.fixes)]
            inputs = [self.repo, instances, predictions, self.fixes]
            before = {path: snapshot_bytes(path) if os.path.isdir(path) else cluster_read(path)
                      for path in inputs}
            for kind, argv, out in cases:
                with self.subTest(kind=kind, out=os.path.relpath(out, self.folder)):
                    status, stdout, err = run("regrade.py", argv + ["--out", out])
                    self.assertEqual(status, 2, err)
                    self.assertEqual(len(err.strip().splitlines()), 1, err)
                    self.assertRegex(err, r"^error: --out .*: (is|lies inside) .*; choose a "
                                          r"folder of its own\n$")
                    for path in inputs:
                        self.assertEqual(snapshot_bytes(path) if os.path.isdir(path) else
                                         cluster_read(path), before[path], path)


@unittest.skipUnless(regrade_has_pytest(), REGRADE_NO_PYTEST)
class TestRegradeClusterInterruptedStep(RegradeClusterMakeCase):
    """A git the job's own signal killed was recorded as the run's error ('git init -q
    failed'), and kept on resume."""

    def start_with_fake_git(self, argv, temp, at):
        bin_dir = os.path.join(temp, "..", "bin")
        os.makedirs(bin_dir, exist_ok=True)
        fake = write(bin_dir, "git", CLUSTER_FAKE_GIT)
        os.chmod(fake, 0o755)
        seen = os.path.join(temp, "..", "git-run-folders")
        env = dict(os.environ, TMPDIR=temp, PATH=bin_dir + os.pathsep + os.environ["PATH"],
                   REAL_GIT=shutil.which("git"), FAKE_GIT_SEEN=seen,
                   FAKE_GIT_AT=str(at))
        return subprocess.Popen([sys.executable, os.path.join(HERE, "regrade.py"), *argv],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)

    def test_grading_records_no_verdict_for_a_run_its_signal_broke(self):
        with TempDir() as folder:
            out, temp = os.path.join(folder, "out"), os.path.join(folder, "tmp")
            os.makedirs(temp)
            argv = self.job(folder, {"a": "fix", "b": "fix", "c": "wrong"}) + [
                "--out", out, "--sandbox", "none"]
            process = self.start_with_fake_git(argv, temp, at=2)   # run b's first git
            _, stderr = process.communicate(timeout=CLUSTER_DEADLINE)
            self.assertEqual(process.returncode, 143, stderr)
            self.assertEqual([v["run_id"] for v in cluster_lines(out)], ["a"], stderr)
            status, _, err = run("regrade.py", argv)
            self.assertEqual(status, 0, err)
            self.assertEqual({v["run_id"]: v["status"] for v in cluster_lines(out)},
                             {"a": "resolved", "b": "resolved", "c": "unresolved"})
            self.assertEqual(os.listdir(temp), [])

    def test_making_records_nothing_for_a_fix_its_signal_broke(self):
        with TempDir() as folder:
            out, temp = os.path.join(folder, "out"), os.path.join(folder, "tmp")
            os.makedirs(temp)
            argv = self.make_argv + ["--out", out]
            process = self.start_with_fake_git(argv, temp, at=6)   # the second fix's
            _, stderr = process.communicate(timeout=CLUSTER_DEADLINE)
            self.assertEqual(process.returncode, 143, stderr)
            self.assertEqual(self.made_ids(out), ["acme__slow-fix1"], stderr)
            self.assertRegex(stderr.strip().splitlines()[-1],
                             r"^error: interrupted by SIGTERM: 1 fix made and on disk in "
                             r".*made\.jsonl, 2 left unmade; rerun the same command")
            self.assertEqual(os.listdir(temp), [])
            status, _, err = run("regrade.py", argv)
            self.assertEqual(status, 0, err)
            self.assert_made_as_reference(out)


@unittest.skipUnless(regrade_has_pytest(), REGRADE_NO_PYTEST)
class TestRegradeClusterMaking(RegradeClusterMakeCase):
    """SIGTERM and SIGHUP killed --make-instances outright, its folders left in TMPDIR;
    shards on one --out lost fixes; a file-size limit ended in a traceback and a cut line."""

    def test_the_reference_lists(self):
        made = {r["instance_id"]: r for r in cluster_file_lines(
            os.path.join(self.reference, "instances.jsonl"))}
        self.assertEqual({i: (json.loads(r["FAIL_TO_PASS"]), json.loads(r["PASS_TO_PASS"]))
                          for i, r in made.items()}, CLUSTER_MADE_LISTS)
        for row in made.values():       # how long a run took is no part of an instance
            for side in row["validation"]["runs"].values():
                self.assertEqual({k for run_ in side for k in run_}, {"status", "reason"})

    def test_signals_stop_making_cleanly_and_say_how_to_resume(self):
        for signum, status in ((signal.SIGTERM, 143), (signal.SIGHUP, 129)):
            with self.subTest(signal=signum.name), TempDir() as folder:
                out, temp = os.path.join(folder, "out"), os.path.join(folder, "tmp")
                os.makedirs(temp)
                process = self.start(self.make_argv + ["--out", out], temp)
                cluster_wait(lambda: self.made_ids(out) or process.poll() is not None,
                             "the first made fix")
                process.send_signal(signum)
                _, stderr = process.communicate(timeout=CLUSTER_DEADLINE)
                self.assertEqual(process.returncode, status, stderr)
                self.assertRegex(stderr.strip().splitlines()[-1],
                                 rf"^error: interrupted by {signum.name}: \d fix(es)? made and "
                                 r"on disk in .*made\.jsonl, \d left unmade; rerun the same "
                                 r"command to make only those$")
                made = self.made_ids(out)
                self.assertEqual(sorted(r["instance_id"] for r in cluster_file_lines(
                    os.path.join(out, "instances.jsonl"))), sorted(made))
                self.assertEqual(os.listdir(temp), [])

    def test_three_shards_on_one_out_give_what_one_process_gives(self):
        with TempDir() as folder:
            out, temp = os.path.join(folder, "out"), os.path.join(folder, "tmp")
            os.makedirs(temp)
            shards = [self.start(self.make_argv + ["--out", out, "--shard", f"{k}/3"], temp)
                      for k in (1, 2, 3)]
            for process in shards:
                _, stderr = process.communicate(timeout=CLUSTER_DEADLINE)
                self.assertEqual(process.returncode, 0, stderr)
            self.assert_made_as_reference(out)
            self.assertEqual(os.listdir(temp), [])

    def test_a_file_size_limit_ends_making_saying_what_is_safe(self):
        import resource
        lines = {r["instance_id"]: len(json.dumps(r, ensure_ascii=False, sort_keys=True)) + 1
                 for r in cluster_file_lines(os.path.join(self.reference, "made.jsonl"))}
        limit = lines["acme__slow-fix1"] + lines["acme__slow-fix2"] // 2
        with TempDir() as folder:
            out = os.path.join(folder, "out")
            process = subprocess.Popen(
                [sys.executable, os.path.join(HERE, "regrade.py"), *self.make_argv, "--out", out],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))
            _, stderr = process.communicate(timeout=CLUSTER_DEADLINE)
            self.assertEqual(process.returncode, 2, stderr)
            self.assertNotIn("Traceback", stderr)
            self.assertRegex(stderr.strip().splitlines()[-1],
                             r"^error: --out .*: cannot write \(File too large\): 1 fix is "
                             r"safe in .*made\.jsonl \(whole lines on disk\), 2 left unmade")
            self.assertEqual(self.made_ids(out), ["acme__slow-fix1"])
            self.assertEqual([r["instance_id"] for r in cluster_file_lines(
                os.path.join(out, "instances.jsonl"))], ["acme__slow-fix1"])


class TestRegradeClusterOutDebris(RegradeClusterCase):
    """Unfinished .tmp-*.part files of a killed writer stayed in --out for ever."""

    def test_part_files_whose_writer_is_gone_are_removed_and_counted(self):
        with TempDir() as folder:
            out = os.path.join(folder, "out")
            child = subprocess.Popen(["true"])
            child.wait()
            me, host, boot = os.getpid(), cluster_host(), cluster_boot()
            names = {
                "dead": (".", f".tmp-regrade-part.{host}.{child.pid}.1.{boot}.a1.part"),
                "dead-log": ("logs", f".tmp-regrade-part.{host}.{child.pid}.1.{boot}.b2.part"),
                "live": (".", f".tmp-regrade-part.{host}.{me}.{cluster_start_time(me)}.{boot}"
                              f".c3.part"),
                "other-host": (".", f".tmp-regrade-part.not-{host}.{child.pid}.1.{boot}.d4.part"),
                "no-owner": (".", ".tmp-e5.part"),
            }
            for sub, name in names.values():
                write(os.path.join(out, sub), name, "half a file")
            status, _, err = run("regrade.py", self.job(folder, {"fix": "fix"}) +
                                 ["--out", out])
            self.assertEqual(status, 0, err)
            self.assertIn("removed 2 unfinished files (.tmp-*.part) left in", err)
            left = {k for k, (sub, name) in names.items()
                    if os.path.exists(os.path.join(out, sub, name))}
            self.assertEqual(left, {"live", "other-host", "no-owner"})


class TestRegradeClusterSharedFiles(RegradeClusterCase):
    """verdicts.jsonl quoted the absolute instances path and the tree's folder, whose name
    holds the host."""

    def test_shared_files_name_no_host_and_no_absolute_path(self):
        with TempDir() as folder:
            out = os.path.join(folder, "out")
            temp = os.path.join(folder, "tmp")
            os.makedirs(temp)
            self.in_temp(temp)
            argv = self.job(folder, {"fix": "fix"})
            # A run naming no instance, and one whose import error quotes the tree's path.
            raises = regrade_diff_of(self, {"slow/__init__.py":
                                            "raise RuntimeError('at ' + __file__)\n"})
            with open(argv[1], "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"run_id": "ghost", "instance_id": "nope-1",
                                         "model_patch": ""}) + "\n")
                handle.write(json.dumps({"run_id": "raises", "instance_id": "slow-1",
                                         "model_patch": raises}) + "\n")
            status, _, err = run("regrade.py", [os.path.abspath(argv[0]), *argv[1:],
                                                "--out", out])
            self.assertEqual(status, 0, err)
            verdicts = {v["run_id"]: v for v in cluster_lines(out)}
            self.assertIn("not in", verdicts["ghost"]["reason"])
            # The tree's path, with the host in its folder's name, is cut off: relative.
            self.assertTrue(verdicts["raises"]["reason"].endswith(
                "RuntimeError: at slow/__init__.py"), verdicts["raises"]["reason"])
            for name in ("verdicts.jsonl", "verdicts.csv", "swebench_summary.json"):
                with open(os.path.join(out, name), encoding="utf-8") as handle:
                    text = handle.read()
                self.assertNotIn(cluster_host() + ".", text, name)
                for private in (folder, os.path.realpath(folder), temp):
                    # Relative (../../tmp/...) is what a path outside the folder becomes.
                    self.assertNotRegex(text, r"(?<!\.\.)" + re.escape(private), name)


def regrade_diff_of(case, files):
    """A diff of the slow repository leaving `files` so (made in a scratch clone)."""
    with TempDir() as folder:
        work = os.path.join(folder, "work")
        regrade_git(["clone", "-q", case.repo, work], folder)
        regrade_git(["checkout", "-q", case.base], work)
        return regrade_diff(work, files)


def cluster_interruptions(case, folder, delays, making=False, load=0):
    """Interrupt a job at each delay after its start (0: during start-up) with SIGINT,
    SIGTERM and SIGHUP in turn, sent to its process group as a terminal or a scheduler
    would; rerun it to the end each time; return the figures and whether every verdict
    (or instance) equals an uninterrupted run's. load: busy processes running meanwhile."""
    signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(load)]
    try:
        if making:
            argv = case.make_argv
            expected = {n: cluster_read(os.path.join(case.reference, n))
                        for n in ("instances.jsonl", "rejected.jsonl")}
        else:
            argv = case.job(folder, {f"run-{i}": ("fix", "wrong", "slower-fix")[i % 3]
                                     for i in range(4)}) + ["--sandbox", "none"]
            status, _, err = run("regrade.py", argv + ["--out", os.path.join(folder, "single")])
            case.assertEqual(status, 0, err)
            expected = cluster_statuses(cluster_lines(os.path.join(folder, "single")))
        figures = {"trials": 0, "differing": 0, "exit_statuses": collections.Counter(),
                   "rerun_failures": 0, "leftovers": 0}
        for number, delay in enumerate(delays):
            out = os.path.join(folder, f"out-{number}")
            temp = os.path.join(folder, f"tmp-{number}")
            os.makedirs(temp)
            process = subprocess.Popen(
                [sys.executable, os.path.join(HERE, "regrade.py"), *argv, "--out", out],
                env=dict(os.environ, TMPDIR=temp), stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, text=True, start_new_session=True)
            time.sleep(delay)
            signum = signals[number % len(signals)]
            try:
                os.killpg(process.pid, signum)
            except ProcessLookupError:
                pass
            process.communicate(timeout=CLUSTER_DEADLINE)
            figures["exit_statuses"][str(process.returncode)] += 1
            again = subprocess.run([sys.executable, os.path.join(HERE, "regrade.py"), *argv,
                                    "--out", out], env=dict(os.environ, TMPDIR=temp),
                                   capture_output=True, text=True, timeout=CLUSTER_DEADLINE)
            figures["trials"] += 1
            figures["rerun_failures"] += again.returncode != 0
            if making:
                got = {n: cluster_read(os.path.join(out, n)) if os.path.exists(
                    os.path.join(out, n)) else None for n in expected}
            else:
                got = cluster_statuses(cluster_lines(out))
            figures["differing"] += got != expected
            figures["leftovers"] += len(os.listdir(temp)) + len(
                [n for n in os.listdir(out) if n.startswith(".tmp-")])
        figures["exit_statuses"] = dict(sorted(figures["exit_statuses"].items()))
        return figures
    finally:
        for process in busy:
            process.kill()
            process.wait()


@unittest.skipUnless(regrade_has_pytest(), REGRADE_NO_PYTEST)
class TestRegradeClusterInterruptions(RegradeClusterMakeCase):
    """Interrupted at many points, start-up included, then rerun: every verdict and every
    instance as an uninterrupted run's (the benchmark runs it 20 times under load)."""

    def test_grading_interrupted_anywhere_equals_one_uninterrupted_run(self):
        with TempDir() as folder:
            figures = cluster_interruptions(self, folder, (0.0, 1.0, 2.5))
        self.assertEqual((figures["differing"], figures["rerun_failures"],
                          figures["leftovers"]), (0, 0, 0), figures)
    # Making interrupted and rerun: TestRegradeClusterInterruptedStep and the benchmark.

    def test_a_signal_while_starting_stops_the_job_as_one_later(self):
        """The old code killed the job outright (exit -15) when SIGTERM came while it probed
        the interpreter: its handler was set only once the runs began."""
        with TempDir() as folder:
            python = write(folder, "python", "#!/bin/sh\n"
                           'if [ ! -e "$SIGNALLED" ]; then : > "$SIGNALLED"; kill -TERM $PPID; fi\n'
                           f'exec {shlex.quote(sys.executable)} "$@"\n')
            os.chmod(python, 0o755)
            grading = self.job(folder, {"a": "fix", "b": "wrong"})
            for kind, argv, line in (
                    ("grading", grading, r"0 runs graded and on disk in .*, 2 left ungraded"),
                    ("making", self.make_argv, r"0 fixes made and on disk in .*, 3 left unmade")):
                with self.subTest(kind=kind):
                    out, temp = os.path.join(folder, kind), os.path.join(folder, "tmp-" + kind)
                    os.makedirs(temp)
                    process = subprocess.run(
                        [sys.executable, os.path.join(HERE, "regrade.py"), *argv, "--out", out,
                         "--python", python, "--sandbox", "none"],
                        env=dict(os.environ, TMPDIR=temp,
                                 SIGNALLED=os.path.join(folder, "signalled-" + kind)),
                        capture_output=True, text=True, timeout=CLUSTER_DEADLINE)
                    self.assertEqual(process.returncode, 143, process.stderr)
                    self.assertRegex(process.stderr.strip().splitlines()[-1],
                                     r"^error: interrupted by SIGTERM: " + line)
                    self.assertEqual(os.listdir(temp), [])


# --- regrade.py: the sandbox ---
# Hostile code under each --sandbox mode. The diff below fixes the toy bug and,
# when the tests import it, tries to write into the user's home and clone, read
# a secret from the home, connect to a listener this test opens on 127.0.0.1,
# leave a process running, and write into the tree's .git and the recorder.
# Each attempt prints what it got, so the log shows what happened inside.
SANDBOX_HOSTILE = """\
import json, os, socket, subprocess, sys
FACTS = {}


def attempt(name, action):
    try:
        FACTS[name] = action()
    except Exception as exc:
        FACTS[name] = 'blocked: ' + type(exc).__name__


def write(path, mode='w'):
    with open(path, mode) as handle:
        handle.write('planted by the code under test\\\\n' if mode == 'w' else '')
    return 'done'


def read(path):
    with open(path) as handle:
        return handle.read()


def connect():
    with socket.create_connection(('127.0.0.1', PORT), timeout=5) as sock:
        sock.sendall(b'leak')
    return 'done'


def linger():
    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)', TOKEN],
                     start_new_session=True, stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return 'started'


attempt('write_home', lambda: write(os.path.join(HOME, 'planted.txt')))
attempt('write_clone', lambda: write(os.path.join(CLONE, 'planted.txt')))
attempt('read_home', lambda: read(os.path.join(HOME, 'secret.txt')))
attempt('connect', connect)
attempt('linger', linger)
attempt('git_config', lambda: write(os.path.join(os.getcwd(), '.git', 'config'), 'a'))
attempt('recorder', lambda: write(sys.argv[0], 'a'))
attempt('etc_shadow', lambda: os.path.exists('/etc/shadow'))
print('HOSTILE ' + json.dumps(FACTS, sort_keys=True), flush=True)


"""
SANDBOX_SECRET = "the user's secret\n"


def sandbox_lingering(token):
    """Live processes whose command line holds `token` (zombies are dead)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read()
            with open(f"/proc/{entry}/stat") as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if token.encode() in cmdline.split(b"\0") and state != "Z":
            found.append(int(entry))
    return found


class RegradeSandboxFixture(RegradeFixture):
    """Grade the hostile run, the plain fix and no change under one --sandbox mode."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.regrade = load("regrade.py")
        cls.no_bwrap = bwrap_missing()

    def hostile_grade(self, sandbox_argv, python_in_home=False):
        """Return (verdicts, facts seen inside, what leaked outside, the text summary)."""
        import socket
        with TempDir() as folder:
            home = os.path.join(folder, "home")
            write(home, "secret.txt", SANDBOX_SECRET)
            python = sys.executable
            if python_in_home:         # a virtualenv under the user's home, as many have
                venv = os.path.join(home, "venv")
                subprocess.run([sys.executable, "-m", "venv", "--without-pip",
                                "--system-site-packages", venv], check=True, capture_output=True)
                python = os.path.join(venv, "bin", "python")
            home_before, clone_before = snapshot(home), snapshot(self.repo)
            token = f"regrade-hostile-{os.getpid()}-{time.monotonic_ns()}"
            listener = socket.socket()
            listener.bind(("127.0.0.1", 0))
            listener.listen(5)
            constants = (f"HOME = {home!r}\nCLONE = {self.repo!r}\n"
                         f"PORT = {listener.getsockname()[1]}\nTOKEN = {token!r}\n")
            diff = self.diff_of({"toy/core.py": constants + SANDBOX_HOSTILE + TOY_FIX})
            instances, predictions = self.files(folder, [self.instance("toy-1", "unittest")], [
                ("hostile", "toy-1", diff), ("fix", "toy-1", self.diffs["fix"]),
                ("empty", "toy-1", "")])
            out = os.path.join(folder, "out")
            saved_home = os.environ.get("HOME")
            os.environ["HOME"] = home        # the grader's user's home is the fake one
            try:
                status, report, err = regrade_json([instances, predictions, "--repo", self.repo,
                                                    "--out", out, "--python", python,
                                                    *sandbox_argv])
                lingering = sandbox_lingering(token)
                for _ in range(100):        # a bounded wait for the kernel to reap
                    if not lingering:
                        break
                    time.sleep(0.1)
                    lingering = sandbox_lingering(token)
                listener.setblocking(False)
                try:
                    listener.accept()[0].close()
                    connected = True
                except BlockingIOError:
                    connected = False
            finally:
                listener.close()
                for pid in sandbox_lingering(token):
                    os.kill(pid, signal.SIGKILL)
                if saved_home is None:
                    os.environ.pop("HOME", None)
                else:
                    os.environ["HOME"] = saved_home
                home_after, clone_after = snapshot(home), snapshot(self.repo)
                planted = os.path.join(self.repo, "planted.txt")
                if os.path.exists(planted):
                    os.remove(planted)
            self.assertEqual(status, 0, err)
            with open(os.path.join(out, "logs", "hostile.log"), encoding="utf-8") as handle:
                facts = [json.loads(line[len("HOSTILE "):]) for line in handle
                         if line.startswith("HOSTILE ")]
            summary = run("regrade.py", ["--summarize", os.path.join(out, "verdicts.jsonl")])[1]
        self.assertEqual(len(facts), 1, "the hostile code ran once")
        leaks = {"home": sorted(set(home_after) - set(home_before)),
                 "clone": sorted(set(clone_after) - set(clone_before)),
                 "connected": connected, "lingering": bool(lingering)}
        return regrade_by_run(report), facts[0], leaks, " ".join(summary.split())

    def assert_verdicts_right(self, verdicts, isolation):
        self.assert_status(verdicts, {"hostile": "resolved", "fix": "resolved",
                                      "empty": "unresolved"})
        self.assertEqual({v["isolation"] for v in verdicts.values()}, {isolation})


class TestRegradeSandboxBwrap(RegradeSandboxFixture):
    def test_hostile_code_is_contained_and_the_fix_still_resolves(self):
        if self.no_bwrap:
            self.skipTest(self.no_bwrap)
        verdicts, facts, leaks, summary = self.hostile_grade(["--sandbox", "bwrap"],
                                                             python_in_home=True)
        self.assert_verdicts_right(verdicts, "bwrap")
        self.assertEqual(leaks, {"home": [], "clone": [], "connected": False,
                                 "lingering": False})
        blocked = {k: v for k, v in facts.items() if str(v).startswith("blocked: ")}
        self.assertEqual(sorted(set(blocked) - {"write_home"}), [
            "connect", "git_config", "read_home", "recorder", "write_clone"], facts)
        # The home holds the virtualenv, so the sandbox makes the folders above
        # it; where those sit on its private /tmp the write lands there and
        # vanishes with the run (leaks["home"] above is the real home).
        self.assertTrue(facts["write_home"] == "done" or "write_home" in blocked, facts)
        self.assertEqual(facts["linger"], "started")     # started, and killed with the run
        self.assertIs(facts["etc_shadow"], False)
        self.assertIn("sandbox: 3 runs under bwrap (no network", summary)
        self.assertNotIn("not isolated", summary)

    def test_a_timeout_under_bwrap_leaves_no_process_behind(self):
        if self.no_bwrap:
            self.skipTest(self.no_bwrap)
        token = f"regrade-hangs-{os.getpid()}-{time.monotonic_ns()}"
        hangs = ("import subprocess, sys, time\n"
                 f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)', "
                 f"{token!r}], start_new_session=True)\ntime.sleep(120)\n")
        self.diffs["hangs"] = self.diff_of({"toy/core.py": hangs + TOY_FIX})
        try:
            verdicts = self.grade("unittest", ["hangs"], ["--timeout", "2", "--sandbox", "bwrap"])
            lingering = sandbox_lingering(token)
            for _ in range(100):
                if not lingering:
                    break
                time.sleep(0.1)
                lingering = sandbox_lingering(token)
        finally:
            for pid in sandbox_lingering(token):
                os.kill(pid, signal.SIGKILL)
            del self.diffs["hangs"]
        self.assertEqual(verdicts["hangs"]["status"], "timeout")
        self.assertEqual(lingering, [], "a process of the timed-out run survived")

    def test_the_default_is_bwrap_where_it_runs(self):
        if self.no_bwrap:
            self.skipTest(self.no_bwrap)
        verdicts = self.grade("unittest", ["fix", "empty"])
        self.assertEqual({v["isolation"] for v in verdicts.values()}, {"bwrap"})


class TestRegradeSandboxNone(RegradeSandboxFixture):
    def test_without_a_sandbox_the_hostile_code_reaches_everything(self):
        # What --sandbox none leaks, recorded so that a change shows: the home
        # and the clone are written, the secret read, the listener reached, and
        # a process started in its own session outlives the test command.
        verdicts, facts, leaks, summary = self.hostile_grade(["--sandbox", "none"])
        self.assert_verdicts_right(verdicts, "none")
        self.assertEqual(leaks, {"home": ["planted.txt"], "clone": ["planted.txt"],
                                 "connected": True, "lingering": True})
        self.assertEqual(facts["read_home"], SANDBOX_SECRET)
        self.assertEqual({k: facts[k] for k in ("write_home", "write_clone", "connect",
                                                "git_config", "recorder")},
                         dict.fromkeys(("write_home", "write_clone", "connect", "git_config",
                                        "recorder"), "done"))
        self.assertIn("sandbox: 3 runs under none (the code under test runs with your user's "
                      "rights: files, network and processes are not isolated)", summary)


class TestRegradeSandboxSummary(unittest.TestCase):
    def test_summary_counts_runs_per_isolation_and_older_verdicts_as_not_recorded(self):
        regrade = load("regrade.py")
        verdict = {"run_id": "r", "instance_id": "i", "status": "resolved", "resolution": "FULL",
                   "reason": "", "tests_status": None, "fail_to_pass": {}, "pass_to_pass": {},
                   "applied_with": "git apply", "duration_s": 0.0, "test_s": 0.0,
                   "completed": True, "touched_tests": [], "flaky": [], "results_from": None}
        runs = [dict(verdict, run_id="a", isolation="none"),
                dict(verdict, run_id="b", isolation="bwrap"),
                dict(verdict, run_id="c", isolation="bwrap"), dict(verdict, run_id="d")]
        summary = regrade.summarise(runs)
        self.assertEqual(summary["isolation"], {"bwrap": 2, "none": 1, "not recorded": 1})
        text = " ".join(regrade.render_summary(summary, runs, "text", {
            "script": "regrade.py", "version": "0", "python": "3", "script_sha256": "0" * 64,
            "command": "c", "seed": None, "inputs": []}).split())
        self.assertIn("sandbox: 2 runs under bwrap (no network,", text)
        self.assertIn("sandbox: 1 run under none (the code under test runs with your user's "
                      "rights", text)
        self.assertIn("sandbox: 1 run whose isolation was not recorded", text)


class TestRegradeSandboxFallback(RegradeSandboxFixture):
    def without_bwrap(self):
        """Play a machine without bwrap for the duration of a with block."""
        programs = self.regrade.SANDBOX_PROGRAMS

        @contextlib.contextmanager
        def missing():
            saved = dict(programs)
            programs["bwrap"] = "regrade-test-no-such-bwrap"
            try:
                yield
            finally:
                programs.update(saved)
        return missing()

    def test_sandbox_bwrap_where_bwrap_is_missing_exits_2_saying_how_to_install(self):
        with self.without_bwrap(), TempDir() as folder:
            instances, predictions = self.files(folder, [self.instance("toy-1", "unittest")],
                                                [("fix", "toy-1", self.diffs["fix"])])
            status, out, err = run("regrade.py", [instances, predictions, "--repo", self.repo,
                                                  "--sandbox", "bwrap"])
        self.assertEqual((status, out), (2, ""))
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("error: --sandbox bwrap: bwrap is not installed", err)
        self.assertIn("apt-get install bubblewrap", err)

    def test_auto_without_bwrap_falls_back_to_unshare_and_says_files_are_not_isolated(self):
        with self.without_bwrap():
            chosen = self.regrade.choose_sandbox("auto", sys.executable, False)
            if chosen["isolation"] != "unshare":
                self.skipTest(f"unshare cannot run here either: {chosen['fallback']}")
            verdicts, facts, leaks, summary = self.hostile_grade([])
        self.assert_verdicts_right(verdicts, "unshare")
        # The network and the processes are contained; the files are not.
        self.assertEqual(leaks, {"home": ["planted.txt"], "clone": ["planted.txt"],
                                 "connected": False, "lingering": False})
        self.assertEqual(facts["read_home"], SANDBOX_SECRET)
        self.assertTrue(facts["connect"].startswith("blocked: "), facts)
        self.assertIn("sandbox: 3 runs under unshare (no network and no process outlives a "
                      "run, but the filesystem is not isolated", summary)


# --- regrade.py: making instances ---
# One synthetic history holds every kind of fix --make-instances must tell
# apart. The expected lists are written by hand from what each commit does, so
# they are not the code's own answer; the runs use --sandbox none and --repeat 2
# to stay quick.
MAKE_BASE = {
    "calc/__init__.py": "",
    "calc/core.py": ("def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n\n\n"
                     "def neg(a):\n    return a\n"),
    "tests/__init__.py": "",
    "tests/test_core.py": "from calc.core import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
    "README.md": "calc\n",
}
# Passes on the first, third, ... run that reads the counter: its outcome flips every run.
MAKE_FLAKY = ("\n\nimport os\n\n\ndef test_flaky():\n    path = os.environ['MAKE_COUNTER']\n"
              "    n = int(open(path).read()) if os.path.exists(path) else 0\n"
              "    with open(path, 'w') as handle:\n        handle.write(str(n + 1))\n"
              "    assert n % 2 == 0\n")


@unittest.skipUnless(regrade_has_pytest(), REGRADE_NO_PYTEST)
class RegradeMakeInstances(RegradeRepoCase):
    """--make-instances on a history of fixes, each a case of the manual's rules."""

    @classmethod
    def commit(cls, files, message, raw=None):
        regrade_write_files(cls.repo, files)
        for name, data in (raw or {}).items():
            with open(os.path.join(cls.repo, name), "wb") as handle:
                handle.write(data)
        regrade_git(["add", "-A"], cls.repo)
        regrade_git(["commit", "-q", "-m", message], cls.repo)
        return regrade_git(["rev-parse", "HEAD"], cls.repo).strip()

    @classmethod
    def setUpClass(cls):
        cls.make_repo(MAKE_BASE)
        core = MAKE_BASE["calc/core.py"]
        fixed_add = core.replace("return a - b", "return a + b")
        cls.sha = {"fix-add": cls.commit({
            "calc/core.py": fixed_add, "CHANGES.rst": "- add adds\n",
            "tests/test_core.py": MAKE_BASE["tests/test_core.py"] + MAKE_FLAKY +
            "\n\ndef test_add():\n    from calc.core import add\n    assert add(2, 3) == 5\n"},
            "Fix add\n\nadd subtracted.")}
        with_sub = fixed_add + "\n\ndef sub(a, b):\n    return a - b\n"
        cls.sha["new-file"] = cls.commit({
            "calc/core.py": with_sub, "tests/conftest.py": "# shared fixtures\n",
            "tests/test_sub.py": "from calc.core import sub\n\n\ndef test_sub():\n"
                                 "    assert sub(5, 3) == 2\n"}, "Add sub")
        refactored = with_sub.replace("return a * b", "return b * a")
        cls.sha["no-failing"] = cls.commit({
            "calc/core.py": refactored,
            "tests/test_other.py": "from calc.core import mul\n\n\ndef test_mul_zero():\n"
                                   "    assert mul(0, 7) == 0\n"}, "Refactor mul")
        cls.sha["only-tests"] = cls.commit({
            "tests/test_other.py": "from calc.core import mul\n\n\ndef test_mul_zero():\n"
                                   "    assert mul(0, 7) == 0\n\n\ndef test_mul_one():\n"
                                   "    assert mul(1, 7) == 7\n"}, "More tests")
        regrade_git(["checkout", "-q", "-b", "feature"], cls.repo)
        cls.commit({"calc/core.py": refactored.replace("    return a\n", "    return -a\n"),
                    "tests/test_neg.py": "from calc.core import neg\n\n\ndef test_neg():\n"
                                         "    assert neg(2) == -2\n"}, "Fix neg")
        regrade_git(["checkout", "-q", "main"], cls.repo)
        cls.first_parent = cls.commit({"calc/other.py": "VALUE = 1\n"}, "Add other")
        regrade_git(["merge", "-q", "--no-ff", "-m", "Merge feature", "feature"], cls.repo)
        cls.sha["merge"] = regrade_git(["rev-parse", "HEAD"], cls.repo).strip()
        cls.sha["latin-1"] = cls.commit(
            {"tests/test_latin.py": "def test_latin():\n    assert True\n"}, "Latin-1 source",
            raw={"calc/latin.py": b"# caf\xe9\nNAME = 'x'\n"})
        cls.fixes = write(cls.folder, "fixes.txt", "".join(
            f"{cls.sha[name]} {'' if name == 'merge' else name}  # {name}\n"
            for name in ("fix-add", "new-file", "no-failing", "only-tests", "merge", "latin-1")))
        cls.counter = os.path.join(cls.folder, "counter")
        cls.out = os.path.join(cls.folder, "made")
        cls.argv = ["--make-instances", cls.fixes, "--repo", f"me/calc={cls.repo}",
                    "--out", cls.out, "--repeat", "2", "--sandbox", "none", "--timeout", "300",
                    "--env", f"MAKE_COUNTER={cls.counter}"]
        cls.status, cls.report, cls.err = regrade_json(cls.argv)
        cls.made = cls.read_jsonl("instances.jsonl")
        cls.rejected = cls.read_jsonl("rejected.jsonl")

    @classmethod
    def read_jsonl(cls, name):
        with open(os.path.join(cls.out, name), encoding="utf-8") as handle:
            return {row["instance_id"]: row for row in map(json.loads, handle)}

    def lists(self, instance_id):
        row = self.made[instance_id]
        return json.loads(row["FAIL_TO_PASS"]), json.loads(row["PASS_TO_PASS"])

    def test_made_and_rejected(self):
        self.assertEqual(self.status, 0, self.err)
        merge_id = "me__calc-" + self.sha["merge"][:8]
        self.assertEqual(sorted(self.made), sorted(["fix-add", "new-file", merge_id]))
        self.assertEqual(sorted(self.rejected), ["latin-1", "no-failing", "only-tests"])
        summary = self.report["summary"]
        self.assertEqual((summary["made"], summary["rejected"]), (3, 3))
        self.assertEqual(summary["rejected_by_reason"], {
            "not UTF-8": 1, "only tests changed": 1, "no FAIL_TO_PASS test": 1})

    def test_flaky_test_excluded(self):
        self.assertEqual(self.lists("fix-add"), (["tests/test_core.py::test_add"],
                                                 ["tests/test_core.py::test_mul"]))
        self.assertEqual(self.made["fix-add"]["validation"]["flaky"],
                         ["tests/test_core.py::test_flaky"])

    def test_schema_and_left_out(self):
        row = self.made["fix-add"]
        for field in ("instance_id", "repo", "base_commit", "patch", "test_patch",
                      "FAIL_TO_PASS", "PASS_TO_PASS", "created_at", "problem_statement",
                      "version", "environment_setup_commit", "test_runner", "validation"):
            self.assertIn(field, row)
        self.assertEqual(row["base_commit"], self.base)
        self.assertEqual(row["environment_setup_commit"], self.base)
        self.assertEqual(row["problem_statement"], "Fix add\n\nadd subtracted.\n")
        self.assertEqual(row["created_at"], "2026-01-01T00:00:00Z")
        self.assertEqual(row["repo"], "me/calc")
        self.assertEqual(row["test_runner"], "pytest")
        self.assertEqual(row["validation"]["left_out"], ["CHANGES.rst"])
        self.assertNotIn("CHANGES.rst", row["patch"] + row["test_patch"])
        self.assertEqual(row["validation"]["K"], 2)
        self.assertEqual(len(row["validation"]["runs"]["before"]), 2)
        self.assertEqual(row["validation"]["self_check"], {"gold": "resolved",
                                                           "empty": "unresolved"})

    def test_new_test_file_counts_as_failing_before(self):
        self.assertEqual(self.lists("new-file"), (["tests/test_sub.py::test_sub"], []))

    def test_conftest_change_is_in_the_test_patch(self):
        row = self.made["new-file"]
        self.assertIn("diff --git a/tests/conftest.py b/tests/conftest.py", row["test_patch"])
        self.assertNotIn("conftest.py", row["patch"])
        self.assertEqual(row["validation"]["run_files"], ["tests/test_sub.py"])

    def test_merge_commit_uses_its_first_parent(self):
        row = self.made["me__calc-" + self.sha["merge"][:8]]
        self.assertEqual(row["base_commit"], self.first_parent)
        self.assertEqual(json.loads(row["FAIL_TO_PASS"]), ["tests/test_neg.py::test_neg"])
        self.assertNotIn("calc/other.py", row["patch"])

    def test_rejection_reasons(self):
        self.assertEqual(self.rejected["latin-1"]["rejected"],
                         "the diff is not UTF-8 (in calc/latin.py)")
        self.assertEqual(self.rejected["only-tests"]["rejected"], "only tests changed")
        self.assertTrue(self.rejected["no-failing"]["rejected"].startswith(
            "no FAIL_TO_PASS test"), self.rejected["no-failing"]["rejected"])
        self.assertEqual(json.loads(self.rejected["no-failing"]["PASS_TO_PASS"]),
                         ["tests/test_other.py::test_mul_zero"])

    def test_made_instances_grade_gold_resolved_and_empty_unresolved(self):
        instances = os.path.join(self.out, "instances.jsonl")
        for runs, want in (("gold", "resolved"), ("empty", "unresolved")):
            status, report, err = regrade_json([instances, runs, "--repo", self.repo,
                                                "--sandbox", "none",
                                                "--env", f"MAKE_COUNTER={self.counter}"])
            self.assertEqual(status, 0, err)
            self.assertEqual({v["instance_id"]: v["status"] for v in report["runs"]},
                             {i: want for i in self.made})
        status, report, err = regrade_json(["--summarize",
                                            os.path.join(self.out, "self_check.jsonl")])
        self.assertEqual((status, report["summary"]["runs"]), (0, 6), err)

    def test_rerun_redoes_nothing_unchanged(self):
        with open(os.path.join(self.out, "instances.jsonl"), "rb") as handle:
            before = handle.read()
        status, report, err = regrade_json(self.argv)
        self.assertEqual(status, 0, err)
        self.assertEqual(report["summary"]["reused"], 6)
        with open(os.path.join(self.out, "instances.jsonl"), "rb") as handle:
            self.assertEqual(handle.read(), before)

    def test_text_and_markdown_reports(self):
        argv = [a for a in self.argv]
        status, out, err = run("regrade.py", argv)
        self.assertEqual(status, 0, err)
        self.assertIn("6 fixes of me/calc, 3 made, 3 rejected", out)
        self.assertIn("self-check: gold resolved 3 of 3, empty unresolved 3 of 3", out)
        self.assertIn("- latin-1: the diff is not UTF-8 (in calc/latin.py)", out)
        status, out, err = run("regrade.py", argv + ["--format", "markdown"])
        self.assertIn("### Rejected", out)
        self.assertNotIn(self.folder, out.split("Provenance")[0])


class RegradeMakeInstancesRules(RegradeRepoCase):
    """The pure rules of --make-instances: FIXES lines, ranges, the file split."""

    @classmethod
    def setUpClass(cls):
        cls.make_repo(MAKE_BASE)
        cls.regrade = load("regrade.py")
        commit = RegradeMakeInstances.commit.__func__
        core = MAKE_BASE["calc/core.py"]
        cls.sha = {
            "slow": commit(cls, {"calc/core.py": core + "\nSLOW = 1\n", "tests/test_slow.py":
                                 "import time\ntime.sleep(120)\n\n\ndef test_x():\n    pass\n"},
                           "slow"),
            "broken": commit(cls, {"calc/core.py": core + "\nBROKEN = 1\n",
                                   "tests/test_broken.py": "def test_x(:\n    pass\n"}, "broken"),
            "tests-only-a": commit(cls, {"tests/test_a.py": "def test_a():\n    pass\n"}, "a"),
            "tests-only-b": commit(cls, {"tests/test_b.py": "def test_b():\n    pass\n"}, "b"),
            "docs-only": commit(cls, {"docs/x.rst": "x\n", "calc/core.py": core}, "docs")}

    def make(self, names, *extra):
        fixes = write(self.folder, "rules.txt", "".join(f"{self.sha[n]} {n}\n" for n in names))
        out = tempfile.mkdtemp(dir=self.folder)
        status, report, err = regrade_json(["--make-instances", fixes, "--repo", self.repo,
                                            "--out", out, "--sandbox", "none", "--repeat", "1",
                                            *extra])
        self.assertEqual(status, 0, err)
        return {f["instance_id"]: f["rejected"] for f in report["summary"]["fixes"]}

    @unittest.skipUnless(regrade_has_pytest(), REGRADE_NO_PYTEST)
    def test_every_run_timed_out_is_rejected(self):
        self.assertEqual(self.make(["slow"], "--timeout", "2"),
                         {"slow": "every run timed out (before the fix; --timeout)"})

    @unittest.skipUnless(regrade_has_pytest(), REGRADE_NO_PYTEST)
    def test_runner_that_collects_nothing_is_rejected(self):
        reason = self.make(["broken"])["broken"]
        self.assertTrue(reason.startswith("the runner could not collect"), reason)

    @unittest.skipUnless(regrade_has_pytest(), REGRADE_NO_PYTEST)
    def test_shards_split_the_fixes(self):
        names = ["tests-only-a", "tests-only-b", "docs-only"]
        shards = [self.make(names, "--shard", f"{k}/2") for k in (1, 2)]
        self.assertEqual(sorted(list(shards[0]) + list(shards[1])), sorted(names))
        self.assertEqual(shards[0].get("docs-only", shards[1].get("docs-only")),
                         "no test file touched")

    def test_range_keeps_commits_changing_tests_and_code(self):
        base = regrade_git(["rev-parse", "HEAD"], self.repo).strip()
        wanted = []
        for number, files in enumerate(({"calc/a.py": "A = 1\n", "tests/test_a.py": "x = 1\n"},
                                         {"calc/b.py": "B = 1\n"},
                                         {"tests/test_b.py": "y = 1\n", "docs/b.rst": "b\n"},
                                         {"calc/c.py": "C = 1\n", "tests/test_c.py": "z = 1\n"})):
            regrade_write_files(self.repo, files)
            regrade_git(["add", "-A"], self.repo)
            regrade_git(["commit", "-q", "-m", f"c{number}"], self.repo)
            if number in (0, 3):
                wanted.append(regrade_git(["rev-parse", "HEAD"], self.repo).strip())
        git_dir = os.path.join(self.repo, ".git")
        entries = self.regrade.parse_fixes(f"{base}..HEAD\n", "fixes")
        found = self.regrade.expand_fixes(entries, git_dir)
        self.assertEqual([e["sha"] for e in found], wanted)

    def test_bad_fixes_line_is_bad_input(self):
        fixes = write(self.folder, "bad.txt", "HEAD one two\n")
        status, out, err = run("regrade.py", ["--make-instances", fixes, "--repo", self.repo,
                                              "--out", os.path.join(self.folder, "o"),
                                              "--sandbox", "none"])
        self.assertEqual(status, 2)
        self.assertIn("line 1: unexpected field 'two'", err)
        self.assertNotIn("Traceback", err)

    @unittest.skipUnless(regrade_has_pytest(), REGRADE_NO_PYTEST)
    def test_unknown_revision_is_rejected_not_fatal(self):
        fixes = write(self.folder, "unknown.txt", "no-such-rev nope\n")
        out = os.path.join(self.folder, "o2")
        status, report, err = regrade_json(["--make-instances", fixes, "--repo", self.repo,
                                            "--out", out, "--sandbox", "none"])
        self.assertEqual(status, 0, err)
        self.assertEqual(report["summary"]["rejected_by_reason"], {"not a commit": 1})

    def test_split_and_file_rules(self):
        regrade = self.regrade
        self.assertTrue(regrade.is_instance_test_file("src/pkg/testing/util.py"))
        self.assertTrue(regrade.is_instance_test_file("pkg/conftest.py"))
        self.assertFalse(regrade.is_instance_test_file("src/pkg/contest.py"))
        self.assertTrue(regrade.is_doc_file("docs/index.rst"))
        self.assertFalse(regrade.is_doc_file("requirements-dev.txt"))
        self.assertEqual(regrade.is_test_module("tests/helpers.py"), False)
        self.assertEqual(regrade.is_test_module("tests/test_x.py"), True)


# Issue 24: made instances in SWE-bench's spelling. SWE-bench reads a Django id
# off the verbose runner's line before ' ... ok': str(test), which Python 3.11
# changed from `test_x (module.Class)` to `test_x (module.Class.test_x)`, or the
# first docstring line printed under it. This is its parse_log_django for the
# lines these runs print (swebench/harness/log_parsers/python.py), written from
# its source, so the made ids are checked against the harness's own reading.
def swebench_django_log(text):
    """{test id: PASSED|FAILED|ERROR|SKIPPED} as SWE-bench's Django log parser reads a log."""
    found, previous = {}, None
    for line in text.split("\n"):
        line = line.strip()
        if " ... " in line:
            previous = line.split(" ... ")[0]
        for suffix in (" ... ok", " ... OK", " ...  OK"):
            if line.endswith(suffix):
                found[line.rsplit(suffix, 1)[0]] = "PASSED"
                break
        if " ... skipped" in line:
            found[line.split(" ... skipped")[0]] = "SKIPPED"
        if line.endswith(" ... FAIL"):
            found[line.split(" ... FAIL")[0]] = "FAILED"
        if line.startswith("FAIL:"):
            found[line.split()[1].strip()] = "FAILED"
        if line.endswith(" ... ERROR"):
            found[line.split(" ... ERROR")[0]] = "ERROR"
        if line.startswith("ERROR:"):
            found[line.split()[1].strip()] = "ERROR"
        if line.lstrip().startswith("ok") and previous is not None:
            found[previous] = "PASSED"
    return found


class TestRegradeMadeSpelling(RegradeRepoCase):
    """Made instances' ids are SWE-bench's: Django's for the interpreter, docstring
    lines included; unittest's dotted ids with --runner unittest."""

    @classmethod
    def setUpClass(cls):
        cls.make_repo(DJANGOISH_BASE)
        files = dict(DJANGOISH_TESTS, **DJANGOISH_FIX)
        regrade_write_files(cls.repo, files)
        regrade_git(["add", "-A"], cls.repo)
        regrade_git(["commit", "-q", "-m", "Fixed prices in cents"], cls.repo)
        cls.fix = regrade_git(["rev-parse", "HEAD"], cls.repo).strip()
        cls.fixes = write(cls.folder, "fixes.txt", f"{cls.fix} shop-1\n")
        cls.out = os.path.join(cls.folder, "made")
        cls.status, cls.report, cls.err = regrade_json([
            "--make-instances", cls.fixes, "--repo", f"acme/shop={cls.repo}", "--out", cls.out,
            "--repeat", "1", "--sandbox", "none", "--runner", "django"])

    def log(self, side):
        path = os.path.join(self.out, "logs", f"shop-1.{side}.1.log")
        with open(path, encoding="utf-8") as handle:
            return swebench_django_log(handle.read())

    def test_django_ids_are_what_swebench_reads_from_the_same_runs(self):
        self.assertEqual(self.status, 0, self.err)
        with open(os.path.join(self.out, "instances.jsonl"), encoding="utf-8") as handle:
            rows = [json.loads(line) for line in handle]
        self.assertEqual(len(rows), 1, self.report)
        f2p, p2p = (json.loads(rows[0][key]) for key in ("FAIL_TO_PASS", "PASS_TO_PASS"))
        before, after = self.log("before"), self.log("after")
        # SWE-bench's lists from its own reading: failed (or absent) before, passed after.
        self.assertEqual(sorted(f2p), sorted(t for t, s in after.items() if s == "PASSED" and
                                             before.get(t) != "PASSED" and t != "Twin docstring."))
        self.assertEqual(p2p, [t for t, s in after.items() if s == "PASSED" and
                               before.get(t) == "PASSED" and t != "Twin docstring."])
        # What that reading is, by the interpreter's version: its str(test), and the
        # docstring line for the test that has one.
        owner = "shop.tests.PriceTests"
        spell = (lambda n: f"{n} ({owner}.{n})") if sys.version_info >= (3, 11) else \
            (lambda n: f"{n} ({owner})")
        self.assertEqual(sorted(f2p), sorted([spell("test_cents"), "Prices keep their cents."]))
        self.assertEqual(p2p, [spell("test_whole")])
        # Two tests share a docstring and disagree before the fix: the id is in neither list.
        self.assertEqual(rows[0]["validation"]["excluded"]["ambiguous"], ["Twin docstring."])
        self.assertEqual(rows[0]["validation"]["self_check"],
                         {"gold": "resolved", "empty": "unresolved"})

    def test_made_ids_grade_as_swebench_spells_them(self):
        # The grading side reads both Django spellings and docstring lines.
        instances = os.path.join(self.out, "instances.jsonl")
        for runs, want in (("gold", "resolved"), ("empty", "unresolved")):
            status, report, err = regrade_json([instances, runs, "--repo", self.repo,
                                                "--sandbox", "none"])
            self.assertEqual((status, [v["status"] for v in report["runs"]]), (0, [want]), err)

    def test_made_django_instances_audit_on_an_interpreter_without_pytest(self):
        # Django's own runner needs no pytest (SWE-bench's Django images have none): the
        # audit asks the rows' runner, as grading does, instead of refusing the interpreter.
        instances = os.path.join(self.out, "instances.jsonl")
        with TempDir() as folder:
            bare = write(folder, "bare-python", f"#!/bin/sh\nexec {sys.executable} -S \"$@\"\n")
            os.chmod(bare, 0o755)
            probe = subprocess.run([bare, "-c", "import pytest"], capture_output=True)
            self.assertNotEqual(probe.returncode, 0)        # -S: no site-packages, no pytest
            status, report, err = regrade_json([
                "--audit-instances", instances, "--repo", f"acme/shop={self.repo}",
                "--python", bare, "--sandbox", "none", "--repeat", "1"])
        self.assertEqual(status, 0, err)
        self.assertNotIn("pytest", err)
        audited = report["instances"][0]
        self.assertEqual((audited["instance_id"], audited["gold_resolves"],
                          audited["empty_resolves"]), ("shop-1", 1, 0), audited)

    def test_sympy_ids_are_bare_names_as_swebench_reads_them(self):
        with TempDir() as folder:
            repo, _ = regrade_repo(folder, SYMPYISH_BASE)
            # A second test file defines test_double too: it fails before the fix,
            # test_basic.py's passes; SWE-bench's log keeps one test_double.
            regrade_write_files(repo, dict(SYMPYISH_TESTS, **SYMPYISH_FIX, **{
                "sympy/core/tests/test_other.py": "from sympy import double\n\n\n"
                "def test_double():\n    assert double(-3) == -6\n\n\n"
                "def test_double_one():\n    assert double(1) == 2\n"}))
            regrade_git(["add", "-A"], repo)
            regrade_git(["commit", "-q", "-m", "Fix double"], repo)
            fixes = write(folder, "fixes.txt", "HEAD sym-1\n")
            out = os.path.join(folder, "made")
            status, report, err = regrade_json(["--make-instances", fixes, "--repo", repo,
                                                "--out", out, "--runner", "sympy",
                                                "--repeat", "1", "--sandbox", "none"])
            self.assertEqual(status, 0, err)
            with open(os.path.join(out, "instances.jsonl"), encoding="utf-8") as handle:
                rows = [json.loads(line) for line in handle]
            with open(os.path.join(out, "logs", "sym-1.after.1.log"), encoding="utf-8") as handle:
                # SWE-bench's parse_log_sympy: a line starting test_ and ending ' ok' passed.
                read = [line.split()[0] for line in map(str.strip, handle)
                        if line.startswith("test_") and line.endswith(" ok")]
        self.assertEqual(len(rows), 1, report)
        f2p, p2p = (json.loads(rows[0][key]) for key in ("FAIL_TO_PASS", "PASS_TO_PASS"))
        self.assertEqual((f2p, p2p), (["test_double_negative"], ["test_double_one"]))
        # The spelling is the parser's; a file's last test it never reads (its line
        # ends 'test_double_one ok [OK]'): SWE-bench's defect, said in the manual.
        self.assertEqual(sorted(set(read)), ["test_double", "test_double_negative"])
        self.assertEqual(rows[0]["validation"]["excluded"]["ambiguous"], ["test_double"])

    def test_unittest_runner_makes_dotted_ids(self):
        with TempDir() as folder:
            repo, _ = regrade_repo(folder, CORE_BASE)
            regrade_write_files(repo, dict(CORE_FIX, **{"tests/test_ops.py": (
                CORE_BASE["tests/test_ops.py"].split("    def test_unlisted_broken")[0] +
                "    def test_add_negative(self):\n        self.assertEqual(add(-1, -2), -3)\n")}))
            regrade_git(["add", "-A"], repo)
            regrade_git(["commit", "-q", "-m", "Fix add"], repo)
            fixes = write(folder, "fixes.txt", "HEAD calc-1\n")
            out = os.path.join(folder, "made")
            status, report, err = regrade_json(["--make-instances", fixes, "--repo", repo,
                                                "--out", out, "--runner", "unittest",
                                                "--repeat", "1", "--sandbox", "none"])
            self.assertEqual(status, 0, err)
            with open(os.path.join(out, "instances.jsonl"), encoding="utf-8") as handle:
                rows = [json.loads(line) for line in handle]
        self.assertEqual(len(rows), 1, report)
        self.assertEqual(rows[0]["test_runner"], "unittest")
        self.assertEqual(json.loads(rows[0]["FAIL_TO_PASS"]), ["tests.test_ops.TestOps.test_add",
                                                               "tests.test_ops.TestOps.test_add_negative"])
        self.assertEqual(json.loads(rows[0]["PASS_TO_PASS"]), ["tests.test_ops.TestOps.test_zero"])
        self.assertEqual(rows[0]["validation"]["self_check"],
                         {"gold": "resolved", "empty": "unresolved"})


# --- regrade.py: auditing instances and comparing with a grader ---
# One synthetic repository (two bugs, and a test file that the test patch grows) and
# instances, each with defects planted by hand: the expected findings are written
# here from what each instance holds, not read from the code. --repeat 2 and
# --sandbox none keep it quick (the flaky test counts its runs in a file).
AUDIT_BASE = {
    "calc/__init__.py": ("def add(a, b):\n    return a - b\n\n\ndef div(a, b):\n    return a * b\n"
                         "\n\ndef sub(a, b):\n    return a - b\n"),
    "tests/__init__.py": "",
    "tests/test_calc.py": "from calc import sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n",
}
AUDIT_TESTS = (
    "import os\nimport pytest\nfrom calc import add, div, sub\n\n\n"
    "def test_add():\n    assert add(1, 2) == 3\n\n\n"
    "def test_div():\n    assert div(6, 3) == 2\n\n\n"
    "def test_sub():\n    assert sub(3, 1) == 2\n\n\n"
    "def test_doc():\n    \"\"\"Subtracts two numbers.\"\"\"\n    assert sub(2, 2) == 0\n\n\n"
    "@pytest.mark.parametrize('x', ['a b', 'c'])\ndef test_param(x):\n    assert x\n\n\n"
    "STATE = []\n\n\ndef test_order_first():\n    STATE.append(1)\n\n\n"
    "def test_order_second():\n    assert STATE  # passes only after test_order_first\n\n\n"
    "def test_flaky():\n    path = os.environ['AUDIT_COUNTER']\n"
    "    n = int(open(path).read()) if os.path.exists(path) else 0\n"
    "    with open(path, 'w') as handle:\n        handle.write(str(n + 1))\n"
    "    assert n % 2 == 0\n")
AUDIT_T = "tests/test_calc.py::"


@unittest.skipUnless(regrade_has_pytest(), REGRADE_NO_PYTEST)
class RegradeAuditCase(RegradeRepoCase):
    """The audit's repository, its patches and instances, built once for a class."""

    @classmethod
    def build(cls):
        work = cls.make_repo(AUDIT_BASE)
        code = AUDIT_BASE["calc/__init__.py"]
        fixed = code.replace("return a - b\n\n\ndef div", "return a + b\n\n\ndef div").replace(
            "a * b", "a / b")
        cls.gold = regrade_diff(work, {"calc/__init__.py": fixed})
        # Gold without its change to div (the hunk dropped), and breaking sub besides.
        cls.broken = regrade_diff(work, {"calc/__init__.py": code.replace(
            "return a - b\n\n\ndef div", "return a + b\n\n\ndef div").replace(
            "def sub(a, b):\n    return a - b", "def sub(a, b):\n    return b - a")})
        cls.test_patch = regrade_diff(work, {"tests/test_calc.py": AUDIT_TESTS})
        cls.counter = os.path.join(cls.folder, "counter")

    @classmethod
    def row(cls, instance_id, f2p, p2p, patch=None):
        return {"instance_id": instance_id, "repo": "acme/calc", "base_commit": cls.base,
                "patch": cls.gold if patch is None else patch, "test_patch": cls.test_patch,
                "FAIL_TO_PASS": json.dumps([AUDIT_T + t for t in f2p]),
                "PASS_TO_PASS": json.dumps([t if t.startswith(("[", "Subtracts")) else
                                            AUDIT_T + t for t in p2p])}


class TestRegradeAuditInstances(RegradeAuditCase):
    """--audit-instances finds each planted defect, names its cause and the nearest real
    id, calls the unplanted instance sound, and --write-fixed repairs only what is certain."""

    @classmethod
    def setUpClass(cls):
        cls.build()
        cls.rows = [
            cls.row("sound", ["test_add", "test_div"], ["test_sub", "test_doc", "test_param[a b]"]),
            cls.row("ids", ["test_add", "test_div"],
                    ["test_param[a", "[100%]", "Subtracts two numbers.", "test_sub"]),
            cls.row("lists", ["test_add", "test_div", "test_doc"],
                    ["test_sub", "test_order_second", "test_flaky"], patch=cls.broken),
        ]
        cls.rows.append(dict(cls.rows[0]))
        instances = regrade_jsonl(cls.folder, "instances.jsonl", cls.rows)
        cls.fixed_path = os.path.join(cls.folder, "fixed.jsonl")
        status, cls.report, cls.err = regrade_json([
            "--audit-instances", instances, "--repo", cls.repo, "--repeat", "2",
            "--sandbox", "none", "--env", f"AUDIT_COUNTER={cls.counter}",
            "--write-fixed", cls.fixed_path])
        assert status == 0, cls.err
        with open(cls.fixed_path, encoding="utf-8") as handle:
            cls.fixed = [json.loads(line) for line in handle]

    def findings(self, number):
        return sorted((d["kind"], d["test"], d["nearest"])
                      for d in self.report["instances"][number]["defects"])

    def test_the_unplanted_instance_is_sound_and_resolves_k_of_k(self):
        sound = self.report["instances"][0]
        self.assertEqual((sound["verdict"], sound["defects"]), ("sound", []))
        self.assertEqual((sound["gold_resolves"], sound["empty_resolves"]), (2, 0))
        self.assertEqual({k: v["status"] for k, v in sound["grader"].items()},
                         {"gold": "resolved", "empty": "unresolved"})
        # The counter's test, in no list of this instance, failed in the second after-run.
        self.assertEqual(sound["notes"], ["1 test(s) failed after gold and are in no list, "
                                          "e.g. tests/test_calc.py::test_flaky"])

    def test_each_unmatchable_id_gets_its_cause_and_nearest_real_id(self):
        self.assertEqual(self.findings(1), sorted([
            ("id cut at a space", AUDIT_T + "test_param[a", AUDIT_T + "test_param[a b]"),
            ("progress-bar fragment", "[100%]", None),
            ("docstring line", "Subtracts two numbers.", AUDIT_T + "test_doc"),
            ("gold does not resolve", None, None)]))
        self.assertEqual(self.report["instances"][1]["gold_resolves"], 0)

    def test_lists_against_the_runs(self):
        self.assertEqual(self.findings(2), sorted([
            ("FAIL_TO_PASS passes before", AUDIT_T + "test_doc", None),
            ("FAIL_TO_PASS fails on gold", AUDIT_T + "test_div", None),
            ("PASS_TO_PASS fails on gold", AUDIT_T + "test_sub", None),
            ("order-dependent", AUDIT_T + "test_order_second", None),
            ("flaky", AUDIT_T + "test_flaky", None),
            ("gold does not resolve", None, None)]))
        order = [d for d in self.report["instances"][2]["defects"]
                 if d["kind"] == "order-dependent"]
        self.assertEqual(order[0]["evidence"], "after gold: passed in each run of its whole "
                                               "file, failed when run alone (--select ids)")
        div = [d for d in self.report["instances"][2]["defects"]
               if d["kind"] == "FAIL_TO_PASS fails on gold"]
        self.assertEqual(div[0]["evidence"], "before: failed, failed; after: failed, failed")

    def test_the_flaky_test_is_named_with_its_runs(self):
        # The counter flips the test every run: passed, failed on each side.
        flaky = [d for d in self.report["instances"][2]["defects"] if d["kind"] == "flaky"]
        self.assertEqual(flaky[0]["evidence"], "PASS_TO_PASS: outcome changed between the runs "
                         "before and after the fix (before: passed, failed; after: passed, "
                         "failed)")

    def test_the_duplicate_row_is_found_and_not_run_again(self):
        last = self.report["instances"][3]
        self.assertEqual([d["kind"] for d in last["defects"]], ["duplicate instance"])
        self.assertEqual(last["runs"], {})
        self.assertEqual(self.report["summary"]["defects_by_kind"]["duplicate instance"], 1)

    def test_the_cost_is_2k_plus_2_runs_per_instance(self):
        # Three instances run (the duplicate does not): 2 x 2 + 2 runs each.
        self.assertEqual(self.report["summary"]["runs"], 3 * (2 * 2 + 2))
        self.assertEqual(self.report["summary"]["sound"], 1)

    def test_write_fixed_repairs_only_the_certain_and_records_each_change(self):
        self.assertEqual([r["instance_id"] for r in self.fixed],
                         ["sound", "ids", "lists"])
        ids = self.fixed[1]
        self.assertEqual(json.loads(ids["PASS_TO_PASS"]), [
            AUDIT_T + "test_param[a b]", AUDIT_T + "test_doc", AUDIT_T + "test_sub"])
        self.assertEqual([(c["from"], c["to"], c["why"]) for c in ids["audit"]["changes"]], [
            (AUDIT_T + "test_param[a", AUDIT_T + "test_param[a b]", "id cut at a space"),
            ("[100%]", None, "progress-bar fragment"),
            ("Subtracts two numbers.", AUDIT_T + "test_doc", "docstring line")])
        self.assertEqual(ids["audit"]["defects_left"], [])
        # Only the flaky test moves; every other defect is left for a person.
        lists = self.fixed[2]
        self.assertEqual(lists["FAIL_TO_PASS"], self.rows[2]["FAIL_TO_PASS"])
        self.assertEqual(json.loads(lists["PASS_TO_PASS"]),
                         [AUDIT_T + "test_sub", AUDIT_T + "test_order_second"])
        self.assertEqual(lists["audit"]["flaky"], [AUDIT_T + "test_flaky"])
        self.assertEqual(sorted(d["kind"] for d in lists["audit"]["defects_left"]), [
            "FAIL_TO_PASS fails on gold", "FAIL_TO_PASS passes before",
            "PASS_TO_PASS fails on gold", "gold does not resolve", "order-dependent"])
        for field in ("patch", "test_patch", "base_commit"):
            self.assertEqual(lists[field], self.rows[2][field])


class TestRegradeAuditPure(unittest.TestCase):
    """The id rules of --audit-instances on lists of real ids, and the schema checks."""

    def test_each_cause_of_an_unmatched_id(self):
        regrade = load("regrade.py")
        real = {"t.py::test_a[x y]", "t.py::test_b", "u.py::test_c", "t.py::test_long_name"}
        docs = {"Does b.": ["t.py::test_b"]}
        cases = {"t.py::test_a[x": ("id cut at a space", "t.py::test_a[x y]", True),
                 "[ 50%]": ("progress-bar fragment", None, True),
                 '"': ("progress-bar fragment", None, True),
                 "#15789": ("progress-bar fragment", None, True),
                 "Does b.": ("docstring line", "t.py::test_b", True),
                 "t.py::test_c": ("renamed test", "u.py::test_c", False),
                 "t.py::test_long_nam": ("renamed test", "t.py::test_long_name", False),
                 "v.py::zzz": ("no such test", None, False),
                 "t.py::test_b": (None, None, True)}
        for listed, expected in cases.items():
            with self.subTest(listed):
                _, cause, nearest, certain = regrade.match_listed(listed, real, docs, "pytest")
                self.assertEqual((cause, nearest, certain), expected)
        self.assertEqual(regrade.match_listed("Does b.", real, docs, "django")[1], None)
        # A Django docstring line two recorded tests share names both of them.
        twins = {"Twin.": ["t.py::test_b", "u.py::test_c"]}
        self.assertEqual(regrade.match_listed("Twin.", real, twins, "django"),
                         (["t.py::test_b", "u.py::test_c"], "id names several tests",
                          "t.py::test_b", False))
        # A docstring line with a word changed names no test: the nearest docstring's test.
        self.assertEqual(regrade.match_listed("Does bb.", real, docs, "django")[1:],
                         ("docstring line", "t.py::test_b", False))

    def test_schema_defects(self):
        regrade = load("regrade.py")
        record = {"instance_id": "i", "repo": "r", "base_commit": "abc", "patch": "x",
                  "test_patch": "", "FAIL_TO_PASS": '["a", "a"]', "PASS_TO_PASS": ["a"]}
        found, instance = regrade.schema_defects(record, "f line 1")
        self.assertIsNotNone(instance)
        self.assertEqual(sorted((d["kind"], d["evidence"]) for d in found), [
            ("duplicate id", "listed 2 times in FAIL_TO_PASS"),
            ("duplicate id", "listed in FAIL_TO_PASS and in PASS_TO_PASS")])
        self.assertEqual(regrade.bare_list_notes(record)[0][:25], "PASS_TO_PASS is a bare JS")
        found, instance = regrade.schema_defects({"instance_id": "i", "base_commit": "a",
                                                  "test_patch": "", "FAIL_TO_PASS": "[]"}, "w")
        self.assertIsNone(instance)
        self.assertIn(("schema", "no field 'PASS_TO_PASS'"),
                      [(d["kind"], d["evidence"]) for d in found])


    def test_one_instance_under_two_ids_whatever_its_lists_spelling(self):
        # The lists were compared as raw text: the same FAIL_TO_PASS without a space, as
        # a bare list, or in another order was not flagged as a duplicate.
        regrade = load("regrade.py")
        base = {"repo": "o/r", "base_commit": "a" * 40, "patch": "p", "test_patch": "t",
                "PASS_TO_PASS": "[]"}
        spellings = ['["t::a", "t::b"]', '["t::a","t::b"]', ["t::a", "t::b"], '["t::b", "t::a"]']
        rows = [(f"i.jsonl line {n + 1}", dict(base, instance_id=f"i{n}", FAIL_TO_PASS=f2p))
                for n, f2p in enumerate(spellings)]
        found = regrade.duplicate_defects(rows)
        self.assertEqual(sorted(found), [1, 2, 3])
        self.assertTrue(all("same base commit, patches and lists as 'i0'" in d["evidence"]
                            for n in found for d in found[n]))
        # Other tests are other content.
        other = rows[:1] + [("i.jsonl line 2",
                             dict(base, instance_id="j", FAIL_TO_PASS='["t::c"]'))]
        self.assertEqual(regrade.duplicate_defects(other), {})

    def test_which_files_each_patch_may_touch(self):
        regrade = load("regrade.py")
        diff = "diff --git a/{0} b/{0}\n--- a/{0}\n+++ b/{0}\n@@ -1 +1 @@\n-a\n+b\n".format
        instance = {"test_patch": diff("tests/test_x.py") + diff("calc/ops.py"),
                    "patch": diff("calc/ops.py") + diff("tests/conftest.py")}
        self.assertEqual(sorted((d["kind"], d["evidence"])
                                for d in regrade.scope_defects(instance)), [
            ("patch touches tests", "the gold patch changes tests/conftest.py"),
            ("test patch touches code", "the test patch changes calc/ops.py")])


class TestRegradeAuditUsage(unittest.TestCase):
    def test_flags_that_do_not_go_together_are_one_error_line(self):
        with TempDir() as folder:
            rows = regrade_jsonl(folder, "i.jsonl", [{"instance_id": "i"}])
            for argv, words in (
                    (["--write-fixed", "f.jsonl", rows, "gold", "--repo", folder],
                     "--write-fixed goes with --audit-instances"),
                    (["--audit-instances", rows, "--compare", rows], "--compare goes with"),
                    (["--audit-instances", rows], "--audit-instances needs --repo")):
                with self.subTest(argv[0]):
                    status, out, err = run("regrade.py", argv)
                    assert_one_error(self, status, out, err, words)


    def test_a_timeout_no_timer_can_wait_is_refused_in_every_mode(self):
        # --timeout inf (or 1e300) passed 'positive': the timer thread died with an
        # OverflowError traceback per test command and the tests ran with no limit.
        with TempDir() as folder:
            rows = regrade_jsonl(folder, "i.jsonl", [{"instance_id": "i"}])
            for value in ("inf", "1e300", "0", "nan"):
                for argv in ([rows, "gold", "--repo", folder],
                             ["--make-instances", rows, "--repo", folder, "--out",
                              os.path.join(folder, "made")]):
                    with self.subTest(value=value, mode=argv[0]):
                        status, out, err = run("regrade.py", argv + ["--timeout", value])
                        assert_one_error(self, status, out, err, f"--timeout: {value}")


class TestRegradeCompare(RegradeAuditCase):
    """--compare: each verdict beside a SWE-bench logs/run_evaluation folder written by hand
    for the same runs, one cause per disagreement from the evidence both sides hold."""

    @classmethod
    def setUpClass(cls):
        cls.build()
        row = cls.row("calc-1", ["test_add", "test_div"], ["test_sub", "test_param[a b]"])
        cls.instances = regrade_jsonl(cls.folder, "instances.jsonl", [row])
        predictions = regrade_jsonl(cls.folder, "predictions.jsonl", [
            {"run_id": r, "instance_id": "calc-1", "model_name_or_path": m, "model_patch": p}
            for r, m, p in (("gold-a", "model-a", cls.gold), ("empty-e", "model-e", ""))])
        cls.out = os.path.join(cls.folder, "out")
        status, _, err = regrade_json([cls.instances, predictions, "--repo", cls.repo,
                                       "--sandbox", "none", "--out", cls.out])
        assert status == 0, err
        # Three more runs of model b, c, d with gold's verdict (verdicts are data).
        with open(os.path.join(cls.out, "verdicts.jsonl"), encoding="utf-8") as handle:
            graded = [json.loads(line) for line in handle]
        gold = next(v for v in graded if v["run_id"] == "gold-a")
        graded += [dict(gold, run_id=f"gold-{m}", model=f"model-{m}") for m in "bcd"]
        verdicts = regrade_jsonl(cls.folder, "verdicts.jsonl", graded)
        f2p, p2p = json.loads(row["FAIL_TO_PASS"]), json.loads(row["PASS_TO_PASS"])
        logs = os.path.join(cls.folder, "logs", "run_evaluation", "r1")
        everything = "".join(f"PASSED {t}\n" for t in f2p + p2p)

        def grader(model, failed, log, report=True):
            folder = os.path.join(logs, model, "calc-1")
            os.makedirs(folder)
            write(folder, "test_output.txt", log)
            write(folder, "run_instance.log", "")
            if report:
                status = {"FAIL_TO_PASS": {"success": [t for t in f2p if t not in failed],
                                           "failure": [t for t in f2p if t in failed]},
                          "PASS_TO_PASS": {"success": [t for t in p2p if t not in failed],
                                           "failure": [t for t in p2p if t in failed]}}
                write(folder, "report.json", json.dumps({"calc-1": {
                    "patch_is_None": False, "patch_exists": True,
                    "patch_successfully_applied": True, "resolved": not failed,
                    "tests_status": status}}))
        grader("model-a", [], everything)
        # SWE-bench's parser keeps 'tests/test_calc.py::test_param[a' of this line.
        grader("model-b", [AUDIT_T + "test_param[a b]"], everything)
        grader("model-c", [], "", report=False)
        grader("model-d", [AUDIT_T + "test_div"], everything.replace("test_div", "test_x"))
        grader("model-e", [], everything)
        status, cls.report, err = regrade_json(["--summarize", verdicts, "--compare", logs])
        assert status == 0, err
        cls.logs, cls.graded = logs, graded
        cls.rows = {r["run_id"]: r for r in cls.report["runs"]}
        cls.gold_only = regrade_jsonl(cls.folder, "gold-a.jsonl", graded[:1] if
                                      graded[0]["run_id"] == "gold-a" else graded[1:2])
        status, cls.markdown, err = run("regrade.py", [
            "--summarize", verdicts, "--compare", logs, "--format", "markdown"])
        assert status == 0, err

    def test_each_run_agrees_or_has_its_cause(self):
        self.assertEqual({r: (v["agree"], v["cause"]) for r, v in self.rows.items()}, {
            "gold-a": (True, None),
            "gold-b": (False, "id cut by the grader's parser"),
            "gold-c": (False, "the grader errored"),
            "gold-d": (False, "listed test never in the grader's log"),
            "empty-e": (False, "failed here, passed there")})
        self.assertIn("test_param[a b]", self.rows["gold-b"]["evidence"])

    def test_counts_by_cause(self):
        summary = self.report["comparison"]
        self.assertEqual((summary["runs"], summary["agree"], summary["disagree"]), (5, 1, 4))
        self.assertEqual(summary["by_cause"], {
            "the grader errored": 1, "id cut by the grader's parser": 1,
            "listed test never in the grader's log": 1, "failed here, passed there": 1})
        self.assertEqual(summary["joined_on"], "model and instance id")

    def test_no_run_graded_is_exit_1_with_compare_too(self):
        # --compare returned 0 before the check every other report makes, so a job whose
        # every run was a grading error exited 0 (the manual gives 1) under --compare.
        errored = [dict(v, status="error", error="the test command timed out")
                   for v in self.graded if v["run_id"] == "gold-a"]
        path = regrade_jsonl(self.folder, "all-errors.jsonl", errored)
        for extra in ([], ["--compare", self.logs]):
            with self.subTest(extra=extra[:1]):
                status, out, err = regrade_json(["--summarize", path] + extra)
                self.assertEqual(status, 1, err)
                self.assertIn("comparison" if extra else "summary", out)
                self.assertEqual(err.strip().splitlines()[-1],
                                 "error: no run could be graded: the 1 run is a grading "
                                 "error (error 1); no verdict says anything of the agent")

    def test_a_flake_only_where_every_test_that_differs_changed_outcome(self):
        # t::b failed in every repeat here and passed there; t::a was flaky. The cause
        # was 'flake' because one differing test was flaky, though t::b alone decides.
        module = load("regrade.py")
        there = {"FAIL_TO_PASS": {"success": ["t::a", "t::b"], "failure": []},
                 "PASS_TO_PASS": {"success": [], "failure": []}}
        def cause(flaky):
            verdict = {"status": "unresolved", "reason": "FAIL_TO_PASS failed",
                       "fail_to_pass": {"passed": [], "failed": ["t::a", "t::b"]},
                       "pass_to_pass": {"passed": [], "failed": []}, "flaky": flaky}
            return module.compare_cause(verdict, {"verified": True, "status": "resolved"},
                                        {"tests_status": there, "log": None})[1:]
        self.assertEqual(cause(["t::a"]),
                         ("failed here, passed there", "'t::b': FAIL_TO_PASS failed"))
        self.assertEqual(cause(["t::a", "t::b"]),
                         ("flake", "'t::a' changed outcome between the repeats here "
                                   "(and 1 more)"))

    def test_the_graders_modules_from_the_tree_count_as_tampering_caught_here(self):
        # The manual lists json, pytest, ... from the tree among the tampering it never
        # resolves; that verdict's own reason names the modules, and compare_cause,
        # looking only for the tampering sentence, gave it another cause.
        module = load("regrade.py")
        for reason in ("the grader's own modules were imported from the tree: json.py",
                       "the code under test tampered with the test runner: TestCase.run"):
            verdict = {"status": "unresolved", "reason": reason}
            self.assertEqual(module.compare_cause(verdict, {"verified": True, "status": "ok"},
                                                  {"tests_status": None, "log": None})[:2],
                             (False, "tampering caught here"), reason)

    def test_a_run_report_holds_no_per_test_evidence_and_says_so(self):
        report = write(self.folder, "model-a.r1.json", json.dumps(
            {"resolved_ids": [], "unresolved_ids": ["calc-1"], "error_ids": []}))
        status, out, err = regrade_json(["--summarize", self.gold_only, "--compare", report])
        self.assertEqual(status, 0, err)
        row = out["runs"][0]
        self.assertEqual((row["agree"], row["cause"]), (False, "no per-test evidence"))
        self.assertIn("1 listed id(s) hold a space", row["evidence"])

    def test_the_markdown_table_is_ready_to_paste(self):
        self.assertIn("| run | instance | here | there | agree | cause | evidence |",
                      self.markdown)
        self.assertIn("| gold-c | calc-1 | resolved | error (no report.json) | no | "
                      "the grader errored |", self.markdown)


# === Paste-ready output ===
def footer_command(out):
    """The command in a report's provenance footer (text or Markdown), as words."""
    if "```sh\n" in out:
        block = out.split("```sh\n", 1)[1].split("\n```", 1)[0]
        lines = [line for line in block.splitlines() if not line.startswith("#")]
    else:
        footer = out.split("-- provenance --\n", 1)[1].splitlines()
        start = next(i for i, line in enumerate(footer) if line.startswith("command: "))
        lines = [footer[start][len("command: "):]]
        while lines[-1].endswith(" \\"):
            lines.append(footer[start + len(lines)])
    for line in lines[:-1]:
        assert line.endswith(" \\"), line
    return shlex.split(" ".join(line[:-2] if line.endswith(" \\") else line
                                for line in lines))


def big_harness_folder(root, runs):
    """`runs` synthetic mini-swe-agent 2.x runs, each with its own SWE-bench report.json
    (logs/run_evaluation/<run>/<model>/<instance>/), as a SWE-bench Verified run is laid
    out: one input file per run on each side."""
    rng = random.Random(runs)
    for i in range(runs):
        instance = f"org{i % 23}__repo{i % 23}-{1000 + i}"
        status = "Submitted" if rng.random() < 0.8 else "LimitsExceeded"
        messages = [{"role": "user", "content": "fix it", "extra": {"timestamp": 1000}}]
        for step in range(rng.randint(1, 4)):
            messages += [{"role": "assistant", "content": "n", "extra": {
                             "actions": [{"command": "sed -i s/a/b/ a.py"}],
                             "timestamp": 1005 + 10 * step}},
                         {"role": "tool", "content": "ok", "extra": {"timestamp": 1009 + 10 * step}}]
        write(root, f"trajs/{instance}/{instance}.traj.json", json.dumps(
            {"info": {"exit_status": status, "submission": "d", "mini_version": "2.2.4",
                      "config": {"model": {"model_name": "m/x"}}},
             "messages": messages, "trajectory_format": "mini-swe-agent-1.1"}))
        write(root, f"logs/run_evaluation/e/m__x/{instance}/report.json", json.dumps(
            {instance: {"patch_is_None": False, "resolved": rng.random() < 0.5}}))
    return os.path.join(root, "trajs"), os.path.join(root, "logs", "run_evaluation", "e")


class TestReportFitsWherePasted(unittest.TestCase):
    def test_a_500_run_folder_fits_and_its_manifest_checks(self):
        with TempDir() as folder:
            trajs, logs = big_harness_folder(folder, 500)
            manifest = os.path.join(folder, "inputs.sha256")
            for script in ("delivery_audit.py", "auc_audit.py"):
                extra = ["--boot", "200"] + (["--perms", "99"] if script == AUC else [])
                status, out, err = run(script, [trajs, "--verdicts", logs, "--format",
                                                "markdown", "--manifest", manifest] + extra)
                self.assertEqual(status, 0, err)
                self.assertLessEqual(len(out), 65536, script)
                with open(manifest, "rb") as handle:
                    data = handle.read()
                self.assertIn(f"manifest: 1001 files (too many to list here), SHA-256 "
                              f"`{hashlib.sha256(data).hexdigest()}`", out)
                text = run(script, [trajs, "--verdicts", logs] + extra)[1]
                self.assertIn(f"manifest: 1001 files (too many to list here); SHA-256 of "
                              f"their sorted list (path and SHA-256 per line):\n  "
                              f"{hashlib.sha256(data).hexdigest()}\n", text)
                lines = data.decode("utf-8").splitlines()
                self.assertEqual(len(lines), 1001)
                self.assertEqual(lines, sorted(lines, key=lambda l: l.split("  ", 1)[1]))
                for line in lines:                     # what sha256sum -c does
                    digest, path = line.split("  ", 1)
                    full = path if os.path.isabs(path) else os.path.join(os.getcwd(), path)
                    with open(full, "rb") as handle:
                        self.assertEqual(hashlib.sha256(handle.read()).hexdigest(), digest)
                self.assertNotIn("--manifest", footer_command(out))
                self.assertIn("# left out, as outputs: --manifest", out)

    def test_a_few_inputs_are_still_listed_one_by_one(self):
        status, out, err = run("delivery_audit.py", [EXAMPLE_RUNS, "--boot", "0"])
        self.assertEqual(status, 0, err)
        self.assertIn("sha256 of the script and its inputs:", out)
        self.assertIn("3 files (listed above); SHA-256 of their sorted list", out)


class TestSeedReportNamed(unittest.TestCase):
    TITLE = "What Observational Data Can't Tell You About Work Done"

    def test_the_readme_first_screen_cites_it(self):
        with open(os.path.join(HERE, "README.md"), encoding="utf-8") as handle:
            first_screen = " ".join(handle.read().splitlines()[:24])
        self.assertIn(f"XO Labs, *{self.TITLE}*, August 2026", " ".join(first_screen.split()))

    def test_each_report_that_refers_to_it_names_it_once(self):
        seed = f"XO Labs, {self.TITLE}, August 2026"
        cases = [("auc_audit.py", [EXAMPLE_RUNS, "--perms", "99", "--boot", "99"]),
                 ("delivery_audit.py", [os.path.join(AGENTS, "swe-agent"), "--verdicts",
                                        os.path.join(AGENT_VERDICTS, "swebench"), "--boot", "0"])]
        for script, argv in cases:
            for style in ("text", "markdown"):
                status, out, err = run(script, argv + ["--format", style])
                self.assertEqual(status, 0, err)
                prose = " ".join(out.replace("\u00a0", " ").split())
                self.assertEqual(prose.count(seed), 1, (script, style))
                if script == "auc_audit.py":          # every §7 is the seed report's
                    self.assertEqual(prose.count("§7"), 2)
                    self.assertNotIn("the report's §7", prose)


class TestFooterReruns(unittest.TestCase):
    """Run each script from a parent folder with relative paths (and absolute ones that
    the footer must make relative), take the command from the footer, run it from the
    same place: the same report comes out, and its footer names the same command."""

    def rerun_case(self, script, argv, output_flag, output_name):
        with TempDir() as folder:
            copy = os.path.join(folder, "kit")
            os.makedirs(copy)
            shutil.copy(os.path.join(HERE, script), copy)
            shutil.copytree(os.path.join(HERE, "examples"), os.path.join(copy, "examples"))
            output = os.path.join(folder, "elsewhere", output_name)
            os.makedirs(os.path.dirname(output))
            argv = [a.replace("ABS/", folder + os.sep) for a in argv]

            def launch(words):
                done = subprocess.run(words, cwd=folder, capture_output=True, timeout=300)
                self.assertEqual(done.returncode, 0, done.stderr.decode())
                return done.stdout.decode("utf-8")
            first = launch([sys.executable, os.path.join("kit", script)] + argv +
                           [output_flag, output])
            self.assertTrue(os.path.exists(output))
            command = footer_command(first)
            self.assertEqual(command[1], os.path.join("kit", script))
            self.assertTrue(command[0].startswith("python"), command)
            self.assertFalse([w for w in command if folder in w], command)
            self.assertNotIn(output_flag, command)
            self.assertIn(f"{output_flag} \u2026/{output_name}", first)   # listed apart
            second = launch([sys.executable] + command[1:])
            self.assertEqual(report_body(second), report_body(first))
            self.assertEqual(footer_command(second), command)
            third = launch([sys.executable] + footer_command(second)[1:])
            self.assertEqual(third, second)                   # a fixed point, byte for byte
            hashes = second.rsplit("sha256 of the script and its inputs:\n", 1)[-1] \
                if "-- provenance --" in second else \
                second.rsplit("sha256sum -c`):\n\n```\n", 1)[1].split("\n```")[0]
            hashes = hashes.split("\nmanifest: ")[0]          # the manifest's line follows
            checked = 0
            for line in hashes.strip().splitlines():
                digest, path = line.split("  ", 1)
                self.assertFalse(os.path.isabs(path), path)
                with open(os.path.join(folder, path), "rb") as handle:
                    self.assertEqual(hashlib.sha256(handle.read()).hexdigest(), digest, path)
                checked += 1
            self.assertGreaterEqual(checked, 2)

    def test_delivery_audit_footer_reruns(self):
        self.rerun_case("delivery_audit.py",
                        ["ABS/kit/examples/runs", "--raters", "rater_a,rater_b,rater_c",
                         "--cost", "cost_usd", "--boot", "200", "--format", "markdown"],
                        "--svg", "figure.svg")

    def test_auc_audit_footer_reruns(self):
        self.rerun_case("auc_audit.py", ["ABS/kit/examples/runs", "--perms", "60", "--boot", "60"],
                        "--svg", "null.svg")

    def test_regrade_footer_reruns(self):
        self.rerun_case("regrade.py",
                        ["kit/examples/regrade/instances.jsonl",
                         "kit/examples/regrade/predictions.jsonl",
                         "--repo", "ABS/kit/examples/regrade/calc.bundle",
                         "--format", "markdown"], "--out", "regraded")

    def test_launcher_is_detected(self):
        module = load("delivery_audit.py")
        script = os.path.join(HERE, "delivery_audit.py")
        saved_argv, saved_uv = sys.argv[:], os.environ.pop("UV", None)
        try:
            sys.argv[0] = "elsewhere.py"              # imported by the tests, not run
            self.assertEqual(module.launcher_and_script(script),
                             ("python3", os.path.relpath(script)))
            sys.argv[0] = script                      # run as a script
            os.environ["UV"] = "/usr/local/bin/uv"
            self.assertEqual(module.launcher_and_script(script),
                             ("uv run", os.path.relpath(script)))
            del os.environ["UV"]
            saved_prefix, saved_orig = sys.prefix, getattr(sys, "orig_argv", None)
            try:
                sys.prefix = "/home/u/.local/share/pipx/venvs/x"
                self.assertEqual(module.launcher_and_script(script)[0], "pipx run")
                sys.prefix = "/usr"
                sys.orig_argv = ["python3.11", script]
                self.assertEqual(module.launcher_and_script(script)[0], "python3.11")
                sys.orig_argv = ["/opt/py/bin/python3", script]   # a machine's path: not kept
                self.assertEqual(module.launcher_and_script(script)[0], "python3")
            finally:
                sys.prefix = saved_prefix
                if saved_orig is None:
                    del sys.orig_argv
                else:
                    sys.orig_argv = saved_orig
        finally:
            sys.argv[:] = saved_argv
            os.environ.pop("UV", None)
            if saved_uv is not None:
                os.environ["UV"] = saved_uv

    def test_abbreviated_and_equals_outputs_are_left_out(self):
        module = load("delivery_audit.py")
        inputs = module.Inputs()
        for argv in (["--demo", "--sv", "/x/f.svg"], ["--demo", "--svg=/x/f.svg"]):
            self.assertEqual(module.rerun_arguments(argv, inputs, ("--svg",)),
                             (["--demo"], ["--svg \u2026/f.svg"]))
        # A comma-separated list of inputs (--ratings a.csv,b.csv) is made relative too.
        inputs.files += [(os.path.join(HERE, "README.md"), ""), (os.path.join(HERE, "LICENSE"), "")]
        self.assertEqual(module.rerun_arguments(
            ["--ratings", os.path.join(HERE, "README.md") + "," + os.path.join(HERE, "LICENSE")],
            inputs)[0], ["--ratings", os.path.relpath(os.path.join(HERE, "README.md")) + "," +
                         os.path.relpath(os.path.join(HERE, "LICENSE"))])
        # An --env value is not a path to rewrite, even when it is one.
        self.assertEqual(module.rerun_arguments(["--env", f"P={HERE}"], inputs)[0],
                         ["--env", f"P={HERE}"])


MARKDOWN_ROW_LIMIT = 96      # characters in a table row padded to its columns: about 750 px
HEADING_LIMIT = 60           # characters in a heading: one line at GitHub's heading sizes


def markdown_tables(text):
    """Each Markdown pipe table in `text` as rows of cell strings (the rule row left out)."""
    tables, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            if not all(re.fullmatch(r"-+:?", c) for c in cells):
                current.append(cells)
        elif current:
            tables.append(current)
            current = []
    return tables


def aligned_width(table):
    """The width of a table's rows once every cell is padded to its column's widest."""
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return sum(widths) + 3 * len(widths) + 1


def markdown_outputs():
    """Every script's Markdown on the shipped examples, by a name for messages."""
    regrade_example = [os.path.join(HERE, "examples", "regrade", name)
                       for name in ("instances.jsonl", "predictions.jsonl")] + \
        ["--repo", os.path.join(HERE, "examples", "regrade", "calc.bundle")]
    cases = {
        "delivery --demo": ("delivery_audit.py", ["--demo", "--boot", "200"]),
        "delivery examples/runs": ("delivery_audit.py", [
            EXAMPLE_RUNS, "--raters", "rater_a,rater_b,rater_c", "--cost", "cost_usd",
            "--boot", "200"]),
        "auc --demo": ("auc_audit.py", ["--demo", "--perms", "100", "--boot", "100"]),
        "auc examples/runs": ("auc_audit.py", [EXAMPLE_RUNS, "--perms", "100",
                                               "--boot", "100"]),
        "auc --strata": ("auc_audit.py", [EXAMPLE_RUNS, "--strata", "condition",
                                          "--perms", "100", "--boot", "100"]),
        "regrade --timings": ("regrade.py", regrade_example + ["--timings"]),
        "delivery --verdicts": ("delivery_audit.py", [
            os.path.join(HERE, "examples", "verdicts"), "--verdicts",
            os.path.join(HERE, "examples", "verdicts", "logs", "run_evaluation", "eval-1"),
            "--boot", "200"]),
    }
    outputs = {}
    for name, (script, argv) in cases.items():
        status, out, err = run(script, argv + ["--format", "markdown"])
        assert status == 0, (name, err)
        outputs[name] = out
    return outputs


class TestMarkdownReadsOnGitHub(unittest.TestCase):
    """What can be checked without a browser; the rest was looked at in Chromium."""

    @classmethod
    def setUpClass(cls):
        cls.outputs = markdown_outputs()

    def test_tables_fit_an_issue_comment(self):
        for name, out in self.outputs.items():
            tables = markdown_tables(report_body(out))
            self.assertTrue(tables, name)
            for table in tables:
                self.assertLessEqual(aligned_width(table), MARKDOWN_ROW_LIMIT,
                                     (name, table[0]))

    def test_headings_are_short(self):
        for name, out in self.outputs.items():
            headings = [l for l in out.splitlines() if l.startswith("#") and " " in l and
                        not l.startswith("# ")]         # '# ...' is a comment in a code block
            self.assertTrue(headings, name)
            for line in headings:
                self.assertLessEqual(len(line.lstrip("#").strip()), HEADING_LIMIT, (name, line))

    def test_values_cannot_wrap_and_direction_is_an_arrow(self):
        for name, out in self.outputs.items():
            body = report_body(out)
            self.assertNotRegex(body, r"\[-?[\d.]+, ", name)      # an interval's plain space
            self.assertNotRegex(body, r"\d\.\d{3} [+-]( |,|$)", name)  # a bare direction sign
            for line in body.splitlines():                         # prose is never hard-wrapped
                self.assertFalse(line.startswith("  ") and not line.startswith("    "), line)
        gate1 = markdown_tables(self.outputs["auc --strata"])[0]
        self.assertEqual(gate1[0][:4], ["feature", "rows", "AUC", "pooled"])
        for row in gate1[1:]:
            self.assertRegex(row[2], "^[0-9.]+\u00a0[\u2191\u2193]$")
            # 'undefined' where the few-clusters rule withholds it (issue 22: the
            # example's rows hold 9 tasks with a failure).
            self.assertRegex(row[-1], "^(undefined|\\[-?[0-9.]+,\u00a0-?[0-9.]+\\])$")

    def test_lists_stay_separate(self):
        for name, out in self.outputs.items():
            lines = report_body(out).splitlines()
            for before, blank, after in zip(lines, lines[1:], lines[2:]):
                self.assertFalse(before.startswith("- ") and not blank and
                                 after.startswith("- "), (name, before, after))
            # Sentences do not run into one paragraph.
            for before, after in zip(lines, lines[1:]):
                if before and after and before[0].isupper() and after[0].isupper():
                    self.assertFalse(before.endswith(".") and not before.startswith("|"),
                                     (name, before, after))

    def test_footer_command_is_a_code_block_broken_with_backslashes(self):
        out = self.outputs["delivery examples/runs"]
        block = out.split("```sh\n", 1)[1].split("\n```", 1)[0].splitlines()
        command = [l for l in block if not l.startswith("#")]
        self.assertGreater(len(command), 1)
        self.assertTrue(all(l.endswith(" \\") for l in command[:-1]))
        self.assertTrue(all(len(l) <= 88 for l in block), block)


def svg_elements(drawing, tag):
    """The attributes (and text) of every <tag ...> in an SVG, as dicts."""
    found = []
    for attributes, text in re.findall(rf"<{tag}\b([^>]*?)/?>(?:([^<]*)</{tag}>)?", drawing):
        item = dict(re.findall(r'([\w-]+)="([^"]*)"', attributes))
        item["text"] = text
        found.append(item)
    return found


class TestSvgReadsOnAnyPage(unittest.TestCase):
    def test_each_figure_has_its_own_background(self):
        for script, argv in (("delivery_audit.py", ["--demo", "--boot", "100"]),
                             ("auc_audit.py", ["--demo", "--perms", "50", "--boot", "50"])):
            _, drawing = draw(script, argv)
            svg = svg_elements(drawing, "svg")[0]
            first = svg_elements(drawing, "rect")[0]
            self.assertEqual((first["width"], first["height"]), (svg["width"], svg["height"]))
            self.assertEqual(first["fill"].lower(), "#ffffff")
            self.assertIn("<title>", drawing)

    def test_delivery_names_no_bootstrap_interval_where_none_is_drawn(self):
        # With 6 tasks every bootstrap interval is withheld and none is drawn, but the
        # legend still showed '95% task bootstrap (300 resamples)' and the caption said
        # claim AUC and kappa have 'only the bootstrap one'.
        rows = [[f"r{t}-{i}", f"t{t}", "yes" if (t + i) % 3 else "no", int((t * i) % 2)]
                for t in range(6) for i in range(4)]
        with TempDir() as folder:
            path = write(folder, "runs.csv", runs_csv(rows))
            result, drawing = draw("delivery_audit.py", [path, "--boot", "300"])
        self.assertFalse(any(result["delivery_rate"].get("ci_cluster") or []))
        lines = svg_elements(drawing, "line")
        self.assertEqual([l for l in lines if "stroke-dasharray" in l], [])
        texts = " ".join(t["text"] for t in svg_elements(drawing, "text"))
        self.assertNotIn("bootstrap (300 resamples)", texts)
        self.assertNotIn("only the bootstrap one", texts)
        self.assertIn("no bootstrap interval (--boot 0, or too few clusters)", texts)

    def test_delivery_draws_every_interval_and_names_its_kind(self):
        result, drawing = draw("delivery_audit.py", [EXAMPLE_RUNS, "--boot", "300"])
        lines = svg_elements(drawing, "line")
        dashed = [l for l in lines if "stroke-dasharray" in l]
        solid = [l for l in lines if l.get("stroke-width") == "2.5" and l not in dashed]
        drawn = [n for n, _ in load("delivery_audit.py").FIGURE_ROWS if n != "inflation"]
        self.assertTrue({"claim_auc", "kappa", "delivery_rate"} <= set(drawn))
        exact = [n for n in drawn if n != "kappa" and result[n].get("ci")
                 and result[n]["ci"][0] is not None]
        boot = [n for n in drawn if result[n].get("ci" if n == "kappa" else "ci_cluster")]
        self.assertEqual(len(solid) - 1, len(exact))        # one of each is the legend's
        self.assertEqual(len(dashed) - 1, len(boot))
        self.assertEqual(len(boot), len(drawn))             # claim AUC and kappa included
        texts = " ".join(t["text"] for t in svg_elements(drawing, "text"))
        self.assertIn("95% exact (Clopper-Pearson)", texts)
        self.assertIn("95% task bootstrap (300 resamples)", texts)
        c = result["counts"]
        self.assertIn(f"{c['runs']} runs, {c['claims']} claims, {c['fp']} false", texts)
        self.assertIn(f"inflation 1/r {result['inflation']['value']:.3f}", texts)
        # The axis spans the drawn numbers in steps of 0.25, not -1 to 1.
        ends = [v for n in drawn for v in [result[n]["value"]] +
                (result[n].get("ci") or []) + (result[n].get("ci_cluster") or [])
                if v is not None]
        low = math.floor(min(ends) / 0.25) * 0.25
        ticks = [float(t["text"]) for t in svg_elements(drawing, "text")
                 if re.fullmatch(r"-?\d\.\d\d", t["text"])]
        self.assertEqual((min(ticks), max(ticks)), (low, 1.0))
        self.assertGreater(low, -1)

    def test_auc_mark_labels_never_touch_the_bars(self):
        for argv in ([EXAMPLE_RUNS], ["--demo"]):
            result, drawing = draw("auc_audit.py", argv + ["--perms", "300", "--boot", "50"])
            bars = [tuple(float(r[k]) for k in ("x", "y", "width", "height"))
                    for r in svg_elements(drawing, "rect")[1:]]
            self.assertGreater(len(bars), 5)
            labels = [t for t in svg_elements(drawing, "text")
                      if re.match(r"(baseline|observed max) \d", t["text"])]
            self.assertEqual(len(labels), 2)
            boxes = []
            for label in labels:
                x, y, size = float(label["x"]), float(label["y"]), 7 * len(label["text"])
                start = {"end": x - size}.get(label.get("text-anchor"), x)
                boxes.append((start, y - 12, size, 15))
            for bx, by, bw, bh in boxes:
                for rx, ry, rw, rh in bars:
                    self.assertFalse(bx < rx + rw and rx < bx + bw and by < ry + rh and
                                     ry < by + bh, (labels, (rx, ry, rw, rh)))
            (ax, ay, aw, ah), (cx, cy, cw, ch) = boxes
            self.assertFalse(ax < cx + cw and cx < ax + aw and ay < cy + ch and cy < ay + ah)
            marks = [float(l["x1"]) for l in svg_elements(drawing, "line")
                     if l.get("stroke-width") == "2" and l["x1"] == l["x2"]]
            for bx, by, bw, bh in boxes:       # a label crosses no mark's line
                self.assertFalse(any(bx < m < bx + bw for m in marks), (boxes, marks))
            texts = [t["text"] for t in svg_elements(drawing, "text")]
            self.assertIn(f"baseline {result['baseline']['auc']:.3f}", texts)
            self.assertIn(f"(AUC {result['baseline']['auc']:.3f}), {result['n_runs']} runs",
                          texts[0])
            passing = result["verdict"]["passing"]
            self.assertIn(f"Passes all three gates: {', '.join(passing)}." if passing else
                          "No feature passes all three gates.", texts)
            self.assertTrue(any("cluster bootstrap" in t for t in texts))
            diffs = [l for l in svg_elements(drawing, "line")
                     if l.get("stroke") == "#1f2328" and l.get("stroke-width") == "2"
                     and l["y1"] == l["y2"]]
            with_interval = [f for f in result["features"] if f["delta_ci"]]
            self.assertEqual(len(diffs) - 1, len(with_interval))   # one is the legend's


class FakeHome:
    """HOME pointed at a folder named like a user's, the current folder outside it."""

    def __enter__(self):
        self.root = tempfile.mkdtemp(prefix="audit-home-")
        self.home = os.path.join(self.root, "home", "alice-private")
        self.elsewhere = os.path.join(self.root, "work", "elsewhere")
        os.makedirs(self.home)
        os.makedirs(self.elsewhere)
        self.old = os.environ.get("HOME"), os.getcwd()
        os.environ["HOME"] = self.home
        os.chdir(self.elsewhere)
        return self

    def __exit__(self, *exc):
        old_home, old_cwd = self.old
        os.chdir(old_cwd)
        if old_home is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = old_home
        shutil.rmtree(self.root, ignore_errors=True)


class TestPastedOutputNamesNoHome(unittest.TestCase):
    """Every output format of every script, inputs given by absolute paths under a
    fake home and the command run from a folder outside it: the home folder's path
    and the user's name appear nowhere in what is printed or drawn."""

    def assert_private(self, fake, label, text):
        for secret in (fake.home, "alice-private", fake.root):
            at = text.find(secret)
            self.assertEqual(at, -1, f"{label}: {secret} in ...{text[max(0, at - 150):at + 80]}")

    def copy_in(self, fake, *parts):
        source = os.path.join(HERE, "examples", *parts)
        target = os.path.join(fake.home, *parts)
        if os.path.isdir(source):
            shutil.copytree(source, target)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy(source, target)
        return target

    def outputs(self, fake, script, argv, svg=True):
        for style in ("text", "markdown", "json"):
            status, out, err = run(script, argv + ["--format", style])
            self.assertEqual(status, 0, err)
            self.assert_private(fake, f"{script} {style}", out)
        if svg:
            drawing = os.path.join(fake.home, "out", f"{script}.svg")
            os.makedirs(os.path.dirname(drawing), exist_ok=True)
            status, out, err = run(script, argv + ["--svg", drawing])
            self.assertEqual(status, 0, err)
            self.assert_private(fake, f"{script} text with --svg", out)
            with open(drawing, encoding="utf-8") as handle:
                self.assert_private(fake, f"{script} svg", handle.read())

    def test_the_audits(self):
        with FakeHome() as fake:
            verdicts = self.copy_in(fake, "verdicts")
            runs = self.copy_in(fake, "runs")
            runs_csv = os.path.join(verdicts, "runs.csv")
            for name in ("swebench/example-org__agent-a.eval-1.json",
                         "logs/run_evaluation/eval-1", "regrade/verdicts.csv"):
                with self.subTest(name):
                    given = os.path.join(verdicts, name)
                    self.outputs(fake, "delivery_audit.py",
                                 [runs_csv, "--verdicts", given, "--boot", "50"])
                    self.outputs(fake, AUC, [runs_csv, "--verdicts", given, "--perms", "50",
                                             "--boot", "50"])
            agents = self.copy_in(fake, "agents")
            for name in ("swebench", "logs/run_evaluation/calc-eval"):
                with self.subTest(name):
                    given = os.path.join(verdicts, "agents", name)
                    self.outputs(fake, "delivery_audit.py", [os.path.join(agents, "swe-agent"),
                                                             "--verdicts", given, "--boot", "0"])
            self.outputs(fake, "delivery_audit.py", [runs, "--boot", "50"])
            self.outputs(fake, AUC, [os.path.join(runs, "runs.csv"), "--perms", "50",
                                     "--boot", "50"])
            ratings = os.path.join(verdicts, "ratings")
            self.outputs(fake, "delivery_audit.py", [
                verdicts, "--verdicts", os.path.join(verdicts, "regrade", "verdicts.csv"),
                "--ratings", ",".join(os.path.join(ratings, f"rater_{x}.csv") for x in "abc"),
                "--rating-key", os.path.join(ratings, "sheet.key.csv"), "--boot", "0"])
            self.outputs(fake, AUC, [os.path.join(agents, "codex"), "--verdicts",
                                     os.path.join(agents, "codex", "verdicts.csv"), "--perms",
                                     "20", "--boot", "20"])
            status, out, err = run("delivery_audit.py", [
                verdicts, "--rating-sheet", os.path.join(fake.home, "sheet.csv")])
            self.assertEqual(status, 0, err)
            self.assert_private(fake, "--rating-sheet", out)
            # Another folder under the same parent as the home is another user's.
            other = os.path.join(fake.root, "home", "bob", "runs.csv")
            os.makedirs(os.path.dirname(other))
            shutil.copy(os.path.join(runs, "runs.csv"), other)
            status, out, err = run("delivery_audit.py", [other, "--boot", "0",
                                                         "--format", "markdown"])
            self.assertEqual(status, 0, err)
            self.assertNotIn("bob", out)

    @unittest.skipUnless(shutil.which("git"), "needs git")
    def test_regrade_and_its_interpreter(self):
        with FakeHome() as fake:
            example = self.copy_in(fake, "regrade")
            # A test interpreter inside the home folder, as a venv would be.
            python = os.path.join(fake.home, "venv", "bin", "python3")
            os.makedirs(os.path.dirname(python))
            os.symlink(sys.executable, python)
            argv = [os.path.join(example, "instances.jsonl"),
                    os.path.join(example, "predictions.jsonl"),
                    "--repo", os.path.join(example, "calc.bundle"), "--python", python,
                    "--out", os.path.join(fake.home, "regraded")]
            for style in ("text", "markdown", "json"):
                status, out, err = run("regrade.py", argv + ["--format", style])
                self.assertEqual(status, 0, err)
                self.assert_private(fake, f"regrade.py {style}", out)
            version = ".".join(map(str, sys.version_info[:3]))
            status, out, err = run("regrade.py", argv)
            self.assertIn(f"test interpreter: python3 ({version})", out)


# === Benchmarks (python3 test_audit.py --bench) ===
# --- Benchmarks: the family ---
def bench_block_reach():
    """How much of its shared-block copy each script never reaches from its own code (the
    call graph TestMaps checks entries against: main, _main and all they name), so the
    figure can be measured again after a restructuring. Lines of code only: the block's
    statements, decorators included, not its comments or blank lines between them."""
    for script in SCRIPTS:
        path = os.path.join(HERE, script)
        unreached, code, names = unreached_block_lines(path)
        start, end = section_spans(path)["Shared block"]
        print(f"{script}: {unreached} of the block's {code} lines of code never reached "
              f"from its own code ({end - start + 1} lines between the markers; "
              f"{len(names)} definitions: {', '.join(names) or 'none'})")


# --- Benchmarks: delivery_audit.py ---
def bench_delivery_large():
    """Default audit (20,000 task resamples) on 100,000 runs in 5,000 tasks."""
    rng = random.Random(1)
    lines = ["run_id,task_id,claimed,verified"]
    for i in range(100000):
        task = i // 20
        verified = rng.random() < 0.3 + 0.4 * (task % 2)
        claimed = "yes" if rng.random() < 0.9 else ("equivocal" if rng.random() < 0.3 else "no")
        lines.append(f"r{i},t{task},{claimed},{int(verified)}")
    with TempDir() as folder:
        path = write(folder, "runs.csv", "\n".join(lines) + "\n")
        start = time.perf_counter()
        status, _, err = run("delivery_audit.py", [path])
        took = time.perf_counter() - start
    print(f"delivery_audit.py default audit, 100,000 runs in 5,000 tasks, 20,000 resamples: "
          f"{took:.2f} s (exit {status})")


def bench_delivery_conditions():
    """Default audit of 20,000 runs: 500 tasks, two conditions of 20 runs, replicate pairs."""
    rng = random.Random(2)
    lines = ["run_id,task_id,condition,replicate,claimed,verified"]
    for task in range(500):
        rate = rng.random()
        for condition in ("plain", "scaffold"):
            for replicate in range(1, 21):
                verified = rng.random() < rate
                lines.append(f"r{task}-{condition}-{replicate},t{task},{condition},{replicate},"
                             f"{'yes' if rng.random() < 0.9 else 'no'},{int(verified)}")
    d = load("delivery_audit.py")
    strata = []
    with TempDir() as folder:
        path = write(folder, "runs.csv", "\n".join(lines) + "\n")
        start = time.perf_counter()
        status, _, err = run("delivery_audit.py", [path])
        took = time.perf_counter() - start
    for task in range(500):
        rows = [line.split(",") for line in lines[1 + 40 * task:41 + 40 * task]]
        plain = [int(row[5]) for row in rows if row[2] == "plain"]
        scaffold = [int(row[5]) for row in rows if row[2] == "scaffold"]
        strata.append((sum(plain), len(plain), sum(scaffold), len(scaffold)))
    start = time.perf_counter()
    d.stratified_exact_test(strata)
    exact_test = time.perf_counter() - start
    print(f"delivery_audit.py default audit, 20,000 runs in 500 tasks, two conditions: "
          f"{took:.2f} s (exit {status}), of which the stratified exact test {exact_test:.2f} s; "
          f"load average {os.getloadavg()[0]:.1f}")


def monte_carlo_rate(hits, reps):
    """'0.950 (sd 0.015)': a simulated rate with its Monte Carlo standard deviation."""
    rate = hits / reps
    return f"{rate:.3f} (sd {math.sqrt(rate * (1 - rate) / reps):.3f})"


def bench_delivery_realised_coverage():
    """Sampling mode: how often each interval covers the realised verified deliveries.

    Task rates ~ Beta(2, 1), 4 runs per task, 90% of runs claim; a share of runs
    (or of whole tasks) is checked at random. The truth is the count of claims
    that delivered, checked or not. 200 replications, 1,000 predictive draws each.
    """
    d = load("delivery_audit.py")
    reps = 200
    for tasks, share, whole_tasks in ((18, 0.9, False), (18, 0.6, False), (40, 0.5, True)):
        rng = random.Random(19)
        expectation = prediction = withheld = 0
        for rep in range(reps):
            runs, realised = [], 0
            for task in range(tasks):
                rate, task_checked = rng.betavariate(2, 1), rng.random() < share
                for _ in range(4):
                    verified, claimed = rng.random() < rate, rng.random() < 0.9
                    checked = task_checked if whole_tasks else rng.random() < share
                    realised += claimed and verified
                    runs.append({"task": task, "claim": claimed,
                                 "verified": verified if checked else None})
            checked_runs = [r for r in runs if r["verified"] is not None]
            claims = sum(1 for r in checked_runs if r["claim"])
            delivered = sum(1 for r in checked_runs if r["claim"] and r["verified"])
            low, high = d.sampling_projection(runs, checked_runs, d.proportion(
                delivered, claims))["expected_verified_deliveries"]["ci"]
            expectation += low <= realised <= high
            interval = d.predictive_deliveries(runs, 1000, rep)["ci"]
            withheld += interval is None
            prediction += interval is not None and interval[0] <= realised <= interval[1]
        shown = reps - withheld
        print(f"delivery_audit.py sampling mode, {tasks} tasks x 4 runs, "
              f"{share:.0%} of {'tasks' if whole_tasks else 'runs'} checked: coverage of the "
              f"realised deliveries, expectation's interval {monte_carlo_rate(expectation, reps)}"
              f", predictive interval {monte_carlo_rate(prediction, shown)} where shown "
              f"(withheld in {withheld} of {reps}: fewer than 10 tasks with checked claims); "
              f"nominal 0.95")


def bench_delivery_cluster_interval_coverage():
    """Task-cluster bootstrap intervals: coverage of kappa and r, percentile against BCa.

    Task rates ~ Beta(2, 1), 4 runs per task, claim probability 0.6 on a failed
    run and 0.9 on a verified one: pooled over tasks, r = 0.75 and kappa = 1/3
    exactly. 300 replications of 2,000 resamples at 10, 30 and 100 tasks.
    """
    d = load("delivery_audit.py")
    truth = {"delivery_rate": Fraction(3, 4), "kappa": Fraction(1, 3)}
    # The pooled table: tp 2/3 * 0.9, fp 1/3 * 0.6, fn 2/3 * 0.1, tn 1/3 * 0.4.
    tp, fp, fn, tn = Fraction(6, 10), Fraction(2, 10), Fraction(1, 15), Fraction(2, 15)
    chance = (tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)
    assert truth["kappa"] == (tp + tn - chance) / (1 - chance)
    assert truth["delivery_rate"] == tp / (tp + fp)
    reps = 300
    for tasks in (10, 30, 100):
        rng = random.Random(tasks)
        hits = {(name, method): 0 for name in truth for method in ("percentile", "bca")}
        for rep in range(reps):
            clusters = []
            for _ in range(tasks):
                rate, cells = rng.betavariate(2, 1), [0] * 6
                for _ in range(4):
                    verified = rng.random() < rate
                    claimed = rng.random() < (0.9 if verified else 0.6)
                    cells[(0 if verified else 1) if claimed else (2 if verified else 3)] += 1
                clusters.append(tuple(cells))
            intervals = d.cluster_bootstrap(clusters, 2000, rep)["headline"]
            for name, value in truth.items():
                for method in ("percentile", "bca"):
                    low, high = intervals[name]["ci_" + method]
                    hits[name, method] += low is not None and low <= value <= high
        print(f"delivery_audit.py task-cluster bootstrap, {tasks} tasks x 4 runs, {reps} "
              f"replications: coverage (nominal 0.95) " + "; ".join(
                  f"{name} percentile {monte_carlo_rate(hits[name, 'percentile'], reps)}, "
                  f"BCa {monte_carlo_rate(hits[name, 'bca'], reps)}" for name in truth))


# --- Benchmarks: auc_audit.py ---
def synthetic_runs(n_runs, n_features, seed=1):
    """A runs table with tasks, two conditions, a baseline and n_features features."""
    rng = random.Random(seed)
    n_tasks = max(2, n_runs // 4)
    ease = [rng.random() for _ in range(n_tasks)]
    header = ["run_id", "task_id", "condition", "verified", "tool_calls"] + \
        [f"f{j}" for j in range(n_features)]
    rows = []
    for i in range(n_runs):
        task = i % n_tasks
        y = int(rng.random() < ease[task])
        row = [f"r{i}", f"t{task}", "ab"[rng.randint(0, 1)], y,
               rng.randint(10, 80) + (0 if y else 8)]
        for j in range(n_features):
            if j == 0 and rng.random() < 0.4:
                row.append("")
            else:
                row.append(f"{rng.gauss(0.3 * y * (j % 3 == 0), 1):.4f}")
        rows.append(row)
    return csv_text(header, rows)


def naive_audit_seconds(table_text, perms, boot, sample_perms, sample_boot):
    """Time a straightforward audit that recomputes every AUC from scratch (sorting the
    rows again for each shuffle and each resample), on a sample of the shuffles and
    resamples, scaled up to the full count."""
    lines = table_text.splitlines()
    rows = [dict(zip(lines[0].split(","), line.split(","))) for line in lines[1:]]
    labels = [int(r["verified"]) for r in rows]
    strata = [r["condition"] for r in rows]
    tasks = [r["task_id"] for r in rows]
    features = [[None if r[c] == "" else float(r[c]) for r in rows]
                for c in rows[0] if c.startswith("f")]
    baseline = [float(r["tool_calls"]) for r in rows]
    task_names = sorted(set(tasks))

    def auc(scores, ys, weights=None):
        credit = pairs = 0.0
        for level in ("a", "b"):
            items = sorted((scores[i], ys[i], 1 if weights is None else weights[i])
                           for i in range(len(ys)) if strata[i] == level
                           and scores[i] is not None)
            below0 = 0.0
            k = 0
            while k < len(items):
                j = k
                tie0 = tie1 = 0.0
                while j < len(items) and items[j][0] == items[k][0]:
                    if items[j][1]:
                        tie1 += items[j][2]
                    else:
                        tie0 += items[j][2]
                    j += 1
                credit += tie1 * (below0 + tie0 / 2)
                below0 += tie0
                k = j
            n1 = sum(w for _, y, w in items if y)
            n0 = sum(w for _, y, w in items if not y)
            pairs += n1 * n0
        return credit / pairs if pairs else None

    rng = random.Random(1)
    start = time.perf_counter()
    for _ in range(sample_perms):
        shuffled = labels[:]
        rng.shuffle(shuffled)
        max(max(a, 1 - a) for a in (auc(f, shuffled) for f in features) if a is not None)
    perm_seconds = (time.perf_counter() - start) / sample_perms * perms
    start = time.perf_counter()
    for _ in range(sample_boot):
        draw = [rng.choice(task_names) for _ in task_names]
        count = {t: draw.count(t) for t in task_names}
        weights = [count[t] for t in tasks]
        for f in features:
            rows_defined = [None if v is None else b for v, b in zip(f, baseline)]
            auc(f, labels, weights), auc(rows_defined, labels, weights)
    boot_seconds = (time.perf_counter() - start) / sample_boot * boot
    return perm_seconds + boot_seconds


def run_auc_benchmark(label, n_runs, n_features, sample_perms, sample_boot):
    table = synthetic_runs(n_runs, n_features)
    with TempDir() as folder:
        path = write(folder, "runs.csv", table)
        start, before = time.perf_counter(), os.times()
        status, out, err = run(AUC, [path, "--strata", "condition", "--format", "json"])
        seconds, after = time.perf_counter() - start, os.times()
    # CPU time of this process and of any forked workers it waited for.
    cpu = sum(after[:4]) - sum(before[:4])
    assert status == 0, err
    naive = naive_audit_seconds(table, 2000, 2000, sample_perms, sample_boot)
    print(f"auc_audit.py {label}: {n_runs} runs x {n_features} features, whole default "
          f"audit (2000 shuffles + 2000 task resamples): {seconds:.2f} s wall, {cpu:.2f} s "
          f"CPU (load {os.getloadavg()[0]:.1f}); recomputing every AUC from scratch needs ~{naive:.1f} s for the shuffles "
          f"and resamples alone (extrapolated from {sample_perms} + {sample_boot}): "
          f"{naive / seconds:.0f}x slower")


def bench_auc_small():
    run_auc_benchmark("small", 72, 9, 200, 200)


def bench_auc_large():
    run_auc_benchmark("large", 10000, 20, 3, 2)


def issue11_shape_runs(seed=1, n_runs=10000, n_features=20, runs_per_task=4,
                       undefined_share=0.3):
    """Issue 11's speed shape: a 500-instance benchmark run 20 times, as 2,500 tasks of
    4 runs, 20 features (half counts, half continuous), 5 of them undefined on the
    same 30% of runs (the runs that never edited), no strata."""
    rng = random.Random(seed)
    ease = [rng.random() for _ in range(n_runs // runs_per_task)]
    header = ["run_id", "task_id", "condition", "verified", "tool_calls"] + \
        [f"f{j:02d}" for j in range(n_features)]
    rows = []
    for i in range(n_runs):
        task = i // runs_per_task
        y = int(rng.random() < ease[task])
        edited = rng.random() >= undefined_share
        row = [f"r{i:05d}", f"t{task:04d}", "a", y, rng.randint(10, 80) + (0 if y else 8)]
        for j in range(n_features):
            if j % 4 == 0 and not edited:
                row.append("")
            elif j % 2:
                row.append(rng.randint(0, 40) + (3 * y if j % 3 == 0 else 0))
            else:
                row.append(f"{rng.gauss(0.2 * y * (j % 3 == 0), 1):.4f}")
        rows.append(row)
    return csv_text(header, rows)


def bench_auc_issue11_shape():
    """The whole default audit (no strata) on issue 11's shape: wall and CPU seconds,
    the load average, and the speed-up over recomputing every AUC from scratch."""
    table = issue11_shape_runs()
    load_before = os.getloadavg()
    with TempDir() as folder:
        path = write(folder, "runs.csv", table)
        start, before = time.perf_counter(), os.times()
        status, out, err = run(AUC, [path, "--format", "json"])
        seconds, after = time.perf_counter() - start, os.times()
    assert status == 0, err
    cpu = sum(after[:4]) - sum(before[:4])       # this process and its forked workers
    load_after = os.getloadavg()
    naive = naive_audit_seconds(table, 2000, 2000, 3, 2)
    print(f"auc_audit.py issue-11 shape: 10000 runs x 20 features, 2500 tasks of 4, no "
          f"strata, 5 features undefined on 30%: whole default audit (2000 shuffles with "
          f"step-down minP + 2000 task resamples) {seconds:.1f} s wall, {cpu:.1f} s CPU; "
          f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after "
          f"({os.cpu_count()} cores); recomputing every AUC from scratch needs ~{naive:.0f} s "
          f"CPU for the shuffles and resamples alone (extrapolated from 3 + 2): "
          f"{naive / cpu:.0f}x the whole audit's CPU")


def issue19_clustered_null(seed, n_tasks=20, per_task=4, n_features=5, strata=False,
                           task_effects=True):
    """A true null for every feature: outcomes and features each share a task-level
    component (task_effects), independent of each other; with `strata`, two arms with
    different success rates. The outcome carries no information from any feature."""
    rng = random.Random(seed)
    labels, tasks, arms, baseline = [], [], [], []
    features = [[] for _ in range(n_features)]
    for t in range(n_tasks):
        ease = rng.random() if task_effects else 0.5
        offsets = [rng.gauss(0, 1) if task_effects else 0.0 for _ in range(n_features)]
        for r in range(per_task):
            arm = "ab"[r % 2] if strata else "a"
            shift = 0.25 if strata and arm == "b" else 0.0
            labels.append(int(rng.random() < min(1.0, ease + shift)))
            tasks.append(f"t{t:02d}")
            arms.append(arm)
            baseline.append(rng.gauss(0, 1))
            for values, offset in zip(features, offsets):
                values.append(offset + rng.gauss(0, 0.5))
    return labels, tasks, arms, baseline, features


def issue19_rate(hits, reps):
    rate = hits / reps
    return f"{rate:.3f} (MC sd {math.sqrt(max(rate * (1 - rate), 1e-12) / reps):.3f})"


def bench_auc_issue19_family_wise_rate():
    """Family-wise rate of minP adjusted p <= 0.05 under a true null, by the default
    (task) null and the old run shuffle, on independent, stratified and task-clustered
    data (20 tasks of 4 runs, 5 features, 300 replications, 200 shuffles each)."""
    module = load(AUC)
    reps = 300
    cases = (("independent", dict(task_effects=False), None),
             ("stratified (two arms, --strata)", dict(strata=True, task_effects=False), "arm"),
             ("task-clustered", dict(), None),
             ("task-clustered and stratified", dict(strata=True), "arm"))
    start = time.perf_counter()
    for label, options, strata_name in cases:
        hits = {"default": 0, "runs": 0}
        for seed in range(reps):
            labels, tasks, arms, baseline, features = issue19_clustered_null(seed, **options)
            candidates = [(f"f{j}", v) for j, v in enumerate(features)]
            strata = arms if strata_name else None
            for scheme, permute in (("default", None),
                                    ("runs", "strata" if strata_name else "rows")):
                result = module.audit(labels, candidates, baseline, tasks=tasks, strata=strata,
                                      perms=200, boot=1, seed=seed, permute=permute)
                hits[scheme] += min(f["adjusted_p"] for f in result["features"]) <= 0.05
        print(f"auc_audit.py issue 19, true null, {label}: family-wise rate of minP p <= 0.05 "
              f"{issue19_rate(hits['default'], reps)} with the default task null; "
              f"{issue19_rate(hits['runs'], reps)} shuffling runs (the old default)")
    print(f"  ({reps} replications each, 20 tasks x 4 runs, 5 features; "
          f"{time.perf_counter() - start:.0f} s)")


def issue19_planted(seed, n_tasks=30, per_task=4, n_features=5, effect=1.0):
    """Task-clustered outcomes; f0 carries a run-level signal inside tasks (its value
    moves with the run's own outcome), the rest and the baseline are noise."""
    return task_clustered_sample(seed, n_tasks, per_task, n_features, 0.0,
                                 lambda j: effect if j == 0 else 0.0)


def issue19_old_rule(feature):
    """The verdict before issue 19, from a result's own fields: same-row diff > 0,
    minP adjusted p < 0.05 and the per-feature interval above 0."""
    ci = feature["delta_ci"]
    return (feature["delta_same_rows"] > 0 and feature["adjusted_p"] < 0.05
            and ci is not None and ci[0] > 0)


def bench_auc_issue19_gate_one():
    """Pass rate with ten features generated exactly like the baseline (50 tasks of 4),
    and power on a planted feature (30 tasks of 4), before and after issue 19."""
    module = load(AUC)
    start = time.perf_counter()
    reps = 150
    before = after = 0
    for seed in range(reps):
        labels, tasks, baseline, features = issue19_like_baseline(1000 + seed)
        candidates = [(f"f{j}", v) for j, v in enumerate(features)]
        old = module.audit(labels, candidates, baseline, tasks=tasks, perms=200, boot=400,
                           seed=seed, permute="rows")
        new = module.audit(labels, candidates, baseline, tasks=tasks, perms=200, boot=400,
                           seed=seed)
        before += any(issue19_old_rule(f) for f in old["features"])
        after += bool(new["verdict"]["passing"])
    print(f"auc_audit.py issue 19, ten features like the baseline (200 runs, 50 tasks): some "
          f"feature passes in {issue19_rate(before, reps)} before (row null, per-feature "
          f"interval), {issue19_rate(after, reps)} now ({reps} replications)")
    for effect in (0.5, 1.0):
        before = after = 0
        for seed in range(reps):
            labels, tasks, baseline, features = issue19_planted(2000 + seed, effect=effect)
            candidates = [(f"f{j}", v) for j, v in enumerate(features)]
            old = module.audit(labels, candidates, baseline, tasks=tasks, perms=200,
                               boot=400, seed=seed, permute="rows")
            new = module.audit(labels, candidates, baseline, tasks=tasks, perms=200,
                               boot=400, seed=seed)
            before += issue19_old_rule(old["features"][0])
            after += "f0" in new["verdict"]["passing"]
        print(f"auc_audit.py issue 19, power: planted f0 (shift {effect} sd inside tasks, "
              f"120 runs, 30 tasks, 5 features) passes in {issue19_rate(before, reps)} "
              f"before, {issue19_rate(after, reps)} now")
    print(f"  ({time.perf_counter() - start:.0f} s)")


def bench_auc_issue19_coverage():
    """Coverage of the task-cluster intervals of diff at 10, 30 and 100 tasks of 4 runs:
    the feature and the baseline are generated alike (true diff 0), with task effects
    in the outcome and in both scores."""
    module = load(AUC)
    start = time.perf_counter()
    for n_tasks, reps in ((10, 300), (30, 300), (100, 150)):
        single = joint = 0
        for seed in range(reps):
            rng = random.Random(3000 + seed)
            labels, tasks, base, f0, f1 = [], [], [], [], []
            for t in range(n_tasks):
                ease = rng.random()
                shared = [rng.gauss(0, 1) for _ in range(3)]
                for _ in range(4):
                    y = int(rng.random() < ease)
                    labels.append(y)
                    tasks.append(t)
                    base.append(shared[0] + rng.gauss(0.8 * y, 1))
                    f0.append(shared[1] + rng.gauss(0.8 * y, 1))
                    f1.append(shared[2] + rng.gauss(0.8 * y, 1))
            result = module.audit(labels, [("f0", f0), ("f1", f1)], base, tasks=tasks,
                                  perms=1, boot=1000, seed=seed)
            first = result["features"][0]
            if first["delta_ci"] is not None:
                single += first["delta_ci"][0] <= 0 <= first["delta_ci"][1]
                joint += all(f["delta_joint_ci"][0] <= 0 <= f["delta_joint_ci"][1]
                             for f in result["features"])
        print(f"auc_audit.py issue 19, coverage at {n_tasks} tasks of 4 (true diff 0, "
              f"{reps} replications, 1000 resamples): per-feature 95% percentile interval "
              f"{issue19_rate(single, reps)}; joint 95% interval over 2 features "
              f"{issue19_rate(joint, reps)}")
    print(f"  ({time.perf_counter() - start:.0f} s)")


def numpy_task_null_seconds(table_text, perms=2000):
    """The same task-level null in numpy: ranks once, then per shuffle a vectorised task
    permutation and placement, and one rank sum per feature (a Python loop over
    shuffles and features). None without numpy."""
    try:
        import numpy
    except ImportError:
        return None
    lines = table_text.splitlines()
    header = lines[0].split(",")
    cells = [line.split(",") for line in lines[1:]]
    labels = numpy.array([int(c[header.index("verified")]) for c in cells])
    task_ids = [c[header.index("task_id")] for c in cells]
    order = sorted(set(task_ids))
    task_of = numpy.array([order.index(t) for t in task_ids])
    columns = [j for j, name in enumerate(header) if name.startswith("f")]
    start = time.perf_counter()
    ranks, masks = [], []
    for j in columns:
        defined = numpy.array([c[j] != "" for c in cells])
        values = numpy.array([float(c[j]) if c[j] != "" else 0.0 for c in cells])
        rank = numpy.zeros(len(cells))
        sorted_values = numpy.sort(values[defined])
        low = numpy.searchsorted(sorted_values, values[defined], "left")
        high = numpy.searchsorted(sorted_values, values[defined], "right")
        rank[defined] = (low + high + 1) / 2.0
        ranks.append(rank)
        masks.append(defined)
    n_tasks = len(order)
    size = numpy.bincount(task_of)
    counts = numpy.bincount(task_of, weights=labels).astype(int)
    rng = numpy.random.default_rng(1)
    for _ in range(perms):
        donors = numpy.empty(n_tasks, dtype=int)
        for s in numpy.unique(size):
            same = numpy.flatnonzero(size == s)
            donors[same] = rng.permutation(same)
        keys = rng.random(len(cells))
        # A random placement: rank the runs of each task by a random key.
        order_in_task = numpy.lexsort((keys, task_of))
        slot = numpy.empty(len(cells), dtype=int)
        slot[order_in_task] = (numpy.arange(len(cells))
                               - numpy.repeat(numpy.cumsum(size) - size, size))
        y = slot < counts[donors][task_of]
        best = 0.0
        for rank, defined in zip(ranks, masks):
            chosen = y & defined
            n1 = chosen.sum()
            n0 = defined.sum() - n1
            if n1 and n0:
                auc = (rank[chosen].sum() - n1 * (n1 + 1) / 2) / (n1 * n0)
                best = max(best, auc, 1 - auc)
    return time.perf_counter() - start


def bench_auc_issue19_speed():
    """The whole default audit (task null, joint interval) on issue 11's shape beside a
    numpy task-level null, measured in one run."""
    table = issue11_shape_runs()
    load_before = os.getloadavg()
    with TempDir() as folder:
        path = write(folder, "runs.csv", table)
        figures = {}
        for label, argv in (("default (task null)", []), ("--permute rows", ["--permute",
                                                                             "rows"])):
            start, before = time.perf_counter(), os.times()
            status, out, err = run(AUC, [path, "--format", "json", *argv])
            assert status == 0, err
            after = os.times()
            figures[label] = (time.perf_counter() - start, sum(after[:4]) - sum(before[:4]))
    numpy_seconds = numpy_task_null_seconds(table)
    text = "; ".join(f"{label} {wall:.1f} s wall, {cpu:.1f} s CPU"
                     for label, (wall, cpu) in figures.items())
    ratio = ("numpy not installed: no numpy null" if numpy_seconds is None else
             f"numpy task-level null {numpy_seconds:.1f} s, so the whole default audit is "
             f"{figures['default (task null)'][0] / numpy_seconds:.1f}x that null")
    print(f"auc_audit.py issue 19 speed, 10000 runs x 20 features, 2500 tasks of 4: {text}; "
          f"{ratio} (load average {load_before[0]:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after, {os.cpu_count()} cores)")



def issue22_null(seed, n_tasks=30, n_features=5, strata=False, lone=False):
    """A true null for every feature: outcome, features and baseline each with a task
    effect, independent of one another; 1-6 runs per task (lone: sizes 1..n_tasks, no
    two alike); with `strata`, two arms, the second more often a success."""
    rng = random.Random(seed)
    sizes = list(range(1, n_tasks + 1))
    rng.shuffle(sizes)
    labels, tasks, arms, baseline = [], [], [], []
    features = [[] for _ in range(n_features)]
    for t in range(n_tasks):
        ease, offsets = rng.random(), [rng.gauss(0, 1) for _ in range(n_features + 1)]
        for _ in range(sizes[t] if lone else rng.randint(1, 6)):
            arm = "ab"[rng.random() < 0.5] if strata else "a"
            labels.append(int(rng.random() < min(1.0, ease + (0.25 if arm == "b" else 0.0))))
            tasks.append(f"t{t:03d}")
            arms.append(arm)
            baseline.append(offsets[-1] + rng.gauss(0, 1))
            for values, offset in zip(features, offsets):
                values.append(offset + rng.gauss(0, 1))
    return labels, tasks, arms, baseline, features


def issue22_rare(seed, n_tasks=50, n_features=10, rate_scale=0.07):
    """Rare successes (task ease uniform on [0, rate_scale]; about 6 successes in 50
    tasks at 0.07): the baseline and ten features alike, a task offset each and the
    same 0.8 sd shift for successes; 1-6 runs per task."""
    rng = random.Random(seed)
    labels, tasks, baseline = [], [], []
    features = [[] for _ in range(n_features)]
    for t in range(n_tasks):
        ease = rng.random() * rate_scale
        offsets = [rng.gauss(0, 1) for _ in range(n_features + 1)]
        for _ in range(rng.randint(1, 6)):
            y = int(rng.random() < ease)
            labels.append(y)
            tasks.append(f"t{t:03d}")
            baseline.append(offsets[-1] + rng.gauss(0.8 * y, 1))
            for values, offset in zip(features, offsets):
                values.append(offset + rng.gauss(0.8 * y, 1))
    return labels, tasks, baseline, features


def bench_auc_issue22_gate_three(reps=300):
    """Issue 22's calibration: pass rates of a task-only column (with and without a
    condition), of features like the baseline with successes in few tasks, the
    family-wise rate of minP p <= 0.05 (lone tasks included), and power on issue 19's
    planted signal; `reps` replications each, 200 shuffles and 200 resamples."""
    module = load(AUC)
    start = time.perf_counter()

    def run_case(label, draw, count):
        hits = used = 0
        for seed in range(reps):
            data = draw(seed)
            if data is None:
                continue
            used += 1
            hits += count(module.audit(*data[0], **data[1], perms=200, boot=200, seed=seed))
        print(f"auc_audit.py issue 22, {label}: {issue19_rate(hits, used)} ({used} data sets)")

    def task_only(seed, strata):
        labels, tasks, arms, baseline, column = issue22_task_only(10000 + seed, strata=strata)
        return ((labels, [("f0", column)], baseline),
                {"tasks": tasks, "strata": arms if strata else None})

    def features_of(labels, tasks, baseline, features, **options):
        return ((labels, [(f"f{j}", v) for j, v in enumerate(features)], baseline),
                dict(tasks=tasks, **options))

    def null(seed, **options):
        labels, tasks, arms, baseline, features = issue22_null(40000 + seed, **options)
        if sum(labels) in (0, len(labels)):
            return None
        return features_of(labels, tasks, baseline, features,
                           strata=arms if options.get("strata") else None)

    def rare(seed, scale):
        labels, tasks, baseline, features = issue22_rare(30000 + seed, rate_scale=scale)
        return None if sum(labels) < 2 else features_of(labels, tasks, baseline, features)

    def gate_one_pass(result):
        return any(f["delta_same_rows"] > 0 and f["delta_joint_ci"] is not None
                   and f["delta_joint_ci"][0] > 0 for f in result["features"])

    def some_pass(result):
        return bool(result["verdict"]["passing"])

    def minp(result):
        return min(f["adjusted_p"] for f in result["features"]) <= 0.05

    run_case("a column knowing only the task passes all three gates",
             lambda seed: task_only(seed, False), some_pass)
    run_case("with --strata, a column tracking task and condition passes",
             lambda seed: task_only(seed, True), some_pass)
    run_case("3 successes in 3 of 50 tasks, ten features like the baseline: some feature "
             "passes", lambda seed: features_of(*issue22_few_successes(20000 + seed)),
             some_pass)
    run_case("about 6 successes in 50 tasks, ten like the baseline: gate-1 false pass",
             lambda seed: rare(seed, 0.07), gate_one_pass)
    run_case("about 12 successes in 50 tasks: gate-1 false pass",
             lambda seed: rare(seed, 0.14), gate_one_pass)
    run_case("true null, 30 tasks of 1-6 runs: family-wise minP p <= 0.05",
             lambda seed: null(seed), minp)
    run_case("true null with two strata: family-wise minP p <= 0.05",
             lambda seed: null(seed, strata=True), minp)
    run_case("true null, 12 tasks of 1..12 runs (no two alike): family-wise minP p <= 0.05",
             lambda seed: null(seed, n_tasks=12, lone=True), minp)
    run_case("power: issue 19's planted f0 (1 sd inside tasks, 30 tasks of 4) passes",
             lambda seed: features_of(*issue19_planted(2000 + seed)),
             lambda result: "f0" in result["verdict"]["passing"])
    print(f"  ({time.perf_counter() - start:.0f} s)")

# --- Benchmarks: harness readers ---
def bench_agent_output():
    """Derive the tables from an OpenHands output.jsonl of 300 runs x 100 events."""
    module = load("delivery_audit.py")
    with open(os.path.join(AGENTS, "openhands", "model-b", "output.jsonl"),
              encoding="utf-8") as handle:
        record = json.loads(handle.read())
    events = record["history"][2:-1] * 10
    history = record["history"][:2] + events + record["history"][-1:]
    with TempDir() as folder:
        with open(os.path.join(folder, "output.jsonl"), "w", encoding="utf-8") as out:
            for k in range(300):
                out.write(json.dumps(dict(record, instance_id=f"x__y-{k}", history=[
                    dict(e, id=j, cause=j - 1 if "observation" in e else None)
                    for j, e in enumerate(history)])) + "\n")
        started = time.perf_counter()
        derived = module.agent_output(module.Inputs(), folder)
        seconds = time.perf_counter() - started
    print(f"agent output: {len(derived['runs'].rows)} OpenHands runs, "
          f"{len(derived['tool_calls'].rows)} tool calls derived in {seconds:.2f} s")


# --- Benchmarks: regrade.py ---
def example_regrade_argv():
    """The shipped regrade example's arguments, with absolute paths."""
    example = os.path.join(HERE, "examples", "regrade")
    return [os.path.join(example, "instances.jsonl"), os.path.join(example, "predictions.jsonl"),
            "--repo", os.path.join(example, "calc.bundle")]


def fastest_of_three(argv):
    """The fastest of three regrade.py runs: (wall seconds, its JSON summary)."""
    best = None
    for _ in range(3):
        started = time.monotonic()
        report = regrade_json(argv)[1]
        wall = time.monotonic() - started
        if best is None or wall < best[0]:
            best = (wall, report["summary"])
    return best


def bench_regrade_example():
    """Grader overhead per run beyond the test command, and --jobs 2 vs --jobs 1, on the example."""
    argv = example_regrade_argv()
    results = {jobs: fastest_of_three(argv + ["--jobs", str(jobs)]) for jobs in (1, 2)}
    wall, summary = results[1]
    print(f"regrade example: {summary['runs']} runs, --jobs 1 {wall:.2f} s wall, "
          f"test commands {summary['seconds_tests']:.2f} s, grader overhead "
          f"{summary['overhead_per_run_s']:.3f} s per run")
    print(f"regrade example: --jobs 2 {results[2][0]:.2f} s wall, speed-up "
          f"{results[1][0] / results[2][0]:.2f}x over --jobs 1")


def bench_regrade_sandbox():
    """What bwrap adds per test command: the shipped example under none and bwrap, interleaved."""
    if bwrap_missing():
        print(f"regrade sandbox: skipped ({bwrap_missing()})")
        return
    argv = example_regrade_argv()
    tests = {"none": [], "bwrap": []}
    for round_number in range(5):
        for mode in ("none", "bwrap") if round_number % 2 == 0 else ("bwrap", "none"):
            report = regrade_json(argv + ["--sandbox", mode])[1]
            ran = [v for v in report["runs"] if v["tests_status"]]
            tests[mode].append(sum(v["test_s"] for v in ran) / len(ran))
    none, bwrap = (sorted(tests[m])[2] for m in ("none", "bwrap"))
    print(f"regrade sandbox: median test command {none:.3f} s under none, {bwrap:.3f} s under "
          f"bwrap: {1000 * (bwrap - none):.0f} ms per run (5 interleaved rounds of the example)")


def bench_regrade_select_modes():
    """--select ids against --select files on the example: wall, test and grader seconds per run."""
    argv = example_regrade_argv()
    for select in ("ids", "files"):
        for jobs in (1, 2):
            wall, summary = fastest_of_three(argv + ["--select", select, "--jobs", str(jobs)])
            print(f"regrade example --select {select} --jobs {jobs}: {wall / summary['runs']:.3f} s "
                  f"wall per run, test commands {summary['seconds_tests'] / summary['runs']:.3f} s "
                  f"per run, grader overhead {summary['overhead_per_run_s']:.3f} s per run "
                  f"(load average {os.getloadavg()[0]:.1f})")


def bench_regrade_cluster_rehearsal():
    """The cluster rehearsal's figures (issue 16): processes, signals, verdicts, leftovers."""
    case = RegradeClusterCase("run")
    RegradeClusterCase.setUpClass()
    try:
        with TempDir() as folder:
            started = time.monotonic()
            figures = cluster_rehearsal(case, folder)
            figures["seconds"] = round(time.monotonic() - started, 1)
    finally:
        RegradeClusterCase.tearDownClass()
    print(f"regrade cluster rehearsal: {json.dumps(figures, sort_keys=True)}")


def bench_regrade_interruptions(trials=20, load=2):
    """Issue 26: grading and making each interrupted `trials` times (SIGINT, SIGTERM, SIGHUP
    to the process group, start-up included) with `load` busy loops running, each rerun
    to the end and compared with an uninterrupted run: how many differ."""
    RegradeClusterMakeCase.setUpClass()
    case = RegradeClusterMakeCase("run")
    try:
        for kind, step in (("grading", 0.25), ("making", 0.6)):
            with TempDir() as folder:
                started = time.monotonic()
                figures = cluster_interruptions(case, folder, [i * step for i in range(trials)],
                                                making=kind == "making", load=load)
                figures["seconds"] = round(time.monotonic() - started, 1)
            print(f"regrade interruptions, {kind}: {json.dumps(figures, sort_keys=True)}")
    finally:
        RegradeClusterMakeCase.tearDownClass()


def bench_regrade_django_and_sympy_runners():
    """Grader overhead per run beyond the test command, on the Django- and SymPy-style repositories."""
    for fixture in (TestRegradeDjangoRunner, TestRegradeSympyRunner):
        fixture.setUpClass()
        try:
            case = fixture("assert_verdict")
            f2p = DJANGOISH_IDS if fixture is TestRegradeDjangoRunner else ["test_double_negative"]
            best = None
            for _ in range(3):
                verdicts = case.grade({"bench": (f2p, [], {})}, runs=("gold", "empty"))
                overhead = [v["duration_s"] - v["test_s"] for v in verdicts.values()]
                if best is None or max(overhead) < max(best):
                    best = overhead
            print(f"regrade {fixture.REPO_NAME} ({fixture.__name__}): grader overhead "
                  f"{min(best):.3f}-{max(best):.3f} s per run")
        finally:
            fixture.tearDownClass()


def bench_regrade_kept_trees():
    """Grader overhead per run on a 6,000-file tree: kept trees (bwrap) against a fresh
    checkout per run (none), 6 runs of one commit, the same unittest test each time."""
    if bwrap_missing():
        print(f"regrade kept trees: skipped ({bwrap_missing()})")
        return
    files = dict(CORE_BASE)
    files.update({f"calc/data/d{i // 100:02d}/f{i:04d}.py": f"X = {i}\n" for i in range(6000)})
    with TempDir() as folder:
        repo, base = regrade_repo(folder, files)
        work = os.path.join(folder, "work")
        regrade_git(["clone", "-q", repo, work], folder)
        fix = regrade_diff(work, CORE_FIX)
        f2p, p2p = CORE_IDS["unittest"]
        regrade_jsonl(folder, "i.jsonl", [{
            "instance_id": "big", "repo": "acme/calc", "base_commit": base, "patch": fix,
            "test_patch": "", "FAIL_TO_PASS": json.dumps(f2p), "PASS_TO_PASS": json.dumps(p2p)}])
        regrade_jsonl(folder, "p.jsonl", [{"run_id": f"big@{i}", "instance_id": "big",
                                           "model_patch": fix} for i in range(6)])
        figures = {}
        for mode in ("none", "bwrap"):
            status, report, err = regrade_json([os.path.join(folder, "i.jsonl"),
                                                os.path.join(folder, "p.jsonl"), "--repo", repo,
                                                "--sandbox", mode, "--jobs", "1"])
            assert status == 0, err
            overhead = sorted(v["duration_s"] - v["test_s"] for v in report["runs"])
            figures[mode] = (overhead[0], overhead[len(overhead) // 2], overhead[-1])
    print("regrade kept trees, 6,000-file tree, 6 runs, grader overhead per run (min, median, "
          "max): fresh checkout (--sandbox none) " +
          ", ".join(f"{x:.3f}" for x in figures["none"]) + " s; kept tree (bwrap) " +
          ", ".join(f"{x:.3f}" for x in figures["bwrap"]) +
          f" s (load average {os.getloadavg()[0]:.1f})")


def bench_regrade_audit_instances():
    """--audit-instances on the audit tests' planted instances, under bwrap where it runs:
    runs per instance (2K + 2) and the grader's seconds per run beyond the test command."""
    TestRegradeAuditInstances.setUpClass()
    try:
        case = TestRegradeAuditInstances
        sandbox = "none" if bwrap_missing() else "bwrap"
        for repeat in (1, 3):
            instances = regrade_jsonl(case.folder, "bench.jsonl", case.rows[:3])
            started = time.monotonic()
            status, report, err = regrade_json([
                "--audit-instances", instances, "--repo", case.repo, "--repeat", str(repeat),
                "--sandbox", sandbox, "--env", f"AUDIT_COUNTER={case.counter}"])
            assert status == 0, err
            wall = time.monotonic() - started
            summary = report["summary"]
            print(f"regrade --audit-instances --repeat {repeat} ({sandbox}): "
                  f"{summary['instances']} instances, {summary['runs']} runs "
                  f"({summary['runs'] / summary['instances']:.0f} per instance), {wall:.2f} s "
                  f"wall, grader {summary['grader_s_mean']:.3f} s per run (max "
                  f"{summary['grader_s_max']:.3f}; load average {os.getloadavg()[0]:.1f})")
    finally:
        TestRegradeAuditInstances.tearDownClass()


# === Golden reports: every format of every shipped example, byte for byte ===
GOLDEN = os.path.join(HERE, "examples", "golden")
GOLDEN_COMMANDS = {     # file stem -> the command's arguments, run from the top folder
    "delivery_audit": ["delivery_audit.py", "examples/runs"],
    "auc_audit": ["auc_audit.py", "examples/runs"],
    # No sandbox, so the report is the same on a machine without bubblewrap.
    "regrade": ["regrade.py", "examples/regrade/instances.jsonl",
                "examples/regrade/predictions.jsonl", "--repo", "examples/regrade/calc.bundle",
                "--sandbox", "none"],
}
GOLDEN_FORMATS = {"text": "txt", "markdown": "md", "json": "json"}
# What differs from machine to machine or from edit to edit, each with its stand-in: the
# script's own hash, the interpreter (launcher name, version, path, its hashes in the reuse
# key) and regrade's seconds.
GOLDEN_MASKS = (
    (re.compile(r"\bpython3(?:\.\d+)? (delivery_audit|auc_audit|regrade)\.py"), r"python3 \1.py"),
    (re.compile(r'("(?:duration_s|test_s|overhead_per_run_s|seconds_tests|seconds_total)": )'
                r'[-0-9.e]+'), r'\1"<seconds>"'),
    (re.compile(r'("python_executable": )"[^"]*"'), r'\1"<interpreter>"'),
    (re.compile(r'("(?:python|distributions|grader|key)": )"[0-9a-f]{16,64}"'), r'\1"<hash>"'),
    # regrade's grader_version carries the first 12 hex digits of its own hash.
    (re.compile(r'("grader_version": "[^"+]*\+)[0-9a-f]{12}"'), r'\1<hash>"'),
    # the footer's manifest hash covers the script's own bytes, so it moves with each edit
    (re.compile(r"(manifest: \d+ files[^\n]*\n?\s*`?)[0-9a-f]{64}"),
     r"\1<manifest sha256>"),
    (re.compile(r'("manifest": \{\s*"files": \d+,\s*"sha256": )"[0-9a-f]{64}"'),
     r'\1"<manifest sha256>"'),
)


LONG_FLOAT = re.compile(r"(?<![\w.\"])-?\d+\.\d{6,}(?:e-?\d+)?(?![\w.])")


def stem_is_json(output):
    """Whether a report is the JSON one (its first character opens an object)."""
    return output.startswith("{")


def golden_text(stem, output):
    """A report with what differs between machines and edits replaced by stand-ins."""
    with open(os.path.join(HERE, GOLDEN_COMMANDS[stem][0]), "rb") as handle:
        own = hashlib.sha256(handle.read()).hexdigest()
    output = output.replace(own, "<sha256 of the script>")
    if stem_is_json(output):
        # Full-precision floats differ in the last place between Python versions (3.12's
        # sum() is compensated): 12 significant digits are compared, far past any print.
        output = LONG_FLOAT.sub(lambda found: format(float(found.group()), ".12g"), output)
    output = output.replace(platform.python_version(), "<python>")
    for pattern, stand_in in GOLDEN_MASKS:
        output = pattern.sub(stand_in, output)
    return output


def golden_outputs():
    """{file name: masked report} for every shipped example in every format."""
    found = {}
    for stem, argv in GOLDEN_COMMANDS.items():
        for form, ending in GOLDEN_FORMATS.items():
            done = subprocess.run([sys.executable, *argv, "--format", form], cwd=HERE,
                                  capture_output=True, text=True, timeout=600,
                                  stdin=subprocess.DEVNULL)
            if done.returncode != 0:
                raise AssertionError(f"{stem} --format {form} exited {done.returncode}: "
                                     f"{done.stderr[-500:]}")
            found[f"{stem}.{ending}"] = golden_text(stem, done.stdout)
    return found


def write_golden():
    """--write-golden: write examples/golden/ anew from the scripts as they are."""
    os.makedirs(GOLDEN, exist_ok=True)
    for name, text in golden_outputs().items():
        with open(os.path.join(GOLDEN, name), "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        print(f"wrote examples/golden/{name}")


class TestGoldenReports(unittest.TestCase):
    """A change that is not meant to change a report (a refactor) is proved by these: every
    format of every shipped example matches examples/golden/ byte for byte, once the script's
    own hash, the interpreter and regrade's seconds are masked. A change that is meant to
    alter a report rewrites them with python3 test_audit.py --write-golden, and the diff of
    examples/golden/ shows a reviewer exactly what a user will see differently."""

    def test_every_shipped_example_matches_its_golden_report(self):
        if shutil.which("git") is None:
            self.skipTest("git is not installed (regrade.py's example needs it)")
        for name, text in sorted(golden_outputs().items()):
            with open(os.path.join(GOLDEN, name), encoding="utf-8", newline="") as handle:
                expected = handle.read()
            for pattern, stand_in in GOLDEN_MASKS:     # a file written before a mask was added
                expected = pattern.sub(stand_in, expected)
            if text != expected:
                first = next(i for i, (a, b) in enumerate(zip(text.splitlines() + [""],
                                                              expected.splitlines() + [""]))
                             if a != b)
                self.fail(f"examples/golden/{name} differs at line {first + 1}:\n"
                          f"  now:    {text.splitlines()[first:first + 1]}\n"
                          f"  golden: {expected.splitlines()[first:first + 1]}\n"
                          "rerun python3 test_audit.py --write-golden if the change is meant")

    def test_the_masks_hide_only_what_differs_between_machines(self):
        masked = golden_text("regrade", 'x\n      "test_s": 0.123,\n      "grader": "'
                             + "ab" * 32 + '",\n  "grader_version": "0.1.0+0123456789ab",\n'
                             '  "python": "python3",\nPython '
                             + platform.python_version() + "\n/usr/bin/python3.9 regrade.py\n")
        self.assertEqual(masked, 'x\n      "test_s": "<seconds>",\n      "grader": "<hash>",\n'
                                 '  "grader_version": "0.1.0+<hash>",\n'
                                 '  "python": "python3",\nPython <python>\n'
                                 '/usr/bin/python3 regrade.py\n')


# === Runner ===
def load_tests(loader, tests, pattern):
    """Add the doctests of every script to the unittest suite."""
    for script in SCRIPTS:
        tests.addTests(doctest.DocTestSuite(load(script)))
    return tests


SLOW_MARK = "Regrade"          # what --quick leaves out: classes that grade real checkouts


def selected_tests(names, quick):
    """The suite to run: the named classes or tests, or all of them (less regrade's with quick)."""
    module = sys.modules[__name__]
    if names:
        for name in names:
            found = module
            for part in name.split("."):
                found = getattr(found, part, None)
            if found is None:
                raise LookupError(name)
        return unittest.TestSuite(unittest.defaultTestLoader.loadTestsFromName(name, module)
                                  for name in names)
    # loadTestsFromModule calls load_tests above, which adds the doctests.
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    if not quick:
        return suite

    def cases(tests):
        for test in tests:
            if isinstance(test, unittest.TestSuite):
                yield from cases(test)
            elif SLOW_MARK not in type(test).__name__:
                yield test
    return unittest.TestSuite(cases(suite))


def run_tests(suite, verbose):
    """Run a suite and print the closing line 'N passed, N failed[, N skipped]'."""
    result = unittest.TextTestRunner(verbosity=2 if verbose else 1, stream=sys.stdout).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    for test, reason in result.skipped:
        print(f"skipped {test.id()}: {reason}")
    print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    return 0 if failed == 0 else 1


def main(argv):
    if "--help" in argv or "-h" in argv:
        print("Usage:\n" + __doc__.split("Usage:\n", 1)[1].rstrip())
        return 0
    unknown = [arg for arg in argv if arg.startswith("-")
               and arg not in ("--sync", "--force", "--write-golden", "--write-readme",
                               "--bench", "--quick",
                                     "-v")]
    if unknown:
        print(f"error: unknown option {unknown[0]} (python3 test_audit.py --help lists them)",
              file=sys.stderr)
        return 2
    if "--force" in argv and "--sync" not in argv:
        print("error: --force goes with --sync (python3 test_audit.py --sync --force)",
              file=sys.stderr)
        return 2
    if "--sync" in argv:
        return sync_helper_block(force="--force" in argv)
    if "--write-golden" in argv:
        write_golden()
        return 0
    if "--write-readme" in argv:
        write_readme()
        return 0
    if "--bench" in argv:
        for name, function in sorted(globals().items()):
            if name.startswith("bench_") and callable(function):
                function()
        return 0
    names = [arg for arg in argv if not arg.startswith("-")]
    try:
        suite = selected_tests(names, quick="--quick" in argv)
    except LookupError as missing:
        print(f"error: no test named {missing} (names are classes or Class.test_method)",
              file=sys.stderr)
        return 2
    return run_tests(suite, verbose="-v" in argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
