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
import re
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
            tp, fp, fn, tn = table
            row1, row2, column1 = tp + fp, fn + tn, tp + fn
            weights = [math.comb(row1, x) * math.comb(row2, column1 - x)
                       for x in range(max(0, column1 - row2), min(row1, column1) + 1)]
            observed = math.comb(row1, tp) * math.comb(row2, column1 - tp)
            want = Fraction(sum(w for w in weights if w <= observed), sum(weights))
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
        self.assertEqual(result["inflation"]["ci"],
                         [1 / result["delivery_rate"]["ci"][1],
                          1 / result["delivery_rate"]["ci"][0]])

    def test_cost_and_sampling_mode(self):
        rows = [["r1", "t1", "yes", "1", "2.0"], ["r2", "t1", "yes", "0", "3.0"],
                ["r3", "t2", "yes", "1", "5.0"], ["r4", "t2", "no", "0", "1.0"],
                ["r5", "t3", "yes", "", "4.0"], ["r6", "t3", "yes", "", "4.0"]]
        with TempDir() as folder:
            path = write(folder, "runs.csv", runs_csv(
                rows, "run_id,task_id,claimed,verified,cost"))
            result = audit_json([path, "--cost", "cost", "--boot", "100"])
        cost = result["cost"]
        self.assertEqual(cost["total"], 11.0)              # checked runs only
        self.assertEqual(cost["per_verified_delivery"], 11.0 / 2)
        self.assertEqual(cost["spent_on_false_claims"], 3.0)
        sampling = result["sampling"]
        self.assertEqual((sampling["runs_checked"], sampling["claims"],
                          sampling["claims_checked"]), (4, 5, 3))
        self.assertAlmostEqual(sampling["expected_verified_deliveries"]["value"], 5 * 2 / 3)
        low, high = load("delivery_audit.py").clopper_pearson(2, 3)
        self.assertAlmostEqual(sampling["expected_verified_deliveries"]["ci"][0], 5 * low)
        self.assertAlmostEqual(sampling["expected_verified_deliveries"]["ci"][1], 5 * high)

    def test_one_class_only_says_undefined(self):
        rows = [[f"r{i}", f"t{i % 3}", "yes", "1"] for i in range(6)]
        with TempDir() as folder:
            path = write(folder, "runs.csv", runs_csv(rows))
            status, out, err = run("delivery_audit.py", [path, "--boot", "100"])
        self.assertEqual(status, 0, err)
        self.assertIn("undefined: no run failed verification", out)
        self.assertIn("undefined: needs both verified and failed runs", out)

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
