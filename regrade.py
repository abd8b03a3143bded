#!/usr/bin/env python3
# /// script
# requires-python = ">=3.9"
# dependencies = []
# ///
"""Regrade coding-agent runs offline from a diff, a baseline commit and the maintainers' test patch.

One file, Python 3.9+ standard library, git and (optionally) GNU patch; no
Docker, no network, no model. A run is complete only if every FAIL_TO_PASS
and every PASS_TO_PASS test of its instance passes after its diff is applied.

Basic usage:
    python3 regrade.py INSTANCES RUNS --repo PATH [--out DIR]

    INSTANCES  JSON or JSONL in the SWE-bench schema: instance_id, repo,
               base_commit, test_patch, FAIL_TO_PASS, PASS_TO_PASS (a JSON list
               or a string holding one), optionally patch (the gold fix),
               test_cmd, test_runner (pytest|unittest|log|django|sympy), test_env
               {KEY: VALUE}, and SWE-bench v5's log_parser, eval_type, image and
               eval_script (see "Runners" for what each does here).
    RUNS       a predictions file (JSON/JSONL: instance_id, model_patch, optional
               model_name_or_path, run_id; several runs may share an instance),
               a runs folder (one subfolder per run holding a diff file, *.diff or
               *.patch, and a small JSON naming instance_id or task_id and
               optionally base_commit and run_id), or a built-in set:
               gold (each instance's own patch) or empty (no change at all).
    --repo     a local clone or a git bundle file, or owner/name=PATH repeated
               for several repositories. Nothing in it is ever changed.

Procedure per run (each step is recorded in the verdict):
    1. Check out base_commit into a throwaway folder: a private git repository
       that borrows the clone's objects read-only (objects/info/alternates), so
       the clone's branches, index, work files and metadata are never written.
    2. Normalise the diff (drop text before the first 'diff --git', CRLF to LF,
       add a final newline) and apply it: git apply, then git apply --3way, then
       patch --batch --forward --fuzz=3 (a reversed hunk is never applied),
       cleaning the tree between attempts. None applies: patch_failed.
    3. Reset the test tree: every file the test patch touches and every test or
       test-configuration file the diff touched (tests/ anywhere, test/ and
       testing/ at the top, test_*.py, *_test.py, tests.py, noxfile.py;
       --test-files replaces that list) goes back to base_commit, and so, anywhere
       in the tree and whatever --test-files says, does every pytest.ini,
       .pytest.ini, tox.ini, setup.cfg, pyproject.toml, conftest.py,
       sitecustomize.py, usercustomize.py and *.pth it touched (each is listed in
       touched_tests). A module or package the diff adds at an import root (the
       tree, or src/) under the name of a standard-library module or of pytest,
       _pytest, pluggy or py is removed, and listed in removed_shadowing.
    4. Apply the test patch. It does not apply: test_patch_failed (a grading
       error, not the agent's failure).
    5. Put the tree's import root (src/ if present, else the tree) first on
       PYTHONPATH; after the tests, check where the repository's own top-level
       packages were imported from. From outside the tree (say an editable
       install of another copy): wrong_code_under_test, a grading error.
    6. Run the listed tests' files (never the whole suite) with a timeout that
       kills the process group, a scrubbed environment (HOME and TMPDIR in the
       throwaway folder; dropped: credential-looking names, URLs with a
       user:password@ part, NETRC, PYTHON*, PYTEST_* such as PYTEST_ADDOPTS and
       PYTEST_PLUGINS; --keep-env NAME passes one on) and stdin closed.
    7. Read each result from a structured record: a pytest plugin loaded with
       -p, or a unittest runner, each writing to a file in a private folder of
       the grader's (not beside the tree). Each record is signed with an HMAC
       under a random secret the recorder reads from a file it deletes as it
       starts, before any test code is imported; unsigned records are ignored
       (the verdict notes how many), and the first record of each test and
       phase stands. Nothing the code prints is read as a result. --runner log
       parses the output instead (pytest -rA for '::' ids, python -m unittest -v
       for dotted ids by default), and says so in the verdict.
    8. Verdict: completed only if every FAIL_TO_PASS and PASS_TO_PASS test
       passed. A listed test that did not run is missing (failed); skip or xfail
       of a FAIL_TO_PASS test is not a pass; an xfailed PASS_TO_PASS test counts
       as passing and an xpassed test as failed, as in SWE-bench; a skipped
       PASS_TO_PASS test fails the run unless --p2p-skip-ok. A non-zero exit
       with no failure recorded is a grading error. Ids match exactly
       (parametrised pytest ids included), except that non-ASCII characters
       compare in pytest's escaped form: test_x[café] matches test_x[caf\\xe9].
       Never resolved, whatever the tests say: the code under test replaced a
       method of unittest's TestCase, TestResult, TestSuite, TestLoader or
       runner; a pytest plugin with code in the tree (conftest.py aside) was
       registered other than by module name from an untouched file; json,
       unittest, pytest, _pytest or pluggy came from the tree (unless the tree
       is that project); or the test process ended before the recorder's last
       record. Reason: "the code under test tampered with the test runner".
       --repeat K runs the tests K times and lists tests whose outcome changed
       as flaky; a test counts as passed only if it passed every time.
    9. Remove the throwaway folder, also on timeout, error or Ctrl-C
       (--keep-trees keeps it for debugging).

Runners (--runner, an instance's test_runner, else its log_parser; auto picks
django or sympy for the repositories django/django and sympy/sympy or a tree laid
out like them, then pytest when a listed id contains '::', else unittest):
    runner    runs (only the listed tests' files)     listed ids look like
    pytest    python -m pytest FILES, plugin -p       tests/test_x.py::Class::test_y
    unittest  the unittest recorder on MODULES        tests.test_x.Class.test_y
    django    tests/runtests.py --verbosity 2         test_y (module.Class), its
              --settings=test_sqlite --parallel 1     Python 3.11+ form test_y
              LABELS, with a recording result class   (module.Class.test_y), or the
              (tree: tests/runtests.py and django/)   first line of the docstring
    sympy     SymPy's own runner, as bin/test -C      test_y (a bare name)
              --verbose --use-sympy-runner FILES,
              its reporter hooked (tree: bin/test
              and sympy/)
    log       --test-cmd or the default, parsed       as the parser finds them
  Django labels are SWE-bench's: each Python file of the test patch, tests/ and
  .py dropped, slashes to dots, plus the modules of listed ids elsewhere. A
  docstring id is mapped to its test by reading the test patch's files (then every
  file under tests/); SymPy's bare names are looked up in the test patch's test
  files, then in files an id names (path.py::test_y). An id that names no test is
  a grading error: the instance's mistake, not the agent's. An id naming several
  tests (a docstring two tests share, a name defined in two files) stands for all
  of them: their outcome when they agree, else a grading error naming two that
  disagree. Outcomes: Django's skip is skipped, expectedFailure xfailed,
  unexpected success xpassed; SymPy's @XFAIL that fails is xfailed and one that
  passes (XPASS) xpassed, @SKIP and @slow (not run without --slow, as in
  SWE-bench) skipped; step 8's rules then apply: an XFAIL FAIL_TO_PASS test is not
  a pass, an XPASS fails its run. Django's runner runs in the test process with
  tests/ first on the path and the tree next (what SWE-bench's editable install
  gives), SymPy's in process with hash seed 0 and SYMPY_USE_CACHE=no (-C); a crash
  before or between tests is recorded as a failure. Both runners are the tree's
  own code: review a diff that edits django/test/ or sympy/testing/runtests.py.
  Where SWE-bench's log parsers would read the same output differently, the record
  is right: its SymPy parser misses each file's last test (printed as 'test_y ok
  [OK]') and reads no XFAIL, XPASS or skip line (each becomes a failure there);
  its Django parser reads an expected failure as a failure (an xfailed
  PASS_TO_PASS test passes here), keeps the last of two tests sharing a docstring,
  misses the first test of a run when its line is glued to the migrations' output
  ('Applying sites.0002_alter_domain_unique...test_x (...) ... ok'), and reads
  lines the code under test prints; SymPy's runner exits 0 when a test fails and 1
  when all pass, and the record does not depend on it; SWE-bench v4.1.0 drops a
  skipped FAIL_TO_PASS test from its count (its current grader fails it, as here).
  SWE-bench v5 fields: log_parser parse_log_django and parse_log_sympy pick those
  runners, its pytest-output parsers (parse_log_pytest, _v2, _options, and the
  per-repository ones such as parse_log_astropy) pick pytest, any other (Go, Java,
  JavaScript, ...) is a grading error saying regrade.py has no runner for that
  repository. eval_type pass_and_fail is what is applied (fail_only is noted, not
  applied). image and eval_script are meant for the harness's container: they are
  not used, eval_script is never run on the host, and the verdict's notes say so.

Statuses: resolved, unresolved, patch_failed, timeout (each says something
about the run: completed true only for resolved), and the grading errors
test_patch_failed, wrong_code_under_test and error, whose `completed` is empty
(null), not false, since they say nothing about the agent, and whose resolution
is NO. A run naming an instance the instances file lacks, or a base commit the
repository lacks, is an error verdict; the other runs are still graded. Resolution is
SWE-bench's FULL / PARTIAL / NO (an empty FAIL_TO_PASS or PASS_TO_PASS list
counts as passed, as there).

Outputs with --out DIR:
    verdicts.jsonl   one line per run, appended as soon as it is graded, then
                     rewritten (atomically, sorted by run id) with each run once,
                     its latest verdict, when the job ends, fails or is
                     interrupted; a re-run skips runs graded with the same inputs
                     (SHA-256 of diff, test patch, test lists, options, grader
                     version); --force regrades
    verdicts.csv     run_id, instance_id, completed, status: the runs-table shape
                     that delivery_audit.py --verdicts and auc_audit.py
                     --verdicts read directly
    logs/RUN.log     every step's command and output, and the test output
    reports/RUN.json SWE-bench-style report {instance_id: {patch_is_None, ...}}
    swebench_summary.json  the official harness's run summary keys; every count is
                     in one unit, runs when ids_are is run_id (several runs share
                     an instance), plus one per instance with no run
Without --out nothing is written. The summary (--format text, markdown or
json) goes to stdout; progress to stderr when it is a terminal (--progress
forces it).

To regrade the shipped example (offline, standard library only):
    python3 regrade.py examples/regrade/instances.jsonl examples/regrade/predictions.jsonl \\
        --repo examples/regrade/calc.bundle
To check that instances are sound (gold resolves all, empty resolves none):
    python3 regrade.py instances.jsonl gold --repo ../project --out gold/
    python3 regrade.py instances.jsonl empty --repo ../project --out empty/
To grade a runs folder with the project's own virtualenv, 4 at a time:
    python3 regrade.py instances.jsonl runs/ --repo ../project \\
        --python ../project/.venv/bin/python --jobs 4 --out verdicts/
To split a large job into 10 array tasks (Slurm, Kubernetes indexed job, GNU parallel):
    python3 regrade.py instances.jsonl preds.jsonl --repo ../p \\
        --shard $((SLURM_ARRAY_TASK_ID+1))/10 --out out/shard-$SLURM_ARRAY_TASK_ID
    then: cat out/shard-*/verdicts.jsonl > verdicts.jsonl
          python3 regrade.py --summarize verdicts.jsonl --out out/all
To feed the delivery audit:
    python3 delivery_audit.py runs/ --verdicts out/all/verdicts.csv
To grade Django or SymPy instances (SWE-bench ids; a virtualenv with asgiref and
sqlparse for Django, mpmath for SymPy):
    python3 regrade.py django.jsonl preds.jsonl --repo django/django=../django \\
        --python ../venv/bin/python --out django-verdicts/
    python3 regrade.py sympy.jsonl preds.jsonl --repo sympy/sympy=../sympy \\
        --python ../venv/bin/python --out sympy-verdicts/
To use a custom test command whose output is parsed (verdicts marked 'log'; lines the
code under test prints can fool a log parser, so prefer the structured runners):
    python3 regrade.py i.jsonl p.jsonl --repo R --runner log \\
        --test-cmd "{python} -m pytest -rA {files}"

Defaults: --timeout 600 s, --jobs 1, --repeat 1, --runner auto (see Runners),
--python the interpreter running this
script. Exit status: 0 graded (whatever the verdicts), 2 bad input or usage
(unreadable or malformed files, a --test-cmd or test_cmd that does not split,
or that lacks {python} where a structured runner needs it).

This is not a sandbox: the code under test runs with your user's rights, in the
same process as the recorder. The checks above catch the tampering seen so far
(config files, shadowing modules, forged result files, patched unittest methods,
pytest plugins registered from the code); code written to defeat this grader in
particular (reading the recorder's memory, faking a module's __file__) can still
succeed. Review suspicious diffs, or grade inside a container.
"""
import ast
import concurrent.futures
import fnmatch
import hmac
import re
import secrets
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time

__version__ = "0.1.0"

DEFAULT_TIMEOUT = 600
DEFAULT_FUZZ = 3
STATUSES = ("resolved", "unresolved", "patch_failed", "test_patch_failed",
            "wrong_code_under_test", "timeout", "error")
GRADING_ERRORS = ("test_patch_failed", "wrong_code_under_test", "error")
RUNNERS = ("auto", "pytest", "unittest", "log", "django", "sympy")
# Directory names that hold tests anywhere in the tree, and only at the top
# (django/test/ and numpy/testing/ are source code, not tests).
TEST_DIRS_ANYWHERE = ("tests",)
TEST_DIRS_AT_TOP = ("test", "testing")
# Files that decide what tests run or how: a run must not bring its own.
TEST_FILE_PATTERNS = ("test_*.py", "*_test.py", "tests.py", "conftest.py", "pytest.ini",
                      "tox.ini", "noxfile.py", "sitecustomize.py", "usercustomize.py", "*.pth")
# Files that configure pytest or the interpreter: reset anywhere in the tree,
# whatever --test-files says (each can load a plugin from the run's own code).
CONFIG_FILE_NAMES = ("pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml",
                     "conftest.py", "sitecustomize.py", "usercustomize.py", "*.pth")
# Top-level names a run may not add at an import root: they would replace the
# grader's own modules (the standard library's, and pytest's with its helpers).
TEST_TOOL_MODULES = ("pytest", "_pytest", "pluggy", "py")
STDLIB_FALLBACK = frozenset((  # Python 3.9 has no sys.stdlib_module_names
    "__future__ _abc _ast _collections_abc _io _thread _weakref abc argparse ast asyncio atexit "
    "base64 bdb binascii bisect builtins bz2 calendar cgi cmath cmd code codecs collections "
    "colorsys compileall concurrent configparser contextlib contextvars copy copyreg csv ctypes "
    "dataclasses datetime decimal difflib dis doctest email encodings enum errno faulthandler "
    "fcntl filecmp fileinput fnmatch fractions functools gc getopt getpass gettext glob graphlib "
    "gzip hashlib heapq hmac html http imp importlib inspect io ipaddress itertools json keyword "
    "linecache locale logging lzma marshal math mimetypes multiprocessing numbers operator os "
    "pathlib pdb pickle pkgutil platform plistlib posix posixpath pprint profile pstats pty pwd "
    "queue random re reprlib resource runpy sched secrets select selectors shelve shlex shutil "
    "signal site socket sqlite3 ssl stat statistics string struct subprocess sys sysconfig "
    "tarfile tempfile termios textwrap threading time timeit token tokenize trace traceback "
    "tracemalloc types typing unicodedata unittest urllib uuid warnings weakref xml zipfile "
    "zipimport zlib").split())
STDLIB_MODULES = frozenset(getattr(sys, "stdlib_module_names", STDLIB_FALLBACK))
# Modules the recorders check were imported from outside the tree.
GUARDED_MODULES = ("json", "unittest", "pytest", "_pytest", "pluggy")
# Variables that look like credentials never reach the code under test.
CREDENTIAL_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "API_KEY",
                    "ACCESS_KEY", "PRIVATE_KEY", "AUTH", "COOKIE", "SESSION")
CREDENTIAL_PREFIXES = ("AWS_", "GITHUB_", "GH_", "GITLAB_", "OPENAI_", "ANTHROPIC_",
                       "AZURE_", "GOOGLE_", "HF_", "HUGGING", "SSH_", "GPG_", "NPM_", "PYPI_",
                       "TWINE_", "DOCKER_", "KUBE")
# Variables of the grader's own environment that would change how tests run.
DROPPED_PREFIXES = ("PYTHON", "PYTEST_", "GIT_", "VIRTUAL_ENV", "CONDA_PREFIX", "COV_")
DROPPED_NAMES = ("NETRC",)
CREDENTIAL_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s@:]*:[^/\s@]*@")
TAMPERED = "the code under test tampered with the test runner"
GIT_OPTIONS = ("-c", "core.hooksPath=/dev/null", "-c", "core.autocrlf=false",
               "-c", "core.fsmonitor=false", "-c", "gc.auto=0", "-c", "advice.detachedHead=false",
               "-c", "core.quotepath=off", "-c", "user.name=regrade",
               "-c", "user.email=regrade@localhost", "-c", "commit.gpgsign=false")
PLUGIN_MODULE = "regrade_pytest_plugin"
UNITTEST_MODULE = "regrade_unittest_runner"
RESULTS_VARIABLE = "REGRADE_RESULTS_FILE"

# === Shared helpers ===
# --- shared helpers: keep identical in all three scripts (python3 test_audit.py --sync) ---
# Tables in, tables and JSON out, errors, provenance. delivery_audit.py holds the
# canonical copy; test_audit.py fails when the copies in auc_audit.py or
# regrade.py drift from it. The block imports what it uses so it stands alone.
import argparse
import csv
import hashlib
import io
import json
import math
import os
import platform
import shlex
import sys
import tempfile


class InputError(ValueError):
    """Bad input or usage: main() prints 'error: <message>' and returns 2."""


MISSING_WORDS = frozenset({"", "na", "n/a", "nan", "null", "none", "undefined"})
TRUE_WORDS = frozenset({"1", "1.0", "true", "t", "yes", "y", "pass", "passed",
                        "resolved", "complete", "completed", "claimed", "claim",
                        "done", "success"})
FALSE_WORDS = frozenset({"0", "0.0", "false", "f", "no", "n", "fail", "failed",
                         "unresolved", "incomplete", "not", "not claimed",
                         "unclaimed", "not_claimed", "failure"})
RUNS_TABLE_NAMES = ("runs.csv", "runs.tsv", "runs.jsonl", "runs.json")


def is_missing(value):
    """Return True for the spellings of 'undefined for this run'.

    >>> [is_missing(v) for v in ("", "NA", "nan", " null ", "0")]
    [True, True, True, True, False]
    """
    return value is None or str(value).strip().lower() in MISSING_WORDS


def parse_bool(value, where):
    """Read a yes/no cell; `where` names the cell in the error message.

    >>> parse_bool("Yes", "x"), parse_bool("0", "x"), parse_bool("resolved", "x")
    (True, False, True)
    >>> try:
    ...     parse_bool("maybe", "runs.csv row 3, column 'claimed'")
    ... except InputError as exc:
    ...     print(exc)
    runs.csv row 3, column 'claimed': expected yes/no (true/false, 1/0), got 'maybe'
    """
    word = str(value).strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise InputError(f"{where}: expected yes/no (true/false, 1/0), got {value!r}")


def parse_number(value, where):
    """Read a numeric cell: a float, or None where the cell is missing.

    >>> parse_number("12", "x"), parse_number("NA", "x"), parse_number("1e3", "x")
    (12.0, None, 1000.0)
    >>> try:
    ...     parse_number("fast", "runs.csv row 2, column 'secs'")
    ... except InputError as exc:
    ...     print(exc)
    runs.csv row 2, column 'secs': expected a number, got 'fast'
    """
    if is_missing(value):
        return None
    if isinstance(value, bool):
        return float(value)
    try:
        number = float(str(value).strip())
    except ValueError:
        raise InputError(f"{where}: expected a number, got {value!r}") from None
    if math.isnan(number):
        return None
    if math.isinf(number):
        raise InputError(f"{where}: expected a finite number, got {value!r}")
    return number


class Table:
    """Rows of one input table as dicts of strings, with where each came from."""

    def __init__(self, name, columns, rows, lines):
        self.name = name          # the path as the user gave it, for messages
        self.columns = columns    # header order
        self.rows = rows          # list of {column: str}
        self.lines = lines        # line (CSV) or record (JSON) number of each row

    def where(self, index, column=None):
        """Name a row (and column) the way an error message should."""
        place = f"{self.name} row {self.lines[index]}"
        return place if column is None else f"{place}, column {column!r}"

    def column(self, name, *, flag=None, candidates=(), required=True):
        """Return the column called `name`, or the first of `candidates` present."""
        if name:
            if name not in self.columns:
                hint = f" (given by {flag})" if flag else ""
                raise InputError(f"{self.name}: no column {name!r}{hint}; "
                                 f"columns are {', '.join(self.columns)}")
            return name
        lowered = {c.lower(): c for c in self.columns}
        for candidate in candidates:
            if candidate.lower() in lowered:
                return lowered[candidate.lower()]
        if required:
            raise InputError(f"{self.name}: no {flag.lstrip('-') if flag else 'required'} "
                             f"column (looked for {', '.join(candidates)}; name it with "
                             f"{flag}); columns are {', '.join(self.columns)}")
        return None


def cell_text(value):
    """Turn a JSON value into the string a CSV cell would hold."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def parse_table_text(text, name, kind):
    """Parse `text` as kind 'csv', 'tsv', 'jsonl' or 'json' into a Table."""
    text = text.lstrip("\ufeff")
    if not text.strip():
        raise InputError(f"{name}: empty file, expected a header row or JSON records")
    if kind in ("jsonl", "json"):
        records, lines = [], []
        if kind == "json":
            try:
                data = json.loads(text)
            except ValueError as exc:
                raise InputError(f"{name}: not valid JSON ({exc})") from None
            if isinstance(data, dict):
                data = data.get("runs", data.get("rows", [data]))
            if not isinstance(data, list):
                raise InputError(f"{name}: expected a JSON list of records")
            records, lines = data, list(range(1, len(data) + 1))
        else:
            for number, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    try:
                        records.append(json.loads(line))
                    except ValueError as exc:
                        raise InputError(f"{name} line {number}: not valid JSON ({exc})") from None
                    lines.append(number)
        columns, rows = [], []
        for record, number in zip(records, lines):
            if not isinstance(record, dict):
                raise InputError(f"{name} row {number}: expected a JSON object")
            for key in record:
                if key not in columns:
                    columns.append(key)
            rows.append({key: cell_text(value) for key, value in record.items()})
        for row in rows:
            for key in columns:
                row.setdefault(key, "")
        if not rows:
            raise InputError(f"{name}: no records")
        return Table(name, columns, rows, lines)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t" if kind == "tsv" else ",")
    try:
        header = next(reader)
        columns = [c.strip() for c in header]
        if len(set(columns)) != len(columns) or "" in columns:
            dup = next(c for c in columns if columns.count(c) > 1 or c == "")
            raise InputError(f"{name} row 1: empty or repeated column name {dup!r}")
        rows, lines = [], []
        for cells in reader:
            if not any(c.strip() for c in cells):
                continue
            if len(cells) > len(columns):
                raise InputError(f"{name} row {reader.line_num}: {len(cells)} cells "
                                 f"but the header has {len(columns)}")
            cells += [""] * (len(columns) - len(cells))
            rows.append(dict(zip(columns, cells)))
            lines.append(reader.line_num)
    except csv.Error as exc:
        raise InputError(f"{name} row {reader.line_num}: {exc}") from None
    if not rows:
        raise InputError(f"{name}: a header but no rows")
    return Table(name, columns, rows, lines)


def table_kind(path, text=""):
    """Guess the format from the file name, or from the text for stdin."""
    lower = path.lower()
    for ending, kind in ((".csv", "csv"), (".tsv", "tsv"), (".tab", "tsv"),
                         (".jsonl", "jsonl"), (".ndjson", "jsonl"), (".json", "json")):
        if lower.endswith(ending):
            return kind
    start = text.lstrip("\ufeff \t\r\n")[:1]
    first_line = text.split("\n", 1)[0]
    if start == "[":
        return "json"
    if start == "{":
        return "jsonl" if text.strip().count("\n") else "json"
    return "tsv" if "\t" in first_line and "," not in first_line else "csv"


class Inputs:
    """Every file an audit reads, with its SHA-256, for the provenance footer."""

    def __init__(self):
        self.files = []           # [(path as given, sha256)]

    def read_bytes(self, path):
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError as exc:
                raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
        self.files.append((path, hashlib.sha256(data).hexdigest()))
        return data

    def read_text(self, path):
        data = self.read_bytes(path)
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: not UTF-8 text (byte {exc.start})") from None

    def read_table(self, path):
        """Read a CSV/TSV/JSONL/JSON table, '-' for stdin, or a runs folder."""
        if path != "-" and os.path.isdir(path):
            for candidate in RUNS_TABLE_NAMES:
                full = os.path.join(path, candidate)
                if os.path.isfile(full):
                    return self.read_table(full)
            raise InputError(f"{path}: runs folder has no runs table "
                             f"(expected one of {', '.join(RUNS_TABLE_NAMES)})")
        if path != "-" and not os.path.exists(path):
            raise InputError(f"{path}: no such file or folder")
        text = self.read_text(path)
        return parse_table_text(text, "stdin" if path == "-" else path, table_kind(path, text))

    def sibling_table(self, path, name):
        """Read `name` (e.g. tool_calls.csv) from a runs folder, or None.

        Only a runs folder, or its runs.csv named directly, brings its siblings:
        a table that merely sits beside other files does not.
        """
        if path == "-":
            return None
        if os.path.isdir(path):
            folder = path
        elif os.path.basename(path) in RUNS_TABLE_NAMES:
            folder = os.path.dirname(path) or "."
        else:
            return None
        if not os.path.isfile(os.path.join(folder, name)):
            return None
        return self.read_table(os.path.join(folder, name))

    def guard_output(self, path):
        """Refuse to write over any input: the scripts never write into their inputs."""
        target = os.path.realpath(path)
        for source, _ in self.files:
            if source != "-" and os.path.realpath(source) == target:
                raise InputError(f"{path}: refusing to overwrite an input file")


def write_atomic(path, text):
    """Write `text` to `path` via a temporary file and a rename."""
    folder = os.path.dirname(os.path.abspath(path))
    temp = None
    try:
        handle, temp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".part")
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
        os.replace(temp, path)
    except OSError as exc:
        if temp is not None and os.path.exists(temp):
            os.remove(temp)       # a failed write leaves nothing behind
        raise InputError(f"{path}: cannot write ({exc.strerror or exc})") from None


def fmt(value, digits=3):
    """Format a number the way the reports print it; None prints as 'undefined'.

    >>> fmt(0.32352941), fmt(None), fmt(72), fmt(-0.0227), fmt(float("inf"))
    ('0.324', 'undefined', '72', '-0.023', 'inf')
    """
    if value is None:
        return "undefined"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = f"{value:.{digits}f}"
    return "0." + "0" * digits if text == "-0." + "0" * digits else text


def fmt_ci(ci, digits=3):
    """Format an interval as [low, high].

    >>> fmt_ci([0.2149, 0.4481]), fmt_ci(None)
    ('[0.215, 0.448]', '')
    """
    if not ci or ci[0] is None:
        return ""
    return f"[{fmt(ci[0], digits)}, {fmt(ci[1], digits)}]"


def looks_numeric(text):
    """True for a number or an interval like [0.215, 0.448]: right-aligned in tables."""
    parts = text.strip("[]").split(",") if text.startswith("[") else [text]
    try:
        [float(p) for p in parts]
    except ValueError:
        return False
    return True


def render_table(headers, rows, style):
    """Render rows of cells as aligned text or a Markdown pipe table.

    >>> print(render_table(["a", "bb"], [["x", "1"], ["yy", "22"]], "text"))
    a   bb
    --  --
    x    1
    yy  22
    >>> print(render_table(["a", "bb"], [["x", "1"]], "markdown"))
    | a | bb |
    |---|---:|
    | x | 1 |
    """
    cells = [[str(c) for c in row] for row in rows]

    def numeric(i):
        column = [row[i] for row in cells if row[i] not in ("", "undefined")]
        return bool(column) and all(looks_numeric(c) for c in column)

    right = [numeric(i) for i in range(len(headers))]
    if style == "markdown":
        def line(row):
            return "| " + " | ".join(c.replace("|", "\\|") for c in row) + " |"
        rule = "|" + "|".join("---:" if r else "---" for r in right) + "|"
        return "\n".join([line(headers), rule] + [line(row) for row in cells])
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]

    def aligned(row):
        return "  ".join(c.rjust(w) if r else c.ljust(w)
                         for c, w, r in zip(row, widths, right)).rstrip()
    rule = "  ".join("-" * w for w in widths)
    return "\n".join([aligned(headers), rule] + [aligned(row) for row in cells])


def jsonable(value):
    """Make `value` strict JSON: NaN and infinities become null, tuples lists."""
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def to_json(value):
    """Serialise a result as indented, strict JSON at full precision."""
    return json.dumps(jsonable(value), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def script_sha256(path):
    """SHA-256 of the script's own bytes: a pasted output names the exact file."""
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def provenance(script_path, version, argv, seed, inputs):
    """Everything a reader needs to rerun the audit and get the same numbers."""
    name = os.path.basename(script_path)
    return {
        "script": name,
        "version": version,
        "script_sha256": script_sha256(script_path),
        "python": platform.python_version(),
        "command": " ".join(["python3", name] + [shlex.quote(a) for a in argv]),
        "seed": seed,
        "inputs": [{"path": p, "sha256": h} for p, h in inputs.files],
    }


def render_provenance(prov, style):
    """The footer printed under every text and Markdown report.

    The script and every input are listed in sha256sum's format, so a reader can
    check them with `sha256sum -c`; in Markdown the footer is a code block, so
    the lines paste out unchanged.
    """
    lines = [
        f"{prov['script']} {prov['version']}, Python {prov['python']}",
        f"command: {prov['command']}",
        f"seed: {prov['seed'] if prov['seed'] is not None else 'none (no randomness)'}",
        "sha256 of the script and its inputs:",
        f"{prov['script_sha256']}  {prov['script']}",
    ]
    lines += [f"{f['sha256']}  {f['path']}" for f in prov["inputs"]]
    if style == "markdown":
        return "Provenance:\n\n```\n" + "\n".join(lines) + "\n```"
    return "-- provenance --\n" + "\n".join(lines)


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors that exit 2 through InputError."""

    def __init__(self, doc, **kwargs):
        super().__init__(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter,
                         **kwargs)

    def error(self, message):
        raise InputError(message)


def add_common_options(parser, version, script_path, seed=None):
    """--format, --seed (when the script draws random numbers) and --version."""
    parser.add_argument("--format", choices=("text", "markdown", "json"), default="text",
                        help="output format (default: text)")
    if seed is not None:
        parser.add_argument("--seed", type=int, default=seed,
                            help=f"seed for resampling and shuffles (default: {seed})")
    parser.add_argument("--version", action="version",
                        version=f"%(prog)s {version} (sha256 {script_sha256(script_path)})")


def run_main(body, argv):
    """Call body(argv); turn InputError into 'error: ...' and exit status 2."""
    try:
        return body(sys.argv[1:] if argv is None else list(argv))
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
# --- end shared helpers ---


# === Diffs ===
def normalise_diff(text):
    """Clean an agent's diff the way graders need: from the first file header, LF, final newline.

    >>> normalise_diff("Here is my fix:\\r\\ndiff --git a/x.py b/x.py\\r\\n+1")
    'diff --git a/x.py b/x.py\\n+1\\n'
    >>> normalise_diff(None), normalise_diff("  \\n")
    ('', '')
    """
    if not text or not text.strip():
        return ""
    text = text.replace("\r\n", "\n")
    match = re.search(r"^diff --git ", text, re.M)
    if match is None:
        match = re.search(r"^--- .*\n\+\+\+ ", text, re.M)
    if match is not None:
        text = text[match.start():]
    return text if text.endswith("\n") else text + "\n"


def unquote_git_path(name):
    """Undo git's C-style quoting of unusual file names.

    >>> unquote_git_path('"a/caf\\\\303\\\\251.py"'), unquote_git_path("b/plain.py")
    ('a/café.py', 'b/plain.py')
    """
    if not (len(name) >= 2 and name[0] == name[-1] == '"'):
        return name
    raw, body, i = bytearray(), name[1:-1], 0
    escapes = {"n": 10, "t": 9, '"': 34, "\\": 92, "a": 7, "b": 8, "f": 12, "r": 13, "v": 11}
    while i < len(body):
        char = body[i]
        if char == "\\" and i + 1 < len(body):
            if body[i + 1] in "01234567" and re.match(r"[0-7]{3}", body[i + 1:i + 4]):
                raw.append(int(body[i + 1:i + 4], 8))
                i += 4
                continue
            raw.append(escapes.get(body[i + 1], ord(body[i + 1])))
            i += 2
            continue
        raw.extend(char.encode("utf-8"))
        i += 1
    return raw.decode("utf-8", "replace")


def strip_prefix(name):
    """Drop the a/ or b/ of a diff path; None for /dev/null."""
    name = unquote_git_path(name.split("\t")[0].rstrip())
    if name == "/dev/null":
        return None
    return name[2:] if name[:2] in ("a/", "b/") else name


def header_paths(rest):
    """The file names in a 'diff --git' line after the command words."""
    quoted = r'"(?:[^"\\]|\\.)*"'
    match = re.fullmatch(rf"({quoted}|\S+) ({quoted}|\S+)", rest)
    if match and (rest.startswith('"') or rest.endswith('"')):
        return {strip_prefix(match.group(1)), strip_prefix(match.group(2))}
    half = len(rest) // 2
    if len(rest) % 2 == 1 and rest[half] == " " and rest[2:half] == rest[half + 3:]:
        return {rest[2:half]}
    if " b/" in rest:
        old, new = rest.split(" b/", 1)
        return {strip_prefix(old), new}
    return set()


def diff_paths(text):
    """Return the sorted paths a diff touches: old and new names, renames included.

    >>> diff_paths("diff --git a/x.py b/y.py\\nrename from x.py\\nrename to y.py\\n"
    ...            "diff --git a/t/n s.py b/t/n s.py\\nnew file mode 100644\\n--- /dev/null\\n"
    ...            "+++ b/t/n s.py\\n@@ -0,0 +1,2 @@\\n+--- a/fake.py\\n++++ b/fake.py\\n")
    ['t/n s.py', 'x.py', 'y.py']
    """
    lines = text.split("\n")
    git_style = any(line.startswith("diff --git ") for line in lines)
    paths, in_header = set(), False
    for index, line in enumerate(lines):
        if line.startswith("diff --git "):
            in_header = True
            paths.update(header_paths(line[len("diff --git "):]))
            continue
        if line.startswith(("@@", "GIT binary patch")):
            in_header = False
            continue
        if in_header:
            for prefix in ("rename from ", "rename to ", "copy from ", "copy to "):
                if line.startswith(prefix):
                    paths.add(unquote_git_path(line[len(prefix):]))
        if (in_header or not git_style) and line.startswith("--- ") and \
                index + 1 < len(lines) and lines[index + 1].startswith("+++ "):
            paths.update({strip_prefix(line[4:]), strip_prefix(lines[index + 1][4:])})
    paths.discard(None)
    paths.discard("")
    return sorted(paths)


def is_test_path(path, patterns=None):
    """True for test files and test configuration a run must not bring into grading.

    Test-configuration files (CONFIG_FILE_NAMES) count anywhere, whatever `patterns` says.

    >>> [is_test_path(p) for p in ("tests/a/b.py", "pkg/tests/x.py", "conftest.py",
    ...  "src/pkg/conftest.py", "test/x.py", "django/test/utils.py", "pkg/core.py")]
    [True, True, True, True, True, False, False]
    >>> [is_test_path(p, ["nothing"]) for p in ("pyproject.toml", "a/setup.cfg", ".pytest.ini")]
    [True, True, True]
    """
    parts = path.split("/")
    if any(fnmatch.fnmatchcase(parts[-1], p) for p in CONFIG_FILE_NAMES):
        return True
    if patterns is not None:
        return any(fnmatch.fnmatchcase(path, p) or fnmatch.fnmatchcase(parts[-1], p)
                   for p in patterns)
    if any(part in TEST_DIRS_ANYWHERE for part in parts[:-1]):
        return True
    if len(parts) > 1 and parts[0] in TEST_DIRS_AT_TOP:
        return True
    return any(fnmatch.fnmatchcase(parts[-1], p) for p in TEST_FILE_PATTERNS)


MODULE_SUFFIXES = (".py", ".pyc", ".pyw", ".pyd", ".so")


def shadowing_paths(added, import_roots, base_names):
    """The added files that would put a standard-library or pytest module at an import root.

    `import_roots` are tree-relative prefixes ('' or 'src/'); `base_names` the
    top-level names each root already had at base (those are the project's own).

    >>> shadowing_paths(["json.py", "src/unittest/__init__.py", "src/pkg/json.py", "pytest.py",
    ...                  "pkg/x.py", "code/notes.md", "py/x.py"], ["", "src/"], {"": {"py"}})
    ['json.py', 'pytest.py', 'src/unittest/__init__.py']
    """
    found = []
    for path in added:
        if not path.endswith(MODULE_SUFFIXES):
            continue
        for root in import_roots:
            if not path.startswith(root):
                continue
            parts = path[len(root):].split("/")
            top = parts[0].split(".")[0] if len(parts) == 1 else parts[0]
            if (top in STDLIB_MODULES or top in TEST_TOOL_MODULES) and \
                    top not in base_names.get(root, ()):
                found.append(path)
                break
    return sorted(found)


def sha256_text(text):
    """SHA-256 of a text's UTF-8 bytes; '' hashes like an empty file."""
    return hashlib.sha256((text or "").encode("utf-8")).hexdigest()


# === Git work trees ===
class GradingError(Exception):
    """A step of grading one run failed for a reason outside the agent's diff."""


def git_environment():
    """The environment git runs in: no inherited GIT_* state, no system config, C locale."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0", GIT_LITERAL_PATHSPECS="1",
               LC_ALL="C", LANGUAGE="C")
    return env


GIT_ENV = git_environment()


def git(args, *, cwd=None, input_text=None, check=True):
    """Run git with safe options; return (status, output). Raise GradingError if check fails."""
    try:
        done = subprocess.run(["git", *GIT_OPTIONS, *args], cwd=cwd, env=GIT_ENV,
                              input=(input_text or "").encode("utf-8"),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError as exc:
        raise GradingError(f"cannot run git ({exc.strerror or exc})") from None
    output = done.stdout.decode("utf-8", "replace")
    if check and done.returncode != 0:
        raise GradingError(f"git {' '.join(args[:2])} failed: {output.strip()[-500:]}")
    return done.returncode, output


class Source:
    """A repository to check commits out of: a clone, or a bundle imported once."""

    def __init__(self, label, git_dir):
        self.label = label                          # as the user named it
        self.git_dir = git_dir                      # absolute path of a git directory
        self.objects = os.path.join(git_dir, "objects")

    def resolve(self, commits):
        """Map each commit name to its full hash, or None where the repository lacks it."""
        names = sorted(set(commits))
        query = "".join(f"{name}^{{commit}}\n" for name in names)
        _, output = git(["--git-dir", self.git_dir, "cat-file",
                         "--batch-check=%(objectname) %(objecttype)"], input_text=query)
        found = {}
        for name, line in zip(names, output.splitlines()):
            words = line.split()
            found[name] = words[0] if len(words) == 2 and words[1] == "commit" else None
        return found


def open_source(path, scratch, inputs):
    """Open --repo PATH: a clone (any layout) or a bundle file, never writing into it."""
    if os.path.isdir(path):
        status, output = git(["-C", path, "rev-parse", "--path-format=absolute",
                              "--git-common-dir"], check=False)
        if status != 0:
            raise InputError(f"--repo {path}: not a git repository")
        return Source(path, output.strip().splitlines()[-1])
    if os.path.isfile(path):
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        inputs.files.append((path, digest.hexdigest()))
        status, heads = git(["bundle", "list-heads", os.path.abspath(path)], check=False)
        if status != 0:
            raise InputError(f"--repo {path}: neither a git repository nor a git bundle")
        cache = tempfile.mkdtemp(prefix="bundle-", dir=scratch)
        git(["init", "-q", "--bare", "--template=", cache])
        refspecs = []
        for number, line in enumerate(heads.splitlines()):
            if len(line.split()) == 2:
                refspecs.append(f"+{line.split()[1]}:refs/bundle/{number}")
        status, output = git(["-C", cache, "fetch", "-q", os.path.abspath(path), *refspecs],
                             check=False)
        if status != 0:
            raise InputError(f"--repo {path}: cannot read the bundle ({output.strip()[-200:]})")
        return Source(path, cache)
    raise InputError(f"--repo {path}: no such folder or file")


def make_tree(source, commit, folder):
    """Check `commit` out into folder/tree: a private repository borrowing the source's objects."""
    tree = os.path.join(folder, "tree")
    git(["init", "-q", "--template=", tree])
    info = os.path.join(tree, ".git", "objects", "info")
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, "alternates"), "w", encoding="utf-8") as handle:
        handle.write(source.objects + "\n")
    git(["-C", tree, "checkout", "-q", "--detach", commit])
    return tree


def clean_tree(tree):
    """Put the tree back at its commit, with nothing untracked."""
    git(["-C", tree, "reset", "-q", "--hard", "HEAD"])
    git(["-C", tree, "clean", "-q", "-f", "-d", "-x"])


def apply_diff(tree, patch_file, fuzz=DEFAULT_FUZZ):
    """Apply a diff with the fallbacks public graders use; return (method or None, log text)."""
    attempts = [("git apply", ["git", *GIT_OPTIONS, "apply", "--whitespace=nowarn", patch_file]),
                ("git apply --3way", ["git", *GIT_OPTIONS, "apply", "--3way",
                                      "--whitespace=nowarn", patch_file])]
    if shutil.which("patch"):
        # --forward: a hunk that looks already applied or reversed is skipped and
        # the attempt fails, instead of patch silently undoing the change.
        attempts.append((f"patch --fuzz={fuzz}", ["patch", "--batch", "--forward", f"--fuzz={fuzz}",
                                                  "-p1", "--no-backup-if-mismatch",
                                                  "--reject-file=-", "-i", patch_file]))
    log = []
    for method, command in attempts:
        done = subprocess.run(command, cwd=tree, env=GIT_ENV, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        output = done.stdout.decode("utf-8", "replace")
        log.append(f"$ {' '.join(shlex.quote(c) for c in command)}\n{output}exit {done.returncode}\n")
        reversed_hunk = "Reversed (or previously applied)" in output
        if done.returncode == 0 and not reversed_hunk:
            git(["-C", tree, "reset", "-q"])
            return method, "".join(log)
        clean_tree(tree)
    return None, "".join(log)


def reset_paths(tree, paths):
    """Put `paths` back to the tree's commit: restore what existed, delete what did not."""
    root = os.path.realpath(tree)
    safe = [p for p in paths
            if os.path.realpath(os.path.join(root, p)).startswith(root + os.sep) and ".git" not in
            p.split("/")]
    if not safe:
        return
    git(["-C", tree, "reset", "-q"])
    _, listing = git(["-C", tree, "ls-tree", "-r", "-z", "--name-only", "HEAD", "--", *safe])
    existing = [p for p in listing.split("\0") if p]
    for start in range(0, len(existing), 200):
        git(["-C", tree, "checkout", "-q", "HEAD", "--", *existing[start:start + 200]])
    for path in set(safe) - set(existing):
        full = os.path.join(tree, path)
        if os.path.islink(full) or os.path.isfile(full):
            os.remove(full)
        elif os.path.isdir(full):
            shutil.rmtree(full)


# === Test runners ===
# Both are written, for each run, into a folder of the grader's own that is not
# beside the work tree. They read their settings and a random secret from a file
# named by an environment variable, delete that file and the variable before any
# test code is imported, and append one JSON line per event, each signed with an
# HMAC under the secret, so records written by other code are ignored. They also
# record where the repository's top-level modules and the grader's own modules
# (json, unittest, pytest, ...) were imported from, and signs of tampering.
# In-process code can still reach the recorder's memory: regrade.py is not a sandbox.
RECORDER_COMMON = r'''
import hashlib, hmac, json, os, sys

_CONFIG = {}
_OUT = _MAC = None
_CONFIG_PATH = os.environ.pop("REGRADE_RESULTS_FILE", "")
if _CONFIG_PATH:
    with open(_CONFIG_PATH, encoding="utf-8") as _handle:
        _CONFIG = json.load(_handle)
    os.remove(_CONFIG_PATH)
    _MAC = hmac.new(bytes.fromhex(_CONFIG.pop("secret")), digestmod=hashlib.sha256)
    _OUT = open(_CONFIG["results"], "a", encoding="utf-8")
    # The grader's folder leaves the import path, so test code does not see it there.
    _HERE = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
        if p and os.path.abspath(p) != _HERE)


def _write(record):
    if _OUT is not None:
        text = json.dumps(record, ensure_ascii=False, sort_keys=True)
        mac = _MAC.copy()
        mac.update(text.encode("utf-8"))
        _OUT.write(json.dumps({"record": text, "mac": mac.hexdigest()}, ensure_ascii=False) + "\n")
        _OUT.flush()


def _inside(path):
    tree = _CONFIG.get("tree")
    if not tree or not path:
        return False
    return os.path.realpath(path).startswith(os.path.realpath(tree) + os.sep)


def _locations():
    found = {}
    for name in _CONFIG.get("modules", []):
        module = sys.modules.get(name)
        if module is None:
            continue
        places = [getattr(module, "__file__", None) or ""]
        places += [str(p) for p in (getattr(module, "__path__", None) or [])]
        found[name] = [p for p in places if p]
    return found


def _shadowed():
    """The grader's own modules (and __main__ posing as one) loaded from the tree."""
    found = []
    for name in _CONFIG.get("guarded", []):
        module = sys.modules.get(name)
        if module is not None and _inside(getattr(module, "__file__", None)):
            found.append(f"{name}: {module.__file__}")
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and (spec.name or "").split(".")[0] in _CONFIG.get("guarded", []) \
            and _inside(getattr(main, "__file__", None)):
        found.append(f"__main__ ({spec.name}): {main.__file__}")
    return found
'''

PYTEST_PLUGIN = '"""Written by regrade.py: records each pytest outcome to a file."""' + \
    RECORDER_COMMON + r'''
import types

_write({"kind": "start", "runner": "pytest", "shadowed": _shadowed()})
_PLUGINS = {}


def _plugin_files(plugin, manager):
    module = plugin if isinstance(plugin, types.ModuleType) else \
        sys.modules.get(getattr(type(plugin), "__module__", None) or "")
    files = {getattr(module, "__file__", None) or ""}
    try:
        for caller in manager.get_hookcallers(plugin) or []:
            for impl in caller.get_hookimpls():
                if impl.plugin is plugin:
                    files.add(getattr(getattr(impl.function, "__code__", None),
                                      "co_filename", "") or "")
    except Exception:
        pass
    return module, sorted(f for f in files if _inside(f) and
                          os.path.basename(f) != "conftest.py")


def _note_plugin(plugin, manager):
    # A plugin whose code lies in the tree (conftest.py files aside) is the
    # code under test reaching into pytest, unless it is loaded the usual way.
    try:
        module, files = _plugin_files(plugin, manager)
        if files:
            name = manager.get_name(plugin) or ""
            _PLUGINS[(name, tuple(files))] = {
                "name": name, "module": getattr(module, "__name__", "") or "",
                "is_module": isinstance(plugin, types.ModuleType), "files": files}
    except Exception as exc:
        _PLUGINS[("?", (repr(exc),))] = {"name": "?", "module": "", "is_module": False,
                                         "files": [repr(exc)[:200]]}


def pytest_plugin_registered(plugin, manager):
    _note_plugin(plugin, manager)


def pytest_configure(config):
    root = getattr(config, "rootpath", None) or getattr(config, "rootdir", "")
    _write({"kind": "rootdir", "path": str(root)})


def pytest_collectreport(report):
    if report.failed:
        _write({"kind": "collect_error", "nodeid": report.nodeid})


def pytest_runtest_logreport(report):
    _write({"kind": "test", "nodeid": report.nodeid, "when": report.when,
            "outcome": report.outcome, "xfail": hasattr(report, "wasxfail")})


def pytest_sessionfinish(session, exitstatus):
    manager = session.config.pluginmanager
    for _, plugin in manager.list_name_plugin():
        if plugin is not None:
            _note_plugin(plugin, manager)
    _write({"kind": "finish", "exitstatus": int(exitstatus), "modules": _locations(),
            "shadowed": _shadowed(), "plugins": sorted(_PLUGINS.values(),
                                                       key=lambda p: (p["name"], p["files"]))})
'''

UNITTEST_RUNNER = '"""Written by regrade.py: runs unittest modules, records outcomes to a file."""' + \
    RECORDER_COMMON + r'''
import unittest


class _Recorder(unittest.TextTestResult):
    def _record(self, test, outcome):
        _write({"kind": "test", "nodeid": test.id(), "outcome": outcome})

    def addSuccess(self, test):
        super().addSuccess(test)
        self._record(test, "passed")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._record(test, "failed")

    def addError(self, test, err):
        super().addError(test, err)
        self._record(test, "error")

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._record(test, "skipped")

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._record(test, "xfailed")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._record(test, "xpassed")

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self._record(test, "failed")


def _runner_parts():
    """Every method of the classes that decide a unittest outcome, by identity."""
    found = {}
    for owner in (unittest.TestCase, unittest.TestResult, unittest.TextTestResult,
                  unittest.TestSuite, unittest.TestLoader, unittest.TextTestRunner, _Recorder):
        for name, value in vars(owner).items():
            if callable(value) or isinstance(value, (classmethod, staticmethod, property)):
                found[f"{owner.__name__}.{name}"] = value
    for name in ("TestCase", "TestResult", "TextTestResult", "TestSuite", "TestLoader",
                 "TextTestRunner"):
        found[f"unittest.{name}"] = getattr(unittest, name)
    found["_write"], found["_Recorder"] = _write, _Recorder
    return found


def main(names):
    _write({"kind": "start", "runner": "unittest", "shadowed": _shadowed()})
    before = _runner_parts()
    loader, suite = unittest.TestLoader(), unittest.TestSuite()
    for name in names:
        try:
            suite.addTest(loader.loadTestsFromName(name))
        except Exception as exc:
            _write({"kind": "collect_error", "nodeid": name, "error": repr(exc)[:500]})
    result = unittest.TextTestRunner(resultclass=_Recorder, verbosity=2,
                                     stream=sys.stderr).run(suite)
    status = 0 if result.wasSuccessful() and not loader.errors else 1
    after = _runner_parts()
    changed = sorted(k for k in set(before) | set(after) if before.get(k) is not after.get(k))
    _write({"kind": "finish", "exitstatus": status, "modules": _locations(),
            "shadowed": _shadowed(), "tampered": changed[:20]})
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
'''


def unittest_name(test_id):
    """Return the dotted unittest id for a listed test id in any common spelling.

    >>> unittest_name("tests/test_ops.py::TestClamp::test_upper")
    'tests.test_ops.TestClamp.test_upper'
    >>> unittest_name("test_upper (tests.test_ops.TestClamp)")
    'tests.test_ops.TestClamp.test_upper'
    >>> unittest_name("test_upper (tests.test_ops.TestClamp.test_upper)")
    'tests.test_ops.TestClamp.test_upper'
    """
    match = re.fullmatch(r"(\w+) \(([\w.]+)\)", test_id.strip())
    if match:
        method, owner = match.groups()
        return owner if owner.endswith("." + method) else f"{owner}.{method}"
    if "::" in test_id:
        path, *rest = test_id.split("::")
        module = path[:-3] if path.endswith(".py") else path
        return ".".join([module.strip("/").replace("/", ".")] + rest)
    return test_id


def unittest_module(dotted, roots):
    """The longest prefix of a dotted id that is a module file under one of `roots`."""
    parts = dotted.split(".")
    for size in range(len(parts), 0, -1):
        for root in roots:
            base = os.path.join(root, *parts[:size])
            if os.path.isfile(base + ".py") or os.path.isfile(os.path.join(base, "__init__.py")):
                return ".".join(parts[:size])
    return dotted


def unfound_tests(test_ids, dotted_ids, tree, roots):
    """Listed ids whose test file (pytest ids) or module (dotted ids) is nowhere in the tree.

    A pytest path may be relative to a rootdir below the tree, so any file whose
    path ends with it counts as found.
    """
    present = None
    unfound = []
    for test_id, dotted in zip(test_ids, dotted_ids):
        if "::" in test_id or test_id.endswith(".py"):
            path = test_id.split("::")[0]
            if os.path.isfile(os.path.join(tree, path)):
                continue
            if present is None:
                present = [os.path.relpath(os.path.join(folder, name), tree).replace(os.sep, "/")
                           for folder, dirs, names in os.walk(tree)
                           for name in names if name.endswith(".py")
                           if ".git" not in os.path.relpath(folder, tree).split(os.sep)]
            if not any(p == path or p.endswith("/" + path) for p in present):
                unfound.append(test_id)
        else:
            module = unittest_module(dotted, roots)
            base = [os.path.join(root, *module.split(".")) for root in roots]
            if not any(os.path.isfile(b + ".py") or os.path.isfile(os.path.join(b, "__init__.py"))
                       for b in base):
                unfound.append(test_id)
    return unfound


def test_files(test_ids, test_patch_paths):
    """The test files named by pytest ids; the test patch's test files for other ids.

    >>> test_files(["t/test_a.py::test_x[a::b]", "t/test_a.py::C::test_y", "t/test_b.py"], [])
    ['t/test_a.py', 't/test_b.py']
    """
    files, other = set(), False
    for test_id in test_ids:
        if "::" in test_id or test_id.endswith(".py"):
            files.add(test_id.split("::")[0])
        else:
            other = True
    if other:
        files.update(p for p in test_patch_paths if p.endswith(".py") and is_test_path(p)
                     and not p.endswith("conftest.py"))
    return sorted(files)


PYTEST_STATUS = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\s+(\S.*?)(?:\s+-\s+.*)?$")
UNITTEST_LINE = re.compile(r"^(\w+) \(([\w.]+)\)(?:\s*\n?.*?)? \.\.\. (ok|FAIL|ERROR|skipped.*|"
                           r"expected failure|unexpected success)\s*$")
LOG_OUTCOMES = {"PASSED": "passed", "FAILED": "failed", "ERROR": "error", "SKIPPED": "skipped",
                "XFAIL": "xfailed", "XPASS": "xpassed", "ok": "passed", "FAIL": "failed",
                "expected failure": "xfailed", "unexpected success": "xpassed"}


LOG_RANK = {"failed": 3, "error": 3, "skipped": 2, "xfailed": 2, "passed": 1, "xpassed": 1}


def parse_test_log(text):
    """Read outcomes from pytest -rA and unittest/Django verbose output (--runner log only).

    A test reported twice keeps its worse outcome, so a line printed later by the
    code under test cannot turn a real failure into a pass; it can still invent
    a pass for a test that never ran, which is why structured results are the default.

    >>> parse_test_log("PASSED t.py::test_a[x y]\\nFAILED t.py::test_b - assert 0\\n"
    ...                "test_c (m.C) ... ok\\ntest_d (m.C.test_d) ... skipped 'no'\\n"
    ...                "FAILED (failures=1)\\nFAIL: test_c (m.C)\\nPASSED t.py::test_b\\n")
    {'t.py::test_a[x y]': 'passed', 't.py::test_b': 'failed', 'm.C.test_c': 'failed', 'm.C.test_d': 'skipped'}
    """
    found = {}

    def note(test_id, outcome):
        if LOG_RANK[outcome] >= LOG_RANK.get(found.get(test_id), 0):
            found[test_id] = outcome
    for line in text.splitlines():
        line = re.sub(r"\x1b\[[0-9;]*m", "", line).rstrip()
        match = PYTEST_STATUS.match(line)
        if match and not match.group(2).startswith(("[", "(")):
            note(match.group(2), LOG_OUTCOMES[match.group(1)])
            continue
        match = re.match(r"^(FAIL|ERROR): (\w+ \([\w.]+\))$", line)
        if match:
            note(unittest_name(match.group(2)), "failed" if match.group(1) == "FAIL" else "error")
            continue
        match = UNITTEST_LINE.match(line.strip())
        if match:
            word = "skipped" if match.group(3).startswith("skipped") else match.group(3)
            note(unittest_name(f"{match.group(1)} ({match.group(2)})"),
                 LOG_OUTCOMES.get(word, "skipped"))
    return found


def pytest_outcome(phases):
    """Combine the setup/call/teardown reports of one pytest test into one outcome.

    >>> pytest_outcome({"setup": ("passed", False), "call": ("passed", False),
    ...                 "teardown": ("failed", False)})
    'error'
    >>> pytest_outcome({"setup": ("skipped", True)}), pytest_outcome({"setup": ("passed", False)})
    ('xfailed', None)
    """
    setup, call, teardown = phases.get("setup"), phases.get("call"), phases.get("teardown")
    if setup and setup[0] == "failed":
        return "error"
    if setup and setup[0] == "skipped":
        return "xfailed" if setup[1] else "skipped"
    if call is None:
        return None
    if call[0] == "failed":
        outcome = "failed"
    elif call[0] == "skipped":
        outcome = "xfailed" if call[1] else "skipped"
    else:
        outcome = "xpassed" if call[1] else "passed"
    if teardown and teardown[0] == "failed" and outcome in ("passed", "xpassed"):
        return "error"
    return outcome


def signed_records(lines, secret):
    """The records of a results file that carry a valid HMAC under `secret`; count the others.

    >>> key = bytes(32)
    >>> good = json.dumps({"record": '{"kind": "start"}', "mac": hmac.new(
    ...     key, b'{"kind": "start"}', hashlib.sha256).hexdigest()})
    >>> signed_records([good, '{"kind": "test", "outcome": "passed"}', "junk"], key)
    ([{'kind': 'start'}], 2)
    """
    records, rejected = [], 0
    for line in lines:
        try:
            wrapper = json.loads(line)
            text, mac = wrapper["record"], wrapper["mac"]
            expected = hmac.new(secret, text.encode("utf-8"), hashlib.sha256).hexdigest()
            if not (isinstance(mac, str) and hmac.compare_digest(mac, expected)):
                raise ValueError("bad mac")
            record = json.loads(text)
            if not isinstance(record, dict):
                raise ValueError("not a record")
        except (ValueError, TypeError, KeyError, AttributeError):
            rejected += 1
            continue
        records.append(record)
    return records, rejected


def read_results(path, tree, secret):
    """Parse a results file: {test id: outcome}, collect errors, exit status, module places.

    Only records signed with this attempt's secret count. A failure reported for
    a test and phase stands (a failed subtest fails its test); otherwise the
    test's last report for that phase does.
    """
    phases, outcomes, collect_errors = {}, {}, []
    start, finish, rootdir = None, None, None
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        lines = []
    records, rejected = signed_records(lines, secret)
    for record in records:
        kind = record.get("kind")
        if kind == "start" and start is None:
            start = record
        elif kind == "rootdir" and rootdir is None:
            rootdir = record.get("path")
        elif kind == "collect_error":
            collect_errors.append(record.get("nodeid", ""))
        elif kind == "finish" and finish is None:
            finish = record
        elif kind == "test" and "when" in record:
            # Subtests report under their test's node id and phase before the
            # test itself: a failure anywhere stands, otherwise the last report.
            parts = phases.setdefault(record["nodeid"], {})
            if parts.get(record["when"], ("",))[0] != "failed":
                parts[record["when"]] = (record["outcome"], bool(record.get("xfail")))
        elif kind == "test":
            previous = outcomes.get(record["nodeid"])
            # A test reported twice (a subtest failed, then the test): the worse one stands.
            if previous is None or (record["outcome"] in ("failed", "error") and
                                    previous not in ("failed", "error")):
                outcomes[record["nodeid"]] = record["outcome"]
    prefix = ""
    if rootdir and tree:
        relative = os.path.relpath(os.path.realpath(rootdir), os.path.realpath(tree))
        if relative != "." and not relative.startswith(".."):
            prefix = relative.replace(os.sep, "/") + "/"
    for nodeid, parts in phases.items():
        outcome = pytest_outcome(parts)
        if outcome is not None:
            outcomes[prefix + nodeid] = outcome
    shadowed = sorted(set((start or {}).get("shadowed") or []) |
                      set((finish or {}).get("shadowed") or []))
    return {"started": start is not None, "outcomes": outcomes,
            "collect_errors": collect_errors, "rejected": rejected,
            "finished": finish is not None,
            "exit_status": finish.get("exitstatus") if finish else None,
            "modules": finish.get("modules") if finish else None,
            "shadowed": shadowed, "tampered": (finish or {}).get("tampered") or [],
            "plugins": (finish or {}).get("plugins") or []}


def tampering_plugins(plugins, tree, touched, own_modules):
    """The pytest plugins recorded with code in the tree that were not loaded the usual way.

    A module registered under its own name (-p, pytest_plugins, an entry point)
    is usual unless the run's diff touched its file; pytest's own plugins are
    usual when the tree is pytest itself. Anything else is the code under test
    registering hooks into pytest.

    >>> plugins = [{"name": "evil", "module": "pkg", "is_module": False,
    ...             "files": ["/t/pkg/__init__.py"]},
    ...            {"name": "pkg.plug", "module": "pkg.plug", "is_module": True,
    ...             "files": ["/t/pkg/plug.py"]}]
    >>> tampering_plugins(plugins, "/t", {"pkg/__init__.py"}, set())
    ['evil (pkg/__init__.py)']
    >>> tampering_plugins(plugins[1:], "/t", {"pkg/plug.py"}, set())
    ['pkg.plug (pkg/plug.py)']
    """
    root = os.path.realpath(tree) + os.sep
    flagged = []
    for plugin in plugins:
        if plugin.get("module", "").split(".")[0] in own_modules:
            continue
        relative = {os.path.realpath(f)[len(root):].replace(os.sep, "/") if
                    os.path.realpath(f).startswith(root) else f for f in plugin["files"]}
        usual = plugin.get("is_module") and plugin.get("name") == plugin.get("module")
        if not usual or relative & set(touched):
            flagged.append(f"{plugin['name']} ({', '.join(sorted(relative))})")
    return flagged


def top_level_modules(import_root):
    """Names of the packages and modules at the import root: the code that must come from the tree."""
    names = []
    for entry in sorted(os.listdir(import_root)):
        full = os.path.join(import_root, entry)
        if entry.endswith(".py") and entry[:-3].isidentifier() and entry not in (
                "setup.py", "conftest.py", "noxfile.py"):
            names.append(entry[:-3])
        elif entry.isidentifier() and os.path.isfile(os.path.join(full, "__init__.py")):
            names.append(entry)
    return names


def scrubbed_environment(folder, import_paths, python, extra, keep):
    """The test command's environment: no credentials, HOME and TMPDIR in the throwaway folder."""
    env = {}
    for name, value in os.environ.items():
        upper = name.upper()
        if name not in keep and (upper.startswith(DROPPED_PREFIXES) or upper in DROPPED_NAMES or
                                 upper.startswith(CREDENTIAL_PREFIXES) or
                                 any(word in upper for word in CREDENTIAL_WORDS) or
                                 CREDENTIAL_URL.search(value)):
            continue
        env[name] = value
    home, temp = os.path.join(folder, "home"), os.path.join(folder, "tmp")
    os.makedirs(home, exist_ok=True)
    os.makedirs(temp, exist_ok=True)
    bin_dir = os.path.dirname(os.path.abspath(python))
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", os.defpath)
    if os.path.isfile(os.path.join(os.path.dirname(bin_dir), "pyvenv.cfg")):
        env["VIRTUAL_ENV"] = os.path.dirname(bin_dir)
    env.update(HOME=home, TMPDIR=temp, TMP=temp, TEMP=temp, PYTHONDONTWRITEBYTECODE="1",
               PYTHONHASHSEED="0", PYTHONPATH=os.pathsep.join(import_paths))
    for name, value in extra.items():
        if name == "PYTHONPATH":
            env[name] = os.pathsep.join(import_paths[:-1] + [value, import_paths[-1]])
        else:
            env[name] = value
    return env


_LIVE_GROUPS = set()
_LIVE_LOCK = threading.Lock()
_STOPPING = threading.Event()     # set on Ctrl-C: no new test command starts


def kill_group(pid):
    """Kill a test command's whole process group, ignoring one that is already gone."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_live_groups():
    """On Ctrl-C: stop every test command still running, and start no other."""
    _STOPPING.set()
    with _LIVE_LOCK:
        for pid in list(_LIVE_GROUPS):
            kill_group(pid)


def run_command(argv, *, cwd, env, timeout, output_path):
    """Run a test command in its own session, stdin closed; return (status, timed out, seconds)."""
    start = time.monotonic()
    if _STOPPING.is_set():
        raise GradingError("interrupted")
    with open(output_path, "wb") as output:
        try:
            process = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                       stdout=output, stderr=subprocess.STDOUT,
                                       start_new_session=True)
        except OSError as exc:
            raise GradingError(f"cannot run {argv[0]} ({exc.strerror or exc})") from None
        with _LIVE_LOCK:
            _LIVE_GROUPS.add(process.pid)
        # A timer kills the group at the deadline; wait() itself blocks without polling.
        expired = threading.Event()

        def expire():
            expired.set()
            kill_group(process.pid)
        timer = threading.Timer(timeout, expire)
        timer.daemon = True
        timer.start()
        try:
            status = process.wait()
        finally:
            timer.cancel()
            # Children the tests left behind die with the group, whatever happened.
            kill_group(process.pid)
            if process.poll() is None:
                process.wait()
            with _LIVE_LOCK:
                _LIVE_GROUPS.discard(process.pid)
        timed_out = expired.is_set()
    return status, timed_out, time.monotonic() - start


def expand_command(template, values):
    """Split a --test-cmd template into arguments; {files} and {tests} expand to several.

    >>> expand_command("{python} -m pytest -x {files}", {"python": "py", "files": ["a b.py", "c.py"]})
    ['py', '-m', 'pytest', '-x', 'a b.py', 'c.py']
    """
    argv = []
    for word in shlex.split(template):
        if word in ("{files}", "{tests}", "{modules}", "{plugin}"):
            argv.extend(values.get(word[1:-1], []))
        else:
            argv.append(word.replace("{python}", values["python"])
                        .replace("{runner}", values.get("runner", "")))
    return argv


def test_command(runner, template, python, files, test_ids, modules, grader_dir):
    """The argument list that runs the listed tests with the chosen runner."""
    if runner in PROJECT_RUNNERS:
        return project_command(runner, template, python, files, grader_dir)
    plugin = ["-p", PLUGIN_MODULE]
    values = {"python": python, "files": files, "tests": list(test_ids), "modules": modules,
              "plugin": plugin if runner == "pytest" else []}
    if runner == "unittest":
        runner_path = os.path.join(grader_dir, UNITTEST_MODULE + ".py")
        if template:
            return expand_command(template, dict(values, runner=runner_path))
        return [python, runner_path, *modules]
    if runner == "pytest":
        if not template:
            return [python, "-m", "pytest", *plugin, "-p", "no:cacheprovider", "-rA",
                    "--tb=short", *files]
        argv = expand_command(template, values)
        if PLUGIN_MODULE not in argv:
            at = next((i for i, word in enumerate(argv)
                       if word in ("pytest", "py.test") or word.endswith(("/pytest", "/py.test"))),
                      None)
            if at is None:
                raise GradingError("--test-cmd for the pytest runner must run pytest "
                                   "(or hold {plugin})")
            argv[at + 1:at + 1] = plugin
        return argv
    if template:
        return expand_command(template, values)
    if any("::" in t for t in test_ids):
        return expand_command("{python} -m pytest -rA --tb=short -p no:cacheprovider {files}",
                              values)
    return expand_command("{python} -m unittest -v {modules}", values)


# === Django and SymPy runners ===
# Django and SymPy run their tests through their own runners, which live in the
# tree: Django's tests/runtests.py sets up databases and settings, and SymPy's
# bin/test has its own reporter. The recorders below run those runners in
# process, hook their result (Django) or reporter (SymPy), and write signed
# records like the pytest and unittest recorders. Listed ids are spelled as
# SWE-bench's log parsers spell them, and are mapped to the tests they name by
# reading the test files after the test patch, before anything runs.
DJANGO_MODULE = "regrade_django_runner"
SYMPY_MODULE = "regrade_sympy_runner"
PROJECT_RUNNERS = ("django", "sympy")
# SWE-bench's repository names, and v5's log_parser names, mapped to a runner here.
REPO_RUNNERS = {"django/django": "django", "sympy/sympy": "sympy"}
PYTEST_LOG_PARSERS = ("pytest", "pytest_options", "pytest_v2", "seaborn", "matplotlib",
                      "astroid", "flask", "marshmallow", "pvlib", "pyvista", "sqlfluff", "xarray",
                      "pydicom", "requests", "pylint", "astropy", "scikit", "sphinx")
LOG_PARSER_RUNNERS = dict({f"parse_log_{name}": "pytest" for name in PYTEST_LOG_PARSERS},
                          parse_log_django="django", parse_log_sympy="sympy")
EVAL_TYPES = ("pass_and_fail", "fail_only")
# SWE-bench drops these from the test patch's paths before making test labels.
NON_TEST_SUFFIXES = (".json", ".png", "csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl", ".yml",
                     ".yaml", ".toml")
OUTCOME_RANK = {"error": 4, "failed": 4, "xpassed": 3, "skipped": 2, "xfailed": 2, "passed": 1}

PROJECT_COMMON = r'''
import traceback
import unittest


def _runner_parts():
    """Every method of the unittest classes that decide an outcome, by identity."""
    found = {}
    for owner in (unittest.TestCase, unittest.TestResult, unittest.TextTestResult,
                  unittest.TestSuite, unittest.TestLoader, unittest.TextTestRunner):
        for name, value in vars(owner).items():
            if callable(value) or isinstance(value, (classmethod, staticmethod, property)):
                found[f"{owner.__name__}.{name}"] = value
    found["_write"] = _write
    return found


def _run(name, body):
    """Run the project's runner; a crash before or between tests is recorded as a failure."""
    _write({"kind": "start", "runner": name, "shadowed": _shadowed()})
    before = _runner_parts()
    try:
        status = body()
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException as exc:
        traceback.print_exc()
        _write({"kind": "collect_error", "nodeid": name, "error": repr(exc)[:500]})
        status = 1
    after = _runner_parts()
    changed = sorted(k for k in set(before) | set(after) if before.get(k) is not after.get(k))
    _write({"kind": "finish", "exitstatus": int(status), "modules": _locations(),
            "shadowed": _shadowed(), "tampered": changed[:20]})
    return int(status)
'''

DJANGO_RUNNER = '"""Written by regrade.py: runs Django\'s tests/runtests.py, records outcomes."""' + \
    RECORDER_COMMON + PROJECT_COMMON + r'''
import runpy


class _Recording:
    """Mixed into whatever result class Django's runner asks for."""

    def _record(self, test, outcome):
        try:
            doc = test.shortDescription()
        except Exception:
            doc = None
        _write({"kind": "test", "nodeid": test.id(), "outcome": outcome, "doc": doc})

    def addSuccess(self, test):
        super().addSuccess(test)
        self._record(test, "passed")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._record(test, "failed")

    def addError(self, test, err):
        super().addError(test, err)
        self._record(test, "error")

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._record(test, "skipped")

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._record(test, "xfailed")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._record(test, "xpassed")

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self._record(test, "failed")


class _RecordingRunner(unittest.TextTestRunner):
    def _makeResult(self):
        if not issubclass(self.resultclass, _Recording):
            self.resultclass = type("RecordingResult", (_Recording, self.resultclass), {})
        return super()._makeResult()


def _django(argv):
    """argv: tests/runtests.py and its arguments, run as `python tests/runtests.py ...` would."""
    runtests = os.path.abspath(argv[0])
    sys.argv = [runtests] + argv[1:]
    sys.path.insert(0, os.path.dirname(runtests))
    from django.test import runner as django_runner
    django_runner.DiscoverRunner.test_runner = _RecordingRunner
    runpy.run_path(runtests, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(_run("django", lambda: _django(sys.argv[1:])))
'''

SYMPY_RUNNER = '"""Written by regrade.py: runs SymPy\'s own test runner, records outcomes."""' + \
    RECORDER_COMMON + PROJECT_COMMON + r'''
import warnings

_STATE = {"file": None, "test": None}
_OUTCOMES = {"test_pass": "passed", "test_fail": "failed", "test_exception": "error",
             "test_skip": "skipped", "test_xfail": "xfailed", "test_xpass": "xpassed"}


def _relative(path):
    tree = os.path.realpath(_CONFIG.get("tree") or ".")
    return os.path.relpath(os.path.realpath(str(path)), tree).replace(os.sep, "/")


def _hook(runtests):
    """Record each outcome SymPy's reporter is told about, then let it print as usual."""
    def wrap(owner, name):
        original = getattr(owner, name)

        def method(self, *args, **kwargs):
            if name in ("test_file", "entering_filename"):
                _STATE.update(file=_relative(args[0]), test=None)
            elif name == "entering_test":
                _STATE["test"] = getattr(args[0], "__name__", str(args[0]))
            elif name == "import_error":
                _write({"kind": "collect_error", "nodeid": _relative(args[0])})
            elif _STATE["test"] is None:
                # Reported outside any test: the file itself failed to load.
                _write({"kind": "collect_error", "nodeid": str(_STATE["file"])})
            else:
                _write({"kind": "test", "outcome": _OUTCOMES[name],
                        "nodeid": f"{_STATE['file']}::{_STATE['test']}",
                        "reason": str(args[0])[:200] if name == "test_skip" and args else None})
            return original(self, *args, **kwargs)
        setattr(owner, name, method)
    # A file's own code failing as it loads is reported before the file is entered.
    wrap(runtests.SymPyTests, "test_file")
    for name in ("entering_filename", "entering_test", "import_error", *_OUTCOMES):
        wrap(runtests.PyTestReporter, name)


def _sympy(files):
    """Run the files as `bin/test -C --verbose --use-sympy-runner FILES` does, in process."""
    os.environ["SYMPY_USE_CACHE"] = "no"
    for category in (UserWarning, SyntaxWarning):
        warnings.filterwarnings("ignore", category=category)
    try:
        from sympy.testing import runtests
    except ImportError:
        from sympy.utilities import runtests
    _hook(runtests)
    return 1 if runtests._test(*files, verbose=True) else 0


if __name__ == "__main__":
    sys.exit(_run("sympy", lambda: _sympy(sys.argv[1:])))
'''


def project_runner(tree):
    """The project runner a tree's layout calls for, or None.

    Django: tests/runtests.py with django/ beside it; SymPy: bin/test with sympy/.
    """
    if os.path.isfile(os.path.join(tree, "tests", "runtests.py")) and \
            os.path.isdir(os.path.join(tree, "django")):
        return "django"
    if os.path.isfile(os.path.join(tree, "bin", "test")) and \
            os.path.isdir(os.path.join(tree, "sympy")):
        return "sympy"
    return None


def pick_runner(instance, settings, listed, tree):
    """The runner for one run: the instance's, --runner, the repository's, the tree's, the ids'.

    An instance whose log_parser has no runner here is a grading error.
    """
    if instance.get("no_runner"):
        raise GradingError(instance["no_runner"])
    chosen = instance.get("test_runner") or settings["runner"]
    if chosen != "auto":
        return chosen
    return REPO_RUNNERS.get(instance.get("repo")) or project_runner(tree) or \
        choose_runner("auto", listed)


def runner_from_fields(record, where):
    """(test_runner, no-runner reason) from an instance's test_runner and v5 log_parser fields.

    >>> runner_from_fields({"log_parser": "parse_log_django"}, "i.jsonl line 1")
    ('django', None)
    >>> runner_from_fields({"log_parser": "parse_log_gotest"}, "x")[1]
    "log_parser 'parse_log_gotest': regrade.py has no runner for this repository's tests"
    """
    runner = record.get("test_runner") or None
    if runner is not None and runner not in RUNNERS:
        raise InputError(f"{where}, field 'test_runner': expected one of "
                         f"{', '.join(RUNNERS)}, got {runner!r}")
    parser = record.get("log_parser") or None
    if parser is None or runner is not None:
        return runner, None
    if parser in LOG_PARSER_RUNNERS:
        return LOG_PARSER_RUNNERS[parser], None
    return None, (f"log_parser {parser!r}: regrade.py has no runner for this repository's "
                  f"tests")


def v5_fields(record, where):
    """Notes on SWE-bench v5's container fields: image and eval_script are never used.

    >>> v5_fields({"image": "x", "eval_script": "pytest", "eval_type": "pass_and_fail"}, "w")
    ['eval_script and image were not used: they are for the harness container; eval_script never runs on this host']
    """
    eval_type = record.get("eval_type") or "pass_and_fail"
    if eval_type not in EVAL_TYPES:
        raise InputError(f"{where}, field 'eval_type': expected one of {', '.join(EVAL_TYPES)}, "
                         f"got {eval_type!r}")
    notes = []
    unused = [f for f in ("eval_script", "image") if record.get(f)]
    if unused:
        notes.append(f"{' and '.join(unused)} {'were' if len(unused) > 1 else 'was'} not used: "
                     f"they are for the harness container; eval_script never runs on this host")
    if eval_type == "fail_only":
        notes.append("eval_type fail_only was not applied: every listed test must pass")
    return notes


def django_label(path):
    """SWE-bench's Django test label for a test patch path, or None for a non-Python file.

    >>> django_label("tests/migrations/test_operations.py"), django_label("tests/x/data.json")
    ('migrations.test_operations', None)
    """
    if not path.endswith(".py") or path.endswith(NON_TEST_SUFFIXES):
        return None
    path = path[:-3]
    return (path[len("tests/"):] if path.startswith("tests/") else path).replace("/", ".")


def docstring_line(node):
    """The first line of a function's docstring, as unittest's shortDescription gives it."""
    doc = ast.get_docstring(node, clean=False)
    return doc.strip().split("\n")[0].strip() if doc and doc.strip() else None


def django_docstring_tests(text, module):
    """{first docstring line: [module.Class.method, ...]} of a test file's test methods.

    >>> django_docstring_tests("class T:\\n    def test_a(self):\\n        '''Say A.\\n\\n"
    ...                        "        more'''\\n    def test_b(self):\\n        pass\\n", "m")
    {'Say A.': ['m.T.test_a']}
    """
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    found = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    item.name.startswith("test"):
                line = docstring_line(item)
                if line:
                    found.setdefault(line, []).append(f"{module}.{node.name}.{item.name}")
    return found


def django_plan(listed, tree, patch_paths):
    """Map Django ids to dotted tests, pick labels; return (plan, grading error or None).

    Ids are `test_x (module.Class)`, `test_x (module.Class.test_x)` (Python 3.11+),
    dotted `module.Class.test_x`, or a docstring's first line (what Django's
    verbose runner prints for a test that has one). A docstring id is looked up
    in the test patch's files, then in every test file; one that matches two
    tests, or none, is the instance's mistake.
    """
    tests_dir = os.path.join(tree, "tests")
    labels = []
    for path in patch_paths:
        label = django_label(path)
        if label and os.path.isfile(os.path.join(tree, path)) and label not in labels:
            labels.append(label)
    mapping, docstrings, unfound, extra_labels = {}, [], [], []
    for test_id in listed:
        text = test_id.strip()
        if re.fullmatch(r"\w+ \([\w.]+\)", text) or re.fullmatch(r"[\w]+(\.[\w]+){2,}", text):
            dotted = unittest_name(text)
            module = dotted.rsplit(".", 2)[0]       # module.Class.method
            if not os.path.isfile(os.path.join(tests_dir, *module.split(".")) + ".py") and \
                    not os.path.isfile(os.path.join(tests_dir, *module.split("."), "__init__.py")):
                unfound.append(test_id)
            mapping[test_id] = {"dotted": dotted, "module": module}
        else:
            docstrings.append(test_id)
    if docstrings:
        found = django_docstrings(docstrings, tests_dir, labels)
        for test_id in docstrings:
            places = found.get(test_id.strip(), [])
            if not places:
                unfound.append(test_id)
                continue
            # Several tests may share a docstring: each one that runs counts (see project_lookup).
            for place in places:
                module = place.rsplit(".", 2)[0]
                mapping.setdefault(test_id, {"dotted": place, "module": module,
                                             "doc": test_id.strip(), "places": []})
                mapping[test_id]["places"].append(place)
                if module not in labels and module not in extra_labels:
                    extra_labels.append(module)
    if unfound:
        return None, (f"{len(unfound)} listed test(s) name no test in the tree after the test "
                      f"patch (as test_x (module.Class) or a test's docstring), e.g. "
                      f"{unfound[0]!r}: check the instance's FAIL_TO_PASS / PASS_TO_PASS ids")
    for entry in mapping.values():
        if entry["module"] not in labels + extra_labels:
            extra_labels.append(entry["module"])
    return {"runner": "django", "files": labels + extra_labels, "mapping": mapping}, None


def django_docstrings(wanted, tests_dir, labels):
    """{docstring line: [dotted tests]} for the wanted lines: label files first, then all tests."""
    wanted = {w.strip() for w in wanted}
    found = {}

    def scan(paths):
        for path in paths:
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    text = handle.read()
            except OSError:
                continue
            if not any(w in text for w in wanted):
                continue
            module = os.path.relpath(path, tests_dir)[:-3].replace(os.sep, ".")
            for line, tests in django_docstring_tests(text, module).items():
                if line in wanted:
                    found.setdefault(line, []).extend(t for t in tests
                                                      if t not in found.get(line, []))
    scan([os.path.join(tests_dir, *label.split(".")) + ".py" for label in labels])
    if wanted - set(found):
        scan(sorted(os.path.join(folder, name) for folder, _, names in os.walk(tests_dir)
                    for name in names if name.endswith(".py")))
    return found


def sympy_plan(listed, tree, patch_paths):
    """Map SymPy ids to `file::name`, pick the files to run; return (plan, grading error or None).

    An id is a bare test function name (SWE-bench's spelling), looked up in the
    test patch's test files, then in files the listed ids name
    (`path.py::test_x` or `path.py:test_x`). Found nowhere, or in two files, is
    the instance's mistake.
    """
    patch_files = [p for p in patch_paths if p.endswith(".py") and is_test_path(p) and
                   os.path.isfile(os.path.join(tree, p))]
    named = []
    for test_id in listed:
        match = re.fullmatch(r"(.+\.py)::?(\w+)", test_id.strip())
        if match and match.group(1) not in named:
            named.append(match.group(1))
    defined = {}
    for path in patch_files + [p for p in named if p not in patch_files]:
        try:
            with open(os.path.join(tree, path), encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError:
            continue
        for name in re.findall(r"^(?:async\s+)?def\s+(test\w*)\s*\(", text, re.M):
            defined.setdefault(name, [])
            if path not in defined[name]:
                defined[name].append(path)
    mapping, unfound = {}, []
    for test_id in listed:
        match = re.fullmatch(r"(.+\.py)::?(\w+)", test_id.strip())
        if match:
            places = [match.group(1)] if match.group(1) in defined.get(match.group(2), []) else []
            name = match.group(2)
        else:
            name = test_id.strip()
            within = [p for p in defined.get(name, []) if p in patch_files]
            places = within or defined.get(name, [])
        if not places:
            unfound.append(test_id)
            continue
        # A name defined in several files stands for each of them (see project_lookup).
        mapping[test_id] = {"dotted": f"{places[0]}::{name}",
                            "places": [f"{place}::{name}" for place in places]}
    if unfound:
        return None, (f"{len(unfound)} listed test(s) are defined in none of the test patch's "
                      f"files nor the files the ids name, e.g. {unfound[0]!r}: check the "
                      f"instance's FAIL_TO_PASS / PASS_TO_PASS ids")
    files = sorted(set(patch_files) | {p.split("::")[0] for m in mapping.values()
                                       for p in m["places"]})
    return {"runner": "sympy", "files": files, "mapping": mapping}, None


def project_plan(runner, listed, tree, patch_paths):
    """The id mapping and files or labels for a Django or SymPy run.

    A tree without the project's runner is a grading error (say --runner django
    on another project), never the agent's failure.
    """
    needs = {"django": ["tests/runtests.py"],
             "sympy": ["sympy/testing/runtests.py", "sympy/utilities/runtests.py"]}[runner]
    if not any(os.path.isfile(os.path.join(tree, path)) for path in needs):
        return None, (f"the {runner} runner needs {' or '.join(needs)} in the tree, and this "
                      f"tree has none: is this repository {runner}'s?")
    if runner == "django":
        return django_plan(listed, tree, patch_paths)
    return sympy_plan(listed, tree, patch_paths)


def project_command(runner, template, python, files, grader_dir):
    """The argument list that runs a Django or SymPy run's tests under its recorder."""
    if template:
        raise GradingError(f"the {runner} runner builds its own test command; drop test_cmd "
                           f"(or --test-cmd), or use --runner log")
    if runner == "django":
        # SWE-bench's command: ./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1
        return [python, os.path.join(grader_dir, DJANGO_MODULE + ".py"), "tests/runtests.py",
                "--verbosity", "2", "--settings=test_sqlite", "--parallel", "1", *files]
    # SWE-bench's command: bin/test -C --verbose FILES, on SymPy's own runner.
    return [python, os.path.join(grader_dir, SYMPY_MODULE + ".py"), *files]


def test_descriptions(path, secret):
    """{recorded test id: its docstring line} from a Django results file."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        lines = []
    records, _ = signed_records(lines, secret)
    return {r["nodeid"]: r.get("doc") for r in records
            if r.get("kind") == "test" and isinstance(r.get("nodeid"), str)}


def outcome_group(outcome):
    """passed, failing, skipping or None: the classes a verdict tells apart."""
    if outcome is None or outcome in PASSING:
        return outcome
    return "failing" if outcome in FAILING else "skipping"


def project_lookup(plan, outcomes, descriptions, test_id):
    """A listed id's outcome, and a conflict message or None.

    An id stands for every test it names: a Django docstring for each test
    recorded with it (two methods can share one; an inherited test runs under
    each subclass), a SymPy bare name for its function in each file that
    defines it. When they agree, their worst outcome counts; when one passes
    and another does not, the instance's id is ambiguous (SWE-bench's log key
    keeps whichever ran last) and that is a grading error naming both.

    >>> plan = {"mapping": {"Say A.": {"dotted": "m.T.test_a", "doc": "Say A."}}}
    >>> project_lookup(plan, {"m.U.test_a": "xpassed", "m.T.test_a": "failed"},
    ...                {"m.U.test_a": "Say A.", "m.T.test_a": "Say A."}, "Say A.")
    ('failed', None)
    >>> project_lookup(plan, {"m.U.test_b": "passed", "m.T.test_a": "failed"},
    ...                {"m.U.test_b": "Say A.", "m.T.test_a": "Say A."}, "Say A.")[1]
    "listed test 'Say A.' is the docstring of tests that disagree: m.T.test_a failed, m.U.test_b passed"
    """
    entry = plan["mapping"].get(test_id)
    if entry is None:
        return None, None
    if entry.get("doc"):
        seen = sorted((name, outcomes[name]) for name, doc in descriptions.items()
                      if doc == entry["doc"] and name in outcomes)
    else:
        seen = [(name, outcomes[name]) for name in entry.get("places") or [entry["dotted"]]
                if name in outcomes]
    if not seen:
        return None, None
    if len({outcome_group(o) for _, o in seen}) > 1:
        clash = [next(p for p in seen if outcome_group(p[1]) == group)
                 for group in sorted({outcome_group(o) for _, o in seen})][:2]
        return None, (f"listed test {test_id!r} is the docstring of tests that disagree: "
                      + ", ".join(f"{name} {outcome}" for name, outcome in sorted(clash)))
    return max((o for _, o in seen), key=lambda o: OUTCOME_RANK.get(o, 0)), None


# === Grading ===
PASSING = ("passed",)
FAILING = ("failed", "error", "xpassed")
SKIPPING = ("skipped", "xfailed")


def classify(outcomes, passing=PASSING):
    """One listed test's group from its outcome in each repeat (None: it did not run).

    An unexpected pass (xpassed) is not a pass, as in SWE-bench; `passing` adds
    xfailed for PASS_TO_PASS tests, which SWE-bench counts as passing.

    >>> classify(["passed", "passed"]), classify(["passed", "failed"]), classify([None])
    ('passed', 'failed', 'missing')
    >>> classify(["xfailed"]), classify(["passed", None]), classify(["xpassed"])
    ('skipped', 'missing', 'failed')
    >>> classify(["xfailed", "passed"], passing=PASSING + ("xfailed",))
    'passed'
    """
    if outcomes and all(o in passing for o in outcomes):
        return "passed"
    if any(o in FAILING for o in outcomes):
        return "failed"
    if any(o in SKIPPING for o in outcomes):
        return "skipped"
    return "missing"


def rate(success, failure):
    """SWE-bench's share of successes; an empty list counts as all passed."""
    total = len(success) + len(failure)
    return 1.0 if total == 0 else len(success) / total


def decide(fail_to_pass, pass_to_pass, observed, *, p2p_skip_ok=False):
    """The verdict from each listed test's outcomes: groups, flaky tests, completed, resolution.

    `observed` maps a listed id to its outcome in each repeat (None where it did
    not run). A FAIL_TO_PASS test passes only by passing; a PASS_TO_PASS test
    passes by passing or by an expected failure (xfailed), as in SWE-bench; a
    skipped PASS_TO_PASS test fails the run unless p2p_skip_ok; an unexpected
    pass (xpassed) is a failure in both lists.

    >>> v = decide(["a", "b"], ["c"], {"a": ["passed"], "b": ["skipped"], "c": ["passed"]})
    >>> v["completed"], v["resolution"], v["fail_to_pass"]["skipped"]
    (False, 'PARTIAL', ['b'])
    >>> decide(["a"], ["c"], {"a": ["passed"], "c": ["skipped"]}, p2p_skip_ok=True)["completed"]
    True
    >>> decide(["a"], [], {})["fail_to_pass"]["missing"]
    ['a']
    >>> v = decide(["a"], ["c"], {"a": ["xfailed"], "c": ["xfailed"]})
    >>> v["fail_to_pass"]["skipped"], v["pass_to_pass"]["passed"]
    (['a'], ['c'])
    """
    groups, flaky = {}, []
    for name, listed, passing in (("fail_to_pass", fail_to_pass, PASSING),
                                  ("pass_to_pass", pass_to_pass, PASSING + ("xfailed",))):
        group = {"passed": [], "failed": [], "skipped": [], "missing": []}
        for test_id in listed:
            outcomes = observed.get(test_id) or [None]
            group[classify(outcomes, passing)].append(test_id)
            if len(set(outcomes)) > 1:
                flaky.append(test_id)
        groups[name] = group
    f2p, p2p = groups["fail_to_pass"], groups["pass_to_pass"]
    f2p_success = f2p["passed"]
    f2p_failure = f2p["failed"] + f2p["skipped"] + f2p["missing"]
    p2p_success = p2p["passed"] + (p2p["skipped"] if p2p_skip_ok else [])
    p2p_failure = p2p["failed"] + p2p["missing"] + ([] if p2p_skip_ok else p2p["skipped"])
    f2p_rate, p2p_rate = rate(f2p_success, f2p_failure), rate(p2p_success, p2p_failure)
    if f2p_rate == 1 and p2p_rate == 1:
        resolution = "FULL"
    elif 0 < f2p_rate < 1 and p2p_rate == 1:
        resolution = "PARTIAL"
    else:
        resolution = "NO"
    return {"fail_to_pass": f2p, "pass_to_pass": p2p, "flaky": sorted(set(flaky)),
            "completed": not f2p_failure and not p2p_failure, "resolution": resolution,
            "tests_status": {"FAIL_TO_PASS": {"success": f2p_success, "failure": f2p_failure},
                             "PASS_TO_PASS": {"success": p2p_success, "failure": p2p_failure},
                             "FAIL_TO_FAIL": {"success": [], "failure": []},
                             "PASS_TO_FAIL": {"success": [], "failure": []}}}


def canonical_id(test_id):
    r"""A test id with each non-ASCII character escaped the way pytest escapes parametrised ids.

    Listed and recorded ids both go through it, so 'test_ids[café]' and pytest's
    own 'test_ids[caf\xe9]' match; ASCII (backslashes included) is left alone.

    >>> canonical_id("t.py::test_ids[caf\u00e9]"), canonical_id("t.py::test_ids[caf\\xe9]")
    ('t.py::test_ids[caf\\xe9]', 't.py::test_ids[caf\\xe9]')
    """
    return "".join(c if ord(c) < 128 else c.encode("unicode_escape").decode("ascii")
                   for c in test_id)


def canonical_outcomes(outcomes):
    """Recorded outcomes keyed by canonical id (the first spelling of an id stands)."""
    found = {}
    for test_id, outcome in outcomes.items():
        found.setdefault(canonical_id(test_id), outcome)
    return found


def lookup(outcomes, test_id, runner):
    """A listed id's outcome from canonical outcomes: exact match first, then its unittest spelling."""
    test_id = canonical_id(test_id)
    if test_id in outcomes:
        return outcomes[test_id]
    if runner in ("unittest", "log"):
        return outcomes.get(unittest_name(test_id))
    return None


def choose_runner(runner, test_ids):
    """--runner auto: pytest when any listed id looks like a pytest node id.

    >>> choose_runner("auto", ["t.py::test_a"]), choose_runner("auto", ["m.C.test_a"])
    ('pytest', 'unittest')
    """
    if runner != "auto":
        return runner
    return "pytest" if any("::" in t for t in test_ids) else "unittest"


def outside_tree(modules, tree):
    """Where the repository's own modules were imported from outside the tree, as 'name: path'."""
    root = os.path.realpath(tree) + os.sep
    wrong = []
    for name, places in sorted((modules or {}).items()):
        for place in places:
            if not os.path.realpath(place).startswith(root):
                wrong.append(f"{name}: {place}")
    return wrong


def empty_verdict(run, instance, settings):
    """The verdict fields known before grading starts."""
    return {
        "run_id": run["run_id"], "instance_id": run["instance_id"], "repo": instance["repo"],
        "model": run.get("model"), "base_commit": run["base_commit"],
        "completed": False, "status": "error", "resolution": "NO", "reason": "",
        "fail_to_pass": {"passed": [], "failed": [], "skipped": [], "missing": []},
        "pass_to_pass": {"passed": [], "failed": [], "skipped": [], "missing": []},
        "flaky": [], "applied_with": None, "touched_tests": [], "removed_shadowing": [],
        "runner": None, "results_from": None, "exit_status": [],
        "code_under_test": "not checked",
        "patch_is_none": run["diff"] is None, "diff_empty": not normalise_diff(run["diff"]),
        "duration_s": 0.0, "test_s": 0.0,
        "diff_sha256": sha256_text(normalise_diff(run["diff"])),
        "test_patch_sha256": sha256_text(normalise_diff(instance["test_patch"])),
        "grader_version": settings["grader_version"], "key": run["key"], "notes": [],
        "tests_status": None,
    }


def error_verdict(run, settings, reason):
    """The verdict of a run that cannot be graded at all (unknown instance, missing base commit)."""
    instance = {"repo": "", "test_patch": ""}
    verdict = empty_verdict(dict(run, base_commit=run.get("base_commit") or ""), instance,
                            settings)
    verdict.update(status="error", completed=None, resolution="NO", reason=reason)
    return verdict


def grade_run(run, instance, source, settings):
    """Grade one run from its diff; return its verdict (a plain dict) and its log text."""
    started = time.monotonic()
    verdict = empty_verdict(run, instance, settings)
    log = [f"run {run['run_id']} of {run['instance_id']} at {run['base_commit']}\n"]
    folder = tempfile.mkdtemp(prefix="regrade-")
    # The grader's own folder (recorders, their settings, results) lives apart
    # from the work tree, under a name the code under test cannot derive from it.
    grader_dir = tempfile.mkdtemp(prefix="g-", dir=settings.get("scratch"))
    try:
        grade_in_folder(run, instance, source, settings, folder, grader_dir, verdict, log)
    except GradingError as exc:
        verdict.update(status="error", completed=None, reason=str(exc))
        log.append(f"grading error: {exc}\n")
    except OSError as exc:
        verdict.update(status="error", completed=None, reason=f"{exc.strerror or exc}")
        log.append(f"grading error: {exc}\n")
    finally:
        shutil.rmtree(grader_dir, ignore_errors=True)
        if settings["keep_trees"]:
            verdict["notes"].append(f"kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
        verdict["duration_s"] = round(time.monotonic() - started, 3)
    if verdict["status"] in GRADING_ERRORS:
        verdict.update(completed=None, resolution="NO")
    return verdict, "".join(log)


def import_names(folder):
    """Top-level import names in a folder: packages, modules and extension files."""
    if not os.path.isdir(folder):
        return set()
    return {entry.split(".")[0] if os.path.isfile(os.path.join(folder, entry)) else entry
            for entry in os.listdir(folder)}


def remove_shadowing(tree, paths):
    """Delete added files that shadow the grader's modules, and the folders they leave empty."""
    reset_paths(tree, paths)
    root = os.path.realpath(tree)
    for path in paths:
        parent = os.path.dirname(os.path.join(root, path))
        while parent.startswith(root + os.sep) and os.path.isdir(parent) and \
                not os.listdir(parent):
            os.rmdir(parent)
            parent = os.path.dirname(parent)


def grade_in_folder(run, instance, source, settings, folder, grader_dir, verdict, log):
    """Steps 1-8 of the procedure for one run, filling `verdict` as they go."""
    tree = make_tree(source, run["base_commit"], folder)
    log.append(f"checked out {run['base_commit']}\n")
    base_names = {"": import_names(tree), "src/": import_names(os.path.join(tree, "src"))}
    # The tree's own copies of pytest and friends (grading pytest itself) are code under test.
    own_tools = {n for n in GUARDED_MODULES + TEST_TOOL_MODULES
                 if any(n in names for names in base_names.values())}
    diff = normalise_diff(run["diff"])
    if diff:
        patch_file = os.path.join(folder, "run.diff")
        with open(patch_file, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(diff)
        method, text = apply_diff(tree, patch_file, settings["fuzz"])
        log.append(text)
        if method is None:
            last = [l for l in text.strip().splitlines() if l and not l.startswith(("$", "exit"))]
            verdict.update(status="patch_failed", completed=False,
                           reason="the diff does not apply: " + (last[-1] if last else "")[:300])
            return
        verdict["applied_with"] = method
    else:
        verdict["applied_with"] = "empty"
    log.append(f"applied with: {verdict['applied_with']}\n")

    # Step 3: the run's own test files and the test patch's files go back to base,
    # and files it added that would replace the grader's own modules are removed.
    test_patch = normalise_diff(instance["test_patch"])
    patch_paths = diff_paths(test_patch)
    run_paths = diff_paths(diff)
    run_tests = [p for p in run_paths if is_test_path(p, settings["test_patterns"])]
    roots = [""] + (["src/"] if os.path.isdir(os.path.join(tree, "src")) else [])
    shadowing = shadowing_paths(run_paths, roots, base_names)
    verdict["removed_shadowing"] = shadowing
    verdict["touched_tests"] = sorted(set(run_tests) | (set(run_paths) & set(patch_paths)) |
                                      set(shadowing))
    reset_paths(tree, sorted(set(patch_paths) | set(run_tests)))
    if shadowing:
        remove_shadowing(tree, shadowing)
        log.append("removed (they would shadow the grader's modules): " +
                   ", ".join(shadowing) + "\n")
    if verdict["touched_tests"]:
        log.append("reset to base: " + ", ".join(verdict["touched_tests"]) + "\n")

    # Step 4: the maintainers' test patch.
    if test_patch:
        test_patch_file = os.path.join(folder, "test.diff")
        with open(test_patch_file, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(test_patch)
        status, output = git(["-C", tree, "apply", "--whitespace=nowarn", test_patch_file],
                             check=False)
        log.append(f"$ git apply test.diff\n{output}exit {status}\n")
        if status != 0:
            verdict.update(status="test_patch_failed", completed=None,
                           reason="the test patch does not apply: " + output.strip()[-300:])
            return

    # Steps 5-7: run the listed tests with the tree's code first on the path.
    f2p, p2p = instance["FAIL_TO_PASS"], instance["PASS_TO_PASS"]
    listed = f2p + p2p
    runner = pick_runner(instance, settings, listed, tree)
    verdict["runner"] = runner
    verdict["notes"].extend(instance.get("notes") or [])
    template = instance.get("test_cmd") or settings["test_cmd"]
    import_root = os.path.join(tree, "src") if os.path.isdir(os.path.join(tree, "src")) else tree
    for name, text in ((PLUGIN_MODULE, PYTEST_PLUGIN), (UNITTEST_MODULE, UNITTEST_RUNNER),
                       (DJANGO_MODULE, DJANGO_RUNNER), (SYMPY_MODULE, SYMPY_RUNNER)):
        with open(os.path.join(grader_dir, name + ".py"), "w", encoding="utf-8") as handle:
            handle.write(text)
    import_paths = [import_root] + ([tree] if import_root != tree else []) + [grader_dir]
    env_extra = dict(settings["env"])
    env_extra.update(instance.get("test_env") or {})
    env = scrubbed_environment(folder, import_paths, settings["python"], env_extra,
                               settings["keep_env"])
    files = test_files(listed, patch_paths)
    dotted = [unittest_name(t) for t in listed]
    modules = sorted({unittest_module(d, [import_root, tree]) for d in dotted})
    unfound = [] if template else unfound_tests(listed, dotted, tree, [import_root, tree])
    plan, conflicts = None, []
    if runner in PROJECT_RUNNERS:
        plan, problem = project_plan(runner, listed, tree, patch_paths)
        if problem:
            verdict.update(status="error", completed=None, reason=problem)
            return
        files, unfound = plan["files"], []
    if unfound:
        # A listed id naming no file or module at all is the instance's mistake,
        # not the run's: grade it as an error, never as the agent's failure.
        verdict.update(status="error", completed=None,
                       reason=f"{len(unfound)} listed test(s) name no file or module in the "
                              f"tree after the test patch, e.g. {unfound[0]!r}: check the "
                              f"instance's FAIL_TO_PASS / PASS_TO_PASS ids")
        return
    argv = test_command(runner, template, settings["python"], files, listed, modules, grader_dir)
    top_modules = top_level_modules(import_root)
    observed, failures_recorded, exit_statuses, places = {}, False, [], {}
    shadowed, tampered, unfinished = set(), set(), False
    structured = runner in ("pytest", "unittest") + PROJECT_RUNNERS
    verdict["results_from"] = {"pytest": "pytest plugin", "unittest": "unittest runner",
                               "django": "django runner", "sympy": "sympy runner",
                               "log": "log"}[runner]
    if not structured:
        verdict["notes"].append("results read from the test log, not from a structured record")
    for attempt in range(settings["repeat"]):
        results_path = os.path.join(grader_dir, f"results-{attempt}.jsonl")
        config_path = os.path.join(grader_dir, f"config-{attempt}.json")
        secret = secrets.token_bytes(32)
        with open(config_path, "w", encoding="utf-8") as handle:
            json.dump({"results": results_path, "modules": top_modules, "secret": secret.hex(),
                       "tree": tree, "guarded": [n for n in GUARDED_MODULES
                                                 if n not in own_tools]}, handle)
        env[RESULTS_VARIABLE] = config_path
        output_path = os.path.join(folder, f"output-{attempt}.txt")
        log.append(f"$ {' '.join(shlex.quote(a) for a in argv)}  (in the tree)\n")
        status, timed_out, seconds = run_command(argv, cwd=tree, env=env,
                                                 timeout=settings["timeout"],
                                                 output_path=output_path)
        verdict["test_s"] = round(verdict["test_s"] + seconds, 3)
        with open(output_path, encoding="utf-8", errors="replace") as handle:
            output = handle.read()
        log.append(output + ("" if output.endswith("\n") or not output else "\n"))
        log.append(f"exit {status} after {seconds:.2f} s\n")
        exit_statuses.append(status)
        if os.path.exists(config_path):       # the recorder deletes it as it starts
            os.remove(config_path)
        if timed_out:
            verdict.update(status="timeout", completed=False, exit_status=exit_statuses,
                           reason=f"the test command ran longer than {settings['timeout']:g} s "
                                  f"and was killed")
            return
        if structured:
            results = read_results(results_path, tree, secret)
            if results["rejected"]:
                verdict["notes"].append(f"{results['rejected']} result records without a valid "
                                        f"signature were ignored")
            shadowed.update(results["shadowed"])
            tampered.update(f"unittest: {name} replaced" for name in results["tampered"])
            tampered.update(f"pytest plugin from the tree: {p}" for p in tampering_plugins(
                results["plugins"], tree, set(run_paths), own_tools))
            if not results["started"]:
                if shadowed or tampered:
                    break
                raise GradingError(f"the {runner} recorder did not load (no structured results; "
                                   f"exit {status})")
            unfinished |= not results["finished"]
            outcomes = results["outcomes"]
            failures_recorded |= bool(results["collect_errors"]) or any(
                o in FAILING for o in outcomes.values())
            if results["modules"] is None:
                verdict["notes"].append("the test process ended before recording where "
                                        "the code was imported from")
            else:
                for name, found in results["modules"].items():
                    places.setdefault(name, set()).update(found)
        else:
            outcomes = parse_test_log(output)
            failures_recorded |= any(o in FAILING for o in outcomes.values())
        if plan is not None:
            described = test_descriptions(results_path, secret)
            for test_id in listed:
                outcome, conflict = project_lookup(plan, outcomes, described, test_id)
                observed.setdefault(test_id, []).append(outcome)
                conflicts.extend([conflict] if conflict else [])
            continue
        outcomes = canonical_outcomes(outcomes)
        for test_id in listed:
            observed.setdefault(test_id, []).append(lookup(outcomes, test_id, runner))

    # Step 8: the verdict.
    decided = decide(f2p, p2p, observed, p2p_skip_ok=settings["p2p_skip_ok"])
    verdict.update(fail_to_pass=decided["fail_to_pass"], pass_to_pass=decided["pass_to_pass"],
                   flaky=decided["flaky"], completed=decided["completed"],
                   resolution=decided["resolution"], tests_status=decided["tests_status"],
                   exit_status=exit_statuses)
    if shadowed or tampered:
        detail = [d.replace(os.path.realpath(tree) + os.sep, "").replace(tree + os.sep, "")
                  for d in sorted(shadowed) + sorted(tampered)]
        what = "the grader's own modules were imported from the tree" if shadowed and \
            not tampered else TAMPERED
        verdict.update(status="unresolved", completed=False, resolution="NO",
                       reason=f"{what}: " + "; ".join(detail)[:300])
        return
    wrong = outside_tree({k: sorted(v) for k, v in places.items()}, tree)
    if structured:
        verdict["code_under_test"] = "outside the tree: " + "; ".join(wrong) if wrong else "tree"
    if wrong:
        verdict.update(status="wrong_code_under_test", completed=None, resolution="NO",
                       reason="the tests imported the repository's code from outside the "
                              "throwaway tree: " + "; ".join(wrong)[:300])
        return
    if conflicts:
        verdict.update(status="error", completed=None, resolution="NO", reason=conflicts[0])
        return
    silent = [s for s in exit_statuses if s != 0]
    if silent and not failures_recorded:
        verdict.update(status="error", completed=None, resolution="NO",
                       reason=f"the test command exited {silent[0]} but recorded no failing test")
        return
    if decided["completed"] and unfinished:
        verdict.update(status="unresolved", completed=False, resolution="NO",
                       reason="the test process ended before the recorder's last record, so "
                              "tampering could not be ruled out")
        return
    if decided["completed"]:
        verdict.update(status="resolved", reason="")
        if any(s != 0 for s in exit_statuses):
            verdict["notes"].append("listed tests all passed; other tests in their files failed")
        return
    verdict["status"] = "unresolved"
    reasons = []
    for key, label in (("fail_to_pass", "FAIL_TO_PASS"), ("pass_to_pass", "PASS_TO_PASS")):
        for group in ("failed", "skipped", "missing"):
            if decided[key][group] and not (group == "skipped" and key == "pass_to_pass" and
                                            settings["p2p_skip_ok"]):
                reasons.append(f"{len(decided[key][group])} {label} {group}")
    if decided["flaky"]:
        reasons.append(f"{len(decided['flaky'])} flaky across {settings['repeat']} repeats")
    verdict["reason"] = ", ".join(reasons)


# === Input ===
def parse_test_list(value, where):
    """Read FAIL_TO_PASS / PASS_TO_PASS: a JSON list, or a string holding one.

    >>> parse_test_list('["a", "b c"]', "x"), parse_test_list("", "x")
    (['a', 'b c'], [])
    """
    if isinstance(value, list):
        data = value
    elif is_missing(value):
        return []
    else:
        try:
            data = json.loads(value)
        except ValueError:
            raise InputError(f"{where}: expected a JSON list of test ids, got {value[:60]!r}") \
                from None
        if isinstance(data, str):
            return parse_test_list(data, where)
    if not isinstance(data, list) or not all(isinstance(t, str) for t in data):
        raise InputError(f"{where}: expected a JSON list of test ids (strings)")
    return list(data)


def parse_json_object(value, where):
    """Read a {KEY: VALUE} object given as JSON text (test_env); empty for a missing cell."""
    if isinstance(value, dict):
        data = value
    elif is_missing(value):
        return {}
    else:
        try:
            data = json.loads(value)
        except ValueError:
            raise InputError(f"{where}: expected a JSON object") from None
    if not isinstance(data, dict):
        raise InputError(f"{where}: expected a JSON object")
    return {str(k): str(v) for k, v in data.items()}


def read_records(path, inputs):
    """Read JSON, JSONL or a JSON object keyed by instance id, keeping JSON types."""
    text = inputs.read_text(path)
    if not text.strip():
        raise InputError(f"{path}: empty file, expected JSON records")
    kind = table_kind(path, text)
    records = []
    if kind == "jsonl":
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    records.append((f"{path} line {number}", json.loads(line)))
                except ValueError as exc:
                    raise InputError(f"{path} line {number}: not valid JSON ({exc})") from None
    elif kind == "json":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise InputError(f"{path}: not valid JSON ({exc})") from None
        if isinstance(data, dict) and data and "instance_id" not in data and \
                all(isinstance(v, dict) for v in data.values()):
            data = [dict(v, instance_id=v.get("instance_id", k)) for k, v in data.items()]
        elif isinstance(data, dict):
            data = [data]
        if not isinstance(data, list):
            raise InputError(f"{path}: expected a JSON list of records")
        records = [(f"{path} record {i}", r) for i, r in enumerate(data, 1)]
    else:
        raise InputError(f"{path}: expected JSON or JSONL (.json, .jsonl)")
    for where, record in records:
        if not isinstance(record, dict):
            raise InputError(f"{where}: expected a JSON object")
    if not records:
        raise InputError(f"{path}: no records")
    return records


def load_instances(path, inputs):
    """Read the instances file into {instance_id: instance} with lists parsed."""
    instances = {}
    for where, record in read_records(path, inputs):
        for field in ("instance_id", "base_commit"):
            if is_missing(record.get(field)):
                raise InputError(f"{where}: no {field}")
        if "test_patch" not in record:
            raise InputError(f"{where}: no test_patch")
        instance_id = str(record["instance_id"])
        if instance_id in instances:
            raise InputError(f"{where}: instance {instance_id!r} appears twice")
        runner, no_runner = runner_from_fields(record, where)
        instances[instance_id] = {
            "instance_id": instance_id, "repo": str(record.get("repo") or ""),
            "base_commit": str(record["base_commit"]).strip(),
            "test_patch": record.get("test_patch") or "", "patch": record.get("patch"),
            "FAIL_TO_PASS": parse_test_list(record.get("FAIL_TO_PASS"),
                                            f"{where}, field 'FAIL_TO_PASS'"),
            "PASS_TO_PASS": parse_test_list(record.get("PASS_TO_PASS"),
                                            f"{where}, field 'PASS_TO_PASS'"),
            "test_cmd": record.get("test_cmd") or None, "test_runner": runner,
            "test_env": parse_json_object(record.get("test_env"), f"{where}, field 'test_env'"),
            "where": where, "no_runner": no_runner, "notes": v5_fields(record, where),
        }
        if not instances[instance_id]["FAIL_TO_PASS"]:
            raise InputError(f"{where}: FAIL_TO_PASS is empty; nothing would show the fix works")
    return instances


def default_run_ids(runs):
    """Give runs without a run_id a unique, deterministic one: instance@model, then #2, #3."""
    seen = {}
    for run in runs:
        if run.get("run_id"):
            continue
        base = run["instance_id"] + (f"@{run['model']}" if run.get("model") else "")
        seen[base] = seen.get(base, 0) + 1
        run["run_id"] = base if seen[base] == 1 else f"{base}#{seen[base]}"
    return runs


def load_predictions(path, instances, inputs):
    """Read a SWE-bench predictions file into runs."""
    runs = []
    for where, record in read_records(path, inputs):
        if is_missing(record.get("instance_id")):
            raise InputError(f"{where}: no instance_id")
        if "model_patch" not in record:
            raise InputError(f"{where}: no model_patch")
        patch = record["model_patch"]
        if patch is not None and not isinstance(patch, str):
            raise InputError(f"{where}, field 'model_patch': expected a diff as text")
        runs.append({"instance_id": str(record["instance_id"]), "diff": patch,
                     "model": str(record.get("model_name_or_path") or "") or None,
                     "run_id": str(record.get("run_id") or "") or None,
                     "base_commit": str(record.get("base_commit") or "") or None,
                     "where": where})
    return default_run_ids(runs)


DIFF_NAMES = ("diff.patch", "model.patch", "patch.diff", "run.diff", "changes.diff", "diff.txt")
META_NAMES = ("run.json", "meta.json", "metadata.json", "instance.json")


def only_file(folder, names, endings):
    """The first of `names` in folder, else its only file with one of `endings`."""
    for name in names:
        if os.path.isfile(os.path.join(folder, name)):
            return os.path.join(folder, name)
    found = sorted(f for f in os.listdir(folder) if f.endswith(endings) and
                   os.path.isfile(os.path.join(folder, f)))
    return os.path.join(folder, found[0]) if len(found) == 1 else None


def load_runs_folder(path, inputs):
    """Read a runs folder: one subfolder per run with a diff file and a small JSON."""
    task_of = {}
    if any(os.path.isfile(os.path.join(path, name)) for name in RUNS_TABLE_NAMES):
        table = inputs.read_table(path)
        run_column = table.column(None, candidates=("run_id", "run", "id"), required=False)
        task_column = table.column(None, candidates=("instance_id", "task_id", "task"),
                                   required=False)
        if run_column and task_column:
            task_of = {row[run_column]: row[task_column] for row in table.rows}
    runs = []
    for name in sorted(os.listdir(path)):
        folder = os.path.join(path, name)
        if name.startswith(".") or not os.path.isdir(folder):
            continue
        meta_path = only_file(folder, META_NAMES, (".json",))
        diff_path = only_file(folder, DIFF_NAMES, (".diff", ".patch"))
        if meta_path is None and diff_path is None:
            continue
        meta = {}
        if meta_path:
            try:
                meta = json.loads(inputs.read_text(meta_path))
            except ValueError as exc:
                raise InputError(f"{meta_path}: not valid JSON ({exc})") from None
            if not isinstance(meta, dict):
                raise InputError(f"{meta_path}: expected a JSON object")
        run_id = str(meta.get("run_id") or name)
        instance_id = meta.get("instance_id") or meta.get("task_id") or meta.get("task") or \
            task_of.get(run_id)
        if is_missing(instance_id):
            raise InputError(f"{meta_path or folder}: no instance_id (or task_id) for run "
                             f"{run_id!r}")
        if diff_path is None:
            raise InputError(f"{folder}: no diff file (expected *.diff or *.patch)")
        runs.append({"instance_id": str(instance_id), "run_id": run_id,
                     "diff": inputs.read_text(diff_path),
                     "model": str(meta.get("model_name_or_path") or meta.get("model") or "")
                     or None,
                     "base_commit": str(meta.get("base_commit") or "") or None,
                     "where": meta_path or diff_path})
    if not runs:
        raise InputError(f"{path}: no run subfolders with a diff file")
    return runs


def load_runs(spec, instances, instances_path, inputs):
    """The runs to grade: a predictions file, a runs folder, or the built-in gold / empty."""
    if spec in ("gold", "empty"):
        runs = []
        for instance_id in sorted(instances):
            patch = instances[instance_id]["patch"] if spec == "gold" else ""
            if spec == "gold" and not patch:
                raise InputError(f"{instances[instance_id]['where']}: no patch (the gold fix) "
                                 f"for the gold run set")
            runs.append({"instance_id": instance_id, "run_id": f"{instance_id}@{spec}",
                         "diff": patch, "model": spec, "base_commit": None,
                         "where": f"{instances_path} ({spec})"})
    elif os.path.isdir(spec):
        runs = load_runs_folder(spec, inputs)
    elif os.path.isfile(spec):
        runs = load_predictions(spec, instances, inputs)
    else:
        raise InputError(f"{spec}: no such file or folder (nor 'gold' or 'empty')")
    seen = set()
    for run in runs:
        if run["run_id"] in seen:
            raise InputError(f"{run['where']}: run id {run['run_id']!r} appears twice")
        seen.add(run["run_id"])
        if run["instance_id"] not in instances:
            # Graded as an error verdict; the other runs are still graded.
            run["grading_error"] = (f"instance {run['instance_id']!r} is not in "
                                    f"{instances_path}")
            continue
        run["base_commit"] = run["base_commit"] or instances[run["instance_id"]]["base_commit"]
    return runs


def parse_repo_options(values):
    """Split --repo values into (fallback path or None, {owner/name: path}).

    >>> parse_repo_options(["a/b=/x", "/y"])
    ('/y', {'a/b': '/x'})
    """
    fallback, named = None, {}
    for value in values:
        name, sep, path = value.partition("=")
        if sep and re.fullmatch(r"[\w.-]+/[\w.-]+", name):
            named[name] = path
        elif fallback is None:
            fallback = value
        else:
            raise InputError(f"--repo {value}: a second unnamed repository; name each one "
                             f"as owner/name=PATH")
    return fallback, named


def parse_shard(value):
    """Read --shard K/N (1 <= K <= N).

    >>> parse_shard("2/5")
    (2, 5)
    """
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", value or "")
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise InputError(f"--shard {value}: expected K/N with 1 <= K <= N, e.g. 1/4")
    return int(match.group(1)), int(match.group(2))


def in_shard(run_id, shard):
    """Whether a run belongs to shard K of N: by a hash of its id, the same on every machine.

    >>> sorted(sum(in_shard(r, (k, 3)) for k in (1, 2, 3)) for r in ("a", "b", "c"))
    [1, 1, 1]
    """
    index, count = shard
    return int(hashlib.sha256(run_id.encode("utf-8")).hexdigest()[:16], 16) % count == index - 1


def parse_env_options(values, flag):
    """Read KEY=VALUE options into a dict."""
    env = {}
    for value in values:
        name, sep, setting = value.partition("=")
        if not sep or not name:
            raise InputError(f"{flag} {value}: expected KEY=VALUE")
        env[name] = setting
    return env


def check_test_command(template, runner, where):
    """Refuse a test command that cannot be split, or that a structured runner cannot use.

    >>> check_test_command("{python} -m pytest {files}", "pytest", "--test-cmd")
    >>> try:
    ...     check_test_command('{python} -m "x', "log", "--test-cmd")
    ... except InputError as exc:
    ...     print(exc)
    --test-cmd: No closing quotation
    """
    try:
        words = shlex.split(template)
    except ValueError as exc:
        raise InputError(f"{where}: {exc}") from None
    if not words:
        raise InputError(f"{where}: an empty command")
    if runner in ("pytest", "unittest") and "{python}" not in template:
        raise InputError(f"{where}: the structured runners (pytest, unittest) need {{python}} "
                         f"in the command, to load their recorder; use --runner log to parse "
                         f"another command's output")


def check_test_commands(instances, runner, test_cmd):
    """Check --test-cmd and every instance's test_cmd before any run is graded."""
    for instance in instances.values():
        listed = instance["FAIL_TO_PASS"] + instance["PASS_TO_PASS"]
        chosen = choose_runner(instance["test_runner"] or runner, listed)
        if instance["test_cmd"]:
            check_test_command(instance["test_cmd"], chosen, f"{instance['where']}: test_cmd")
        elif test_cmd is not None:
            check_test_command(test_cmd, chosen, "--test-cmd")


def grading_key(run, instance, settings):
    """SHA-256 of everything that decides a verdict: resume skips a run only when it matches."""
    material = {
        "diff": sha256_text(normalise_diff(run["diff"])),
        "test_patch": sha256_text(normalise_diff(instance["test_patch"])),
        "fail_to_pass": instance["FAIL_TO_PASS"], "pass_to_pass": instance["PASS_TO_PASS"],
        "base_commit": run["base_commit"], "grader": settings["grader_version"],
        "options": {k: settings[k] for k in ("runner", "test_cmd", "repeat", "p2p_skip_ok",
                                             "test_patterns", "env", "python", "fuzz")},
        "instance_options": [instance.get("test_cmd"), instance.get("test_runner"),
                             instance.get("test_env")],
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode("utf-8")).hexdigest()


def check_python(python, needs_pytest):
    """Make sure --python runs, and imports pytest when a run needs it."""
    found = shutil.which(python) if os.sep not in python else python
    if not found or not os.access(found, os.X_OK):
        raise InputError(f"--python {python}: no such interpreter")
    probe = "import sys; print(sys.version_info[0])" + ("; import pytest" if needs_pytest else "")
    try:
        done = subprocess.run([found, "-c", probe], stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InputError(f"--python {python}: cannot run it ({exc})") from None
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        what = "cannot import pytest (needed by the pytest runner)" if needs_pytest else \
            "does not run"
        raise InputError(f"--python {python}: {what}: {tail[0][:120]}")
    return os.path.abspath(found)


# === Report ===
def safe_name(run_id):
    """A file name for a run id: readable, and distinct even where characters were replaced.

    >>> safe_name("django__django-1@gpt/4"), safe_name("plain-1")
    ('django__django-1@gpt_4-3d9ba20e', 'plain-1')
    """
    cleaned = re.sub(r"[^A-Za-z0-9._@+-]", "_", run_id)[:120]
    if cleaned == run_id:
        return cleaned
    return f"{cleaned}-{hashlib.sha256(run_id.encode('utf-8')).hexdigest()[:8]}"


class VerdictStore:
    """verdicts.jsonl in --out DIR: one line per run, appended atomically as each run ends."""

    def __init__(self, folder, inputs):
        self.folder = folder
        self.path = os.path.join(folder, "verdicts.jsonl")
        self.lock = threading.Lock()
        try:
            for sub in ("", "logs", "reports"):
                os.makedirs(os.path.join(folder, sub), exist_ok=True)
        except OSError as exc:
            raise InputError(f"--out {folder}: cannot create ({exc.strerror or exc})") from None
        for name in ("verdicts.jsonl", "verdicts.csv", "swebench_summary.json"):
            inputs.guard_output(os.path.join(folder, name))
        self.previous = {}
        if os.path.exists(self.path):
            with open(self.path, "rb") as handle:
                data = handle.read()
            if data and not data.endswith(b"\n"):
                # A line cut short by a crash: drop it, keep every whole line.
                data = data[:data.rfind(b"\n") + 1]
                with open(self.path, "r+b") as handle:
                    handle.truncate(len(data))
            for line in data.decode("utf-8", "replace").splitlines():
                try:
                    verdict = json.loads(line)
                except ValueError:
                    continue
                if isinstance(verdict, dict) and "run_id" in verdict:
                    self.previous[verdict["run_id"]] = verdict

    def graded(self, run):
        """The earlier verdict of this run with the same inputs, or None."""
        verdict = self.previous.get(run["run_id"])
        return verdict if verdict and verdict.get("key") == run["key"] else None

    def add(self, verdict, log_text):
        """Append one verdict line (one write on an O_APPEND file) and write the run's files."""
        name = safe_name(verdict["run_id"])
        write_atomic(os.path.join(self.folder, "logs", name + ".log"), log_text)
        write_atomic(os.path.join(self.folder, "reports", name + ".json"),
                     to_json(swebench_report(verdict)))
        line = (json.dumps(jsonable(verdict), ensure_ascii=False, sort_keys=True) + "\n")
        with self.lock:
            handle = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(handle, line.encode("utf-8"))
                os.fsync(handle)
            finally:
                os.close(handle)
            self.previous[verdict["run_id"]] = verdict

    def compact(self):
        """Rewrite verdicts.jsonl atomically with each run once, its latest verdict, by run id."""
        with self.lock:
            write_atomic(self.path, "".join(
                json.dumps(jsonable(v), ensure_ascii=False, sort_keys=True) + "\n"
                for v in sorted(self.previous.values(), key=lambda v: v["run_id"])))


def swebench_report(verdict):
    """The official harness's per-instance report shape for one run."""
    applied = verdict["applied_with"] is not None and not verdict["patch_is_none"] and \
        verdict["status"] not in ("test_patch_failed", "error")
    report = {"patch_is_None": bool(verdict["patch_is_none"]),
              "patch_exists": not verdict["patch_is_none"],
              "patch_successfully_applied": applied,
              "resolved": verdict["status"] == "resolved"}
    if verdict.get("tests_status"):
        report["tests_status"] = verdict["tests_status"]
    return {verdict["instance_id"]: report}


def swebench_summary(verdicts, instance_ids):
    """The official run summary's counts and id lists; ids are run ids when runs share instances.

    Every count is in one unit: instances, or runs when ids_are is run_id; then
    total counts the runs plus one for each instance that has no run.
    """
    by_instance = {}
    for verdict in verdicts:
        by_instance.setdefault(verdict["instance_id"], []).append(verdict)
    per_run = any(len(v) > 1 for v in by_instance.values())

    def ident(verdict):
        return verdict["run_id"] if per_run else verdict["instance_id"]
    empty = {ident(v) for v in verdicts if v["diff_empty"]}
    graded = [v for v in verdicts if ident(v) not in empty]
    errors = {ident(v) for v in graded if v["status"] in GRADING_ERRORS + ("timeout",)}
    completed = {ident(v) for v in graded} - errors
    resolved = {ident(v) for v in graded if v["status"] == "resolved"}
    submitted = {ident(v) for v in verdicts}
    incomplete = sorted(set(instance_ids) - set(by_instance))
    return {"total_instances": len(submitted) + len(incomplete),
            "submitted_instances": len(submitted), "completed_instances": len(completed),
            "resolved_instances": len(resolved),
            "unresolved_instances": len(completed - resolved),
            "empty_patch_instances": len(empty), "error_instances": len(errors),
            "completed_ids": sorted(completed), "incomplete_ids": incomplete,
            "empty_patch_ids": sorted(empty), "submitted_ids": sorted(submitted),
            "resolved_ids": sorted(resolved), "unresolved_ids": sorted(completed - resolved),
            "error_ids": sorted(errors), "schema_version": 2,
            "ids_are": "run_id" if per_run else "instance_id"}


def verdicts_csv(verdicts):
    """verdicts.csv: the runs-table shape delivery_audit.py and auc_audit.py join on run_id."""
    handle = io.StringIO()
    writer = csv.writer(handle, lineterminator="\n")
    writer.writerow(["run_id", "instance_id", "completed", "status"])
    for verdict in sorted(verdicts, key=lambda v: v["run_id"]):
        completed = verdict["completed"]
        writer.writerow([verdict["run_id"], verdict["instance_id"],
                         "" if completed is None else ("true" if completed else "false"),
                         verdict["status"]])
    return handle.getvalue()


def summarise(verdicts):
    """Counts for the closing summary: statuses, resolutions, tests touched, flaky, timings."""
    statuses = {s: 0 for s in STATUSES}
    resolutions = {"FULL": 0, "PARTIAL": 0, "NO": 0}
    for verdict in verdicts:
        statuses[verdict["status"]] = statuses.get(verdict["status"], 0) + 1
        resolutions[verdict["resolution"]] += 1
    total = sum(v["duration_s"] for v in verdicts)
    tests = sum(v["test_s"] for v in verdicts)
    return {
        "runs": len(verdicts), "resolved": statuses["resolved"],
        "completed_true": sum(1 for v in verdicts if v["completed"] is True),
        "completed_false": sum(1 for v in verdicts if v["completed"] is False),
        "grading_errors": sum(statuses[s] for s in GRADING_ERRORS),
        "statuses": statuses, "resolutions": resolutions,
        "touched_tests": sorted(v["run_id"] for v in verdicts if v["touched_tests"]),
        "flaky": sorted(v["run_id"] for v in verdicts if v["flaky"]),
        "from_log": sorted(v["run_id"] for v in verdicts if v["results_from"] == "log"),
        "seconds_total": round(total, 3), "seconds_tests": round(tests, 3),
        "overhead_per_run_s": round((total - tests) / len(verdicts), 3) if verdicts else None,
    }


def share(group, ran=True):
    """'passed/total' for one FAIL_TO_PASS or PASS_TO_PASS group; '-' when no test ran."""
    if not ran:
        return "-"
    total = sum(len(group[k]) for k in ("passed", "failed", "skipped", "missing"))
    return f"{len(group['passed'])}/{total}"


def wrapped(text, width=100):
    """One report line wrapped within `width` columns, continuation lines indented.

    >>> print(wrapped("- run-1: " + "word " * 12, 40))
    - run-1: word word word word word word
      word word word word word word
    """
    return textwrap.fill(text, width, subsequent_indent="  ", break_on_hyphens=False,
                         break_long_words=False)


def render_summary(summary, verdicts, style, prov, *, timings=False, skipped=0):
    """The closing report as text or Markdown; it reads the numbers, computes none."""
    lines = []
    heading = (f"regrade: {summary['runs']} run{'' if summary['runs'] == 1 else 's'}, "
               f"{summary['resolved']} resolved, {summary['grading_errors']} grading "
               f"error{'' if summary['grading_errors'] == 1 else 's'}")
    lines.append(f"## {heading}" if style == "markdown" else heading)
    if skipped:
        lines.append(f"({skipped} already graded with the same inputs, taken from verdicts.jsonl;"
                     f" --force regrades)")
    lines.append("")
    rows = [[s, str(summary["statuses"][s])] for s in STATUSES if summary["statuses"][s]]
    rows += [[f"resolution {k}", str(v)] for k, v in summary["resolutions"].items()]
    lines.append(render_table(["status", "runs"], rows, style))
    lines.append("")
    # Which patch method applied, and which runs touched tests, are listed
    # below the table, so it stays within 100 columns.
    headers = ["run", "instance", "status", "resolution", "FAIL_TO_PASS", "PASS_TO_PASS"] + (
        ["tests s", "all s"] if timings else [])
    rows = []
    for v in sorted(verdicts, key=lambda v: v["run_id"]):
        row = [v["run_id"], v["instance_id"], v["status"], v["resolution"],
               share(v["fail_to_pass"], bool(v["tests_status"])),
               share(v["pass_to_pass"], bool(v["tests_status"]))]
        rows.append(row + ([fmt(v["test_s"], 2), fmt(v["duration_s"], 2)] if timings else []))
    lines.append(render_table(headers, rows, style))
    reasons = [(v["run_id"], v["reason"]) for v in sorted(verdicts, key=lambda v: v["run_id"])
               if v["reason"]]
    if reasons:
        lines.append("")
        lines.append("why not resolved:")
        lines += [wrapped(f"- {run_id}: {reason}") for run_id, reason in reasons]
    lines.append("")
    # In Markdown each closing line is a list item, so they do not run together.
    item = "- " if style == "markdown" else ""
    lines.append(wrapped(f"{item}runs that touched tests (reset before grading): "
                         f"{', '.join(summary['touched_tests']) or 'none'}"))
    lines.append(wrapped(f"{item}runs with flaky tests: {', '.join(summary['flaky']) or 'none'}"))
    fallbacks = [f"{v['run_id']} ({v['applied_with']})"
                 for v in sorted(verdicts, key=lambda v: v["run_id"])
                 if v["applied_with"] not in (None, "git apply", "empty")]
    lines.append(wrapped(f"{item}diffs applied only by a fallback: "
                         f"{', '.join(fallbacks) or 'none'}"))
    if summary["from_log"]:
        lines.append(wrapped(f"{item}results read from logs, not structured records: "
                             f"{', '.join(summary['from_log'])}"))
    if timings and verdicts:
        lines.append(f"{item}time: {fmt(summary['seconds_total'], 2)} s in all, "
                     f"{fmt(summary['seconds_tests'], 2)} s in test commands; grader overhead "
                     f"{fmt(summary['overhead_per_run_s'], 3)} s per run")
    lines.append("")
    lines.append(render_provenance(prov, style))
    return "\n".join(lines) + "\n"


class Progress:
    """Runs done / total, resolved so far, elapsed and time left, on stderr."""

    def __init__(self, total, enabled):
        self.total, self.enabled, self.done, self.resolved = total, enabled, 0, 0
        self.started = time.monotonic()
        self.tty = enabled and sys.stderr.isatty()

    def update(self, verdict):
        self.done += 1
        self.resolved += verdict["status"] == "resolved"
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.started
        left = elapsed / self.done * (self.total - self.done)
        text = (f"[{self.done}/{self.total}] resolved {self.resolved}, elapsed "
                f"{elapsed:.0f} s, about {left:.0f} s left ({verdict['run_id']}: "
                f"{verdict['status']})")
        if self.tty:
            sys.stderr.write("\r\x1b[K" + text[:200])
            if self.done == self.total:
                sys.stderr.write("\n")
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()


# === Main ===
def build_parser():
    parser = Parser(__doc__, prog="regrade.py")
    parser.add_argument("instances", nargs="?", help="instances file (JSON or JSONL)")
    parser.add_argument("runs", nargs="?",
                        help="predictions file, runs folder, 'gold' or 'empty'")
    parser.add_argument("--repo", action="append", default=[], metavar="[OWNER/NAME=]PATH",
                        help="clone or git bundle to check commits out of (repeatable)")
    parser.add_argument("--out", metavar="DIR", help="write verdicts.jsonl, verdicts.csv, logs, "
                        "SWE-bench reports here (resumable)")
    parser.add_argument("--python", default=sys.executable,
                        help="interpreter with the repo's test dependencies (default: this one)")
    parser.add_argument("--runner", choices=RUNNERS, default="auto",
                        help="how results are read (default: auto)")
    parser.add_argument("--test-cmd", metavar="TEMPLATE",
                        help="test command; {python} {files} {tests} {modules} {plugin} {runner}")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help=f"seconds per test command (default: {DEFAULT_TIMEOUT})")
    parser.add_argument("--repeat", type=int, default=1, metavar="K",
                        help="run the tests K times, flag changed outcomes as flaky (default: 1)")
    parser.add_argument("--p2p-skip-ok", action="store_true",
                        help="a skipped PASS_TO_PASS test does not fail the run")
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                        help="set a variable for the test command (repeatable)")
    parser.add_argument("--keep-env", action="append", default=[], metavar="NAME",
                        help="pass a variable through that would be scrubbed (repeatable)")
    parser.add_argument("--test-files", action="append", metavar="GLOB",
                        help="patterns of test files to reset (repeatable; replaces the default)")
    parser.add_argument("--fuzz", type=int, default=DEFAULT_FUZZ,
                        help=f"fuzz for the patch fallback (default: {DEFAULT_FUZZ})")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="grade N runs in parallel (default: 1)")
    parser.add_argument("--shard", metavar="K/N", help="grade only shard K of N (by run id hash)")
    parser.add_argument("--instance", action="append", metavar="ID",
                        help="grade only runs of this instance (repeatable)")
    parser.add_argument("--force", action="store_true", help="regrade runs already in --out")
    parser.add_argument("--keep-trees", action="store_true",
                        help="keep the throwaway folders (their paths go in the notes)")
    parser.add_argument("--progress", action="store_true",
                        help="show progress on stderr even when it is not a terminal")
    parser.add_argument("--timings", action="store_true",
                        help="show test and total seconds per run in the summary")
    parser.add_argument("--summarize", nargs="+", metavar="VERDICTS",
                        help="only summarise verdicts.jsonl files (e.g. shards'); with --out, "
                        "write the merged verdicts.jsonl, verdicts.csv and summary there")
    add_common_options(parser, __version__, __file__)
    return parser


def output(args, inputs, verdicts, instance_ids, argv, skipped=0, stored=None):
    """Write the verdict files (from every verdict stored in --out) and print the summary."""
    summary = summarise(verdicts)
    if args.out:
        stored = verdicts if stored is None else stored
        write_atomic(os.path.join(args.out, "verdicts.csv"), verdicts_csv(stored))
        write_atomic(os.path.join(args.out, "swebench_summary.json"),
                     to_json(swebench_summary(stored, instance_ids)))
    prov = provenance(__file__, __version__, argv, None, inputs)
    if args.format == "json":
        sys.stdout.write(to_json({"summary": summary,
                                  "swebench_summary": swebench_summary(verdicts, instance_ids),
                                  "runs": sorted(verdicts, key=lambda v: v["run_id"]),
                                  "provenance": prov}))
    else:
        sys.stdout.write(render_summary(summary, verdicts, args.format, prov,
                                        timings=args.timings, skipped=skipped))
    return 0


def summarize_only(args, argv):
    """--summarize: merge verdict files (the last line per run id wins) and report."""
    inputs, merged = Inputs(), {}
    for path in args.summarize:
        for number, line in enumerate(inputs.read_text(path).splitlines(), 1):
            if not line.strip():
                continue
            try:
                verdict = json.loads(line)
            except ValueError as exc:
                raise InputError(f"{path} line {number}: not valid JSON ({exc})") from None
            if not isinstance(verdict, dict) or "run_id" not in verdict or "status" not in verdict:
                raise InputError(f"{path} line {number}: not a regrade.py verdict")
            merged[verdict["run_id"]] = verdict
    verdicts = list(merged.values())
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        target = os.path.join(args.out, "verdicts.jsonl")
        inputs.guard_output(target)
        write_atomic(target, "".join(json.dumps(v, ensure_ascii=False, sort_keys=True) + "\n"
                                     for v in sorted(verdicts, key=lambda v: v["run_id"])))
    return output(args, inputs, verdicts, sorted({v["instance_id"] for v in verdicts}), argv)


def _main(argv):
    args = build_parser().parse_args(argv)
    if args.summarize:
        return summarize_only(args, argv)
    if not args.instances or not args.runs:
        raise InputError("expected INSTANCES and RUNS (or --summarize FILE...); see --help")
    for flag, value, low in (("--jobs", args.jobs, 1), ("--repeat", args.repeat, 1),
                             ("--fuzz", args.fuzz, 0)):
        if value < low:
            raise InputError(f"{flag} {value}: must be at least {low}")
    if not args.timeout > 0:
        raise InputError(f"--timeout {args.timeout:g}: must be positive")
    if not args.repo:
        raise InputError("--repo is required: a clone or a git bundle of the repository")
    inputs = Inputs()
    instances = load_instances(args.instances, inputs)
    runs = load_runs(args.runs, instances, args.instances, inputs)
    if args.instance:
        unknown = sorted(set(args.instance) - set(instances))
        if unknown:
            raise InputError(f"--instance {unknown[0]}: not in {args.instances}")
        runs = [r for r in runs if r["instance_id"] in set(args.instance)]
    if args.shard:
        shard = parse_shard(args.shard)
        runs = [r for r in runs if in_shard(r["run_id"], shard)]
    settings = {
        "grader_version": f"{__version__}+{script_sha256(__file__)[:12]}",
        "runner": args.runner, "test_cmd": args.test_cmd, "timeout": args.timeout,
        "repeat": args.repeat, "p2p_skip_ok": args.p2p_skip_ok,
        "env": parse_env_options(args.env, "--env"), "keep_env": set(args.keep_env),
        "test_patterns": tuple(args.test_files) if args.test_files else None,
        "keep_trees": args.keep_trees, "fuzz": args.fuzz,
    }
    check_test_commands(instances, args.runner, args.test_cmd)
    needs_pytest = any(choose_runner(instances[r["instance_id"]]["test_runner"] or args.runner,
                                     instances[r["instance_id"]]["FAIL_TO_PASS"] +
                                     instances[r["instance_id"]]["PASS_TO_PASS"]) == "pytest"
                       and not (instances[r["instance_id"]]["test_cmd"] or args.test_cmd)
                       for r in runs if r["instance_id"] in instances)
    settings["python"] = check_python(args.python, needs_pytest)
    fallback, named = parse_repo_options(args.repo)
    scratch = tempfile.mkdtemp(prefix="regrade-session-")
    settings["scratch"] = scratch
    try:
        return grade_all(args, argv, inputs, instances, runs, settings, fallback, named, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def grade_all(args, argv, inputs, instances, runs, settings, fallback, named, scratch):
    """Open the repositories, check every base commit, grade what is not graded yet, report."""
    sources, source_of = {}, {}
    for run in runs:
        if run.get("grading_error"):
            continue
        instance = instances[run["instance_id"]]
        path = named.get(instance["repo"], fallback)
        if path is None:
            raise InputError(f"{instance['where']}: no --repo for repository "
                             f"{instance['repo'] or '(unnamed)'}; give --repo "
                             f"{instance['repo'] or 'owner/name'}=PATH")
        if path not in sources:
            sources[path] = open_source(path, scratch, inputs)
        source_of[run["run_id"]] = sources[path]
    for path, source in sorted(sources.items()):
        mine = [r for r in runs if source_of.get(r["run_id"]) is source]
        resolved = source.resolve(r["base_commit"] for r in mine)
        for run in mine:
            full = resolved.get(run["base_commit"])
            if full is None:
                run["grading_error"] = (f"base commit {run['base_commit']} of "
                                        f"{run['instance_id']} is not in {path}")
            else:
                run["base_commit"] = full
    for run in runs:
        if run["instance_id"] in instances:
            run["key"] = grading_key(run, instances[run["instance_id"]], settings)
        else:
            run["key"] = sha256_text(json.dumps([run["instance_id"], run["diff"],
                                                 settings["grader_version"]]))
    store = VerdictStore(args.out, inputs) if args.out else None
    verdicts, todo = {}, []
    for run in runs:
        # Runs that cannot be graded at all are re-checked every time (it is instant).
        earlier = store.graded(run) if store and not args.force and \
            not run.get("grading_error") else None
        if earlier:
            verdicts[run["run_id"]] = earlier
        else:
            todo.append(run)
    progress = Progress(len(todo), args.progress or sys.stderr.isatty())

    def finish(result):
        verdict, log_text = result
        if store:
            store.add(verdict, log_text)
        verdicts[verdict["run_id"]] = verdict
        progress.update(verdict)

    def one(run):
        if run.get("grading_error"):
            return (error_verdict(run, settings, run["grading_error"]),
                    f"run {run['run_id']}: grading error: {run['grading_error']}\n")
        return grade_run(run, instances[run["instance_id"]], source_of[run["run_id"]], settings)
    try:
        if args.jobs == 1:
            for run in todo:
                finish(one(run))
        else:
            with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
                futures = [pool.submit(one, run) for run in todo]
                try:
                    for future in concurrent.futures.as_completed(futures):
                        finish(future.result())
                except BaseException:
                    for future in futures:
                        future.cancel()
                    kill_live_groups()
                    raise
    except KeyboardInterrupt:
        kill_live_groups()
        raise
    finally:
        if store:           # each run once in verdicts.jsonl, however the job ended
            store.compact()
    ordered = [verdicts[r["run_id"]] for r in runs if r["run_id"] in verdicts]
    return output(args, inputs, ordered, sorted(instances), argv,
                  skipped=len(runs) - len(todo),
                  stored=list(store.previous.values()) if store else None)


def main(argv=None):
    """Run the command line; return the exit status."""
    return run_main(_main, argv)


if __name__ == "__main__":
    sys.exit(main())
