#!/usr/bin/env python3
# /// script
# requires-python = ">=3.9"
# dependencies = []
# ///
"""Audit an agent's completion claims against verified outcomes: how often was
"done" true, and what does paying per claim cost?

delivery_audit.py reads one row per agent run (the agent's claim that it
finished, and whether verification, e.g. the maintainers' tests, says it did)
and reports the delivery rate r = verified claims / claims, the false-completion
rate 1 - r, the 1/r inflation of paying per claim, and how much the claim tells
you about success when read as a detector of it. Standard library only; one
file; nothing is ever written into its inputs.

Basic usage:
    python3 delivery_audit.py RUNS            RUNS: a CSV/TSV/JSONL/JSON table, '-' for
                                              stdin, or a runs folder holding runs.csv
    python3 delivery_audit.py --demo          the seed report's own section 8 table
    python3 delivery_audit.py --counts tp=46,fp=22,fn=3,tn=1

To audit the shipped example (72 synthetic runs shaped like the report's):
    python3 delivery_audit.py examples/runs --raters rater_a,rater_b,rater_c --cost cost_usd
To take the verified column from regrade.py's verdicts (see regrade.py --out):
    python3 regrade.py examples/regrade/instances.jsonl examples/regrade/predictions.jsonl \\
        --repo examples/regrade/calc.bundle --out regraded
    python3 delivery_audit.py examples/regrade/runs.csv --verdicts regraded/verdicts.csv
To paste the result into a GitHub issue or forum post:
    python3 delivery_audit.py examples/runs --format markdown
To get every number at full precision:
    python3 delivery_audit.py examples/runs --format json

Input
    One row per run. Columns are found by name (case-insensitive), or named
    with the options below:
      run id     --run-id     run_id, id, run                 (needed for --verdicts, criteria)
      task       --task       task_id, instance_id, task      (the bootstrap cluster)
      claim      --claim      claimed, claim
      verified   --verified   verified, completed, resolved, gt_completed
      condition  --condition  condition                       (optional)
      replicate  --replicate  replicate, rep, attempt, pair,  (optional; pairs runs
                              pair_id                         for McNemar)
      cost       --cost COL                                   (optional)
      raters     --raters a,b,c                               (optional)
    Claims read yes/no, true/false, 1/0, claimed/not; 'equivocal', 'ambiguous'
    and 'unclear' mark a message too equivocal to read either way. The headline
    reads equivocal messages as NOT claiming (as the report does) and a second
    table shows every figure that changes if they count as claims. A blank
    verified cell means that run was not checked (see sampling mode).
    A runs folder may also hold criteria.csv (run_id, criterion, passed): one row
    per graded acceptance criterion.

What it computes (2x2 table: tp = claimed and verified, fp = claimed, not
verified, fn = not claimed, verified, tn = neither)
    delivery rate r          tp / (tp + fp), exact Clopper-Pearson 95% interval
                             and a task-cluster bootstrap interval beside it
    false-completion rate    1 - r = fp / (tp + fp), same intervals
    inflation 1/r            claims billed per verified delivery; its interval
                             is r's interval transformed (1/high, 1/low)
    completion rate          verified / runs, exact interval
    sensitivity, specificity tp / (tp + fn), tn / (tn + fp), exact intervals
    claim AUC                (sensitivity + specificity) / 2: the Mann-Whitney
                             AUC of a yes/no score
    claim AUC, 3 levels      the Mann-Whitney AUC (ties count one half) of the
                             score claimed > equivocal > not claimed, beside it;
                             it does not depend on how equivocal messages are read
    Cohen's kappa            claim vs verified; task-cluster bootstrap interval
    Fisher's exact p         two-sided, summing tables no more likely than the
                             observed one (relative tolerance 1e-7)
    stratified exact test    with a condition column, for each two conditions:
                             the exact conditional test of no condition effect in
                             the 2x2 tables (condition x verified) of each task,
                             as R's mantelhaen.test(exact = TRUE): given every
                             task's margins, S = runs verified in the first
                             condition is a sum of hypergeometric counts; p sums
                             the values of S no more likely than the observed
                             one (relative tolerance 1e-7, R's rule). It needs no
                             pairing and no run order. Beside p, the common odds
                             ratio of completing in the first condition (its
                             conditional maximum-likelihood estimate, as R's;
                             undefined where S cannot vary, where R prints 0).
                             Tasks run in only one condition cannot count, and
                             are counted.
    McNemar                  only with a replicate or pair column: runs of the
                             same task and replicate pair across two conditions;
                             b and c are the discordant pairs; exact two-sided
                             binomial p. The line says what paired the runs and
                             how many were left unpaired. Without such a column
                             McNemar is skipped and the report says so: pairing
                             runs by their order would let their numbering move p.
    raters                   with --raters: the claim is the majority label (no
                             majority reads as equivocal); unanimity; Fleiss' kappa
    criteria                 criteria that never vary, and runs whose varying
                             criteria all share one verdict (criterion-level
                             results are then the run-level result reweighted)
    sampling mode            when only some runs were verified, r is estimated
                             from the checked claims and projected onto all claims
    cost                     with --cost: total, per run, per claim, per verified
                             delivery, and what was spent on false claims
    verdict                  one of three cases, read off Fisher's p and kappa's
                             cluster interval:
                             - the claim carries information: Fisher's p < 0.05
                               and the interval (where there is a usable one)
                               lies on kappa's side of 0; below 0 it points the
                               wrong way;
                             - the data exclude any useful agreement: the
                               interval's upper end lies below 0.2, where Landis
                               and Koch's (1977) "slight" agreement ends;
                             - too few runs to tell: neither. An interval
                               narrower than 0.2 always tells (it lies above 0 or
                               below 0.2); the verdict gives today's width and the
                               runs that would shrink it to 0.2 at the 1/sqrt(n)
                               rate, and says when no table with these margins
                               could reach Fisher p < 0.05 at all.
                             With fewer than 10 tasks holding several runs each
                             there is no interval, and Fisher's pooled p would
                             count runs of one task as independent: the exact
                             test of claim against outcome stratified by task
                             (as for conditions, below) takes its place. A claim
                             that never varies carries nothing by construction,
                             and says so.
    The cluster bootstrap resamples whole tasks with replacement (--boot times,
    default 20,000; the report used 200,000) because runs of one task agree with
    each other; intervals are the 2.5th and 97.5th percentiles (linear
    interpolation between order statistics); resamples where a figure is
    undefined are skipped and counted. With no task column each run is its own
    cluster, and the report says so. An interval is withheld, with a note saying
    why, where it would be no interval: fewer than 10 clusters (too few distinct
    resamples), or zero width (all resamples, or 95% of them, give one value,
    as when every claim was verified). The verdict never leans on a withheld
    interval. Figures that need both classes (e.g. only successes) print
    'undefined' with the reason.

What each test assumes
    Clopper-Pearson and Fisher treat runs as independent draws; runs of one task
    agree with each other, so beside them stand the task-cluster intervals, which
    assume only that tasks are independent and that there are enough of them
    (10 or more). Fisher conditions on both margins of the 2x2 table. The
    stratified exact test assumes that, with no condition effect, a task's
    verified runs are equally likely to be any of its runs (runs exchangeable
    within a task, tasks independent); it is most sensitive to an effect in the
    same direction in every task (a common odds ratio). McNemar assumes the pairs
    are real (the same task and replicate, e.g. the same seed) and independent of
    each other. The claim AUCs and kappa are descriptive; their intervals come
    from the task bootstrap alone. kappa's bound of 0.2 is a convention (Landis
    and Koch 1977), not a law: the verdict names it.

Output
    --format text (default), markdown or json (full precision; an infinite value,
    such as the inflation where no claim was verified, is the string "inf", and
    null always means undefined). Text and Markdown
    end with a provenance footer: script version and SHA-256 of its own bytes,
    Python version, the exact command line, the seed, and the SHA-256 of every
    input, so anyone can rerun it and get the same numbers. --svg FILE draws the
    rates and their intervals from the same numbers the text prints.
    Exit status: 0 the audit ran; 2 bad input or usage, with one line
    'error: ...' naming the file, row and column.
"""
import concurrent.futures
import itertools
import multiprocessing
import operator
import random
import textwrap
from fractions import Fraction

__version__ = "0.1.0"

DEFAULT_SEED = 20260801
DEFAULT_BOOT = 20000
CONFIDENCE = 0.95
BOOT_CHUNK = 1000          # resamples per independently seeded chunk
FEW_CLUSTERS = 10          # fewer clusters than this: bootstrap intervals are withheld
SIGNIFICANCE = 0.05        # Fisher's p below this: the claim and the outcome are not independent
USEFUL_AGREEMENT = 0.2     # Landis & Koch (1977): a kappa below 0.2 is at best "slight"
CLAIM_COLUMNS = ("claimed", "claim")
VERIFIED_COLUMNS = ("verified", "completed", "resolved", "gt_completed")
TASK_COLUMNS = ("task_id", "instance_id", "task")
RUN_ID_COLUMNS = ("run_id", "id", "run")
REPLICATE_COLUMNS = ("replicate", "rep", "attempt", "pair", "pair_id")
EXACT_STRATIFIED_RUNS = 5000   # above this, the stratified test convolves floats, not integers
R_TIE_TOLERANCE = Fraction(1, 10 ** 7)   # R's relErr: tables this close in probability tie
EQUIVOCAL_WORDS = frozenset({"equivocal", "ambiguous", "unclear"})
# The seed report's section 8 table: 72 runs, 68 claims, 22 false; the four
# equivocal messages (read as not claiming) fall on 3 verified runs and 1 failure.
DEMO_COUNTS = {"tp": 46, "fp": 22, "fn": 3, "tn": 1, "eq_verified": 3, "eq_failed": 1}


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
    """Make `value` strict JSON: an infinity becomes the string "inf" or "-inf" (a
    value, kept losslessly), NaN becomes null (null always means undefined), tuples
    become lists.

    >>> jsonable({"inflation": [1.5, float("inf")], "low": -math.inf, "x": math.nan})
    {'inflation': [1.5, 'inf'], 'low': '-inf', 'x': None}
    """
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, float) and math.isnan(value):
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


# === Statistics ===
def log_beta(a, b):
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def regularized_beta(a, b, x):
    """Regularized incomplete beta I_x(a, b), by its continued fraction.

    I_x(a, b) is the binomial tail: P(X >= a) for X ~ Binomial(a + b - 1, x).

    >>> round(regularized_beta(1, 1, 0.3), 12), round(regularized_beta(2, 3, 0.5), 12)
    (0.3, 0.6875)
    """
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - regularized_beta(b, a, 1.0 - x)
    front = math.exp(a * math.log(x) + b * math.log1p(-x) - log_beta(a, b)) / a
    # Lentz's method for the continued fraction 1 / (1 + d1 / (1 + d2 / ...)).
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 10000):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < 1e-16:
            break
    return front * result


def beta_quantile(p, a, b):
    """The x with I_x(a, b) = p, by bisection to the last bit of a float."""
    low, high = 0.0, 1.0
    for _ in range(200):
        middle = (low + high) / 2
        if middle in (low, high):
            break
        if regularized_beta(a, b, middle) < p:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def clopper_pearson(k, n, confidence=CONFIDENCE):
    """Exact (Clopper-Pearson) interval for a proportion k/n.

    >>> [round(v, 3) for v in clopper_pearson(22, 68)]
    [0.215, 0.448]
    >>> clopper_pearson(0, 10)[0], clopper_pearson(10, 10)[1]
    (0.0, 1.0)
    """
    if n == 0:
        return [None, None]
    alpha = 1.0 - confidence
    low = 0.0 if k == 0 else beta_quantile(alpha / 2, k, n - k + 1)
    high = 1.0 if k == n else beta_quantile(1 - alpha / 2, k + 1, n - k)
    return [low, high]


def proportion(k, n, why_undefined=""):
    """A proportion with its exact interval, or undefined (with the reason)."""
    if n == 0:
        return {"value": None, "ci": [None, None], "k": k, "n": n, "undefined": why_undefined}
    return {"value": k / n, "ci": clopper_pearson(k, n), "k": k, "n": n}


def cohen_kappa(tp, fp, fn, tn):
    """Cohen's kappa for claim vs verified, exactly; None with one outcome class.

    As a measure of what the claim says about success it needs both verified
    and failed runs; with claims all alike (and both outcomes) it is 0.

    >>> round(cohen_kappa(46, 22, 3, 1), 4)
    -0.0227
    """
    n = tp + fp + fn + tn
    if n == 0 or tp + fn in (0, n):
        return None
    observed = Fraction(tp + tn, n)
    chance = Fraction((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn), n * n)
    if chance == 1:
        return None
    return float((observed - chance) / (1 - chance))


def fleiss_kappa(counts):
    """Fleiss' kappa from per-subject category counts (equal raters per subject).

    `counts` is a list of lists: counts[i][j] raters put subject i in category j.
    Returns None where expected agreement is 1 (a single category in use).
    """
    subjects = len(counts)
    raters = sum(counts[0])
    if subjects == 0 or raters < 2:
        return None
    agreement = sum(Fraction(sum(c * c for c in row) - raters, raters * (raters - 1))
                    for row in counts) / subjects
    shares = [Fraction(sum(row[j] for row in counts), subjects * raters)
              for j in range(len(counts[0]))]
    chance = sum(s * s for s in shares)
    if chance == 1:
        return None
    return float((agreement - chance) / (1 - chance))


def log_hypergeometric(x, row1, row2, column1):
    """log P(top-left cell = x) for a 2x2 table with fixed margins."""
    def log_comb(n, k):
        return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
    return (log_comb(row1, x) + log_comb(row2, column1 - x)
            - log_comb(row1 + row2, column1))


def fisher_exact(tp, fp, fn, tn):
    """Two-sided Fisher exact p for [[tp, fp], [fn, tn]]: the tables no more likely.

    Small tables are summed exactly in integers; large ones in log space with
    R's relative tolerance of 1e-7 for ties in probability.

    >>> round(fisher_exact(3, 1, 1, 3), 6)
    0.485714
    """
    row1, row2, column1 = tp + fp, fn + tn, tp + fn
    low, high = max(0, column1 - row2), min(row1, column1)
    if row1 + row2 <= 1000:
        weights = {x: math.comb(row1, x) * math.comb(row2, column1 - x)
                   for x in range(low, high + 1)}
        observed = weights[tp]
        return float(Fraction(sum(w for w in weights.values() if w <= observed),
                              sum(weights.values())))
    observed = log_hypergeometric(tp, row1, row2, column1)
    total = sum(math.exp(log_hypergeometric(x, row1, row2, column1) - observed)
                for x in range(low, high + 1)
                if log_hypergeometric(x, row1, row2, column1) <= observed + 1e-7)
    return min(1.0, total * math.exp(observed))


def mcnemar_exact(b, c):
    """Exact two-sided McNemar p: twice the smaller binomial(b + c, 1/2) tail, at most 1.

    >>> mcnemar_exact(2, 3), round(mcnemar_exact(0, 6), 6)
    (1.0, 0.03125)
    """
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    if n <= 2000:
        tail = Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2 ** n)
        return float(min(Fraction(1), 2 * tail))
    return min(1.0, 2 * regularized_beta(n - k, k + 1, 0.5))


def percentile(sorted_values, q):
    """Quantile q of sorted values, linear between order statistics (numpy's default)."""
    position = (len(sorted_values) - 1) * q
    below = math.floor(position)
    above = min(below + 1, len(sorted_values) - 1)
    weight = position - below
    return sorted_values[below] * (1 - weight) + sorted_values[above] * weight


# === The audit ===
FIELDS = ("tp", "fp", "fn", "tn", "eq_verified", "eq_failed")
FIELD_BITS = 40            # room for 10^12 runs in each packed count


RATE_NAMES = ("delivery_rate", "false_completion_rate", "completion_rate",
              "sensitivity", "specificity", "claim_auc", "kappa")


def rates(tp, fp, fn, tn):
    """Every rate of the audit from one 2x2 table; None where undefined."""
    claims, verified, n = tp + fp, tp + fn, tp + fp + fn + tn
    failed = fp + tn
    sensitivity = tp / verified if verified else None
    specificity = tn / failed if failed else None
    return {
        "delivery_rate": tp / claims if claims else None,
        "false_completion_rate": fp / claims if claims else None,
        "completion_rate": verified / n if n else None,
        "sensitivity": sensitivity,
        "specificity": specificity,
        "claim_auc": (sensitivity + specificity) / 2 if verified and failed else None,
        "kappa": kappa_float(tp, fp, fn, tn),
    }


def kappa_float(tp, fp, fn, tn):
    """Cohen's kappa in floats, for the bootstrap's many resamples; None if undefined."""
    n = tp + fp + fn + tn
    chance = (tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)
    if n == 0 or tp + fn in (0, n) or chance == n * n:
        return None
    return ((tp + tn) * n - chance) / (n * n - chance)


def ordinal_claim_auc(tp, fp, fn, tn, eq_verified, eq_failed):
    """The Mann-Whitney AUC of the three-level score claimed > equivocal > not claimed.

    The equivocal messages sit among fn (verified) and tn (failed). Ties count
    one half (midranks); None without both verified and failed runs. Summed in
    integers, divided once.

    >>> ordinal_claim_auc(46, 22, 3, 1, 3, 1), ordinal_claim_auc(1, 1, 1, 1, 1, 0)
    (0.49112688553682343, 0.625)
    """
    verified = (fn - eq_verified, eq_verified, tp)      # scores 0, 1, 2
    failed = (tn - eq_failed, eq_failed, fp)
    if not sum(verified) or not sum(failed):
        return None
    wins = sum(verified[i] * failed[j] for i in range(3) for j in range(i))
    ties = sum(verified[i] * failed[i] for i in range(3))
    return (2 * wins + ties) / (2 * sum(verified) * sum(failed))


def as_claims(tp, fp, fn, tn, eq_verified, eq_failed):
    """The 2x2 table when the equivocal messages count as claims."""
    return tp + eq_verified, fp + eq_failed, fn - eq_verified, tn - eq_failed


def bootstrap_chunk(packed, seed, chunk, count):
    """`count` resamples of the packed cluster counts, seeded from (seed, chunk)."""
    rng = random.Random(f"{seed}:{chunk}")
    choices, k, mask = rng.choices, len(packed), (1 << FIELD_BITS) - 1
    draws = {"headline": [], "equivocal_as_claims": []}
    for _ in range(count):
        total = sum(choices(packed, k=k))
        tp, fp, fn, tn, eq_verified, eq_failed = (
            (total >> (FIELD_BITS * i)) & mask for i in range(len(FIELDS)))
        headline = rates(tp, fp, fn, tn)
        headline["ordinal_claim_auc"] = ordinal_claim_auc(tp, fp, fn, tn, eq_verified, eq_failed)
        draws["headline"].append(headline)
        draws["equivocal_as_claims"].append(
            rates(*as_claims(tp, fp, fn, tn, eq_verified, eq_failed)))
    return draws


def cluster_bootstrap(cluster_counts, boot, seed, confidence=CONFIDENCE, jobs=1):
    """Percentile intervals of every rate, resampling clusters (tasks) with replacement.

    `cluster_counts` holds one (tp, fp, fn, tn, eq_verified, eq_failed) per
    cluster. Each resample draws as many clusters as there are, sums their
    counts and recomputes the rates, headline and equivocal-as-claims alike.
    The resamples come in chunks of BOOT_CHUNK, each seeded from (seed, chunk),
    so the answer is the same whether the chunks run in one process or `jobs`.
    """
    # Counts packed side by side in one integer: summing a resample is then
    # one C-level sum() instead of six Python loops.
    packed = [sum(count << (FIELD_BITS * i) for i, count in enumerate(counts))
              for counts in cluster_counts]
    sizes = [(chunk, min(BOOT_CHUNK, boot - start))
             for chunk, start in enumerate(range(0, boot, BOOT_CHUNK))]
    chunks = None
    if jobs > 1 and len(sizes) > 1:
        chunks = parallel_chunks(packed, seed, sizes, jobs)
    if chunks is None:
        chunks = [bootstrap_chunk(packed, seed, chunk, count) for chunk, count in sizes]
    alpha = 1.0 - confidence
    intervals = {}
    for variant in ("headline", "equivocal_as_claims"):
        intervals[variant] = {}
        for name in RATE_NAMES + (("ordinal_claim_auc",) if variant == "headline" else ()):
            values = [draw[name] for chunk in chunks for draw in chunk[variant]]
            defined = sorted(v for v in values if v is not None)
            ci = ([percentile(defined, alpha / 2), percentile(defined, 1 - alpha / 2)]
                  if defined else [None, None])
            intervals[variant][name] = {
                "ci": ci, "skipped": len(values) - len(defined),
                "degenerate": degenerate_interval(defined, ci, len(cluster_counts)),
            }
    return intervals


def degenerate_interval(defined, ci, clusters):
    """Why a bootstrap interval is no interval at all, or None when it is usable.

    Too few clusters give too few distinct resamples to show the uncertainty;
    a zero-width interval (every resample, or 95% of them, giving one value)
    shows none.

    >>> degenerate_interval([1.0] * 50, [1.0, 1.0], 12)
    'all 50 resamples give 1.000'
    >>> degenerate_interval([0.5] + [1.0] * 99, [1.0, 1.0], 12)
    'at least 95% of the resamples give 1.000'
    >>> degenerate_interval([0.2, 0.5, 0.8], [0.2, 0.8], 4)
    'only 4 clusters to resample (fewer than 10)'
    >>> degenerate_interval([0.2, 0.5, 0.8], [0.2, 0.8], 12) is None
    True
    """
    if clusters < FEW_CLUSTERS:
        return f"only {clusters} clusters to resample (fewer than {FEW_CLUSTERS})"
    if not defined or ci[0] != ci[1]:
        return None
    if defined[0] == defined[-1]:
        return f"all {len(defined)} resamples give {fmt(ci[0])}"
    return f"at least 95% of the resamples give {fmt(ci[0])}"


def parallel_chunks(packed, seed, sizes, jobs):
    """Run bootstrap chunks in forked worker processes; None where fork is unavailable."""
    try:
        context = multiprocessing.get_context("fork")
        with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context) as pool:
            futures = [pool.submit(bootstrap_chunk, packed, seed, chunk, count)
                       for chunk, count in sizes]
            return [future.result() for future in futures]
    except (ValueError, OSError, ImportError):
        return None


def table_figures(tp, fp, fn, tn, bootstrap=None):
    """The headline figures of one 2x2 table, each with its intervals."""
    claims, verified, failed, n = tp + fp, tp + fn, fp + tn, tp + fp + fn + tn
    figures = {
        "delivery_rate": proportion(tp, claims, "no run claimed completion"),
        "false_completion_rate": proportion(fp, claims, "no run claimed completion"),
        "completion_rate": proportion(verified, n, "no runs"),
        "sensitivity": proportion(tp, verified, "no run was verified complete"),
        "specificity": proportion(tn, failed, "no run failed verification"),
    }
    sensitivity, specificity = figures["sensitivity"]["value"], figures["specificity"]["value"]
    figures["claim_auc"] = {"value": (sensitivity + specificity) / 2
                            if verified and failed else None}
    if not (verified and failed):
        figures["claim_auc"]["undefined"] = "needs both verified and failed runs"
    figures["kappa"] = {"value": cohen_kappa(tp, fp, fn, tn), "ci": [None, None]}
    if figures["kappa"]["value"] is None:
        figures["kappa"]["undefined"] = "needs both verified and failed runs"
    figures["fisher_p"] = fisher_exact(tp, fp, fn, tn)
    if bootstrap:
        for name, interval in bootstrap.items():
            if name in figures:
                attach_interval(figures[name], "ci" if name == "kappa" else "ci_cluster",
                                interval)
    r = figures["delivery_rate"]
    figures["inflation"] = {"value": inverse(r["value"]),
                            "ci": [inverse(r["ci"][1]), inverse(r["ci"][0])]}
    if "ci_cluster" in r:
        figures["inflation"]["ci_cluster"] = [inverse(r["ci_cluster"][1]),
                                              inverse(r["ci_cluster"][0])]
    if "cluster_interval_withheld" in r:
        withheld = r["cluster_interval_withheld"]
        low, high = withheld["percentiles"]
        figures["inflation"]["cluster_interval_withheld"] = {
            "reason": withheld["reason"], "percentiles": [inverse(high), inverse(low)]}
    if r["value"] is None:
        figures["inflation"]["undefined"] = r["undefined"]
    return figures


def attach_interval(target, key, interval):
    """Put a bootstrap interval on a figure, or withhold it with its reason."""
    target[key] = interval["ci"]
    if interval["skipped"]:
        target["cluster_resamples_skipped"] = interval["skipped"]
    if interval["degenerate"]:
        # Kept for the record, never printed or leaned on as an interval.
        target[key] = [None, None]
        target["cluster_interval_withheld"] = {"reason": interval["degenerate"],
                                               "percentiles": interval["ci"]}


def inverse(rate):
    """1/r for the inflation: infinite where r is 0 (no claim verified), None if undefined."""
    if rate is None:
        return None
    return math.inf if rate == 0 else 1 / rate


def audit(runs, *, boot=DEFAULT_BOOT, seed=DEFAULT_SEED, clusters_named=True, jobs=1,
          pair_column=None):
    """Audit runs: dicts with task, claim (True/False/'equivocal'), verified (True/False/None).

    Optional keys: condition, replicate, cost, raters (list of labels), run_id.
    `pair_column` names the replicate or pair column the replicates came from;
    without one there are no real pairs, and McNemar is skipped.
    Returns plain data; the renderers only read it.
    """
    checked = [r for r in runs if r["verified"] is not None]
    counts = dict.fromkeys(FIELDS, 0)
    per_task = {}
    for run in checked:
        claimed = run["claim"] is True
        key = ("tp" if run["verified"] else "fp") if claimed else (
            "fn" if run["verified"] else "tn")
        counts[key] += 1
        task_counts = per_task.setdefault(run["task"], dict.fromkeys(FIELDS, 0))
        task_counts[key] += 1
        if run["claim"] == "equivocal":
            field = "eq_verified" if run["verified"] else "eq_failed"
            counts[field] += 1
            task_counts[field] += 1
    tp, fp, fn, tn = (counts[k] for k in ("tp", "fp", "fn", "tn"))
    equivocal = counts["eq_verified"] + counts["eq_failed"]
    bootstrap = None
    if boot and len(per_task) >= 2:
        cluster_counts = [tuple(c[f] for f in FIELDS) for _, c in sorted(per_task.items())]
        if jobs == 0:       # automatic: a second process only where it pays for itself
            jobs = min(2, os.cpu_count() or 1) if boot * len(cluster_counts) >= 10 ** 7 else 1
        bootstrap = cluster_bootstrap(cluster_counts, boot, seed, jobs=jobs)
    result = {
        "n_runs": len(runs),
        "n_tasks": len({r["task"] for r in runs}),
        "clusters": "tasks" if clusters_named else "runs",
        "n_checked": len(checked),
        "counts": {"tp": tp, "fp": fp, "fn": fn, "tn": tn, "equivocal": equivocal,
                   "equivocal_verified": counts["eq_verified"],
                   "equivocal_failed": counts["eq_failed"],
                   "claims": tp + fp, "verified": tp + fn, "runs": len(checked)},
        "boot": boot if len(per_task) >= 2 else 0,
        "n_clusters": len(per_task),
    }
    result.update(table_figures(tp, fp, fn, tn, bootstrap and bootstrap["headline"]))
    eq_table = as_claims(tp, fp, fn, tn, counts["eq_verified"], counts["eq_failed"])
    result["equivocal_as_claims"] = table_figures(
        *eq_table, bootstrap and bootstrap["equivocal_as_claims"])
    result["equivocal_as_claims"]["counts"] = dict(zip(("tp", "fp", "fn", "tn"), eq_table))
    ordinal = {"value": ordinal_claim_auc(tp, fp, fn, tn, counts["eq_verified"],
                                          counts["eq_failed"])}
    if ordinal["value"] is None:
        ordinal["undefined"] = "needs both verified and failed runs"
    if bootstrap:
        attach_interval(ordinal, "ci_cluster", bootstrap["headline"]["ordinal_claim_auc"])
    # The three-level score does not depend on how equivocal messages are read.
    result["ordinal_claim_auc"] = result["equivocal_as_claims"]["ordinal_claim_auc"] = ordinal
    if len(checked) < len(runs):
        result["sampling"] = sampling_projection(runs, checked, result["delivery_rate"])
    if any(r.get("condition") is not None for r in runs):
        result["conditions"] = condition_tables(checked)
        result.update(stratified_condition_tests(checked))
        if pair_column:
            result.update(mcnemar_pairs(checked, pair_column))
        else:
            result["mcnemar_skipped"] = ("no replicate or pair column (name one with "
                                         "--replicate), so no run has a real partner in "
                                         "the other condition")
    if any(r.get("cost") is not None for r in runs):
        result["cost"] = cost_figures(runs)
    if (result["clusters"] == "tasks" and 2 <= len(per_task) < FEW_CLUSTERS
            and len(checked) > len(per_task)):
        result["claim_within_tasks"] = claim_within_tasks(per_task)
    result["verdict_case"] = claim_verdict(result)
    result["verdict"] = verdict_sentences(result)
    return result


def claim_within_tasks(per_task):
    """The exact test of claim against verified outcome stratified by task.

    Each task is a 2x2 table (claimed or not, verified or not); only tasks with
    both claimed and unclaimed runs weigh in. Its odds ratio above 1 means claims
    are more common on verified runs.
    """
    strata = [(c["tp"], c["tp"] + c["fp"], c["fn"], c["fn"] + c["tn"])
              for _, c in sorted(per_task.items())]
    both = [t for t in strata if t[1] and t[3]]
    if not both:
        return {"p": None, "odds_ratio": None, "tasks": 0,
                "undefined": "no task has both claimed and unclaimed runs"}
    return {**stratified_exact_test(both), "tasks": len(both)}


def sampling_projection(runs, checked, delivery_rate):
    """Project the checked claims' delivery rate onto the unchecked claims.

    Expected verified deliveries = deliveries already verified + r x unchecked
    claims, with r's exact interval carried through the same sum.
    """
    claims = sum(1 for r in runs if r["claim"] is True)
    checked_claims = sum(1 for r in checked if r["claim"] is True)
    seen = sum(1 for r in checked if r["claim"] is True and r["verified"])
    unchecked_claims = claims - checked_claims
    value, (low, high) = delivery_rate["value"], delivery_rate["ci"]

    def project(rate):
        return None if rate is None else seen + rate * unchecked_claims
    expected = [project(value), project(low), project(high)]
    return {
        "runs_checked": len(checked),
        "runs_unchecked": len(runs) - len(checked),
        "claims": claims,
        "claims_checked": checked_claims,
        "verified_deliveries_seen": seen,
        "expected_verified_deliveries": {"value": expected[0], "ci": expected[1:]},
        "inflation": {"value": claims_per_delivery(claims, expected[0]),
                      "ci": [claims_per_delivery(claims, expected[2]),
                             claims_per_delivery(claims, expected[1])]},
    }


def claims_per_delivery(claims, deliveries):
    """Claims billed per (expected) verified delivery: infinite where none is expected.

    >>> claims_per_delivery(8, 2.0), claims_per_delivery(8, 0.0), claims_per_delivery(0, 0.0)
    (4.0, inf, None)
    """
    if deliveries is None or claims == 0:
        return None
    return math.inf if deliveries == 0 else claims / deliveries


def condition_tables(checked):
    """The 2x2 table and completion rate for each condition."""
    tables = []
    for condition in sorted({r["condition"] for r in checked}, key=str):
        rows = [r for r in checked if r["condition"] == condition]
        cells = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
        for run in rows:
            claimed = run["claim"] is True
            cells[("tp" if run["verified"] else "fp") if claimed
                  else ("fn" if run["verified"] else "tn")] += 1
        verified = cells["tp"] + cells["fn"]
        tables.append({"condition": condition, "runs": len(rows), "verified": verified,
                       "completion_rate": proportion(verified, len(rows)), **cells})
    return tables


def mcnemar_pairs(checked, pair_column):
    """Pair runs of the same task and replicate across each two conditions.

    A run with a blank replicate cell, or whose task and replicate have no run
    in the other condition, is left unpaired and counted.
    """
    conditions = sorted({r["condition"] for r in checked}, key=str)
    by_key, first_run = {}, {}
    for run in checked:
        if not run.get("replicate"):
            continue
        key = (run["condition"], run["task"], run["replicate"])
        if key in by_key:
            raise InputError(f"runs {first_run[key]} and {run['run_id']} are both replicate "
                             f"{run['replicate']!r} of task {run['task']!r} in condition "
                             f"{run['condition']!r}: McNemar pairs need one run each")
        by_key[key], first_run[key] = run["verified"], run["run_id"]
    results = []
    for i, first in enumerate(conditions):
        for second in conditions[i + 1:]:
            keys = sorted({(t, rep) for c, t, rep in by_key if c == first}
                          & {(t, rep) for c, t, rep in by_key if c == second}, key=str)
            if not keys:
                continue
            runs_in_both = sum(1 for r in checked if r["condition"] in (first, second))
            b = sum(1 for k in keys if by_key[(first, *k)] and not by_key[(second, *k)])
            c = sum(1 for k in keys if not by_key[(first, *k)] and by_key[(second, *k)])
            results.append({"conditions": [first, second], "pairs": len(keys),
                            "paired_by": ["task", pair_column],
                            "unpaired": runs_in_both - 2 * len(keys),
                            "b": b, "c": c, "discordant": b + c, "p": mcnemar_exact(b, c)})
    if not results:
        return {"mcnemar_skipped": f"no task and {pair_column} value has a run in two "
                                   f"conditions"}
    out = {"mcnemar_pairs": results}
    if len(conditions) == 2:
        out["mcnemar"] = results[0]
    return out


def stratified_condition_tests(checked):
    """The exact test stratified by task for each two conditions (no pairing, no order)."""
    conditions = sorted({r["condition"] for r in checked}, key=str)
    tests = []
    for i, first in enumerate(conditions):
        for second in conditions[i + 1:]:
            per_task = {}
            for run in checked:
                if run["condition"] in (first, second):
                    cells = per_task.setdefault(run["task"], [0, 0, 0, 0])
                    side = 0 if run["condition"] == first else 2
                    cells[side] += bool(run["verified"])
                    cells[side + 1] += 1
            strata = [tuple(cells) for _, cells in sorted(per_task.items())]
            both = [t for t in strata if t[1] and t[3]]
            test = (stratified_exact_test(both) if both else
                    {"p": None, "odds_ratio": None, "undefined": "no task was run in both"})
            test.update(conditions=[first, second], tasks=len(both),
                        runs=sum(t[1] + t[3] for t in both),
                        runs_in_one_condition_tasks=sum(t[1] + t[3] for t in strata
                                                        if not (t[1] and t[3])))
            tests.append(test)
    out = {"stratified_tests": tests}
    if len(conditions) == 2:
        out["stratified_exact"] = tests[0]
    return out


def stratified_exact_test(strata):
    """Exact conditional test of no condition effect in 2x2xK tables, one per task.

    `strata` holds (verified in the first condition, runs in the first, verified
    in the second, runs in the second) per task. Given every table's margins,
    S = the runs verified in the first condition follows the convolution of K
    hypergeometric laws when the condition has no effect (the common odds ratio
    is 1). The two-sided p sums the values of S no more likely than the observed
    one, with R's relative tolerance of 1e-7: mantelhaen.test(exact = TRUE).
    Exact integers up to EXACT_STRATIFIED_RUNS runs, floats beyond.

    >>> test = stratified_exact_test([(2, 2, 0, 2), (1, 2, 0, 2)])
    >>> test["verified_first"], test["expected_first"], test["support"], round(test["p"], 6)
    (3, 1.5, [0, 3], 0.166667)
    """
    exact = sum(t[1] + t[3] for t in strata) <= EXACT_STRATIFIED_RUNS
    law, offset, low, high = [1], 0, 0, 0     # law[i] is the weight of S = offset + i
    for verified_first, first, verified_second, second in strata:
        verified = verified_first + verified_second
        start, end = max(0, verified - second), min(first, verified)
        weights = [math.comb(first, x) * math.comb(second, verified - x)
                   for x in range(start, end + 1)]
        low, high, offset = low + start, high + end, offset + start
        if len(weights) == 1:
            continue
        if not exact:
            total = sum(weights)
            weights = [w / total for w in weights]
        law = convolve(law, weights, exact)
        if not exact:         # drop the tails that have underflowed to exactly 0.0
            first_kept = next(i for i, w in enumerate(law) if w)
            law = law[first_kept:len(law) - next(i for i, w in enumerate(reversed(law)) if w)]
            offset += first_kept
    observed = sum(t[0] for t in strata)
    weight = law[observed - offset] if 0 <= observed - offset < len(law) else 0.0
    if exact:
        tolerance = weight * (1 + R_TIE_TOLERANCE)
        p = float(Fraction(sum(w for w in law if w <= tolerance), sum(law)))
    else:
        p = min(1.0, math.fsum(w for w in law if w <= weight * (1 + 1e-7)) / math.fsum(law))
    return {"verified_first": observed,
            "expected_first": math.fsum(t[1] * (t[0] + t[2]) / (t[1] + t[3]) for t in strata),
            "support": [low, high], "p": p,
            "odds_ratio": conditional_odds_ratio(law, offset, observed, [low, high])}


def conditional_odds_ratio(law, offset, observed, support):
    """The conditional maximum-likelihood common odds ratio (R's 'common odds ratio').

    Under a common odds ratio psi, P(S = s) is proportional to law[s - offset]
    psi^s; the estimate solves E_psi[S] = observed, by bisection on log psi. It
    is 0 or infinite at the ends of the support, and None where S cannot vary.

    >>> round(conditional_odds_ratio([1, 2, 1], 0, 1, [0, 2]), 12)
    1.0
    >>> conditional_odds_ratio([1, 1], 0, 1, [0, 1]), conditional_odds_ratio([1], 3, 3, [3, 3])
    (inf, None)
    """
    if support[0] == support[1]:
        return None
    if observed == support[0]:
        return 0.0
    if observed == support[1]:
        return math.inf
    logs = [(math.log(w) if w > 0 else -math.inf, s) for s, w in enumerate(law)]

    def mean(t):
        top = max(lw + t * s for lw, s in logs)
        weights = [(math.exp(lw + t * s - top), s) for lw, s in logs]
        return math.fsum(w * s for w, s in weights) / math.fsum(w for w, _ in weights)
    target, left, right = observed - offset, -1.0, 1.0
    for _ in range(60):        # beyond e^(2^60) the tail has underflowed: say so
        if mean(left) <= target:
            break
        left *= 2
    else:
        return 0.0
    for _ in range(60):
        if mean(right) >= target:
            break
        right *= 2
    else:
        return math.inf
    for _ in range(200):
        middle = (left + right) / 2
        if middle in (left, right):
            break
        left, right = (middle, right) if mean(middle) < target else (left, middle)
    return math.exp((left + right) / 2)


def convolve(law, weights, exact):
    """The law of a sum: `law` convolved with `weights`, rescaled when in floats.

    Each weight adds a shifted, scaled copy of `law`; map() keeps the inner
    loops in C.

    >>> convolve([1, 2], [1, 1, 1], True)
    [1, 3, 3, 2]
    """
    size = len(law)
    out = [0] * (size + len(weights) - 1)
    for j, w in enumerate(weights):
        out[j:j + size] = map(operator.add, out[j:j + size],
                              map(operator.mul, law, itertools.repeat(w)))
    if not exact:
        top = max(out)
        out = [v / top for v in out]
    return out


def cost_figures(runs):
    """Spend in all, per run and per claim; per verified delivery on the verified runs.

    In sampling mode the total covers every priced run, while the figures that
    need a verdict (per verified delivery or completion, spent on false claims)
    read the verified runs only, and say so.
    """
    priced = [r for r in runs if r.get("cost") is not None]
    checked = [r for r in priced if r["verified"] is not None]
    total = math.fsum(r["cost"] for r in priced)
    checked_total = math.fsum(r["cost"] for r in checked)
    claims = sum(1 for r in priced if r["claim"] is True)
    delivered = sum(1 for r in checked if r["claim"] is True and r["verified"])
    completed = sum(1 for r in checked if r["verified"])
    return {
        "runs_priced": len(priced),
        "runs_priced_and_verified": len(checked),
        "total": total,
        "per_run": total / len(priced) if priced else None,
        "per_claim": total / claims if claims else None,
        "total_verified_runs": checked_total,
        "per_verified_completion": checked_total / completed if completed else None,
        "per_verified_delivery": checked_total / delivered if delivered else None,
        "spent_on_false_claims": math.fsum(r["cost"] for r in checked
                                           if r["claim"] is True and not r["verified"]),
    }


def rater_agreement(labels):
    """Majority labels, unanimity and Fleiss' kappa over claimed/not/equivocal."""
    categories = ("claimed", "not", "equivocal")
    counts, unanimous, majority_only, split = [], 0, 0, 0
    for row in labels:
        tally = [sum(1 for label in row if label == category) for category in categories]
        counts.append(tally)
        top = max(tally)
        if top == len(row):
            unanimous += 1
        elif top * 2 > len(row):
            majority_only += 1
        else:
            split += 1
    return {"raters": len(labels[0]) if labels else 0, "runs": len(labels),
            "unanimous": unanimous, "majority_only": majority_only, "no_majority": split,
            "fleiss_kappa": fleiss_kappa(counts)}


def majority_label(row):
    """The label most raters gave; no strict majority reads as equivocal."""
    for label in ("claimed", "not", "equivocal"):
        if sum(1 for x in row if x == label) * 2 > len(row):
            return label
    return "equivocal"


def criteria_summary(rows, run_ids):
    """Criteria that never vary, and runs whose varying criteria share one verdict.

    `rows` are (run_id, criterion, passed) triples.
    """
    verdicts = {}
    for run_id, criterion, passed in rows:
        by_run = verdicts.setdefault(criterion, {})
        if by_run.get(run_id, passed) != passed:
            raise InputError(f"criteria: run {run_id!r} has two verdicts for criterion "
                             f"{criterion!r}")
        by_run[run_id] = passed
    unknown = sorted({r for r, _, _ in rows} - set(run_ids))
    if unknown:
        raise InputError(f"criteria: {len(unknown)} run id(s) not in the runs table: "
                         f"{', '.join(unknown[:10])}{' ...' if len(unknown) > 10 else ''}")
    constant = sorted(c for c, by_run in verdicts.items() if len(set(by_run.values())) == 1)
    varying = set(verdicts) - set(constant)
    per_run = {}
    for criterion in varying:
        for run_id, passed in verdicts[criterion].items():
            per_run.setdefault(run_id, set()).add(passed)
    return {"criteria": len(verdicts), "never_vary": len(constant),
            "runs_with_varying_criteria": len(per_run),
            "runs_where_varying_criteria_agree": sum(1 for v in per_run.values() if len(v) == 1)}


def smallest_fisher_p(tp, fp, fn, tn):
    """The smallest two-sided Fisher p any table with these margins could reach.

    The hypergeometric law is unimodal, so its least likely table, the one with
    the smallest p, is one of the two extreme tables.

    >>> round(smallest_fisher_p(3, 0, 0, 3), 6), round(smallest_fisher_p(2, 1, 1, 2), 6)
    (0.1, 0.1)
    """
    row1, row2, column1 = tp + fp, fn + tn, tp + fn
    ends = {max(0, column1 - row2), min(row1, column1)}
    return min(fisher_exact(x, row1 - x, column1 - x, row2 - column1 + x) for x in ends)


def claim_verdict(result):
    """Which of the verdict's cases the data support, with the figures that decide it.

    - "informative": Fisher's p < SIGNIFICANCE and kappa's cluster interval, where
      there is a usable one, lies on kappa's side of 0; `direction` says which way.
    - "no_useful_agreement": kappa's interval lies wholly below USEFUL_AGREEMENT.
    - "too_few_runs": neither; an interval narrower than USEFUL_AGREEMENT always
      tells (it lies above 0 or below the bound), and `clusters_needed` and
      `runs_needed` scale today's by the squared ratio of the widths (a cluster
      interval shrinks as 1/sqrt(clusters)).
    - "claim_constant": every run claimed, or none did: no information by construction.
    - "undefined": kappa is undefined (one outcome class).
    A withheld (degenerate) bootstrap interval counts as no interval; then
    Fisher's p decides alone, except with fewer than FEW_CLUSTERS tasks holding
    several runs each: there the exact test of claim against outcome stratified
    by task (`claim_within_tasks`) takes Fisher's place.
    """
    kappa, fisher_p, c = result["kappa"], result["fisher_p"], result["counts"]
    value, (low, high) = kappa["value"], kappa["ci"]
    case = {"significance": SIGNIFICANCE, "useful_agreement": USEFUL_AGREEMENT,
            "kappa_interval": None if low is None else [low, high]}
    if value is None:
        return {**case, "case": "undefined"}
    if c["claims"] in (0, c["runs"]):
        return {**case, "case": "claim_constant"}
    if low is None:
        case["no_interval"] = (kappa.get("cluster_interval_withheld", {}).get("reason")
                               or ("only one cluster, nothing to resample"
                                   if result["n_clusters"] < 2 else
                                   "no bootstrap was run (--boot 0)" if not result["boot"]
                                   else "no resample defined it"))
    if "claim_within_tasks" in result:
        # Too few tasks for an interval, and Fisher's pooled p would count runs of
        # one task as independent: only the comparison within tasks can tell.
        within = result["claim_within_tasks"]
        case["within_tasks_p"] = within["p"]
        if within["p"] is not None and within["p"] < SIGNIFICANCE and within["odds_ratio"]:
            return {**case, "case": "informative", "at_best_slight": False,
                    "direction": "right" if within["odds_ratio"] > 1 else "wrong"}
        fisher_p = 1.0
    direction = "right" if value > 0 else "wrong" if value < 0 else None
    excludes_zero = low is None or (low > 0 if value > 0 else high < 0)
    if fisher_p < SIGNIFICANCE and direction and excludes_zero:
        return {**case, "case": "informative", "direction": direction,
                "at_best_slight": high is not None and high < USEFUL_AGREEMENT}
    if high is not None and high < USEFUL_AGREEMENT:
        return {**case, "case": "no_useful_agreement"}
    case.update(case="too_few_runs", width_needed=USEFUL_AGREEMENT,
                smallest_fisher_p=smallest_fisher_p(c["tp"], c["fp"], c["fn"], c["tn"]))
    if low is not None:
        width = high - low
        factor = (width / USEFUL_AGREEMENT) ** 2
        case.update(width=width, runs_needed=math.ceil(c["runs"] * factor),
                    clusters_needed=math.ceil(result["n_clusters"] * factor))
    return case


def verdict_sentences(result):
    """The closing verdict in plain words, read off claim_verdict's case and the figures."""
    case, kappa = result["verdict_case"], result["kappa"]
    if case["case"] == "undefined":
        sentences = [f"Cohen's kappa is undefined ({kappa.get('undefined')}), so what the "
                     "claim says about success cannot be measured here."]
    elif case["case"] == "claim_constant":
        sentences = [f"The claim never varies ({'every' if result['counts']['claims'] else 'no'}"
                     f" run claims completion), so it carries no information about success "
                     f"by construction (kappa {fmt(kappa['value'])})."]
    else:
        sentences = claim_sentences(result, case)
    if result["n_clusters"] < FEW_CLUSTERS and case.get("kappa_interval") is None \
            and "no_interval" not in case:
        sentences.append(f"Only {plural(result['n_clusters'], 'cluster')}: no bootstrap "
                         "interval is shown; the verdict rests on Fisher's p and the exact "
                         "intervals.")
    c = result["counts"]
    checked = "Among the verified runs, paying" if "sampling" in result else "Paying"
    if c["claims"] and c["tp"]:
        sentences.append(
            f"{checked} per claim bills {plural(c['claims'], 'claim')} for "
            f"{plural(c['tp'], 'verified delivery', 'verified deliveries')}: "
            f"{fmt(result['inflation']['value'])} claims per delivery, so "
            f"{fmt(100 * result['false_completion_rate']['value'], 1)}% of a per-claim "
            f"bill pays for completions that did not happen.")
    elif c["claims"]:
        sentences.append(f"None of the {plural(c['claims'], 'claim')} was verified: paying "
                         "per claim pays entirely for completions that did not happen.")
    return sentences


def claim_sentences(result, case):
    """The verdict's first sentences: what the claim says about success, by case."""
    kappa, bound = result["kappa"], fmt(case["useful_agreement"], 1)
    interval = (f"kappa {fmt(kappa['value'])} {fmt_ci(case['kappa_interval'])}"
                if case["kappa_interval"] else
                f"kappa {fmt(kappa['value'])}, no usable interval: {case['no_interval']}")
    evidence = (f"{interval}; Fisher p {fmt_p(result['fisher_p'])}, "
                f"claim AUC {fmt(result['claim_auc']['value'])}")
    if "within_tasks_p" in case:
        within = result["claim_within_tasks"]
        evidence += ("; Fisher counts runs of one task as independent, and within tasks "
                     + (f"(exact test stratified by task, {plural(within['tasks'], 'task')}) "
                        f"p is {fmt_p(within['p'])}" if within["p"] is not None
                        else "nothing can be compared: " + within["undefined"]))
    if case["case"] == "informative" and case["direction"] == "right":
        slight = (f" It is at best slight agreement: the interval lies below {bound}."
                  if case["at_best_slight"] else "")
        return [f"The claim carries information about success ({evidence}).{slight}"]
    if case["case"] == "informative":
        return [f"The claim carries information in the wrong direction: claims are more "
                f"common on runs that failed ({evidence})."]
    if case["case"] == "no_useful_agreement":
        return [f"The claim carries no usable information about success: the data exclude "
                f"any useful agreement, since kappa's interval lies wholly below {bound}, "
                f"where Landis and Koch's 'slight' agreement ends ({evidence}; AUC 0.5 is "
                f"chance)."]
    sentences = [f"Too few runs to tell whether the claim carries information about "
                 f"success ({evidence}): neither a real association nor its absence is "
                 f"shown."]
    if case["smallest_fisher_p"] >= case["significance"]:
        sentences.append(f"With these margins no table could reach Fisher p < "
                         f"{case['significance']} (the smallest attainable is "
                         f"{fmt_p(case['smallest_fisher_p'])}).")
    need = (f"A kappa interval narrower than {bound} always tells (it lies above 0 or "
            f"below {bound})")
    if "width" in case and result["clusters"] == "tasks":
        need += (f"; this one is {fmt(case['width'])} wide, and intervals shrink as "
                 f"1/sqrt(tasks), so roughly {case['clusters_needed']:,} tasks "
                 f"({case['runs_needed']:,} runs at today's runs per task) would be needed")
    elif "width" in case:
        need += (f"; this one is {fmt(case['width'])} wide, and intervals shrink as "
                 f"1/sqrt(runs), so roughly {case['runs_needed']:,} runs would be needed")
    sentences.append(need + ".")
    return sentences


def plural(count, noun, nouns=None):
    """'1 task', '2 tasks'.

    >>> plural(1, "task"), plural(3, "task"), plural(2, "delivery", "deliveries")
    ('1 task', '3 tasks', '2 deliveries')
    """
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"


def fmt_p(p):
    """A p-value to 3 decimals, or '<0.001' rather than a misleading 0.000.

    >>> fmt_p(1.0), fmt_p(0.0123), fmt_p(1.9e-9)
    ('1.000', '0.012', '<0.001')
    """
    return "<0.001" if p is not None and p < 0.0005 else fmt(p)


# === Input ===
def read_claim(value, where):
    """A claim cell: True, False, or 'equivocal'."""
    if str(value).strip().lower() in EQUIVOCAL_WORDS:
        return "equivocal"
    if is_missing(value):
        raise InputError(f"{where}: the claim is empty (use yes, no or equivocal)")
    try:
        return parse_bool(value, where)
    except InputError:
        raise InputError(f"{where}: unknown claim {value!r} (expected yes/no, true/false, "
                         f"1/0, claimed/not, or equivocal)") from None


def rater_label(value, where):
    claim = read_claim(value, where)
    return "equivocal" if claim == "equivocal" else ("claimed" if claim else "not")


def read_runs(table, args, verdicts=None):
    """Turn table rows into run dicts, checking every cell it uses."""
    run_id_col = table.column(args.run_id, flag="--run-id", candidates=RUN_ID_COLUMNS,
                              required=bool(args.run_id or verdicts))
    task_col = table.column(args.task, flag="--task", candidates=TASK_COLUMNS,
                            required=bool(args.task))
    raters = [c.strip() for c in args.raters.split(",")] if args.raters else []
    if args.raters and len(raters) < 2:
        raise InputError("--raters: name at least two rater columns, e.g. a,b,c")
    for rater in raters:
        table.column(rater, flag="--raters")
    claim_col = table.column(args.claim, flag="--claim", candidates=CLAIM_COLUMNS,
                             required=not raters)
    verified_col = None if verdicts else table.column(
        args.verified, flag="--verified", candidates=VERIFIED_COLUMNS)
    condition_col = table.column(args.condition, flag="--condition",
                                 candidates=("condition",), required=bool(args.condition))
    replicate_col = table.column(args.replicate, flag="--replicate",
                                 candidates=REPLICATE_COLUMNS, required=bool(args.replicate))
    cost_col = table.column(args.cost, flag="--cost") if args.cost else None
    runs, seen = [], {}
    for i, row in enumerate(table.rows):
        run_id = row[run_id_col].strip() if run_id_col else f"row-{table.lines[i]}"
        if run_id_col and not run_id:
            raise InputError(f"{table.where(i, run_id_col)}: empty run id")
        if run_id in seen:
            raise InputError(f"{table.where(i, run_id_col)}: duplicate run id {run_id!r} "
                             f"(first at row {seen[run_id]})")
        seen[run_id] = table.lines[i]
        run = {"run_id": run_id,
               "task": row[task_col].strip() if task_col else run_id}
        if task_col and not run["task"]:
            raise InputError(f"{table.where(i, task_col)}: empty task id")
        if raters:
            run["raters"] = [rater_label(row[c], table.where(i, c)) for c in raters]
            label = majority_label(run["raters"])
            run["claim"] = "equivocal" if label == "equivocal" else label == "claimed"
        else:
            run["claim"] = read_claim(row[claim_col], table.where(i, claim_col))
        if verdicts is not None:
            run["verified"] = verdicts.get(run_id)
        else:
            cell = row[verified_col]
            run["verified"] = (None if is_missing(cell)
                               else parse_bool(cell, table.where(i, verified_col)))
        if condition_col:
            run["condition"] = row[condition_col].strip()
            if not run["condition"]:
                raise InputError(f"{table.where(i, condition_col)}: empty condition")
        if replicate_col:
            run["replicate"] = row[replicate_col].strip()
        if cost_col:
            run["cost"] = parse_number(row[cost_col], table.where(i, cost_col))
        runs.append(run)
    # Without a replicate or pair column there are no real pairs: pairing the k-th
    # run of a task in one condition with its k-th run in the other would make
    # McNemar's p depend on how the runs happen to be numbered.
    return runs, {"task": task_col, "raters": raters, "replicate": replicate_col}


def read_verdicts(inputs, path):
    """From regrade.py's verdicts: run id -> completed, the status of each blank one, and
    run id -> instance (the task, for runs tables without a task column).

    A blank `completed` is a grading error (the grader could not say), so that
    run counts as unchecked rather than failed.
    """
    table = inputs.read_table(path)
    run_id_col = table.column(None, flag="--verdicts run id", candidates=RUN_ID_COLUMNS)
    completed_col = table.column(None, flag="--verdicts outcome",
                                 candidates=VERIFIED_COLUMNS)
    status_col = table.column(None, candidates=("status",), required=False)
    task_col = table.column(None, candidates=TASK_COLUMNS, required=False)
    verdicts, errors, tasks = {}, {}, {}
    for i, row in enumerate(table.rows):
        run_id = row[run_id_col].strip()
        if run_id in verdicts:
            raise InputError(f"{table.where(i, run_id_col)}: duplicate run id {run_id!r}")
        cell = row[completed_col]
        verdicts[run_id] = (None if is_missing(cell)
                            else parse_bool(cell, table.where(i, completed_col)))
        if verdicts[run_id] is None:
            errors[run_id] = row[status_col].strip() if status_col else "no verdict"
        if task_col and row[task_col].strip():
            tasks[run_id] = row[task_col].strip()
    return verdicts, errors, tasks


def read_criteria(table):
    run_col = table.column(None, flag="criteria run id", candidates=RUN_ID_COLUMNS)
    criterion_col = table.column(None, flag="criteria name",
                                 candidates=("criterion", "criterion_id", "test", "name"))
    passed_col = table.column(None, flag="criteria verdict",
                              candidates=("passed", "pass", "verdict", "result", "ok"))
    return [(row[run_col].strip(), row[criterion_col].strip(),
             parse_bool(row[passed_col], table.where(i, passed_col)))
            for i, row in enumerate(table.rows)]


def parse_counts(text):
    """--counts tp=46,fp=22,fn=3,tn=1[,eq_verified=3,eq_failed=1] -> counts dict."""
    counts = dict.fromkeys(FIELDS, 0)
    for part in text.split(","):
        key, _, value = part.partition("=")
        key = key.strip()
        if key not in counts or not value.strip().isdigit():
            raise InputError(f"--counts: expected tp=N,fp=N,fn=N,tn=N (optionally "
                             f"eq_verified=N,eq_failed=N), got {part.strip()!r}")
        counts[key] = int(value)
    if counts["eq_verified"] > counts["fn"] or counts["eq_failed"] > counts["tn"]:
        raise InputError("--counts: equivocal messages are read as not claiming, so "
                         "eq_verified <= fn and eq_failed <= tn")
    return counts


def runs_from_counts(counts):
    """Expand a 2x2 table into runs, each its own cluster."""
    runs = []
    for key, claim, verified in (("tp", True, True), ("fp", True, False),
                                 ("fn", False, True), ("tn", False, False)):
        for _ in range(counts[key]):
            runs.append({"claim": claim, "verified": verified})
    for key, verified in (("eq_verified", True), ("eq_failed", False)):
        marked = [r for r in runs if r["claim"] is False and r["verified"] is verified]
        for run in marked[:counts[key]]:
            run["claim"] = "equivocal"
    for number, run in enumerate(runs, 1):
        run["run_id"] = run["task"] = f"run-{number}"
    return runs


# === Report ===
FIGURE_ROWS = (
    ("delivery_rate", "delivery rate r (verified claims / claims)"),
    ("false_completion_rate", "false-completion rate 1 - r"),
    ("inflation", "inflation 1/r (claims billed per delivery)"),
    ("completion_rate", "completion rate (verified / runs)"),
    ("sensitivity", "sensitivity (claimed | verified)"),
    ("specificity", "specificity (not claimed | failed)"),
    ("claim_auc", "claim AUC ((sensitivity + specificity) / 2)"),
    ("ordinal_claim_auc", "claim AUC, 3 levels (yes > equivocal > no)"),
    ("kappa", "Cohen's kappa (claim vs verified)"),
)


def figure_cells(figure, name):
    """value, exact interval, cluster interval cells for one figure."""
    exact = fmt_ci(figure.get("ci")) if name != "kappa" else ""
    cluster = fmt_ci(figure.get("ci" if name == "kappa" else "ci_cluster"))
    return [fmt(figure["value"]), exact, cluster]


def render(result, style, source):
    """The whole report as text or Markdown; reads the result, computes nothing."""
    heading = (lambda t: f"## {t}") if style == "markdown" else (lambda t: f"{t}\n{'=' * len(t)}")
    sub = (lambda t: f"### {t}") if style == "markdown" else (lambda t: t)
    c = result["counts"]
    out = [heading(f"Delivery audit: {source}"), ""]
    out.append((f"{plural(result['n_runs'], 'run')} in {plural(result['n_tasks'], 'task')}"
                if result["clusters"] == "tasks" else
                f"{plural(result['n_runs'], 'run')}; no task column, so each run is its own "
                f"cluster")
               + (f"; {result['n_checked']} verified (sampling mode, see below)"
                  if "sampling" in result else "") + ".")
    out += ["", sub("Claims against verified outcomes"), ""]
    out.append(render_table(
        ["", "verified", "not verified", "total"],
        [["claimed", c["tp"], c["fp"], c["claims"]],
         ["not claimed", c["fn"], c["tn"], c["fn"] + c["tn"]],
         ["total", c["verified"], c["fp"] + c["tn"], c["runs"]]], style))
    out.append("")
    out.append(f"Equivocal messages: {c['equivocal']} (read as not claiming; "
               f"{c['equivocal_verified']} verified, {c['equivocal_failed']} not)."
               if c["equivocal"] else "No equivocal messages.")
    cluster_name = "task" if result["clusters"] == "tasks" else "run"
    out += ["", sub("The claim as evidence of delivery"), ""]
    rows = [[label] + figure_cells(result[name], name) for name, label in FIGURE_ROWS]
    rows.append(["Fisher exact p (two-sided)", fmt_p(result["fisher_p"]), "", ""])
    out.append(render_table(["figure", "value", "95% exact",
                             f"95% {cluster_name} bootstrap"], rows, style))
    out.append("")
    for name, label in FIGURE_ROWS:
        if result[name].get("undefined"):
            name_only = label.split(" (")[0]
            out.append(f"{name_only[0].upper() + name_only[1:]} is undefined: "
                       f"{result[name]['undefined']}.")
    if result["boot"]:
        out.append(f"Bootstrap: {result['boot']} resamples of whole {cluster_name}s; Cohen's "
                   f"kappa has only the bootstrap interval."
                   + (" Fewer than 1,000 resamples: the intervals are rough."
                      if result["boot"] < 1000 else ""))
    else:
        out.append("No bootstrap (--boot 0, or fewer than two clusters to resample).")
    skipped = [f"{label.split(' (')[0]} {result[name]['cluster_resamples_skipped']}"
               for name, label in FIGURE_ROWS if result[name].get("cluster_resamples_skipped")]
    if skipped:
        out.append(f"Resamples skipped where a figure was undefined: {', '.join(skipped)}.")
    out += withheld_notes(result, cluster_name)
    eq = result["equivocal_as_claims"]
    out += ["", sub(f"If the equivocal messages ({c['equivocal']}) counted as claims"), ""]
    changes = []
    for name, label in FIGURE_ROWS:
        before, after = result[name]["value"], eq[name]["value"]
        if fmt(before) != fmt(after):
            changes.append([label, fmt(before), fmt(after)])
    if fmt_p(result["fisher_p"]) != fmt_p(eq["fisher_p"]):
        changes.append(["Fisher exact p", fmt_p(result["fisher_p"]), fmt_p(eq["fisher_p"])])
    if c["equivocal"] == 0:
        out.append("No message was equivocal: nothing changes.")
    elif changes:
        e = eq["counts"]
        out.append(f"Claims {c['claims']} -> {e['tp'] + e['fp']}, false claims {c['fp']} -> "
                   f"{e['fp']}. Figures that change at 3 decimals:")
        out.append("")
        out.append(render_table(["figure", "headline", "equivocal as claims"], changes, style))
    else:
        out.append("Nothing changes at 3 decimals.")
    if "sampling" in result:
        s = result["sampling"]
        out += ["", sub("Sampling mode: projected onto every claim"), ""]
        out.append(f"Only {s['runs_checked']} of {s['runs_checked'] + s['runs_unchecked']} "
                   f"runs were verified ({s['claims_checked']} of "
                   f"{plural(s['claims'], 'claim')}); every figure above is computed on the "
                   f"verified runs.")
        if result.get("grading_errors"):
            out.append("Runs the grader could not verify (left out, not counted as failures): "
                       + ", ".join(f"{status} {count}" for status, count
                                   in result["grading_errors"].items()) + ".")
        out.append(f"Expected verified deliveries among all {plural(s['claims'], 'claim')}: "
                   f"{s['verified_deliveries_seen']} verified plus r times the "
                   f"{s['claims'] - s['claims_checked']} unchecked, "
                   f"{fmt(s['expected_verified_deliveries']['value'], 1)} "
                   f"{fmt_ci(s['expected_verified_deliveries']['ci'], 1)}; inflation "
                   f"{fmt(s['inflation']['value'])} {fmt_ci(s['inflation']['ci'])} "
                   f"(r's exact interval, projected).")
    if "conditions" in result:
        out += ["", sub("By condition"), ""]
        out.append(render_table(
            ["condition", "runs", "verified", "completion rate", "95% exact", "claimed",
             "false claims"],
            [[t["condition"], t["runs"], t["verified"], fmt(t["completion_rate"]["value"]),
              fmt_ci(t["completion_rate"]["ci"]), t["tp"] + t["fp"], t["fp"]]
             for t in result["conditions"]], style))
        for test in result.get("stratified_tests", []):
            out += ["", stratified_line(test)]
        for pair in result.get("mcnemar_pairs", []):
            out += ["", mcnemar_line(pair)]
        if "mcnemar_skipped" in result:
            out += ["", f"McNemar skipped: {result['mcnemar_skipped']}; the stratified test "
                        f"above needs no pairs."]
    if "raters" in result:
        r = result["raters"]
        out += ["", sub("Raters"), ""]
        out.append(f"{r['raters']} raters on {r['runs']} messages: unanimous on "
                   f"{r['unanimous']}, majority only on {r['majority_only']}, no majority "
                   f"on {r['no_majority']} (read as equivocal); Fleiss' kappa "
                   f"{fmt(r['fleiss_kappa'])}. The claim is the majority label.")
    if "criteria" in result:
        k = result["criteria"]
        out += ["", sub("Criteria"), ""]
        out.append(f"{plural(k['criteria'], 'criterion', 'criteria')}, {k['never_vary']} "
                   f"never vary. In "
                   f"{k['runs_where_varying_criteria_agree']} of "
                   f"{k['runs_with_varying_criteria']} runs the criteria that vary share one "
                   f"verdict: criterion-level results there are the run-level result "
                   f"reweighted, not independent evidence.")
    if "cost" in result:
        k = result["cost"]
        out += ["", sub("Cost"), ""]
        sampled = k["runs_priced_and_verified"] < k["runs_priced"]
        note = " (verified runs only)" if sampled else ""
        out.append(render_table(["", "amount"], [
            ["total", fmt(k["total"], 2)], ["per run", fmt(k["per_run"], 2)],
            ["per claim (what per-claim billing charges)", fmt(k["per_claim"], 2)],
            ["per verified delivery" + note, fmt(k["per_verified_delivery"], 2)],
            ["per verified completion, any claim" + note,
             fmt(k["per_verified_completion"], 2)],
            ["spent on runs whose claim was false" + note,
             fmt(k["spent_on_false_claims"], 2)]], style))
    if result.get("verdicts_not_in_runs"):
        out += ["", f"{plural(result['verdicts_not_in_runs'], 'verdict')} in the --verdicts "
                    f"file named runs that are not in the runs table; they were ignored."]
    out += ["", sub("Verdict"), ""]
    # Markdown joins consecutive lines into one paragraph; keep the sentences apart.
    out += (result["verdict"] if style == "text"
            else [line for sentence in result["verdict"] for line in (sentence, "")][:-1])
    out += ["", render_provenance(result["provenance"], style)]
    if style == "text":       # wrap prose; tables, headings and the footer stay as they are
        out = [line if "\n" in line or line.startswith((" ", "-", "=")) or "  " in line
               else textwrap.fill(line, 100, break_on_hyphens=False) for line in out]
    return "\n".join(out) + "\n"


def fmt_p2(p):
    """McNemar's p to 2 decimals, as the report prints it; '<0.001' below 0.0005."""
    return fmt(p, 2) if p >= 0.01 else fmt_p(p)


def mcnemar_line(pair):
    """The McNemar sentence: how the runs were paired, how many were not, and p."""
    first, second = pair["conditions"]
    unpaired = (f"{plural(pair['unpaired'], 'run')} left unpaired" if pair["unpaired"]
                else "no run left unpaired")
    return (f"McNemar, {first} vs {second}: {plural(pair['pairs'], 'pair')} matched on task "
            f"and column {pair['paired_by'][1]!r}, {unpaired}; {pair['discordant']} discordant "
            f"({pair['b']} complete only in {first}, {pair['c']} only in {second}); exact p "
            f"{fmt_p2(pair['p'])}.")


def stratified_line(test):
    """The stratified exact test's sentence: what it conditions on, and p."""
    first, second = test["conditions"]
    if test["p"] is None:
        return (f"Exact test stratified by task, {first} vs {second}: undefined, since no task "
                f"was run in both conditions (the "
                f"{plural(test['runs_in_one_condition_tasks'], 'run')} cannot be compared "
                f"within a task).")
    left_out = (f"; {plural(test['runs_in_one_condition_tasks'], 'run')} in tasks run in only "
                f"one condition do not count" if test["runs_in_one_condition_tasks"] else "")
    return (f"Exact test stratified by task, {first} vs {second} (conditional on each "
            f"task's margins, as R's mantelhaen.test(exact = TRUE); no pairing or run order): "
            f"{plural(test['tasks'], 'task')} with runs in both{left_out}; "
            f"{test['verified_first']} verified in {first} against "
            f"{fmt(test['expected_first'], 1)} expected with no condition effect"
            + (f" (odds ratio of completing, {first} over {second}, "
               f"{fmt(test['odds_ratio'])}: the conditional MLE)"
               if test["odds_ratio"] is not None else "")
            + f"; exact p {fmt_p(test['p'])}.")


def withheld_notes(result, cluster_name):
    """One line per reason a bootstrap interval was withheld, naming its figures."""
    reasons = {}
    for name, label in FIGURE_ROWS:
        withheld = result[name].get("cluster_interval_withheld")
        if withheld:
            reasons.setdefault(withheld["reason"], []).append(label.split(" (")[0])
    return [f"No {cluster_name} bootstrap interval for {', '.join(names)}: {reason}, so "
            f"the bootstrap cannot show the uncertainty there; lean on the exact intervals and "
            f"Fisher's p."
            for reason, names in sorted(reasons.items())]


def render_svg(result):
    """Each rate as a dot with its exact interval, drawn from the printed numbers."""
    names = [(n, l) for n, l in FIGURE_ROWS if n not in ("inflation",)]
    width, row_height, left, plot = 720, 34, 330, 340
    height = 70 + row_height * len(names)

    def x(value):
        return left + plot * (value + 1) / 2 if value is not None else None
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="13">',
             f'<text x="10" y="22" font-size="15">Claims vs verified outcome '
             f'({result["n_runs"]} runs): value with 95% interval</text>']
    for tick in (-1, -0.5, 0, 0.5, 1):
        parts.append(f'<line x1="{x(tick):.1f}" y1="40" x2="{x(tick):.1f}" '
                     f'y2="{height - 22}" stroke="#ccc"/>')
        parts.append(f'<text x="{x(tick):.1f}" y="{height - 6}" text-anchor="middle">'
                     f'{tick}</text>')
    for row, (name, label) in enumerate(names):
        y = 55 + row_height * row
        figure = result[name]
        parts.append(f'<text x="10" y="{y + 4}">{label}: {fmt(figure["value"])}</text>')
        low, high = figure.get("ci") or (None, None)
        if low is not None:
            parts.append(f'<line x1="{x(low):.1f}" y1="{y}" x2="{x(high):.1f}" y2="{y}" '
                         f'stroke="#333" stroke-width="2"/>')
        if figure["value"] is not None:
            parts.append(f'<circle cx="{x(figure["value"]):.1f}" cy="{y}" r="4" '
                         f'fill="#c0392b"/>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


# === Main ===
def build_parser():
    parser = Parser(__doc__, prog="delivery_audit.py")
    parser.add_argument("runs", nargs="?", help="runs table (CSV, TSV, JSONL, JSON), '-' for "
                        "stdin, or a runs folder holding runs.csv")
    parser.add_argument("--demo", action="store_true",
                        help="audit the seed report's section 8 table embedded in this file")
    parser.add_argument("--counts", metavar="tp=N,fp=N,fn=N,tn=N",
                        help="audit a 2x2 table without a file (optionally eq_verified=N,"
                             "eq_failed=N: equivocal messages among fn and tn)")
    parser.add_argument("--verdicts", metavar="FILE",
                        help="take the verified column from this table (regrade.py's "
                             "verdicts.csv), joined on run id")
    parser.add_argument("--run-id", metavar="COL", help="run id column (default: run_id, id, run)")
    parser.add_argument("--task", metavar="COL",
                        help="task (cluster) column (default: task_id, instance_id, task)")
    parser.add_argument("--claim", metavar="COL", help="claim column (default: claimed, claim)")
    parser.add_argument("--verified", metavar="COL", help="verified outcome column "
                        "(default: verified, completed, resolved, gt_completed)")
    parser.add_argument("--condition", metavar="COL",
                        help="condition column (default: condition, if present)")
    parser.add_argument("--replicate", metavar="COL", help="replicate or pair column pairing "
                        "runs across conditions for McNemar (default: replicate, rep, attempt, "
                        "pair, pair_id; without one, McNemar is skipped)")
    parser.add_argument("--cost", metavar="COL", help="cost column, e.g. cost_usd")
    parser.add_argument("--raters", metavar="A,B,C",
                        help="rater columns; the claim becomes their majority label")
    parser.add_argument("--criteria", metavar="FILE", help="criteria table (default: "
                        "criteria.csv in the runs folder, if present)")
    parser.add_argument("--boot", type=int, default=DEFAULT_BOOT, metavar="N",
                        help=f"cluster bootstrap resamples (default: {DEFAULT_BOOT}; 0 for none)")
    parser.add_argument("--jobs", type=int, default=0, metavar="N",
                        help="processes for the bootstrap (default: 0, automatic: two on "
                             "large inputs); the numbers do not depend on it")
    parser.add_argument("--svg", metavar="FILE", help="also draw the rates to this SVG file")
    add_common_options(parser, __version__, __file__, seed=DEFAULT_SEED)
    return parser


def _main(argv):
    args = build_parser().parse_args(argv)
    if args.boot < 0:
        raise InputError("--boot: expected 0 or more resamples")
    sources = sum(bool(x) for x in (args.runs, args.demo, args.counts))
    if sources != 1:
        raise InputError("give exactly one of: a runs table or folder, --demo, --counts")
    inputs = Inputs()
    extras = {}
    if args.demo or args.counts:
        if args.verdicts or args.criteria:
            raise InputError("--verdicts and --criteria need a runs table")
        counts = DEMO_COUNTS if args.demo else parse_counts(args.counts)
        runs = runs_from_counts(counts)
        source = "the seed report's section 8 table (--demo)" if args.demo else "--counts"
        clusters_named = False
        pair_column = None
    else:
        table = inputs.read_table(args.runs)
        verdicts, errors, verdict_tasks = (read_verdicts(inputs, args.verdicts)
                                           if args.verdicts else (None, {}, {}))
        runs, found = read_runs(table, args, verdicts)
        if not found["task"] and verdict_tasks:
            for run in runs:
                run["task"] = verdict_tasks.get(run["run_id"], run["run_id"])
            found["task"] = "instance_id (from --verdicts)"
        if verdicts is not None:
            missing = [r["run_id"] for r in runs if r["run_id"] not in verdicts]
            if missing:
                raise InputError(f"{args.verdicts}: no verdict for {len(missing)} run(s): "
                                 f"{', '.join(missing[:10])}{' ...' if len(missing) > 10 else ''}")
            statuses = [errors[r["run_id"]] for r in runs if r["run_id"] in errors]
            if statuses:
                extras["grading_errors"] = {s: statuses.count(s) for s in sorted(set(statuses))}
            extras["verdicts_not_in_runs"] = len(set(verdicts) - {r["run_id"] for r in runs})
        if found["raters"]:
            extras["raters"] = rater_agreement([r["raters"] for r in runs])
        criteria_table = (inputs.read_table(args.criteria) if args.criteria
                          else inputs.sibling_table(args.runs, "criteria.csv"))
        if criteria_table is not None:
            extras["criteria"] = criteria_summary(read_criteria(criteria_table),
                                                  [r["run_id"] for r in runs])
        source = table.name
        clusters_named = bool(found["task"])
        pair_column = found.get("replicate")
    if not any(r["verified"] is not None for r in runs):
        raise InputError("no run has a verified outcome to audit against")
    if args.jobs < 0:
        raise InputError("--jobs: expected 0 (automatic) or more processes")
    result = audit(runs, boot=args.boot, seed=args.seed, clusters_named=clusters_named,
                   jobs=args.jobs, pair_column=pair_column)
    result.update(extras)
    result["source"] = source
    result["provenance"] = provenance(__file__, __version__, argv, args.seed, inputs)
    if args.svg:
        inputs.guard_output(args.svg)
        write_atomic(args.svg, render_svg(result))
    if args.format == "json":
        sys.stdout.write(to_json(result))
    else:
        sys.stdout.write(render(result, args.format, source))
    return 0


def main(argv=None):
    """Run the command line; return the exit status (0 ran, 2 bad input or usage)."""
    return run_main(_main, argv)


if __name__ == "__main__":
    sys.exit(main())
