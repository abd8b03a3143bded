#!/usr/bin/env python3
# /// script
# requires-python = ">=3.9"
# dependencies = []
# ///
"""Does a process measure beat counting tool calls, on the same rows, beyond chance?

auc_audit.py reads a runs table (one row per agent run: a yes/no outcome, the task,
optionally a condition, the number of tool calls, and any process measures) and
applies three gates before it believes that a measure predicts success:

  1. same rows     the measure is compared with the baseline (tool calls) on exactly
                   the runs where the measure is defined. A measure missing on a third
                   of the runs can beat the baseline on all rows and lose on its own.
  2. search width  the outcome is shuffled and the whole family of measures rescored;
                   the best of a wide family clears a low bar by chance alone.
  3. clustering    runs of one task agree with each other, so intervals resample whole
                   tasks, not runs.

Standard library only, Python 3.9+, one file: copy it anywhere and run it.

Basic usage:
    python3 auc_audit.py RUNS [--strata COLUMN] [options]

RUNS is a CSV, TSV, JSONL or JSON table, '-' for stdin, or a runs folder holding
runs.csv (or runs.tsv/.jsonl/.json) and, optionally, tool_calls.csv.

To audit the example runs folder, scoring AUCs within each condition:
    python3 auc_audit.py examples/runs --strata condition
To audit only the runs that claimed completion:
    python3 auc_audit.py examples/runs --strata condition --where claimed=yes
To test two named measures against another baseline column:
    python3 auc_audit.py examples/runs --features search_calls,impl_seconds --baseline turns_total
To keep within-task agreement in the null as well:
    python3 auc_audit.py examples/runs --permute tasks
To get JSON, Markdown for an issue, or a figure:
    python3 auc_audit.py examples/runs --format json
    python3 auc_audit.py examples/runs --format markdown --svg null.svg
To take the outcome from regrade.py's verdicts instead of the table (the first
command regrades the example; in the second, my_runs.csv is your own runs table,
with a run_id column matching the predictions you graded):
    python3 regrade.py examples/regrade/instances.jsonl examples/regrade/predictions.jsonl \\
        --repo examples/regrade/calc.bundle --out regraded
    python3 auc_audit.py my_runs.csv --verdicts regraded/verdicts.csv
To see it work on a small embedded table:
    python3 auc_audit.py --demo

Columns (auto-detected by name, first match wins; name them with the option):
  outcome   --outcome   verified, completed, resolved, gt_completed, outcome (yes/no)
  task      --task      task_id, instance_id, task (none: every run is its own cluster,
                        and the within-task and task-identity figures are undefined)
  run id    --run-id    run_id, id, run (joins --verdicts and tool_calls.csv)
  strata    --strata    none unless named, e.g. condition
  baseline  --baseline  tool_calls
  features  --features  default: every numeric column except the run id, id-like
                        columns (id, run, task, row, replicate, rep, seed, index and
                        any name ending in _id, in any case), the outcome names, the
                        task, the strata and the baseline. A yes/no column can be
                        named explicitly; it counts as 1/0.
Empty, NA, n/a, null, none, nan and undefined mean "undefined for this run".
Numbers are read exactly: an integer cell as an integer (nanosecond timestamps beyond
2**53 keep their order and their ties), a decimal of up to 15 significant digits as
the double it rounds to (distinct such decimals stay distinct and ordered), anything
longer or in exponent form as an exact fraction. Ranks, ties, copies and the screen
compare these exact values; AUCs are exact integer ratios until printed.
If the runs folder has tool_calls.csv (one row per tool call, with a run id column),
the baseline is recomputed by counting rows per run and compared with the tool_calls
column on every run; with no such column the recomputed count is the baseline. A
--baseline naming another column is not checked against the log.
A run id in tool_calls.csv that the runs table lacks is an error (exit 2); an audited
run with no rows there counts as zero calls, and the report says how many did. A
baseline (given or recounted) that is constant over the audited runs is an error.
With --verdicts the outcome is the verdicts file's outcome column (completed, as
regrade.py writes it) joined on run id. A run missing from that file is an error; a
run whose outcome cell is empty (regrade.py's mark of a grading error) is left out,
and the report counts those by their status column.

Definitions (what every printed number means):
  AUC           Mann-Whitney with midrank ties: the probability that a random
                success scores higher than a random failure, plus half the
                probability of a tie, counted over success/failure pairs. Shown in the
                better direction: + higher means success, - lower means success.
  stratified    with --strata only success/failure pairs inside one stratum count:
                AUC = credit summed over those pairs / number of those pairs. The
                pooled (unstratified) AUC is shown too; the two are not interchangeable.
  same rows     per feature: its AUC on the rows where it is defined; the baseline's
                AUC on all rows and on exactly those rows (each in its own better
                direction); diff = feature AUC - baseline AUC on the same rows.
  interval      paired task-cluster bootstrap: draw as many tasks as there are, with
                replacement; a run counts once per draw of its task; both AUCs keep
                the direction chosen on the observed data; 95% percentile interval of
                diff (linear interpolation). Resamples left with no success/failure
                pair are skipped and counted. With fewer than 2 clusters (tasks, or
                runs with no task column) no interval exists: it prints 'undefined'
                (JSON null) and gate 3 fails with "fewer than 2 clusters to resample";
                with fewer than 10 clusters a note warns that intervals are rough.
  DeLong p      two-sided test that the feature's and the baseline's AUCs on the same
                rows are equal, from the structural components of DeLong, DeLong &
                Clarke-Pearson (1988). With strata, per-stratum estimates are combined
                with weights equal to each stratum's share of the pairs. It needs at
                least 2 successes and 2 failures on the rows compared (with strata: in
                every stratum that contributes pairs); elsewhere it prints 'undefined'
                (JSON null) and a note gives the reason, never a p-value. It treats
                runs as independent.
  clustered p   the same hypothesis with runs of one task correlated: Obuchowski's
                (1997, Biometrics 53:567) clustered AUC variance applied to the paired
                difference. Each task's influence is, per stratum with the same pair
                weights, (its successes' V10 minus the AUC) / successes + (its
                failures' V01 minus the AUC) / failures, feature minus baseline; the
                variance is I / (I - 1) times the sum of the I tasks' squared
                influences (without strata exactly Obuchowski's S10/M + S01/N +
                2 S11/(MN)); two-sided normal p. It assumes tasks independent of one
                another and enough tasks for the normal approximation. Undefined where
                DeLong is, or with fewer than 2 clusters. With no task column each run
                is its own cluster.
                Neither p enters the verdict: gate 2 uses the minP adjusted p, gate 3
                the task-cluster bootstrap interval; these two are shown beside them.
  within-task   AUC over success/failure pairs inside one task only, in the
                feature's chosen direction (below 0.5: inside a task the signal
                points the other way), with the number of such pairs.
  family null   shuffle the outcome --perms times (--permute rows: across all runs;
                strata: within each stratum, the default with --strata; tasks: whole
                tasks' outcomes among tasks with the same number of runs, which keeps
                within-task agreement: each task receives another same-size task's
                number of successes, placed on a random subset of its own runs, so no
                pairing of one task's runs with another's is assumed; a task with no
                other task of its size keeps its own count and the report counts those;
                with no task column, or no task that can move, it exits 2). Under each
                shuffle every family feature is rescored on its own defined rows with
                its direction chosen afresh. From the same shuffles:
                  perm p      each feature's own permutation p = (1 + shuffles whose
                              AUC for that feature >= its observed AUC) / (1 + N).
                  minP adj p  gate 2's family-wise adjusted p: Westfall & Young's
                              (1993, Algorithm 2.8) free step-down minP over those
                              p-values, the observed outcome counted as one of the
                              N + 1 draws. Features are taken in order of perm p; the
                              k-th adjusted p is the share of draws whose smallest p
                              among the k-th and later features is <= the k-th's perm p,
                              made monotone. Tied perm p-values are adjusted together,
                              whatever order the features come in. A feature on two
                              rows (AUC 1 whenever its rows hold one of each outcome)
                              has a large perm p and no longer caps the others, as a
                              maximum of raw AUCs would. It assumes only that the
                              shuffled outcomes are exchangeable under the null (the
                              scheme above). Monte Carlo caveat: where two features'
                              exact p-values tie, N shuffles estimate them a hair
                              apart and the estimate can sit up to that atom's size low.
                  max-AUC p   the report's §7 single-step figure ("joint p"): (1 +
                              shuffles whose family maximum AUC >= the feature's AUC) /
                              (1 + N); shown beside minP, not used by the verdict.
                Also reported, descriptively: the null median of the family maximum;
                the share of shuffles whose maximum exceeds the baseline's AUC (the
                bar); the max-AUC joint p of the observed maximum; and the report's
                robustness figure, the same joint p with the best feature removed from
                the family and from every shuffle. No p-value is ever 0.
  task identity each run is scored by the success rate of the OTHER runs of its task
                (leave-one-out); its AUC is what knowing only the task gives, the bar
                for "more than task difficulty". Runs alone in their task are left out;
                with fewer than 2 tasks it is undefined. It is read in the fixed +
                direction only (a higher rate means success), never the better one:
                with no task effect, leaving a run out lowers its task's rate exactly
                when the run succeeded, an artificial - signal (so a value below 0.5
                says the task predicts nothing, not that it predicts the reverse).
  left out      only these columns are left out of the default family, each listed
                with its reason: one with no testable AUC (undefined on every row,
                constant, one outcome class on its rows, or with --strata no stratum
                holding both; or constant within every stratum, where every counted
                pair ties: it reproduces the strata); a copy of the outcome, of the
                baseline or of an earlier column (the same values, or the same ranking,
                or its reverse, on the same rows: every AUC of it is an AUC of that
                one); and a column that is numeric except for a few cells ('8.0m', '?'),
                shown with its first such cell (row and value). Binarising at the best
                (Youden) threshold only flags (Y): equal cuts do not mean equal
                rankings. The report counts the features tested and the columns left
                out, and names every other column with why it is not a candidate (run
                id, task, strata, outcome, baseline, id-like name, text). A column named
                with --features is always tested, a copy flagged D, or refused (exit 2)
                with the reason; a cell there that is not a number is an error naming
                its row and value. This screen (the one-class checks and the outcome
                copy) looks at the observed outcomes, so the null family is the screened
                family: when such columns were left out, the adjusted p-values are
                slightly optimistic. A numeric condition column is recognised as
                reproducing the strata only with --strata.
  verdict       a feature passes when its same-row interval lies above 0 AND its minP
                adjusted p < 0.05. Otherwise the first gate it fails is named:
                gate 1 same rows (diff <= 0), gate 2 search width (minP adjusted p >=
                0.05), gate 3 clustering (the task-cluster interval reaches 0).
  flags         same_row_sign_flip (T): the all-rows and same-row comparisons with the
                baseline disagree in sign (the same-row trap); within_task_reversed (W);
                below_task_identity (I): below task identity scored on the feature's
                own rows, the same-row rule of gate 1; partial_rows (P, undefined on
                some runs); duplicate (D, a named copy); youden_equal (Y, see above).

Speed: each feature is ranked once; under a shuffle every feature's AUC is a rank sum
over the successes, and all the family's rank sums are read off one sum of big
integers (one per run, every feature's rank in its own field). A bootstrap resample
reuses the sorted order: a column with few distinct values (counts) sums each value's
task weights and sweeps the values; other columns sweep a weighted prefix sum of
the failures: O(n) per shuffle or resample, no sorting. The baseline on a feature's
own rows (its AUC, its DeLong components, its bootstrap sweep) is computed once for
every feature defined on the same rows. Shuffles and resamples are drawn in 8
separately seeded chunks; on large tables the chunks run in forked processes, one
per core, and the output is the same bytes either way.

Defaults: --perms 2000, --boot 2000, --seed 20260801, --permute strata with --strata
and rows without, --format text. Same input and seed give the same bytes out.
Exit status: 0 report written; 2 bad input or usage (one line 'error: ...').
"""
import bisect
import collections
import decimal
import itertools
from fractions import Fraction
import math
import os
import operator
import random
import re
import statistics
import sys

__version__ = "0.1.0"

DEFAULT_PERMS = 2000
DEFAULT_BOOT = 2000
DEFAULT_SEED = 20260801
DEFAULT_BASELINE = "tool_calls"
ALPHA = 0.05
FEW_CLUSTERS = 10            # below this many clusters the bootstrap interval is rough
CONFIDENCE = 0.95
OUTCOME_NAMES = ("verified", "completed", "resolved", "gt_completed", "outcome")
TASK_NAMES = ("task_id", "instance_id", "task")
RUN_ID_NAMES = ("run_id", "id", "run")
ID_LIKE_NAMES = frozenset({"id", "run", "task", "replicate", "rep", "seed", "index", "row"})
TEXT_WIDTH = 100             # text reports fit this many columns
TEXT_NAME_LIMIT = 24         # longer names are cut with a trailing '…' in text tables
TEXT_NAME_MIN = 12           # ...but never shorter than this
SVG_NAME_LIMIT = 22          # the same, in the figure's labels
SVG_CHAR_WIDTH = 7           # a generous width of one 12px sans-serif character, in px
HISTOGRAM_BINS = 50          # bins of the family-maximum null over [0.5, 1.0]
CHUNKS = 8                   # shuffles and resamples are drawn in this many seeded chunks
PARALLEL_WORK = 10 ** 8      # runs x features x (shuffles + resamples) worth forking for

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


# === Statistics ===
# AUCs are kept as exact integer pairs (2U, pairs): 2U counts 2 for every
# success/failure pair the success wins and 1 for every tie. They become floats once,
# by one correctly rounded division, so equal AUCs always compare equal.

def number_text(value):
    """Print a cell's exact value: integers as integers, others as Python prints them.

    >>> number_text(3), number_text(4.0), number_text(2.5), number_text(2 ** 53 + 1)
    ('3', '4', '2.5', '9007199254740993')
    >>> number_text(Fraction("0.12345678901234567")), number_text(Fraction(1, 3))
    ('0.12345678901234567', '0.3333333333333333')
    """
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, Fraction):
        if value.denominator == 1:
            return str(value.numerator)
        with decimal.localcontext() as context:
            context.prec = 60
            exact = decimal.Decimal(value.numerator) / decimal.Decimal(value.denominator)
        text = format(exact.normalize(), "f")
        # A decimal cell comes back digit for digit; anything else (1/3) as a float.
        return text if Fraction(text) == value else repr(float(value))
    return str(value)


def doubled_midranks(values):
    """Rank `values` 1..n, ties sharing their mean rank; return twice each rank.

    Doubling keeps midranks integers, so rank sums stay exact.

    >>> doubled_midranks([10, 30, 20, 20])
    [2, 8, 5, 5]
    """
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0] * len(values)
    start = 0
    for _, run in itertools.groupby(order, key=values.__getitem__):
        run = list(run)
        rank = 2 * start + len(run) + 1       # twice the mean of start+1 .. start+len
        for position in run:
            ranks[position] = rank
        start += len(run)
    return ranks


def group_rows(groups, rows):
    """Map each group value to its rows (in `rows` order), groups in sorted order."""
    found = {}
    for row in rows:
        found.setdefault(groups[row] if groups is not None else 0, []).append(row)
    return [found[key] for key in sorted(found)]


def pair_count(scores, labels, groups=None, rows=None):
    """Return (2U, pairs) over success/failure pairs inside the same group.

    `rows` restricts the count to those row indices (default: every row).

    >>> pair_count([1, 2, 3, 3], [0, 0, 1, 0])
    (5, 3)
    >>> pair_count([1, 2, 3, 4], [1, 0, 1, 0], groups=["a", "a", "b", "b"])
    (0, 2)
    """
    rows = range(len(scores)) if rows is None else rows
    if groups is None:
        order = sorted(rows, key=scores.__getitem__)
        keys = [0] * len(order)
    else:
        order = sorted(rows, key=lambda row: (groups[row], scores[row]))
        keys = [groups[row] for row in order]
    # One sweep in (group, score) order: each run of tied scores credits its
    # successes 2 per failure below them in the group and 1 per tied failure.
    twice_u = pairs = 0
    start, end = 0, len(order)
    while start < end:
        group = keys[start]
        below = successes = 0
        while start < end and keys[start] == group:
            value = scores[order[start]]
            tied_successes = tied_failures = 0
            while start < end and keys[start] == group and scores[order[start]] == value:
                if labels[order[start]]:
                    tied_successes += 1
                else:
                    tied_failures += 1
                start += 1
            twice_u += tied_successes * (2 * below + tied_failures)
            below += tied_failures
            successes += tied_successes
        pairs += successes * below
    return twice_u, pairs


def better_direction(twice_u, pairs):
    """Return (AUC in the better direction, '+' or '-'), or (None, None) with no pairs.

    >>> better_direction(5, 3), better_direction(1, 3), better_direction(0, 0)
    ((0.8333333333333334, '+'), (0.8333333333333334, '-'), (None, None))
    """
    if pairs == 0:
        return None, None
    if twice_u >= pairs:
        return twice_u / (2 * pairs), "+"
    return (2 * pairs - twice_u) / (2 * pairs), "-"


def auc_in_direction(twice_u, pairs, direction):
    """Return the AUC read in `direction` ('+' or '-'), or None with no pairs."""
    if pairs == 0:
        return None
    return (twice_u if direction == "+" else 2 * pairs - twice_u) / (2 * pairs)


def oriented(values, direction):
    """Scores turned so that higher always means success."""
    if direction == "+":
        return values
    return [None if v is None else -v for v in values]


def comparable_strata(labels, groups, rows):
    """The strata that contribute success/failure pairs on `rows`:
    [(stratum, successes, failures)] with row lists, in sorted stratum order."""
    parts = []
    for members in group_rows(groups, rows):
        successes = [row for row in members if labels[row]]
        failures = [row for row in members if not labels[row]]
        if successes and failures:
            parts.append((groups[members[0]] if groups is not None else None,
                          successes, failures))
    return parts


def variance_undefined(labels, groups, rows):
    """Why DeLong's variance is undefined on `rows`, or None: it needs at least two
    successes and two failures in every stratum that contributes pairs.

    >>> variance_undefined([1, 1, 0, 1], None, range(4))
    '3 successes and 1 failure on the rows compared (DeLong needs at least 2 of each)'
    """
    parts = comparable_strata(labels, groups, rows)
    if not parts:
        return "no success/failure pair on the rows compared"
    for stratum, successes, failures in parts:
        if len(successes) < 2 or len(failures) < 2:
            where = "on the rows compared" if stratum is None else \
                f"in stratum {stratum!r}"
            return (f"{plural(len(successes), 'success', 'successes')} and "
                    f"{plural(len(failures), 'failure')} {where} (DeLong needs at least "
                    f"2 of each{'' if stratum is None else ' in every stratum with pairs'})")
    return None


def structural_components(scores, successes, failures):
    """DeLong's V10 (each success's credit against the failures) and V01 (each
    failure's credit against the successes, read as 'the success is above'), from
    doubled midranks: exact integers over 2 * failures (V10) and 2 * successes (V01)
    until one division each."""
    n1, n0 = len(successes), len(failures)
    both = doubled_midranks([scores[r] for r in successes + failures])
    own1 = doubled_midranks([scores[r] for r in successes])
    own0 = doubled_midranks([scores[r] for r in failures])
    v10 = [(a - b) / (2 * n0) for a, b in zip(both[:n1], own1)]
    v01 = [(2 * n1 - a + b) / (2 * n1) for a, b in zip(both[n1:], own0)]
    return v10, v01


def paired_parts(feature, baseline, labels, groups, rows, baseline_parts=None):
    """Per stratum with pairs: (stratum, successes, failures, the feature's structural
    components, the baseline's). `baseline_parts` maps a row set to the baseline's
    components, so features on the same rows share them."""
    key = tuple(rows)
    known = None if baseline_parts is None else baseline_parts.get(key)
    parts = []
    for index, (stratum, successes, failures) in enumerate(
            comparable_strata(labels, groups, rows)):
        base = (known[index] if known is not None
                else structural_components(baseline, successes, failures))
        parts.append((stratum, successes, failures,
                      structural_components(feature, successes, failures), base))
    if baseline_parts is not None and known is None:
        baseline_parts[key] = [part[4] for part in parts]
    return parts


def delong_p(feature, baseline, labels, groups, rows, *, parts=None):
    """Two-sided DeLong p that two AUCs on the same `rows` are equal, or None.

    Both score lists must already point the same way (higher = success). Per stratum
    the structural components are V10 (each success's credit against the stratum's
    failures) and V01 (each failure's credit against its successes); stratum
    estimates are combined with weights equal to their share of the pairs. None where
    the variance is undefined (see variance_undefined) or 0 while the AUCs differ.

    >>> round(delong_p([1, 2, 3, 4], [1, 3, 2, 4], [0, 0, 1, 1], None, range(4)), 6)
    0.4795
    >>> delong_p([2, 3, 3, 3], [-8, -8, -10, -8], [1, 1, 0, 1], None, range(4)) is None
    True
    """
    if variance_undefined(labels, groups, rows):
        return None
    parts = paired_parts(feature, baseline, labels, groups, rows) if parts is None else parts
    total_pairs = sum(len(s) * len(f) for _, s, f, _, _ in parts)
    difference = variance = 0.0
    for _, successes, failures, (x10, x01), (y10, y01) in parts:
        weight = len(successes) * len(failures) / total_pairs
        difference += weight * (math.fsum(x10) - math.fsum(y10)) / len(successes)
        for x, y in ((x10, y10), (x01, y01)):
            gaps = [a - b for a, b in zip(x, y)]
            variance += weight ** 2 * statistics.variance(gaps) / len(gaps)
    if variance <= 0:
        return 1.0 if abs(difference) < 1e-15 else None
    return math.erfc(abs(difference) / math.sqrt(variance) / math.sqrt(2))


def clustered_difference(feature, baseline, labels, groups, clusters, rows, *, parts=None):
    """Task-clustered test that two AUCs on the same `rows` are equal: Obuchowski's
    (1997) clustered AUC variance applied to the paired difference.

    Each cluster's influence is, summed over strata with weight w (the stratum's
    share of the pairs), w * (sum over its successes of (V10 - AUC) / M + sum over
    its failures of (V01 - AUC) / N), with M and N the stratum's successes and
    failures, computed for the feature minus the baseline. The variance is
    I / (I - 1) times the sum of the I clusters' squared influences: without strata
    exactly Obuchowski's S10 / M + S01 / N + 2 S11 / (M N). Two-sided normal p.
    Returns {'difference', 'variance', 'p', 'clusters', 'undefined'}; 'undefined'
    holds the reason where there is no p.
    """
    result = {"difference": None, "variance": None, "p": None, "clusters": 0,
              "undefined": variance_undefined(labels, groups, rows)}
    if result["undefined"]:
        return result
    parts = paired_parts(feature, baseline, labels, groups, rows) if parts is None else parts
    # The clusters that hold a run of a stratum with pairs: the AUCs' own runs.
    used = sorted({clusters[r] for _, s, f, _, _ in parts for r in s + f})
    result["clusters"] = len(used)
    if len(used) < 2:
        result["undefined"] = "fewer than 2 clusters on the rows compared"
        return result
    total_pairs = sum(len(s) * len(f) for _, s, f, _, _ in parts)
    influence = {c: 0.0 for c in used}
    difference = 0.0
    for _, successes, failures, (x10, x01), (y10, y01) in parts:
        m, n = len(successes), len(failures)
        weight = m * n / total_pairs
        gap = (math.fsum(x10) - math.fsum(y10)) / m
        difference += weight * gap
        for members, components, size in ((successes, zip(x10, y10), m),
                                          (failures, zip(x01, y01), n)):
            for row, (x, y) in zip(members, components):
                influence[clusters[row]] += weight * (x - y - gap) / size
    count = len(used)
    variance = count / (count - 1) * math.fsum(v * v for v in influence.values())
    result.update(difference=difference, variance=variance)
    if variance <= 0:
        if abs(difference) < 1e-15:
            result["p"] = 1.0
        else:
            result["undefined"] = "zero variance while the AUCs differ"
        return result
    result["p"] = math.erfc(abs(difference) / math.sqrt(variance) / math.sqrt(2))
    return result


def leave_one_out_task_rate(labels, tasks):
    """Score each run by the success rate of the other runs of its task (None if alone).

    >>> leave_one_out_task_rate([1, 0, 1, 1], ["a", "a", "a", "b"])
    [0.5, 1.0, 0.5, None]
    """
    totals, sizes = {}, {}
    for label, task in zip(labels, tasks):
        totals[task] = totals.get(task, 0) + label
        sizes[task] = sizes.get(task, 0) + 1
    return [None if sizes[t] < 2 else (totals[t] - y) / (sizes[t] - 1)
            for y, t in zip(labels, tasks)]


def youden_binarise(scores, labels):
    """Cut scores at the threshold that maximises sensitivity + specificity.

    Returns a tuple of 1 (at or above the cut in the better direction), 0, or None
    where the score is undefined. Where several cuts reach the same best gain, the +
    direction (higher = success) wins over the - direction, and within a direction
    the cut that calls the fewest runs 1 wins: in + the highest cut, in - the lowest.

    >>> youden_binarise([1, 5, 2, None, 7], [0, 1, 0, 1, 1])
    (0, 1, 0, None, 1)
    """
    rows = [i for i, v in enumerate(scores) if v is not None]
    n1 = sum(labels[i] for i in rows)
    n0 = len(rows) - n1
    if n1 == 0 or n0 == 0:
        return tuple(None if v is None else 0 for v in scores)
    best = None
    for sign in (1, -1):
        ordered = sorted(rows, key=lambda i: -sign * scores[i])
        hits = false_alarms = 0
        position = 0
        while position < len(ordered):
            value = scores[ordered[position]]
            while position < len(ordered) and scores[ordered[position]] == value:
                hits += labels[ordered[position]]
                false_alarms += 1 - labels[ordered[position]]
                position += 1
            gain = hits * n0 - false_alarms * n1     # Youden J times n1 * n0
            if best is None or gain > best[0]:
                best = (gain, sign, value)
    _, sign, cut = best
    return tuple(None if v is None else int(sign * v >= sign * cut) for v in scores)


def percentile(ordered, fraction):
    """Linear-interpolation percentile of an already sorted list.

    >>> percentile([1, 2, 3, 4], 0.5), percentile([1, 2, 3, 4], 0.025)
    (2.5, 1.075)
    """
    if not ordered:
        return None
    position = fraction * (len(ordered) - 1)
    low = int(math.floor(position))
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def ranking_key(values):
    """The defined rows and their doubled midranks: two columns with equal keys rank
    the same rows the same way, so every AUC of one is an AUC of the other.

    >>> ranking_key([5, None, 2, 5]) == ranking_key([9, None, 1, 9])
    True
    """
    rows = tuple(i for i, v in enumerate(values) if v is not None)
    return rows, tuple(doubled_midranks([values[i] for i in rows]))


def reversed_ranking_key(key):
    """The key of the reversed ranking (what an AUC read in the other direction sees)."""
    rows, ranks = key
    return rows, tuple(2 * (len(rows) + 1) - r for r in ranks)


def untestable_reason(values, labels, strata):
    """Why a column can have no AUC worth testing, or None: undefined or constant,
    one outcome class (or no stratum with both) on its rows, or (with strata)
    constant within every stratum, where every counted pair is a tie."""
    defined = [i for i, v in enumerate(values) if v is not None]
    if not defined:
        return "undefined on every row"
    distinct = {values[i] for i in defined}
    own_rows = f"its {plural(len(defined), 'defined row')}"
    if len(distinct) == 1:
        where = "every row" if len(defined) == len(values) else own_rows
        return f"constant ({number_text(next(iter(distinct)))}) on {where}"
    successes = sum(labels[i] for i in defined)
    if successes in (0, len(defined)):
        return f"one outcome class on {own_rows}: no success/failure pair, no AUC"
    if strata is not None and pair_count(values, labels, strata, defined)[1] == 0:
        return "no stratum holds both outcomes on its defined rows: no AUC"
    if strata is not None and len(set(strata)) > 1:
        by_stratum = {}
        for i in defined:
            by_stratum.setdefault(strata[i], set()).add(values[i])
        if all(len(v) == 1 for v in by_stratum.values()):
            return ("constant within every stratum: it reproduces the strata column "
                    "(every within-stratum pair ties)")
    return None


def copy_of(values, labels, seen):
    """Name what this column copies, or None: the outcome (same values or reversed),
    or a column in `seen` [(description, values, ranking key)] with the same values
    or the same ranking (or its reverse) on the same rows."""
    outcome = tuple(labels)
    if tuple(values) == outcome or tuple(None if v is None else 1 - v
                                         for v in values) == outcome:
        return "the outcome", "equals the outcome on every row"
    key = ranking_key(values)
    flipped = reversed_ranking_key(key)
    for other, other_values, other_key in seen:
        if tuple(values) == other_values:
            return other, f"identical to {other} on every row"
        if key == other_key or flipped == other_key:
            reverse = "" if key == other_key else " (reversed)"
            return other, (f"the same ranking{reverse} as {other} on the same "
                           f"{plural(len(key[0]), 'row')} (so the same AUCs)")
    return None


def youden_twin(binary, defined, seen_binary, strata_binary):
    """The Youden flag: what this column equals once binarised at its best threshold
    (the strata, or an earlier column binarised the same way), or None. Equal cuts do
    not mean equal rankings, so this only flags."""
    binary_defined = [binary[i] for i in defined]
    if len(set(binary_defined)) != 2:
        return None
    if strata_binary is not None:
        complement = tuple(1 - s for s in strata_binary)
        if all(binary[i] == strata_binary[i] for i in defined) or \
                all(binary[i] == complement[i] for i in defined):
            return "the strata column"
    for other, other_binary in seen_binary:
        if binary == other_binary:
            return f"{other} binarised"
    return None


def find_degenerate(candidates, labels, baseline, strata, *, named=False):
    """Split candidate features into the family and the columns left out.

    `candidates` is [(name, values)] in column order; `baseline` is (name, values) or
    None. Left out: a column with no testable AUC (undefined, constant, one outcome
    class, no stratum with both, constant within every stratum) and a copy of the
    outcome, of the baseline or of an earlier family column (same values, or the same
    ranking on the same rows). With `named` (the user's --features) nothing is left
    out: an untestable column or an outcome copy is an InputError that says why, and
    a copy is tested with the 'duplicate' note. Returns (family names, [{'name',
    'reason'}], {name: {'duplicate_of': reason or None, 'youden_equal_to': ... }}).
    """
    left_out, family, notes = [], [], {}
    seen = []
    seen_binary = []
    if baseline is not None:
        seen.append((f"the baseline {baseline[0]!r}", tuple(baseline[1]),
                     ranking_key(baseline[1])))
        seen_binary.append((f"the baseline {baseline[0]!r}",
                            youden_binarise(baseline[1], labels)))
    levels = sorted(set(strata)) if strata is not None else []
    strata_binary = (tuple(int(s == levels[1]) for s in strata) if len(levels) == 2
                     else None)
    for name, values in candidates:
        reason = untestable_reason(values, labels, strata)
        copy = None if reason else copy_of(values, labels, seen)
        if copy and (copy[0] == "the outcome" or not named):
            reason = copy[1]
        if reason is not None:
            if named:
                raise InputError(f"--features: {name!r} cannot be tested: {reason}")
            left_out.append({"name": name, "reason": reason})
            continue
        defined = [i for i, v in enumerate(values) if v is not None]
        binary = youden_binarise(values, labels)
        notes[name] = {"duplicate_of": copy[1] if copy else None,
                       "youden_equal_to": youden_twin(binary, defined, seen_binary,
                                                      strata_binary)}
        family.append(name)
        seen.append((repr(name), tuple(values), ranking_key(values)))
        seen_binary.append((repr(name), binary))
    return family, left_out, notes


# --- the permutation null: rank once, then each shuffle is a sum over successes ---
def picker(indices):
    """A function taking a sequence to its items at `indices`, as a tuple, in C."""
    indices = list(indices)
    if len(indices) >= 2:
        return operator.itemgetter(*indices)
    if len(indices) == 1:
        only = indices[0]
        return lambda sequence: (sequence[only],)
    return lambda sequence: ()


class NullFamily:
    """The feature family ready for shuffling: ranked once, packed into machine words.

    Each feature's within-stratum doubled midranks sit in a field of a packed word
    (several features per word), and each set of defined rows has a 1 in a count
    field per stratum. One sum per word over the successes of a shuffle then yields
    every feature's rank sum and every stratum's success count at once: the AUCs
    under a shuffle, with nothing sorted again. All features share one word per row
    (a big integer: Python adds those in C, and one sum beats many machine-word
    sums, each with its own pass over the rows); fields are wide enough never to
    carry.
    """

    WORD_BITS = 1 << 20

    def __init__(self, features, strata_codes, n_strata):
        n = len(strata_codes)
        rank_bits = (2 * n * n + 2).bit_length()     # a rank sum is at most n(n + 1)
        count_bits = (n + 1).bit_length()
        self.rank_mask = (1 << rank_bits) - 1
        self.count_mask = (1 << count_bits) - 1
        per_word = max(1, self.WORD_BITS // rank_bits)
        rank_words, self.slots = [], []              # slot: (word, shift) per feature
        row_sets, self.feature_set = {}, []
        for index, values in enumerate(features):
            word, slot = divmod(index, per_word)
            if slot == 0:
                rank_words.append([0] * n)
            self.slots.append((word, slot * rank_bits))
            for code in range(n_strata):
                members = [i for i in range(n)
                           if values[i] is not None and strata_codes[i] == code]
                ranks = doubled_midranks([values[i] for i in members])
                for row, rank in zip(members, ranks):
                    rank_words[word][row] += rank << (slot * rank_bits)
            key = tuple(v is not None for v in values)
            self.feature_set.append(row_sets.setdefault(key, len(row_sets)))
        count_words, used = [], self.WORD_BITS
        self.set_fields = [[] for _ in row_sets]     # per row set: (word, shift, size)
        for key, set_index in row_sets.items():
            for code in range(n_strata):
                members = [i for i in range(n) if key[i] and strata_codes[i] == code]
                if not members:
                    continue
                if used + count_bits > self.WORD_BITS:
                    count_words.append([0] * n)
                    used = 0
                for row in members:
                    count_words[-1][row] += 1 << used
                self.set_fields[set_index].append(
                    (len(rank_words) + len(count_words) - 1, used, len(members)))
                used += count_bits
        self.words = rank_words + count_words
        self.totals = [sum(weights) for weights in self.words]

    def best_aucs(self, take, are_successes):
        """Better-direction AUC of every feature when the rows `take` picks are the
        successes (or the failures, when are_successes is False); None without pairs."""
        packed = [sum(take(weights)) for weights in self.words]
        if not are_successes:
            packed = [total - part for total, part in zip(self.totals, packed)]
        per_set = []
        mask = self.count_mask
        for fields in self.set_fields:
            correction = pairs = 0
            for word, shift, size in fields:
                count = (packed[word] >> shift) & mask
                correction += count * (count + 1)
                pairs += count * (size - count)
            per_set.append((correction, pairs))
        aucs = []
        for (word, shift), row_set in zip(self.slots, self.feature_set):
            correction, pairs = per_set[row_set]
            if pairs == 0:
                aucs.append(None)
                continue
            twice_u = ((packed[word] >> shift) & self.rank_mask) - correction
            aucs.append((twice_u if twice_u >= pairs else 2 * pairs - twice_u) / (2 * pairs))
        return aucs


def null_aucs(family, draws):
    """Every family feature's better-direction AUC under each draw (None without pairs).

    `draws` yields (row indices, True if they are the successes, False if the
    failures). Returns one list per draw, in family order.
    """
    return [family.best_aucs(picker(picked), are_successes) for picked, are_successes in draws]


def null_maxima(family, draws):
    """Family maximum of better-direction AUCs under each draw; a feature left with no
    success/failure pair under a draw does not enter that draw's maximum."""
    return [family_maximum(aucs) for aucs in null_aucs(family, draws)]


def family_maximum(aucs, skip=None):
    """The largest defined AUC in one draw (0.0 when none is defined), leaving out the
    feature at index `skip`.

    >>> family_maximum([0.6, None, 0.7]), family_maximum([0.6, None, 0.7], skip=2)
    (0.7, 0.6)
    """
    return max((a for j, a in enumerate(aucs) if a is not None and j != skip), default=0.0)


def adjusted_p(value, ordered_maxima):
    """(1 + number of null family maxima >= value) / (1 + number of shuffles).

    >>> adjusted_p(0.8, [0.6, 0.7, 0.8, 0.9])
    0.6
    """
    beaten = len(ordered_maxima) - bisect.bisect_left(ordered_maxima, value)
    return (1 + beaten) / (1 + len(ordered_maxima))


def at_least_counts(observed, null):
    """Per feature and per draw, how many of the B + 1 statistics (the observed one and
    the B null ones) are >= that draw's statistic: B + 1 times its permutation p.

    Returns (counts for the observed statistics, [counts for each null draw]). An
    undefined statistic (None) is below every defined one, so its count is B + 1.

    >>> at_least_counts([0.9, 0.6], [[0.7, 0.6], [0.9, None]])
    ([2, 2], [[3, 2], [2, 3]])
    """
    total = len(null) + 1
    ladders = []
    for j, value in enumerate(observed):
        column = [row[j] for row in null] + [value]
        ladders.append(sorted(a for a in column if a is not None))

    def count(j, value):
        if value is None:
            return total
        return len(ladders[j]) - bisect.bisect_left(ladders[j], value)

    return ([count(j, value) for j, value in enumerate(observed)],
            [[count(j, value) for j, value in enumerate(row)] for row in null])


def stepdown_minp(observed, null):
    """Westfall & Young's free step-down minP adjusted p-values (1993, Algorithm 2.8).

    `observed` holds each feature's statistic (larger = more extreme), `null` one list
    per shuffle. Each feature's permutation p comes from the same shuffles, with the
    observed statistic counted among them: p = (1 + shuffles with a statistic >= it) /
    (1 + B). With the features ordered by p, the k-th adjusted p is the share of the
    B + 1 draws (the observed one included) whose smallest p among the features from
    the k-th on is <= the k-th p, made monotone. Features whose p-values tie are
    adjusted together over the set that still holds all of them, so a tie never
    depends on the order the features were given in. Returns (raw p, adjusted p).

    >>> stepdown_minp([0.9, 0.8], [[0.9, 0.5], [0.6, 0.8], [0.5, 0.6]])
    ([0.5, 0.5], [0.75, 0.75])
    """
    total = len(null) + 1
    observed_counts, null_counts = at_least_counts(observed, null)
    order = sorted(range(len(observed)), key=lambda j: (observed_counts[j], j))
    # Successive minima from the last (largest p) feature back to each position k.
    minima = []
    for counts in null_counts:
        running, tail = total, [0] * len(order)
        for k in range(len(order) - 1, -1, -1):
            running = min(running, counts[order[k]])
            tail[k] = running
        minima.append(tail)
    adjusted = [None] * len(observed)
    previous, k = 0, 0
    while k < len(order):
        level = observed_counts[order[k]]
        end = k
        while end < len(order) and observed_counts[order[end]] == level:
            end += 1
        # The observed draw always counts: its minimum over positions k.. is `level`.
        hits = 1 + sum(1 for tail in minima if tail[k] <= level)
        previous = max(previous, hits)
        for position in range(k, end):
            adjusted[order[position]] = previous / total
        k = end
    return [c / total for c in observed_counts], adjusted


def sample(rng, population, k):
    """random.Random.sample(population, k) step for step (the same draws from the
    same generator state), with the random-number call inlined: the shuffles spend
    most of their time here.

    >>> rng_a, rng_b = random.Random(5), random.Random(5)
    >>> sample(rng_a, range(100), 40) == rng_b.sample(range(100), 40)
    True
    """
    n = len(population)
    result = [None] * k
    setsize = 21
    if k > 5:
        setsize += 4 ** math.ceil(math.log(k * 3, 4))
    getrandbits = rng.getrandbits
    if n <= setsize:
        pool = list(population)
        for i in range(k):
            left = n - i
            bits = left.bit_length()
            j = getrandbits(bits)
            while j >= left:
                j = getrandbits(bits)
            result[i] = pool[j]
            pool[j] = pool[left - 1]
    else:
        selected = set()
        bits = n.bit_length()
        for i in range(k):
            j = getrandbits(bits)
            while j >= n or j in selected:
                j = getrandbits(bits)
            selected.add(j)
            result[i] = population[j]
    return result


def shuffled_draws(labels, mode, strata_codes, tasks_codes, perms, rng):
    """Yield `perms` shuffled outcome assignments as (rows, are_successes).

    mode 'rows' shuffles across all runs, 'strata' within each stratum, 'tasks'
    moves whole tasks' outcomes among tasks with the same number of runs: each task
    receives another's number of successes, placed on a uniformly random subset of
    its runs, so no pairing of one task's runs with another's is assumed and the
    draw does not depend on the order of the runs inside a task.
    """
    n = len(labels)
    successes = sum(labels)
    use_successes = successes <= n - successes
    if mode == "rows":
        population = range(n)
        size = successes if use_successes else n - successes
        for _ in range(perms):
            yield sample(rng, population, size), use_successes
    elif mode == "strata":
        parts = []
        for members in group_rows(strata_codes, range(n)):
            count = sum(labels[i] for i in members)
            parts.append((members, count if use_successes else len(members) - count))
        for _ in range(perms):
            picked = []
            for members, size in parts:
                picked.extend(sample(rng, members, size))
            yield picked, use_successes
    else:
        by_size = {}
        for members in group_rows(tasks_codes, range(n)):
            count = sum(labels[i] for i in members)
            by_size.setdefault(len(members), []).append(
                (members, count if use_successes else len(members) - count))
        groups = [by_size[size] for size in sorted(by_size)]
        for _ in range(perms):
            picked = []
            for tasks in groups:
                counts = [count for _, count in tasks]
                rng.shuffle(counts)
                for (members, _), count in zip(tasks, counts):
                    picked.extend(rng.sample(members, count))
            yield picked, use_successes


# --- the paired task-cluster bootstrap: sort once, then a weighted sweep ---
class BootstrapSweep:
    """One score list on fixed rows, ordered once, for weighted AUCs under resampling.

    Failures are laid out stratum by stratum in score order. Each success keeps two
    positions in that layout: before its tied failures and after them. With task
    weights W, a prefix sum of the failures' weights gives every success its credit
    (failures below it, plus half the tied ones) in O(n), with no sorting.
    """

    def __init__(self, scores, labels, strata_codes, task_codes, rows, *, grouped=None):
        fail_tasks, succ_tasks, low, high = [], [], [], []
        self.bounds = []        # per stratum: (first success, end, first failure, end)
        # Few distinct values (counts): sum the weights of each value's successes and
        # failures, then one pass over the values; far fewer steps than one per run.
        self.value_groups = []  # per stratum: [(successes' weights, failures' weights)]
        strata_members = group_rows(strata_codes, rows)
        n_values = sum(len({scores[r] for r in members}) for members in strata_members)
        self.grouped = (8 * n_values <= len(rows)) if grouped is None else grouped
        for members in strata_members if self.grouped else ():
            by_value = {}
            for r in members:
                by_value.setdefault(scores[r], ([], []))[0 if labels[r] else 1].append(
                    task_codes[r])
            self.value_groups.append([(picker(by_value[v][0]), picker(by_value[v][1]))
                                      for v in sorted(by_value)])
        for members in group_rows(strata_codes, rows):
            failures = sorted(scores[r] for r in members if not labels[r])
            fail_rows = sorted((r for r in members if not labels[r]), key=scores.__getitem__)
            start = len(fail_tasks)
            fail_tasks.extend(task_codes[r] for r in fail_rows)
            first = len(succ_tasks)
            for r in members:
                if labels[r]:
                    succ_tasks.append(task_codes[r])
                    low.append(start + bisect.bisect_left(failures, scores[r]))
                    high.append(start + bisect.bisect_right(failures, scores[r]))
            self.bounds.append((first, len(succ_tasks), start, len(fail_tasks)))
        tied = [i for i, (a, b) in enumerate(zip(low, high)) if a != b]
        self.fail_weights = picker(fail_tasks)
        self.succ_weights = picker(succ_tasks)
        self.below = picker(low)
        # Few ties (continuous scores): add the tied credit for those successes only.
        # Mostly ties (counts): read both ends for every success instead.
        self.mostly_tied = 2 * len(tied) > len(low)
        self.below_or_tied = picker(high)
        self.tied_successes = picker(tied)
        self.tied_low = picker(low[i] for i in tied)
        self.tied_high = picker(high[i] for i in tied)

    def success_weights(self, weights):
        """The successes' weights in this sweep's order (the same for every score list
        on the same rows, so sweeps on those rows can share them)."""
        return self.succ_weights(weights)

    def stratum_successes(self, success_weights):
        """Total success weight in each stratum (shared like the success weights)."""
        return [sum(success_weights[first:last]) for first, last, _, _ in self.bounds]

    def grouped_pair_count(self, weights):
        """Weighted (2U, pairs) one distinct value at a time: credit 2 per failure
        weight below a success's value and 1 per failure weight at it."""
        twice_u = pairs = 0
        for groups in self.value_groups:
            below = successes = 0
            for take_successes, take_failures in groups:
                here = sum(take_failures(weights))
                weight = sum(take_successes(weights))
                twice_u += weight * (2 * below + here)
                below += here
                successes += weight
            pairs += successes * below
        return twice_u, pairs

    def pair_count(self, weights, success_weights=None, stratum_successes=None):
        """Return weighted (2U, pairs) when task t counts weights[t] times."""
        if self.grouped:
            return self.grouped_pair_count(weights)
        cumulative = list(itertools.accumulate(self.fail_weights(weights), initial=0))
        if success_weights is None:
            success_weights = self.succ_weights(weights)
        if stratum_successes is None:
            stratum_successes = self.stratum_successes(success_weights)
        # Credit 2 per failure strictly below a success, 1 per tied failure.
        if self.mostly_tied:
            twice_u = sum(map(operator.mul, success_weights, self.below(cumulative)))
            twice_u += sum(map(operator.mul, success_weights,
                               self.below_or_tied(cumulative)))
        else:
            twice_u = 2 * sum(map(operator.mul, success_weights, self.below(cumulative)))
            twice_u += sum(map(operator.mul, self.tied_successes(success_weights),
                               map(operator.sub, self.tied_high(cumulative),
                                   self.tied_low(cumulative))))
        pairs = 0
        for (_, _, start, end), successes in zip(self.bounds, stratum_successes):
            twice_u -= 2 * successes * cumulative[start]
            pairs += successes * (cumulative[end] - cumulative[start])
        return twice_u, pairs


def cluster_weights(rng, n_tasks):
    """How many times each task is drawn in one bootstrap resample."""
    # rng.choices(range(n_tasks), k=n_tasks), draw for draw, counted in C.
    random_draw, scale = rng.random, float(n_tasks)
    drawn = collections.Counter([math.floor(random_draw() * scale)
                                 for _ in itertools.repeat(None, n_tasks)])
    return [drawn[task] for task in range(n_tasks)]


def bootstrap_differences(pairs_of_sweeps, n_tasks, boot, rng):
    """Resample tasks `boot` times; return per pair the sorted differences and skips.

    `pairs_of_sweeps` is [(feature sweep, baseline sweep)], both on the same rows
    (so their successes come in the same order) and oriented in their observed
    directions; a baseline sweep shared by several features is computed once per
    resample.
    """
    differences = [[] for _ in pairs_of_sweeps]
    skipped = [0] * len(pairs_of_sweeps)
    for _ in range(boot):
        weights = cluster_weights(rng, n_tasks)
        cache = {}
        for index, (feature, baseline) in enumerate(pairs_of_sweeps):
            if id(baseline) not in cache:
                shared = sums = None
                if not (feature.grouped and baseline.grouped):
                    shared = baseline.success_weights(weights)
                    sums = baseline.stratum_successes(shared)
                cache[id(baseline)] = [shared, sums, baseline.pair_count(weights, shared, sums)]
            entry = cache[id(baseline)]
            if entry[0] is None and not feature.grouped:
                entry[0] = baseline.success_weights(weights)
                entry[1] = baseline.stratum_successes(entry[0])
            shared, sums, (base_twice_u, base_pairs) = entry
            twice_u, pairs = feature.pair_count(weights, shared, sums)
            if pairs == 0:
                skipped[index] += 1
                continue
            differences[index].append(twice_u / (2 * pairs) - base_twice_u / (2 * base_pairs))
    return differences, skipped


# --- shuffles and resamples run in fixed, separately seeded chunks ---
# The chunks are the same whether they run here or in forked worker processes, so
# the output never depends on how many cores did the work.
_SHARED = {}     # the prepared family and sweeps, inherited by forked workers


def chunk_sizes(total, chunks=CHUNKS):
    """Split `total` draws into at most `chunks` near-equal, non-empty chunks.

    >>> chunk_sizes(2000), chunk_sizes(3)
    ([250, 250, 250, 250, 250, 250, 250, 250], [1, 1, 1])
    """
    base, extra = divmod(total, chunks)
    return [size for size in (base + (i < extra) for i in range(chunks)) if size]


def run_chunk(job):
    """Run one chunk of shuffles ('null') or bootstrap resamples ('boot')."""
    kind, index, size, seed = job
    shared = _SHARED
    rng = random.Random(f"{seed}:{kind}:{index}")
    if kind == "null":
        return null_aucs(shared["family"], shuffled_draws(
            shared["labels"], shared["permute"], shared["strata_codes"],
            shared["task_codes"], size, rng))
    return bootstrap_differences(shared["sweeps"], shared["n_clusters"], size, rng)


def resample_in_chunks(shared, perms, boot, seed, parallel):
    """Null AUCs per shuffle, sorted bootstrap differences per feature, and skip counts.

    With `parallel`, the chunks are spread over forked processes (one per available
    core) where the platform can fork; elsewhere they run here, with the same result.
    """
    jobs = [("null", i, size, seed) for i, size in enumerate(chunk_sizes(perms))]
    jobs += [("boot", i, size, seed) for i, size in enumerate(chunk_sizes(boot))]
    _SHARED.clear()
    _SHARED.update(shared)
    try:
        results = None
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
            (os.cpu_count() or 1)
        if parallel and cores > 1:
            import multiprocessing
            if "fork" in multiprocessing.get_all_start_methods():
                context = multiprocessing.get_context("fork")
                with context.Pool(min(cores, len(jobs))) as pool:
                    results = pool.map(run_chunk, jobs, chunksize=1)
        if results is None:
            results = [run_chunk(job) for job in jobs]
    finally:
        _SHARED.clear()
    null = []
    differences = [[] for _ in shared["sweeps"]]
    skipped = [0] * len(shared["sweeps"])
    for job, result in zip(jobs, results):
        if job[0] == "null":
            null.extend(result)
        else:
            for index, (diffs, skips) in enumerate(zip(*result)):
                differences[index].extend(diffs)
                skipped[index] += skips
    return null, [sorted(d) for d in differences], skipped


def codes_of(values):
    """Replace each value by the index of its level in sorted order."""
    levels = sorted(set(values))
    index = {level: code for code, level in enumerate(levels)}
    return [index[v] for v in values], levels


def histogram(values, bins=HISTOGRAM_BINS, low=0.5, high=1.0):
    """Counts of `values` in equal bins over [low, high]; the top bin is closed."""
    counts = [0] * bins
    width = (high - low) / bins
    for value in values:
        counts[max(0, min(bins - 1, int((value - low) / width)))] += 1
    return {"edges": [low + width * i for i in range(bins + 1)], "counts": counts}


def cluster_warning(n_clusters, kind):
    """A one-line caution when the cluster bootstrap has few clusters, else None.

    >>> cluster_warning(1, "task")[:38]
    'only 1 task: fewer than 2 clusters to '
    >>> cluster_warning(10, "task") is None
    True
    """
    clusters = f"{n_clusters} {kind}{'' if n_clusters == 1 else 's'}"
    if n_clusters < 2:
        return (f"only {clusters}: fewer than 2 clusters to resample, so no cluster "
                f"interval and gate 3 fails")
    if n_clusters < FEW_CLUSTERS:
        return (f"only {clusters}: with fewer than {FEW_CLUSTERS} clusters the cluster "
                f"bootstrap intervals are rough")
    return None


def gate_verdict(feature, clusters_resampled=True):
    """Name the first gate a feature fails, or say it passes all three."""
    ci = feature["delta_ci"]
    if feature["delta_same_rows"] <= 0:
        return "fails gate 1: not better than the baseline on its own rows"
    if feature["adjusted_p"] is None or feature["adjusted_p"] >= ALPHA:
        return "fails gate 2: not significant once the family's width is counted"
    if not clusters_resampled:
        return "fails gate 3: fewer than 2 clusters to resample"
    if ci is None or ci[0] is None or ci[0] <= 0:
        return "fails gate 3: the task-cluster interval reaches 0"
    return "passes all three gates"


def tasks_alone_in_size(tasks, permute):
    """Under --permute tasks, how many tasks have no other task of their size (they never
    move); None for the other schemes. Raises InputError when no task can move.

    >>> tasks_alone_in_size(["a", "a", "b", "b", "c"], "tasks")
    1
    """
    if permute != "tasks":
        return None
    if tasks is None:
        raise InputError("--permute tasks needs a task column (looked for "
                         f"{', '.join(TASK_NAMES)}; name it with --task)")
    sizes = {}
    for task in tasks:
        sizes[task] = sizes.get(task, 0) + 1
    tasks_of_size = {}
    for size in sizes.values():
        tasks_of_size[size] = tasks_of_size.get(size, 0) + 1
    alone = sum(1 for size in sizes.values() if tasks_of_size[size] == 1)
    if alone == len(sizes):
        raise InputError(f"--permute tasks: no two of the {len(sizes)} tasks have the same "
                         f"number of runs, so no task can move and every shuffle would be "
                         f"the observed outcome; use --permute rows or strata")
    return alone


def family_tests(features, null, base_auc, perms):
    """Gate 2 from the shuffles' AUCs: per-feature permutation p, the step-down minP
    adjusted p (written into each feature), and the report's single-step max-AUC
    figures; returns the family-null summary."""
    observed = [f["auc"] for f in features]
    maxima = [family_maximum(aucs) for aucs in null]
    ordered_maxima = sorted(maxima)
    if null:
        raw, adjusted = stepdown_minp(observed, null)
    else:
        raw = adjusted = [None] * len(features)
    for feature, raw_p, adjusted_value in zip(features, raw, adjusted):
        feature["permutation_p"] = raw_p
        feature["adjusted_p"] = adjusted_value
        feature["max_auc_p"] = adjusted_p(feature["auc"], ordered_maxima) if null else None
    best = max(range(len(features)), key=lambda j: (observed[j], -j), default=None)
    summary = {
        "perms": perms, "family_size": len(features),
        "median_max": statistics.median(maxima) if maxima else None,
        "p_clear_bar": (sum(m > base_auc for m in maxima) / len(maxima)) if maxima else None,
        "observed_max": observed[best] if best is not None else None,
        "observed_max_feature": features[best]["name"] if best is not None else None,
        "p_observed_max": (adjusted_p(observed[best], ordered_maxima)
                           if best is not None and null else None),
        "without_best": None,
        "histogram": histogram(maxima),
        "smallest_p": 1 / (1 + perms),
    }
    if best is not None and null and len(features) >= 2:
        # The report's robustness figure: the same single-step family p, with the best
        # feature taken out of the observed family and of every shuffle.
        rest = [family_maximum(aucs, skip=best) for aucs in null]
        rest_best = max((j for j in range(len(features)) if j != best),
                        key=lambda j: (observed[j], -j))
        summary["without_best"] = {
            "removed": features[best]["name"],
            "observed_max": observed[rest_best],
            "observed_max_feature": features[rest_best]["name"],
            "p": adjusted_p(observed[rest_best], sorted(rest))}
    return summary


def audit(labels, candidates, baseline, *, tasks=None, strata=None, perms=DEFAULT_PERMS,
          boot=DEFAULT_BOOT, seed=DEFAULT_SEED, permute=None, baseline_name=DEFAULT_BASELINE,
          named=False):
    """Apply the three gates; return the report as plain data.

    labels: list of 0/1. candidates: [(name, values)] with None for undefined.
    baseline: values of the baseline (no None). tasks, strata: lists of labels or None.
    """
    n = len(labels)
    permute = permute or ("strata" if strata is not None else "rows")
    strata_codes, strata_levels = codes_of(strata) if strata is not None else ([0] * n, [])
    if tasks is not None:
        task_codes, task_levels = codes_of(tasks)
    else:
        task_codes, task_levels = list(range(n)), []
    n_clusters = len(task_levels) if tasks is not None else n
    # One cluster resampled is the same cluster every time: no interval exists.
    clusters_resampled = n_clusters >= 2
    groups = strata if strata is not None else None
    everyone = range(n)
    tasks_never_moved = tasks_alone_in_size(tasks, permute)

    base_u, base_pairs = pair_count(baseline, labels, groups)
    if base_pairs == 0:
        raise InputError("no stratum holds both a success and a failure, so no "
                         "within-stratum AUC exists; drop --strata or choose another column")
    base_auc, base_direction = better_direction(base_u, base_pairs)
    base_pooled = better_direction(*pair_count(baseline, labels))[0]
    family_names, degenerate, screen_notes = find_degenerate(
        candidates, labels, (baseline_name, baseline), strata, named=named)
    values_of = dict(candidates)

    # Task identity is read in the fixed '+' direction: with no task effect,
    # leaving a run out lowers its task's rate exactly when it succeeded, an artificial
    # '-' signal that choosing the better direction would report as skill.
    identity_auc = identity_direction = None
    if tasks is not None and len(task_levels) >= 2:
        rate = leave_one_out_task_rate(labels, tasks)
        scored = [i for i in everyone if rate[i] is not None]
        identity_auc = auc_in_direction(*pair_count(rate, labels, groups, scored), "+")
        identity_direction = None if identity_auc is None else "+"

    features = []
    sweeps = []
    base_sweeps = {}
    base_components = {}
    same_rows, identity_rows = {}, {}
    for name in family_names:
        values = values_of[name]
        rows = [i for i in everyone if values[i] is not None]
        twice_u, pairs = pair_count(values, labels, groups, rows)
        auc, direction = better_direction(twice_u, pairs)
        pooled, pooled_direction = better_direction(
            *(pair_count(values, labels, None, rows) if groups is not None
              else (twice_u, pairs)))
        key = tuple(rows)
        if key not in same_rows:       # the same for every feature on these rows
            same_rows[key] = better_direction(*pair_count(baseline, labels, groups, rows))
        base_same, base_same_direction = same_rows[key]
        scores = oriented(values, direction)
        base_scores = oriented(baseline, base_same_direction)
        within_u, within_pairs = (pair_count(scores, labels, tasks, rows)
                                  if tasks is not None else (0, 0))
        if key not in base_sweeps:
            base_sweeps[key] = BootstrapSweep(base_scores, labels, strata_codes,
                                              task_codes, rows)
        sweeps.append((BootstrapSweep(scores, labels, strata_codes, task_codes, rows),
                       base_sweeps[key]))
        undefined = variance_undefined(labels, groups, rows)
        parts = None if undefined else paired_parts(scores, base_scores, labels, groups,
                                                    rows, base_components)
        flags = []
        delta_all, delta_same = auc - base_auc, auc - base_same
        if delta_all * delta_same < 0:
            flags.append("same_row_sign_flip")
        within = auc_in_direction(within_u, within_pairs, "+")
        if within is not None and within < 0.5:
            flags.append("within_task_reversed")
        identity_same = None
        if identity_auc is not None:
            # The same-row rule of gate 1: task identity scored on the feature's rows.
            if key not in identity_rows:
                scored_rows = [i for i in rows if rate[i] is not None]
                identity_rows[key] = auc_in_direction(*pair_count(rate, labels, groups,
                                                                  scored_rows), "+")
            identity_same = identity_rows[key]
        if identity_same is not None and auc < identity_same:
            flags.append("below_task_identity")
        if len(rows) < n:
            flags.append("partial_rows")
        if screen_notes[name]["duplicate_of"]:
            flags.append("duplicate")
        if screen_notes[name]["youden_equal_to"]:
            flags.append("youden_equal")
        features.append({
            "name": name, "n_defined": len(rows), "n_undefined": n - len(rows),
            "n_successes": sum(labels[i] for i in rows), "auc": auc,
            "direction": direction, "auc_pooled": pooled,
            "direction_pooled": pooled_direction,
            "baseline_auc_all_rows": base_auc, "baseline_auc_same_rows": base_same,
            "baseline_direction_same_rows": base_same_direction,
            "delta_all_rows": delta_all, "delta_same_rows": delta_same,
            "delong_p": delong_p(scores, base_scores, labels, groups, rows, parts=parts),
            "delong_undefined": undefined,
            "clustered": clustered_difference(scores, base_scores, labels, groups,
                                              task_codes, rows, parts=parts),
            "within_task_auc": within, "within_task_pairs": within_pairs,
            "task_identity_auc_same_rows": identity_same, "flags": flags,
            "duplicate_of": screen_notes[name]["duplicate_of"],
            "youden_equal_to": screen_notes[name]["youden_equal_to"]})

    null_family = NullFamily([values_of[f["name"]] for f in features], strata_codes,
                             len(strata_levels) or 1)
    work = n * max(1, len(features)) * (perms + boot)
    null, differences, skipped = resample_in_chunks(
        {"family": null_family, "labels": labels, "permute": permute,
         "strata_codes": strata_codes, "task_codes": task_codes, "sweeps": sweeps,
         "n_clusters": n_clusters}, perms if features else 0,
        boot if clusters_resampled else 0, seed,
        parallel=work >= PARALLEL_WORK)
    family_null = family_tests(features, null, base_auc, perms)
    family_null["permute"] = permute
    family_null["tasks_never_moved"] = tasks_never_moved

    low, high = (1 - CONFIDENCE) / 2, 1 - (1 - CONFIDENCE) / 2
    for feature, diffs, skips in zip(features, differences, skipped):
        feature["delta_ci"] = [percentile(diffs, low), percentile(diffs, high)] \
            if diffs else None
        feature["bootstrap_skipped"] = skips
        feature["verdict"] = gate_verdict(feature, clusters_resampled)

    passing = [f["name"] for f in features if f["verdict"] == "passes all three gates"]
    return {
        "n_runs": n, "n_successes": sum(labels), "n_failures": n - sum(labels),
        "n_tasks": len(task_levels) if tasks is not None else None,
        "clusters": "tasks" if tasks is not None else "runs",
        "strata_levels": strata_levels,
        "baseline": {"name": baseline_name, "auc": base_auc, "direction": base_direction,
                     "auc_pooled": base_pooled},
        "task_identity_auc": identity_auc, "task_identity_direction": identity_direction,
        "features": features, "family_null": family_null,
        "bootstrap": {"resamples": boot if clusters_resampled else 0,
                      "clusters": n_clusters, "defined": clusters_resampled,
                      "warning": cluster_warning(n_clusters,
                                                 "task" if tasks is not None else "run"),
                      "confidence": CONFIDENCE},
        "degenerate": degenerate,
        "verdict": {"passing": passing, "alpha": ALPHA},
    }


# === Input ===
def plural(count, noun, nouns=None):
    """'1 task', '2 tasks': a count with its noun.

    >>> plural(1, "task"), plural(0, "feature"), plural(2, "run", "runs")
    ('1 task', '0 features', '2 runs')
    """
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"


def count_text(value):
    """Print a count as an integer ('4', never '4.000'); other numbers as fmt does.

    >>> count_text(4.0), count_text(3), count_text(2.5)
    ('4', '3', '2.500')
    """
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return fmt(value)


DEMO_RUNS = """\
run_id,task_id,condition,verified,tool_calls,edit_seconds,search_calls,read_calls,alarms
d01,t1,plain,0,19,,9,8,0
d02,t1,scaffold,0,51,121,8,7,0
d03,t1,plain,1,34,22,8,15,0
d04,t1,scaffold,0,64,105,7,17,0
d05,t2,plain,0,45,79,9,11,0
d06,t2,scaffold,1,30,65,9,13,0
d07,t2,plain,0,21,,6,11,0
d08,t2,scaffold,0,23,,8,12,0
d09,t3,plain,1,19,77,1,12,0
d10,t3,scaffold,0,26,,1,13,0
d11,t3,plain,1,30,104,3,15,0
d12,t3,scaffold,1,26,24,2,17,0
d13,t4,plain,0,15,,7,15,0
d14,t4,scaffold,0,20,,4,11,0
d15,t4,plain,1,10,59,6,9,0
d16,t4,scaffold,0,30,69,4,11,0
d17,t5,plain,0,28,,7,17,0
d18,t5,scaffold,0,10,,4,13,0
d19,t5,plain,0,54,51,7,18,0
d20,t5,scaffold,0,43,100,4,10,0
d21,t6,plain,1,30,75,2,9,0
d22,t6,scaffold,0,21,,4,17,0
d23,t6,plain,1,21,64,6,14,0
d24,t6,scaffold,1,24,43,4,16,0
d25,t7,plain,1,31,54,9,10,0
d26,t7,scaffold,1,31,84,6,11,0
d27,t7,plain,1,32,84,4,15,0
d28,t7,scaffold,0,57,88,6,13,0
d29,t8,plain,0,17,,6,24,0
d30,t8,scaffold,0,21,,8,9,0
d31,t8,plain,1,35,54,4,10,0
d32,t8,scaffold,0,65,88,3,20,0
"""


def match_value(cell, wanted):
    """True when a cell matches a --where value: same text, number or yes/no."""
    a, b = cell.strip().lower(), wanted.strip().lower()
    if a == b:
        return True
    try:
        return float(a) == float(b)
    except ValueError:
        pass
    try:
        return parse_bool(a, "") == parse_bool(b, "")
    except InputError:
        return False


def select_rows(table, conditions):
    """Indices of the rows matching every --where COL=VALUE."""
    rows = list(range(len(table.rows)))
    for condition in conditions:
        if "=" not in condition:
            raise InputError(f"--where {condition!r}: expected COLUMN=VALUE")
        column, wanted = condition.split("=", 1)
        column = table.column(column.strip(), flag="--where")
        before = rows
        rows = [i for i in rows if match_value(table.rows[i][column], wanted)]
        if not rows:
            # The values worth suggesting are those the earlier filters left.
            seen = sorted({table.rows[i][column].strip() for i in before})
            earlier = (f" among the {len(before)} rows left by the earlier --where"
                       if len(before) < len(table.rows) else "")
            raise InputError(f"--where {condition}: no row of {table.name} matches "
                             f"(column {column!r} holds {', '.join(map(repr, seen[:8]))}"
                             f"{', ...' if len(seen) > 8 else ''}{earlier})")
    return rows


INTEGER_CELL = re.compile(r"[+-]?\d+")
SHORT_DECIMAL_CELL = re.compile(r"[+-]?(\d+\.\d*|\.\d+)")


def exact_number(value, where):
    """Read a numeric cell exactly: an integer as a Python int (so 2**53 + 1 keeps its
    order and its ties), a decimal of at most 15 significant digits as the float it
    rounds to (distinct such decimals stay distinct and in order), anything longer or
    in exponent form as an exact Fraction; None where the cell is missing.

    >>> exact_number("9007199254740993", "x"), exact_number("2.5", "x")
    (9007199254740993, 2.5)
    >>> exact_number("1e3", "x"), exact_number("0.12345678901234567", "x")
    (1000, Fraction(12345678901234567, 100000000000000000))
    >>> exact_number("NA", "x") is None
    True
    """
    if is_missing(value):
        return None
    text = str(value).strip()
    if INTEGER_CELL.fullmatch(text):
        return int(text)
    number = parse_number(text, where)       # the shared rules: NaN missing, inf refused
    if number is None:
        return None
    if SHORT_DECIMAL_CELL.fullmatch(text) and \
            len(text.lstrip("+-").replace(".", "").lstrip("0")) <= 15:
        return number
    try:
        exact = Fraction(text)
    except ValueError:
        # Forms float() accepts and Fraction does not ('1_000', ' 1e3'): the float.
        return number
    return exact.numerator if exact.denominator == 1 else exact


def tolerant_column(table, column, rows):
    """Read a column exactly, noting instead of raising: (values with None where
    undefined or not a number, [row indices whose cell is not a number])."""
    values, bad = [], []
    for i in rows:
        text = table.rows[i][column].strip()
        if text.isdecimal():                  # the common case, read without ceremony
            values.append(int(text))
            continue
        try:
            values.append(exact_number(text, ""))
        except InputError:
            values.append(None)
            bad.append(i)
    return values, bad


def numeric_column(table, column, rows):
    """Read a column as exact numbers (None where undefined); a yes/no column reads
    as 1/0. A cell that is neither is an error naming its row and value."""
    try:
        return [exact_number(table.rows[i][column], table.where(i, column)) for i in rows]
    except InputError as number_error:
        try:
            return [None if is_missing(table.rows[i][column]) else
                    int(parse_bool(table.rows[i][column], table.where(i, column)))
                    for i in rows]
        except InputError:
            raise number_error from None


def id_like(column):
    lowered = column.lower()
    return lowered in ID_LIKE_NAMES or lowered.endswith("_id")


def read_runs(args, inputs):
    """Read and check every input; return the audit's arguments and the report's notes."""
    if args.demo:
        table = parse_table_text(DEMO_RUNS, "demo", "csv")
        tool_table = None
    else:
        if not args.runs:
            raise InputError("no runs table given (a CSV/TSV/JSONL/JSON file, '-' or a "
                             "runs folder); try --demo or --help")
        table = inputs.read_table(args.runs)
        tool_table = inputs.sibling_table(args.runs, "tool_calls.csv")
    notes = []
    run_col = table.column(args.run_id, flag="--run-id", candidates=RUN_ID_NAMES,
                           required=False)
    task_col = table.column(args.task, flag="--task", candidates=TASK_NAMES, required=False)
    strata_col = table.column(args.strata, flag="--strata") if args.strata else None
    rows = select_rows(table, args.where)
    # One canonical order (by run id, else by the row's cells), so that the same rows
    # in any order give the same draws, the same "first" examples and the same bytes.
    if run_col:
        rows.sort(key=lambda i: table.rows[i][run_col].strip())
    else:
        rows.sort(key=lambda i: [table.rows[i][c] for c in table.columns])
    n_selected = len(rows)
    if run_col:
        seen = {}
        for i in rows:
            run = table.rows[i][run_col].strip()
            if is_missing(run):
                raise InputError(f"{table.where(i, run_col)}: empty run id")
            if run in seen:
                raise InputError(f"{table.where(i, run_col)}: run id {run!r} repeats "
                                 f"{table.where(seen[run])}")
            seen[run] = i
    run_ids = [table.rows[i][run_col].strip() for i in rows] if run_col else None

    # The outcome: from the table, or joined from regrade.py's verdicts.
    tasks = None
    if args.verdicts:
        if not run_col:
            raise InputError(f"{table.name}: --verdicts joins on run id, but there is no "
                             f"run id column (looked for {', '.join(RUN_ID_NAMES)}; "
                             f"name it with --run-id)")
        verdicts = inputs.read_table(args.verdicts)
        v_run = verdicts.column(None, flag="--run-id", candidates=RUN_ID_NAMES)
        v_outcome = verdicts.column(args.outcome, flag="--outcome", candidates=OUTCOME_NAMES)
        v_task = verdicts.column(None, candidates=TASK_NAMES, required=False)
        by_run = {}
        for i, row in enumerate(verdicts.rows):
            by_run.setdefault(row[v_run].strip(), i)
        missing = [run for run in run_ids if run not in by_run]
        if missing:
            raise InputError(f"{verdicts.name}: no verdict for {plural(len(missing), 'run')}: "
                             f"{', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''}")
        # An empty outcome cell is regrade.py's mark of a grading error: no verdict, so
        # the run is left out (and counted by status) rather than read as a failure.
        v_status = verdicts.column(None, candidates=("status",), required=False)
        labels, kept, ungraded = [], [], {}
        for row, run in zip(rows, run_ids):
            i = by_run[run]
            if is_missing(verdicts.rows[i][v_outcome]):
                status = verdicts.rows[i][v_status].strip() if v_status else ""
                status = status or f"empty {v_outcome!r}"
                ungraded[status] = ungraded.get(status, 0) + 1
                continue
            labels.append(int(parse_bool(verdicts.rows[i][v_outcome],
                                         verdicts.where(i, v_outcome))))
            kept.append(row)
        if ungraded:
            left_out = sum(ungraded.values())
            statuses = ", ".join(f"{status} {count}" for status, count
                                 in sorted(ungraded.items(), key=lambda kv: (-kv[1], kv[0])))
            if not kept:
                raise InputError(f"{verdicts.name}: no audited run has a verdict "
                                 f"({left_out} with an empty {v_outcome!r}: {statuses})")
            notes.append(f"{plural(left_out, 'run')} left out: no verdict ({statuses})")
            rows = kept
            run_ids = [table.rows[i][run_col].strip() for i in rows]
        outcome_name = f"{v_outcome} (from {verdicts.name}, joined on {run_col})"
        if task_col is None and v_task:
            tasks = [verdicts.rows[by_run[run]][v_task].strip() for run in run_ids]
            task_name = f"{v_task} (from {verdicts.name})"
    else:
        outcome_col = table.column(args.outcome, flag="--outcome", candidates=OUTCOME_NAMES)
        labels = []
        for i in rows:
            if is_missing(table.rows[i][outcome_col]):
                raise InputError(f"{table.where(i, outcome_col)}: the outcome is undefined; "
                                 f"every audited run needs one (drop it with --where)")
            labels.append(int(parse_bool(table.rows[i][outcome_col],
                                         table.where(i, outcome_col))))
        outcome_name = outcome_col
    successes = sum(labels)
    if successes in (0, len(labels)):
        raise InputError(f"{table.name}: the outcome {outcome_name} has one class "
                         f"({successes} successes, {len(labels) - successes} failures"
                         f"{' after --where' if args.where else ''}); an AUC needs both")

    if task_col:
        tasks, task_name = [], task_col
        for i in rows:
            cell = table.rows[i][task_col].strip()
            if is_missing(cell):
                raise InputError(f"{table.where(i, task_col)}: empty task")
            tasks.append(cell)
    if tasks is None:
        task_name = None
        notes.append("no task column: each run is its own cluster; the within-task and "
                     "task-identity figures are undefined")
    strata = None
    if strata_col:
        strata = []
        for i in rows:
            cell = table.rows[i][strata_col].strip()
            if is_missing(cell):
                raise InputError(f"{table.where(i, strata_col)}: empty stratum")
            strata.append(cell)
        if len(set(strata)) < 2:
            notes.append(f"--strata {strata_col}: one level only, so stratified = pooled")

    # The baseline: the table's column, checked against tool_calls.csv when it is there.
    base_col = args.baseline if args.baseline in table.columns else None
    if base_col:
        baseline = numeric_column(table, base_col, rows)
        for value, i in zip(baseline, rows):
            if value is None:
                raise InputError(f"{table.where(i, base_col)}: the baseline is undefined; "
                                 f"it must be defined on every audited run")
    table_run_ids = ([row[run_col].strip() for row in table.rows] if run_col else None)
    # Only a tool-call count can be checked against the log; another --baseline
    # column is taken as it is.
    counts_calls = args.baseline == DEFAULT_BASELINE
    check = recount_tool_calls(tool_table if counts_calls or not base_col else None, run_ids,
                               baseline if base_col else None, base_col, table_run_ids)
    if check:
        notes.extend(check.pop("notes"))
    if not base_col:
        if not check or check.get("recomputed") is None:
            raise InputError(f"{table.name}: no baseline column {args.baseline!r} (name it "
                             f"with --baseline) and no tool_calls.csv beside it to count; "
                             f"columns are {', '.join(table.columns)}")
        baseline = check.pop("recomputed")
        base_source = f"counted from {tool_table.name}"
    else:
        if check:
            check.pop("recomputed", None)
        base_source = f"column {base_col!r}"
    if len(set(baseline)) == 1:
        raise InputError(f"{table.name}: the baseline {base_col or args.baseline} "
                         f"({base_source}) is {number_text(baseline[0])} on every one of the "
                         f"{len(baseline)} audited runs; a constant baseline has no AUC to "
                         f"beat")

    # The features.
    taken = {c for c in (run_col, task_col, strata_col, base_col, args.baseline) if c}
    if not args.verdicts:
        taken.add(outcome_col)
    if args.features:
        names = [n.strip() for n in args.features.split(",") if n.strip()]
        for name in names:
            table.column(name, flag="--features")
            if name in taken:
                raise InputError(f"--features: {name!r} is the run id, outcome, task, "
                                 f"strata or baseline column, not a feature")
        if len(set(names)) != len(names):
            raise InputError("--features: a column is named twice")
    roles = {run_col: "run id", task_col: "task", strata_col: "strata", base_col: "baseline"}
    if not args.verdicts:
        roles[outcome_col] = "outcome"
    left_out, not_candidates, read = [], [], {}
    if args.features:
        not_candidates = [{"name": c, "why": roles.get(c, "not named")}
                          for c in table.columns if c not in names]
    else:
        names = []
        for c in table.columns:
            role = roles.get(c) or ("id-like name" if id_like(c) else None)
            if role is None and (c.lower() in OUTCOME_NAMES or c.lower() in TASK_NAMES
                                 or c.lower() in RUN_ID_NAMES):
                role = "outcome, task or run id name"
            if role:
                not_candidates.append({"name": c, "why": role})
                continue
            values, bad = tolerant_column(table, c, rows)
            defined = len(bad) + sum(v is not None for v in values)
            if not bad:
                names.append(c)
                read[c] = values
            elif 2 * len(bad) >= defined:
                not_candidates.append({"name": c, "why": "text"})
            else:
                first = min(bad, key=lambda i: table.lines[i])
                left_out.append({"name": c, "reason": (
                    f"not a number at row {table.lines[first]}: {table.rows[first][c]!r} "
                    f"({len(bad)} of {defined} defined cells are not numbers; name it "
                    f"with --features to see the error)")})
        if not names:
            raise InputError(f"{table.name}: no numeric feature columns; name them with "
                             f"--features")
    candidates = [(name, read[name] if name in read else numeric_column(table, name, rows))
                  for name in names]
    if all(v is None for _, values in candidates for v in values):
        raise InputError(f"{table.name}: every feature is undefined on every audited run "
                         f"({', '.join(names[:6])}{', ...' if len(names) > 6 else ''})")
    if args.where:
        notes.append(f"audited subset: {' and '.join(args.where)} "
                     f"({n_selected} of {plural(len(table.rows), 'run')})")
    return {
        "labels": labels, "candidates": candidates, "baseline": baseline, "tasks": tasks,
        "strata": strata, "baseline_name": base_col or args.baseline,
        "meta": {"table": table.name, "outcome": outcome_name, "task": task_name,
                 "strata": strata_col, "run_id": run_col, "where": list(args.where),
                 "baseline_source": base_source, "baseline_check": check, "notes": notes,
                 "columns": list(table.columns), "not_candidates": not_candidates},
        "left_out": left_out,
    }


def recount_tool_calls(tool_table, run_ids, baseline, base_col, table_run_ids=None):
    """Count tool_calls.csv rows per run and compare with the baseline column.

    `table_run_ids` are the run ids of every row of the runs table (before --where):
    a logged run that is not among them means the log and the table disagree, and
    counting on would quietly compare different runs.
    """
    if tool_table is None:
        return None
    if run_ids is None:
        return {"checked": False, "recomputed": None, "notes": [
            f"{tool_table.name} not used: the runs table has no run id column to join on"]}
    run_col = tool_table.column(None, flag="--run-id", candidates=RUN_ID_NAMES)
    counts = {}
    for row in tool_table.rows:
        run = row[run_col].strip()
        counts[run] = counts.get(run, 0) + 1
    known = set(run_ids if table_run_ids is None else table_run_ids)
    strangers = [run for run in counts if run not in known]
    if strangers:
        raise InputError(f"{tool_table.name}: {len(strangers)} run id(s) not in the runs "
                         f"table: {', '.join(strangers[:5])}"
                         f"{', ...' if len(strangers) > 5 else ''}")
    recomputed = [float(counts.get(run, 0)) for run in run_ids]
    unlogged = [run for run in run_ids if run not in counts]
    check = {"checked": True, "source": tool_table.name, "column": base_col,
             "runs_compared": len(run_ids), "calls_counted": int(sum(recomputed)),
             "runs_without_calls": len(unlogged),
             "equal": None, "first_mismatch": None, "mismatches": 0,
             "recomputed": recomputed, "notes": []}
    if unlogged:
        check["notes"].append(
            f"{len(unlogged)} of {len(run_ids)} audited runs have no rows in "
            f"{tool_table.name} (counted as zero calls), first {unlogged[0]}")
    if baseline is not None:
        mismatches = [(run, table_value, count) for run, table_value, count
                      in zip(run_ids, baseline, recomputed) if table_value != count]
        check["equal"] = not mismatches
        check["mismatches"] = len(mismatches)
        if mismatches:
            run, table_value, count = mismatches[0]
            check["first_mismatch"] = {
                "run_id": run, "recomputed": int(count),
                "table": (int(table_value) if table_value == int(table_value)
                          else float(table_value))}
            check["notes"].append(
                f"baseline check failed: {base_col!r} differs from the count of "
                f"{tool_table.name} rows on {plural(len(mismatches), 'run')}, first {run} "
                f"({number_text(table_value)} vs {count_text(count)}); the table's "
                f"column is used")
    return check


# === Report ===
FLAG_LETTERS = (("same_row_sign_flip", "T", "same-row sign flip (the same-row trap)"),
                ("within_task_reversed", "W", "within-task AUC below 0.5"),
                ("below_task_identity", "I", "below the task-identity AUC on its rows"),
                ("partial_rows", "P", "undefined on some runs"),
                ("duplicate", "D", "a named copy of another column"),
                ("youden_equal", "Y", "equal to another column at their best cuts (a flag "
                 "only)"))
PERMUTE_WORDS = {"rows": "across all runs", "strata": "within strata",
                 "tasks": "whole tasks among tasks of equal size"}


def fmt_p(p):
    """Format a p-value: 3 decimals, and '<0.001' rather than a misleading 0.000.

    >>> fmt_p(0.0004997), fmt_p(0.0162), fmt_p(None)
    ('<0.001', '0.016', 'undefined')
    """
    if p is not None and 0 < p < 0.0005:
        return "<0.001"
    return fmt(p)


def auc_text(value, direction):
    return "undefined" if value is None else f"{fmt(value)} {direction}"


def signed(value):
    return "undefined" if value is None else ("+" if value > 0 else "") + fmt(value)


def summary_lines(result):
    """(label, sentence) pairs for the report's header."""
    meta, base, null = result["meta"], result["baseline"], result["family_null"]
    lines = [("runs", f"{result['n_runs']} ({result['n_successes']} succeeded, "
                      f"{result['n_failures']} failed); outcome {meta['outcome']}")]
    if meta["task"]:
        lines.append(("clusters", f"{plural(result['n_tasks'], 'task')} ({meta['task']}); "
                                  f"the bootstrap resamples whole tasks"))
    else:
        lines.append(("clusters", f"{result['n_runs']} runs, each its own cluster "
                                  f"(no task column)"))
    if meta["strata"]:
        lines.append(("strata", f"{meta['strata']}: {', '.join(result['strata_levels'])}; "
                                f"AUCs count success/failure pairs within a stratum"))
    pooled = f", pooled {fmt(base['auc_pooled'])}" if meta["strata"] else ""
    lines.append(("baseline", f"{base['name']} ({meta['baseline_source']}): AUC "
                              f"{auc_text(base['auc'], base['direction'])}{pooled}"))
    check = meta["baseline_check"]
    if not check:
        lines.append(("baseline check", "not made: no tool_calls.csv beside the runs table"
                      if base["name"] == DEFAULT_BASELINE else
                      f"not made: {base['name']!r} is not the tool-call count"))
    elif check.get("checked") and check.get("equal") is not None:
        if check["equal"]:
            text = (f"recounted from {check['source']} ({plural(check['calls_counted'], 'call')}): "
                    f"equal to {check['column']!r} on all {check['runs_compared']} runs")
        else:
            first = check["first_mismatch"]
            text = (f"recounted from {check['source']}: differs on {check['mismatches']} of "
                    f"{check['runs_compared']} runs, first {first['run_id']} "
                    f"({count_text(first['table'])} vs {count_text(first['recomputed'])})")
        lines.append(("baseline check", text))
    if not meta["task"]:
        identity = "undefined (no task column)"
    elif result["n_tasks"] < 2:
        identity = "undefined (fewer than 2 tasks)"
    else:
        identity = (f"AUC {auc_text(result['task_identity_auc'], '+')} from the other "
                    f"runs' success rate in the same task, read in the fixed + direction "
                    f"(a higher rate means success; the direction is not chosen)")
    lines.append(("task identity", identity))
    others = meta["not_candidates"]
    text = (f"{plural(null['family_size'], 'feature')} tested, "
            f"{plural(len(result['degenerate']), 'column')} left out"
            f"{' (listed below)' if result['degenerate'] else ''}")
    if others:
        text += ("; not candidates: " +
                 ", ".join(f"{c['name']} ({c['why']})" for c in others))
    lines.append(("family", text))
    return lines


def verdict_lines(result):
    """The plain verdict, as sentences."""
    features, null = result["features"], result["family_null"]
    passing = result["verdict"]["passing"]
    if not features:
        return ["No feature could be tested: every candidate is degenerate."]
    lines = []
    if passing:
        lines.append(f"Passes all three gates: {', '.join(passing)}.")
        identity = result["task_identity_auc"]
        for feature in features:
            if feature["name"] not in passing:
                continue
            doubts = []
            if "within_task_reversed" in feature["flags"]:
                doubts.append(f"within a task it scores {fmt(feature['within_task_auc'])} on "
                              f"{plural(feature['within_task_pairs'], 'pair')}, so inside a task its "
                              f"signal points the other way")
            if "below_task_identity" in feature["flags"]:
                doubts.append(f"knowing only the task scores "
                              f"{fmt(feature['task_identity_auc_same_rows'])} on its "
                              f"{plural(feature['n_defined'], 'row')}, above its "
                              f"{fmt(feature['auc'])}")
            if doubts:
                lines.append(f"But {feature['name']}: {'; '.join(doubts)}. It may measure "
                             f"task difficulty rather than the quality of the work.")
    else:
        lines.append("No feature passes all three gates.")
    for feature in features:
        if feature["name"] not in passing:
            lines.append(f"{feature['name']}: {feature['verdict']} (diff "
                         f"{signed(feature['delta_same_rows'])} "
                         f"{fmt_ci(feature['delta_ci']) or '[undefined]'}, minP adj p "
                         f"{fmt_p(feature['adjusted_p'])}).")
    for feature in features:
        if "same_row_sign_flip" in feature["flags"]:
            verb = "beats" if feature["delta_all_rows"] > 0 else "loses to"
            opposite = "loses to" if feature["delta_all_rows"] > 0 else "beats"
            lines.append(
                f"Same-row trap: {feature['name']} {verb} the baseline on all rows "
                f"({fmt(feature['auc'])} vs {fmt(feature['baseline_auc_all_rows'])}, "
                f"{signed(feature['delta_all_rows'])}) but {opposite} it on its own "
                f"{plural(feature['n_defined'], 'row')} ({fmt(feature['auc'])} vs "
                f"{fmt(feature['baseline_auc_same_rows'])}, "
                f"{signed(feature['delta_same_rows'])}).")
    if null["p_clear_bar"] is not None:
        lines.append(f"On shuffled outcomes the family maximum exceeds the baseline's "
                     f"{fmt(result['baseline']['auc'])} in {fmt(null['p_clear_bar'])} of "
                     f"shuffles (null median {fmt(null['median_max'])}).")
    identity = result["task_identity_auc"]
    if identity is not None:
        beaten = [f["name"] for f in features if f["task_identity_auc_same_rows"] is not None
                  and f["auc"] > f["task_identity_auc_same_rows"]]
        lines.append(f"Task identity alone scores {fmt(identity)} on all rows; "
                     + (f"above it on their own rows: {', '.join(beaten)}." if beaten else
                        "no feature scores above it on its own rows."))
    return lines


def shorten(name, limit=TEXT_NAME_LIMIT):
    """Cut a long name for a text table, marking the cut with a trailing '…'.

    >>> shorten("implementation_phase_seconds_total", 12), shorten("read_calls", 12)
    ('implementat…', 'read_calls')
    """
    return name if len(name) <= limit else name[:limit - 1] + "…"


def short_names(names, limit):
    """Map each name to its text-table form: cut with a trailing '…' beyond `limit`;
    names whose cut forms would collide keep their endings instead (head…tail)."""
    short = {name: shorten(name, limit) for name in names}
    cut_to = {}
    for name, cut in short.items():
        cut_to.setdefault(cut, []).append(name)
    for cut, owners in cut_to.items():
        if len(owners) > 1:
            tail = (limit - 1) // 2
            for name in owners:
                if len(name) > limit:
                    short[name] = name[:limit - 1 - tail] + "…" + name[-tail:]
    return short


def feature_tables(result, style, names):
    """The gate-1 table and the gates-2-and-3 table; `names` maps a feature's name to
    the form printed (shortened in text, full in Markdown)."""
    stratified = bool(result["meta"]["strata"])
    first = []
    for f in result["features"]:
        row = [names[f["name"]], str(f["n_defined"]), auc_text(f["auc"], f["direction"])]
        if stratified:
            row.append(auc_text(f["auc_pooled"], f["direction_pooled"]))
        row += [fmt(f["baseline_auc_all_rows"]), fmt(f["baseline_auc_same_rows"]),
                signed(f["delta_same_rows"]), fmt_ci(f["delta_ci"]) or "undefined",
                fmt_p(f["delong_p"])]
        first.append(row)
    letters = {code: letter for code, letter, _ in FLAG_LETTERS}
    second = [[names[f["name"]], fmt_p(f["permutation_p"]), fmt_p(f["adjusted_p"]),
               fmt_p(f["max_auc_p"]), fmt_p(f["clustered"]["p"]), fmt(f["within_task_auc"]),
               str(f["within_task_pairs"]),
               " ".join(letters[c] for c in f["flags"]) or "-",
               f["verdict"].replace("fails ", "").split(":")[0]]
              for f in result["features"]]
    headers = ["feature", "rows", "AUC"] + (["pooled"] if stratified else []) + \
        ["base all", "base same", "diff", "95% CI", "DeLong p"]
    return (render_table(headers, first, style),
            render_table(["feature", "perm p", "minP adj p", "max-AUC p", "clustered p",
                          "within-task", "pairs", "flags", "verdict"],
                         second, style))


def text_names(result):
    """Feature names as the text tables print them: the gate-1 table's other columns
    take what they need of TEXT_WIDTH, and names get the rest, at most
    TEXT_NAME_LIMIT characters."""
    full = [f["name"] for f in result["features"]]
    if not full:
        return {}
    probes = feature_tables(result, "text", {name: "" for name in full})
    others = max(len(line) for probe in probes for line in probe.splitlines()) - len("feature")
    limit = max(TEXT_NAME_MIN, min(TEXT_NAME_LIMIT, TEXT_WIDTH - others))
    return short_names(full + [d["name"] for d in result["degenerate"]], limit)


def degenerate_table(degenerate, names, style):
    """The left-out columns and why. In text, quoted names in a reason are shortened
    too, and a table that would still be wider than TEXT_WIDTH becomes wrapped lines."""
    rows = []
    for item in degenerate:
        reason = item["reason"]
        if style != "markdown":
            for name, short in names.items():
                if short != name:
                    reason = reason.replace(repr(name), repr(short))
        rows.append([names[item["name"]], reason])
    table = render_table(["column", "reason"], rows, style)
    if style == "markdown" or max(len(line) for line in table.splitlines()) <= TEXT_WIDTH:
        return table
    return "\n".join(wrap(f"{name}: {reason}", TEXT_WIDTH, indent="    ")
                     for name, reason in rows)


def render_report(result, style):
    """Text or Markdown report; reads the result, computes nothing new."""
    md = style == "markdown"
    null, boot = result["family_null"], result["bootstrap"]
    names = {} if md else text_names(result)
    for name in itertools.chain((f["name"] for f in result["features"]),
                                (d["name"] for d in result["degenerate"])):
        names.setdefault(name, name)
    out = []
    title = "auc_audit: does a measure beat counting tool calls, on the same rows, " \
            "beyond chance?"
    out.append(f"## {title}" if md else title)
    out.append("")
    for label, text in summary_lines(result):
        out.append(f"- **{label}**: {text}" if md else wrap(f"{label:<15} {text}", indent=" " * 16))
    out.append("")
    heading = (lambda text: f"### {text}" if md else wrap(text))
    if result["features"]:
        gate1, gates23 = feature_tables(result, style, names)
        kind = "task" if result["clusters"] == "tasks" else "run"
        if boot["defined"]:
            interval = (f"{int(boot['confidence'] * 100)}% CI of diff from "
                        f"{boot['resamples']} {boot['clusters']}-{kind} resamples")
        else:
            interval = (f"CI of diff undefined: fewer than 2 clusters to resample "
                        f"({plural(boot['clusters'], kind)})")
        out.append(heading(f"Gate 1, same rows: each feature on its defined rows; the "
                           f"baseline on all rows and on those rows; {interval}"))
        out.append("")
        out.append(gate1)
        out.append("")
        out.append(heading(f"Gates 2 and 3: family null ({plural(null['perms'], 'shuffle')} "
                           f"{PERMUTE_WORDS[null['permute']]}, direction re-chosen each "
                           f"time), within-task AUC, flags"))
        out.append("")
        out.append(gates23)
        legend = "; ".join(f"{letter} {text}" for _, letter, text in FLAG_LETTERS)
        out.append("")
        out.append(f"- flags: {legend}" if md else wrap(f"flags: {legend}", indent="  "))
        columns = ("perm p: the feature's own permutation p; minP adj p: Westfall-Young "
                   "step-down minP over the family (gate 2); max-AUC p: single-step "
                   "family-maximum joint p (the report's §7); clustered p: Obuchowski's "
                   f"{'task' if result['clusters'] == 'tasks' else 'run'}-clustered test of "
                   "the same-row difference (shown, not used by the verdict)")
        out.append(f"- {columns}" if md else wrap(columns, indent="  "))
        direction = "AUC direction: + higher means success, - lower means success"
        out.append(f"- {direction}" if md else direction)
        out.append("")
        rows = [["null median of the family maximum", fmt(null["median_max"])],
                [f"share of shuffles whose maximum exceeds the baseline "
                 f"{fmt(result['baseline']['auc'])}", fmt(null["p_clear_bar"])],
                [f"observed maximum ({names[null['observed_max_feature']]})",
                 fmt(null["observed_max"])],
                ["joint p of the observed maximum (single-step max-AUC, the report's §7)",
                 fmt_p(null["p_observed_max"])]]
        rest = null["without_best"]
        if rest:
            rows.append([f"the same without {names[rest['removed']]}: joint p of "
                         f"{names[rest['observed_max_feature']]} {fmt(rest['observed_max'])}",
                         fmt_p(rest["p"])])
        out.append(render_table(["family null", "value"], rows, style))
        out.append("")
    if result["degenerate"]:
        out.append(heading("Left out of the family, with the reason"))
        out.append("")
        out.append(degenerate_table(result["degenerate"], names, style))
        out.append("")
    out.append(heading("Verdict"))
    out.append("")
    for line in verdict_lines(result):
        out.append(f"- {line}" if md else wrap(line, indent="  "))
    notes = list(result["meta"]["notes"])
    if result["bootstrap"]["warning"]:
        notes.insert(0, result["bootstrap"]["warning"])
    null_perms = result["family_null"]["perms"]
    if result["features"] and result["family_null"]["smallest_p"] >= ALPHA:
        notes.append(f"with --perms {null_perms} the smallest possible adjusted p is "
                     f"1/{null_perms + 1} = {fmt(result['family_null']['smallest_p'])}, so no "
                     f"adjusted p can fall below {ALPHA} and gate 2 cannot pass")
    never_moved = result["family_null"]["tasks_never_moved"]
    if never_moved:
        notes.append(f"--permute tasks: {plural(never_moved, 'task')} of "
                     f"{result['n_tasks']} {'has' if never_moved == 1 else 'have'} no "
                     f"other task with the same number of runs and never "
                     f"{'moves' if never_moved == 1 else 'move'} in the shuffles (only "
                     f"{'its' if never_moved == 1 else 'their'} runs' outcomes are "
                     f"reshuffled within the task)")
    for feature in result["features"]:
        if feature["delong_undefined"]:
            notes.append(f"{feature['name']}: DeLong p and clustered p undefined: "
                         f"{feature['delong_undefined']}")
        elif feature["clustered"]["undefined"]:
            notes.append(f"{feature['name']}: clustered p undefined: "
                         f"{feature['clustered']['undefined']}")
    for feature in result["features"]:
        if feature["duplicate_of"]:
            notes.append(f"{feature['name']} (named with --features, so tested): "
                         f"{feature['duplicate_of']}")
        if feature["youden_equal_to"]:
            notes.append(f"{feature['name']}: binarised at its best (Youden) threshold it "
                         f"equals {feature['youden_equal_to']}; equal cuts need not mean "
                         f"equal rankings, so it stays in the family")
    skipped = [(f["name"], f["bootstrap_skipped"]) for f in result["features"]
               if f["bootstrap_skipped"]]
    if skipped:
        notes.append("bootstrap resamples skipped for losing a class: " +
                     ", ".join(f"{name} {count}" for name, count in skipped))
    if notes:
        out.append("")
        out.append(heading("Notes"))
        out.append("")
        out.extend(f"- {n}" if md else wrap("- " + n, indent="  ") for n in notes)
    out.append("")
    out.append(render_provenance(result["provenance"], style))
    return "\n".join(out) + "\n"


def wrap(text, width=100, indent=""):
    """Break a sentence into lines of at most `width` characters."""
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = indent + word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return "\n".join(lines)


def svg_escape(text):
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def render_svg(result):
    """Two panels: the null of the family maximum, and each feature against the baseline
    on the same rows. Every drawn value is one printed in the report."""
    null, features = result["family_null"], result["features"]
    width, height = 960, max(340, 110 + 22 * len(features))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>']
    # Left: histogram over [0.5, 1.0].
    left, top, plot_w, plot_h = 50, 40, 380, 240
    counts, edges = null["histogram"]["counts"], null["histogram"]["edges"]
    peak = max(counts) if counts and max(counts) else 1

    def x_of(value, origin=left, span=plot_w):
        return origin + (value - 0.5) / 0.5 * span

    out.append(f'<text x="{left}" y="22" font-weight="bold">Family maximum AUC on '
               f'{null["perms"]} shuffled outcomes</text>')
    for count, low, high in zip(counts, edges, edges[1:]):
        if count:
            bar = count / peak * plot_h
            out.append(f'<rect x="{x_of(low):.2f}" y="{top + plot_h - bar:.2f}" '
                       f'width="{x_of(high) - x_of(low):.2f}" height="{bar:.2f}" '
                       f'fill="#9db4d3"/>')
    out.append(f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" '
               f'y2="{top + plot_h}" stroke="black"/>')
    for tick in (0.5, 0.6, 0.7, 0.8, 0.9, 1.0):
        out.append(f'<text x="{x_of(tick):.2f}" y="{top + plot_h + 16}" '
                   f'text-anchor="middle">{tick:.1f}</text>')
    marks = [(result["baseline"]["auc"], "#c0392b", f"baseline {fmt(result['baseline']['auc'])}"),
             (null["observed_max"], "#1e8449", f"observed max {fmt(null['observed_max'])}")]
    for index, (value, colour, label) in enumerate(marks):
        if value is None:
            continue
        out.append(f'<line x1="{x_of(value):.2f}" y1="{top}" x2="{x_of(value):.2f}" '
                   f'y2="{top + plot_h}" stroke="{colour}" stroke-width="2"/>')
        # A label that would run past the panel's right edge goes left of its line.
        if x_of(value) + 4 + SVG_CHAR_WIDTH * len(label) <= left + plot_w:
            anchor, x = "start", x_of(value) + 4
        else:
            anchor, x = "end", x_of(value) - 4
        out.append(f'<text x="{x:.2f}" y="{top + 14 + 16 * index}" text-anchor="{anchor}" '
                   f'fill="{colour}">{svg_escape(label)}</text>')
    out.append(f'<text x="{left}" y="{top + plot_h + 36}">null median '
               f'{fmt(null["median_max"])}; share above the baseline '
               f'{fmt(null["p_clear_bar"])}</text>')
    # Right: each feature's AUC on its rows next to the baseline's on the same rows.
    # Names are cut to SVG_NAME_LIMIT characters so that the longest label, right-
    # aligned at the origin, still starts to the right of the histogram panel.
    origin, span = 660, 280
    out.append(f'<text x="{left + plot_w + 40}" y="22" font-weight="bold">AUC on the '
               f'feature\'s rows: feature (filled) vs baseline (open)</text>')
    for tick in (0.5, 0.75, 1.0):
        x = x_of(tick, origin, span)
        out.append(f'<line x1="{x:.2f}" y1="{top}" x2="{x:.2f}" '
                   f'y2="{top + 22 * max(1, len(features))}" stroke="#dddddd"/>')
        out.append(f'<text x="{x:.2f}" y="{top + 22 * max(1, len(features)) + 16}" '
                   f'text-anchor="middle">{tick}</text>')
    for index, feature in enumerate(features):
        y = top + 11 + 22 * index
        fx = x_of(feature["auc"], origin, span)
        bx = x_of(feature["baseline_auc_same_rows"], origin, span)
        out.append(f'<text x="{origin - 8}" y="{y + 4}" text-anchor="end">'
                   f'{svg_escape(shorten(feature["name"], SVG_NAME_LIMIT))} '
                   f'({feature["n_defined"]})</text>')
        out.append(f'<line x1="{min(fx, bx):.2f}" y1="{y}" x2="{max(fx, bx):.2f}" y2="{y}" '
                   f'stroke="#888888"/>')
        out.append(f'<circle cx="{bx:.2f}" cy="{y}" r="5" fill="white" stroke="#c0392b" '
                   f'stroke-width="2"/>')
        out.append(f'<circle cx="{fx:.2f}" cy="{y}" r="5" fill="#1f4e79"/>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def render_json(result):
    """The full result at full precision, meta folded into top-level keys."""
    data = dict(result)
    meta = data.pop("meta")
    data["outcome"] = meta["outcome"]
    data["task"] = meta["task"]
    data["strata"] = meta["strata"]
    data["run_id"] = meta["run_id"]
    data["where"] = meta["where"]
    data["baseline"] = dict(data["baseline"], source=meta["baseline_source"],
                            check=meta["baseline_check"])
    data["notes"] = meta["notes"]
    data["not_candidates"] = meta["not_candidates"]
    return to_json(data)


# === Main ===
def build_parser():
    parser = Parser(__doc__, prog="auc_audit.py")
    parser.add_argument("runs", nargs="?", help="runs table (CSV/TSV/JSONL/JSON), '-' for "
                        "stdin, or a runs folder")
    parser.add_argument("--outcome", help="outcome column (default: auto-detected)")
    parser.add_argument("--task", help="task column (default: auto-detected)")
    parser.add_argument("--run-id", dest="run_id", help="run id column (default: run_id, id "
                        "or run)")
    parser.add_argument("--strata", help="score AUCs within the levels of this column")
    parser.add_argument("--baseline", default=DEFAULT_BASELINE,
                        help="baseline column (default: tool_calls)")
    parser.add_argument("--features", help="comma-separated feature columns (default: "
                        "every numeric column not otherwise used)")
    parser.add_argument("--where", action="append", default=[], metavar="COL=VALUE",
                        help="audit only matching rows (repeatable: all must match)")
    parser.add_argument("--perms", type=int, default=DEFAULT_PERMS,
                        help=f"shuffles for the family null (default: {DEFAULT_PERMS})")
    parser.add_argument("--boot", type=int, default=DEFAULT_BOOT,
                        help=f"task-cluster bootstrap resamples (default: {DEFAULT_BOOT})")
    parser.add_argument("--permute", choices=("rows", "strata", "tasks"),
                        help="what a shuffle keeps fixed (default: strata with --strata, "
                        "else rows)")
    parser.add_argument("--verdicts", metavar="FILE", help="take the outcome from "
                        "regrade.py's verdicts.csv, joined on run id")
    parser.add_argument("--svg", metavar="FILE", help="also draw the null and the same-row "
                        "comparison as SVG")
    parser.add_argument("--demo", action="store_true",
                        help="audit a small embedded table")
    add_common_options(parser, __version__, __file__, seed=DEFAULT_SEED)
    return parser


def _main(argv):
    args = build_parser().parse_args(argv)
    if args.perms < 1 or args.boot < 1:
        raise InputError("--perms and --boot must be at least 1")
    if args.permute == "strata" and not args.strata:
        raise InputError("--permute strata needs --strata COLUMN")
    if args.demo and args.runs:
        raise InputError("--demo audits the embedded table; give no runs table with it")
    inputs = Inputs()
    data = read_runs(args, inputs)
    if args.svg:
        inputs.guard_output(args.svg)
    result = audit(data["labels"], data["candidates"], data["baseline"],
                   tasks=data["tasks"], strata=data["strata"], perms=args.perms,
                   boot=args.boot, seed=args.seed, permute=args.permute,
                   baseline_name=data["baseline_name"], named=bool(args.features))
    order = {column: index for index, column in enumerate(data["meta"]["columns"])}
    result["degenerate"] = sorted(result["degenerate"] + data["left_out"],
                                  key=lambda item: order[item["name"]])
    result["meta"] = data["meta"]
    result["provenance"] = provenance(__file__, __version__, argv, args.seed, inputs)
    if args.svg:
        write_atomic(args.svg, render_svg(result))
    if args.format == "json":
        sys.stdout.write(render_json(result))
    else:
        sys.stdout.write(render_report(result, args.format))
    return 0


def main(argv=None):
    """Run the command line; return the exit status."""
    return run_main(_main, argv)


if __name__ == "__main__":
    sys.exit(main())
