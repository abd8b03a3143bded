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
import hashlib
import importlib.util
import io
import itertools
import json
import math
import multiprocessing
import os
import random
import re
import shutil
import signal
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
        else:
            print(f"{script}: helper block already identical to {CANONICAL}'s")


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
                pattern = rf"(?m)^\s*(import|from)\s+{other[:-3]}\b"
                self.assertIsNone(re.search(pattern, text), f"{script} imports {other}")

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
            lines = footer.splitlines()
            self.assertGreaterEqual(len(lines), 2)
            for line in lines:                     # sha256sum -c format: '<hex>  <path>'
                digest, path = line.split("  ", 1)
                path = os.path.join(HERE, path) if path == script else path
                with open(path, "rb") as handle:
                    self.assertEqual(hashlib.sha256(handle.read()).hexdigest(), digest, path)
            markdown = run(script, argv + ["--format", "markdown"])[1]
            self.assertTrue(markdown.rstrip().endswith("\n".join(lines[-1:]) + "\n```"))
            self.assertIn(f"command: python3 {script} {EXAMPLE_RUNS}", out)
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


def runs_csv(rows, header="run_id,task_id,claimed,verified"):
    return header + "\n" + "\n".join(",".join(str(c) for c in row) for row in rows) + "\n"


def audit_json(argv, stdin=b""):
    status, out, err = run("delivery_audit.py", list(argv) + ["--format", "json"], stdin)
    if status != 0:
        raise AssertionError(f"exit {status}: {err}")
    return json.loads(out)


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
        self.assertIn("The claim carries no usable information", out)
        self.assertIn("Only 1 cluster", out)

    def test_verdict_reads_a_negative_kappa_as_the_wrong_direction(self):
        status, out, _ = run("delivery_audit.py", ["--counts", "tp=5,fp=40,fn=40,tn=5",
                                                   "--boot", "500"])
        self.assertIn("information in the wrong direction", out)
        self.assertIn("Fisher p <0.001", out)

    def test_inflation_intervals_are_r_intervals_transformed(self):
        result = audit_json(["--counts", "tp=1,fp=9,fn=1,tn=5", "--boot", "2000"])
        r, inflation = result["delivery_rate"], result["inflation"]
        self.assertEqual(r["ci_cluster"][0], 0.0)
        self.assertIsNone(inflation["ci_cluster"][1])      # infinite: JSON has no inf
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
            "Delivery audit: " + os.path.join(EXAMPLE_RUNS, "runs.csv") + "\n===="))
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
            self.assertIn("(left out, not counted as failures): test_patch_failed 1.", out)
            write(folder, "partial.csv", "run_id,completed\nr1,true\n")
            status, _, err = run("delivery_audit.py",
                                 [runs, "--verdicts", os.path.join(folder, "partial.csv")])
            self.assertEqual(status, 2)
            self.assertIn("no verdict for 2 run(s): r2, r3", err)
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


# === auc_audit.py ===
AUC = "auc_audit.py"


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


def best(auc):
    return max(auc, 1 - auc)


def csv_text(header, rows):
    return "\n".join([",".join(header)] + [",".join(str(c) for c in r) for r in rows]) + "\n"


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
            if variance <= 1e-12:
                continue
            got = self.a.delong_p(x, y, labels, groups, range(n))
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
            self.assertAlmostEqual(feature["adjusted_p"], exact, delta=0.015)

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
        vectors_by_size = {3: sorted([(1, 0, 1), (1, 0, 0)]),
                           2: sorted([(1, 0), (1, 1), (1, 0)])}
        draws = self.a.shuffled_draws(labels, "tasks", [0] * 12, tasks, 50, random.Random(3))
        for picked, are_successes in draws:
            shuffled = [int(not are_successes)] * 12
            for row in picked:
                shuffled[row] = int(are_successes)
            seen = {3: [], 2: []}
            for task in range(5):
                members = [i for i in range(12) if tasks[i] == task]
                seen[len(members)].append(tuple(shuffled[i] for i in members))
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
        for argv in (["--permute", "rows"], ["--permute", "tasks"],
                     ["--strata", "arm"], ["--strata", "arm", "--permute", "tasks"]):
            result = self.audit_json(table, *argv)
            null = result["family_null"]
            self.assertEqual(null["permute"], argv[-1] if argv[0] == "--permute" or
                             len(argv) > 2 else "strata")
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


# === Benchmarks (auc_audit.py) ===
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
        gate1 = out[out.index("DeLong p"):].splitlines()[2]
        self.assertIn("undefined", gate1)

    def test_fewer_than_ten_clusters_warns(self):
        for n_tasks, warned in ((3, True), (9, True), (10, False)):
            header, rows = strong_rows(lambda i: f"t{i % n_tasks}")
            status, out, err = audit_folder({"runs.csv": table_text(header, rows)},
                                            ["--perms", "50", "--boot", "50"])
            self.assertEqual(status, 0, err)
            self.assertEqual("intervals are rough" in out, warned, (n_tasks, out))
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
                                        ["--where", "f=0", "--perms", "10", "--boot", "10",
                                         "--features", "f"])
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
    def test_no_task_column_exits_2(self):
        header = ["run_id", "verified", "tool_calls", "f"]
        rows = [[f"r{i}", i % 2, i % 3, i] for i in range(8)]
        status, out, err = audit_folder({"runs.csv": table_text(header, rows)},
                                        ["--permute", "tasks"])
        self.assertEqual(status, 2)
        self.assertIn("needs a task column", err)

    def test_no_task_can_move_exits_2(self):
        header = ["run_id", "task_id", "verified", "tool_calls", "f"]
        # Tasks of sizes 1, 2 and 3: none has a partner of its size.
        tasks = ["a", "b", "b", "c", "c", "c"]
        rows = [[f"r{i}", t, i % 2, i % 4, i] for i, t in enumerate(tasks)]
        status, out, err = audit_folder({"runs.csv": table_text(header, rows)},
                                        ["--permute", "tasks"])
        self.assertEqual(status, 2)
        self.assertIn("no task can move", err)

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
        # Under every shuffle the runs of d and e keep their own outcomes.
        module = load(AUC)
        codes = [sorted(set(tasks)).index(t) for t in tasks]
        fixed = [i for i, t in enumerate(tasks) if t in ("d", "e")]
        draws = module.shuffled_draws(labels, "tasks", None, codes, 200, random.Random(5))
        for picked, are_successes in draws:
            chosen = set(picked)
            for i in fixed:
                self.assertEqual(i in chosen, labels[i] == are_successes)


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
            self.assertIn("(test_patch_failed 2, timeout 1)", out)
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
        within = auc_audit_json({"runs.csv": strat}, ["--strata", "cond", "--features", "arm,f",
                                                  "--perms", "20", "--boot", "20"])
        reasons = {d["name"]: d["reason"] for d in within["degenerate"]}
        self.assertIn("strata", reasons.get("arm", ""))

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
        # 1/(1 + N) < 0.05 needs N >= 20.
        for perms, noted in ((5, True), (18, True), (19, True), (20, False)):
            status, out, err = audit_folder(files, ["--perms", str(perms), "--boot", "20"])
            self.assertEqual(status, 0, err)
            self.assertEqual("no adjusted p can fall below 0.05" in " ".join(out.split()),
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
            self.assertIn(f"{pooled:.3f} {direction}", row)
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
            table = body[body.index("Gates 2 and 3"):]
            cut = [l.split("  ")[0] for l in table.splitlines()
                   if l.startswith("implementa")]
            self.assertEqual(len(cut), 2)
            self.assertNotEqual(cut[0], cut[1])
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
        # The histogram panel spans x 50..430; 7 px per character is generous at 12 px.
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
                self.assertLessEqual(start + size, 440, text)       # inside its panel
            if text.endswith(")") and ("…" in text or text.startswith("noise")):
                self.assertGreater(start, 430, text)                # right of the histogram
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


# === regrade.py ===
# Throwaway repositories for regrade.py: tiny, built with a fixed identity and
# date, graded with the interpreter running the tests. Each CLI call grades
# many runs at once and the tests read the verdicts from --format json.
REGRADE_IDENTITY = {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.org",
                    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.org",
                    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+0000",
                    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+0000",
                    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def regrade_has_pytest():
    return importlib.util.find_spec("pytest") is not None


REGRADE_NO_PYTEST = f"pytest is not installed for {sys.executable}: pytest-runner cases skipped"


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
    return status, (json.loads(out) if status == 0 else None), err


def regrade_by_run(report):
    return {v["run_id"]: v for v in report["runs"]}


def regrade_jsonl(folder, name, records):
    return write(folder, name, "".join(json.dumps(r) + "\n" for r in records))


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


class RegradeFixture(unittest.TestCase):
    """One throwaway repository, its test patch and the runs' diffs, for a whole class."""

    @classmethod
    def setUpClass(cls):
        cls.temp = TempDir()
        cls.folder = cls.temp.__enter__()
        cls.repo, cls.base = regrade_repo(cls.folder, TOY_BASE)
        work = os.path.join(cls.folder, "work")
        regrade_git(["clone", "-q", cls.repo, work], cls.folder)
        cls.test_patch = regrade_diff(work, TOY_TESTS)
        cls.param_patch = regrade_diff(work, TOY_PARAMS)
        cls.gold = regrade_diff(work, {"toy/core.py": TOY_FIX})
        cls.diffs = {name: regrade_diff(work, files) for name, files in TOY_RUNS.items()}
        cls.diffs["does-not-apply"] = cls.gold.replace("-    return a // b", "-    return a % b")
        cls.diffs["empty"] = ""

    @classmethod
    def tearDownClass(cls):
        cls.temp.__exit__(None, None, None)

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
        self.assertEqual(status, 0, err)
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
            status, report, err = regrade_json([instances, predictions, "--repo", self.repo,
                                                "--timeout", "2", "--env",
                                                f"CHILD_PID_FILE={pid_file}"])
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
            verdicts = self.grade("unittest", ["fix", "wrong-fix"], ["--python", python])
            self.assert_status(verdicts, {"fix": "wrong_code_under_test",
                                          "wrong-fix": "wrong_code_under_test"})
            self.assertIsNone(verdicts["fix"]["completed"])
            self.assertIn(self.repo, verdicts["fix"]["code_under_test"])
            # A plain editable install (path appended) loses to the tree: no false alarm.
            os.remove(os.path.join(site_dir, "easy-install.pth"))
            write(site_dir, "__editable__.toy.pth", self.repo + "\n")
            verdicts = self.grade("unittest", ["fix"], ["--python", python])
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
            base = [instances, predictions, "--repo", self.repo, "--env",
                    f"FLAKY_COUNTER={counter}"]
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
            self.assertIn(bundle, [i["path"] for i in report["provenance"]["inputs"]])

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
            argv = [instances, predictions, "--repo", self.repo, "--env", f"PROBE_FILE={probe_file}"]
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
            self.assertEqual(status, 0, err)
            verdict = report["runs"][0]
            self.assertEqual((verdict["status"], verdict["completed"], verdict["resolution"]),
                             ("error", None, "NO"))
            self.assertIn("instance 'nope' is not in", verdict["reason"])
            status, report, err = regrade_json([os.path.join(folder, "nobase.jsonl"), "empty",
                                                "--repo", self.repo])
            self.assertEqual(status, 0, err)
            verdict = report["runs"][0]
            self.assertEqual((verdict["status"], verdict["completed"]), ("error", None))
            self.assertIn("base commit " + "0" * 40 + " of toy-1 is not in", verdict["reason"])
            self.assertEqual(snapshot(folder), before)


def hashlib_sha256_of(path):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


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


def bench_regrade_example():
    """Grader overhead per run beyond the test command, and --jobs 2 vs --jobs 1, on the example."""
    example = os.path.join(HERE, "examples", "regrade")
    argv = [os.path.join(example, "instances.jsonl"), os.path.join(example, "predictions.jsonl"),
            "--repo", os.path.join(example, "calc.bundle")]
    results = {}
    for jobs in (1, 2):
        best = None
        for _ in range(3):
            started = time.monotonic()
            status, report, err = regrade_json(argv + ["--jobs", str(jobs)])
            wall = time.monotonic() - started
            if best is None or wall < best[0]:
                best = (wall, report["summary"])
        results[jobs] = best
    wall, summary = results[1]
    print(f"regrade example: {summary['runs']} runs, --jobs 1 {wall:.2f} s wall, "
          f"test commands {summary['seconds_tests']:.2f} s, grader overhead "
          f"{summary['overhead_per_run_s']:.3f} s per run")
    print(f"regrade example: --jobs 2 {results[2][0]:.2f} s wall, speed-up "
          f"{results[1][0] / results[2][0]:.2f}x over --jobs 1")



# === regrade.py review fixes ===
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
                    f"PROBE_FILE={probe_file}"]
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


def load_tests(loader, tests, pattern):
    """Add the doctests of every script to the unittest suite."""
    for script in SCRIPTS:
        tests.addTests(doctest.DocTestSuite(load(script)))
    return tests


# === regrade.py: Django and SymPy runners ===
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
    "    def test_file(self, filename):\n        reporter, gl = self._reporter, {}\n"
    "        try:\n            with open(filename, encoding='utf-8') as handle:\n"
    "                exec(compile(handle.read(), filename, 'exec'), gl)\n"
    "        except ImportError:\n            reporter.import_error(filename, sys.exc_info())\n"
    "            return\n        except Exception:\n"
    "            reporter.test_exception(sys.exc_info())\n            return\n"
    "        funcs = [v for k, v in gl.items() if k.startswith('test_') and "
    "inspect.isfunction(v)]\n"
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


class RegradeProjectFixture(unittest.TestCase):
    """A Django-style or SymPy-style repository, its test patch, and the runs' diffs."""
    BASE, TESTS, FIX, REPO_NAME = {}, {}, {}, ""
    RUNS = {}

    @classmethod
    def setUpClass(cls):
        cls.temp = TempDir()
        cls.folder = cls.temp.__enter__()
        cls.repo, cls.base = regrade_repo(cls.folder, cls.BASE)
        work = os.path.join(cls.folder, "work")
        regrade_git(["clone", "-q", cls.repo, work], cls.folder)
        cls.test_patch = regrade_diff(work, cls.TESTS)
        cls.gold = regrade_diff(work, cls.FIX)
        cls.diffs = {name: regrade_diff(work, files) for name, files in cls.RUNS.items()}
        cls.diffs.update(gold=cls.gold, empty="")

    @classmethod
    def tearDownClass(cls):
        cls.temp.__exit__(None, None, None)

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
        self.assertEqual(status, 0, err)
        return {tuple(v["run_id"].split("@")): v for v in report["runs"]}

    def assert_verdict(self, verdict, status, completed):
        self.assertEqual((verdict["status"], verdict["completed"]), (status, completed),
                         verdict["reason"])


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
