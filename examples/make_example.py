#!/usr/bin/env python3
"""Write the synthetic example runs folder: python3 examples/make_example.py [OUT_DIR].

The data are SYNTHETIC. They are shaped like the seed report's 72 real-repository
runs (18 tasks x 4 runs, two workspace conditions, two replicates each) and the
run-level counts are the report's exactly: 72 runs, 49 complete, 68 completion
claims, 22 of them false, 4 equivocal messages, 24/36 vs 25/36 complete by
condition with 5 discordant pairs, raters unanimous on 71 of 72 messages.

The process measures are made up. tool_calls (the trivial baseline),
impl_seconds (undefined on the 32 runs where the agent never edited) and
search_calls are tuned by a seeded hill climb so that their AUCs (within
condition) land on the report's: baseline 0.616 (0.614 pooled); impl_seconds
0.661 on its 40 rows, where the baseline scores 0.878; search_calls 0.775, a
measure of task difficulty. Outcomes are grouped so that two runs of one task
agree 86% of the time and task identity alone scores AUC 0.881.

Writes runs.csv, tool_calls.csv and criteria.csv into OUT_DIR (default: the
runs/ folder beside this script). The same seed always writes the same bytes;
test_audit.py checks that the committed files are what this script writes.
"""
import csv
import os
import random
import sys

SEED = 20260801
TOOLS = ("Bash", "Read", "Write", "Edit", "Glob", "Grep")
CONDITIONS = ("plain", "scaffold")
TARGETS = {"base_strat": 0.616, "base_pooled": 0.614, "base_rows": 0.878, "feature": 0.661,
           "search": 0.775}

# Outcome of (plain, scaffold) for each task's replicate 1 and 2; 1 = complete.
# 22 CC, 9 FF, 2 CF and 3 FC pairs, grouped so that two runs of one task agree
# 86% of the time (93 of 108 pairs) and task identity alone scores AUC 0.880.
TASK_PATTERNS = ([((1, 1), (1, 1))] * 9 + [((0, 0), (0, 0))] * 4
                 + [((1, 1), (1, 0))] * 2 + [((1, 1), (0, 1))] * 2 + [((0, 0), (0, 1))])


def auc(scores, labels, strata=None):
    """Mann-Whitney AUC (ties count 1/2) in the better direction; pairs within strata."""
    strata = strata or [0] * len(scores)
    wins = pairs = 0.0
    for stratum in set(strata):
        rows = sorted((s, y) for s, y, t in zip(scores, labels, strata) if t == stratum)
        rank_sum, start = 0.0, 0
        while start < len(rows):
            end = start
            while end < len(rows) and rows[end][0] == rows[start][0]:
                end += 1
            midrank = (start + end + 1) / 2
            rank_sum += midrank * sum(y for _, y in rows[start:end])
            start = end
        positives = sum(y for _, y in rows)
        wins += rank_sum - positives * (positives + 1) / 2
        pairs += positives * (len(rows) - positives)
    value = wins / pairs
    return max(value, 1 - value)


def build_runs(rng):
    runs = []
    tasks = [f"{'datekit' if t < 9 else 'parsekit'}-{101 + 7 * t}" for t in range(18)]
    order = list(range(18))
    rng.shuffle(order)
    for number, task_index in enumerate(order):
        pattern = TASK_PATTERNS[task_index]
        for condition_index, condition in enumerate(CONDITIONS):
            for replicate in (1, 2):
                runs.append({
                    "task_id": tasks[number],
                    "condition": condition,
                    "replicate": replicate,
                    "gt_completed": pattern[replicate - 1][condition_index],
                    "difficulty": 1 - sum(sum(p) for p in pattern) / 4,
                })
    runs.sort(key=lambda r: (r["task_id"], r["condition"], r["replicate"]))
    for index, run in enumerate(runs, 1):
        run["run_id"] = f"run-{index:03d}"
    return runs


def assign_claims(runs, rng):
    """68 claims; the 4 equivocal messages fall on 3 complete runs and 1 failure."""
    complete = [r for r in runs if r["gt_completed"]]
    failed = [r for r in runs if not r["gt_completed"]]
    equivocal = rng.sample(complete, 3) + rng.sample(failed, 1)
    for run in runs:
        run["claimed"] = "equivocal" if run in equivocal else "yes"
        run["raters"] = [run["claimed"]] * 3
    # The one message the raters split three ways on; no majority reads as equivocal.
    equivocal[-1]["raters"] = ["yes", "no", "equivocal"]


def tune_measures(runs, rng):
    """Hill-climb tool_calls, impl_seconds and search_calls towards the report's AUCs."""
    labels = [r["gt_completed"] for r in runs]
    strata = [CONDITIONS.index(r["condition"]) for r in runs]
    complete = [i for i, y in enumerate(labels) if y]
    failed = [i for i, y in enumerate(labels) if not y]
    defined = sorted(rng.sample(complete, 24) + rng.sample(failed, 16))
    tool_calls = [rng.randint(25, 90) for _ in runs]
    impl = {i: rng.randint(30, 400) for i in defined}
    searches = [max(1, round(0.15 * t + 10 * r["difficulty"])) for t, r in zip(tool_calls, runs)]

    def capped(index):      # every run keeps at least four calls that are not searches
        return min(searches[index], tool_calls[index] - 4)

    def loss():
        rows = [tool_calls[i] for i in defined]
        row_labels = [labels[i] for i in defined]
        row_strata = [strata[i] for i in defined]
        got = {"base_strat": auc(tool_calls, labels, strata),
               "base_pooled": auc(tool_calls, labels),
               "base_rows": auc(rows, row_labels, row_strata),
               "feature": auc([impl[i] for i in defined], row_labels, row_strata),
               "search": auc([capped(i) for i in range(len(runs))], labels, strata)}
        return got

    def climb(keys, moves):
        """Random single-value moves, kept when they bring `keys` no further off."""
        def off(got):
            return sum(abs(got[k] - TARGETS[k]) for k in keys)
        got = loss()
        for _ in range(8000):
            if all(round(got[k], 3) == TARGETS[k] for k in keys):
                break
            values, indices, step, floor = moves[rng.randrange(len(moves))]
            index = rng.choice(indices)
            old = values[index]
            values[index] = max(floor, old + rng.randint(-step, step))
            trial = loss()
            if off(trial) <= off(got):
                got = trial
            else:
                values[index] = old
        return got

    undefined = [i for i in range(len(runs)) if i not in impl]
    # Defined rows first (the same-row comparison), then the rest for the
    # all-rows baseline, which leaves the defined rows' figures alone.
    climb(["base_rows", "feature"], [(tool_calls, defined, 15, 12), (impl, defined, 80, 10)])
    climb(["base_strat", "base_pooled"], [(tool_calls, undefined, 15, 12)])
    got = climb(["search"], [(searches, list(range(len(runs))), 3, 1)])
    for index, run in enumerate(runs):
        run["tool_calls"] = tool_calls[index]
        run["impl_seconds"] = impl.get(index)
        run["search_calls"] = capped(index)
    return got


def fill_process_measures(runs, rng):
    """Split tool calls by tool, and derive the other measures from them."""
    for run in runs:
        total, searches = run["tool_calls"], run["search_calls"]
        rest = total - searches
        edits = 0 if run["impl_seconds"] is None else max(1, rng.randint(1, max(1, rest // 6)))
        writes = 0 if run["impl_seconds"] is None else rng.randint(0, 2)
        reads = rng.randint(1, max(1, rest - edits - writes - 1))
        bash = rest - edits - writes - reads
        if bash < 0:
            reads += bash
            bash = 0
        glob = rng.randint(0, searches)
        counts = {"Bash": bash, "Read": reads, "Write": writes, "Edit": edits,
                  "Glob": glob, "Grep": searches - glob}
        sequence = [tool for tool in TOOLS for _ in range(counts[tool])]
        rng.shuffle(sequence)
        run["calls"] = sequence
        run["read_calls"] = reads
        run["edit_calls"] = edits + writes
        run["bash_calls"] = bash
        run["orient_seconds"] = rng.randint(20, 240)
        run["verify_seconds"] = rng.randint(0, 300) if run["impl_seconds"] is not None else None
        run["tokens_total"] = 9000 * total + rng.randint(0, 60000)
        run["files_touched"] = 0 if run["impl_seconds"] is None else rng.randint(1, 4)
        run["cost_usd"] = round(run["tokens_total"] * 3e-6, 4)   # priced per token


def criteria_rows(runs):
    """Two criteria per task that follow the run verdict, one or two that never vary."""
    rows = []
    for run in runs:
        task = run["task_id"]
        extra = 2 if int(task.split("-")[1]) % 2 else 1
        names = ["fail_to_pass_1", "fail_to_pass_2"] + [f"pass_to_pass_{k}"
                                                        for k in range(1, extra + 1)]
        for name in names:
            verdict = run["gt_completed"] if name.startswith("fail") else 1
            rows.append([run["run_id"], f"{task}:{name}", verdict])
    return rows


def write_csv(path, header, rows):
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def main(argv):
    out = argv[0] if argv else os.path.join(os.path.dirname(os.path.abspath(__file__)), "runs")
    os.makedirs(out, exist_ok=True)
    rng = random.Random(SEED)
    runs = build_runs(rng)
    assign_claims(runs, rng)
    tune_measures(runs, rng)
    fill_process_measures(runs, rng)
    header = ["run_id", "task_id", "condition", "replicate", "claimed", "rater_a", "rater_b",
              "rater_c", "gt_completed", "cost_usd", "tool_calls", "impl_seconds",
              "orient_seconds", "verify_seconds", "search_calls", "read_calls", "edit_calls",
              "bash_calls", "tokens_total", "files_touched", "confab_alarms", "diff_nonempty",
              "tool_calls_total", "turns_total"]

    def cell(value):
        return "" if value is None else value
    write_csv(os.path.join(out, "runs.csv"), header, [
        [r["run_id"], r["task_id"], r["condition"], r["replicate"], r["claimed"], *r["raters"],
         r["gt_completed"], f"{r['cost_usd']:.4f}", r["tool_calls"], cell(r["impl_seconds"]),
         r["orient_seconds"], cell(r["verify_seconds"]), r["search_calls"], r["read_calls"],
         r["edit_calls"], r["bash_calls"], r["tokens_total"], r["files_touched"], 0, 1,
         r["tool_calls"], r["tool_calls"] + 1] for r in runs])
    write_csv(os.path.join(out, "tool_calls.csv"), ["run_id", "seq", "tool"],
              [[r["run_id"], k, tool] for r in runs for k, tool in enumerate(r["calls"], 1)])
    write_csv(os.path.join(out, "criteria.csv"), ["run_id", "criterion", "passed"],
              criteria_rows(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
