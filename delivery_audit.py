#!/usr/bin/env python3
# /// script
# requires-python = ">=3.9"
# dependencies = []
# ///
"""Audit an agent's completion claims against verified outcomes: how often was
"done" true, and what does paying per claim cost?

Basic usage (RUNS: a CSV/TSV/JSONL/JSON table, '-' for stdin, a runs folder
holding runs.csv, or an agent harness's output folder):
    python3 delivery_audit.py RUNS                      claims against the verified column
    python3 delivery_audit.py RUNS --verdicts FILE      the outcome from a grader's report
    python3 delivery_audit.py RUNS --format markdown    ready to paste into an issue
With no file: python3 delivery_audit.py --demo (the seed report's own table).
The manual follows.

delivery_audit.py reads one row per agent run (the agent's claim that it
finished, and whether verification, e.g. the maintainers' tests, says it did)
and reports the delivery rate r = verified claims / claims, the false-completion
rate 1 - r, the 1/r inflation of paying per claim, and how much the claim tells
you about success when read as a detector of it. Standard library only; one
file; nothing is ever written into its inputs.

To audit a 2x2 table given as counts:
    python3 delivery_audit.py --counts tp=46,fp=22,fn=3,tn=1
To audit the shipped example (72 synthetic runs shaped like the report's):
    python3 delivery_audit.py examples/runs --raters rater_a,rater_b,rater_c --cost cost_usd
To take the verified column from regrade.py's verdicts (see regrade.py --out):
    python3 regrade.py examples/regrade/instances.jsonl examples/regrade/predictions.jsonl \\
        --repo examples/regrade/calc.bundle --out regraded
    python3 delivery_audit.py examples/regrade/runs.csv --verdicts regraded/verdicts.csv
To take it from SWE-bench's, sb-cli's or OpenHands' own grading (synthetic examples):
    python3 delivery_audit.py examples/verdicts \\
        --verdicts examples/verdicts/logs/run_evaluation/eval-1
To have people rate the claims blind, then read their sheets back:
    python3 delivery_audit.py examples/verdicts --rating-sheet examples/verdicts/ratings/sheet.csv
    python3 delivery_audit.py examples/verdicts --verdicts examples/verdicts/regrade/verdicts.csv \\
        --ratings examples/verdicts/ratings/rater_a.csv,examples/verdicts/ratings/rater_b.csv,\\
examples/verdicts/ratings/rater_c.csv --rating-key examples/verdicts/ratings/sheet.key.csv
To paste the result into a GitHub issue or forum post:
    python3 delivery_audit.py examples/runs --format markdown
To get every number at full precision:
    python3 delivery_audit.py examples/runs --format json

Input
    One row per run. Columns are found by name (case-insensitive), or named
    with the options below:
      run id     --run-id     run_id, id, run                 (joins verdicts, criteria)
      model                   model, model_name_or_path       (optional; joins verdicts)
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
    table shows every figure of the first that changes if they count as claims
    (all but kappa's maximum given the margins). A blank
    verified cell means that run was not checked (see sampling mode).
    A runs folder may also hold criteria.csv (run_id, criterion, passed): one row
    per graded acceptance criterion. Nothing guesses a claim from the message.
    RUNS may also be agent output (a SWE-agent, mini-swe-agent or OpenHands
    folder, Claude Code transcripts, Codex rollouts): see "Reading harness
    folders" at the end of --help for what is derived from each. With
    --write-runs DIR and no outcome yet (no verified column, no --verdicts) it
    writes the derived tables and stops (exit 0), naming the next step
    (regrade.py, or --verdicts).
    Which claim (--claim-from; the report says which in one sentence, and the
    JSON names it as claim_definition):
      rated      the raters' majority (--raters, --ratings): the seed report's
                 claim, a blind rating of the final message; the default with
                 raters
      column     the claim column as the table gives it; the default for a runs
                 table, and for agent output whose runs.csv beside it fills it
      submitted  the harness's own record of how each run ended (column
                 submitted: yes when the agent chose to stop and submit, no when
                 the harness stopped it); the default for agent output with no
                 claim column filled. A weaker claim than the seed's
    Where the input carries another of these beside the one audited (a
    submission beside raters' claims, or the reverse), the report shows the
    delivery rate under each, on the same checked runs, side by side.

Verdicts (--verdicts FILE or FOLDER; also auc_audit.py's), recognised by content:
    regrade.py verdicts.csv / verdicts.jsonl, or its --out folder: completed
        true/false; an empty completed is a grading error, counted by status
    SWE-bench run report <model>.<run_id>.json (and regrade.py's
        swebench_summary.json; SWE-bench-java's, whose list is 'resolved'):
        resolved_ids resolve; unresolved_ids and empty_patch_ids fail (an empty
        patch delivered nothing); error_ids, incomplete_ids, infra_failure_ids
        and ambiguous_failure_ids are unchecked
    a report.json {instance_id: {resolved, patch_is_None, infra_failure, ...}}
        (or the older flat {resolved, patch_exists, ...}, whose instance is its
        folder's name), or a folder of them (logs/run_evaluation/<run_id>/<model>/
        <instance_id>/): resolved; infra_failure unchecked; patch_is_None or not
        resolved fail; an instance folder with no report.json (only patch.diff,
        eval.sh, run_instance.log or test_output.txt: the harness never finished
        its tests) is unchecked, "error (no report.json)", as SWE-bench counts it
    sb-cli report: as the run report, and failed_ids and pending_ids unchecked
    a folder of run reports (SWE-bench's, one per model, or sb-cli-reports/):
        every *.json at its top holding resolved_ids, each read as the model its
        own name gives
    OpenHands output.swebench_eval.jsonl (test_result.report): resolved;
        empty_generation and failed_apply_patch fail; error_eval and test_timeout
        are unchecked
    Unchecked runs are grading errors: never failures. They are left out (the
    report lists them by status) and the audit runs in sampling mode.
    The join: on run id where both sides have one; else on model and instance id
    (the runs' model column against the verdicts' model: the log folder's name,
    OpenHands' llm_config.model, the run report's file name; '/' reads as '__');
    else on instance id alone. Several runs of one instance against verdicts keyed
    by instance, a run with no verdict, a file that matches no run, or one where
    every verdict is a grading error is an error naming the file; but a run from
    agent output whose diff is empty and that the verdicts leave out failed
    (empty_patch: graders skip an empty diff, and SWE-bench's run report counts
    it failed).
    Another model's report: where the report names its model (the log folder,
    OpenHands' model, the run report's file name <model>.<run_id>.json, gold for
    SWE-bench's own gold-patch runs; an sb-cli run id, in its file name
    <subset>__<split>__<run_id>.json, holding a runs' model as a word) and the
    runs table has a model column, a run of another model is an error naming
    both models; --any-model joins on instance id alone anyway. Where either side
    names none, the report says the model was not checked.
    A verified column in the runs table beside --verdicts: the verdicts win, and
    the report says on how many runs the two disagree.

Rating sheets (the claim from people, blind to the outcome)
    --rating-sheet sheet.csv writes one row per run in a shuffled order (seeded
    by --seed): sheet_id, final_message (the runs table's final_message column)
    and an empty claim column; no run id, model or outcome. Its key (sheet_id,
    run_id) goes beside it as sheet.key.csv: keep it from the raters. Nothing is
    audited. Each rater fills claim in a copy with claimed, not claimed or
    equivocal; --ratings a.csv,b.csv,c.csv --rating-key sheet.key.csv reads the
    copies back as rater columns (majority claim, unanimity, Fleiss' kappa, as
    --raters). An empty or unknown claim is an error naming file, row and value.

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
    Cohen's kappa            claim vs verified; task-cluster bootstrap interval;
                             beside it its maximum given the margins (the most
                             any table with these claim and outcome counts can
                             reach: (p_max - p_chance) / (1 - p_chance), p_max
                             the sum of the smaller margins; Cohen 1960). Where
                             it lies below 0.2 the verdict says the margins
                             alone rule out useful agreement
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
                             their runs are counted and said.
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
                             from the checked claims and projected onto all claims:
                             the expected verified deliveries (seen + r x the
                             unchecked claims, with r's exact interval: an
                             interval for the expectation, labelled so), and
                             the 95% predictive interval for the realised count,
                             the one a bill meets: each of min(--boot, 4,000)
                             draws resamples the tasks with checked claims (the
                             pooled rate m and the spread of task rates, as a
                             beta-binomial intraclass correlation rho by
                             moments), gives each task's unchecked claims one
                             rate from Beta(s m + verified, s (1 - m) + failed),
                             s = (1 - rho) / rho, that task's checked claims
                             updating the prior, and draws how many deliver
                             (Binomial; past 64 claims in one task its normal
                             approximation); the interval is the 2.5% and 97.5%
                             order statistics. Claims of one task rise and fall
                             together, so it is wider than a binomial one where
                             tasks differ. Where every task with checked claims
                             holds one, the clustering (rho) cannot be estimated
                             at all; rather than take rho = 0 (binomial: [46,
                             64] held the realised count 0.657 of the time when
                             3 large unchecked tasks delivered all or none), the
                             interval is computed at the all-or-none bound rho =
                             1 (each unchecked task's claims all deliver, or
                             none do: the widest case) and the line says so; a
                             resample of such tasks alone is drawn the same way,
                             and counted. Inflation's interval is claims over
                             its ends. Withheld as the cluster intervals below.
    cost                     with --cost: total, per run, per claim, per verified
                             delivery, and what was spent on false claims, over
                             the runs with a cost (a blank cost leaves the run
                             out of them, and the report says how many)
    verdict                  its first sentence answers the pooled question and
                             says so ("Pooled over all runs, ..."), by one rule
                             at every task count: one of three cases, read off
                             Fisher's p and kappa's cluster interval:
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
                             With fewer than 10 tasks (and more runs than tasks)
                             there is no interval, and Fisher's pooled p would
                             count runs of one task as independent, so the
                             pooled answer is "too few tasks to tell"; it is
                             never swapped for the within-task answer (that
                             made the first sentence change question at 10
                             tasks: "carries information" at 9, "no usable
                             information" at 20 for one process). Where the
                             within-task test shows an association, the first
                             sentence never says "no usable information": it
                             says the data exclude useful agreement pooled over
                             runs, and that within tasks the claim does tell a
                             success from a failure. A claim that never varies
                             carries nothing by construction, and says so.
                             At every task count (with a task column and more
                             runs than tasks) the verdict then asks both
                             questions and says which each answers: pooled over
                             all runs (kappa, Fisher's p: does a claimed run
                             succeed more often, what a per-claim bill rests
                             on) and within tasks (the stratified exact test:
                             among runs of one task, does the claim tell a
                             success from a failure, beyond the task's
                             difficulty). Where the pooled association is shown
                             and the within-task one is not, it says the
                             association runs through the tasks, not within
                             them. Below 10 tasks the pooled answer is too few
                             tasks to tell there too, and no disagreement is
                             drawn: Fisher's p alone would count runs of one
                             task as independent.
    The cluster bootstrap resamples whole tasks with replacement (--boot times,
    default 20,000; the report used 200,000) because runs of one task agree with
    each other; intervals are the 2.5th and 97.5th percentiles (linear
    interpolation between order statistics), as in the report. The JSON also
    carries each figure's BCa interval over tasks (ci_bca, ci_cluster_bca: bias
    and acceleration from the leave-one-task-out jackknife, Efron 1987; inflation
    has none of its own, being r's inverse: invert r's, as BCa allows). It is
    not the default: in test_audit.py --bench (300 replications at 10, 30 and
    100 tasks of 4 runs) its coverage of kappa and r was within one Monte Carlo
    sd of the percentile interval's, both about 0.88-0.91 at 10 tasks, 0.94-0.95
    from 30; what fails at 10 tasks is the number of tasks, hence the few-
    clusters rule below. Resamples where a figure is
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
    p-values print to 3 decimals (McNemar's too: the report's 1.00 is 1.000),
    never rounded across 0.05: a p just below it keeps the decimals that show
    it below (0.0497, not 0.050); below 0.0005 it prints as <0.001.
    --format text (default), markdown or json (full precision; an infinite value,
    such as the inflation where no claim was verified, is the string "inf", and
    null always means undefined). Text and Markdown
    end with a provenance footer: script version and SHA-256 of its own bytes,
    Python version, the seed, a command that reruns the audit from the folder it
    ran in (launcher and script path as invoked, input paths relative to that
    folder, --svg and --manifest left out and listed apart), the SHA-256 of
    every input in sha256sum's format (up to 12 files, the script among them),
    and one SHA-256 over their sorted manifest (path and hash per line), so anyone can rerun it and
    get the same bytes. --manifest FILE writes that manifest: `sha256sum FILE`
    prints the footer's hash, `sha256sum -c FILE` checks the inputs. Markdown
    stays within GitHub's 65,536 characters whatever the number of inputs (a
    table too long keeps the rows that fit, in a <details> block that says to
    attach the JSON instead). A spreadsheet (.xlsx, .xls, .ods), PDF, image,
    SVG/XML, HTML page or zip given as a table is refused by its first bytes,
    in one line naming what it is and what to do. --svg FILE
    draws the rates with their exact and bootstrap intervals from the same
    numbers the text prints, on a background of its own.
    Exit status: 0 the audit ran; 2 bad input or usage, with one line
    'error: ...' naming the file, row and column.

Pasting (the same in all three scripts)
    Text tables fit 100 columns (regrade.py --timings too); statistics print to
    3 decimals, money to 2. Markdown is made for a GitHub comment about 780 px
    wide: short headings; wide tables split, a row padded to its columns at most
    96 characters; a no-break space (U+00A0) inside an interval, so [-0.390,
    -0.044] never wraps, while minus signs stay ASCII, so a copied number still
    parses; an AUC's direction as an arrow (up: a higher value means success,
    down: a lower one), never a bare + or -; prose not hard-wrapped (a comment
    shows every line break); lists kept apart by headings; names never cut (a
    feature name past about 30 characters makes auc_audit.py's feature tables
    scroll sideways rather than wrap a value).
    The footer's command names the launcher as detected (python3, uv run, pipx
    run; a pipx that runs scripts through uv shows as uv run, which reruns it the
    same way) and the script's path as typed. Input paths are relative to the
    folder it ran in: an absolute one is made relative, one that would climb out
    through your home shows as ~/..., one in another user's home by its file name
    only. A long command breaks into lines ending in \; in Markdown it is an sh
    code block that pastes into a shell as is. Output options (--svg, --write-runs,
    --manifest, regrade.py --out) are left out of the command and listed apart,
    an absolute output path by its file name only, so a rerun elsewhere writes
    nothing and the post names no path of yours. The same path rule holds for
    every path in a report body, in every format (text, Markdown, JSON, SVG);
    regrade.py names its test interpreter by name and version (python3 (3.11.7)),
    never by its folder. --version prints the script's hash too, so a pasted
    output names the exact file that made it. An infinite value is "inf" or
    "-inf" in JSON, inf in text; null and undefined always mean undefined.
    Figures (--svg) have a white background of their own, so they read on a dark
    page; every interval is drawn, with a legend saying which is exact
    (Clopper-Pearson) and which a cluster bootstrap; axes fitted to the data;
    labels kept off the marks; a title and caption quoting the printed numbers.
    A semicolon- or tab-separated file named .csv is refused with a hint about
    the delimiter. The scripts never write into their inputs: an output path
    that names an input is refused.
"""
# Map of this file: each section under its `# === Title ===` banner, in order, with its
# entry functions and the rules of the manual above (--help) that it implements.
# (test_audit.py TestMaps checks that each banner is listed, each name is defined in its
# section and reached from main, each quoted rule is in the manual, and each code name
# the manual cites is named in the row of its section; `name` marks a rule's home.)
#
#   Shared block              Inputs Table read_verdicts join_verdicts derive_tables
#                             render_table render_provenance run_main
#                             rules: Input (tables, runs folders); Verdicts (recognised
#                             by content), "The join", "Another model's report";
#                             "Reading harness folders"; Output (formats, the footer;
#                             3 decimals and p-values: `fmt`, `fmt_p`)
#   Statistics                clopper_pearson proportion cohen_kappa fleiss_kappa
#                             fisher_exact mcnemar_exact bca_levels percentile kappa_max
#                             rules: "What it computes": exact Clopper-Pearson interval,
#                             Cohen's kappa (its maximum given the margins: kappa_max),
#                             Fisher's exact p, McNemar's p (the pairs, the unpaired count
#                             and the skip: mcnemar_pairs, in The audit); the BCa interval
#   The audit                 audit table_figures inverse rates as_claims
#                             cluster_bootstrap
#                             degenerate_interval
#                             sampling_projection predictive_deliveries stratified_condition_tests
#                             clustering_unestimable mcnemar_pairs rater_agreement
#                             majority_label
#                             criteria_summary cost_figures claim_within_tasks
#                             claim_verdict pooled_needs_tasks pooled_and_within claim_sentences
#                             question_sentences verdict_sentences
#                             rules: "What it computes": delivery rate r, inflation 1/r
#                             (the printed figures and intervals: table_figures, inverse;
#                             each bootstrap resample's: rates), claim AUC, sampling mode,
#                             stratified exact test, raters, criteria, cost, verdict
#                             (the pooled question's answer: `claim_verdict`; both
#                             questions and where they disagree: `pooled_and_within`);
#                             the cluster bootstrap (the few-clusters rule is the
#                             block's too_few_clusters); "What each test assumes"
#   Input                     runs_columns read_runs read_claim rater_label claim_from
#                             claim_source other_definitions apply_verdicts read_criteria
#                             runs_from_counts
#                             rules: Input (columns by name, claims: `read_claim`,
#                             equivocal messages, a blank verified cell, which claim:
#                             --claim-from); a rater's label, in a --raters column or a
#                             filled sheet, empty or unknown an error: `rater_label`;
#                             Verdicts (--verdicts)
#   Rating sheets             write_rating_sheet read_ratings
#                             rules: "Rating sheets" (blind sheets, the key, raters;
#                             each label read by rater_label, in Input)
#   Report                    render render_definitions render_verdict withheld_notes
#                             render_svg render_equivocal
#                             rules: Output (--format, --svg); the equivocal messages'
#                             second table (render_equivocal, from as_claims)
#   Main                      build_parser main
#                             rules: "Basic usage"; Output (exit status)
import bisect
import concurrent.futures
import itertools
import multiprocessing
import operator
import random
import textwrap
from fractions import Fraction
from statistics import NormalDist

__version__ = "0.1.0"

DEFAULT_SEED = 20260801
DEFAULT_BOOT = 20000
PREDICTIVE_DRAWS = 4000    # at most this many draws of the realised deliveries (sampling mode)
BOOT_CHUNK = 1000          # resamples per independently seeded chunk
CLUSTER_INTERVAL = "percentile"   # which cluster bootstrap interval is printed: "bca" or "percentile"
USEFUL_AGREEMENT = 0.2     # Landis & Koch (1977): a kappa below 0.2 is at best "slight"
CLAIM_COLUMNS = ("claimed", "claim")
SUBMITTED_COLUMN = "submitted"   # the harness's own record of how a run ended
VERIFIED_COLUMNS = ("verified", "completed", "resolved", "gt_completed")
TASK_COLUMNS = ("task_id", "instance_id", "task")
RUN_ID_COLUMNS = ("run_id", "id", "run")
REPLICATE_COLUMNS = ("replicate", "rep", "attempt", "pair", "pair_id")
EXACT_STRATIFIED_RUNS = 5000   # above this, the stratified test convolves floats, not integers
R_TIE_TOLERANCE = Fraction(1, 10 ** 7)   # R's relErr: tables this close in probability tie
EQUIVOCAL_WORDS = frozenset({"equivocal", "ambiguous", "unclear"})
MESSAGE_COLUMNS = ("final_message", "last_message", "final_thought")
SHEET_COLUMNS = ("sheet_id", "final_message", "claim")
# The seed report's section 8 table: 72 runs, 68 claims, 22 false; the four
# equivocal messages (read as not claiming) fall on 3 verified runs and 1 failure.
DEMO_COUNTS = {"tp": 46, "fp": 22, "fn": 3, "tn": 1, "eq_verified": 3, "eq_failed": 1}


# === Shared block ===
# --- shared helpers: keep identical in all three scripts (python3 test_audit.py --sync) ---
# Tables in, tables and JSON out, errors, provenance, grader verdicts and harness
# transcripts. The block imports what it uses so it stands alone.
#
# Where the canonical text lives, and why: in delivery_audit.py. Each script must
# ship and run as one file, so a fourth file holding the block would be one more
# thing to copy and would never be run by anyone; delivery_audit.py is the
# family's first script and the one the block grew in. Edit the block there, then
# run python3 test_audit.py --sync. The end marker line carries the SHA-256 (first
# 16 hex digits) of the body between the two marker lines, so any copy, anywhere,
# can tell whether it was edited by hand: --version prints the body's hash and says
# so when it no longer matches the marker, test_audit.py fails, and --sync refuses
# to overwrite such an edit, naming the line (--sync --force discards it).
#
# Sections of the block (sub-banners '# ---- ... ----'), their entry functions and
# the manual rules they implement:
#   (its head)          FEW_CLUSTERS, too_few_clusters, SIGNIFICANCE, CONFIDENCE,
#                       SEED_REPORT: the rules common to all three (the few-clusters
#                       rule, p < 0.05, 95%)
#   cells and tables    parse_bool, parse_number, Table, parse_table_text, table_kind,
#                       wrong_kind, is_missing (missing words, yes/no words, CSV/TSV/JSONL/JSON
#                       tables; a spreadsheet, PDF, image or archive refused)
#   the input record    Inputs (every input read once, hashed for the footer),
#                       input_overlap (nothing written is, or lies in, an input)
#   writing files       write_atomic (a failed write leaves nothing behind)
#   numbers and tables  fmt, fmt_ci, fmt_p, plural, render_table, to_json, fit_to_paste
#                       (3 decimals, p-values never rounded across 0.05 nor to
#                       0.000; text, Markdown and JSON at full precision;
#                       Markdown within 65,536 characters)
#   provenance          script_sha256, shared_block_sha256, provenance, manifest_text,
#                       render_provenance (the footer: hashes, the manifest and
#                       --manifest, command, seed); relative_path, path_names_home
#                       (every path a report shows: none names a user)
#   figures             svg_open, svg_escape (SVG with its own background)
#   verdicts            read_verdicts, join_verdicts, set_aside (VERDICT_FORMATS:
#                       regrade's verdicts, SWE-bench run report and report.json,
#                       OpenHands; the join on run id or instance, one run per key;
#                       the table's own outcome column set aside, --verdicts wins)
#   command line        Parser, add_common_options, add_agent_options, run_main
#                       (--format, --seed, --version; error: ... and status 2)
#   agent output        the readers (read_swe_agent, read_mini_swe_agent,
#                       read_openhands, read_claude_code, read_codex); the named
#                       tools' categories (HARNESS_MANUAL's "Tool categories"):
#                       SWE_AGENT_TOOLS and EDITOR_COMMANDS (swe_agent_call),
#                       openhands_call, CLAUDE_TOOLS, codex_call; shell commands'
#                       categories: command_category (SHELL_RULES, the manual's
#                       shell-command table); HARNESS_FORMATS, one record per
#                       harness (file names, sniff, reader, run-id rule, task-map
#                       keys, submission rule (swe_agent_submitted, mini_submitted,
#                       openhands_submitted, claude_submitted, codex_submitted), tool
#                       tables, refusal rule and its
#                       text, token source, manual paragraph: a new format is one
#                       record plus its reader); the refusal rules:
#                       swe_agent_refused, mini_refused, openhands_refused,
#                       claude_call_failed (and claude -p's permission denials, in
#                       claude_totals); read_jsonl_records (every JSONL file's one
#                       reader; with a cut tail, a record counts once its line
#                       ends, as in regrade.py's record files); agent_files,
#                       assign_run_ids/number_run_ids (run ids), tasks_from_record
#                       (tasks without a map), phase_measures, derive_tables,
#                       write_runs (--task-map, --write-runs), write_runs_first
#                       (the audits' stop when no outcome yet), PROCESS_MEASURES
#                       (auc_audit.py's default family on a derived table)
import argparse
import csv
import hashlib
import io
import json
import math
import os
import platform
import re
import shlex
import sys
import tempfile
import textwrap

# A rule the scripts share has its one home here. Below FEW_CLUSTERS clusters
# (tasks) a cluster bootstrap or a cluster-robust p is too rough to print:
# delivery_audit.py withholds its intervals, auc_audit.py its clustered p and gate 3.
FEW_CLUSTERS = 10


def too_few_clusters(*counts):
    """The few-clusters rule: a cluster bootstrap interval or a clustered p is withheld
    when any of these cluster counts (all clusters; those holding a success, a
    failure, or the feature's evidence on its rows) is below FEW_CLUSTERS.

    >>> too_few_clusters(18, 9), too_few_clusters(18, 10), too_few_clusters(9)
    (True, False, True)
    """
    return min(counts) < FEW_CLUSTERS


# A p below SIGNIFICANCE is significant (delivery_audit.py: Fisher's p and the
# within-task test, the claim and the outcome are not independent; auc_audit.py:
# its gates), and fmt_p never rounds a p across it. Intervals are CONFIDENCE ones.
SIGNIFICANCE = 0.05
CONFIDENCE = 0.95
# The report the scripts come from, named where printed text first refers to it.
SEED_REPORT = "XO Labs, What Observational Data Can't Tell You About Work Done, August 2026"


# ---- cells and tables ----
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
FOOTER_COMMAND_WIDTH = 76     # a longer footer command breaks into lines ending in a backslash
FOOTER_FILES = 12             # more files than this: the footer lists none, the manifest holds them
PASTE_LIMIT = 65536           # characters GitHub takes in an issue or a comment


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


def delimiter_hint(header, kind):
    """What to do when a one-column header holds another delimiter; '' otherwise.

    >>> delimiter_hint("run_id;claimed;verified", "csv")[:43]
    'the file looks separated by semicolons, not'
    >>> delimiter_hint("run_id", "csv")
    ''
    """
    expected = "tabs" if kind == "tsv" else "commas"
    for mark, word, advice in (
            (";", "semicolons", "save it again comma-separated (a spreadsheet's 'CSV, "
                                "comma delimited'; decimal commas become points)"),
            ("\t", "tabs", "name it .tsv (or pipe it in as '-', which detects tabs)"),
            (",", "commas", "name it .csv")):
        if mark in header and word != expected:
            return f"the file looks separated by {word}, not {expected}: {advice}"
    return ""


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
        if len(columns) == 1 and delimiter_hint(columns[0], kind):
            raise InputError(f"{name} row 1: one column, {columns[0]!r}: "
                             f"{delimiter_hint(columns[0], kind)}")
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


SPREADSHEET_ADVICE = "save the sheet as CSV (Save As > CSV UTF-8) and give that file"
WRONG_KINDS = (   # (first bytes, what the file is, what to do); the first match wins
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an Excel 97-2003 workbook (.xls)",
     SPREADSHEET_ADVICE),
    (b"%PDF-", "a PDF document", "export the data it shows as a CSV table"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image", "give the table the image was made from"),
    (b"\xff\xd8\xff", "a JPEG image", "give the table the image was made from"),
    (b"GIF8", "a GIF image", "give the table the image was made from"),
    (b"\x1f\x8b", "a gzip archive", "unpack it (gunzip) and give the file inside"),
)


def wrong_kind(data):
    """(what the file is, what to do) when its first bytes say it is no text table
    (a spreadsheet, PDF, image, SVG/XML, HTML page or archive), else None.

    >>> wrong_kind(b"PK\\x03\\x04....[Content_Types].xml....xl/workbook.xml")[0]
    'an Excel workbook (.xlsx)'
    >>> wrong_kind(b"run_id,claimed\\nr1,yes\\n") is None
    True
    """
    for magic, kind, advice in WRONG_KINDS:
        if data.startswith(magic):
            return kind, advice
    head = data[:4096]
    if data.startswith(b"PK\x03\x04"):
        if b"opendocument.spreadsheet" in head:
            return "an OpenDocument spreadsheet (.ods)", SPREADSHEET_ADVICE
        if b"xl/" in head:
            return "an Excel workbook (.xlsx)", SPREADSHEET_ADVICE
        return "a zip archive", "unpack it and give the folder or the table inside"
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if start.startswith((b"<!doctype html", b"<html")):
        return "an HTML page", "save the table itself as CSV (a saved web page is not one)"
    if start.startswith((b"<?xml", b"<svg")):
        if b"<svg" in start[:2048]:
            return ("an SVG figure", "give the runs table or report it was drawn from "
                    "(a figure holds no rows)")
        return "an XML file", "export its records as CSV or JSON"
    return None


def refuse_predictions(table, text):
    """A predictions file (mini-swe-agent's preds.json, SWE-bench's predictions) is what
    a harness submits for grading, not a runs table: say so, and what to run instead."""
    keyed = False
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        keyed = isinstance(data, dict) and bool(data) and all(
            isinstance(v, dict) and "model_patch" in v for v in data.values())
    if keyed or "model_patch" in {c.lower() for c in table.columns}:
        raise InputError(
            f"{table.name}: a predictions file (instance id, model_name_or_path, "
            f"model_patch), not a runs table: it holds no claims or measures. Grade it with "
            f"regrade.py INSTANCES {table.name} --repo REPO --out DIR, then audit the "
            f"harness's output folder (its trajectories) with --verdicts DIR/verdicts.csv")


# ---- the input record ----
class Inputs:
    """Every file an audit reads, with its SHA-256, for the provenance footer."""

    def __init__(self, *, task_map=None):
        self.files = []           # [(path as given, sha256)]
        self.task_map = task_map  # --task-map FILE: the tasks of transcripts that name none
        self.agent_cache = {}     # {path: derive_tables(path)}: agent output is read once

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
        kind = wrong_kind(data)
        if kind:
            raise InputError(f"{path}: {kind[0]}, not a text table or JSON; {kind[1]}")
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: not UTF-8 text (byte {exc.start})") from None

    def read_table(self, path):
        """Read a CSV/TSV/JSONL/JSON table, '-' for stdin, a runs folder, or agent output."""
        derived = agent_output(self, path) if path != "-" else None
        if derived is not None:
            return derived["runs"]
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
        table = parse_table_text(text, "stdin" if path == "-" else path, table_kind(path, text))
        refuse_predictions(table, text)
        return table

    def sibling_table(self, path, name):
        """Read `name` (e.g. tool_calls.csv) from a runs folder, or None.

        Only a runs folder, or its runs.csv named directly, brings its siblings:
        a table that merely sits beside other files does not.
        """
        if path == "-":
            return None
        derived = agent_output(self, path)
        if derived is not None:
            return derived["tool_calls"] if name == "tool_calls.csv" else None
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
        for source, _ in self.files:
            if source != "-" and input_overlap(path, source) == "is":
                raise InputError(f"{path}: refusing to overwrite an input file")


def input_overlap(output, source):
    """How an output path meets an input's: "is" (the same file or folder once links
    are followed), "lies inside" (within the input's folder), or None. The one test
    behind "the scripts never write into their inputs": Inputs.guard_output (files
    read) and regrade.py's --out check (every input, before any is read).

    >>> input_overlap("/a/b/out", "/a/b"), input_overlap("/a/b", "/a/b/")
    ('lies inside', 'is')
    >>> input_overlap("/a/bc", "/a/b") is None
    True
    """
    target, real = os.path.realpath(output), os.path.realpath(source)
    if target == real:
        return "is"
    return "lies inside" if target.startswith(real.rstrip(os.sep) + os.sep) else None


# ---- writing files ----
def current_umask():
    """The process's umask (reading it means setting it, so it is set back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path, text):
    """Write `text` to `path` via a temporary file and a rename.

    The file gets the mode an ordinary write would give it (0666 less the umask),
    not the temporary file's private 0600: reports and tables are meant to be shared.
    """
    folder = os.path.dirname(os.path.abspath(path))
    temp = None
    try:
        handle, temp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".part")
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
        os.chmod(temp, 0o666 & ~current_umask())
        os.replace(temp, path)
    except OSError as exc:
        if temp is not None and os.path.exists(temp):
            os.remove(temp)       # a failed write leaves nothing behind
        raise InputError(f"{path}: cannot write ({exc.strerror or exc})") from None


# ---- numbers and tables ----
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


def plural(count, noun, nouns=None):
    """'1 task', '2 tasks': a count with its noun.

    >>> plural(1, "task"), plural(3, "task"), plural(2, "delivery", "deliveries")
    ('1 task', '3 tasks', '2 deliveries')
    """
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"


def fmt_p(p, floor=None, level=SIGNIFICANCE):
    """A p-value to 3 decimals, never rounded across the significance level (0.05: the
    scripts' SIGNIFICANCE), nor to a misleading 0.000: below 0.0005 it prints
    '<0.001'. A p just below the level keeps the decimals that show it below (0.0497,
    not 0.050); one that would need more than six prints as '<0.050'. A permutation p
    at its floor 1/(B + 1) (pass `floor`) prints as '<=' that floor rounded up.

    >>> fmt_p(1.0), fmt_p(0.0123), fmt_p(1.9e-9), fmt_p(0.049), fmt_p(0.0497), fmt_p(0.05)
    ('1.000', '0.012', '<0.001', '0.049', '0.0497', '0.050')
    >>> fmt_p(0.0004997), fmt_p(0.0162), fmt_p(None), fmt_p(0.0), fmt_p(0.04999999999)
    ('<0.001', '0.016', 'undefined', '<0.001', '<0.050')
    >>> fmt_p(1 / 2001, floor=1 / 2001), fmt_p(1 / 101, floor=1 / 101)
    ('<=0.001', '<=0.010')
    """
    if p is None:
        return fmt(p)
    if floor is not None and p <= floor * (1 + 1e-12):
        return f"<={math.ceil(round(floor * 1000, 9)) / 1000:.3f}"
    if p < 0.0005:
        return "<0.001"
    text = fmt(p)
    if p < level <= float(text):
        for digits in range(4, 7):
            text = fmt(p, digits)
            if float(text) < level:
                return text
        return f"<{fmt(level)}"
    return text


def nonbreaking(text):
    """Markdown that cannot wrap inside a value: an interval's space, the space
    before a direction arrow and the space after 'p' or 'AUC' become no-break spaces
    (U+00A0). Minus signs stay ASCII, so a copied number still reads as a number in
    a spreadsheet or a script.

    >>> nonbreaking("diff -0.206 [-0.368, -0.040], AUC 0.661 \u2193, p <0.001") == (
    ...     "diff -0.206 [-0.368,\u00a0-0.040], AUC\u00a00.661\u00a0\u2193, p\u00a0<0.001")
    True
    """
    text = re.sub(r"\[([^\[\],\s]+), ([^\[\],\s]+)\]", "[\\1,\u00a0\\2]", text)
    text = re.sub(r"\b(p|AUC) (?=[<\d])", "\\1\u00a0", text)
    return re.sub(r"(\d) ([\u2191\u2193])", "\\1\u00a0\\2", text)


def looks_numeric(text):
    """True for a number, a number with a direction arrow, a p like <0.001, or an
    interval like [0.215, 0.448]: right-aligned in tables.

    >>> [looks_numeric(t) for t in ("0.5", "<0.001", "0.661 \u2193", "[0.2, 0.4]", "gate 1")]
    [True, True, True, True, False]
    """
    text = text.rstrip("\u2191\u2193 \u00a0").lstrip("<")
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


def fit_to_paste(text, attach):
    """Markdown within PASTE_LIMIT characters (what GitHub takes in an issue or a
    comment): while it is longer, its longest table keeps the rows that fit, folded
    into a <details> block whose summary says how many are left out and what to
    attach instead (`attach`); the footer is never cut. Text within the limit is
    returned as it is.

    >>> table = "| a |\\n|---|\\n" + "".join(f"| {i} |\\n" for i in range(20000))
    >>> folded = fit_to_paste("x\\n\\n" + table + "\\nend\\n", "attach runs.csv")
    >>> len(folded) <= PASTE_LIMIT, "rows of 20,000 shown" in folded, folded.endswith("end\\n")
    (True, True, True)
    """
    while len(text) > PASTE_LIMIT:
        lines = text.split("\n")
        spans, start = [], None
        for i, line in enumerate(lines + [""]):
            if line.startswith("|") and start is None:
                start = i
            elif not line.startswith("|") and start is not None:
                if i - start > 2 and "<details>" not in lines[start - 3:start]:
                    spans.append((start, i))
                start = None
        if not spans:
            return text                      # no table left to fold: nothing to cut safely
        first, end = max(spans, key=lambda s: sum(len(line) + 1 for line in lines[s[0]:s[1]]))
        header, body = lines[first:first + 2], lines[first + 2:end]
        budget = PASTE_LIMIT - (len(text) - sum(len(line) + 1 for line in lines[first:end]))
        budget -= 400 + len(attach) + sum(len(line) + 1 for line in header)
        kept, used = 0, 0
        while kept < len(body) and used + len(body[kept]) + 1 <= budget:
            used += len(body[kept]) + 1
            kept += 1
        summary = (f"<summary>{kept:,} rows of {len(body):,} shown: the whole table would "
                   f"pass GitHub's {PASTE_LIMIT:,}-character limit; {attach}</summary>")
        lines[first:end] = ["<details>", summary, ""] + header + body[:kept] + ["", "</details>"]
        text = "\n".join(lines)
    return text


def markdown_paragraphs(lines):
    """Markdown lines with a blank line between two adjacent sentences, which GitHub
    would otherwise run into one paragraph (or break apart in a comment).

    >>> markdown_paragraphs(["One.", "Two.", "", "| a |", "- b", "- c"])
    ['One.', '', 'Two.', '', '| a |', '- b', '- c']
    """
    def prose(line):
        return bool(line.strip()) and not line.startswith(("|", "#", "- ", "* ", "```", "    "))
    out = []
    for line in lines:
        if out and prose(line) and prose(out[-1]):
            out.append("")
        out.append(line)
    return out


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


# ---- provenance ----
def script_sha256(path):
    """SHA-256 of the script's own bytes: a pasted output names the exact file."""
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def shared_block_sha256(path):
    """(body, marker): the SHA-256 (16 hex digits) of the shared helper block's body
    in the script at path, and the one its end marker carries; they differ when the
    copy was edited by hand after the last sync. ('', '') when the file has no block."""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    ends = [i for i, line in enumerate(lines) if line.startswith("# --- end shared helpers")]
    starts = [i for i, line in enumerate(lines) if line.startswith("# --- shared helpers")]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        return "", ""
    body = "".join(line + "\n" for line in lines[starts[0] + 1:ends[0]])
    marker = re.search(r"body sha256 ([0-9a-f]{16})\b", lines[ends[0]])
    return (hashlib.sha256(body.encode("utf-8")).hexdigest()[:16],
            marker.group(1) if marker else "")


def version_text(version, script_path):
    """--version: the version, the file's hash, and the shared block's hash beside it."""
    body, marker = shared_block_sha256(script_path)
    edited = f" (edited by hand: its end marker says {marker or 'nothing'})" \
        if body != marker else ""
    return (f"%(prog)s {version} (sha256 {script_sha256(script_path)}) "
            f"shared helpers {body}{edited}")


def relative_path(path):
    """A path as a report may show it: relative to the current folder; where that
    would climb out through the home folder, ~/...; where neither can be, its base
    name. Nothing of this machine above the current folder or the home folder is
    shown, so a pasted report names no user.

    >>> relative_path("-"), relative_path("runs/runs.csv")
    ('-', 'runs/runs.csv')
    >>> relative_path(os.path.join(os.getcwd(), "a", "b.csv")) == os.path.join("a", "b.csv")
    True
    """
    if path == "-" or not path:
        return path
    if not os.path.isabs(path) and not os.path.normpath(path).startswith(os.pardir):
        return path               # below the current folder (sub/../x too)
    full = os.path.abspath(path)
    try:
        relative = os.path.relpath(full)
    except ValueError:            # another drive on Windows: no relative form
        relative = None
    if relative is not None and not relative.startswith(os.pardir):
        return relative
    home = os.path.expanduser("~").rstrip(os.sep)
    if home and home != "~" and full.startswith(home + os.sep):
        if relative is None or not os.path.abspath(os.getcwd()).startswith(home + os.sep):
            return "~/" + os.path.relpath(full, home).replace(os.sep, "/")
        return relative           # both in the home folder: the climb names no user
    if relative is None or path_names_home(full, home):
        return os.path.basename(full)
    return relative


HOMES_FOLDERS = ("/home", "/Users", "/export/home", "/var/home")   # where users' homes live


def path_names_home(full, home):
    """True when `full` lies in the folder that holds the home folder, or in a folder
    that holds users' homes (HOMES_FOLDERS: /home/bob with HOME=/root), where a
    relative path would climb past a user's name into another's."""
    parent = os.path.dirname(home) if home and home != "~" else ""
    holders = [h for h in (parent,) + HOMES_FOLDERS if h not in ("", os.sep)]
    return any(full.startswith(h.rstrip(os.sep) + os.sep) for h in holders)


def shell_word(word):
    """One word of a command to paste: quoted as shlex does, but a leading ~/ left
    bare so the shell still expands it.

    >>> shell_word("~/runs dir/a.csv"), shell_word("a b")
    ("~/'runs dir/a.csv'", "'a b'")
    """
    if word.startswith("~/") and len(word) > 2:
        return "~/" + shlex.quote(word[2:])
    return shlex.quote(word)


def launcher_and_script(script_path):
    """How this process was started: (launcher, the script's path as invoked).

    The launcher is 'uv run' (uv sets UV in what it runs), 'pipx run' (the
    interpreter lives under a pipx folder), or the interpreter's name as typed
    (sys.orig_argv, Python 3.10+), else 'python3'. When the script was imported
    and main() called, as the tests do, it is 'python3' and the script's path;
    an absolute path is made relative to the current folder.
    """
    argv0 = sys.argv[0] if sys.argv else ""
    if not argv0 or not os.path.isfile(argv0) or \
            os.path.realpath(argv0) != os.path.realpath(script_path):
        return "python3", relative_path(script_path)
    if os.environ.get("UV"):
        launcher = "uv run"
    elif "pipx" in sys.prefix.replace("\\", "/").split("/"):
        launcher = "pipx run"
    else:
        name = (getattr(sys, "orig_argv", None) or ["python3"])[0]
        launcher = name if name.startswith("python") and os.sep not in name else "python3"
    return launcher, relative_path(argv0)


def rerun_argument(token, read):
    """One argument with an absolute path made relative to the current folder, when it
    names an input (in `read`, real paths) or a folder (a runs folder, a clone): alone,
    in a comma-separated list of them, as --option=PATH or as owner/name=PATH. Any
    other argument is kept as it is."""
    prefix, value = "", token
    if not os.path.isabs(token) and "=" in token:
        head, _, tail = token.partition("=")
        if head.startswith("--") or "/" in head:
            prefix, value = head + "=", tail
    parts = value.split(",")          # a list of inputs, such as --ratings a.csv,b.csv
    if all(os.path.isabs(part) and (os.path.realpath(part) in read or os.path.exists(part))
           for part in parts):
        return prefix + ",".join(relative_path(part) for part in parts)
    return token


def rerun_arguments(argv, inputs, output_flags=()):
    """(the arguments to rerun with, the outputs left out of them).

    Input paths become relative to the current folder; output options (`output_flags`,
    e.g. --svg FILE, also abbreviated or as --svg=FILE) are taken out, so a rerun on
    another machine writes nothing; an absolute output path shows only its file name.

    >>> rerun_arguments(["runs.csv", "--sv", "/tmp/x.svg", "--format=markdown"], Inputs(),
    ...                 ("--svg",))
    (['runs.csv', '--format=markdown'], ['--svg \u2026/x.svg'])
    """
    read = {os.path.realpath(path) for path, _ in inputs.files if path != "-"}
    kept, outputs, index = [], [], 0
    while index < len(argv):
        token = argv[index]
        if token == "--":
            kept += [rerun_argument(t, read) for t in argv[index:]]
            break
        name, equals, value = token.partition("=")
        flag = next((f for f in output_flags
                     if name.startswith("--") and len(name) > 2 and f.startswith(name)), None)
        if flag:
            if not equals:
                index += 1
                value = argv[index] if index < len(argv) else ""
            # An absolute output path is a path of this machine: only its name is shown.
            shown = ("\u2026/" + shlex.quote(os.path.basename(value)) if os.path.isabs(value)
                     else shlex.quote(value))
            outputs.append(f"{flag} {shown}")
        else:
            kept.append(rerun_argument(token, read))
        index += 1
    return kept, outputs


def provenance(script_path, version, argv, seed, inputs, output_flags=()):
    """Everything a reader needs to rerun the audit and get the same numbers.

    `command` reruns this audit from the folder it ran in: the launcher and the
    script's path as invoked, input paths relative to that folder, and the output
    options named in `output_flags` left out (listed in `outputs`).
    """
    launcher, script = launcher_and_script(script_path)
    output_flags = tuple(output_flags) + ("--manifest",)
    arguments, outputs = rerun_arguments(list(argv), inputs, output_flags)
    prov = {
        "script": os.path.basename(script_path),
        "script_path": script,
        "launcher": launcher,
        "version": version,
        "script_sha256": script_sha256(script_path),
        "python": platform.python_version(),
        "command": " ".join([launcher, shell_word(script)] +
                            [shell_word(a) for a in arguments]),
        "outputs": outputs,
        "seed": seed,
        "inputs": [{"path": relative_path(p), "relative_path": relative_path(p), "sha256": h}
                   for p, h in inputs.files],
    }
    text = manifest_text(prov)
    prov["manifest"] = {"files": text.count("\n"),
                        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}
    target = option_value(list(argv), "--manifest")
    if target:
        inputs.guard_output(target)
        write_atomic(target, text)
    return prov


def option_value(argv, flag):
    """The value given to `flag` in argv (--flag VALUE, --flag=VALUE, or an
    abbreviation argparse took), or None."""
    for i, token in enumerate(argv):
        if token == "--":
            return None
        name, equals, value = token.partition("=")
        if name.startswith("--") and len(name) > 2 and flag.startswith(name):
            return value if equals else (argv[i + 1] if i + 1 < len(argv) else None)
    return None


def manifest_text(prov):
    """The manifest of the script and its inputs: 'sha256  path' per file (sha256sum's
    format, so `sha256sum -c` checks it), one line per file, sorted by path. The
    footer gives the SHA-256 of this text, so one hash pins every input."""
    entries = {(f.get("relative_path", f["path"]), f["sha256"]) for f in prov["inputs"]}
    entries.add((prov.get("script_path", prov["script"]), prov["script_sha256"]))
    return "".join(f"{digest}  {path}\n" for path, digest in sorted(entries))


def command_lines(command, width=FOOTER_COMMAND_WIDTH):
    """A shell command as lines to paste: kept whole when it fits `width`, else
    broken before each option, every line but the last ending in ' \\'.

    >>> command_lines("python3 a.py runs.csv --boot 10")
    ['python3 a.py runs.csv --boot 10']
    >>> for line in command_lines("uv run a.py runs.csv --boot 10 --format 'mark down'", 30):
    ...     print(line)
    uv run a.py runs.csv \\
        --boot 10 \\
        --format 'mark down'
    """
    if len(command) <= width:
        return [command]
    words = shlex.split(command)
    start = 3 if command.startswith(("uv run ", "pipx run ")) else 2
    groups = [words[:start]]
    for word in words[start:]:
        if word.startswith("-") and word != "-":
            groups.append([])
        groups[-1].append(word)
    lines = [" ".join(shell_word(word) for word in group) for group in groups]
    return [("    " if i else "") + line + (" \\" if i < len(lines) - 1 else "")
            for i, line in enumerate(lines)]


def render_provenance(prov, style):
    """The footer printed under every text and Markdown report.

    The command reruns the audit from the folder it ran in; when long it is broken
    into lines ending in '\\'. The script and every input are listed in sha256sum's
    format with paths relative to that folder, so `sha256sum -c` checks them. In
    Markdown the command and the hashes are two code blocks, each pasted as is.
    """
    seed = prov["seed"] if prov["seed"] is not None else "none (no randomness)"
    command = command_lines(prov["command"])
    outputs = prov.get("outputs") or []
    hashes = [f"{prov['script_sha256']}  {prov.get('script_path', prov['script'])}"]
    hashes += [f"{f['sha256']}  {f.get('relative_path', f['path'])}" for f in prov["inputs"]]
    manifest = manifest_sentence(prov, style)
    if style == "markdown":
        about = (f"# {prov['script']} {prov['version']}, Python {prov['python']}, seed "
                 f"{seed}; run it from the same folder")
        lines = [about] + command
        if outputs:
            lines.append(f"# left out, as outputs: {'; '.join(outputs)}")
        listed = ("SHA-256 of the script and its inputs (check with `sha256sum -c`):\n\n```\n"
                  + "\n".join(hashes) + "\n```\n\n" if len(hashes) <= FOOTER_FILES else "")
        return "Provenance:\n\n```sh\n" + "\n".join(lines) + "\n```\n\n" + listed + manifest
    lines = [f"{prov['script']} {prov['version']}, Python {prov['python']}",
             "command: " + command[0]] + command[1:]
    if outputs:
        lines.append(f"outputs, left out of the command: {'; '.join(outputs)}")
    lines.append(f"seed: {seed}")
    if len(hashes) <= FOOTER_FILES:
        lines += ["sha256 of the script and its inputs:"] + hashes
    return "-- provenance --\n" + "\n".join(lines + [manifest])


def manifest_sentence(prov, style):
    """The footer's line on the manifest: its files, its SHA-256, how to check it."""
    manifest = prov.get("manifest") or {"files": 1 + len(prov["inputs"]), "sha256": "?"}
    listed = ("listed above" if len(prov["inputs"]) < FOOTER_FILES else "too many to list "
              "here")
    if style == "markdown":
        return (f"manifest: {manifest['files']} files ({listed}), SHA-256 "
                f"`{manifest['sha256']}` of their sorted list (path and SHA-256 per line); "
                f"to check, rerun with `--manifest inputs.sha256`, then `sha256sum "
                f"inputs.sha256` prints that hash and `sha256sum -c inputs.sha256` checks "
                f"every file")
    return (f"manifest: {manifest['files']} files ({listed}); SHA-256 of their sorted list "
            f"(path and SHA-256 per line):\n  {manifest['sha256']}\n  to check: rerun with "
            f"--manifest inputs.sha256; sha256sum inputs.sha256 prints that hash,\n  "
            f"sha256sum -c inputs.sha256 checks every file")


# ---- figures ----
SVG_BACKGROUND = "#ffffff"     # figures carry their own background: they read on dark pages
SVG_INK = "#1f2328"


def svg_escape(text):
    """Text made safe inside an SVG element.

    >>> svg_escape("a < b & c")
    'a &lt; b &amp; c'
    """
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def svg_open(width, height, title):
    """An SVG's opening: size, font, an explicit background and the figure's title as
    <title>, so the figure reads the same on a light or a dark page."""
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="13" '
            f'fill="{SVG_INK}">',
            f"<title>{svg_escape(title)}</title>",
            f'<rect width="{width}" height="{height}" fill="{SVG_BACKGROUND}"/>']
# ---- verdicts (grader output) ----
# A verdict file is recognised by what it holds, never by its name. Every reader
# returns a source {"name", "format", "records"}; each record is one graded run or
# instance: {"run_id", "model", "instance_id" (None where the grader gives none),
# "verified": True, False, or None for a grading error (unchecked, never failed),
# "status", "where"}. join_verdicts() then pairs records with runs.
VERDICT_OUTCOME_COLUMNS = ("completed", "verified", "resolved", "gt_completed", "outcome")
VERDICT_MODEL_COLUMNS = ("model", "model_name_or_path")
VERDICT_RUN_ID_COLUMNS = ("run_id", "id", "run")
VERDICT_INSTANCE_COLUMNS = ("instance_id", "task_id", "task")
VERDICT_FORMATS = ("regrade.py's verdicts.csv or verdicts.jsonl, SWE-bench's run report "
                   "<model>.<run_id>.json, a report.json or logs/run_evaluation/<run_id>/ "
                   "folder, sb-cli's report, OpenHands' output.swebench_eval.jsonl")


def optional_bool(cell):
    """A cell read as true/false, or None where empty or not a truth value."""
    try:
        return None if is_missing(cell) else parse_bool(cell, "")
    except InputError:
        return None


def verdict_record(verified, status, where, *, run_id=None, model=None, instance_id=None):
    """One verdict; blank ids become None."""
    return {"run_id": run_id or None, "model": model or None,
            "instance_id": instance_id or None, "verified": verified, "status": status,
            "where": where}


def read_verdicts(inputs, path, outcome=None):
    """Read a verdict file or folder of any format above, recognised by its content.

    `outcome` names the outcome column of a verdicts table (auc_audit's --outcome).
    """
    if path != "-" and os.path.isdir(path):
        for name in ("verdicts.jsonl", "verdicts.csv"):     # regrade.py --out DIR
            if os.path.isfile(os.path.join(path, name)):
                return read_verdicts(inputs, os.path.join(path, name), outcome)
        return run_report_folder(inputs, path) or swebench_log_folder(inputs, path)
    if path != "-" and not os.path.exists(path):
        raise InputError(f"{path}: no such file or folder (given to --verdicts)")
    text = inputs.read_text(path)
    name = "stdin" if path == "-" else path
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    source = verdicts_from_json(data, name) if isinstance(data, dict) else None
    if source is None and openhands_eval_lines(text):
        source = openhands_eval(text, name)
    if source is None:
        source = verdict_table(parse_table_text(text, name, table_kind(path, text)), outcome)
    return source


def verdicts_from_json(data, name):
    """A JSON object: a SWE-bench or sb-cli run report, or per-instance report.json
    (keyed by instance id, or the older flat shape named by its folder)."""
    if isinstance(data.get("resolved"), list) and isinstance(data.get("unresolved_ids"), list) \
            and "resolved_ids" not in data:
        data = dict(data, resolved_ids=data["resolved"])   # SWE-bench-java's run report
    if isinstance(data.get("resolved_ids"), list):
        return swebench_run_report(data, name)
    if isinstance(data.get("resolved"), bool):
        if name == "stdin":
            raise InputError("stdin: a flat report.json ({\"resolved\": ...}) names its "
                             "instance only by the folder it sits in; give the file's path")
        folder = os.path.basename(os.path.dirname(os.path.abspath(name)))
        return {"name": name, "format": "SWE-bench report.json",
                "records": report_json_records(data, name, folder)}
    if data and all(isinstance(v, dict) and "resolved" in v for v in data.values()):
        return {"name": name, "format": "SWE-bench report.json",
                "records": instance_reports(data, name)}
    return None


# --- verdicts: SWE-bench run report (and regrade.py's swebench_summary.json) ---
# (list, verified, status); a later list overrides an earlier one, so v5's
# infrastructure failures (kept inside unresolved_ids / error_ids) end unchecked.
NOT_SUBMITTED = "incomplete"
RUN_REPORT_LISTS = (
    ("incomplete_ids", None, NOT_SUBMITTED), ("pending_ids", None, "pending"),
    ("failed_ids", None, "evaluation failed"), ("error_ids", None, "error"),
    ("empty_patch_ids", False, "empty_patch"), ("unresolved_ids", False, "unresolved"),
    ("resolved_ids", True, "resolved"), ("infra_failure_ids", None, "infra_failure"),
    ("ambiguous_failure_ids", None, "ambiguous_failure"))
SB_CLI_KEYS = ("failed_ids", "pending_ids", "failed_instances", "pending_instances")


def swebench_run_report(data, name):
    """Records from a final run report: one per id in its outcome lists.

    SWE-bench names the file <model>.<run_id>.json; join_verdicts reads the model
    from that name (model_hint) and checks it against the runs' models. sb-cli names
    its report <subset>__<split>__<run_id>.json and records no model (run_hint).
    """
    if "ids_are" in data:
        form = "regrade.py swebench_summary.json"
    elif any(key in data for key in SB_CLI_KEYS):
        form = "sb-cli report"
    else:
        form = "SWE-bench run report"
    by_run = data.get("ids_are") == "run_id"
    reasons = data.get("failure_reasons") if isinstance(data.get("failure_reasons"), dict) else {}
    found = {}
    for key, verified, status in RUN_REPORT_LISTS:
        ids = data.get(key) or []
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise InputError(f"{name}: {key!r} should be a list of ids")
        for item in ids:
            reason = f" ({reasons[item]})" if item in reasons and verified is None else ""
            found[item] = verdict_record(verified, status + reason, f"{name}: {key}",
                                         **({"run_id": item} if by_run else {"instance_id": item}))
    base = os.path.basename(name)
    return {"name": name, "format": form, "records": [found[i] for i in sorted(found)],
            # <model>.<run_id>.json: a name with a single dot names no model
            "model_hint": base if form == "SWE-bench run report" and base.count(".") >= 2
            else None,
            "run_hint": (base[:-5].split("__", 2)[-1] if form == "sb-cli report" and
                         base.endswith(".json") and base.count("__") >= 2 else None)}


def run_report_folder(inputs, root):
    """The run reports (*.json with resolved_ids) at the top of `root`, one per model
    as SWE-bench and sb-cli (sb-cli-reports/) write them, merged; None if none.
    Each keeps the model its own name gives (per-record model_hint, run_hint)."""
    records, forms = [], set()
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if not (name.endswith(".json") and os.path.isfile(path)):
            continue
        try:
            data = json.loads(inputs.read_text(path))
        except ValueError:
            continue
        if not (isinstance(data, dict) and isinstance(data.get("resolved_ids"), list)):
            continue
        source = swebench_run_report(data, path)
        forms.add(source["format"])
        for record in source["records"]:
            record["model_hint"], record["run_hint"] = source["model_hint"], source["run_hint"]
            records.append(record)
    if not records:
        return None
    return {"name": root, "format": " and ".join(sorted(forms)) + " folder",
            "records": records}


# --- verdicts: SWE-bench report.json (one file, or a logs/run_evaluation/ folder) ---
def report_json_records(data, where, folder, model=None):
    """Records from one report.json: keyed by instance id, or the older flat
    {"resolved": ..., "patch_exists": ...} whose instance is its folder's name."""
    if isinstance(data.get("resolved"), bool):
        return instance_reports({folder: data}, where, model)
    return instance_reports(data, where, model)


def instance_reports(data, where, model=None):
    """Records from one report.json: {instance_id: {resolved, patch_is_None, ...}}."""
    records = []
    for instance_id, report in sorted(data.items()):
        if not isinstance(report, dict) or not isinstance(report.get("resolved"), bool):
            raise InputError(f"{where}: instance {instance_id!r} has no true/false 'resolved'")
        if report["resolved"]:
            verified, status = True, "resolved"
        elif report.get("infra_failure") is True:
            reason = report.get("infra_failure_reason")
            verified, status = None, "infra_failure" + (f" ({reason})" if reason else "")
        elif report.get("patch_is_None") is True:
            verified, status = False, "empty_patch"
        else:
            verified, status = False, "unresolved"
        records.append(verdict_record(verified, status, where, model=model,
                                      instance_id=instance_id))
    return records


SWEBENCH_INSTANCE_FILES = ("run_instance.log", "patch.diff", "eval.sh", "test_output.txt")


def swebench_log_folder(inputs, root):
    """Every <model>/<instance_id>/report.json below `root`; an instance folder
    (one holding any of SWEBENCH_INSTANCE_FILES) with no report.json is a grading
    error, as SWE-bench counts it: the harness never finished its tests."""
    records = []
    for folder, subfolders, files in os.walk(root):
        subfolders.sort()
        parts = os.path.relpath(folder, root).split(os.sep)
        model = parts[-2] if len(parts) >= 2 else None
        where = os.path.join(folder, "report.json")
        instance = os.path.basename(os.path.abspath(folder))
        if "report.json" in files:
            text = inputs.read_text(where).strip()
            if not text:
                records.append(verdict_record(None, "error (empty report.json)", where,
                                              model=model, instance_id=instance))
                continue
            try:
                data = json.loads(text)
            except ValueError as exc:
                raise InputError(f"{where}: not valid JSON ({exc})") from None
            if not isinstance(data, dict):
                raise InputError(f"{where}: expected {{instance_id: {{resolved: ...}}}}")
            records += report_json_records(data, where, instance, model)
        elif any(name in files for name in SWEBENCH_INSTANCE_FILES):
            records.append(verdict_record(None, "error (no report.json)", folder,
                                          model=model, instance_id=instance))
    if not records:
        raise InputError(f"{root}: no report.json below this folder (expected "
                         f"<model>/<instance_id>/report.json, as in "
                         f"logs/run_evaluation/<run_id>/)")
    return {"name": root, "format": "SWE-bench logs/run_evaluation folder",
            "records": records}


# --- verdicts: OpenHands output.swebench_eval.jsonl ---
def openhands_report(record):
    """The eval report of one OpenHands line (test_result.report, or report), or None."""
    test_result = record.get("test_result")
    report = test_result.get("report") if isinstance(test_result, dict) else None
    report = record.get("report") if report is None else report
    return report if isinstance(report, dict) and "resolved" in report else None


def openhands_eval_lines(text):
    """True when the first line is an OpenHands eval record."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        record = json.loads(first)
    except ValueError:
        return False
    return isinstance(record, dict) and "instance_id" in record and bool(openhands_report(record))


def openhands_eval(text, name):
    """Records from output.swebench_eval.jsonl: resolved, empty_generation and
    failed_apply_patch are the agent's; error_eval and test_timeout the grader's."""
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{name} line {number}"
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise InputError(f"{where}: not valid JSON ({exc})") from None
        report = openhands_report(record) if isinstance(record, dict) else None
        if report is None or not isinstance(record.get("instance_id"), str):
            raise InputError(f"{where}: expected instance_id and test_result.report.resolved")
        if report.get("resolved") is True:
            verified, status = True, "resolved"
        elif report.get("empty_generation"):
            verified, status = False, "empty_patch"
        elif report.get("failed_apply_patch"):
            verified, status = False, "patch_failed"
        elif report.get("error_eval") or report.get("test_timeout"):
            verified = None
            status = "error_eval" if report.get("error_eval") else "test_timeout"
        else:
            verified, status = False, "unresolved"
        metadata = record.get("metadata")
        llm = metadata.get("llm_config") if isinstance(metadata, dict) else None
        model = llm.get("model") if isinstance(llm, dict) else None
        records.append(verdict_record(verified, status, where, model=model,
                                      instance_id=record["instance_id"]))
    return {"name": name, "format": "OpenHands output.swebench_eval.jsonl",
            "records": records}


# --- verdicts: regrade.py verdicts.csv / verdicts.jsonl (and any verdicts table) ---
def verdict_table(table, outcome=None):
    """Records from a table with a run id or instance id and an outcome column; an
    empty outcome is regrade.py's mark of a grading error, counted by its status."""
    run_col = table.column(None, candidates=VERDICT_RUN_ID_COLUMNS, required=False)
    instance_col = table.column(None, candidates=VERDICT_INSTANCE_COLUMNS, required=False)
    outcome_col = (table.column(outcome, flag="--outcome") if outcome else
                   table.column(None, candidates=VERDICT_OUTCOME_COLUMNS, required=False))
    if outcome_col is None or not (run_col or instance_col):
        raise InputError(f"{table.name}: not a verdict file this script knows (it reads "
                         f"{VERDICT_FORMATS}); a verdicts table needs a run_id or "
                         f"instance_id column and a completed column; columns are "
                         f"{', '.join(table.columns)}")
    model_col = table.column(None, candidates=VERDICT_MODEL_COLUMNS, required=False)
    status_col = table.column(None, candidates=("status",), required=False)
    records = []
    for i, row in enumerate(table.rows):
        cell = row[outcome_col]
        verified = None if is_missing(cell) else parse_bool(cell, table.where(i, outcome_col))
        status = row[status_col].strip() if status_col else ""
        status = status or (f"no verdict (empty {outcome_col!r})" if verified is None
                            else ("resolved" if verified else "unresolved"))
        records.append(verdict_record(
            verified, status, table.where(i),
            run_id=row[run_col].strip() if run_col else None,
            model=row[model_col].strip() if model_col else None,
            instance_id=row[instance_col].strip() if instance_col else None))
    form = "regrade.py verdicts" if run_col and status_col else "verdicts table"
    return {"name": table.name, "format": form, "records": records}


# --- verdicts: the join ---
def set_aside(column, pairs):
    """A runs table's own outcome column beside --verdicts: set aside (the verdicts
    win), compared on the runs both define. `pairs`: (the table's value, the verdict's)
    per run, None where undefined.

    >>> set_aside("verified", [(True, False), (None, True), (True, True)])["disagree"]
    1
    """
    both = [(a, b) for a, b in pairs if a is not None and b is not None]
    return {"column": column, "runs_compared": len(both),
            "disagree": sum(a != b for a, b in both), "winner": "--verdicts"}


def set_aside_text(record):
    """What the report says of a column set aside (after 'the runs table's', say)."""
    return (f"own column {record['column']!r} is set aside: --verdicts wins; the two "
            f"disagree on {record['disagree']} of {plural(record['runs_compared'], 'run')} "
            f"both define")


def model_key(model):
    """Models compare as SWE-bench names their log folders: '/' as '__', any case."""
    return model.replace("/", "__").lower() if model else None


def join_verdicts(source, runs, *, runs_table="the runs table", any_model=False):
    """Pair each run with its verdict record: on run id where both sides have one,
    else on (model, instance id), else on instance id alone.

    `runs` are {"run_id" (None where the table has none), "task", "model", and
    optionally "label" (what messages call a run without a run id)} dicts.
    A report that names a model (its records, or SWE-bench's file name) is never
    joined to runs of another model unless `any_model` (--any-model).
    Returns the records in run order and how they were joined; every way this can
    go wrong is an InputError naming the verdict file.
    """
    name, records = source["name"], source["records"]
    if not records:
        raise InputError(f"{name}: it holds no verdicts")
    model_check = check_report_model(source, runs, any_model)
    if all(r["run_id"] for r in records) and all(r["run_id"] for r in runs):
        key, run_key, record_key = "run id", (lambda r: r["run_id"]), (lambda v: v["run_id"])
    else:
        key = instance_join_key(source, runs, runs_table, any_model)
        with_model = key == "model and instance id"
        run_key = (lambda r: (model_key(r["model"]), r["task"]) if with_model else r["task"])
        record_key = (lambda v: (model_key(v["model"]), v["instance_id"]) if with_model
                      else v["instance_id"])
    by_key = {}
    for record in records:
        if key != "run id" and not record["instance_id"]:
            raise InputError(f"{record['where']}: no instance id to join on")
        first = by_key.setdefault(record_key(record), record)
        # incomplete_ids lists every instance of the dataset that had no prediction
        # (SWE-bench's make_run_report): no verdict, so any real one overrides it.
        if first is not record and first["status"] == NOT_SUBMITTED:
            by_key[record_key(record)] = first = record
        if first is not record and record["status"] == NOT_SUBMITTED:
            continue
        if first is not record:
            raise InputError(f"{record['where']}: a second verdict for {key} "
                             f"{join_text(record_key(record))} (the first is at "
                             f"{first['where']}); give one verdict per run"
                             + (", or a model column in the runs table" if key ==
                                "instance id" and record["model"] else ""))
    check_one_run_per_key(source, key, runs, run_key, by_key)
    joined = [by_key.get(run_key(run)) for run in runs]
    if not any(joined):
        raise InputError(f"{name}: no verdict in it matches any run (joined on {key}: the "
                         f"file has e.g. {key_examples(by_key)}; the runs have e.g. "
                         f"{key_examples(run_key(r) for r in runs)}); is it the verdict file "
                         f"for these runs?")
    summary = joined_summary(source, runs, joined, key, len(by_key))
    summary["model_check"] = model_check
    return summary


def report_model_from_name(hint, runs):
    """The model of a SWE-bench run report from its name <model>.<run_id>.json: the
    runs' model it starts with, else the part before the first dot (a guess, since
    model names may hold dots)."""
    names = sorted({r["model"] for r in runs if r.get("model")}, key=lambda m: -len(model_key(m)))
    matched = next((m for m in names if hint.lower().startswith(model_key(m) + ".")), None)
    return matched or hint.split(".")[0]


def model_in_run_id(run_id, runs):
    """The runs' model an sb-cli run id names (its last path part, as a word of the
    run id, e.g. calc-eval-model-a names model-a), or None."""
    names = sorted({r["model"] for r in runs if r.get("model")}, key=lambda m: -len(model_key(m)))
    for model in names:
        word = re.escape(model_key(model).split("__")[-1])
        if re.search(rf"(?<![a-z0-9]){word}(?![a-z0-9])", run_id.lower()):
            return model
    return None


def models_named_by_names(source, runs):
    """Give each record without a model the model its file's name gives: SWE-bench's
    <model>.<run_id>.json, or a runs' model an sb-cli run id names. Returns
    {model: (how the report names it, how it names several)}."""
    said = {}
    for record in source["records"]:
        if record["model"]:
            said.setdefault(record["model"], (repr(record["model"]), ""))
            continue
        hint = record.get("model_hint", source.get("model_hint"))
        run_id = record.get("run_hint", source.get("run_hint"))
        if hint:
            record["model"] = report_model_from_name(hint, runs)
            said.setdefault(record["model"], (f"{record['model']!r} (from its file name "
                                              f"{hint})", " (from their file names)"))
        elif run_id and model_in_run_id(run_id, runs):
            record["model"] = model_in_run_id(run_id, runs)
            said.setdefault(record["model"], (f"{record['model']!r} (named by sb-cli run "
                                              f"id {run_id!r})", " (named by sb-cli run ids)"))
    return said


def check_report_model(source, runs, any_model):
    """Refuse a report of another model; return what the report says of the check.

    Where the report names its models (records with a model, a SWE-bench file name,
    an sb-cli run id holding a runs' model) and every run names one, a run whose
    model the report does not grade is an error naming both, unless `any_model`.
    Where either side names none, the join goes ahead on instance id, and the
    returned text says what was not checked.
    """
    said = models_named_by_names(source, runs)
    graded = {model_key(m) for m in said}
    if len(said) == 1:
        shown = "model " + next(iter(said.values()))[0]
    else:
        hows = {how for _, how in said.values()}
        shown = ("models " + ", ".join(repr(m) for m in sorted(said)[:5])
                 + (", ..." if len(said) > 5 else "") + (hows.pop() if len(hows) == 1 else ""))
    if not graded:
        run_ids = sorted({r.get("run_hint") or source.get("run_hint") or ""
                          for r in source["records"]} - {""})
        return ("not checked: the report names no model"
                + (f" (sb-cli run id {', '.join(map(repr, run_ids[:3]))})" if run_ids else ""))
    if not (runs and all(r.get("model") for r in runs)):
        return (f"not checked: the report grades {shown}, but the runs name no model "
                f"(add a model column to check it)")
    others = sorted({r["model"] for r in runs if model_key(r["model"]) not in graded})
    if not others:
        return f"the report grades {shown}, the runs' model" + ("s" if len(said) > 1 else "")
    if any_model:
        return (f"not checked (--any-model): the report grades {shown}; the runs are of "
                f"{', '.join(repr(m) for m in others[:5])}")
    count = sum(model_key(r["model"]) not in graded for r in runs)
    raise InputError(f"{source['name']}: the report grades {shown}, but {count} of "
                     f"{plural_text(runs, 'run')} are of model "
                     f"{', '.join(repr(m) for m in others[:5])}: a report of another model "
                     f"is not joined to them; give the report of these runs, or --any-model "
                     f"to join on instance id alone")


def plural_text(items, word):
    """'1 run', '3 runs'."""
    return f"{len(items)} {word}" + ("" if len(items) == 1 else "s")


def key_examples(keys, count=3):
    """A few join keys, to show in an error."""
    return ", ".join(sorted({join_text(k, quote=False) for k in keys})[:count])


def instance_join_key(source, runs, runs_table, any_model=False):
    """'model and instance id' or 'instance id': the key when run ids do not join."""
    name, records = source["name"], source["records"]
    if not any(r["instance_id"] for r in records):
        raise InputError(f"{name}: its verdicts are keyed by run id, but {runs_table} has no "
                         f"run id column (looked for {', '.join(VERDICT_RUN_ID_COLUMNS)}; "
                         f"name it with --run-id)")
    if not all(r["task"] for r in runs):
        raise InputError(f"{name}: its verdicts are keyed by instance id, but {runs_table} "
                         f"has no task column to join on (looked for "
                         f"{', '.join(VERDICT_INSTANCE_COLUMNS)}; name it with --task)")
    if not any_model and all(r["model"] for r in runs) and all(r["model"] for r in records):
        return "model and instance id"
    return "instance id"


def run_label(run):
    """How messages name a run: its run id, else the label the script gave it."""
    return run["run_id"] or run.get("label") or run["task"]


def join_text(value, quote=True):
    show = repr if quote else str
    return (f"model {show(value[0])} and instance {show(value[1])}"
            if isinstance(value, tuple) else show(value))


def check_one_run_per_key(source, key, runs, run_key, by_key):
    """Several runs on one verdict key is an error that says how to resolve it."""
    runs_of = {}
    for run in runs:
        runs_of.setdefault(run_key(run), []).append(run_label(run))
    for value, ids in sorted(runs_of.items(), key=lambda kv: str(kv[0])):
        if len(ids) > 1 and value in by_key:
            shown = ", ".join(sorted(ids)[:5]) + (", ..." if len(ids) > 5 else "")
            raise InputError(
                f"{source['name']}: its verdicts are keyed by {key}, but {len(ids)} runs "
                f"({shown}) are {join_text(value)}, so which verdict is whose cannot be "
                f"told; grade each run (regrade.py writes a run_id per run into "
                f"verdicts.csv){model_remedy(source, key, runs)}")


def model_remedy(source, key, runs):
    """The second way out of an instance-keyed join: name the models."""
    if key != "instance id":
        return ""
    runs_named = all(r["model"] for r in runs)
    if source.get("model_hint"):
        return ("; a SWE-bench run report is read as the model in its file name "
                "<model>.<run_id>.json ('/' as '__')" + (
                    ", and that name matches none of the runs' models" if runs_named else
                    ", so add a model column (model or model_name_or_path) to the runs table"))
    if not any(r["model"] for r in source["records"]):
        return ("; this file names no model, so audit one run per instance against it "
                "(e.g. one model's runs)")
    if not runs_named:
        return (", or add a model column (model or model_name_or_path) to the runs table "
                "matching the verdicts' models")
    return ""


# A harness run whose diff is empty, absent from the grader's files: graders skip it,
# and SWE-bench's run report counts it as an empty patch, failed; so is it here.
EMPTY_UNGRADED = "empty_patch (not in the verdicts: an empty diff is not graded)"


def joined_summary(source, runs, joined, key, n_keys):
    """The checks after a join, and what the report says about it."""
    name = source["name"]
    joined = [v if v is not None or not r.get("empty_diff") else verdict_record(
        False, EMPTY_UNGRADED, name, run_id=r["run_id"], model=r.get("model"),
        instance_id=r["task"]) for r, v in zip(runs, joined)]
    missing = sorted(run_label(r) for r, v in zip(runs, joined) if v is None)
    if missing:
        raise InputError(f"{name}: no verdict for {len(missing)} "
                         f"run{'' if len(missing) == 1 else 's'}: "
                         f"{', '.join(missing[:10])}{' ...' if len(missing) > 10 else ''} "
                         f"(joined on {key}); grade them, or leave them out of the runs table")
    unchecked = {}
    for run, verdict in zip(runs, joined):
        if verdict["verified"] is None:
            unchecked.setdefault(verdict["status"], []).append(run_label(run))
    unchecked = {status: sorted(ids) for status, ids in sorted(unchecked.items())}
    if all(v["verified"] is None for v in joined):
        raise InputError(f"{name}: no run has a verified outcome: every verdict is a grading "
                         f"error ({grading_error_text(unchecked)})")
    ungraded = sorted(run_label(r) for r, v in zip(runs, joined) if v["status"] == EMPTY_UNGRADED)
    return {"verdicts": joined, "key": key, "format": source["format"], "name": name,
            "unchecked": unchecked, "not_in_runs": n_keys - len({id(v) for v in joined}),
            "empty_ungraded": ungraded,
            "empty_ungraded_note": (
                f"{plural(len(ungraded), 'run')} with an empty diff, not in the verdicts, "
                f"counted failed (empty_patch, as SWE-bench counts an empty patch): "
                f"{', '.join(ungraded[:5])}{' ...' if len(ungraded) > 5 else ''}")
            if ungraded else None}


def grading_error_text(unchecked, limit=5):
    """'error 2: r1, r7; timeout 1: r3' for the report and the error messages.

    >>> grading_error_text({"error": ["r1", "r7"], "test_patch_failed": ["r3"]})
    'error 2: r1, r7; test_patch_failed 1: r3'
    """
    return "; ".join(f"{status} {len(ids)}: {', '.join(ids[:limit])}"
                     + (", ..." if len(ids) > limit else "")
                     for status, ids in unchecked.items())


# ---- command line ----
class Parser(argparse.ArgumentParser):
    """argparse with one-line errors that exit 2 through InputError."""

    def __init__(self, doc, **kwargs):
        super().__init__(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter,
                         **kwargs)

    def error(self, message):
        raise InputError(message)


def add_common_options(parser, version, script_path, seed=None):
    """--format, --seed (when the script draws random numbers), --manifest and
    --version."""
    parser.add_argument("--format", choices=("text", "markdown", "json"), default="text",
                        help="output format (default: text)")
    parser.add_argument("--manifest", metavar="FILE",
                        help="also write the footer's manifest of the inputs to FILE (sha256 "
                             "and path per line, sorted; check with sha256sum -c FILE)")
    if seed is not None:
        parser.add_argument("--seed", type=int, default=seed,
                            help=f"seed for resampling and shuffles (default: {seed})")
    parser.add_argument("--version", action="version",
                        version=version_text(version, script_path))



def add_agent_options(parser):
    """--task-map and --write-runs: the options for agent output (harness folders), the
    same in all three scripts."""
    parser.add_argument("--task-map", metavar="FILE", help="session id or file -> task id "
                        "(columns session_id,task_id) for transcripts that name no task")
    parser.add_argument("--write-runs", metavar="DIR", help="write the runs.csv, tool_calls.csv "
                        "and predictions.jsonl derived from agent output to DIR")

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

# ---- agent output (harness folders) ----
# A runs input may be what an agent harness wrote (see "Reading harness folders"
# in the manual). Each format's section turns one record into a run dict; the
# common part below derives the flat tables. Times are integer microseconds.
import datetime
import re

HARNESS_MANUAL = """
Reading harness folders (agent output as the runs input; all three scripts)
    RUNS may be the folder (or one file) an agent harness wrote. Files are
    recognised by content, in sorted path order, anywhere under the folder:
{formats}
    Claude Code and Codex name no task. Where the first prompt names exactly one
    SWE-bench instance id (owner__repo-123), that is the task; else each session
    is its own task (its run id). The report says which, and how many; give
    --task-map FILE (session_id or file -> task_id), or a runs.csv in the folder,
    to group sessions into tasks. A runs.csv in the folder is joined on run id:
    it fills cells the harness left blank (task_id, claimed, model) and adds its
    other columns (e.g. raters); a cell that disagrees, or a row that matches no
    run, is an error.
    The harness's own claim (column submitted) is how it recorded the run's end:
    yes when the agent itself chose to stop and submit (or finish), no when the
    harness stopped it (a cost, turn, time, context or format limit, an
    autosubmission after one, a crash), blank where it records no ending. It is
    a different, weaker claim than the seed report's, a blind rating of the
    final message: submitting says "I stop here", not "it works". What each
    harness records:
{submissions}
    The claimed column is never guessed: blank unless the runs table beside the
    output (or raters) states one.
    Run id: instance@model (the instance alone with no model; the session id for
    Claude Code and Codex), then #2, #3 in path order, passing over an id a run
    already holds, as regrade.py names runs.
    Tool categories (first match wins):
      edit    SWE-agent str_replace_editor create/str_replace/insert/undo_edit,
              edit, create, insert; OpenHands edit (but view), write; Claude Edit,
              MultiEdit, Write, NotebookEdit; Codex apply_patch
      read    str_replace_editor view, open, goto, scroll_*; OpenHands read;
              Claude Read, NotebookRead, LS
      search  search_dir, search_file, find_file; Claude Glob, Grep
      other   any other named tool (submit, think, browse, Task, TodoWrite, ...)
    Shell commands (SWE-agent's plain commands, mini-swe-agent, OpenHands run and
    the !lines of run_ipython, Claude Bash, Codex shell) are parsed, not
    searched: a command line splits at |, &&, ||, ;, & and newlines into simple
    commands, and the commands inside $(...), `...` and <(...) count too;
    quotes are removed and heredoc bodies skipped (text is not a command).
    Leading VAR=1 assignments and if/then/do/{ ... are dropped; the wrappers
    sudo, env, timeout, nice, nohup, time, command, exec, xargs, stdbuf, npx and
    uv/poetry/pipenv/pdm/hatch run give way to the command they run (their own
    options skipped); bash/sh -c STRING is STRING parsed; python -m MODULE is
    MODULE and python SCRIPT is SCRIPT's file name. Each program (by its file
    name) takes the first row of this table that holds ("given a file": an
    operand besides grep's pattern or sed's script, or < FILE; grep -r searches
    the folder; "goal test": test or :test among its goals or tasks; "inline
    code writes": the program it runs from -c/-e CODE or from a heredoc on its
    stdin (python - <<EOF) opens a file for writing (open(f, "w"), "a", "x",
    "+"), calls write_text, write_bytes, shutil.copy/move, os.replace/rename,
    Perl's open to >, Node's writeFile or Ruby's File.write; else it is bash):
{shell rules}
    The command's category is the first of test, edit, search, read that any
    of its simple commands has; anything else is bash. So git add, git commit
    (its message a $(cat <<EOF ...) heredoc or not), pip install, python
    setup.py and a grep filtering a pipe are bash, and cat <<EOF > f.py is an
    edit (the redirect), not a read.
    Calls that did not run (counted apart, never as edits or reads):
      attempted_calls  every call the agent asked for; failed_calls those the
          harness refused or whose tool reported it did nothing; tool_calls =
          attempted_calls - failed_calls, and only those have a category and a
          row in tool_calls.csv. Refused or failed, by the harness's own record:
{refusals}      A shell command that ran and exited non-zero ran: a failing test run is
      still a test run.
    Token totals come from the harness's final record where there is one;
    tokens_source names it:
{tokens}
    Process measures (blank = undefined):
      tool_calls, <category>_calls  calls per category; turns = model responses;
          a call lasts from its own timestamp to its result's
      orient/impl/verify_seconds  run start to the first edit's start / to the
          last edit's end (start + its duration) / to the run's last timestamp
      orient/impl/verify_tokens  tokens of the model turns before the first
          edit's turn / from it to the last edit's turn / after it (needs every
          turn's usage)
      ran_tests_after_last_edit  1 if a test call follows the last edit, else 0
      All of these phase measures are undefined where the run never edited.
      tokens_total = tokens_in + tokens_out; cost_usd as the harness reports it.
    --write-runs DIR writes runs.csv, tool_calls.csv and predictions.jsonl
    (run_id, instance_id, model_name_or_path, model_patch): auditing DIR gives
    the same figures as auditing the folder.
"""


# --- agent output: run records, fields and timestamps ---
RUN_COLUMNS = ("run_id", "task_id", "model", "format", "exit_status", "claimed",
               "submitted", "final_message", "cost_usd", "tokens_in", "tokens_out", "tokens_total",
               "tokens_source", "turns", "tool_calls", "read_calls", "edit_calls",
               "search_calls", "bash_calls", "test_calls", "other_calls", "attempted_calls",
               "failed_calls", "orient_seconds", "impl_seconds",
               "verify_seconds", "orient_tokens", "impl_tokens", "verify_tokens",
               "ran_tests_after_last_edit")
TOOL_CALL_COLUMNS = ("run_id", "seq", "tool", "category", "timestamp", "seconds")
CATEGORIES = ("read", "edit", "search", "bash", "test", "other")
TASK_COLUMNS_ANY = ("task_id", "instance_id", "task")
# auc_audit.py's default family on a derived runs table (tool_calls is the baseline).
PROCESS_MEASURES = ("read_calls", "edit_calls", "search_calls", "bash_calls", "test_calls",
                    "other_calls", "orient_seconds", "impl_seconds", "verify_seconds",
                    "orient_tokens", "impl_tokens", "verify_tokens",
                    "ran_tests_after_last_edit", "turns", "tokens_total", "cost_usd")
EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()
_INSTANT = re.compile(r"(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:\.(\d+))?"
                      r"(Z|[+-]\d\d:?\d\d)?$")


def instant_us(value, where):
    """An ISO 8601 time (naive = UTC) or epoch seconds, as integer microseconds.

    >>> instant_us("1970-01-01T00:00:01.5Z", "x"), instant_us(2.25, "x")
    (1500000, 2250000)
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return round(value * 1000000)
    match = _INSTANT.match(str(value).strip())
    if not match:
        raise InputError(f"{where}: expected an ISO 8601 timestamp, got {value!r}")
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    try:
        days = datetime.date(year, month, day).toordinal() - EPOCH_ORDINAL
    except ValueError:
        raise InputError(f"{where}: no such date in {value!r}") from None
    offset = 0
    if match.group(8) and match.group(8) != "Z":
        zone = match.group(8).replace(":", "")
        offset = (1 if zone[0] == "+" else -1) * (int(zone[1:3]) * 3600 + int(zone[3:5]) * 60)
    micro = int((match.group(7) or "0")[:6].ljust(6, "0"))
    return ((days * 86400 + hour * 3600 + minute * 60 + second - offset) * 1000000 + micro)


def seconds_text(micro):
    """Microseconds as seconds without float noise; None as a blank cell.

    >>> seconds_text(1500000), seconds_text(20000000), seconds_text(-250), seconds_text(None)
    ('1.5', '20', '-0.00025', '')
    """
    if micro is None:
        return ""
    text = f"{abs(micro) // 1000000}.{abs(micro) % 1000000:06d}".rstrip("0").rstrip(".")
    return ("-" if micro < 0 else "") + text


def get_field(record, path, where, types=None, required=True):
    """record['a']['b'] for path 'a.b'; an error naming the field when it is required."""
    value = record
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    if value is None:
        if required:
            raise InputError(f"{where}: no field {path!r}")
        return None
    if types and not isinstance(value, types):
        wanted = {list: "a list", dict: "an object", str: "text"}.get(types, "a number")
        raise InputError(f"{where}, field {path!r}: expected {wanted}, "
                         f"got {type(value).__name__}")
    return value


def read_json_record(inputs, path):
    """A JSON file holding one object."""
    try:
        data = json.loads(inputs.read_text(path))
    except ValueError as exc:
        raise InputError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object")
    return data


def read_jsonl_records(inputs, path, *, text=None, cut_tail=False):
    """[(line number, object)] of a JSONL file (or of its `text`, already read); a truncated
    line is an error. With cut_tail, the rule of a record file that writers append to
    (regrade.py's RecordFile): a record counts only once its line ends in a newline, so a
    last line without one (a writer stopped mid-line: a record not yet written, even if
    what was written parses) is left out, with a warning."""
    text = inputs.read_text(path) if text is None else text
    lines, records = text.splitlines(), []
    for number, line in enumerate(lines, 1):
        if cut_tail and number == len(lines) and not text.endswith("\n"):
            sys.stderr.write(f"warning: {path}: its last line has no newline (a writer "
                             f"stopped mid-line): not a record yet; skipped\n")
            continue
        if line.strip():
            try:
                record = json.loads(line)
            except ValueError as exc:
                raise InputError(f"{path} line {number}: not valid JSON ({exc})") from None
            if not isinstance(record, dict):
                raise InputError(f"{path} line {number}: expected a JSON object")
            records.append((number, record))
    return records


def new_run(fmt, where, **fields):
    """A run record with every field a reader may leave unknown (None)."""
    run = {"format": fmt, "where": where, "task_id": None, "model": None, "session": None,
           "exit_status": None, "claimed": None, "final_message": None, "cost_usd": None,
           "tokens_in": None, "tokens_out": None, "tokens_source": None, "turns": None,
           "calls": [], "turn_tokens": None, "start": None, "end": None,
           "first_prompt": None}
    run.update(fields)
    return run


def add_call(run, tool, category, start=None, seconds=None, stamp="", turn=0, failed=False):
    """Append one tool call (start and seconds in microseconds) and return it; a call
    the harness refused, or whose tool did nothing, is `failed` (see the manual)."""
    call = {"tool": tool, "category": category, "start": start, "seconds": seconds,
            "timestamp": "" if stamp is None else str(stamp), "turn": turn, "failed": failed}
    run["calls"].append(call)
    return call


def widen_span(run, micro):
    """Stretch the run's first and last timestamps to cover `micro`."""
    if micro is not None:
        run["start"] = micro if run["start"] is None else min(run["start"], micro)
        run["end"] = micro if run["end"] is None else max(run["end"], micro)


def text_of(content):
    """The text of a message's content: a string, or the text of its blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content
                         if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def total(*values):
    """The sum, or None when any part is unknown (or there is none).

    >>> total(1, 2), total(1, None), total()
    (3, None, None)
    """
    return None if not values or any(v is None for v in values) else sum(values)


def count_tokens(run, tokens_in, tokens_out):
    """Add one model turn's tokens; an unknown part makes the run's totals unknown."""
    first = not run["turn_tokens"]
    run["turn_tokens"].append(total(tokens_in, tokens_out))
    run["tokens_in"] = tokens_in if first else total(run["tokens_in"], tokens_in)
    run["tokens_out"] = tokens_out if first else total(run["tokens_out"], tokens_out)


# --- agent output: shell commands ---
# A shell command is parsed into its simple commands (pipes, &&, ||, ;, newlines,
# $(...), backticks, <(...), heredoc bodies skipped), wrappers are unwrapped, and each
# program is looked up in SHELL_RULES; the command's category is the first of
# SHELL_ORDER any of its simple commands has.
SHELL_RULES = (   # (category, programs, when): the first row that matches; --help prints it
    ("test", "pytest py.test tox nox unittest runtests.py", "always"),
    ("test", "manage.py go cargo make npm yarn pnpm", "subcommand test"),
    ("test", "mvn mvnw gradle gradlew", "goal test"),
    ("edit", "sed perl", "option -i"),
    ("edit", "python perl node ruby", "inline code writes"),
    ("edit", "patch apply_patch", "always"),
    ("edit", "git", "subcommand apply"),
    ("edit", "tee", "given a file"),
    ("edit", "any program, into a path with . or / (not /dev/)", "redirect > or >>"),
    ("search", "rg ag ack find fd locate", "always"),
    ("search", "grep egrep fgrep", "given a file"),
    ("search", "git", "subcommand grep"),
    ("read", "ls tree", "always"),
    ("read", "cat head tail less more nl wc tac sed", "given a file"),
)
SHELL_ORDER = ("test", "edit", "search", "read", "bash")
SHELL_WRAPPERS = {   # program: its options that take a value; the command follows them
    "sudo": "-u -g -C -D -h -p -r -t -U", "env": "-u -C -S", "timeout": "-s -k",
    "nice": "-n", "nohup": "", "time": "", "command": "", "exec": "-a", "xargs":
    "-n -I -P -L -d -s -a -E", "stdbuf": "-i -o -e", "npx": "-p", "uv": "", "poetry": "",
    "pipenv": "", "pdm": "", "hatch": ""}
SHELL_RUNNERS = frozenset({"uv", "poetry", "pipenv", "pdm", "hatch"})   # X run CMD
SHELL_VALUE_OPTIONS = {"grep": "-e -f -m -A -B -C -d -D", "head": "-n -c", "tail": "-n -c",
                       "sed": "-e -f -l", "make": "-C -f -I -o -W", "git": "-C -c",
                       "python": "-W -X -Q", "find": "",
                       "mvn": "-f -s -gs -pl -rf -P -T -b -l -t",
                       "gradle": "-p -b -c -g -x -I --exclude-task --project-dir"}
SHELL_RESERVED = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while",
                            "until", "for", "in", "case", "esac", "{", "}", "!", "function",
                            "select", "[[", "]]"})
_REDIRECT = re.compile(r"<<<|<<-|<<|>>|>&|<&|>\||<>|&>>|&>|>|<")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_PYTHON = re.compile(r"(?:python|pypy)[\d.]*$")
_FILE_TARGET = re.compile(r"[\w.~+-]*[./][\w.~/+-]*")
# What an inline program (-c/-e CODE, or a heredoc on its stdin) does that writes a
# file: Python's open(..., "w"/"a"/"x") and write_text/write_bytes, shutil's copies and
# moves, os.replace/rename; Perl's open to > or >>; Node's fs writes; Ruby's File.write.
_INLINE_WRITES = re.compile(
    r"""\bopen\s*\([^()]*(?:\([^()]*\)[^()]*)*,\s*(?:mode\s*=\s*)?['"][rbt]*[wax+]"""
    r"""|\.open\(\s*(?:mode\s*=\s*)?['"][rbt]*[wax+]|\.write_(?:text|bytes)\s*\("""
    r"""|\bshutil\.(?:copy\w*|move)\s*\(|\bos\.(?:replace|rename)\s*\("""
    r"""|\bopen\s*\(?\s*(?:my\s+)?[$\w]+\s*,\s*['"]?\+?>"""
    r"""|\b(?:writeFile|appendFile|copyFile|rename)(?:Sync)?\s*\(|\bcreateWriteStream\s*\("""
    r"""|\bFile\.(?:write|open\s*\([^)]*['"][wa])""")
INLINE_CODE_OPTIONS = {"python": ("-c",), "perl": ("-e", "-E"), "node": ("-e", "--eval", "-p"),
                       "ruby": ("-e",)}


def inline_code(program, args, redirects):
    """The program text an interpreter runs from its command line (-c/-e CODE) or from
    a heredoc on its stdin (python - <<EOF, perl <<EOF), else ''."""
    options = INLINE_CODE_OPTIONS.get(program, ())
    for i, arg in enumerate(args):
        if arg in options and i + 1 < len(args):
            return args[i + 1]
    if not args or args[0] == "-" or all(a.startswith("-") for a in args):
        return "\n".join(target for op, target in redirects if op == "<<body")
    return ''


def shell_rules_text():
    """SHELL_RULES as the manual's table: category, when, programs."""
    return "\n".join(f"      {category:<8}{when:<20}{programs}"
                     for category, programs, when in SHELL_RULES)


HARNESS_MANUAL = HARNESS_MANUAL.replace("{shell rules}", shell_rules_text())


def shell_commands(text):
    """The simple commands of a shell command line: (words, redirects, piped), piped
    when the command reads the one before it through a pipe.

    Quotes are removed from words; a substitution's commands are listed before the
    command that holds it; heredoc bodies are not parsed, but kept as a '<<body'
    redirect of the command that opened them.

    >>> for command in shell_commands("cd r && git commit -m \\"$(cat <<'EOF'\\n"
    ...                               "fix (x)\\nEOF\\n)\\" | tee log"):
    ...     print(command)
    (['cd', 'r'], [], False)
    (['cat'], [('<<', 'EOF'), ('<<body', 'fix (x)')], False)
    (['git', 'commit', '-m', '$(...)'], [], False)
    (['tee', 'log'], [], True)
    """
    out = []
    _shell_parse(text, 0, out, None)
    return out


def _shell_parse(text, pos, out, closer):
    """Parse from `pos` to `closer` (')' or '`', or the end); return the position after it."""
    state = {"words": [], "redirects": [], "word": [], "started": False, "redirect": None,
             "heredocs": [], "piped": False}

    def end_word():
        if state["started"]:
            word = "".join(state["word"])
            if state["redirect"]:
                state["redirects"].append((state["redirect"], word))
                if state["redirect"] in ("<<", "<<-"):
                    state["heredocs"].append((word, state["redirect"] == "<<-",
                                              state["redirects"]))
                state["redirect"] = None
            else:
                state["words"].append(word)
        state["word"], state["started"] = [], False

    def end_command(piped_next=False):
        end_word()
        if state["words"] or state["redirects"]:
            out.append((state["words"], state["redirects"], state["piped"]))
        state["words"], state["redirects"], state["piped"] = [], [], piped_next

    def add(text_part):
        state["word"].append(text_part)
        state["started"] = True
    n = len(text)
    while pos < n:
        c = text[pos]
        if c == closer:
            end_command()
            return pos + 1
        if c == "\\":
            if text.startswith("\\\n", pos):
                pos += 2
                continue
            add(text[pos + 1:pos + 2])
            pos += 2
        elif c == "'":
            end = text.find("'", pos + 1)
            end = n if end < 0 else end
            add(text[pos + 1:end])
            pos = end + 1
        elif c == '"':
            pos = _shell_double_quoted(text, pos + 1, out, add)
        elif text.startswith("$((", pos):
            pos = _shell_skip_nested(text, pos + 3, "((", "))")
            add("$((...))")
        elif text.startswith("$(", pos) or (c in "<>" and text.startswith("(", pos + 1)):
            pos = _shell_parse(text, pos + 2, out, ")")
            add("$(...)")
        elif text.startswith("${", pos):
            pos = _shell_skip_nested(text, pos + 2, "{", "}")
            add("${...}")
        elif c == "`":
            pos = _shell_parse(text, pos + 1, out, "`")
            add("`...`")
        elif c == "#" and not state["started"]:
            end = text.find("\n", pos)
            pos = n if end < 0 else end
        elif c in " \t\r":
            end_word()
            pos += 1
        elif c == "\n":
            end_command()
            pos = _shell_skip_heredocs(text, pos + 1, state["heredocs"])
            state["heredocs"] = []
        elif c in "<>" or text.startswith("&>", pos):
            if state["started"] and "".join(state["word"]).isdigit():
                state["word"], state["started"] = [], False      # a file descriptor
            else:
                end_word()
            operator = _REDIRECT.match(text, pos).group()
            state["redirect"] = operator
            pos += len(operator)
        elif c in ";&|()":
            operator = text[pos:pos + 2] if text[pos:pos + 2] in ("&&", "||", ";;", "|&") \
                else c
            end_command(piped_next=operator in ("|", "|&"))
            pos += len(operator)
        else:
            add(c)
            pos += 1
    end_command()
    return pos


def _shell_double_quoted(text, pos, out, add):
    """The rest of a double-quoted word from `pos`; substitutions in it are parsed."""
    add("")
    n = len(text)
    while pos < n and text[pos] != '"':
        if text[pos] == "\\" and pos + 1 < n:
            add(text[pos + 1] if text[pos + 1] in '"\\$`\n' else text[pos:pos + 2])
            pos += 2
        elif text.startswith("$((", pos):
            pos = _shell_skip_nested(text, pos + 3, "((", "))")
            add("$((...))")
        elif text.startswith("$(", pos):
            pos = _shell_parse(text, pos + 2, out, ")")
            add("$(...)")
        elif text[pos] == "`":
            pos = _shell_parse(text, pos + 1, out, "`")
            add("`...`")
        else:
            add(text[pos])
            pos += 1
    return pos + 1


def _shell_skip_nested(text, pos, opener, closer):
    """The position after the `closer` that matches an `opener` just before `pos`."""
    depth = 1
    while pos < len(text) and depth:
        if text.startswith(closer, pos):
            depth -= 1
            pos += len(closer)
        elif text.startswith(opener, pos):
            depth += 1
            pos += len(opener)
        else:
            pos += 1
    return pos


def _shell_skip_heredocs(text, pos, heredocs):
    """Skip the bodies of the heredocs opened on the line that just ended; each body is
    kept as a ('<<body', text) redirect of its command (an interpreter's program)."""
    for delimiter, strip_tabs, redirects in heredocs:
        body = []
        while pos < len(text):
            end = text.find("\n", pos)
            end = len(text) if end < 0 else end
            line = text[pos:end]
            pos = end + 1
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                break
            body.append(line)
        redirects.append(("<<body", "\n".join(body)))
    return pos


def shell_program(words):
    """(program, its arguments, command strings it runs) once wrappers are unwrapped."""
    nested = []
    while True:
        while words and (words[0] in SHELL_RESERVED or _ASSIGNMENT.match(words[0])):
            words = words[1:]
        if not words:
            return None, [], nested
        program, args = os.path.basename(words[0]), words[1:]
        if program in SHELL_WRAPPERS:
            if program in SHELL_RUNNERS:
                if not args or args[0] != "run":
                    return program, args, nested
                args = args[1:]
            args = shell_positional(args, SHELL_WRAPPERS[program], stop_at_first=True)
            if program == "timeout" and args:
                args = args[1:]                       # the duration
            words = args
        elif program in ("bash", "sh", "zsh", "dash") and args and \
                args[0].startswith("-") and "c" in args[0]:
            nested.extend(args[1:2])
            return None, [], nested
        elif _PYTHON.match(program):
            args = shell_positional(args, SHELL_VALUE_OPTIONS["python"], stop_at_first=True,
                                    keep={"-m", "-c"})
            if not args or args[0] in ("-c", "-"):
                return "python", args, nested
            if args[0] == "-m":
                words = args[1:]
            else:
                return os.path.basename(args[0]), args[1:], nested
        else:
            return program, args, nested


def shell_positional(args, value_options, stop_at_first=False, keep=()):
    """The arguments that are not options (nor option values); with `stop_at_first`,
    everything from the first non-option on (a wrapped command's own words)."""
    values = set(value_options.split())
    out, i = [], 0
    while i < len(args):
        word = args[i]
        if word in keep:
            return args[i:] if stop_at_first else out + args[i:]
        if word == "--":
            return out + args[i + 1:]
        if word.startswith("-") and len(word) > 1 and not _ASSIGNMENT.match(word):
            i += 2 if word in values else 1
            continue
        if stop_at_first:
            return args[i:]
        out.append(word)
        i += 1
    return out


def shell_rule_holds(when, program, args, redirects):
    """Whether one SHELL_RULES condition holds for a program and its arguments."""
    if when == "always":
        return True
    if when.startswith("subcommand "):
        words = shell_positional(args, SHELL_VALUE_OPTIONS.get(program, ""))
        if program in ("npm", "yarn", "pnpm") and words[:1] in (["run"], ["run-script"]):
            words = words[1:]
        return words[:1] == [when.split()[1]]
    if when == "goal test":                    # mvn clean test, ./gradlew :core:test
        words = shell_positional(args, SHELL_VALUE_OPTIONS.get(program.rstrip("w"), ""))
        return any(w == "test" or w.endswith(":test") for w in words)
    if when == "inline code writes":
        return bool(_INLINE_WRITES.search(inline_code(program, args, redirects)))
    if when == "option -i":
        before = "MmeEIxCdDV0" if program == "perl" else "efl"
        return any(re.match(rf"-[^-{before}]*i", a) or a.startswith("--in-place")
                   for a in args if a.startswith("-"))
    family = "grep" if program in ("grep", "egrep", "fgrep") else program
    words = shell_positional(args, SHELL_VALUE_OPTIONS.get(family, ""))
    if family in ("grep", "sed") and not any(
            a in ("-e", "-f") or a.startswith(("--regexp", "--file", "--expression"))
            for a in args):
        words = words[1:]                              # the pattern or the script
    if family == "grep" and any(a in ("-r", "-R") or a.startswith("--recursive") or
                                (re.match(r"-[a-zA-Z]*[rR]", a) and not a.startswith("--"))
                                for a in args):
        return True
    words = [w for w in words if w != "-" and not w.startswith("/dev/")]
    return bool(words) or any(op == "<" and not t.startswith("/dev/") for op, t in redirects)


def simple_command_category(words, redirects, upstream="bash"):
    """The category of one simple command (a redirect into a file is an edit); a grep
    that filters what a read pipes into it searches those files."""
    program, args, nested = shell_program(words)
    found = [command_category(text) for text in nested]
    if any(op in (">", ">>", ">|", "&>", "&>>") and _FILE_TARGET.fullmatch(target)
           and not target.startswith("/dev/") for op, target in redirects):
        found.append("edit")
    for category, programs, when in SHELL_RULES if program else ():
        if when.startswith("redirect"):
            continue                                   # the redirect test above
        if program in programs.split() and shell_rule_holds(when, program, args, redirects):
            found.append(category)
            break
    if program in ("grep", "egrep", "fgrep") and upstream in ("read", "search"):
        found.append("search")
    return min(found, key=SHELL_ORDER.index, default="bash")


def command_category(command):
    """The category of a shell command: the first in SHELL_ORDER that any of its simple
    commands has, each by SHELL_RULES (else 'bash').

    >>> [command_category(c) for c in ("cd /r && python -m pytest -x", "sed -i 's/a/b/' f.py",
    ...  "cat > calc/ops.py <<'EOF'", "grep -rn clamp .", "cat calc/ops.py", "git diff",
    ...  "python -c 'print(1 > 0)'", "ls 2>&1 >/dev/null", "ps | grep x", "cat f | grep x")]
    ['test', 'edit', 'edit', 'search', 'read', 'bash', 'bash', 'read', 'bash', 'search']
    """
    found, previous = [], "bash"
    for words, redirects, piped in shell_commands(str(command or "")):
        previous = simple_command_category(words, redirects, previous if piped else "bash")
        found.append(previous)
    return min(found, key=SHELL_ORDER.index, default="bash")


# --- agent output: SWE-agent ---
# <out>/<iid>/<iid>.traj: trajectory[] {action, thought, response, execution_time} and
# info {submission, exit_status, model_stats}; <iid>.pred and <out>/preds.json name the model.
SWE_AGENT_TOOLS = {"open": "read", "goto": "read", "scroll_up": "read", "scroll_down": "read",
                   "create": "edit", "edit": "edit", "insert": "edit", "search_dir": "search",
                   "search_file": "search", "find_file": "search", "submit": "other"}
EDITOR_COMMANDS = {"view": "read", "create": "edit", "str_replace": "edit", "insert": "edit",
                   "undo_edit": "edit"}
# The first words of what SWE-agent's editor and file commands print when they change
# or show nothing (its tools' own messages, 0.x and 1.x): the call failed.
SWE_AGENT_NOT_DONE = re.compile(
    r"Usage: |Error: |No file open|File .* not found|File already exists|The path .* "
    r"(?:does not exist|is not an absolute path|is a directory)|Invalid `|No replacement was "
    r"performed|No edit history found|Parameter `\w+` is required|Unrecognized command|Your "
    r"proposed edit has introduced|Your edit was not applied")


def swe_agent_refused(tool, observation):
    """SWE-agent's refusal rule: an editor or file command (not bash) whose observation
    begins with one of its tools' "changed or showed nothing" messages.

    >>> swe_agent_refused("str_replace_editor", "No replacement was performed. ...")
    True
    >>> swe_agent_refused("bash", "Error: no such file"), swe_agent_refused("open", "1 a")
    (False, False)
    """
    return tool != "bash" and bool(SWE_AGENT_NOT_DONE.match(str(observation or "").strip()))


def swe_agent_call(action):
    """(tool, category) of one SWE-agent action.

    >>> swe_agent_call("str_replace_editor view /r/a.py"), swe_agent_call("pytest -x")
    (('str_replace_editor', 'read'), ('bash', 'test'))
    """
    words = action.split()
    if words[0] in ("str_replace_editor", "edit_anthropic"):
        return words[0], EDITOR_COMMANDS.get(words[1] if len(words) > 1 else "", "other")
    if words[0] in SWE_AGENT_TOOLS:
        return words[0], SWE_AGENT_TOOLS[words[0]]
    return "bash", command_category(action)


def model_from_preds(inputs, traj_path, instance_id):
    """model_name_or_path from <iid>.pred beside the trajectory, else from preds.json
    (or an older SWE-agent's all_preds.jsonl) in its folder or the one above."""
    folder = os.path.dirname(traj_path)
    pred = os.path.join(folder, instance_id + ".pred")
    for path in (pred, os.path.join(os.path.dirname(folder), "preds.json"),
                 os.path.join(folder, "preds.json"), os.path.join(folder, "all_preds.jsonl")):
        if not os.path.isfile(path):
            continue
        if path.endswith(".jsonl"):
            data = {str(r.get("instance_id")): r for _, r in read_jsonl_records(inputs, path)}
        else:
            data = read_json_record(inputs, path)
        entry = data if path == pred else data.get(instance_id)
        if isinstance(entry, dict) and entry.get("model_name_or_path"):
            return str(entry["model_name_or_path"])
    return None


def read_swe_agent(inputs, path):
    """One run from a SWE-agent .traj (durations only: the clock is their sum)."""
    data = read_json_record(inputs, path)
    steps = get_field(data, "trajectory", path, list)
    info = get_field(data, "info", path, dict)
    instance_id = os.path.basename(path).rsplit(".", 1)[0]
    stats = info.get("model_stats") or {}
    run = new_run("swe-agent", path, task_id=instance_id,
                  model=model_from_preds(inputs, path, instance_id),
                  exit_status=info.get("exit_status"),
                  diff=get_field(info, "submission", f"{path}, info", str, required=False),
                  cost_usd=stats.get("instance_cost"), tokens_in=stats.get("tokens_sent"),
                  tokens_out=stats.get("tokens_received"), turns=stats.get("api_calls"),
                  tokens_source="model_stats" if "tokens_sent" in stats else None,
                  start=0, end=0)
    for i, step in enumerate(steps):
        where = f"{path}, trajectory[{i}]"
        if not isinstance(step, dict):
            raise InputError(f"{where}: expected an object")
        action = get_field(step, "action", where, str).strip()
        seconds = step.get("execution_time")
        seconds = None if seconds is None else instant_us(seconds, where)
        if action:
            tool, category = swe_agent_call(action)
            failed = swe_agent_refused(tool, step.get("observation"))
            add_call(run, tool, category, start=run["end"], seconds=seconds, turn=i,
                     failed=failed)
        run["end"] = None if None in (run["end"], seconds) else run["end"] + seconds
        run["final_message"] = step.get("thought") or step.get("response") or \
            run["final_message"]
    run["turns"] = len(steps) if run["turns"] is None else run["turns"]
    return [run]


# --- agent output: mini-swe-agent ---
# <out>/<iid>/<iid>.traj.json: messages[] whose extra holds actions[].command and the
# epoch timestamp; info {submission, exit_status, model_stats, config.model.model_name}.
# Format 1 replies carry the command in the text: mini-swe-agent runs a reply's one
# block and refuses a reply with none or several (a format error: none of them ran).
MINI_BASH_BLOCK = r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```"   # its parse_action's


def mini_actions(message, action_regex, where):
    """[(command, failed)] of one format-1 reply, by the harness's own parse rule."""
    try:
        blocks = re.findall(action_regex, text_of(message.get("content")), re.S)
    except re.error as exc:
        raise InputError(f"{where}: config action_regex is not a regular expression "
                         f"({exc})") from None
    blocks = [b if isinstance(b, str) else b[0] for b in blocks]
    return [(block.strip(), mini_refused(blocks)) for block in blocks]


def mini_refused(blocks):
    """mini-swe-agent's refusal rule for a format-1 reply: its bash blocks are not
    exactly one (a format error: none of them ran).

    >>> mini_refused(["ls"]), mini_refused(["ls", "pwd"]), mini_refused([])
    (False, True, True)
    """
    return len(blocks) != 1


def read_mini_swe_agent(inputs, path):
    """One run from a mini-swe-agent .traj.json; a call lasts until the next message."""
    data = read_json_record(inputs, path)
    messages = get_field(data, "messages", path, list)
    info = get_field(data, "info", path, dict)
    name = os.path.basename(path)
    instance_id = data.get("instance_id") or name[:-len(".traj.json" if
                                                        name.endswith(".traj.json") else ".json")]
    model = (model_from_preds(inputs, path, instance_id) or
             get_field(info, "config.model.model_name", path, required=False))
    run = new_run("mini-swe-agent", path, task_id=str(instance_id), model=model,
                  exit_status=info.get("exit_status"),
                  diff=get_field(info, "submission", f"{path}, info", str, required=False),
                  cost_usd=get_field(info, "model_stats.instance_cost", path, required=False),
                  turn_tokens=[])
    action_regex = get_field(info, "config.agent.action_regex", path, str,
                             required=False) or MINI_BASH_BLOCK
    pending = []
    for i, message in enumerate(messages):
        where = f"{path}, messages[{i}]"
        if not isinstance(message, dict):
            raise InputError(f"{where}: expected an object")
        role = get_field(message, "role", where, str)
        extra = message.get("extra") if isinstance(message.get("extra"), dict) else {}
        stamp = extra.get("timestamp")
        micro = None if stamp is None else instant_us(stamp, f"{where}, field 'extra.timestamp'")
        widen_span(run, micro)
        for call in pending:                  # the observation answers the last actions
            call["seconds"] = None if micro is None or call["start"] is None else \
                micro - call["start"]
        pending = []
        if role != "assistant":
            continue
        usage = get_field(extra, "response.usage", where, dict, required=False) or {}
        count_tokens(run, usage.get("prompt_tokens"), usage.get("completion_tokens"))
        run["final_message"] = text_of(message.get("content"))
        actions = extra.get("actions")
        if actions is None:                  # format 1: the one bash block in the text
            actions = mini_actions(message, action_regex, where)
        else:
            actions = [(a.get("command", "") if isinstance(a, dict) else "", False)
                       for a in (actions if isinstance(actions, list) else [])]
        for command, failed in actions:
            pending.append(add_call(run, "bash", command_category(command), start=micro,
                                    stamp=stamp, turn=len(run["turn_tokens"]) - 1,
                                    failed=failed))
    run["turns"] = len(run["turn_tokens"])
    if run["tokens_in"] is not None or run["tokens_out"] is not None:
        run["tokens_source"] = "responses' usage summed"
    return [run]


# --- agent output: OpenHands ---
# output.jsonl, one object per instance: instance_id, test_result.git_patch, metadata
# .llm_config.model, metrics, history[] {id, timestamp, source, action|observation, args,
# tool_call_metadata}; the finish action's final_thought and task_completed.
OPENHANDS_NOT_TURNS = frozenset({"system", "recall", "condensation", "change_agent_state",
                                 "null", "pause"})   # bookkeeping, not the model's doing
OPENHANDS_NOT_CALLS = frozenset({"message", "finish", "reject"})
OPENHANDS_CATEGORIES = {"read": "read", "write": "edit", "edit": "edit"}
OPENHANDS_CLAIMS = {"true": "yes", "false": "no", "partial": "equivocal"}


def openhands_call(action, args):
    """The category of an OpenHands action."""
    if action == "edit" and args.get("command") == "view":
        return "read"
    if action == "run":
        return command_category(args.get("command") or "")
    if action == "run_ipython":                # Python; its !lines are shell commands
        return command_category("\n".join(line.strip()[1:] for line in
                                          str(args.get("code") or "").splitlines()
                                          if line.strip().startswith("!")))
    return OPENHANDS_CATEGORIES.get(action, "other")


def openhands_refused(observation):
    """OpenHands' refusal rule for the observation that answers a call: the editor's own
    error (an edit or read observation beginning "ERROR:", e.g. "No replacement was
    performed"), nothing done. (An agent error observation that answers no action is a
    refused tool call of its own: read_openhands records it as one.)

    >>> openhands_refused({"observation": "edit", "content": "ERROR: no match"})
    True
    >>> openhands_refused({"observation": "run", "content": "ERROR: tests failed"})
    False
    """
    return observation.get("observation") in ("edit", "read") and \
        str(observation.get("content") or "").startswith("ERROR:")


def read_openhands(inputs, path):
    """One run per line of an OpenHands output.jsonl."""
    runs = []
    for number, record in read_jsonl_records(inputs, path):
        where = f"{path} line {number}"
        history = get_field(record, "history", where, list)
        metrics = record.get("metrics") or {}
        run = new_run("openhands", where, task_id=str(get_field(record, "instance_id", where)),
                      model=get_field(record, "metadata.llm_config.model", where,
                                      required=False),
                      exit_status="error" if record.get("error") else None,
                      diff=get_field(record, "test_result.git_patch", where, str,
                                     required=False),
                      cost_usd=metrics.get("accumulated_cost"),
                      tokens_in=get_field(metrics, "accumulated_token_usage.prompt_tokens",
                                          where, required=False),
                      tokens_out=get_field(metrics, "accumulated_token_usage.completion_tokens",
                                           where, required=False), turn_tokens=[])
        if run["tokens_in"] is not None or run["tokens_out"] is not None:
            run["tokens_source"] = "accumulated_token_usage"
        openhands_events(run, history, where)
        runs.append(run)
    return runs


def openhands_events(run, history, where):
    """Calls, turns and the finish action from an OpenHands (V0) event history."""
    calls, last_response = {}, object()
    for i, event in enumerate(history):
        place = f"{where}, history[{i}]"
        if not isinstance(event, dict):
            raise InputError(f"{place}: expected an object")
        if "kind" in event and "action" not in event and "observation" not in event:
            raise InputError(f"{place}: an OpenHands V1 (SDK) event, kind {event['kind']!r}; "
                             f"only V0 events (action / observation) are read")
        micro = instant_us(get_field(event, "timestamp", place), f"{place}, field 'timestamp'")
        widen_span(run, micro)
        if "observation" in event and event.get("cause") in calls:
            call = calls.pop(event["cause"])
            call["seconds"] = micro - call["start"]
            call["failed"] = openhands_refused(event)
        elif event.get("observation") == "error" and event.get("cause") is None and \
                event.get("source") == "agent":
            # a tool call it refused: the model's response (its usage unrecorded) is a turn
            run["turn_tokens"].append(None)
            add_call(run, "error", "other", start=micro, stamp=event["timestamp"],
                     turn=len(run["turn_tokens"]) - 1, failed=True)
        if event.get("source") != "agent" or event.get("action", "null") in OPENHANDS_NOT_TURNS:
            continue
        action, args = event["action"], event.get("args") or {}
        response = get_field(event, "tool_call_metadata.model_response", place,
                             required=False) or {}
        if response.get("id") is None or response.get("id") != last_response:
            usage = response.get("usage") or {}
            run["turn_tokens"].append(total(usage.get("prompt_tokens"),
                                            usage.get("completion_tokens")))
        last_response = response.get("id")
        if action == "finish":
            run["final_message"] = args.get("final_thought") or args.get("thought")
            run["exit_status"] = run["exit_status"] or "finished"
            run["finished"] = True
            completed = args.get("task_completed")      # "true"/"false"/"partial", or a bool
            run["task_completed"] = "" if completed is None else str(completed).lower()
        elif action == "message":
            run["final_message"] = args.get("content")
        elif action not in OPENHANDS_NOT_CALLS:
            tool = get_field(event, "tool_call_metadata.function_name", place,
                             required=False) or action
            calls[event.get("id")] = add_call(run, tool, openhands_call(action, args),
                                              start=micro, stamp=event["timestamp"],
                                              turn=len(run["turn_tokens"]) - 1)
    run["turns"] = len(run["turn_tokens"])


# --- agent output: Claude Code ---
# ~/.claude/projects/*/<session>.jsonl entries {type, uuid, sessionId, timestamp, message
# {id, model, content[], usage}}, tool_use {id, name, input} answered by tool_result
# {tool_use_id}; or `claude -p --output-format stream-json` lines ending in a result line.
CLAUDE_TOOLS = {"Read": "read", "NotebookRead": "read", "LS": "read", "Edit": "edit",
                "MultiEdit": "edit", "Write": "edit", "NotebookEdit": "edit",
                "Glob": "search", "Grep": "search"}


CLAUDE_NEVER_RAN = ("<tool_use_error>", "The user doesn't want to proceed",
                    "[Request interrupted by user for tool use]")


def read_claude_code(inputs, path):
    """One run from a Claude Code transcript or stream-json log (none for a subagent's)."""
    records = read_jsonl_records(inputs, path)
    if all(r.get("isSidechain") for _, r in records if r.get("type") in ("user", "assistant")):
        return []                            # a subagent's own file: part of its session
    run = new_run("claude-code", path, turn_tokens=[])
    turns, calls, result = {}, {}, None
    for number, entry in records:
        where = f"{path} line {number}"
        run["session"] = run["session"] or entry.get("sessionId") or entry.get("session_id")
        micro = None
        if entry.get("timestamp") is not None:
            micro = instant_us(entry["timestamp"], f"{where}, field 'timestamp'")
        widen_span(run, micro)
        message = entry.get("message") if isinstance(entry.get("message"), dict) else {}
        if entry.get("type") == "assistant":
            claude_assistant(run, message, turns, calls, micro, entry.get("timestamp"), where)
        elif entry.get("type") == "user" and run["first_prompt"] is None and \
                not entry.get("isMeta") and text_of(message.get("content")).strip():
            run["first_prompt"] = text_of(message.get("content"))
        if entry.get("type") == "user" and isinstance(message.get("content"), list):
            for block in message["content"]:
                call = calls.pop(block.get("tool_use_id"), None) if isinstance(block, dict) \
                    else None
                if call and micro is not None and call["start"] is not None:
                    call["seconds"] = micro - call["start"]
                if call:
                    call["failed"] = claude_call_failed(call["tool"], block)
        elif entry.get("type") == "result":
            result = entry
            run.update(final_message=entry.get("result"), exit_status=entry.get("subtype"),
                       cost_usd=entry.get("total_cost_usd"),
                       result_error=bool(entry.get("is_error")))
        elif entry.get("type") == "system" and entry.get("model"):
            run["model"] = run["model"] or entry["model"]
    if not run["session"]:
        raise InputError(f"{path}: no field 'sessionId' in any entry")
    claude_totals(run, turns, result)
    return [run]


def claude_call_failed(tool, block):
    """Whether a tool_result says its call did nothing: an error, except a Bash command
    that ran and exited non-zero (its exit status is the program's, not a refusal)."""
    if not block.get("is_error"):
        return False
    text = text_of(block.get("content")).lstrip()
    return tool != "Bash" or text.startswith(CLAUDE_NEVER_RAN)


def claude_totals(run, turns, result):
    """Token totals: the result line's usage where there is one; else the messages'
    usage summed, whose output counts are known only where a message carries its final
    usage (a stop_reason; entries written while it streamed hold a placeholder)."""
    run["turns"] = len(turns)
    denied = {d.get("tool_use_id") for d in (result or {}).get("permission_denials") or []
              if isinstance(d, dict)}
    for call in run["calls"]:
        call["failed"] = call["failed"] or call.get("id") in denied
    final = all(turn["final"] for turn in turns.values())
    run["turn_tokens"] = [total(turn["input"], turn["output"]) if turn["final"] else None
                          for turn in turns.values()]
    run["tokens_in"] = total(*(turn["input"] for turn in turns.values()))
    run["tokens_out"] = total(*(turn["output"] for turn in turns.values())) if final else None
    run["tokens_source"] = ("messages' usage summed" if final else
                            "messages' input usage summed; output unknown (streaming "
                            "placeholders, no result line)") if turns else None
    usage = result.get("usage") if isinstance(result, dict) else None
    if isinstance(usage, dict) and usage.get("output_tokens") is not None:
        run["tokens_in"] = claude_input_tokens(usage)
        run["tokens_out"] = usage["output_tokens"]
        run["tokens_source"] = "result line"


def claude_input_tokens(usage):
    """Input tokens of a usage record: fresh input plus cache writes and reads."""
    return total(usage.get("input_tokens"), usage.get("cache_creation_input_tokens", 0),
                 usage.get("cache_read_input_tokens", 0))


def claude_assistant(run, message, turns, calls, micro, stamp, where):
    """One assistant entry: a new turn per message id, and its tool_use blocks once each;
    an entry with a stop_reason holds the message's final usage."""
    key = message.get("id") or where
    usage = message.get("usage") if isinstance(message.get("usage"), dict) else {}
    if key not in turns:                     # repeated entries of one message count once
        turns[key] = {"index": len(turns), "final": False}
        run["model"] = run["model"] or message.get("model")
    turn = turns[key]
    if not turn["final"]:
        turn.update(input=claude_input_tokens(usage), output=usage.get("output_tokens"),
                    final=bool(message.get("stop_reason")))
    text = text_of(message.get("content"))
    if text.strip():
        run["final_message"] = text
    seen = run.setdefault("seen", set())
    for block in message.get("content") or []:
        if isinstance(block, dict) and block.get("type") == "tool_use" and \
                block.get("id") not in seen:
            name = str(get_field(block, "name", where))
            given = block.get("input") if isinstance(block.get("input"), dict) else {}
            category = command_category(str(given.get("command", ""))) if name == "Bash" \
                else CLAUDE_TOOLS.get(name, "other")
            seen.add(block.get("id"))
            calls[block.get("id")] = add_call(run, name, category, start=micro, stamp=stamp,
                                              turn=turn["index"])
            calls[block.get("id")]["id"] = block.get("id")


# --- agent output: Codex CLI ---
# rollout-*.jsonl lines {timestamp, type, payload}: session_meta {id}, turn_context {model},
# response_item function_call {name, arguments, call_id} / function_call_output, event_msg
# token_count {info.last_token_usage, info.total_token_usage} and task_complete.
CODEX_SHELLS = frozenset({"shell", "container.exec", "exec_command", "shell_command",
                          "local_shell"})


CODEX_TOOLS = {"apply_patch": "edit"}     # named tools; a shell call's category is its command's


def codex_call(payload, where):
    """(tool, category) of a Codex function_call, custom_tool_call or local_shell_call."""
    name = payload.get("name") or "local_shell"
    if name in CODEX_TOOLS:
        return name, CODEX_TOOLS[name]
    if name not in CODEX_SHELLS:
        return name, "other"
    arguments = payload.get("arguments") or payload.get("action") or {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            raise InputError(f"{where}, field 'payload.arguments': not valid JSON") from None
    command = arguments.get("command") or arguments.get("cmd") or ""
    if isinstance(command, list):
        shell = len(command) == 3 and command[1] in ("-lc", "-c")
        command = command[2] if shell else " ".join(shlex.quote(str(c)) for c in command)
    return name, command_category(str(command))


def read_codex(inputs, path):
    """One run from a Codex CLI rollout; a call's turn is the next token_count's."""
    run = new_run("codex", path, turn_tokens=[])
    calls, totals_seen = {}, {"null"}    # no total at all counts nothing
    for number, line in read_jsonl_records(inputs, path):
        where = f"{path} line {number}"
        payload = get_field(line, "payload", where, dict)
        micro = instant_us(get_field(line, "timestamp", where), f"{where}, field 'timestamp'")
        widen_span(run, micro)
        kind, item = line.get("type"), payload.get("type")
        if kind == "session_meta":
            run["session"] = payload.get("id")
        elif kind == "turn_context":
            run["model"] = run["model"] or payload.get("model")
        elif item in ("function_call", "custom_tool_call", "local_shell_call"):
            calls[payload.get("call_id")] = add_call(run, *codex_call(payload, where),
                                                     start=micro, stamp=line["timestamp"],
                                                     turn=len(run["turn_tokens"]))
        elif item in ("function_call_output", "custom_tool_call_output") and \
                payload.get("call_id") in calls:
            call = calls.pop(payload["call_id"])
            call["seconds"] = micro - call["start"]
        elif item == "message" and payload.get("role") == "assistant":
            run["final_message"] = text_of(payload.get("content")) or run["final_message"]
        elif item == "message" and payload.get("role") == "user" and \
                not text_of(payload.get("content")).lstrip().startswith("<"):
            run["first_prompt"] = run["first_prompt"] or text_of(payload.get("content"))
        elif item == "token_count" and isinstance(payload.get("info"), dict):
            info = payload["info"]
            # The total is cumulative: a total seen before (just now, or earlier and
            # repeated after a newer one) reports usage already counted.
            seen = json.dumps(info.get("total_token_usage"), sort_keys=True)
            if seen in totals_seen:
                continue
            totals_seen.add(seen)
            last_total = info.get("total_token_usage") or {}
            last = info.get("last_token_usage") or {}
            run["turn_tokens"].append(total(last.get("input_tokens"), last.get("output_tokens")))
            run["tokens_in"] = last_total.get("input_tokens")
            run["tokens_out"] = last_total.get("output_tokens")
            run["tokens_source"] = "token_count total"
        elif item == "turn_aborted":
            run["exit_status"] = "turn_aborted"
        elif item == "task_complete":
            run["exit_status"] = "task_complete"
            run["final_message"] = payload.get("last_agent_message") or run["final_message"]
    if not run["session"]:
        raise InputError(f"{path}: no session_meta line with a payload 'id'")
    run["turns"] = len(run["turn_tokens"]) or None
    return [run]


# --- agent output: how a run ended (the harness's own record of a submission) ---
# Each harness that records how a run ended gives a claim of its own kind, the
# submitted column: yes when the agent itself chose to stop and submit (or finish), no
# when the harness stopped it (a cost, turn, time, context or format limit, an
# autosubmission after one, a crash), None where the record names no ending. It is a
# weaker claim than the seed report's (a blind rating of the final message): a
# submission says "I stop here", not "it works". Each rule is its record's "submitted".
def swe_agent_submitted(run):
    """SWE-agent: exactly 'submitted' is the agent's own submit; 'submitted (exit_cost)'
    and the like are autosubmissions after a limit (SWE-agent's own run/common.py trusts
    a patch only on exactly 'submitted'); no exit_status is a run that died.

    >>> [swe_agent_submitted({"exit_status": s}) for s in
    ...  ("submitted", "submitted (exit_cost)", "exit_context", None)]
    ['yes', 'no', 'no', 'no']
    """
    return "yes" if run["exit_status"] == "submitted" else "no"


def mini_submitted(run):
    """mini-swe-agent 1.x and 2.x: 'Submitted' is yes; LimitsExceeded, TimeExceeded,
    RepeatedFormatError, an exception's class name, or blank (a run cut off) are no."""
    return "yes" if run["exit_status"] == "Submitted" else "no"


def openhands_submitted(run):
    """OpenHands: a finish action is yes, refined by its task_completed (false no,
    partial equivocal); no finish (an iteration or budget limit, an error) is no."""
    if not run.get("finished"):
        return "no"
    return OPENHANDS_CLAIMS.get(run.get("task_completed") or "", "yes")


def claude_submitted(run):
    """Claude Code: the result line's subtype 'success' (is_error false) is yes; any
    error subtype, or success with is_error, is no; no result line records no ending."""
    if run["exit_status"] is None:
        return None
    return "yes" if run["exit_status"] == "success" and not run.get("result_error") else "no"


def codex_submitted(run):
    """Codex CLI: task_complete ending its last turn is yes; turn_aborted is no; a
    rollout with neither records no ending."""
    if run["exit_status"] is None:
        return None
    return "yes" if run["exit_status"] == "task_complete" else "no"


# --- agent output: the registry of harness formats ---
# One record per format; a new format is one record here plus its reader above.
#   format     its name in runs.csv's format column
#   label      its name in the manual (--help)
#   names      file names that are this format by name alone (the folder walk reads them)
#   json_keys  a test of a lone .json file's top-level keys
#   line       a test of one parsed line of a .jsonl file (any of its first SNIFF_LINES)
#   truncated  texts that mark a line too truncated to parse as this format
#   reader     reader(inputs, path) -> [run]; None: a harness known but not read, whose
#              files are refused rather than skipped without a word
#   run_id     the base of its run ids: "instance@model" or "session"
#   task_map   the --task-map key columns that name its tasks (formats that name none)
#   submitted  submitted(run) -> yes / no / equivocal / None: the harness's own record
#              of how the run ended (None: it records none); None for a format not read
#   records    what the harness records of a claim, one sentence (manual and README)
#   manual     its paragraph in HARNESS_MANUAL's list of formats, line by line
#   tools      its named tools' categories: the {tool: category} tables its reader
#              looks tools up in (shell commands aside: command_category); the hand-
#              written "Tool categories" of HARNESS_MANUAL, grouped by category, is
#              checked against them by TestSharedBlockHarnessRegistry
#   refusals   the calls it records as refused or failed (never run), line by line
#              (HARNESS_MANUAL's "Refused or failed" list); None: not read
#   refused    the function its reader asks whether a call was refused: that rule's
#              one home (None where no rule is read)
#   tokens     where its token totals come from (HARNESS_MANUAL's tokens_source list),
#              and tokens_note what else a reader of its tokens must know (or None)
TASK_MAP_KEYS = ("session_id", "run_id", "session", "file", "path")
HARNESS_FORMATS = (
    {"format": "swe-agent", "label": "SWE-agent", "names": (".traj",),
     "json_keys": lambda keys: "info" in keys and "trajectory" in keys,
     "line": None, "truncated": (), "reader": read_swe_agent, "run_id": "instance@model",
     "task_map": (), "submitted": swe_agent_submitted,
     "records": 'info.exit_status: "submitted" when the agent ran submit; "submitted '
                '(exit_cost)" and the like when the harness submitted for it after a cost, '
                'context or format limit; exit_cost, exit_context, exit_format, exit_error '
                'when it stopped the agent',
     "manual": ("<iid>/<iid>.traj (trajectory[], info); model from <iid>.pred",
                "or preds.json; diff info.submission; seconds are the steps'",
                "execution_time only (no timestamps); no per-turn tokens"),
     "tools": (SWE_AGENT_TOOLS, EDITOR_COMMANDS),
     "refused": swe_agent_refused,
     "refusals": ("an editor or file command whose observation says it",
                  "changed nothing (\"Your changes have NOT been applied\",",
                  "\"No replacement was performed\", \"Usage: ...\", ...)"),
     "tokens": "model_stats (SWE-agent's info)", "tokens_note": None},
    {"format": "mini-swe-agent", "label": "mini-swe-agent", "names": (".traj.json",),
     "json_keys": lambda keys: "info" in keys and "messages" in keys,
     "line": None, "truncated": (), "reader": read_mini_swe_agent, "run_id": "instance@model",
     "task_map": (), "submitted": mini_submitted,
     "records": 'info.exit_status: "Submitted" when the agent printed its submit command; '
                'LimitsExceeded, TimeExceeded, RepeatedFormatError or an error\'s name when '
                'the harness stopped it',
     "manual": ("<iid>/<iid>.traj.json (messages[] with extra.actions,",
                "extra.timestamp and extra.response.usage, info; format 1:",
                "the reply's bash block); diff info.submission"),
     "tools": (),
     "refused": mini_refused,
     "refusals": ("a reply whose ```bash blocks are not exactly one (its",
                  "format error: none of them ran; the regex is the",
                  "trajectory's own config action_regex where it has one)"),
     "tokens": "responses' usage summed (mini-swe-agent)", "tokens_note": None},
    {"format": "openhands", "label": "OpenHands", "names": (), "json_keys": None,
     # a record with a test report is the grader's copy (output.swebench_eval.jsonl)
     "line": lambda record: "history" in record and "instance_id" in record
     and not get_field(record, "test_result.report", "", required=False),
     "truncated": ('"history"',), "reader": read_openhands, "run_id": "instance@model",
     "task_map": (), "submitted": openhands_submitted,
     "records": "a finish action when the agent chose to stop, with task_completed (true, "
                "false or partial, as text or a JSON boolean) where the version writes it: "
                "yes, no, equivocal; no finish when an iteration or budget limit or an "
                "error stopped it",
     "manual": ("output.jsonl (instance_id, V0 history[] events, metrics;",
                "V1 SDK events are refused, not misread); diff",
                "test_result.git_patch; the finish action and its",
                "task_completed give the submitted column (below)"),
     "tools": (OPENHANDS_CATEGORIES,),
     "refused": openhands_refused,
     "refusals": ("an observation of edit or read that begins \"ERROR:\",",
                  "and an agent error observation that answers no action",
                  "(a tool call it refused, e.g. a bad parameter: its",
                  "response is a turn, with no usage recorded)"),
     "tokens": "accumulated_token_usage (OpenHands metrics)", "tokens_note": None},
    {"format": "claude-code", "label": "Claude Code", "names": (), "json_keys": None,
     "line": lambda record: "sessionId" in record
     or (record.get("type") in ("system", "result") and "session_id" in record),
     "truncated": ('"sessionId"',), "reader": read_claude_code, "run_id": "session",
     "task_map": TASK_MAP_KEYS, "submitted": claude_submitted,
     "records": "the result line's subtype (success; error_max_turns, "
                "error_during_execution and other error_ subtypes) in `claude -p` logs; "
                "an interactive session transcript has no result line and records none",
     "manual": ("session transcripts (*.jsonl with sessionId) and",
                "`claude -p --output-format stream-json` logs; assistant",
                "entries repeating one message id count once; input tokens",
                "include cache reads and writes; a subagent's own file",
                "(every entry a sidechain) is skipped; no diff"),
     "tools": (CLAUDE_TOOLS,),
     "refused": claude_call_failed,
     "refusals": ("a tool_result with is_error, except a Bash command",
                  "that ran and exited non-zero (\"Exit code N\"): that ran;",
                  "a <tool_use_error> (e.g. \"File has not been read yet\")",
                  "or a permission denial never ran"),
     "tokens": "result line (claude -p's last line), messages' usage summed (Claude "
               "Code transcripts whose messages carry their final usage: a stop_reason)",
     "tokens_note": "A Claude Code message written while it streamed (stop_reason null) "
                    "carries a placeholder output count: without a result line tokens_out "
                    "is then blank and tokens_source says so; input counts are known at a "
                    "message's start and are summed."},
    {"format": "codex", "label": "Codex CLI", "names": (), "json_keys": None,
     "line": lambda record: "payload" in record
     and record.get("type") in ("session_meta", "response_item", "event_msg", "turn_context"),
     "truncated": ('"payload"', '"type"'), "reader": read_codex, "run_id": "session",
     "task_map": TASK_MAP_KEYS, "submitted": codex_submitted,
     "records": "a task_complete event when the agent ended its turn, turn_aborted when "
                "it was interrupted",
     "manual": ("rollout JSONL (session_meta, response_item, event_msg);",
                "a repeated token_count with the same total counts once"),
     "tools": (CODEX_TOOLS,),
     "refused": None, "refusals": ("not read (no rollout with refusals was available)",),
     "tokens": "token_count total (Codex)", "tokens_note": None},
    {"format": "aider", "label": "Aider", "names": (".aider.chat.history.md",),
     "json_keys": None, "line": None, "truncated": (), "reader": None, "run_id": None,
     "task_map": (), "submitted": None, "records": None,
     "manual": (".aider.chat.history.md: not read; a folder holding one is",
                "refused rather than audited without its runs"),
     "tools": (), "refused": None, "refusals": None, "tokens": None, "tokens_note": None},
)
HARNESS_BY_FORMAT = {record["format"]: record for record in HARNESS_FORMATS}
AGENT_FILE_ENDINGS = tuple(name for record in HARNESS_FORMATS for name in record["names"]) \
    + (".jsonl",)


def labelled_lines(field, indent):
    """Each harness record's `field` (a list of lines) under its label, for HARNESS_MANUAL."""
    pad = " " * indent
    return "".join(f"{pad}{record['label']:<16}{record[field][0]}\n"
                   + "".join(f"{pad}{'':16}{line}\n" for line in record[field][1:])
                   for record in HARNESS_FORMATS if record[field])


def formats_text():
    """HARNESS_MANUAL's list of formats, from the records' manual paragraphs."""
    return labelled_lines("manual", 6)


def submission_rules_text():
    """HARNESS_MANUAL's list of what each harness records of a claim."""
    return "".join(
        f"      {record['label']:<16}" + "\n      {:16}".format("").join(
            textwrap.wrap(record["records"], 56)) + "\n"
        for record in HARNESS_FORMATS if record["records"])


def refusals_text():
    """HARNESS_MANUAL's list of the calls each harness records as refused or failed."""
    return labelled_lines("refusals", 10)


def tokens_text():
    """HARNESS_MANUAL's paragraph of where each harness's token totals come from."""
    sources = ", ".join(record["tokens"] for record in HARNESS_FORMATS if record["tokens"])
    notes = " ".join(record["tokens_note"] for record in HARNESS_FORMATS
                     if record["tokens_note"])
    return textwrap.fill(f"{sources}. {notes} Per-turn phase tokens need every turn's "
                         f"final usage.", 80, initial_indent=" " * 6,
                         subsequent_indent=" " * 6, break_on_hyphens=False) + "\n"


HARNESS_MANUAL = HARNESS_MANUAL.replace("{formats}\n", formats_text()).replace(
    "{submissions}\n", submission_rules_text()).replace(
    "{refusals}", refusals_text()).replace("{tokens}\n", tokens_text())


# --- agent output: detection, run ids, measures, tables ---
def sniff_format(path):
    """The format a file holds, by its name or its content (top-level keys, or one of
    its first SNIFF_LINES lines: a transcript may open with housekeeping entries), or
    None."""
    lower = path.lower()
    if lower.endswith(".swebench_eval.jsonl"):
        return None                          # the grader's copy of output.jsonl
    by_name = [r for r in HARNESS_FORMATS if r["names"] and lower.endswith(r["names"])]
    if by_name:                              # the longest ending: .traj.json is not .json
        return max(by_name, key=lambda r: max(len(n) for n in r["names"]
                                                if lower.endswith(n)))["format"]
    try:
        with open(path, "rb") as handle:
            if lower.endswith(".json"):
                first = json.loads(handle.read().decode("utf-8-sig"))
                keys = set(first) if isinstance(first, dict) else set()
                return next((r["format"] for r in HARNESS_FORMATS
                             if r["json_keys"] and r["json_keys"](keys)), None)
            lines = [handle.readline() for _ in range(SNIFF_LINES)]
    except (OSError, ValueError):
        return None
    return next((fmt for fmt in map(sniff_line, lines) if fmt), None)


def sniff_line(line):
    """The format one JSONL line belongs to, or None."""
    try:
        record = json.loads(line.decode("utf-8-sig"))
    except ValueError:                       # a truncated line: the reader says where
        text = line.decode("utf-8", "replace")
        return next((r["format"] for r in HARNESS_FORMATS
                     if r["truncated"] and all(k in text for k in r["truncated"])), None)
    if not isinstance(record, dict):
        return None
    return next((r["format"] for r in HARNESS_FORMATS if r["line"] and r["line"](record)),
                None)


SNIFF_LINES = 20


def agent_files(path):
    """[(format, file)] under a folder (or the file itself), in sorted path order. A file
    of a harness the scripts know but do not read (Aider) is an error, not a silent
    drop: its runs would be missing from the audit."""
    if os.path.isfile(path):
        found = [(sniff_format(path), path)] if sniff_format(path) else []
    else:
        found = []
        for folder, subfolders, files in os.walk(path):
            subfolders[:] = sorted(s for s in subfolders if not s.startswith("."))
            for name in sorted(files):
                full = os.path.join(folder, name)
                if name.endswith(AGENT_FILE_ENDINGS) and (not name.startswith(".")
                                                          or sniff_format(full) == "aider"):
                    fmt = sniff_format(full)
                    if fmt:
                        found.append((fmt, full))
    for fmt, file in found:
        if HARNESS_BY_FORMAT[fmt]["reader"] is None:
            readable = ", ".join(r["label"] for r in HARNESS_FORMATS if r["reader"])
            raise InputError(f"{file}: {HARNESS_BY_FORMAT[fmt]['label']} output, which these "
                             f"scripts do not read (they read {readable}); its runs would be "
                             f"left out, so give them as a runs table instead")
    return found


def instance_at_model(instance, model):
    """The run-id base both audits and regrade.py use: instance@model, the instance
    alone without a model."""
    return str(instance) + (f"@{model}" if model else "")


def number_run_ids(runs, base_of):
    """Give each run without a run_id its base_of(run), then #2, #3 for the second and
    third run of one base, in the runs' order (path order), passing over any id a run
    already holds: one rule for harness runs and regrade.py's predictions, so a run
    has the same id in every script.

    >>> [r["run_id"] for r in number_run_ids(
    ...     [{"run_id": "x@m"}, {"b": "x@m"}, {"b": "x@m"}, {"b": "x@m#2"}], lambda r: r["b"])]
    ['x@m', 'x@m#2', 'x@m#3', 'x@m#2#2']
    """
    taken = {run["run_id"] for run in runs if run.get("run_id")}
    seen = {}
    for run in runs:
        if run.get("run_id"):
            continue
        base = base_of(run)
        count = seen.get(base, 0) + 1
        while (base if count == 1 else f"{base}#{count}") in taken:
            count += 1
        seen[base] = count
        run["run_id"] = base if count == 1 else f"{base}#{count}"
        taken.add(run["run_id"])
    return runs


def assign_run_ids(runs):
    """instance@model (instance alone without a model; the session id without an
    instance), then #2, #3 in path order: regrade.py names predictions the same way."""
    number_run_ids(runs, lambda run: str(run["session"])
                   if HARNESS_BY_FORMAT[run["format"]]["run_id"] == "session"
                   else instance_at_model(run["task_id"], run["model"]))


def side_table(inputs, path):
    """A runs table beside the agent files (a folder's runs.csv), joined on run id."""
    folder = path if os.path.isdir(path) else None
    for name in RUNS_TABLE_NAMES if folder else ():
        if os.path.isfile(os.path.join(folder, name)):
            table = inputs.read_table(os.path.join(folder, name))
            key = table.column(None, candidates=("run_id", "session_id", "id"), required=False)
            if key is None:
                raise InputError(f"{table.name}: beside agent output it is joined on run id, "
                                 f"but has no run_id column")
            return table, key
    return None, None


def fill_from_side(run, table, key, rows_by_id):
    """Fill what the harness left blank from the runs table beside it; add its other
    columns (e.g. raters); a cell that disagrees with the harness is an error."""
    index = rows_by_id.get(run["run_id"])
    for column in table.columns if index is not None else ():
        name = {"task": "task_id", "instance_id": "task_id"}.get(column.lower(), column)
        cell = table.rows[index][column].strip()
        if column == key or (name in RUN_COLUMNS and name not in run):
            continue                         # the key, or a measure derived from the record
        if name not in run:
            run.setdefault("extra", {})[column] = cell
        elif not is_missing(cell) and not is_missing(cell_text(run[name])) and \
                cell_text(run[name]) != cell:
            raise InputError(f"{table.where(index, column)}: {cell!r} disagrees with "
                             f"{run['where']} ({cell_text(run[name])!r})")
        elif not is_missing(cell):
            run[name] = cell


def map_tasks(inputs, runs, task_map):
    """Tasks for transcripts from --task-map (session id or file name -> task id)."""
    table = inputs.read_table(task_map)
    keys = [key for record in HARNESS_FORMATS for key in record["task_map"]]
    key = table.column(None, flag="--task-map key", candidates=tuple(dict.fromkeys(keys)))
    task = table.column(None, flag="--task-map task", candidates=TASK_COLUMNS_ANY)
    mapping = {row[key].strip(): row[task].strip() for row in table.rows}
    for run in runs:
        if not run["task_id"]:
            for name in (run["run_id"], run["where"], os.path.basename(run["where"])):
                run["task_id"] = run["task_id"] or mapping.get(name)


_INSTANCE_ID = re.compile(r"(?<![\w.-])[A-Za-z0-9][\w.-]*__[\w.-]+?-\d+(?!\w|[.-]\w)")


def prompt_instance(text):
    """The one SWE-bench instance id (owner__repo-123) a first prompt names, or None.

    >>> prompt_instance("Fix django__django-11066."), prompt_instance("a__b-1 or c__d-2")
    ('django__django-11066', None)
    """
    found = set(_INSTANCE_ID.findall(str(text or "")))
    return found.pop() if len(found) == 1 else None


def tasks_from_record(runs):
    """Give each run whose record names no task one: the instance id its first prompt
    names, else its own run id (each its own task). Return the sentences that say so."""
    by_prompt, alone = [], []
    for run in runs:
        if run["task_id"]:
            continue
        run["task_id"] = prompt_instance(run.get("first_prompt"))
        (by_prompt if run["task_id"] else alone).append(run)
        run["task_id"] = run["task_id"] or run["run_id"]
    notes = []
    if by_prompt:
        notes.append(f"Tasks: {plural_runs(len(by_prompt))} ({', '.join(sorted({r['format'] for r in by_prompt}))}) "
                     f"name no task; each task is the instance id its first prompt names "
                     f"(e.g. {by_prompt[0]['task_id']!r}).")
    if alone:
        notes.append(f"Tasks: {plural_runs(len(alone))} ({', '.join(sorted({r['format'] for r in alone}))}) "
                     f"name no task, so each is its own task (its run id); give --task-map "
                     f"FILE (session_id,task_id) to group runs of one task.")
    return notes


def phase_measures(run):
    """orient / impl / verify seconds and tokens around the first and last file edit."""
    calls = run["calls"]
    edits = [i for i, call in enumerate(calls) if call["category"] == "edit"]
    out = dict.fromkeys(("orient_seconds", "impl_seconds", "verify_seconds", "orient_tokens",
                         "impl_tokens", "verify_tokens", "ran_tests_after_last_edit"))
    if not edits:
        return out                           # never edited: undefined, not zero
    first, last = calls[edits[0]], calls[edits[-1]]
    out["ran_tests_after_last_edit"] = int(any(c["category"] == "test"
                                               for c in calls[edits[-1] + 1:]))
    if None not in (run["start"], run["end"], first["start"], last["start"]):
        edit_end = last["start"] + (last["seconds"] or 0)
        out.update(orient_seconds=seconds_text(first["start"] - run["start"]),
                   impl_seconds=seconds_text(edit_end - first["start"]),
                   verify_seconds=seconds_text(run["end"] - edit_end))
    tokens = run["turn_tokens"]
    if tokens and None not in tokens and last["turn"] < len(tokens):
        out.update(orient_tokens=sum(tokens[:first["turn"]]),
                   impl_tokens=sum(tokens[first["turn"]:last["turn"] + 1]),
                   verify_tokens=sum(tokens[last["turn"] + 1:]))
    return out


def keep_calls_that_ran(run):
    """Count the calls the agent attempted and those that failed (refused, or the tool
    did nothing); keep only the calls that ran: they alone have a category."""
    run["attempted_calls"] = len(run["calls"])
    run["failed_calls"] = sum(bool(call["failed"]) for call in run["calls"])
    run["calls"] = [call for call in run["calls"] if not call["failed"]]


def run_row(run):
    """One runs-table row (RUN_COLUMNS, as text; blank = undefined)."""
    counts = {c: sum(call["category"] == c for call in run["calls"]) for c in CATEGORIES}
    row = {key: run.get(key) for key in RUN_COLUMNS}
    row.update({f"{c}_calls": n for c, n in counts.items()}, tool_calls=len(run["calls"]),
               tokens_total=total(run["tokens_in"], run["tokens_out"]), **phase_measures(run))
    row = {key: cell_text(value) for key, value in row.items()}
    row.update(run.get("extra", {}))
    return row


def derive_tables(inputs, path):
    """The runs, tool-call and predictions tables an agent folder or file holds, or None."""
    found = agent_files(path) if path != "-" and os.path.exists(path) else []
    if not found:
        return None
    runs = [run for fmt, file in found
            for run in HARNESS_BY_FORMAT[fmt]["reader"](inputs, file)]
    if not runs:
        raise InputError(f"{path}: agent transcripts, but only subagent (sidechain) files")
    for run in runs:
        keep_calls_that_ran(run)
    assign_run_ids(runs)
    table, key = side_table(inputs, path)
    if table is not None:
        rows_by_id = {row[key].strip(): i for i, row in enumerate(table.rows)}
        for run in runs:
            fill_from_side(run, table, key, rows_by_id)
        unmatched = sorted(set(rows_by_id) - {run["run_id"] for run in runs}, key=rows_by_id.get)
        if unmatched:
            raise InputError(f"{table.where(rows_by_id[unmatched[0]], key)}: run id "
                             f"{unmatched[0]!r} matches no run in the agent output beside it "
                             f"(their ids are instance@model or the session id, e.g. "
                             f"{runs[0]['run_id']!r})")
    if inputs.task_map:
        map_tasks(inputs, runs, inputs.task_map)
    notes = tasks_from_record(runs)
    for run in runs:
        run["submitted"] = HARNESS_BY_FORMAT[run["format"]]["submitted"](run)
    runs.sort(key=lambda r: r["run_id"])
    rows = [run_row(run) for run in runs]
    extra = [c for row in rows for c in row if c not in RUN_COLUMNS]
    columns = list(RUN_COLUMNS) + sorted(set(extra), key=extra.index)
    calls = [{"run_id": run["run_id"], "seq": str(seq), "tool": call["tool"],
              "category": call["category"], "timestamp": call["timestamp"],
              "seconds": seconds_text(call["seconds"])}
             for run in runs for seq, call in enumerate(run["calls"], 1)]
    predictions = [{"run_id": run["run_id"], "instance_id": run["task_id"],
                    "model_name_or_path": run["model"], "model_patch": run["diff"]}
                   for run in runs if "diff" in run]
    table = Table(path, columns, [dict(dict.fromkeys(columns, ""), **r) for r in rows],
                  [f"{i} (run {r['run_id']})" for i, r in enumerate(rows, 1)])
    table.notes = notes                      # what was assumed, for the report to say
    # runs whose harness records a diff, an empty one: a grader skips them (EMPTY_UNGRADED)
    table.empty_diffs = {run["run_id"] for run in runs
                         if "diff" in run and not str(run["diff"] or "").strip()}
    return {"runs": table,
            "tool_calls": Table(f"{path} (tool calls)", list(TOOL_CALL_COLUMNS),
                                calls, list(range(1, len(calls) + 1))) if calls else None,
            "predictions": predictions, "formats": sorted({r["format"] for r in runs})}


def agent_output(inputs, path):
    """derive_tables(), read once per path."""
    cache = inputs.agent_cache
    if path not in cache:
        cache[path] = derive_tables(inputs, path)
    return cache[path]


def csv_text(columns, rows):
    """Rows of text cells as CSV with LF line ends."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([row.get(c, "") for c in columns] for row in rows)
    return out.getvalue()


def write_runs(inputs, path, folder):
    """--write-runs DIR: the derived runs.csv, tool_calls.csv and predictions.jsonl."""
    derived = agent_output(inputs, path) if path else None
    if derived is None:
        raise InputError(f"--write-runs: {path or 'the input'} is not agent output "
                         f"(a harness folder or transcript), so nothing was derived to write")
    os.makedirs(folder, exist_ok=True)
    outputs = {"runs.csv": csv_text(derived["runs"].columns, derived["runs"].rows)}
    if derived["tool_calls"] is not None:
        outputs["tool_calls.csv"] = csv_text(TOOL_CALL_COLUMNS, derived["tool_calls"].rows)
    if derived["predictions"]:
        outputs["predictions.jsonl"] = "".join(json.dumps(p, ensure_ascii=False) + "\n"
                                               for p in derived["predictions"])
    for name in outputs:
        inputs.guard_output(os.path.join(folder, name))
    for name, text in outputs.items():
        write_atomic(os.path.join(folder, name), text)
    return dict(derived, written=sorted(outputs))


def write_runs_first(inputs, runs, folder, named=None, verdicts=None):
    """An audit's --write-runs: write the derived tables before any audit; return the
    note to print (then exit 0) when the runs carry no outcome yet and no --verdicts
    brings one, naming the next step; else None (the audit goes on)."""
    derived = write_runs(inputs, runs, folder)
    return None if verdicts else no_outcome_yet(derived, folder, named)


def no_outcome_yet(derived, folder, named=None):
    """After --write-runs: the note to print (then exit 0) when the derived runs carry no
    outcome to audit yet, naming the next step; None when there is one."""
    table = derived["runs"]
    column = table.column(named, flag="--verified", candidates=VERDICT_OUTCOME_COLUMNS,
                          required=False) if not named or named in table.columns else None
    if column and any(not is_missing(row[column]) for row in table.rows):
        return None
    shown = relative_path(folder)
    step = (f"grade them (python3 regrade.py INSTANCES "
            f"{os.path.join(shown, 'predictions.jsonl')} --repo REPO --out graded), then "
            f"audit with --verdicts graded/verdicts.csv, or give a grader's own report "
            f"with --verdicts" if "predictions.jsonl" in derived["written"] else
            "give a grader's verdicts with --verdicts FILE (these runs carry no diff to "
            "regrade)")
    return (f"wrote {', '.join(derived['written'])} ({plural_runs(len(table.rows))}) to "
            f"{shown}\nno run has an outcome yet, so nothing was audited. Next: {step}.\n")


def plural_runs(count):
    """'1 run', '10 runs'."""
    return f"{count} run" + ("" if count == 1 else "s")
# --- end shared helpers body sha256 d9bd014a6c456a01 ---


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


def kappa_max(tp, fp, fn, tn):
    """The largest Cohen's kappa any table with these margins reaches (Cohen 1960).

    With the claims and the outcomes fixed, agreement is at most the smaller
    of each pair of margins: p_max = (min(claims, verified) + min(not claimed,
    failed)) / n, and kappa_max = (p_max - p_chance) / (1 - p_chance). Exact in
    fractions; None where kappa is undefined.

    >>> round(kappa_max(46, 22, 3, 1), 4), kappa_max(3, 0, 0, 3)
    (0.2227, 1.0)
    """
    if cohen_kappa(tp, fp, fn, tn) is None:
        return None
    n, claims, verified = tp + fp + fn + tn, tp + fp, tp + fn
    agreement = Fraction(min(claims, verified) + min(n - claims, n - verified), n)
    chance = Fraction(claims * verified + (n - claims) * (n - verified), n * n)
    return float((agreement - chance) / (1 - chance))


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

    Small tables are summed exactly in integers; large ones in log space, each
    table's log probability worked out once, with R's relative tolerance for
    ties in probability (R_TIE_TOLERANCE, 1e-7).

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
    logs = [log_hypergeometric(x, row1, row2, column1) for x in range(low, high + 1)]
    observed = logs[tp - low]
    tolerance = float(R_TIE_TOLERANCE)
    total = sum(math.exp(log_weight - observed) for log_weight in logs
                if log_weight <= observed + tolerance)
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


def bca_levels(defined, estimate, jackknife, confidence=CONFIDENCE):
    """The bias-corrected and accelerated (BCa) percentile levels (Efron 1987).

    `defined` are the sorted bootstrap values, `estimate` the figure on the data
    and `jackknife` its leave-one-cluster-out values. z0 = inverse normal of the
    share of resamples below the estimate (ties count one half); the
    acceleration a = sum (mean - j)^3 / (6 (sum (mean - j)^2)^1.5). Returns
    the two levels to read the bootstrap values at, or None where the
    correction is undefined (every resample on one side of the estimate).

    >>> [round(v, 6) for v in bca_levels([1.0, 2.0, 3.0, 4.0], 2.5, [1.0, 2.0, 3.0])]
    [0.025, 0.975]
    """
    lower, upper = bisect.bisect_left(defined, estimate), bisect.bisect_right(defined, estimate)
    share = (lower + 0.5 * (upper - lower)) / len(defined)
    if not 0 < share < 1:
        return None
    normal = NormalDist()
    z0 = normal.inv_cdf(share)
    mean = math.fsum(jackknife) / len(jackknife)
    squares = math.fsum((mean - j) ** 2 for j in jackknife)
    acceleration = (math.fsum((mean - j) ** 3 for j in jackknife) / (6 * squares ** 1.5)
                    if squares > 0 else 0.0)
    levels = []
    for tail in ((1 - confidence) / 2, (1 + confidence) / 2):
        z = z0 + normal.inv_cdf(tail)
        denominator = 1 - acceleration * z
        if denominator <= 0:
            return None
        levels.append(normal.cdf(z0 + z / denominator))
    return levels


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
    Each figure gets its percentile interval and its BCa interval (bias and
    acceleration from the leave-one-cluster-out jackknife); "ci" is the one
    CLUSTER_INTERVAL names.
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
    estimates = figures_of_counts(packed, sum(packed))
    jackknives = [figures_of_counts(packed, sum(packed) - one) for one in packed]
    intervals = {}
    for variant in ("headline", "equivocal_as_claims"):
        intervals[variant] = {}
        for name in RATE_NAMES + (("ordinal_claim_auc",) if variant == "headline" else ()):
            values = [draw[name] for chunk in chunks for draw in chunk[variant]]
            defined = sorted(v for v in values if v is not None)
            ci = ([percentile(defined, alpha / 2), percentile(defined, 1 - alpha / 2)]
                  if defined else [None, None])
            interval = {"ci_percentile": ci, "ci_bca": [None, None],
                        "skipped": len(values) - len(defined)}
            estimate = estimates[variant][name]
            jackknife = [j[variant][name] for j in jackknives if j[variant][name] is not None]
            levels = (bca_levels(defined, estimate, jackknife, confidence)
                      if defined and estimate is not None and len(jackknife) > 1 else None)
            if levels:
                interval["ci_bca"] = [percentile(defined, level) for level in levels]
            interval["ci"] = interval["ci_" + CLUSTER_INTERVAL]
            interval["degenerate"] = degenerate_interval(defined, interval["ci"],
                                                         len(cluster_counts))
            if interval["ci"][0] is None and defined and not interval["degenerate"]:
                interval["degenerate"] = ("the BCa correction is undefined (every resample "
                                          "on one side of the estimate)")
            intervals[variant][name] = interval
    return intervals


def figures_of_counts(packed, total):
    """The bootstrap's figures (headline and equivocal as claims) of one packed total."""
    mask = (1 << FIELD_BITS) - 1
    tp, fp, fn, tn, eq_verified, eq_failed = (
        (total >> (FIELD_BITS * i)) & mask for i in range(len(FIELDS)))
    headline = rates(tp, fp, fn, tn)
    headline["ordinal_claim_auc"] = ordinal_claim_auc(tp, fp, fn, tn, eq_verified, eq_failed)
    return {"headline": headline,
            "equivocal_as_claims": rates(*as_claims(tp, fp, fn, tn, eq_verified, eq_failed))}


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
    if too_few_clusters(clusters):
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
    figures["kappa"] = {"value": cohen_kappa(tp, fp, fn, tn), "ci": [None, None],
                        "max_given_margins": kappa_max(tp, fp, fn, tn)}
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
    if interval.get("ci_bca") and not interval["degenerate"]:
        target[key + "_bca"] = interval["ci_bca"]      # JSON only: see CLUSTER_INTERVAL
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
        result["sampling"]["realised_verified_deliveries"] = predictive_deliveries(
            runs, min(boot, PREDICTIVE_DRAWS), seed)
        realised = result["sampling"]["realised_verified_deliveries"]
        claims = result["sampling"]["claims"]
        if realised.get("ci"):
            low, high = realised["ci"]
            result["sampling"]["realised_inflation"] = {
                "ci": [claims_per_delivery(claims, high), claims_per_delivery(claims, low)]}
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
    if result["clusters"] == "tasks" and len(per_task) >= 2 and len(checked) > len(per_task):
        # At every task count: the within-task question is asked beside the pooled one.
        result["claim_within_tasks"] = claim_within_tasks(per_task)
    result["verdict_case"] = claim_verdict(result)
    if "claim_within_tasks" in result:
        result["questions"] = pooled_and_within(result)
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


def claim_groups(runs):
    """Per task: (checked claims verified, checked claims not verified, unchecked claims)."""
    groups = {}
    for run in runs:
        if run["claim"] is True:
            cell = groups.setdefault(run["task"], [0, 0, 0])
            cell[0 if run["verified"] else 1 if run["verified"] is not None else 2] += 1
    return [tuple(cell) for _, cell in sorted(groups.items(), key=lambda kv: str(kv[0]))]


def beta_binomial_prior(tasks):
    """(mean, prior strength) of the task delivery rates, by moments; strength None = no spread.

    `tasks` holds (verified, not verified) checked claims per task. The mean m
    is the pooled rate. Under a beta-binomial with intraclass correlation rho,
    sum n_j (rate_j - m)^2 over K tasks of n_j claims (N in all) has mean
    m (1 - m) ((K - 1) + rho (N - K + 1 - sum n_j^2 / N)); rho solves that
    moment equation, clipped to [0, 1], and a task's rate is
    Beta(strength * m, strength * (1 - m)) with strength = (1 - rho) / rho.

    >>> beta_binomial_prior([(2, 2), (2, 2), (2, 2)])
    (0.5, None)
    >>> mean, strength = beta_binomial_prior([(4, 0), (0, 4), (4, 0), (0, 4)])
    >>> mean, round(strength, 6)
    (0.5, 0.0)
    """
    sizes = [s + f for s, f in tasks if s + f]
    total, seen = sum(sizes), sum(s for s, _ in tasks)
    mean = seen / total
    if mean in (0.0, 1.0) or len(sizes) < 2:
        return mean, None
    spread = math.fsum((s + f) * (s / (s + f) - mean) ** 2 for s, f in tasks if s + f)
    coefficient = total - len(sizes) + 1 - math.fsum(n * n for n in sizes) / total
    if coefficient <= 0:        # one claim per task: the spread of task rates cannot show
        return mean, None
    rho = (spread / (mean * (1 - mean)) - (len(sizes) - 1)) / coefficient
    if rho <= 0:
        return mean, None
    rho = min(rho, 1.0)
    return mean, (1 - rho) / rho


def clustering_unestimable(tasks):
    """Whether the tasks' spread cannot show an intraclass correlation at all: at least
    2 tasks with checked claims and every one holding a single checked claim (the
    moment equation's coefficient of rho is then 0, so any rho fits).

    >>> clustering_unestimable([(1, 0), (0, 1), (1, 0)]), clustering_unestimable([(2, 0), (0, 1)])
    (True, False)
    """
    sizes = [v + f for v, f in tasks if v + f]
    return len(sizes) >= 2 and all(size == 1 for size in sizes)


def binomial_draw(rng, trials, rate):
    """One Binomial(trials, rate) draw: Bernoulli sum, or its normal approximation past 64."""
    if trials <= 64 or rate in (0.0, 1.0):
        return sum(rng.random() < rate for _ in range(trials))
    sd = math.sqrt(trials * rate * (1 - rate))
    return min(trials, max(0, round(rng.gauss(trials * rate, sd))))


def predictive_deliveries(runs, draws, seed):
    """A 95% predictive interval for the realised verified deliveries among all claims.

    The bill is about the count that will be verified, not its mean. Each draw
    resamples the tasks with checked claims (the uncertainty in the pooled rate
    and the spread of task rates, respecting tasks), then gives every task's
    unchecked claims one rate drawn from that task's beta posterior (the prior
    from the resample, updated by the task's own checked claims) and draws how
    many of them deliver: claims of one task rise and fall together. The
    interval is the 2.5% and 97.5% order statistics of the realised totals.
    Withheld, as every cluster interval, below FEW_CLUSTERS tasks with checked
    claims or where 95% of the draws give one count. Where a resample's tasks each
    hold one checked claim the intraclass correlation cannot be estimated (any rho
    fits); rather than read that as rho = 0 (a binomial interval, far too narrow if
    a task's claims deliver together), that draw is made at the all-or-none bound
    rho = 1: each unchecked task's claims all deliver, with probability the pooled
    rate, or none do. The result says how many draws were made so ('at_bound').
    """
    groups = claim_groups(runs)
    seen = sum(g[0] for g in groups)
    unchecked = [(g[0], g[1], g[2]) for g in groups if g[2]]
    donors = [(g[0], g[1]) for g in groups if g[0] + g[1]]
    out = {"method": "task-cluster bootstrap, beta-binomial within tasks",
           "draws": draws, "tasks_with_checked_claims": len(donors), "ci": None}
    if not unchecked:
        return {**out, "ci": [seen, seen], "exact": "every claim was checked"}
    if not donors:
        return {**out, "withheld": "no claim was checked"}
    if not draws:
        return {**out, "withheld": "no bootstrap was run (--boot 0)"}
    rng = random.Random(f"{seed}:predictive")
    totals, at_bound = [], 0
    for _ in range(draws):
        resample = rng.choices(donors, k=len(donors))
        mean, strength = beta_binomial_prior(resample)
        if strength is None and clustering_unestimable(resample):
            strength, at_bound = 0.0, at_bound + 1      # all or none, not binomial
        total = seen
        for verified, failed, claims in unchecked:
            if strength is None:
                rate = mean
            else:
                a, b = strength * mean + verified, strength * (1 - mean) + failed
                if a <= 0 and b <= 0:      # Beta(0 * mean, 0 * (1 - mean)): all or none
                    rate = float(rng.random() < mean)
                else:
                    rate = 0.0 if a <= 0 else 1.0 if b <= 0 else rng.betavariate(a, b)
            total += binomial_draw(rng, claims, rate)
        totals.append(total)
    totals.sort()
    alpha = 1.0 - CONFIDENCE
    ci = [totals[math.floor(alpha / 2 * draws)],
          totals[min(draws - 1, math.ceil((1 - alpha / 2) * draws) - 1)]]
    out["at_bound"] = at_bound
    if clustering_unestimable(donors):
        out["method"] = ("task-cluster bootstrap, at the all-or-none bound: every task with "
                         "checked claims holds one, so the clustering of claims within a "
                         "task cannot be estimated, and each unchecked task's claims all "
                         "deliver or none do (the widest case)")
    elif at_bound:
        out["method"] += (f"; {at_bound:,} draws whose tasks each held one checked claim "
                          f"at the all-or-none bound")
    reason = degenerate_interval(totals, ci, len(donors))
    if reason:
        return {**out, "withheld": reason, "order_statistics": ci}
    return {**out, "ci": ci}


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
        tolerance = weight * (1 + float(R_TIE_TOLERANCE))
        p = min(1.0, math.fsum(w for w in law if w <= tolerance) / math.fsum(law))
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
    Fisher's p decides alone, except with fewer than FEW_CLUSTERS tasks (and more
    runs than tasks: claim_within_tasks is there), where Fisher's p would count
    runs of one task as independent: there the pooled question is too few tasks
    to tell ('needs_tasks'). The case always answers the pooled question, at every task
    count; the within-task question is answered beside it (pooled_and_within).
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
    if pooled_needs_tasks(result):
        # Too few tasks for an interval, and Fisher's pooled p would count runs of
        # one task as independent: the pooled question cannot be answered here. (It
        # is never swapped for the within-task question: one rule at every count.)
        case["within_tasks_p"] = result["claim_within_tasks"]["p"]
        case["needs_tasks"] = True
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


def pooled_needs_tasks(result):
    """Whether the pooled question is too few tasks to tell: fewer than FEW_CLUSTERS
    tasks where several runs share a task (claim_within_tasks is there), so Fisher's
    p would count runs of one task as independent."""
    return "claim_within_tasks" in result and too_few_clusters(result["n_clusters"])


POOLED_QUESTION = ("pooled over all runs, as a per-claim bill counts them: does a claimed run "
                   "succeed more often than an unclaimed one?")
WITHIN_QUESTION = ("within tasks: among runs of the same task, does the claim tell a success "
                   "from a failure, beyond how hard the task is?")


def pooled_and_within(result):
    """The verdict's two questions, each with the figures that answer it.

    Pooled: claim_verdict's case answers it, the one rule the first sentence
    also reads; with fewer than FEW_CLUSTERS tasks it is too few tasks to tell
    (`runs_counted_as_independent`: so Fisher's p would count them, and the pooled
    question goes unanswered).
    Within: the exact test of claim against outcome stratified by task. The two
    disagree only where both are answered: `through_tasks` where the pooled
    association is shown and the within-task one is not (the association runs
    through the tasks, not within them), `within_only` the other way round.
    """
    case, kappa, within = result["verdict_case"], result["kappa"], result["claim_within_tasks"]
    answered = not pooled_needs_tasks(result)
    pooled_shown = case["case"] == "informative"
    within_shown = (within["p"] is not None and within["p"] < SIGNIFICANCE
                    and within["odds_ratio"] not in (None, 1.0))
    return {
        "pooled": {"question": POOLED_QUESTION, "shown": pooled_shown,
                   "kappa": kappa["value"], "kappa_interval": case.get("kappa_interval"),
                   "fisher_p": result["fisher_p"], "runs_counted_as_independent": not answered},
        "within_tasks": {"question": WITHIN_QUESTION, "shown": within_shown,
                         "p": within["p"], "odds_ratio": within["odds_ratio"],
                         "tasks": within["tasks"]},
        "through_tasks": answered and pooled_shown and not within_shown,
        "within_only": answered and within_shown and not pooled_shown,
    }


def question_sentences(result):
    """Both questions and their answers, and what it means where they disagree."""
    q = result["questions"]
    pooled, within, kappa = q["pooled"], q["within_tasks"], result["kappa"]
    if pooled["kappa_interval"]:
        pooled_answer = (f"kappa {fmt(kappa['value'])} {fmt_ci(pooled['kappa_interval'])}, "
                         f"Fisher p {fmt_p(pooled['fisher_p'])}: "
                         + ("associated" if pooled["shown"] else "no association shown"))
    else:
        pooled_answer = (f"kappa {fmt(kappa['value'])} with no usable interval, Fisher p "
                         f"{fmt_p(pooled['fisher_p'])}"
                         + (" counting runs of one task as independent: too few tasks to "
                            "tell" if pooled["runs_counted_as_independent"] else
                            ": associated only as far as that p can say" if pooled["shown"]
                            else ": no association shown"))
    if within["p"] is None:
        within_answer = "nothing to compare: no task has both claimed and unclaimed runs"
    else:
        within_answer = (f"exact test stratified by task, {plural(within['tasks'], 'task')} "
                         f"with claimed and unclaimed runs, p {fmt_p(within['p'])}"
                         + (f", common odds ratio {fmt(within['odds_ratio'])}"
                            if within["odds_ratio"] is not None else "") + ": "
                         + ("associated" if within["shown"] else "no association shown"))
    sentences = [f"Two questions. Pooled over all runs ({pooled['question'].split(': ', 1)[1]}):"
                 f" {pooled_answer}. Within tasks ({within['question'].split(': ', 1)[1]}): "
                 f"{within_answer}."]
    if q["through_tasks"]:
        sentences.append("The two disagree: the association runs through the tasks, not within "
                         "them. Claims and successes both follow which task a run was on; "
                         "within a task the claim does not tell a success from a failure.")
    elif q["within_only"]:
        sentences.append("The two disagree: within tasks the claim tells a success from a "
                         "failure, though pooled over runs the differences between tasks hide "
                         "it.")
    return sentences


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
        ceiling = kappa.get("max_given_margins")
        if ceiling is not None and ceiling < USEFUL_AGREEMENT:
            sentences.append(f"No table with these margins reaches kappa "
                             f"{fmt(USEFUL_AGREEMENT, 1)} (the most is {fmt(ceiling)}): at these "
                             f"rates of claims and of verified runs, useful agreement is out "
                             f"of reach.")
    if "questions" in result:
        sentences += question_sentences(result)
    if too_few_clusters(result["n_clusters"]) and case.get("kappa_interval") is None \
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
    interval += f"; with these margins kappa is at most {fmt(kappa['max_given_margins'])}"
    evidence = (f"{interval}; Fisher p {fmt_p(result['fisher_p'])}, "
                f"claim AUC {fmt(result['claim_auc']['value'])}")
    if "within_tasks_p" in case:
        within = result["claim_within_tasks"]
        evidence += ("; Fisher counts runs of one task as independent, and within tasks "
                     + (f"(exact test stratified by task, {plural(within['tasks'], 'task')}) "
                        f"p is {fmt_p(within['p'])}" if within["p"] is not None
                        else "nothing can be compared: " + within["undefined"]))
    # The first sentence always answers the pooled question and says so; the
    # within-task question follows (question_sentences), at every task count.
    pooled = "Pooled over all runs"
    within_shown = result.get("questions", {}).get("within_tasks", {}).get("shown")
    if case["case"] == "informative" and case["direction"] == "right":
        slight = (f" It is at best slight agreement: the interval lies below {bound}."
                  if case["at_best_slight"] else "")
        return [f"{pooled}, the claim carries information about success ({evidence}).{slight}"]
    if case["case"] == "informative":
        return [f"{pooled}, the claim carries information in the wrong direction: claims are "
                f"more common on runs that failed ({evidence})."]
    if case["case"] == "no_useful_agreement" and within_shown:
        return [f"{pooled}, the data exclude any useful agreement between claim and success: "
                f"kappa's interval lies wholly below {bound}, where Landis and Koch's "
                f"'slight' agreement ends ({evidence}). That answers the pooled question "
                f"only: within tasks the claim does tell a success from a failure (below), "
                f"so it is not without information."]
    if case["case"] == "no_useful_agreement":
        return [f"{pooled}, the claim carries no usable information about success: the data "
                f"exclude any useful agreement, since kappa's interval lies wholly below "
                f"{bound}, where Landis and Koch's 'slight' agreement ends ({evidence}; AUC "
                f"0.5 is chance)."]
    few = (f"too few tasks to tell whether the claim carries information about success "
           f"({evidence}): with fewer than {FEW_CLUSTERS} tasks there is no task interval "
           f"to lean on"
           if case.get("needs_tasks") else
           f"too few runs to tell whether the claim carries information about success "
           f"({evidence}): neither a real association nor its absence is shown")
    sentences = [f"{pooled}, {few}."]
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
    elif case.get("needs_tasks"):
        need += f"; a task interval needs at least {FEW_CLUSTERS} tasks"
    sentences.append(need + ".")
    return sentences


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
    """One rater's label of a run (a --raters column's cell or a filled sheet's claim):
    claimed, not or equivocal; an empty cell is a run not rated."""
    if is_missing(value):
        raise InputError(f"{where}: not rated (use claimed, not claimed or equivocal)")
    claim = read_claim(value, where)
    return "equivocal" if claim == "equivocal" else ("claimed" if claim else "not")


def runs_columns(table, *, run_id=None, task=None, claim=None, verified=None,
                 condition=None, replicate=None, cost=None, raters=None, verdicts=False,
                 ratings=False):
    """The columns read_runs reads, resolved once from the flags that name them (None:
    the first default name present): {run_id, task, model, raters, claim, verified,
    verified_beside, condition, replicate, cost, verdicts}.

    With `verdicts` the verified outcome comes later, from join_verdicts, and a
    verified column of the table's own is compared, never used; with `ratings` (filled
    sheets) or `raters` (rater columns, 'a,b,c') the claim column may be absent.
    """
    columns = {"verdicts": verdicts}
    columns["run_id"] = table.column(run_id, flag="--run-id", candidates=RUN_ID_COLUMNS,
                                     required=bool(run_id))
    columns["task"] = table.column(task, flag="--task", candidates=TASK_COLUMNS,
                                   required=bool(task))
    columns["model"] = (table.column(None, candidates=VERDICT_MODEL_COLUMNS, required=False)
                        if verdicts else None)
    rater_columns = [c.strip() for c in raters.split(",")] if raters else []
    if raters and len(rater_columns) < 2:
        raise InputError("--raters: name at least two rater columns, e.g. a,b,c")
    for rater in rater_columns:
        table.column(rater, flag="--raters")
    columns["raters"] = rater_columns
    columns["claim"] = table.column(claim, flag="--claim", candidates=CLAIM_COLUMNS,
                                    required=not (rater_columns or ratings))
    columns["verified"] = None if verdicts else table.column(
        verified, flag="--verified", candidates=VERIFIED_COLUMNS)
    columns["verified_beside"] = table.column(
        verified, flag="--verified", candidates=VERIFIED_COLUMNS,
        required=bool(verified)) if verdicts else None
    columns["condition"] = table.column(condition, flag="--condition",
                                        candidates=("condition",), required=bool(condition))
    columns["replicate"] = table.column(replicate, flag="--replicate",
                                        candidates=REPLICATE_COLUMNS, required=bool(replicate))
    columns["cost"] = table.column(cost, flag="--cost") if cost else None
    return columns


def read_runs(table, columns, ratings=None):
    """Turn table rows into run dicts, checking every cell it uses.

    `columns` are runs_columns' resolved columns; with `ratings` ({run id: labels},
    from read_ratings) the claim is the raters' majority.
    """
    verdicts, raters = columns["verdicts"], columns["raters"]
    run_id_col, task_col, model_col = columns["run_id"], columns["task"], columns["model"]
    claim_col, verified_col = columns["claim"], columns["verified"]
    beside_col, condition_col = columns["verified_beside"], columns["condition"]
    replicate_col, cost_col = columns["replicate"], columns["cost"]
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
        if model_col:
            run["model"] = row[model_col].strip()
        if raters or ratings:
            run["raters"] = (rated(ratings, run_id, table.where(i)) if ratings else
                             [rater_label(row[c], table.where(i, c)) for c in raters])
            label = majority_label(run["raters"])
            run["claim"] = "equivocal" if label == "equivocal" else label == "claimed"
        else:
            run["claim"] = claim_cell(table, i, claim_col)
        if verdicts:
            run["verified"] = None            # filled in by apply_verdicts
            run["table_verified"] = optional_bool(row[beside_col]) if beside_col else None
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
    return runs, {"task": task_col, "raters": raters or (ratings and ratings["files"]),
                  "run_id": run_id_col, "verified": verified_col, "replicate": replicate_col,
                  "verified_beside": beside_col,
                  "claim_source": claim_source(table, claim_col, raters, ratings)}


def claim_cell(table, index, column):
    """A run's claim; an empty cell in a table of agent runs says how to rate it."""
    value = table.rows[index][column]
    if is_missing(value) and column == SUBMITTED_COLUMN:
        fmt = table.rows[index].get("format", "")
        raise InputError(f"{table.where(index, column)}: {fmt or 'this'} run records no "
                         f"ending (no result line or task_complete: an interactive "
                         f"session), so no submission to read; rate the final messages "
                         f"(--rating-sheet sheet.csv, then --ratings), or give a runs.csv "
                         f"with a claimed column beside the transcripts")
    if is_missing(value) and any(c in table.columns for c in MESSAGE_COLUMNS):
        raise InputError(f"{table.where(index, column)}: the claim is empty: this run's "
                         f"record states no claim of its own, so rate the final messages: "
                         f"write a blind sheet with --rating-sheet sheet.csv, have raters "
                         f"fill it, then read it back with --ratings a.csv,b.csv,c.csv "
                         f"--rating-key sheet.key.csv")
    return read_claim(value, table.where(index, column))


def claim_from(table, *, claim=None, definition=None, rated=False):
    """Which definition of a claim the audit uses (`definition`, from --claim-from, else
    the input's default): 'rated' with --raters or --ratings (`rated`); 'column' for a
    runs table, or agent output whose claimed column (`claim`, from --claim) the runs
    table beside it fills; 'submitted' for agent output with no such column (the
    harness's own record of how each run ended)."""
    claim_col = table.column(claim, flag="--claim", candidates=CLAIM_COLUMNS,
                             required=False)
    has_column = claim_col is not None and (bool(claim) or any(
        not is_missing(row[claim_col]) for row in table.rows))
    has_submitted = SUBMITTED_COLUMN in table.columns and "format" in table.columns
    chosen = definition or ("rated" if rated else "column" if has_column or
                            not has_submitted else "submitted")
    if chosen == "rated" and not rated:
        raise InputError("--claim-from rated: give the raters (--raters a,b,c, or --ratings "
                         "with --rating-key; --rating-sheet writes the blind sheet)")
    if chosen == "submitted" and not has_submitted:
        raise InputError(f"--claim-from submitted: {table.name} is not agent output, so no "
                         f"harness recorded how its runs ended (use --claim-from column)")
    if chosen != "rated" and rated:
        raise InputError(f"--claim-from {chosen}: --raters and --ratings give a rated claim; "
                         f"drop them or use --claim-from rated")
    return chosen


CLAIM_DEFINITIONS = {
    "submitted": "the harness's own record of how each run ended (yes: the agent itself "
                 "chose to stop and submit; no: the harness stopped it at a limit, "
                 "submitted for it or it crashed): a different, weaker claim than the "
                 "seed report's, a blind rating of the final message (the seed report: "
                 f"{SEED_REPORT}, section 8)",
    "rated": "a blind rating of each run's final message, as in the seed report "
             f"({SEED_REPORT}, section 8)",
    "column": "the claim column as the runs table gives it (the table does not say how "
              "it was made)",
}


def claim_source(table, claim_col, raters, ratings):
    """Where the claim came from, in the report's words."""
    if claim_col == SUBMITTED_COLUMN and "format" in table.columns:
        formats = sorted({row["format"] for row in table.rows} - {""})
        records = [f"{HARNESS_BY_FORMAT[f]['label']}, {HARNESS_BY_FORMAT[f]['records']}"
                   for f in formats if f in HARNESS_BY_FORMAT]
        return (f"column {claim_col!r}, the harness's own record of how each run ended "
                f"({'; '.join(records) or ', '.join(formats)})")
    if ratings:
        return (f"the majority label of {len(ratings['files'])} blind rating sheets "
                f"({', '.join(map(relative_path, ratings['files']))}), mapped to runs by "
                f"{relative_path(ratings['key'])}")
    if raters:
        return f"the majority label of the rater columns {', '.join(raters)}"
    if "format" not in table.columns:
        return f"column {claim_col!r}"
    return f"column {claim_col!r}, from the runs table beside the agent output"


def other_definitions(table, runs, chosen, found):
    """The delivery rate under each other definition of a claim the input carries
    (the harness's submission beside a rated or column claim, or the column beside the
    submission), on the same checked runs: [{definition, column, claims, verified,
    delivery_rate}]. A definition left blank on some of those runs is left out."""
    if found["run_id"] is None:
        return []
    index = {row[found["run_id"]].strip(): row for row in table.rows}
    candidates = []
    if chosen != "submitted" and SUBMITTED_COLUMN in table.columns and \
            "format" in table.columns:
        candidates.append(("submitted", SUBMITTED_COLUMN))
    claim_col = table.column(None, candidates=CLAIM_COLUMNS, required=False)
    if chosen == "submitted" and claim_col:
        candidates.append(("column", claim_col))
    out = []
    for definition, column in candidates:
        cells = [(index[run["run_id"]][column], run["verified"]) for run in runs
                 if run["verified"] is not None and run["run_id"] in index]
        if not cells or any(is_missing(cell) for cell, _ in cells):
            continue
        claims = [bool(v) for cell, v in cells if read_claim(cell, column) is True]
        out.append({"definition": definition, "column": column, "claims": len(claims),
                    "verified": sum(claims),
                    "delivery_rate": proportion(sum(claims), len(claims),
                                                "no run claimed completion")})
    return out


def apply_verdicts(runs, found, source, runs_table, any_model=False, empty_diffs=()):
    """Join the verdicts to the runs; fill verified (and the task where the table has
    none); return what the report says about the join. `empty_diffs`: the run ids
    agent output records an empty diff for (failed where the verdicts leave them out)."""
    keyed = [{"run_id": run["run_id"] if found["run_id"] else None,
              "task": run["task"] if found["task"] else None,
              "model": run.get("model") or None, "label": run["run_id"],
              "empty_diff": run["run_id"] in empty_diffs} for run in runs]
    joined = join_verdicts(source, keyed, runs_table=runs_table, any_model=any_model)
    replaced = column_against_verdicts(runs, joined["verdicts"], found)
    for run, verdict in zip(runs, joined["verdicts"]):
        run["verified"] = verdict["verified"]
        if not found["task"] and verdict["instance_id"]:
            run["task"] = verdict["instance_id"]
    if not found["task"] and all(v["instance_id"] for v in joined["verdicts"]):
        found["task"] = "instance_id (from --verdicts)"
    extras = {"verdict_source": {"file": relative_path(source["name"]),
                                 "format": source["format"],
                                 "joined_on": joined["key"],
                                 "model_check": joined["model_check"]},
              "verdicts_not_in_runs": joined["not_in_runs"]}
    if joined["empty_ungraded_note"]:
        extras["assumptions"] = [joined["empty_ungraded_note"][0].upper()
                                 + joined["empty_ungraded_note"][1:] + "."]
    if replaced:
        extras["verdict_source"]["replaces"] = replaced
    if joined["unchecked"]:
        extras["grading_errors"] = {s: len(ids) for s, ids in joined["unchecked"].items()}
        extras["grading_error_runs"] = joined["unchecked"]
    return extras


def column_against_verdicts(runs, verdicts, found):
    """The runs table's own verified column against the joined verdicts: how many
    runs it defines, and on how many they disagree; the verdicts win. None when
    the table has no such column."""
    column = found.get("verified_beside")
    if not column:
        return None
    return set_aside(column, [(run["table_verified"], v["verified"])
                              for run, v in zip(runs, verdicts)])


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
    counts, given = dict.fromkeys(FIELDS, 0), set()
    for part in text.split(","):
        key, _, value = part.partition("=")
        key = key.strip()
        if key not in counts or not value.strip().isdigit():
            raise InputError(f"--counts: expected tp=N,fp=N,fn=N,tn=N (optionally "
                             f"eq_verified=N,eq_failed=N), got {part.strip()!r}")
        if key in given:
            raise InputError(f"--counts: {key} is given twice ({counts[key]} and "
                             f"{int(value)}); give each cell once")
        counts[key] = int(value)
        given.add(key)
    missing = [key for key in ("tp", "fp", "fn", "tn") if key not in given]
    if missing:
        raise InputError(f"--counts: no {', '.join(missing)}: give all four cells "
                         f"tp=N,fp=N,fn=N,tn=N (a cell with no runs is =0)")
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


# === Rating sheets ===
def rating_sheet(run_ids, messages, seed):
    """The blind sheet and its key: runs in a seeded shuffle, numbered S001, S002, ...

    Returns (sheet rows [sheet id, message, ''], key rows [sheet id, run id]).

    >>> rating_sheet(["r1", "r2", "r3"], ["a", "b", "c"], 1)[1]
    [['S001', 'r1'], ['S002', 'r3'], ['S003', 'r2']]
    """
    order = list(range(len(run_ids)))
    random.Random(f"{seed}:rating-sheet").shuffle(order)
    width = max(3, len(str(len(order))))
    ids = [f"S{number:0{width}d}" for number in range(1, len(order) + 1)]
    return ([[sheet_id, messages[i], ""] for sheet_id, i in zip(ids, order)],
            [[sheet_id, run_ids[i]] for sheet_id, i in zip(ids, order)])


def sheet_csv_text(header, rows):
    """Rows of cells (lists) as CSV with LF line ends."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def key_path(sheet_path):
    """Where the key goes: beside the sheet, sheet.csv -> sheet.key.csv."""
    root, ext = os.path.splitext(sheet_path)
    return f"{root}.key{ext or '.csv'}"


def write_rating_sheet(inputs, runs_path, *, run_id=None, sheet_path, seed, task_map=None):
    """--rating-sheet: write the blind sheet of the runs table at `runs_path` (its run
    ids in the column `run_id`, else the default names) to `sheet_path` and, beside it,
    its key; return the message, whose command reads the sheets back."""
    table = inputs.read_table(runs_path)
    run_col = table.column(run_id, flag="--run-id", candidates=RUN_ID_COLUMNS,
                           required=bool(run_id))
    message_col = table.column(None, flag="--rating-sheet", candidates=MESSAGE_COLUMNS,
                               required=False)
    if message_col is None:
        raise InputError(f"{table.name}: no final message column to rate (looked for "
                         f"{', '.join(MESSAGE_COLUMNS)}); columns are {', '.join(table.columns)}")
    run_ids = [row[run_col].strip() if run_col else f"row-{line}"
               for row, line in zip(table.rows, table.lines)]
    duplicate = next((r for r in run_ids if run_ids.count(r) > 1), None)
    if duplicate is not None:
        raise InputError(f"{table.name}: run id {duplicate!r} appears twice; the key needs "
                         f"one row per run")
    sheet, key = rating_sheet(run_ids, [row[message_col] for row in table.rows], seed)
    sheet_text, key_text = (sheet_csv_text(SHEET_COLUMNS, sheet),
                            sheet_csv_text(("sheet_id", "run_id"), key))
    keyfile = key_path(sheet_path)
    for path in (sheet_path, keyfile):
        inputs.guard_output(path)
    if os.path.exists(keyfile):
        with open(keyfile, encoding="utf-8", newline="") as handle:
            if handle.read() != key_text:
                raise InputError(f"{keyfile}: a different key is already there, and filled "
                                 f"sheets may depend on it; move it away or choose another "
                                 f"sheet name")
    write_atomic(keyfile, key_text)
    write_atomic(sheet_path, sheet_text)
    lines = [f"Wrote {relative_path(sheet_path)}: {plural(len(sheet), 'final message')} "
             f"in a shuffled order (seed {seed}), columns {', '.join(SHEET_COLUMNS)}; no "
             f"run id, model or outcome is on it.",
             f"Wrote its key {relative_path(keyfile)} (sheet id -> run id): keep it away from "
             f"the raters.",
             "Each rater fills the claim column of a copy of the sheet with claimed, not "
             "claimed or equivocal, blind to the outcome. Then:"]
    # The audit needs the verified outcomes too, which the sheet step never reads.
    lines[-1] = lines[-1].replace(" Then:", " Then (add --verdicts FILE unless the runs "
                                            "table has a verified column):")
    command = [f"python3 delivery_audit.py {shell_word(relative_path(runs_path))} \\",
               f"    --ratings a.csv,b.csv,c.csv --rating-key "
               f"{shell_word(relative_path(keyfile))}"]
    if task_map:                        # the transcripts' tasks, as for the sheet
        command[-1] += " \\"
        command.append(f"    --task-map {shell_word(relative_path(task_map))}")
    return ("\n".join(textwrap.fill(line, 100) for line in lines) + "\n    "
            + "\n    ".join(command) + "\n")


def read_ratings(inputs, files, keyfile):
    """--ratings: {"files", "key", "labels": {run id: [label per sheet]}}."""
    if len(files) < 2:
        raise InputError("--ratings: give at least two filled sheets, e.g. a.csv,b.csv,c.csv")
    twice = next((f for f in files if files.count(f) > 1), None)
    if twice:
        raise InputError(f"--ratings: {twice} is named twice; give each rater's sheet once")
    if not keyfile:
        raise InputError("--ratings needs the key written with the sheet: add --rating-key "
                         "FILE (--rating-sheet sheet.csv wrote it as sheet.key.csv)")
    key = inputs.read_table(keyfile)
    sheet_col = key.column("sheet_id", flag="--rating-key")
    run_col = key.column("run_id", flag="--rating-key")
    run_of = {row[sheet_col].strip(): row[run_col].strip() for row in key.rows}
    labels = {run: [] for run in run_of.values()}
    for path in files:
        sheet = inputs.read_table(path)
        id_col, claim_col = sheet.column("sheet_id"), sheet.column("claim")
        seen = {}
        for i, row in enumerate(sheet.rows):
            sheet_id = row[id_col].strip()
            where = f"{sheet.where(i, claim_col)} (sheet id {sheet_id})"
            if sheet_id not in run_of:
                raise InputError(f"{sheet.where(i, id_col)}: sheet id {sheet_id!r} is not in "
                                 f"the key {keyfile}")
            if sheet_id in seen:
                raise InputError(f"{sheet.where(i, id_col)}: sheet id {sheet_id!r} appears "
                                 f"twice (first at row {seen[sheet_id]})")
            seen[sheet_id] = sheet.lines[i]
            labels[run_of[sheet_id]].append(rater_label(row[claim_col], where))
        unrated = sorted(set(run_of) - set(seen))
        if unrated:
            raise InputError(f"{path}: {plural(len(unrated), 'sheet id')} of the key missing: "
                             f"{', '.join(unrated[:10])}{' ...' if len(unrated) > 10 else ''}")
    return {"files": list(files), "key": keyfile, "labels": labels}


def rated(ratings, run_id, where):
    """The labels the sheets gave one run."""
    if run_id not in ratings["labels"]:
        raise InputError(f"{where}: run {run_id!r} is not in the rating key "
                         f"{ratings['key']}; write a new sheet with --rating-sheet")
    return ratings["labels"][run_id]


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


def render_opening(result, style, source, heading):
    """The title, the runs and clusters, and where the claims and verdicts came from."""
    out = [heading(f"Delivery audit: {relative_path(source)}"), ""]
    out.append((f"{plural(result['n_runs'], 'run')} in {plural(result['n_tasks'], 'task')}"
                if result["clusters"] == "tasks" else
                f"{plural(result['n_runs'], 'run')}; no task column, so each run is its own "
                f"cluster")
               + (f"; {result['n_checked']} verified (sampling mode, see below)"
                  if "sampling" in result else "") + ".")
    apart = [""] if style == "markdown" else []      # Markdown would join the lines
    for note in result.get("assumptions", ()):
        out += apart + [note]
    if "claim_source" in result:
        out += apart + [f"Claims: {result['claim_source']}."]
    if "claim_definition_text" in result:
        out += apart + [f"A claim here is {result['claim_definition_text']}."]
    if "verdict_source" in result:
        v = result["verdict_source"]
        out += apart + [f"Verified outcomes: {v['format']} {v['file']}, joined on "
                        f"{v['joined_on']}; model: {v['model_check']}."]
        if v.get("replaces"):
            r = v["replaces"]
            out += apart + [f"The runs table's {set_aside_text(r)}."]
    return out


def render_counts(result, style, sub):
    """The 2x2 table of claims against verified outcomes, and the equivocal count."""
    c = result["counts"]
    out = ["", sub("Claims against verified outcomes"), ""]
    out.append(render_table(
        ["", "verified", "not verified", "total"],
        [["claimed", c["tp"], c["fp"], c["claims"]],
         ["not claimed", c["fn"], c["tn"], c["fn"] + c["tn"]],
         ["total", c["verified"], c["fp"] + c["tn"], c["runs"]]], style))
    out.append("")
    out.append(f"Equivocal messages: {c['equivocal']} (read as not claiming; "
               f"{c['equivocal_verified']} verified, {c['equivocal_failed']} not)."
               if c["equivocal"] else "No equivocal messages.")
    return out


def render_definitions(result, style, sub):
    """The delivery rate under each definition of a claim the input carries, side by
    side (only where it carries more than one)."""
    others = result.get("other_definitions") or []
    if not others:
        return []
    own = {"definition": result["claim_definition"],
           "column": f"{result['claim_column']} (audited above)",
           "claims": result["counts"]["claims"], "verified": result["counts"]["tp"],
           "delivery_rate": result["delivery_rate"]}
    rows = [[d["definition"], d["column"], d["claims"], d["verified"],
             fmt(d["delivery_rate"]["value"]), fmt_ci(d["delivery_rate"]["ci"])]
            for d in [own] + others]
    return ["", sub("Delivery rate by each definition of a claim"), "",
            render_table(["claim", "column", "claims", "verified", "delivery rate r",
                          "95% exact"], rows, style), "",
            "The same checked runs under each definition the input carries; published "
            "rates that define a claim differently cannot be compared."]


def render_figures(result, style, sub):
    """The figures with their exact and bootstrap intervals, and the notes on them."""
    cluster_name = "task" if result["clusters"] == "tasks" else "run"
    out = ["", sub("The claim as evidence of delivery"), ""]
    rows = [[label] + figure_cells(result[name], name) for name, label in FIGURE_ROWS]
    at = next(i for i, (name, _) in enumerate(FIGURE_ROWS) if name == "kappa") + 1
    rows.insert(at, ["kappa's maximum given the margins",
                     fmt(result["kappa"].get("max_given_margins")), "", ""])
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
    return out + withheld_notes(result, cluster_name)


def render_equivocal(result, style, sub):
    """What changes if the equivocal messages counted as claims."""
    c, eq = result["counts"], result["equivocal_as_claims"]
    out = ["", sub(f"If the equivocal messages ({c['equivocal']}) counted as claims"), ""]
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
        to = "\u2192" if style == "markdown" else "->"
        out.append(f"Claims {c['claims']} {to} {e['tp'] + e['fp']}, false claims {c['fp']} "
                   f"{to} {e['fp']}. Figures that change at 3 decimals:")
        out.append("")
        out.append(render_table(["figure", "headline", "equivocal as claims"], changes, style))
    else:
        out.append("Nothing changes at 3 decimals.")
    return out


def render_sampling(result, sub):
    """Sampling mode: the figures projected from the verified runs onto every claim."""
    if "sampling" not in result:
        return []
    s = result["sampling"]
    out = ["", sub("Sampling mode: projected onto every claim"), ""]
    out.append(f"Only {s['runs_checked']} of {s['runs_checked'] + s['runs_unchecked']} "
               f"runs were verified ({s['claims_checked']} of "
               f"{plural(s['claims'], 'claim')}); every figure above is computed on the "
               f"verified runs.")
    if result.get("grading_errors"):
        out.append("Runs the grader could not verify (left out, not counted as failures): "
                   + grading_error_text(result["grading_error_runs"]) + ".")
    if s["claims"] == s["claims_checked"]:    # nothing to project: the count is known
        out.append(realised_line(s))
        return out
    out.append(f"Expected verified deliveries among all {plural(s['claims'], 'claim')} (the "
               f"expectation, not the count a bill will meet): "
               f"{s['verified_deliveries_seen']} verified plus r times the "
               f"{s['claims'] - s['claims_checked']} unchecked, "
               f"{fmt(s['expected_verified_deliveries']['value'], 1)} "
               f"{fmt_ci(s['expected_verified_deliveries']['ci'], 1)}; inflation "
               f"{fmt(s['inflation']['value'])} {fmt_ci(s['inflation']['ci'])} at the "
               f"expectation (r's exact interval, projected: an interval for the expectation).")
    out.append(realised_line(s))
    return out


def realised_line(s):
    """The sentence on the realised deliveries: their predictive interval, or why none."""
    realised = s["realised_verified_deliveries"]
    if realised.get("exact"):
        return (f"Realised verified deliveries: {realised['ci'][0]} ({realised['exact']}); "
                f"inflation {fmt(s['inflation']['value'])}.")
    if realised.get("withheld"):
        return (f"No predictive interval for the realised verified deliveries: "
                f"{realised['withheld']}.")
    low, high = realised["ci"]
    return (f"Realised verified deliveries, 95% predictive interval ({realised['method']}, "
            f"{realised['draws']:,} draws): [{low}, {high}]; inflation "
            f"{fmt_ci(s['realised_inflation']['ci'])}.")


def render_conditions(result, style, sub):
    """The table per condition, the stratified exact test and McNemar (or why not)."""
    if "conditions" not in result:
        return []
    out = ["", sub("By condition"), ""]
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
    return out


def render_raters_and_criteria(result, sub):
    """Agreement among the raters, and what the graded criteria add."""
    out = []
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
    return out


def render_cost(result, style, sub):
    """What the runs cost, per claim and per verified delivery."""
    if "cost" not in result:
        return []
    k = result["cost"]
    sampled = k["runs_priced_and_verified"] < k["runs_priced"]
    note = " (verified runs only)" if sampled else ""
    table = render_table(["", "amount"], [
        ["total", fmt(k["total"], 2)], ["per run", fmt(k["per_run"], 2)],
        ["per claim (what per-claim billing charges)", fmt(k["per_claim"], 2)],
        ["per verified delivery" + note, fmt(k["per_verified_delivery"], 2)],
        ["per verified completion, any claim" + note,
         fmt(k["per_verified_completion"], 2)],
        ["spent on runs whose claim was false" + note,
         fmt(k["spent_on_false_claims"], 2)]], style)
    unpriced = result["n_runs"] - k["runs_priced"]
    if not unpriced:
        return ["", sub("Cost"), "", table]
    return ["", sub("Cost"), "", f"{plural(unpriced, 'run')} with no cost "
            f"{'is' if unpriced == 1 else 'are'} left out: every figure reads the "
            f"{k['runs_priced']} priced runs.", "", table]


def render_verdict(result, style, sub):
    """Ignored verdicts, if any, and the verdict's sentences."""
    out = []
    if result.get("verdicts_not_in_runs"):
        out += ["", f"{plural(result['verdicts_not_in_runs'], 'verdict')} in the --verdicts "
                    f"file named runs that are not in the runs table; they were ignored."]
    out += ["", sub("Verdict"), ""]
    # Markdown joins consecutive lines into one paragraph; keep the sentences apart.
    return out + (result["verdict"] if style == "text"
                  else [line for sentence in result["verdict"] for line in (sentence, "")][:-1])


def render(result, style, source):
    """The whole report as text or Markdown; reads the result, computes nothing."""
    heading = (lambda t: f"## {t}") if style == "markdown" else (lambda t: f"{t}\n{'=' * len(t)}")
    sub = (lambda t: f"### {t}") if style == "markdown" else (lambda t: t)
    out = (render_opening(result, style, source, heading) + render_counts(result, style, sub)
           + render_figures(result, style, sub) + render_definitions(result, style, sub) + render_equivocal(result, style, sub)
           + render_sampling(result, sub) + render_conditions(result, style, sub)
           + render_raters_and_criteria(result, sub) + render_cost(result, style, sub)
           + render_verdict(result, style, sub))
    if style == "markdown":
        out = [nonbreaking(line) for line in markdown_paragraphs(out)]
    out += ["", render_provenance(result["provenance"], style)]
    if style == "text":       # wrap prose; tables, headings and the footer stay as they are
        out = [line if "\n" in line or line.startswith((" ", "-", "=")) or "  " in line
               else textwrap.fill(line, 100, break_on_hyphens=False) for line in out]
    text = "\n".join(out) + "\n"
    return fit_to_paste(text, "attach the --format json output, which holds every row") \
        if style == "markdown" else text


SVG_COLOURS = {"exact": SVG_INK, "bootstrap": "#0969da", "value": "#cf222e", "grid": "#d0d7de"}


def svg_axis(values, step=0.25):
    """The x-axis range: the drawn values and interval ends, widened to whole steps,
    never beyond [-1, 1].

    >>> svg_axis([0.043, 0.939, -0.147, 0.127])
    (-0.25, 1.0)
    >>> svg_axis([0.2, 0.7])
    (0.0, 0.75)
    """
    low = max(-1.0, math.floor(min(values + [0.0]) / step) * step)
    high = min(1.0, math.ceil(max(values) / step) * step)
    return low, max(high, low + step)


def svg_rows(result):
    """(label, value, exact interval, bootstrap interval) for each drawn figure."""
    rows = []
    for name, label in FIGURE_ROWS:
        if name == "inflation":
            continue
        figure = result[name]
        exact = None if name == "kappa" else figure.get("ci")
        boot = figure.get("ci" if name == "kappa" else "ci_cluster")
        rows.append((label.split(" (")[0], figure["value"],
                     exact if exact and exact[0] is not None else None,
                     boot if boot and boot[0] is not None and boot[1] is not None else None))
    return rows


def mcnemar_line(pair):
    """The McNemar sentence: how the runs were paired, how many were not, and p."""
    first, second = pair["conditions"]
    unpaired = (f"{plural(pair['unpaired'], 'run')} left unpaired" if pair["unpaired"]
                else "no run left unpaired")
    return (f"McNemar, {first} vs {second}: {plural(pair['pairs'], 'pair')} matched on task "
            f"and column {pair['paired_by'][1]!r}, {unpaired}; {pair['discordant']} discordant "
            f"({pair['b']} complete only in {first}, {pair['c']} only in {second}); exact p "
            f"{fmt_p(pair['p'])}.")


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
    """Each rate as a dot with its exact and its bootstrap interval, drawn from the
    numbers the report prints; the title and caption quote the same numbers."""
    c, rows = result["counts"], svg_rows(result)
    cluster = "task" if result["clusters"] == "tasks" else "run"
    width, row_height, left, plot, top = 720, 30, 270, 420, 78
    height = top + row_height * len(rows) + 92
    drawn = [v for _, value, exact, boot in rows for v in
             [value] + list(exact or []) + list(boot or []) if v is not None]
    low, high = svg_axis(drawn)
    # The legend and caption name a bootstrap interval only where one is drawn: with
    # too few clusters every one is withheld, as the text says.
    any_boot = any(boot for _, _, _, boot in rows)

    def x(value):
        return left + plot * (value - low) / (high - low)
    title = (f"Claims against verified outcomes: {plural(c['runs'], 'run')}, "
             f"{plural(c['claims'], 'claim')}, {c['fp']} false")
    parts = svg_open(width, height, title)
    parts.append(f'<text x="10" y="24" font-size="15" font-weight="bold">{svg_escape(title)}'
                 f'</text>')
    legend_y = 48
    parts += [f'<circle cx="16" cy="{legend_y - 4}" r="4" fill="{SVG_COLOURS["value"]}"/>',
              f'<text x="26" y="{legend_y}">value</text>',
              f'<line x1="80" y1="{legend_y - 4}" x2="110" y2="{legend_y - 4}" '
              f'stroke="{SVG_COLOURS["exact"]}" stroke-width="2.5"/>',
              f'<text x="116" y="{legend_y}">95% exact (Clopper-Pearson)</text>',
              f'<line x1="320" y1="{legend_y - 4}" x2="350" y2="{legend_y - 4}" '
              f'stroke="{SVG_COLOURS["bootstrap"]}" stroke-width="2.5" '
              f'stroke-dasharray="5 3"/>' if any_boot else "",
              f'<text x="356" y="{legend_y}">95% {cluster} bootstrap '
              f'({result["boot"]} resamples)</text>' if any_boot else
              f'<text x="320" y="{legend_y}">no bootstrap interval (--boot 0, or too few '
              f'clusters)</text>']
    bottom = top + row_height * len(rows) - 8
    tick = low
    while tick <= high + 1e-9:
        grid = SVG_INK if abs(tick) < 1e-9 and low < 0 else SVG_COLOURS["grid"]
        parts.append(f'<line x1="{x(tick):.1f}" y1="{top - 12}" x2="{x(tick):.1f}" '
                     f'y2="{bottom}" stroke="{grid}"/>')
        parts.append(f'<text x="{x(tick):.1f}" y="{bottom + 16}" text-anchor="middle">'
                     f'{fmt(tick, 2)}</text>')
        tick += 0.25
    for row, (label, value, exact, boot) in enumerate(rows):
        y = top + row_height * row + 4
        parts.append(f'<text x="10" y="{y + 4}">{svg_escape(label)}</text>')
        parts.append(f'<text x="{left - 12}" y="{y + 4}" text-anchor="end">{fmt(value)}</text>')
        if exact:
            parts.append(f'<line x1="{x(exact[0]):.1f}" y1="{y - 4}" x2="{x(exact[1]):.1f}" '
                         f'y2="{y - 4}" stroke="{SVG_COLOURS["exact"]}" stroke-width="2.5"/>')
        if boot:
            parts.append(f'<line x1="{x(boot[0]):.1f}" y1="{y + 4}" x2="{x(boot[1]):.1f}" '
                         f'y2="{y + 4}" stroke="{SVG_COLOURS["bootstrap"]}" stroke-width="2.5" '
                         f'stroke-dasharray="5 3"/>')
        if value is not None:
            parts.append(f'<circle cx="{x(value):.1f}" cy="{y}" r="4" '
                         f'fill="{SVG_COLOURS["value"]}"/>')
    inflation = result["inflation"]
    caption = [f"Not drawn, on another scale: inflation 1/r {fmt(inflation['value'])} "
               f"{fmt_ci(inflation.get('ci'))} (claims billed per verified delivery).",
               f"Fisher exact p {fmt_p(result['fisher_p'])}. Claim AUC and kappa have no "
               f"exact interval" + (", only the bootstrap one." if any_boot else ".")]
    for index, line in enumerate(caption):
        parts.append(f'<text x="10" y="{bottom + 44 + 18 * index}" font-size="12">'
                     f'{svg_escape(line)}</text>')
    parts.append("</svg>")
    return "\n".join(part for part in parts if part) + "\n"


# === Main ===
def build_parser():
    parser = Parser(__doc__ + HARNESS_MANUAL, prog="delivery_audit.py")
    parser.add_argument("runs", nargs="?", help="runs table (CSV, TSV, JSONL, JSON), '-' for "
                        "stdin, or a runs folder holding runs.csv")
    parser.add_argument("--demo", action="store_true",
                        help="audit the seed report's section 8 table embedded in this file")
    parser.add_argument("--counts", metavar="tp=N,fp=N,fn=N,tn=N",
                        help="audit a 2x2 table without a file (optionally eq_verified=N,"
                             "eq_failed=N: equivocal messages among fn and tn)")
    parser.add_argument("--verdicts", metavar="FILE",
                        help="take the verified outcome from a grader's output (regrade.py's "
                             "verdicts.csv, SWE-bench, sb-cli or OpenHands reports; see "
                             "'Verdicts' above)")
    parser.add_argument("--any-model", action="store_true",
                        help="join --verdicts on instance id even where the report names "
                             "another model than the runs' (default: refuse)")
    parser.add_argument("--rating-sheet", metavar="FILE",
                        help="write a blind rating sheet of the final messages to FILE, and "
                             "its key beside it (FILE.key.csv), then stop")
    parser.add_argument("--ratings", metavar="A,B,C",
                        help="filled rating sheets; the claim becomes their majority label")
    parser.add_argument("--rating-key", metavar="FILE",
                        help="the key --rating-sheet wrote (needed with --ratings)")
    parser.add_argument("--run-id", metavar="COL", help="run id column (default: run_id, id, run)")
    parser.add_argument("--task", metavar="COL",
                        help="task (cluster) column (default: task_id, instance_id, task)")
    parser.add_argument("--claim", metavar="COL", help="claim column (default: claimed, claim)")
    parser.add_argument("--claim-from", choices=("submitted", "rated", "column"),
                        help="which claim to audit: the harness's record of how each run "
                             "ended (submitted), blind raters' reading of the final message "
                             "(rated: --raters or --ratings), or the claim column (column); "
                             "default: rated with raters, else the claim column where the "
                             "runs table fills it, else submitted for agent output")
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
    add_agent_options(parser)
    add_common_options(parser, __version__, __file__, seed=DEFAULT_SEED)
    return parser


def _main(argv):
    args = build_parser().parse_args(argv)
    if args.boot < 0:
        raise InputError("--boot: expected 0 or more resamples")
    sources = sum(bool(x) for x in (args.runs, args.demo, args.counts))
    if sources != 1:
        raise InputError("give exactly one of: a runs table or folder, --demo, --counts")
    inputs = Inputs(task_map=args.task_map)      # transcripts name their tasks through it
    extras = {}
    if args.rating_sheet:
        if not args.runs or args.verdicts or args.ratings:
            raise InputError("--rating-sheet writes a sheet from a runs table or folder; "
                             "give it no --demo, --counts, --verdicts or --ratings")
        sys.stdout.write(write_rating_sheet(inputs, args.runs, run_id=args.run_id,
                                            sheet_path=args.rating_sheet, seed=args.seed,
                                            task_map=args.task_map))
        return 0
    if args.ratings and (args.raters or args.claim):
        raise InputError("--ratings gives the claim; give no --raters or --claim with it")
    if args.demo or args.counts:
        if args.verdicts or args.criteria or args.ratings:
            raise InputError("--verdicts, --ratings and --criteria need a runs table")
        counts = DEMO_COUNTS if args.demo else parse_counts(args.counts)
        runs = runs_from_counts(counts)
        source = "the seed report's section 8 table (--demo)" if args.demo else "--counts"
        extras.update(claim_definition="rated" if args.demo else "column",
                      claim_definition_text=CLAIM_DEFINITIONS["rated" if args.demo
                                                              else "column"])
        clusters_named = False
        pair_column = None
    else:
        table = inputs.read_table(args.runs)
        note = args.write_runs and write_runs_first(inputs, args.runs, args.write_runs,
                                                    args.verified, args.verdicts)
        if note:
            sys.stdout.write(note)
            return 0
        ratings = (read_ratings(inputs, [f.strip() for f in args.ratings.split(",") if f.strip()],
                                args.rating_key) if args.ratings else None)
        verdict_source = read_verdicts(inputs, args.verdicts) if args.verdicts else None
        chosen = claim_from(table, claim=args.claim, definition=args.claim_from,
                            rated=bool(args.raters or args.ratings))
        columns = runs_columns(
            table, run_id=args.run_id, task=args.task,
            claim=SUBMITTED_COLUMN if chosen == "submitted" else args.claim,
            verified=args.verified, condition=args.condition, replicate=args.replicate,
            cost=args.cost, raters=args.raters, verdicts=bool(verdict_source),
            ratings=bool(ratings))
        runs, found = read_runs(table, columns, ratings)
        if ratings:
            unknown = sorted(set(ratings["labels"]) - {r["run_id"] for r in runs})
            if unknown:
                raise InputError(f"{args.rating_key}: {plural(len(unknown), 'run')} of the key "
                                 f"not in {table.name}: {', '.join(unknown[:10])}")
        extras["claim_source"] = found["claim_source"]
        if verdict_source:
            extras.update(apply_verdicts(runs, found, verdict_source, table.name,
                                         args.any_model, getattr(table, "empty_diffs", ())))
        elif not any(r["verified"] is not None for r in runs):
            raise InputError(f"{table.name}: no run has a verified outcome (column "
                             f"{found['verified']!r} is empty on every row); grade the runs "
                             f"and give the verdicts with --verdicts")
        extras.update(claim_definition=chosen, claim_definition_text=CLAIM_DEFINITIONS[chosen],
                      claim_column="raters" if chosen == "rated" else columns["claim"],
                      other_definitions=other_definitions(table, runs, chosen, found),
                      assumptions=list(getattr(table, "notes", ()))
                      + extras.get("assumptions", []))
        if found["raters"]:
            extras["raters"] = rater_agreement([r["raters"] for r in runs])
        criteria_table = (inputs.read_table(args.criteria) if args.criteria
                          else inputs.sibling_table(args.runs, "criteria.csv"))
        if criteria_table is not None:
            extras["criteria"] = criteria_summary(read_criteria(criteria_table),
                                                  [r["run_id"] for r in runs])
        source = relative_path(table.name)
        clusters_named = bool(found["task"])
        pair_column = found.get("replicate")
    if not any(r["verified"] is not None for r in runs):
        raise InputError("no run has a verified outcome to audit against")
    if args.jobs < 0:
        raise InputError("--jobs: expected 0 (automatic) or more processes")
    if args.write_runs and not args.runs:
        write_runs(inputs, args.runs, args.write_runs)   # says there is nothing to write
    result = audit(runs, boot=args.boot, seed=args.seed, clusters_named=clusters_named,
                   jobs=args.jobs, pair_column=pair_column)
    result.update(extras)
    result["source"] = source
    result["provenance"] = provenance(__file__, __version__, argv, args.seed, inputs,
                                      output_flags=("--svg", "--write-runs"))
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
