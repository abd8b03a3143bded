#!/usr/bin/env python3
# /// script
# requires-python = ">=3.9"
# dependencies = []
# ///
"""Regrade coding-agent runs offline from a diff, a baseline commit and the maintainers' test patch.

(manual under construction)
"""
import sys

__version__ = "0.1.0"

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
        """Read `name` (e.g. tool_calls.csv) beside a runs table, or None."""
        folder = path if os.path.isdir(path) else os.path.dirname(path) or "."
        if path == "-" or not os.path.isfile(os.path.join(folder, name)):
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
    try:
        handle, temp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".part")
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
        os.replace(temp, path)
    except OSError as exc:
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
    """The footer printed under every text and Markdown report."""
    lines = [
        f"{prov['script']} {prov['version']} (sha256 {prov['script_sha256'][:16]}), "
        f"Python {prov['python']}",
        f"command: {prov['command']}",
        f"seed: {prov['seed'] if prov['seed'] is not None else 'none (no randomness)'}",
    ]
    lines += [f"input {f['path']}: sha256 {f['sha256']}" for f in prov["inputs"]]
    if style == "markdown":
        return "<sub>\n\n" + "\n".join("- " + l.replace("`", "'") for l in lines) + "\n\n</sub>"
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


# === Main ===
def _main(argv):
    parser = Parser(__doc__, prog="regrade.py")
    add_common_options(parser, __version__, __file__)
    parser.parse_args(argv)
    return 0


def main(argv=None):
    """Run the command line; return the exit status."""
    return run_main(_main, argv)


if __name__ == "__main__":
    sys.exit(main())
