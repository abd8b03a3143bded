#!/usr/bin/env python3
"""Write the SYNTHETIC grader output for ../agents: python3 examples/verdicts/make_agent_verdicts.py

Every file this writes is made up: structure only, in the layout SWE-bench's
harness and sb-cli write (field names as in their own source), for the four runs
that ../agents holds in each of the SWE-agent, mini-swe-agent and OpenHands
folders (models model-a to model-d, one instance, example__calc-1). The outcomes
are the ones regrade.py gives those runs' diffs against ../regrade/calc.bundle:
    model-a  correct fix              resolved
    model-b  wrong fix                unresolved (one FAIL_TO_PASS test fails)
    model-c  never edits: no diff     an empty patch
    model-d  correct fix              resolved
It writes, under agents/:
    swebench/<model>.calc-eval.json   SWE-bench's run report, one per model (the
                                      harness names it <model>.<run_id>.json)
    sb-cli-reports/swe-bench_lite__test__calc-eval-<model>.json
                                      sb-cli's report, one per model; sb-cli has
                                      no empty-patch list, so model-c is unresolved
    logs/run_evaluation/calc-eval/<model>/example__calc-1/
                                      the harness's per-instance folder: report.json,
                                      patch.diff, eval.sh, test_output.txt and
                                      run_instance.log; model-c's holds only
                                      patch.diff, as a folder does where the
                                      harness stopped before the tests (unchecked)
The same inputs always write the same bytes.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
REGRADE = os.path.join(HERE, os.pardir, "regrade")
INSTANCE = "example__calc-1"
RUN_ID = "calc-eval"
MODELS = ("model-a", "model-b", "model-c", "model-d")
DIFF_OF = {"model-a": "correct-fix", "model-b": "false-completion", "model-d": "correct-fix"}
RESOLVED = {"model-a": True, "model-b": False, "model-d": True}
FAILS_IN_B = "tests.test_range.TestRange.test_reversed_range_raises"


def write_text(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


def write_json(path, data):
    write_text(path, json.dumps(data, indent=4) + "\n")


def inputs():
    """The instance's test lists and the diffs, from ../regrade."""
    with open(os.path.join(REGRADE, "instances.jsonl"), encoding="utf-8") as handle:
        instance = json.loads(handle.readline())
    diffs = {}
    with open(os.path.join(REGRADE, "predictions.jsonl"), encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            diffs[record["run_id"]] = record["model_patch"]
    lists = [instance[key] for key in ("FAIL_TO_PASS", "PASS_TO_PASS")]
    lists = [json.loads(v) if isinstance(v, str) else v for v in lists]   # SWE-bench's JSON text
    return lists[0], lists[1], diffs


def run_report(model, sb_cli):
    """One model's run report: SWE-bench's keys, or sb-cli's."""
    resolved = RESOLVED.get(model)
    ids = {"resolved": [INSTANCE] if resolved else [],
           "unresolved": [INSTANCE] if resolved is False or (sb_cli and resolved is None)
           else [],
           "empty_patch": [INSTANCE] if resolved is None and not sb_cli else []}
    completed = [INSTANCE] if ids["resolved"] or ids["unresolved"] else []
    report = {"total_instances": 1, "submitted_instances": 1,
              "completed_instances": len(completed)}
    if sb_cli:
        report.update({"pending_instances": 0, "failed_instances": 0})
    report.update({"resolved_instances": len(ids["resolved"]),
                   "unresolved_instances": len(ids["unresolved"])})
    if not sb_cli:
        report["empty_patch_instances"] = len(ids["empty_patch"])
    report.update({"error_instances": 0, "completed_ids": completed, "incomplete_ids": []})
    if not sb_cli:
        report["empty_patch_ids"] = ids["empty_patch"]
    report.update({"submitted_ids": [INSTANCE]})
    if sb_cli:
        report.update({"error_ids": [], "schema_version": 2, "resolved_ids": ids["resolved"],
                       "unresolved_ids": ids["unresolved"], "pending_ids": [],
                       "failed_ids": []})
    else:
        report.update({"resolved_ids": ids["resolved"], "unresolved_ids": ids["unresolved"],
                       "error_ids": [], "schema_version": 2})
    return report


def instance_report(model, fail_to_pass, pass_to_pass):
    """report.json of one instance folder, keyed by instance id."""
    failed = [FAILS_IN_B] if model == "model-b" else []
    return {INSTANCE: {
        "patch_is_None": False, "patch_exists": True, "patch_successfully_applied": True,
        "resolved": RESOLVED[model],
        "tests_status": {
            "FAIL_TO_PASS": {"success": [t for t in fail_to_pass if t not in failed],
                             "failure": failed},
            "PASS_TO_PASS": {"success": list(pass_to_pass), "failure": []},
            "FAIL_TO_FAIL": {"success": [], "failure": []},
            "PASS_TO_FAIL": {"success": [], "failure": []}}}}


def log_folder(model, fail_to_pass, pass_to_pass, diffs):
    folder = os.path.join(HERE, "agents", "logs", "run_evaluation", RUN_ID, model, INSTANCE)
    write_text(os.path.join(folder, "patch.diff"), diffs.get(DIFF_OF.get(model), ""))
    if model not in RESOLVED:
        return                      # the harness stopped before the tests
    write_json(os.path.join(folder, "report.json"),
               instance_report(model, fail_to_pass, pass_to_pass))
    write_text(os.path.join(folder, "eval.sh"),
               "#!/bin/bash\nset -uxo pipefail\n# synthetic\npython -m unittest -v "
               + " ".join(fail_to_pass + pass_to_pass) + "\n")
    outcome = {t: "ok" for t in fail_to_pass + pass_to_pass}
    if model == "model-b":
        outcome[FAILS_IN_B] = "FAIL"
    write_text(os.path.join(folder, "test_output.txt"), "".join(
        f"{t.rsplit('.', 1)[1]} ({t.rsplit('.', 1)[0]}) ... {outcome[t]}\n"
        for t in sorted(outcome)) + "(synthetic test output)\n")
    write_text(os.path.join(folder, "run_instance.log"),
               f"synthetic: evaluating {INSTANCE} for {model}\n"
               f"synthetic: report written, resolved: {RESOLVED[model]}\n")


def main():
    fail_to_pass, pass_to_pass, diffs = inputs()
    for model in MODELS:
        write_json(os.path.join(HERE, "agents", "swebench", f"{model}.{RUN_ID}.json"),
                   run_report(model, sb_cli=False))
        write_json(os.path.join(HERE, "agents", "sb-cli-reports",
                                f"swe-bench_lite__test__{RUN_ID}-{model}.json"),
                   run_report(model, sb_cli=True))
        log_folder(model, fail_to_pass, pass_to_pass, diffs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
