#!/usr/bin/env python3
# /// script
# requires-python = ">=3.9"
# dependencies = []
# ///
"""Does a process measure beat counting tool calls, on the same rows, beyond chance?

Basic usage (RUNS: a table, a runs folder or agent output, as below):
    python3 auc_audit.py RUNS [--strata COLUMN] [options]
    python3 auc_audit.py RUNS --verdicts FILE        the outcome from a grader's report
    python3 auc_audit.py RUNS --format markdown      ready to paste into an issue
For example: python3 auc_audit.py examples/runs --strata condition
With no file: python3 auc_audit.py --demo (a small embedded table).
The manual follows.

auc_audit.py reads a runs table (one row per agent run: a yes/no outcome, the task,
optionally a condition, the number of tool calls, and any process measures) and
applies three gates before it believes that a measure predicts success:

  1. same rows     the measure is compared with the baseline (tool calls) on exactly
                   the runs where the measure is defined, and must beat it family-wise:
                   a joint interval over every feature tested. A measure missing on a
                   third of the runs can beat the baseline on all rows and lose on its own.
  2. search width  the outcome is shuffled (whole tasks, where tasks repeat) and the
                   whole family of measures rescored; the best of a wide family clears
                   a low bar by chance alone.
  3. clustering    runs of one task agree with each other, so intervals resample whole
                   tasks, not runs, and need at least FEW_CLUSTERS (10) tasks holding a
                   success and 10 holding a failure; and the measure must separate runs
                   within a task, where task difficulty cannot explain it: a permutation
                   test inside task x stratum cells must reject at one-sided 5%.
Every verdict also says what the data could have detected (power, below): a failed
gate on 18 tasks means "could not have seen it", not "there is nothing".

Standard library only, Python 3.9+, one file: copy it anywhere and run it.

RUNS is a CSV, TSV, JSONL or JSON table, '-' for stdin, or a runs folder holding
runs.csv (or runs.tsv/.jsonl/.json) and, optionally, tool_calls.csv, or agent output
(a SWE-agent, mini-swe-agent or OpenHands folder, Claude Code transcripts, Codex
rollouts; see "Reading harness folders" at the end of --help). On a runs table derived
from agent output the default family is the derived process measures (PROCESS_MEASURES:
the per-category call counts, the phase seconds and tokens, ran_tests_after_last_edit,
turns, tokens_total, cost_usd) and the baseline is tool_calls.

To audit the example runs folder, scoring AUCs within each condition:
    python3 auc_audit.py examples/runs --strata condition
To audit only the runs that claimed completion:
    python3 auc_audit.py examples/runs --strata condition --where claimed=yes
To test two named measures against another baseline column:
    python3 auc_audit.py examples/runs --features search_calls,impl_seconds --baseline turns_total
To reproduce the report's shuffle of runs within conditions (§7's scheme):
    python3 auc_audit.py examples/runs --strata condition --permute strata
To get JSON, Markdown for an issue, or a figure:
    python3 auc_audit.py examples/runs --format json
    python3 auc_audit.py examples/runs --format markdown --svg null.svg
To take the outcome from regrade.py's verdicts instead of the table (the first
command regrades the example; in the second, my_runs.csv is your own runs table,
with a run_id column matching the predictions you graded):
    python3 regrade.py examples/regrade/instances.jsonl examples/regrade/predictions.jsonl \\
        --repo examples/regrade/calc.bundle --out regraded
    python3 auc_audit.py my_runs.csv --verdicts regraded/verdicts.csv
To take it from SWE-bench's, sb-cli's or OpenHands' own grading (synthetic examples):
    python3 auc_audit.py examples/verdicts --features search_calls \\
        --verdicts examples/verdicts/swebench/example-org__agent-a.eval-1.json
To see it work on a small embedded table:
    python3 auc_audit.py --demo

Columns (auto-detected by name, first match wins; name them with the option):
  outcome   --outcome   verified, completed, resolved, gt_completed, outcome (yes/no)
  task      --task      task_id, instance_id, task; failing those, a column named
                        problem_id, issue_id, instance, problem, issue, task_name or
                        instance_name, else the first column ending in _id (not the
                        run id) whose values repeat across runs, with a note saying
                        which was taken (none: every run is its own cluster, the
                        within-task and task-identity figures are undefined, and the
                        verdict says "passes gates 1 and 2; gate 3 not applied: no task
                        column", never "all three")
  run id    --run-id    run_id, id, run (joins --verdicts and tool_calls.csv)
  strata    --strata    none unless named, e.g. condition
  baseline  --baseline  tool_calls
  features  --features  default: every numeric column except the run id, id-like
                        columns (id, run, task, row, replicate, rep, seed, index and
                        any name ending in _id, in any case), the outcome names, the
                        task, the strata and the baseline. A yes/no column can be
                        named explicitly; it counts as 1/0.
Empty, NA, n/a, null, none, nan and undefined mean "undefined for this run" (in
the table's own outcome column that is an error: every audited run needs an
outcome; drop it with --where; under --verdicts a run with no verdict is left out).
Numbers are read exactly: an integer cell as an integer (nanosecond timestamps beyond
2**53 keep their order and their ties), a decimal of up to 15 significant digits as
the double it rounds to (distinct such decimals stay distinct and ordered), anything
longer or in exponent form as an exact fraction. Ranks, ties, copies and the screen
compare these exact values; AUCs are exact integer ratios until printed.
If the runs folder has tool_calls.csv (one row per tool call, with a run id column),
the baseline is recomputed by counting rows per run and compared with the tool_calls
column on every run; with no such column the recomputed count is the baseline. A
--baseline naming another column is not checked against the log, and must be a
column of the table: only tool_calls is ever counted from the log.
A run id in tool_calls.csv that the runs table lacks is an error (exit 2); an audited
run with no rows there counts as zero calls, and the report says how many did. A
baseline (given or recounted) that is constant over the audited runs is an error.
With --verdicts the outcome comes from a grader's output, recognised by content:
regrade.py's verdicts.csv / verdicts.jsonl (or its --out folder), SWE-bench's run
report <model>.<run_id>.json, a report.json or a logs/run_evaluation/<run_id>/
folder of them, sb-cli's report, or OpenHands' output.swebench_eval.jsonl (each
format's rules are in delivery_audit.py --help, "Verdicts"). It joins on run id
where both sides have one, else on model (a model or model_name_or_path column)
and instance id, else on instance id alone. A run with no verdict, several runs of
one instance against verdicts keyed by instance, or a file that matches no run is
an error naming the file, and so is a report of another model than the runs'
(--any-model joins it on instance id anyway). An outcome column of the table's own
beside --verdicts is set aside (never a feature); a note says on how many runs it
disagrees with the verdicts. A grading error (an empty outcome cell, error_ids,
infrastructure failures, ...) is no verdict: the run is left out, never read as a
failure, and the report lists those runs by status.

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
                (JSON null) and gate 3 fails with "fewer than 2 clusters to resample".
                The few-clusters rule counts the clusters that hold the evidence: on
                the feature's rows, the tasks holding a success and the tasks holding
                a failure, the smaller of the two. Below FEW_CLUSTERS = 10 the
                feature's interval (and its joint interval) is withheld (undefined),
                its clustered p too, and gate 3 fails with the reason printed, the
                policy of delivery_audit.py: at 3-9 clusters a percentile interval
                covers far less than 95%, and at 10-30 it still covers only about
                0.93 (see "Calibration" in README.md). Tasks without a success add
                copies of failures only: with 3 successes in 3 of 50 tasks every
                resample holds copies of the same 3 success scores, so the bootstrap
                cannot see the success side's variance, and columns generated like
                the baseline passed. With fewer than 10 tasks in all no resamples are
                drawn.
  joint CI      gate 1's family-wise interval (max-|T|, the sup-t band of Montiel
                Olea & Plagborg-Moller 2019), from the same task resamples as the
                interval above, which stay joint across features: each feature's
                resampled diff is scaled by its bootstrap standard deviation sd; c
                is the 95% quantile over resamples of the largest |resampled diff -
                diff| / sd across the family; the interval is diff +- c sd, for every
                feature at once. Covering all features' differences together with
                95% probability, its lower end above 0 says "better than the
                baseline" at 5% family-wise. Withheld where the interval above is;
                the family is then the features with an interval (the others cannot
                pass), and with one such feature the band is still diff +- c sd.
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
                variance sums the success parts squared times I10 / (I10 - 1), the
                failure parts squared times I01 / (I01 - 1) and twice their products
                times I / (I - 1), where I10 and I01 count the tasks holding a success
                and a failure (without strata exactly Obuchowski's S10/M + S01/N +
                2 S11/(MN)); two-sided normal p. It assumes tasks independent of one
                another and enough tasks for the normal approximation, so with fewer
                than FEW_CLUSTERS (10) clusters on the rows compared its p is withheld
                ('undefined', with a note); the count is the few-clusters rule's, the
                tasks holding a success or a failure, the smaller. Undefined where
                DeLong is, or with fewer
                than 2 clusters. With no task column each run
                is its own cluster.
                Neither p enters the verdict: gate 2 uses the minP adjusted p, gate 3
                the task-cluster bootstrap interval; these two are shown beside them.
  within-task   AUC over success/failure pairs inside one cell only, a cell being a
                task's runs in one stratum (without --strata, a task's runs), in the
                feature's chosen direction (below 0.5: inside a task the signal
                points the other way), with the number of such pairs. A column
                constant within cells ties on every such pair: exactly 0.5. With
                --strata a pair across strata of one task compares conditions, not
                runs, so it never counts (a column tracking task and condition
                scored 1.000 of 200 data sets counted that way, 0.154 inside cells).
  within p      gate 3's test of the within-task AUC: a stratified (van Elteren-style)
                permutation test, one-sided. The outcomes are shuffled among the runs
                of each cell, each cell keeping its number of successes, the null
                being that inside a cell the feature says nothing about which runs
                succeed; the statistic is the within-task AUC in the direction that
                arrangement's own AUC (gate 1's, within strata) chooses, so the
                direction chosen on the data is paid for. p = the share of the
                arrangements whose statistic is >= the observed one: exact, by
                listing every arrangement, when there are at most WITHIN_EXACT_LIMIT
                (20000) of them; else (1 + shuffles at least as extreme) / (1 +
                --perms), a Monte Carlo p whose size never exceeds its level. Only
                cells holding both outcomes move. A column that knows only the task
                has within-task AUC above 0.5 about half the time (it passed all
                three gates in 0.47-0.50 of data sets when gate 3 asked only for
                > 0.5); its within p is uniform.
  task ceiling  the best AUC any function of the task alone can reach on a feature's
                rows: each run scored by its task's success rate on those rows (with
                strata, its task's rate in its stratum), read +. Ordering tasks by that
                rate wins the most pairs (swapping two adjacent tasks s, t changes the
                credit by n1_s n0_t - n1_t n0_s) and every pair inside a task ties, so a
                column constant within tasks never scores above it. Optimistic by
                construction (the rate includes the run itself), unlike task identity
                below, which is pessimistic; a feature above it beats every reading of
                the task, a feature at or below it is flagged I.
  family null   shuffle the outcome --perms times (--permute rows: across all runs;
                strata: within each stratum; tasks: whole tasks' outcomes among tasks
                of the same shape, which keeps within-task agreement: a task's shape is
                its number of runs, or with --strata its number of runs in each
                stratum; each task receives another same-shape task's number of
                successes in each stratum, placed on a random subset of its own runs
                there, so no pairing of one task's runs with another's is assumed; a
                task with no other task of its shape keeps its own counts and the
                report counts those; with no task column, or no task that can move,
                --permute tasks exits 2).
                The default is tasks whenever some task holds more than one run;
                otherwise (no task column, or one run per task, where the runs are
                the tasks) strata with --strata, else rows, and the report says why.
                Where no two tasks share a shape (or there is one task), no task
                moves and the task shuffle moves runs only inside task x stratum
                cells: a null that keeps every task's successes, so gate 2 then tests
                what a feature says within tasks, never a signal between them; the
                report says so, and --permute tasks runs there too (it exits 2 only
                when no run can move at all). It never falls back silently to a
                shuffle that ignores tasks: that printed minP p 0.004 for pure noise.
                Why tasks: the minP adjustment below is exact
                only if the shuffled outcomes are exchangeable under the null
                (Westfall & Young 1993, ch. 2, subset pivotality). Runs of one task
                share its difficulty, so they are not exchangeable with other
                tasks' runs; what is exchangeable, when no feature says anything
                about the outcome beyond the task structure, is whole tasks of the
                same shape, the unit of a cluster-randomised design's permutation
                test (Gail, Mark, Carroll, Green & Pee 1996, Statistics in Medicine
                15:1069), and inside a task its runs. Shuffling runs instead lets a
                column that only tracks task difficulty reach p < 0.001 (the family-
                wise rate under a true null was 0.21 on 20 tasks of 4 runs); the
                task shuffle holds 0.05 (README.md, "Calibration"). The row and
                strata shuffles stay available, for the report's figures and for
                tables with one run per task. Under each
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
                  minP floor  the smallest adjusted p any feature could reach with
                              these shuffles: a feature beating every shuffle still
                              counts each shuffle in which another feature beats
                              every draw, so it is about K/(N + 1) for K features,
                              not 1/(N + 1) (0.075 for 16 features and --perms 200).
                              Always in the notes; above 0.05 the note says gate 2
                              cannot pass and suggests --perms max(2000, 40 K).
                  max-AUC p   the report's §7 single-step figure ("joint p"): (1 +
                              shuffles whose family maximum AUC >= the feature's AUC) /
                              (1 + N); shown beside minP, not used by the verdict.
                Also reported, descriptively: the null median of the family maximum;
                the share of shuffles whose maximum exceeds the baseline's AUC (the
                bar); the max-AUC joint p of the observed maximum; and the report's
                robustness figure, the same joint p with the best feature removed from
                the family and from every shuffle. No p-value is ever 0. A permutation
                p at its floor 1/(N + 1) prints as '<=' that floor rounded up to 3
                decimals ('<=0.001' with 2000 shuffles); JSON keeps the full value and
                family_null.smallest_p. Every p prints to 3 decimals; below 0.0005
                as '<0.001', and a p under 0.05 that would round to 0.050 keeps the
                decimals that show it below (0.0497), or prints as '<0.050'.
  task identity each run is scored by the success rate of the OTHER runs of its task
                (leave-one-out); its AUC is what knowing only the task gives, the bar
                for "more than task difficulty". Runs alone in their task are left out;
                with fewer than 2 tasks it is undefined. It is read in the fixed +
                direction only (a higher rate means success), never the better one:
                with no task effect, leaving a run out lowers its task's rate exactly
                when the run succeeded, an artificial - signal (so a value below 0.5
                says the task predicts nothing, not that it predicts the reverse).
                That same bias makes it a low bar: the report's 0.881 figure, shown
                in the header only; flag I and the verdict use the task ceiling and
                the within-task test instead, so a verdict never holds two
                task-identity bars.
  left out      only these columns are left out of the default family, each listed
                with its reason: one with no testable AUC (undefined on every row,
                constant, one outcome class on its rows, or with --strata no stratum
                holding both; or constant within every stratum, where every counted
                pair ties: it reproduces the strata); a copy of the outcome (on its
                defined rows one value on at least 10 successes and another on at
                least 10 failures: 10 x verified + 3 is the outcome relabelled), of the
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
  verdict       a feature passes when its same-row diff > 0 and its joint interval
                lies above 0 (gate 1), its minP adjusted p < 0.05 (gate 2), and (gate
                3) its rows hold at least 10 tasks with a success and 10 with a
                failure, its task-cluster interval lies above 0, and its within p is
                below 0.05 (a column with no within-task pairs, or constant within
                cells, cannot pass: it cannot be told from task difficulty). Without
                a task column the verdict is at most "passes gates 1 and 2; gate 3
                not applied: no task column". Otherwise the first gate it fails is
                named ('fails gate 1', 'fails gate 2', 'fails gate 3' in the table),
                with the reason. "Passes all three gates" is an intersection-union
                test (Berger 1982, Technometrics 24:295): it claims the alternative
                of every gate, so it errs only where some gate's null holds, and
                then at most at that gate's level; each gate is a 5% test (gate 1
                and 2 family-wise over the family, gate 3 per feature), so the
                verdict errs at most at 5%, whichever null is true.
  power         what the data could have detected, in every verdict (JSON: each
                feature's 'power', and 'power' for the report): the smallest same-row
                difference gate 1 detects with 80% power, (c + z_0.80) sd, with sd the
                task-cluster bootstrap standard deviation of the difference and c gate
                1's joint critical value (a normal approximation; gates 2 and 3 only
                make passing harder, so it is a lower bound on what all three need),
                and the tasks the observed difference needs for 80% power, tasks x
                ((c + z_0.80) sd / diff)^2. Where the few-clusters rule withholds the
                interval the verdict says no effect of any size could pass, and gives
                the tasks needed with the per-feature bar 1.96 (with fewer than 10
                tasks in all no resamples are drawn, and it says that instead).
  flags         same_row_sign_flip (T): the all-rows and same-row comparisons with the
                baseline disagree in sign (the same-row trap); within_task_reversed (W);
                no_within_task_signal (N): within-task AUC exactly 0.5;
                below_task_identity (I): at or below the task ceiling on the feature's
                own rows and its within p not below 0.05 (a feature that separates
                runs inside tasks is not flagged: with tasks of 2 runs the ceiling is
                0.875 by construction); partial_rows (P, undefined on
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

Defaults: --perms 2000, --boot 2000, --seed 20260801, --permute tasks where a task
holds several runs (else strata with --strata, else rows), --format text. Same input
and seed give the same bytes out.
Exit status: 0 report written; 2 bad input or usage (one line 'error: ...').
With --write-runs DIR and no outcome yet it writes the derived tables and stops (exit
0), naming the next step (regrade.py, or --verdicts). Pasted Markdown, the footer's
paths and launcher, and figures follow the family's rules: delivery_audit.py --help,
"Pasting".
"""
# Map of this file: each section under its `# === Title ===` banner, in order, with its
# entry functions and the rules of the manual above (--help) that it implements.
# (test_audit.py TestMaps checks that each banner is listed, each name is defined in its
# section and reached from main, each quoted rule is in the manual, and each code name
# the manual cites is named in the row of its section; `name` marks a rule's home.)
#
#   Shared block              Inputs Table read_verdicts join_verdicts derive_tables
#                             render_table render_provenance run_main too_few_clusters
#                             rules: RUNS (tables, runs folders); "With --verdicts the
#                             outcome comes from a grader's output" (the files read and
#                             joined; what the outcome then is: joined_outcome, Input);
#                             "Reading harness folders"; the provenance footer; 3 decimals
#                             and p-values (`fmt`, `fmt_p`); the few-clusters rule
#                             (`too_few_clusters`, with FEW_CLUSTERS)
#   Statistics                pair_count doubled_midranks auc_in_direction better_direction
#                             delong_p
#                             clustered_difference evidence_clusters youden_binarise
#                             NullFamily stepdown_minp minp_floor perms_to_pass adjusted_p
#                             few_clusters_withheld find_degenerate untestable_reason copy_of
#                             youden_twin shuffled_draws task_null_aucs WithinTaskTest
#                             BootstrapSweep bootstrap_differences resample_in_chunks
#                             rules: Definitions: AUC, stratified, DeLong p, clustered p,
#                             within p (exact up to WITHIN_EXACT_LIMIT arrangements, every
#                             cell then listed; drawn cells list up to PLACEMENTS_LIMIT
#                             placements), family
#                             null (gate 2's minP adjusted p: stepdown_minp; the single-step
#                             max-AUC p: adjusted_p; minP floor; its note and --perms advice:
#                             shuffle_notes, Report); left out, and flags D and Y
#                             (find_degenerate: copy_of, youden_twin), interval (the
#                             few-clusters rule is the block's; the clustered p it
#                             withholds: few_clusters_withheld); Speed
#   The audit                 audit audit_design default_permute family_tests gate_one
#                             gate_one_feature within_task_tests within_task_p gate_three
#                             gate_verdict feature_power joint_interval task_identity task_ceiling
#                             feature_flags audit_verdict cluster_warning
#                             rules: Definitions: same rows, joint CI, within-task, within
#                             p (written by within_task_p; exact or drawn: Statistics),
#                             task ceiling, task identity, verdict (gates 1-3 applied
#                             in gate_verdict, which asks the block's too_few_clusters), power,
#                             flags (feature_flags; flag I dropped where the within p
#                             rejects: gate_three); Defaults (--permute)
#   Input                     runs_table read_runs joined_outcome audited_rows select_rows
#                             guessed_task_column read_tasks read_strata
#                             read_baseline choose_features numeric_features
#                             read_feature_values exact_number recount_tool_calls
#                             rules: "Columns (auto-detected by name, first match wins; ...)";
#                             "Numbers are read exactly"; Definitions: left out (the
#                             columns read here; which are left out: Statistics); the
#                             outcome under --verdicts (`joined_outcome`: grading errors
#                             left out, the table's own column set aside)
#   Report                    render_report render_json render_svg verdict_section
#                             verdict_word power_line family_null_section notes_section
#                             shuffle_notes auc_text DIRECTION_MARKS
#                             rules: the report, --format, --svg; direction marks (+/- in
#                             text, arrows in Markdown: auc_text); the minP floor's note
#                             (`shuffle_notes`: floor >= 0.05, gate 2 cannot pass)
#   Main                      build_parser main
#                             rules: "Basic usage"; Defaults; Exit status
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
OUTCOME_NAMES = ("verified", "completed", "resolved", "gt_completed", "outcome")
TASK_NAMES = ("task_id", "instance_id", "task")
# Taken as the task when none of TASK_NAMES is present, with a note saying so: names
# that mean a task, then any other column ending in _id whose values repeat.
TASK_GUESS_NAMES = ("problem_id", "issue_id", "instance", "problem", "issue", "task_name",
                    "instance_name")
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


def cluster_influences(parts, clusters, used):
    """The weighted difference of the AUCs, and each cluster's (success, failure) share
    of it: summed over strata with weight w (the stratum's share of the pairs),
    w * sum over its successes of (V10 - AUC) / M, and likewise for its failures."""
    total_pairs = sum(len(s) * len(f) for _, s, f, _, _ in parts)
    influence = {c: [0.0, 0.0] for c in used}
    difference = 0.0
    for _, successes, failures, (x10, x01), (y10, y01) in parts:
        m, n = len(successes), len(failures)
        weight = m * n / total_pairs
        gap = (math.fsum(x10) - math.fsum(y10)) / m
        difference += weight * gap
        for side, members, components, size in ((0, successes, zip(x10, y10), m),
                                                (1, failures, zip(x01, y01), n)):
            for row, (x, y) in zip(members, components):
                influence[clusters[row]][side] += weight * (x - y - gap) / size
    return difference, influence


def clustered_difference(feature, baseline, labels, groups, clusters, rows, *, parts=None):
    """Task-clustered test that two AUCs on the same `rows` are equal: Obuchowski's
    (1997) clustered AUC variance applied to the paired difference.

    Each cluster's influence is, summed over strata with weight w (the stratum's
    share of the pairs), w * (sum over its successes of (V10 - AUC) / M + sum over
    its failures of (V01 - AUC) / N), with M and N the stratum's successes and
    failures, computed for the feature minus the baseline. The variance is
    I10 / (I10 - 1) times the sum of the squared success shares, plus I01 / (I01 - 1)
    times that of the failure shares, plus 2 I / (I - 1) times the sum of their
    products, where I10 and I01 count the clusters holding a success and a failure:
    without strata exactly Obuchowski's S10 / M + S01 / N + 2 S11 / (M N). Two-sided
    normal p; undefined with fewer than 2 clusters holding successes or failures.
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
    holding = ({clusters[r] for _, s, _, _, _ in parts for r in s},
               {clusters[r] for _, _, f, _, _ in parts for r in f})
    if min(len(h) for h in holding) < 2:
        result["undefined"] = ("fewer than 2 clusters hold successes, or failures, on the "
                               "rows compared")
        return result
    difference, influence = cluster_influences(parts, clusters, used)
    # Obuchowski's small-sample factors: I10 / (I10 - 1) over the clusters holding a
    # success, I01 / (I01 - 1) over those holding a failure, I / (I - 1) for the
    # cross term.
    factors = [len(h) / (len(h) - 1) for h in holding] + [len(used) / (len(used) - 1)]
    variance = (factors[0] * math.fsum(a * a for a, _ in influence.values())
                + factors[1] * math.fsum(b * b for _, b in influence.values())
                + 2 * factors[2] * math.fsum(a * b for a, b in influence.values()))
    result.update(difference=difference, variance=variance)
    if variance <= 0:
        if abs(difference) < 1e-15:
            result["p"] = 1.0
        else:
            result["undefined"] = "zero variance while the AUCs differ"
        return result
    result["p"] = math.erfc(abs(difference) / math.sqrt(variance) / math.sqrt(2))
    return result


def evidence_clusters(labels, clusters, rows):
    """The few-clusters rule's counts on `rows`: (clusters holding a success, clusters
    holding a failure); the rule reads the smaller. A cluster of failures only says
    nothing about how successes score, so it is not counted on that side.

    >>> evidence_clusters([1, 0, 0, 0, 1, 1], [0, 0, 1, 1, 2, 2], range(6))
    (2, 2)
    """
    return (len({clusters[r] for r in rows if labels[r]}),
            len({clusters[r] for r in rows if not labels[r]}))


def evidence_text(holding, kind="task"):
    """'17 tasks hold a success and only 9 a failure', for the few-clusters rule.

    >>> evidence_text((17, 9)), evidence_text((3, 50), "run")
    ('17 tasks hold a success and only 9 a failure', 'only 3 runs hold a success and 50 a failure')
    """
    succ, fail = holding
    many = f"{kind}s"
    if succ <= fail:
        return f"only {plural(succ, kind, many)} {'holds' if succ == 1 else 'hold'} a success and {fail} a failure"
    return f"{plural(succ, kind, many)} hold a success and only {fail} a failure"


def few_clusters_withheld(clustered, holding):
    """The clustered test as the report shows it: its normal reference needs many
    clusters holding each outcome, so when fewer than FEW_CLUSTERS clusters hold a
    success, or a failure, on the rows compared its p is withheld (the variance stays
    in JSON). `holding`: (clusters holding a success, clusters holding a failure)."""
    if clustered["p"] is not None and too_few_clusters(*holding):
        clustered = dict(clustered, p=None, undefined=(
            f"on the rows compared {evidence_text(holding, 'cluster')}: fewer than "
            f"{FEW_CLUSTERS} on one side, too few for its normal reference"))
    return clustered


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


# A two-valued column that splits at least this many successes and failures perfectly is
# the outcome relabelled: with 10 and 10 a chance split is 2 arrangements in 184,756.
# Fewer rows are tested as any column (a perfect split of 2 rows is no evidence of a copy).
RELABEL_MIN_ROWS = 10


def copy_of(values, labels, seen):
    """Name what this column copies, or None: the outcome (same values or reversed, or
    on its defined rows any relabelling of it: one value on every success, another on
    every failure, such as 10 x verified + 3, over at least RELABEL_MIN_ROWS of each),
    or a column in `seen` [(description,
    values, ranking key)] with the same values or the same ranking (or its reverse) on
    the same rows.

    >>> copy_of([13] * 10 + [3] * 10 + [None], [1] * 10 + [0] * 11, [])[1]
    'a relabelling of the outcome on its 20 defined rows (13 on every success, 3 on every failure)'
    >>> copy_of([13, 3], [1, 0], []) is None
    True
    """
    outcome = tuple(labels)
    if tuple(values) == outcome or tuple(None if v is None else 1 - v
                                         for v in values) == outcome:
        return "the outcome", "equals the outcome on every row"
    held = {y: {v for v, z in zip(values, labels) if v is not None and z == y} for y in (0, 1)}
    rows = {y: sum(v is not None and z == y for v, z in zip(values, labels)) for y in (0, 1)}
    if all(len(held[y]) == 1 and rows[y] >= RELABEL_MIN_ROWS for y in (0, 1)) \
            and held[0] != held[1]:
        defined = sum(v is not None for v in values)
        return "the outcome", (f"a relabelling of the outcome on its "
                               f"{plural(defined, 'defined row')} ({number_text(min(held[1]))} "
                               f"on every success, {number_text(min(held[0]))} on every failure)")
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
        return self.aucs_of_sums([sum(take(weights)) for weights in self.words],
                                 are_successes)

    def aucs_of_sums(self, packed, are_successes):
        """best_aucs from the words already summed over the picked rows."""
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


def minp_floor(observed, null):
    """The smallest minP adjusted p any feature could reach with these shuffles: the
    adjusted p of a feature whose observed statistic beats every shuffle, the others
    as observed. Each shuffle that beats every other draw on some other feature
    counts against it, so the floor is about K / (B + 1) for K unrelated features,
    not 1 / (B + 1).

    >>> minp_floor([0.5, 0.5], [[0.9, 0.1], [0.1, 0.9], [0.2, 0.2]])
    0.5
    """
    if not null:
        return None
    total = len(null) + 1
    _, null_counts = at_least_counts(observed, null)
    floors = []
    for j in range(len(observed)):
        hits = sum(1 for counts in null_counts
                   if min((c for k, c in enumerate(counts) if k != j), default=total) <= 1)
        floors.append((1 + hits) / total)
    return min(floors)


def perms_to_pass(family):
    """The --perms to suggest when the minP floor (about K/(N+1), minp_floor) keeps gate 2
    from passing: enough to bring it to half the level for K features, 40 K at 0.05,
    and never fewer than the default.

    >>> perms_to_pass(3), perms_to_pass(100)
    (2000, 4000)
    """
    return max(DEFAULT_PERMS, round(2 / SIGNIFICANCE) * family)


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


def shuffled_draws(labels, mode, strata_codes, perms, rng):
    """Yield `perms` shuffled outcome assignments as (rows, are_successes).

    mode 'rows' shuffles across all runs, 'strata' within each stratum. The task
    shuffle ('tasks') is task_null_aucs's alone: it draws sums, not rows.
    """
    n = len(labels)
    successes = sum(labels)
    use_successes = successes <= n - successes
    if mode == "rows":
        population = range(n)
        size = successes if use_successes else n - successes
        for _ in range(perms):
            yield sample(rng, population, size), use_successes
        return
    parts = []
    for members in group_rows(strata_codes, range(n)):
        count = sum(labels[i] for i in members)
        parts.append((members, count if use_successes else len(members) - count))
    for _ in range(perms):
        picked = []
        for members, size in parts:
            picked.extend(sample(rng, members, size))
        yield picked, use_successes


def task_placements(rng, cells_of, counts_of):
    """One task shuffle of a shape group: a uniform random permutation of its tasks
    (sorting by random keys) gives each task its donor; yields, cell position by cell
    position, the tasks' cells and the donors' counts there."""
    keys = [rng.random() for _ in counts_of]
    donors = sorted(range(len(counts_of)), key=keys.__getitem__)
    for position in range(len(cells_of[0]) if cells_of else 0):
        yield ([cells[position] for cells in cells_of],
               [counts_of[donor][position] for donor in donors])


PLACEMENTS_LIMIT = 256   # a cell's placements of a count are listed up to this many


def task_null_aucs(family, labels, strata_codes, tasks_codes, perms, rng):
    """null_aucs under the task shuffle (--permute tasks): whole tasks' outcomes move
    among tasks of the same shape (the same number of runs in each stratum; without
    strata, the same number of runs). Each task receives another's number of
    successes in each stratum, placed on a uniformly random subset of its runs there,
    so no pairing of one task's runs with another's is assumed and the draw does not
    depend on the order of the runs inside a task. Each placement's sum of the
    family's words is precomputed: one addition per cell, not one per run. The words
    are packed side by side into one integer, each in a field wider than its total,
    so the sums never carry from one word into the next."""
    n = len(labels)
    use_successes = sum(labels) <= n - sum(labels)
    groups = task_shape_groups(labels, strata_codes, tasks_codes, use_successes)
    words = family.words
    widths = [max(1, total.bit_length() + 1) for total in family.totals]
    shifts = list(itertools.accumulate([0] + widths[:-1]))

    def summed(rows):
        return sum(sum(weights[r] for r in rows) << shift
                   for weights, shift in zip(words, shifts))

    tables = []          # per group and cell position: per task, per count (sums, size)
    for cells_of, _ in groups:
        per_position = []
        for position in range(len(cells_of[0])):
            table = [[None if choices is None else
                      ([summed(c) for c in choices], len(choices))
                      for choices in cells[position][1]] for cells in cells_of]
            listed = all(option is not None for row in table for option in row)
            per_position.append((table, listed))
        tables.append(per_position)
    results = []
    random_draw = rng.random
    for _ in range(perms):
        total = 0
        for (cells_of, counts_of), per_position in zip(groups, tables):
            for position, (cell, counts) in enumerate(
                    task_placements(rng, cells_of, counts_of)):
                table, listed = per_position[position]
                if listed:
                    total += sum([sums[int(random_draw() * size)] for sums, size in
                                  map(operator.getitem, table, counts)])
                    continue
                for index, count in enumerate(counts):
                    option = table[index][count]
                    if option is None:
                        total += summed(sample(rng, cell[index][0], count))
                    else:
                        total += option[0][int(random_draw() * option[1])]
        packed = [(total >> shift) & ((1 << width) - 1)
                  for shift, width in zip(shifts, widths)]
        results.append(family.aucs_of_sums(packed, use_successes))
    return results


def task_shape_groups(labels, strata_codes, tasks_codes, use_successes):
    """The tasks grouped by shape (their number of runs in each stratum), for the task
    shuffle: per group, each task's cells (its runs in one stratum, with every placement
    of each count among them, or None where there are too many to list) and each
    task's counts (successes, or failures, per cell). Groups and tasks in sorted order."""
    n = len(labels)
    strata_codes = strata_codes if strata_codes is not None else [0] * n
    by_shape = {}
    for members in group_rows(tasks_codes, range(n)):
        cells = group_rows(strata_codes, members)
        shape = tuple((strata_codes[c[0]], len(c)) for c in cells)
        counts = tuple(sum(1 for i in c if labels[i] == use_successes) for c in cells)
        listed = []
        for c in cells:
            placements = [list(itertools.combinations(c, k))
                          if math.comb(len(c), k) <= PLACEMENTS_LIMIT else None
                          for k in range(len(c) + 1)]
            listed.append((c, placements))
        entry = by_shape.setdefault(shape, ([], []))
        entry[0].append(listed)
        entry[1].append(counts)
    return [by_shape[shape] for shape in sorted(by_shape)]


# --- gate 3's within-task test: outcomes shuffled among the runs of one cell ---
WITHIN_EXACT_LIMIT = 20000   # enumerate every arrangement when there are at most this many


def within_task_cells(labels, cell_codes, rows):
    """The task x stratum cells on `rows` that hold both outcomes, the only cells a
    shuffle inside cells changes: [(their rows, their number of successes)].

    >>> within_task_cells([1, 0, 1, 1, 0], [0, 0, 1, 1, 2], range(5))
    [([0, 1], 1)]
    """
    cells = []
    for members in group_rows(cell_codes, rows):
        successes = sum(labels[r] for r in members)
        if 0 < successes < len(members):
            cells.append((members, successes))
    return cells


class WithinTaskTest:
    """Gate 3's test for the features defined on one set of rows: the outcomes are
    shuffled among the runs of each task x stratum cell (each cell keeps its number
    of successes), and each feature's within-task AUC is read in the direction the
    shuffle's own stratified AUC chooses, as gate 1 chooses it on the data.

    Each feature has two fields in one packed integer per run: its doubled midrank
    inside the cell (read in the observed direction) and its doubled midrank inside
    the stratum (for the direction). A shuffle picks each mixed cell's successes, so
    one addition per mixed cell gives every feature's two rank sums at once.
    """

    def __init__(self, features, directions, labels, cell_codes, strata_codes, rows):
        rows = list(rows)
        self.cells = within_task_cells(labels, cell_codes, rows)
        n_rows = max(2, len(rows))
        bits = (2 * n_rows * n_rows + 2).bit_length()
        self.bits, self.mask = bits, (1 << bits) - 1
        word = collections.Counter()
        self.observed, self.within_pairs, self.stratum_pairs = [], [], []
        self.stratum_fixed = []      # per feature: 2U over strata minus the mixed cells' part
        mixed = {r for members, _ in self.cells for r in members}
        for index, (values, direction) in enumerate(zip(features, directions)):
            scores = oriented(values, direction)
            within_shift, stratum_shift = 2 * index * bits, (2 * index + 1) * bits
            for members, _ in self.cells:
                for row, rank in zip(members, doubled_midranks([scores[r] for r in members])):
                    word[row] += rank << within_shift
            twice_u, pairs = pair_count(scores, labels, cell_codes, rows)
            self.observed.append(twice_u)
            self.within_pairs.append(pairs)
            fixed = pair_count(values, labels, strata_codes, rows)
            self.stratum_pairs.append(fixed[1])
            stratum_rank = {}
            for members in group_rows(strata_codes, rows):
                for row, rank in zip(members, doubled_midranks([values[r] for r in members])):
                    stratum_rank[row] = rank
            for members, _ in self.cells:
                for row in members:
                    word[row] += stratum_rank[row] << stratum_shift
            # What the successes of the mixed cells add to 2U over strata, observed;
            # a shuffle replaces it with its own picks' sum.
            part = sum(stratum_rank[r] for r in mixed if labels[r])
            self.stratum_fixed.append(fixed[0] - part)
        self.corrections = sum(k * (k + 1) for _, k in self.cells)
        self.directions = list(directions)
        self.sums = []               # per cell: every placement's packed sum, or None
        # Every cell is listed when the p is exact (a cell of 462 placements among 20,000
        # arrangements was left unlisted, and the enumeration crashed on it).
        listing_all = self.exact()
        for members, k in self.cells:
            if listing_all or math.comb(len(members), k) <= PLACEMENTS_LIMIT:
                self.sums.append([sum(word[r] for r in c)
                                  for c in itertools.combinations(members, k)])
            else:
                self.sums.append(None)
        self.word = word

    def arrangements(self):
        """How many outcome arrangements the shuffle inside cells can give."""
        return math.prod(math.comb(len(m), k) for m, k in self.cells)

    def exact(self):
        """Whether the p is exact, every arrangement listed: at most WITHIN_EXACT_LIMIT
        of them (every cell's placements then listed, whatever PLACEMENTS_LIMIT); else it
        is drawn from the shuffles inside cells."""
        return self.arrangements() <= WITHIN_EXACT_LIMIT

    def at_least(self, total, counts):
        """Add 1 to counts[j] for each feature whose within-task credit, in the
        direction this arrangement's stratified AUC chooses, reaches the observed one."""
        mask, bits = self.mask, self.bits
        for j, observed in enumerate(self.observed):
            within = ((total >> (2 * j * bits)) & mask) - self.corrections
            stratum = self.stratum_fixed[j] + ((total >> ((2 * j + 1) * bits)) & mask)
            same = (stratum >= self.stratum_pairs[j]) == (self.directions[j] == "+")
            if (within if same else 2 * self.within_pairs[j] - within) >= observed:
                counts[j] += 1

    def exact_counts(self):
        """(arrangements at least as extreme, per feature; all arrangements), by
        enumerating every arrangement."""
        counts = [0] * len(self.observed)
        for combo in itertools.product(*self.sums):
            self.at_least(sum(combo), counts)
        return counts, self.arrangements()

    def monte_carlo_counts(self, draws, rng):
        """Shuffles at least as extreme, per feature, among `draws` random ones."""
        counts = [0] * len(self.observed)
        random_draw = rng.random
        listed = [(s, len(s)) for s in self.sums if s is not None]
        sampled = [(m, k) for (m, k), s in zip(self.cells, self.sums) if s is None]
        word = self.word
        for _ in range(draws):
            total = sum([s[int(random_draw() * size)] for s, size in listed])
            for members, k in sampled:
                total += sum(word[r] for r in sample(rng, members, k))
            self.at_least(total, counts)
        return counts


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
    """Resample tasks `boot` times; return per pair the differences, resample by
    resample (None where the resample left no success/failure pair), and skips.

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
                differences[index].append(None)
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
    if kind == "within":
        return [test.monte_carlo_counts(size, rng) for test in shared["within"]]
    if kind == "null" and shared["permute"] == "tasks":
        return task_null_aucs(shared["family"], shared["labels"], shared["strata_codes"],
                              shared["task_codes"], size, rng)
    if kind == "null":
        return null_aucs(shared["family"], shuffled_draws(
            shared["labels"], shared["permute"], shared["strata_codes"], size, rng))
    return bootstrap_differences(shared["sweeps"], shared["n_clusters"], size, rng)


def resample_in_chunks(shared, perms, boot, seed, parallel):
    """Null AUCs per shuffle, bootstrap differences per feature (in resample order,
    None where skipped: the resamples stay joint across features), and skip counts.

    With `parallel`, the chunks are spread over forked processes (one per available
    core) where the platform can fork; elsewhere they run here, with the same result.
    """
    jobs = [("null", i, size, seed) for i, size in enumerate(chunk_sizes(perms))]
    jobs += [("boot", i, size, seed) for i, size in enumerate(chunk_sizes(boot))]
    if shared.get("within"):
        jobs += [("within", i, size, seed) for i, size in enumerate(chunk_sizes(perms))]
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
    within = [[0] * len(test.observed) for test in shared.get("within") or ()]
    for job, result in zip(jobs, results):
        if job[0] == "null":
            null.extend(result)
        elif job[0] == "within":
            for totals, counts in zip(within, result):
                totals[:] = map(operator.add, totals, counts)
        else:
            for index, (diffs, skips) in enumerate(zip(*result)):
                differences[index].extend(diffs)
                skipped[index] += skips
    return null, differences, skipped, within


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


# === The audit ===
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
    if too_few_clusters(n_clusters):
        return (f"only {clusters}: with fewer than {FEW_CLUSTERS} clusters the cluster "
                f"bootstrap intervals are withheld (they cover far less than "
                f"{int(CONFIDENCE * 100)}%), so gate 3 fails")
    return None


PASS_VERDICT = "passes all three gates"
NO_TASK_VERDICT = "passes gates 1 and 2; gate 3 not applied: no task column"


def gate_verdict(feature, n_clusters, family_size):
    """Name the first gate a feature fails, or say it passes all three."""
    ci, joint = feature["delta_ci"], feature["delta_joint_ci"]
    if feature["delta_same_rows"] <= 0:
        return "fails gate 1: not better than the baseline on its own rows"
    if joint is not None and joint[0] <= 0:
        return (f"fails gate 1: its joint interval over "
                f"{'the' if family_size == 1 else 'all'} {plural(family_size, 'feature')} "
                f"with an interval reaches 0, so it is not better than the baseline "
                f"family-wise")
    if feature["adjusted_p"] is None or feature["adjusted_p"] >= SIGNIFICANCE:
        return "fails gate 2: not significant once the family's width is counted"
    has_tasks = feature["task_ceiling_same_rows"] is not None
    if n_clusters < 2:
        return "fails gate 3: fewer than 2 clusters to resample"
    evidence = feature["evidence_clusters"]
    if too_few_clusters(n_clusters, evidence):
        holding = feature["clusters_holding"]
        return (f"fails gate 3: on its rows "
                f"{evidence_text((holding['success'], holding['failure']), 'task' if has_tasks else 'run')}"
                f"; below {FEW_CLUSTERS} on either side no interval is given and nothing "
                f"passes")
    if ci is None or ci[0] is None or ci[0] <= 0 or joint is None:
        return (f"fails gate 3: the {'task' if has_tasks else 'run'}-cluster interval "
                f"reaches 0")
    if not has_tasks:
        # No task column: every run is its own cluster and nothing is within a task.
        return NO_TASK_VERDICT
    if feature["within_task_pairs"] == 0:
        return ("fails gate 3: no task holds both outcomes on its rows, so there is no "
                "within-task evidence")
    if not within_task_rejects(feature):
        return (f"fails gate 3: within tasks it is not told from chance (AUC "
                f"{fmt(feature['within_task_auc'])} on "
                f"{plural(feature['within_task_pairs'], 'pair')}, within-task p "
                f"{fmt_p(feature['within_task_p'], feature['within_task_test']['smallest_p'])}"
                f", one-sided; it needs p < {SIGNIFICANCE})")
    return PASS_VERDICT


def joint_interval(observed, joint, confidence=CONFIDENCE):
    """Simultaneous intervals for every feature's difference from the joint resamples:
    the max-|T| (sup-t) band. Each feature's difference is scaled by its bootstrap
    standard deviation; c is the `confidence` quantile (linear interpolation) over the
    resamples of the largest scaled deviation |d_b - d| / sd across the features; each
    interval is d +- c sd. Returns (c, [interval or None]); a feature with fewer than 2
    resampled differences gets None, and one with sd 0 the point [d, d].

    >>> c, bands = joint_interval([0.1, 0.0], [[0.2, 0.0, 0.1, 0.1], [0.0, 0.0, 0.0, 0.0]])
    >>> round(c, 6), [[round(x, 6) for x in b] for b in bands]
    (1.224745, [[0.0, 0.2], [0.0, 0.0]])
    """
    scales = []
    for values in joint:
        drawn = [v for v in values if v is not None]
        scales.append(statistics.stdev(drawn) if len(drawn) >= 2 else None)
    usable = [j for j, sd in enumerate(scales) if sd]
    maxima = []
    for b in range(len(joint[0]) if joint else 0):
        deviations = [abs(joint[j][b] - observed[j]) / scales[j] for j in usable
                      if joint[j][b] is not None]
        maxima.append(max(deviations, default=0.0))
    critical = percentile(sorted(maxima), confidence) if maxima else None
    bands = []
    for d, sd in zip(observed, scales):
        if sd is None or critical is None:
            bands.append(None)
        else:
            bands.append([d - critical * sd, d + critical * sd])
    return critical, bands


def task_shapes(tasks, strata):
    """Each task's shape: its number of runs in each stratum (in sorted order).

    >>> task_shapes(["a", "a", "b"], ["p", "q", "p"])
    {'a': (('p', 1), ('q', 1)), 'b': (('p', 1),)}
    """
    cells = {}
    for index, task in enumerate(tasks):
        stratum = strata[index] if strata is not None else None
        cells.setdefault(task, collections.Counter())[stratum] += 1
    return {task: tuple(sorted(counter.items(), key=lambda item: str(item[0])))
            for task, counter in sorted(cells.items())}


def tasks_alone_in_size(tasks, permute, strata=None):
    """Under --permute tasks, how many tasks have no other task of their shape (runs per
    stratum; without strata, runs): they never move. None for the other schemes.
    Raises InputError when no task can move.

    >>> tasks_alone_in_size(["a", "a", "b", "b", "c"], "tasks")
    1
    """
    if permute != "tasks":
        return None
    if tasks is None:
        raise InputError("--permute tasks needs a task column (looked for "
                         f"{', '.join(TASK_NAMES)}; name it with --task)")
    alone, n_tasks = lone_tasks(tasks, strata)
    if alone == n_tasks and all(size == 1 for shape in task_shapes(tasks, strata).values()
                                for _, size in shape):
        raise InputError(f"--permute tasks: no two of the {n_tasks} tasks have the same "
                         f"shape and every task holds one run in each stratum, so no run "
                         f"can move and every shuffle would be the observed outcome; use "
                         f"--permute rows or strata")
    return alone


def lone_tasks(tasks, strata):
    """(tasks with no other task of their shape, tasks)."""
    shapes = task_shapes(tasks, strata)
    of_shape = collections.Counter(shapes.values())
    return sum(1 for shape in shapes.values() if of_shape[shape] == 1), len(shapes)


def default_permute(tasks, strata):
    """The null's scheme when --permute is not given, and why (a sentence for the
    report): tasks whenever some task holds more than one run (where no task can move,
    the task shuffle moves runs within their cells, and says so); otherwise the runs
    (within strata with --strata)."""
    runs_scheme = "strata" if strata is not None else "rows"
    if tasks is None:
        return runs_scheme, "no task column, so each run is its own cluster"
    if max(collections.Counter(tasks).values()) < 2:
        return runs_scheme, "every task holds one run, so the runs are the tasks"
    alone, n_tasks = lone_tasks(tasks, strata)
    if alone == n_tasks:
        # Never the shuffle that ignores tasks: runs still move inside their cells,
        # a null that keeps every task's outcomes (it tests only within tasks).
        why = (f"no two of the {n_tasks} tasks have the same number of runs"
               f"{' in each stratum' if strata is not None else ''}, so no task moves"
               if n_tasks > 1 else "only 1 task, so it cannot move")
        return "tasks", (f"{why}: runs are shuffled within task x stratum cells, a null "
                         f"that keeps each task's successes and tests only what a feature "
                         f"says within tasks")
    return "tasks", "tasks hold several runs, and runs of one task may agree"


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
        "smallest_adjusted_p": minp_floor(observed, null),
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


def audit_design(labels, tasks, strata, permute):
    """Code the strata and tasks, and choose the shuffle scheme and the clusters."""
    n = len(labels)
    chosen_by_default = permute is None
    permute_reason = None
    if chosen_by_default:
        permute, permute_reason = default_permute(tasks, strata)
    strata_codes, strata_levels = codes_of(strata) if strata is not None else ([0] * n, [])
    if tasks is not None:
        task_codes, task_levels = codes_of(tasks)
        # Gate 3's cells: a task's runs in one stratum (the task, without strata).
        cell_codes = codes_of(list(zip(task_codes, strata_codes)))[0]
    else:
        task_codes, task_levels, cell_codes = list(range(n)), [], None
    n_clusters = len(task_levels) if tasks is not None else n
    return {
        "n": n, "permute": permute, "tasks": tasks,
        "permute_default": chosen_by_default, "permute_reason": permute_reason,
        "strata_codes": strata_codes, "strata_levels": strata_levels,
        "task_codes": task_codes, "task_levels": task_levels, "n_clusters": n_clusters,
        "cell_codes": cell_codes,
        # One cluster resampled is the same cluster every time: no interval exists.
        "clusters_resampled": n_clusters >= 2,
        "groups": strata if strata is not None else None,
        "tasks_never_moved": tasks_alone_in_size(tasks, permute, strata)}


def baseline_figures(baseline, labels, groups):
    """The baseline's AUC and direction within strata, and its pooled AUC."""
    base_u, base_pairs = pair_count(baseline, labels, groups)
    if base_pairs == 0:
        raise InputError("no stratum holds both a success and a failure, so no "
                         "within-stratum AUC exists; drop --strata or choose another column")
    base_auc, base_direction = better_direction(base_u, base_pairs)
    base_pooled = better_direction(*pair_count(baseline, labels))[0]
    return base_auc, base_direction, base_pooled


def task_identity(labels, design):
    """Task identity's AUC, its direction and the leave-one-out task rates it scores."""
    # Task identity is read in the fixed '+' direction: with no task effect,
    # leaving a run out lowers its task's rate exactly when it succeeded, an artificial
    # '-' signal that choosing the better direction would report as skill.
    tasks = design["tasks"]
    if tasks is None or len(design["task_levels"]) < 2:
        return None, None, None
    rate = leave_one_out_task_rate(labels, tasks)
    scored = [i for i in range(design["n"]) if rate[i] is not None]
    identity_auc = auc_in_direction(*pair_count(rate, labels, design["groups"], scored), "+")
    identity_direction = None if identity_auc is None else "+"
    return identity_auc, identity_direction, rate


def feature_auc(values, labels, groups, rows):
    """A feature's AUC and direction on its rows, within strata and pooled."""
    twice_u, pairs = pair_count(values, labels, groups, rows)
    auc, direction = better_direction(twice_u, pairs)
    pooled, pooled_direction = better_direction(
        *(pair_count(values, labels, None, rows) if groups is not None
          else (twice_u, pairs)))
    return auc, direction, pooled, pooled_direction


def feature_sweeps(scores, base_scores, labels, design, rows, base_sweeps):
    """The bootstrap sweeps of a feature and of the baseline on the same rows."""
    key = tuple(rows)
    if key not in base_sweeps:         # the same for every feature on these rows
        base_sweeps[key] = BootstrapSweep(base_scores, labels, design["strata_codes"],
                                          design["task_codes"], rows)
    return (BootstrapSweep(scores, labels, design["strata_codes"], design["task_codes"], rows),
            base_sweeps[key])


def task_identity_same_rows(identity_auc, rate, labels, groups, rows, identity_rows):
    """Task identity scored on a feature's rows, or None when it is undefined."""
    if identity_auc is None:
        return None
    # The same-row rule of gate 1: task identity scored on the feature's rows.
    key = tuple(rows)
    if key not in identity_rows:
        scored_rows = [i for i in rows if rate[i] is not None]
        identity_rows[key] = auc_in_direction(*pair_count(rate, labels, groups,
                                                          scored_rows), "+")
    return identity_rows[key]


def task_ceiling(labels, tasks, groups, rows):
    """The best AUC any function of the task alone can reach on `rows`: each run scored
    by its task's success rate on those rows (within a stratum, the task's rate in that
    stratum), read +. Ordering tasks by that rate maximises the pairs won (swapping two
    adjacent tasks gains n1_s n0_t - n1_t n0_s), and every pair inside a task ties,
    so no score constant within tasks does better. None without tasks or pairs.

    >>> task_ceiling([1, 0, 1, 1, 0, 0], ["a", "a", "b", "b", "c", "c"], None, range(6))
    0.9444444444444444
    """
    if tasks is None:
        return None
    totals = collections.Counter()
    sizes = collections.Counter()
    for row in rows:
        cell = (tasks[row], groups[row] if groups is not None else None)
        totals[cell] += labels[row]
        sizes[cell] += 1
    rate = {}
    for row in rows:
        cell = (tasks[row], groups[row] if groups is not None else None)
        rate[row] = Fraction(totals[cell], sizes[cell])
    scores = [rate.get(i) for i in range(len(labels))]
    return auc_in_direction(*pair_count(scores, labels, groups, list(rows)), "+")


def feature_flags(auc, delta_all, delta_same, within, ceiling, partial, screen_note):
    """The flags of one feature, in the order the report's legend lists them."""
    flags = []
    if delta_all * delta_same < 0:
        flags.append("same_row_sign_flip")
    if within is not None and within < 0.5:
        flags.append("within_task_reversed")
    if within is not None and within == 0.5:
        flags.append("no_within_task_signal")
    if ceiling is not None and auc <= ceiling:
        flags.append("below_task_identity")
    if partial:
        flags.append("partial_rows")
    if screen_note["duplicate_of"]:
        flags.append("duplicate")
    if screen_note["youden_equal_to"]:
        flags.append("youden_equal")
    return flags


def gate_one_feature(name, values, labels, baseline, design, base_auc, identity, screen_note,
                     caches):
    """Gate 1 for one feature: its AUC against the baseline's on the same rows, with the
    paired tests; returns the feature and its pair of bootstrap sweeps."""
    n, groups, tasks = design["n"], design["groups"], design["tasks"]
    rows = [i for i in range(n) if values[i] is not None]
    auc, direction, pooled, pooled_direction = feature_auc(values, labels, groups, rows)
    key = tuple(rows)
    same_rows = caches["same_rows"]
    if key not in same_rows:       # the same for every feature on these rows
        same_rows[key] = better_direction(*pair_count(baseline, labels, groups, rows))
    base_same, base_same_direction = same_rows[key]
    scores = oriented(values, direction)
    base_scores = oriented(baseline, base_same_direction)
    # Within tasks means within task x stratum cells: with --strata a pair across
    # strata of one task compares conditions, not runs.
    within_u, within_pairs = (pair_count(scores, labels, design["cell_codes"], rows)
                              if tasks is not None else (0, 0))
    holding = evidence_clusters(labels, design["task_codes"], rows)
    sweeps = feature_sweeps(scores, base_scores, labels, design, rows, caches["base_sweeps"])
    undefined = variance_undefined(labels, groups, rows)
    parts = None if undefined else paired_parts(scores, base_scores, labels, groups,
                                                rows, caches["base_components"])
    delta_all, delta_same = auc - base_auc, auc - base_same
    within = auc_in_direction(within_u, within_pairs, "+")
    identity_same = task_identity_same_rows(*identity, labels, groups, rows,
                                            caches["identity_rows"])
    key = tuple(rows)
    if key not in caches["ceilings"]:
        caches["ceilings"][key] = task_ceiling(labels, tasks, groups, rows)
    ceiling = caches["ceilings"][key]
    flags = feature_flags(auc, delta_all, delta_same, within, ceiling, len(rows) < n,
                          screen_note)
    delong = delong_p(scores, base_scores, labels, groups, rows, parts=parts)
    feature = {
        "name": name, "n_defined": len(rows), "n_undefined": n - len(rows),
        "n_successes": sum(labels[i] for i in rows), "auc": auc,
        "direction": direction, "auc_pooled": pooled,
        "direction_pooled": pooled_direction,
        "baseline_auc_all_rows": base_auc, "baseline_auc_same_rows": base_same,
        "baseline_direction_same_rows": base_same_direction,
        "delta_all_rows": delta_all, "delta_same_rows": delta_same,
        "delong_p": delong,
        "delong_undefined": undefined,
        "clustered": few_clusters_withheld(clustered_difference(
            scores, base_scores, labels, groups, design["task_codes"], rows, parts=parts),
            holding),
        "evidence_clusters": min(holding), "clusters_holding": {
            "success": holding[0], "failure": holding[1]},
        "within_task_auc": within, "within_task_pairs": within_pairs,
        "task_identity_auc_same_rows": identity_same,
        "task_ceiling_same_rows": ceiling, "flags": flags,
        "duplicate_of": screen_note["duplicate_of"],
        "youden_equal_to": screen_note["youden_equal_to"]}
    return feature, sweeps


def gate_one(family_names, values_of, labels, baseline, design, base_auc, identity,
             screen_notes):
    """Gate 1 for every feature of the family; returns (features, bootstrap sweeps)."""
    # Features defined on the same rows share the baseline's figures on those rows.
    caches = {"same_rows": {}, "identity_rows": {}, "base_sweeps": {}, "base_components": {},
              "ceilings": {}}
    features, sweeps = [], []
    for name in family_names:
        feature, pair = gate_one_feature(name, values_of[name], labels, baseline, design,
                                         base_auc, identity, screen_notes[name], caches)
        features.append(feature)
        sweeps.append(pair)
    return features, sweeps


def family_null_and_bootstrap(features, values_of, labels, design, sweeps, base_auc, perms,
                              boot, seed):
    """Gate 2 and the resamples of gate 3: the family null from the shuffles, and the
    bootstrap differences; returns (family null, differences, skipped resamples)."""
    null_family = NullFamily([values_of[f["name"]] for f in features], design["strata_codes"],
                             len(design["strata_levels"]) or 1)
    work = design["n"] * max(1, len(features)) * (perms + boot)
    tests = within_task_tests(features, values_of, labels, design)
    drawn = [test for test, _ in tests if not test.exact()]
    null, differences, skipped, within = resample_in_chunks(
        {"family": null_family, "labels": labels, "permute": design["permute"],
         "strata_codes": design["strata_codes"], "task_codes": design["task_codes"],
         "sweeps": sweeps, "n_clusters": design["n_clusters"], "within": drawn},
        perms if features else 0,
        0 if too_few_clusters(design["n_clusters"]) else boot, seed,
        parallel=work >= PARALLEL_WORK)
    within_task_p(features, tests, dict(zip(map(id, drawn), within)), perms)
    family_null = family_tests(features, null, base_auc, perms)
    family_null["permute"] = design["permute"]
    family_null["stratified"] = bool(design["strata_levels"])
    family_null["permute_default"] = design["permute_default"]
    family_null["permute_reason"] = design["permute_reason"]
    family_null["tasks_never_moved"] = design["tasks_never_moved"]
    return family_null, differences, skipped


def within_task_tests(features, values_of, labels, design):
    """Gate 3's within-task tests, one per set of defined rows (features on the same
    rows share its shuffles): [(WithinTaskTest, indices of its features)]. None
    without a task column."""
    if design["tasks"] is None:
        return []
    by_rows = {}
    for index, feature in enumerate(features):
        rows = tuple(i for i, v in enumerate(values_of[feature["name"]]) if v is not None)
        by_rows.setdefault(rows, []).append(index)
    tests = []
    for rows, members in by_rows.items():
        test = WithinTaskTest([values_of[features[j]["name"]] for j in members],
                              [features[j]["direction"] for j in members], labels,
                              design["cell_codes"], design["strata_codes"], rows)
        tests.append((test, members))
    return tests


def within_task_p(features, tests, drawn_counts, perms):
    """Write each feature's within-task p: exact where every arrangement can be listed
    (WithinTaskTest.exact), else from `perms` shuffles inside cells, (1 + those
    at least as extreme) / (1 + perms). None without within-task pairs."""
    for test, members in tests:
        if id(test) in drawn_counts:
            counts, total = drawn_counts[id(test)], perms
            values = [(1 + c) / (1 + total) if perms else None for c in counts]
            method = "monte carlo"
        else:
            counts, total = test.exact_counts()
            values = [c / total for c in counts]
            method = "exact"
        for j, value in zip(members, values):
            has_pairs = features[j]["within_task_pairs"] > 0
            features[j]["within_task_p"] = value if has_pairs else None
            features[j]["within_task_test"] = {
                "method": method if has_pairs else None, "arrangements": test.arrangements(),
                "draws": total if has_pairs else 0,
                "smallest_p": (1 / test.arrangements() if method == "exact" else
                               1 / (1 + total)) if has_pairs and total else None}
    for feature in features:
        feature.setdefault("within_task_p", None)
        feature.setdefault("within_task_test", None)


def gate_three(features, differences, skipped, n_clusters):
    """Gate 3 and each feature's verdict: the task-cluster interval of the difference,
    and from the same resamples gate 1's joint interval over the family; both withheld
    below FEW_CLUSTERS clusters. Returns the joint interval's critical value."""
    low, high = (1 - CONFIDENCE) / 2, 1 - (1 - CONFIDENCE) / 2
    # The few-clusters rule, per feature: the clusters that hold its evidence.
    eligible = [j for j, f in enumerate(features)
                if not too_few_clusters(n_clusters, f["evidence_clusters"])]
    critical, bands = joint_interval([features[j]["delta_same_rows"] for j in eligible],
                                     [differences[j] for j in eligible]) \
        if eligible and differences else (None, [])
    joint = [None] * len(features)
    for j, band in zip(eligible, bands):
        joint[j] = band
    for j, (feature, diffs, skips) in enumerate(zip(features, differences, skipped)):
        drawn = sorted(d for d in diffs if d is not None)
        feature["delta_ci"] = [percentile(drawn, low), percentile(drawn, high)] \
            if drawn and j in eligible else None
        feature["delta_joint_ci"] = joint[j]
        feature["bootstrap_skipped"] = skips
        feature["power"] = feature_power(feature, drawn, critical, n_clusters,
                                         eligible=j in eligible)
        feature["flags"] = [flag for flag in feature["flags"] if flag != "below_task_identity"
                            or not within_task_rejects(feature)]
        feature["verdict"] = gate_verdict(feature, n_clusters, len(eligible))
    return critical


POWER = 0.80
ALL_POWER_PERCENT = int(POWER * 100)
Z_POWER = statistics.NormalDist().inv_cdf(POWER)


def feature_power(feature, drawn, critical, n_clusters, eligible=True):
    """What gate 1 could have detected: the smallest same-row difference its joint
    interval clears with POWER (80%) probability, (c + z) sd, from the task-cluster
    bootstrap's sd of the difference and the joint critical value c (a normal
    approximation: the difference moves, its spread does not); and the tasks that
    difference-sized evidence needs for the observed difference, clusters x
    ((c + z) sd / diff)^2 (the sd shrinks as one over the root of the tasks).

    Where the few-clusters rule withholds the interval nothing can pass
    ('can_pass' False), and the figures use the per-feature bar 1.96 instead of c.

    >>> power = feature_power({"delta_same_rows": 0.1}, [-0.1, 0.0, 0.1, 0.2, 0.3], 2.0, 20)
    >>> round(power["detectable_diff_80"], 4), power["tasks_for_observed_80"]
    (0.4493, 404)
    """
    if critical is None or not eligible:
        critical = statistics.NormalDist().inv_cdf(1 - (1 - CONFIDENCE) / 2)
    result = {"level": POWER, "can_pass": eligible, "detectable_diff_80": None,
              "tasks_for_observed_80": None, "sd": None, "critical": critical}
    if len(drawn) < 2:
        return result
    sd = statistics.stdev(drawn)
    detectable = (critical + Z_POWER) * sd
    result.update(sd=sd, detectable_diff_80=detectable)
    diff = feature["delta_same_rows"]
    if diff > 0:
        result["tasks_for_observed_80"] = math.ceil(n_clusters * (detectable / diff) ** 2)
    return result


def within_task_rejects(feature):
    """Gate 3's within-task test rejects at SIGNIFICANCE: the feature separates runs of one
    task x stratum cell beyond what shuffling their outcomes there gives."""
    return feature.get("within_task_p") is not None and feature["within_task_p"] < SIGNIFICANCE


def audit_verdict(features):
    """The verdict: the features that pass all three gates, and the level used."""
    passing = [f["name"] for f in features if f["verdict"] == PASS_VERDICT]
    untested = [f["name"] for f in features if f["verdict"] == NO_TASK_VERDICT]
    return {"passing": passing, "passing_gates_1_and_2_only": untested, "alpha": SIGNIFICANCE}


def audit_result(labels, design, baseline_summary, identity, features, family_null,
                 degenerate, boot, critical):
    """Gather the audit's figures into the report's plain data."""
    n, tasks, n_clusters = design["n"], design["tasks"], design["n_clusters"]
    identity_auc, identity_direction = identity
    return {
        "n_runs": n, "n_successes": sum(labels), "n_failures": n - sum(labels),
        "n_tasks": len(design["task_levels"]) if tasks is not None else None,
        "clusters": "tasks" if tasks is not None else "runs",
        "strata_levels": design["strata_levels"],
        "baseline": baseline_summary,
        "task_identity_auc": identity_auc, "task_identity_direction": identity_direction,
        "features": features, "family_null": family_null,
        "bootstrap": {"resamples": 0 if too_few_clusters(n_clusters) else boot,
                      "clusters": n_clusters, "defined": not too_few_clusters(n_clusters),
                      "few_clusters": FEW_CLUSTERS, "joint_critical": critical,
                      "warning": cluster_warning(n_clusters,
                                                 "task" if tasks is not None else "run"),
                      "confidence": CONFIDENCE},
        "degenerate": degenerate,
        "verdict": audit_verdict(features),
        "power": power_summary(features),
    }


def power_summary(features):
    """The report-wide power figure: the smallest detectable same-row difference over
    the features that can pass (each feature's own figures are in its 'power')."""
    detectable = [f["power"]["detectable_diff_80"] for f in features
                  if f["power"]["can_pass"] and f["power"]["detectable_diff_80"] is not None]
    return {"level": POWER, "smallest_detectable_diff_80": min(detectable, default=None),
            "features_that_cannot_pass": [f["name"] for f in features
                                          if not f["power"]["can_pass"]],
            "method": "(joint critical c + z_0.80) x the task-cluster bootstrap sd of the "
                      "same-row difference, a normal approximation for gate 1"}


def audit(labels, candidates, baseline, *, tasks=None, strata=None, perms=DEFAULT_PERMS,
          boot=DEFAULT_BOOT, seed=DEFAULT_SEED, permute=None, baseline_name=DEFAULT_BASELINE,
          named=False):
    """Apply the three gates; return the report as plain data.

    labels: list of 0/1. candidates: [(name, values)] with None for undefined.
    baseline: values of the baseline (no None). tasks, strata: lists of labels or None.
    """
    design = audit_design(labels, tasks, strata, permute)
    base_auc, base_direction, base_pooled = baseline_figures(baseline, labels,
                                                             design["groups"])
    family_names, degenerate, screen_notes = find_degenerate(
        candidates, labels, (baseline_name, baseline), strata, named=named)
    values_of = dict(candidates)
    identity_auc, identity_direction, rate = task_identity(labels, design)
    features, sweeps = gate_one(family_names, values_of, labels, baseline, design, base_auc,
                                (identity_auc, rate), screen_notes)
    family_null, differences, skipped = family_null_and_bootstrap(
        features, values_of, labels, design, sweeps, base_auc, perms, boot, seed)
    critical = gate_three(features, differences, skipped, design["n_clusters"])
    return audit_result(labels, design,
                        {"name": baseline_name, "auc": base_auc, "direction": base_direction,
                         "auc_pooled": base_pooled},
                        (identity_auc, identity_direction), features, family_null,
                        degenerate, boot, critical)


# === Input ===
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


def runs_table(inputs, runs, demo=False):
    """Read the runs table (the demo's, or the one named) and the tool_calls.csv beside it."""
    if demo:
        return parse_table_text(DEMO_RUNS, "demo", "csv"), None
    if not runs:
        raise InputError("no runs table given (a CSV/TSV/JSONL/JSON file, '-' or a "
                         "runs folder); try --demo or --help")
    table = inputs.read_table(runs)
    return table, inputs.sibling_table(runs, "tool_calls.csv")


def audited_rows(table, where, run_col):
    """The rows --where selects, in one canonical order, with their run ids checked."""
    rows = select_rows(table, where)
    # One canonical order (by run id, else by the row's cells), so that the same rows
    # in any order give the same draws, the same "first" examples and the same bytes.
    if run_col:
        rows.sort(key=lambda i: table.rows[i][run_col].strip())
    else:
        rows.sort(key=lambda i: [table.rows[i][c] for c in table.columns])
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
    return rows


def joined_outcome(inputs, table, rows, run_col, task_col, notes, *, verdicts, outcome=None,
                   own=None, any_model=False):
    """The outcome joined from a grader's verdicts (the file `verdicts`, its column
    `outcome`); the table's own outcome column `own` is set aside and compared. Returns
    (labels, the rows kept, the outcome's name, the verdicts' tasks, their name)."""
    source = read_verdicts(inputs, verdicts, outcome)
    model_col = table.column(None, candidates=VERDICT_MODEL_COLUMNS, required=False)

    def cell(i, column):
        return table.rows[i][column].strip() if column else None
    joined = join_verdicts(source, [
        {"run_id": cell(i, run_col), "task": cell(i, task_col) or None,
         "model": cell(i, model_col) or None, "label": f"row {table.lines[i]}",
         "empty_diff": cell(i, run_col) in getattr(table, "empty_diffs", ())}
        for i in rows], runs_table=table.name, any_model=any_model)
    notes.append(f"verdicts' model: {joined['model_check']}")
    if joined["empty_ungraded_note"]:
        notes.append(joined["empty_ungraded_note"])
    if own:
        notes.append("the table's " + set_aside_text(set_aside(own, [
            (optional_bool(table.rows[i][own]), v["verified"])
            for i, v in zip(rows, joined["verdicts"])])))
    # A grading error (regrade.py's empty outcome, SWE-bench's error_ids, ...) is
    # no verdict: the run is left out, and counted by status, never read as failed.
    kept = [(i, v) for i, v in zip(rows, joined["verdicts"]) if v["verified"] is not None]
    labels = [int(v["verified"]) for _, v in kept]
    if joined["unchecked"]:
        left_out = sum(len(ids) for ids in joined["unchecked"].values())
        notes.append(f"{plural(left_out, 'run')} left out: no verdict, a grading error "
                     f"({grading_error_text(joined['unchecked'])})")
        rows = [i for i, _ in kept]
    outcome_name = (f"{source['format']} {relative_path(source['name'])}, joined on "
                    f"{joined['key']}")
    tasks = task_name = None
    if task_col is None and all(v["instance_id"] for _, v in kept):
        tasks = [v["instance_id"] for _, v in kept]
        task_name = f"instance_id (from {relative_path(source['name'])})"
    return labels, rows, outcome_name, tasks, task_name


def table_outcome(table, rows, outcome_col):
    """The outcome read from the table's own column, defined on every audited run."""
    labels = []
    for i in rows:
        if is_missing(table.rows[i][outcome_col]):
            raise InputError(f"{table.where(i, outcome_col)}: the outcome is undefined; "
                             f"every audited run needs one (drop it with --where)")
        labels.append(int(parse_bool(table.rows[i][outcome_col],
                                     table.where(i, outcome_col))))
    return labels


def check_two_classes(table, labels, outcome_name, where):
    """Refuse an outcome with one class: an AUC needs successes and failures."""
    successes = sum(labels)
    if successes in (0, len(labels)):
        raise InputError(f"{table.name}: the outcome {outcome_name} has one class "
                         f"({successes} successes, {len(labels) - successes} failures"
                         f"{' after --where' if where else ''}); an AUC needs both")


def guessed_task_column(table, rows, taken, notes):
    """With none of TASK_NAMES present: the first of TASK_GUESS_NAMES the table has
    (in that list's order, as every name list: first match wins), else the first column
    ending in _id (not the run id) whose
    values repeat across the audited runs, with a note saying which was taken; None
    when there is none."""
    lowered = {c.lower(): c for c in table.columns if c not in taken}
    named = [lowered[name] for name in TASK_GUESS_NAMES if name in lowered]
    repeating = [c for c in table.columns if c not in taken and c.lower().endswith("_id")
                 and c.lower() not in OUTCOME_NAMES and repeats(table, rows, c)]
    for column in named + repeating:
        why = ("named like a task" if column in named else
               "an id whose values repeat across runs")
        notes.append(f"task column: took {column!r} as the task ({why}; none of "
                     f"{', '.join(TASK_NAMES)} is present); name another with --task")
        return column
    return None


def repeats(table, rows, column):
    """Whether some value of `column` (not empty) holds two or more of the runs, and
    the column holds at least two values."""
    seen = collections.Counter(table.rows[i][column].strip() for i in rows)
    seen.pop("", None)
    return len(seen) >= 2 and max(seen.values(), default=0) >= 2


def read_tasks(table, rows, task_col, tasks, task_name, notes):
    """The task of each audited run: the task column, else the verdicts' instance ids;
    returns (tasks, their name), both None when there is neither."""
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
                     "task-identity figures are undefined and gate 3 is not applied (name "
                     "the task with --task)")
    return tasks, task_name


def read_strata(table, rows, strata_col, notes):
    """The stratum of each audited run, or None without --strata."""
    if not strata_col:
        return None
    strata = []
    for i in rows:
        cell = table.rows[i][strata_col].strip()
        if is_missing(cell):
            raise InputError(f"{table.where(i, strata_col)}: empty stratum")
        strata.append(cell)
    if len(set(strata)) < 2:
        notes.append(f"--strata {strata_col}: one level only, so stratified = pooled")
    return strata


def baseline_column(table, base_col, rows):
    """The baseline read from the table's column, defined on every audited run."""
    baseline = numeric_column(table, base_col, rows)
    for value, i in zip(baseline, rows):
        if value is None:
            raise InputError(f"{table.where(i, base_col)}: the baseline is undefined; "
                             f"it must be defined on every audited run")
    return baseline


def check_baseline_varies(table, baseline, name, base_source):
    """Refuse a constant baseline: it has no AUC to beat."""
    if len(set(baseline)) == 1:
        raise InputError(f"{table.name}: the baseline {name} "
                         f"({base_source}) is {number_text(baseline[0])} on every one of the "
                         f"{len(baseline)} audited runs; a constant baseline has no AUC to "
                         f"beat")


def read_baseline(table, tool_table, rows, run_col, run_ids, notes, name=DEFAULT_BASELINE):
    """The baseline (`name`, from --baseline): the table's column, checked against
    tool_calls.csv when it is there, else counted from it; returns (baseline, column,
    source, the check)."""
    base_col = name if name in table.columns else None
    baseline = baseline_column(table, base_col, rows) if base_col else None
    table_run_ids = ([row[run_col].strip() for row in table.rows] if run_col else None)
    # Only a tool-call count can be checked against the log; another --baseline
    # column is taken as it is.
    counts_calls = name == DEFAULT_BASELINE
    check = recount_tool_calls(tool_table if counts_calls or not base_col else None, run_ids,
                               baseline, base_col, table_run_ids)
    if check:
        notes.extend(check.pop("notes"))
    if not base_col and not counts_calls:
        # Only the tool-call count may come from the log: another name must be a column
        # (a typo was counted from tool_calls.csv and printed under the name typed).
        raise InputError(f"--baseline {name!r}: no such column in {table.name}; only "
                         f"{DEFAULT_BASELINE} can be counted from tool_calls.csv; columns "
                         f"are {', '.join(table.columns)}")
    if not base_col:
        if not check or check.get("recomputed") is None:
            raise InputError(f"{table.name}: no baseline column {name!r} (name it "
                             f"with --baseline) and no tool_calls.csv beside it to count; "
                             f"columns are {', '.join(table.columns)}")
        baseline = check.pop("recomputed")
        base_source = f"counted from {relative_path(tool_table.name)}"
    else:
        if check:
            check.pop("recomputed", None)
        base_source = f"column {base_col!r}"
    check_baseline_varies(table, baseline, base_col or name, base_source)
    return baseline, base_col, base_source, check


def named_features(features, table, taken):
    """The columns named with --features, checked: present, not a role, none twice."""
    names = [n.strip() for n in features.split(",") if n.strip()]
    for name in names:
        table.column(name, flag="--features")
        if name in taken:
            raise InputError(f"--features: {name!r} is the run id, outcome, task, "
                             f"strata or baseline column, not a feature")
    if len(set(names)) != len(names):
        raise InputError("--features: a column is named twice")
    return names


def numeric_features(table, rows, roles):
    """Every numeric column that plays no role; returns (names, not candidates, left
    out, the values already read)."""
    names, not_candidates, left_out, read = [], [], [], {}
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
    return names, not_candidates, left_out, read


def choose_features(features, table, rows, taken, roles):
    """The family: the columns named with --features (`features`, 'a,b'), else the
    derived process measures, else every numeric column; returns (names, not
    candidates, left out, the values already read)."""
    if features:
        names = named_features(features, table, taken)
        not_candidates = [{"name": c, "why": roles.get(c, "not named")}
                          for c in table.columns if c not in names]
        return names, not_candidates, [], {}
    if set(RUN_COLUMNS) <= set(table.columns):
        # A runs table derived from agent output (or written by --write-runs): the
        # family is the derived process measures, tool_calls the baseline.
        names = [c for c in PROCESS_MEASURES if c not in taken]
        not_candidates = [{"name": c, "why": roles.get(c, "not a process measure")}
                          for c in table.columns if c not in names and c not in taken]
        return names, not_candidates, [], {}
    return numeric_features(table, rows, roles)


def read_feature_values(table, names, rows, read):
    """Each feature's values on the audited rows; refuse a family undefined everywhere."""
    candidates = [(name, read[name] if name in read else numeric_column(table, name, rows))
                  for name in names]
    if all(v is None for _, values in candidates for v in values):
        raise InputError(f"{table.name}: every feature is undefined on every audited run "
                         f"({', '.join(names[:6])}{', ...' if len(names) > 6 else ''})")
    return candidates


def read_runs(inputs, table, tool_table, *, run_id=None, task=None, strata=None, where=(),
              outcome=None, baseline=DEFAULT_BASELINE, verdicts=None, any_model=False,
              features=None):
    """Read and check every input (the flags' plain values name the columns); return
    the audit's arguments and the report's notes."""
    notes = list(getattr(table, "notes", ()))   # what agent output left to assumption
    run_col = table.column(run_id, flag="--run-id", candidates=RUN_ID_NAMES,
                           required=False)
    task_col = table.column(task, flag="--task", candidates=TASK_NAMES, required=False)
    strata_col = table.column(strata, flag="--strata") if strata else None
    rows = audited_rows(table, where, run_col)
    n_selected = len(rows)
    if task_col is None and not task:
        task_col = guessed_task_column(table, rows, {run_col, strata_col, outcome,
                                                     baseline}, notes)

    # The outcome: from the table, or joined from a grader's verdicts (the table's
    # own outcome column then set aside, unless --outcome names the verdicts' column).
    if verdicts:
        outcome_col = (table.column(None, candidates=OUTCOME_NAMES, required=False)
                       if not outcome else None)
        labels, rows, outcome_name, tasks, task_name = joined_outcome(
            inputs, table, rows, run_col, task_col, notes, verdicts=verdicts,
            outcome=outcome, own=outcome_col, any_model=any_model)
    else:
        outcome_col = table.column(outcome, flag="--outcome", candidates=OUTCOME_NAMES)
        labels, outcome_name = table_outcome(table, rows, outcome_col), outcome_col
        tasks = task_name = None
    run_ids = [table.rows[i][run_col].strip() for i in rows] if run_col else None
    check_two_classes(table, labels, outcome_name, where)
    tasks, task_name = read_tasks(table, rows, task_col, tasks, task_name, notes)
    strata_values = read_strata(table, rows, strata_col, notes)
    baseline_values, base_col, base_source, check = read_baseline(
        table, tool_table, rows, run_col, run_ids, notes, baseline)

    # The features, once every column playing a role is set aside.
    taken = {c for c in (run_col, task_col, strata_col, base_col, baseline) if c}
    if outcome_col:
        taken.add(outcome_col)
    roles = {run_col: "run id", task_col: "task", strata_col: "strata", base_col: "baseline"}
    if outcome_col:
        roles[outcome_col] = "outcome" + (" (set aside: --verdicts wins)" if verdicts
                                          else "")
    names, not_candidates, left_out, read = choose_features(features, table, rows, taken,
                                                            roles)
    candidates = read_feature_values(table, names, rows, read)
    if where:
        notes.append(f"audited subset: {' and '.join(where)} "
                     f"({n_selected} of {plural(len(table.rows), 'run')})")
    return {
        "labels": labels, "candidates": candidates, "baseline": baseline_values,
        "tasks": tasks, "strata": strata_values, "baseline_name": base_col or baseline,
        "meta": {"table": relative_path(table.name), "outcome": outcome_name, "task": task_name,
                 "strata": strata_col, "run_id": run_col, "where": list(where),
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
    check = {"checked": True, "source": relative_path(tool_table.name), "column": base_col,
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
                ("no_within_task_signal", "N", "within-task AUC exactly 0.5 (all ties, "
                 "or wins and losses even)"),
                ("below_task_identity", "I", "at or below the task ceiling on its rows (the "
                 "best any function of the task alone reaches) and not separating runs "
                 "within tasks (within p >= 0.05)"),
                ("partial_rows", "P", "undefined on some runs"),
                ("duplicate", "D", "a named copy of another column"),
                ("youden_equal", "Y", "equal to another column at their best cuts (a flag "
                 "only)"))
PERMUTE_WORDS = {"rows": "across all runs", "strata": "within strata",
                 "tasks": "of whole tasks among tasks of the same shape"}


def permute_words(null):
    """How the shuffles were drawn, and whether that is the default, for the report."""
    words = PERMUTE_WORDS[null["permute"]]
    if null["permute"] == "tasks" and null.get("stratified"):
        words += " (runs per stratum), within strata"
    if null.get("permute_default"):
        return f"{words}; the default: {null['permute_reason']}"
    return f"{words}; chosen with --permute {null['permute']}"


# The direction after an AUC: in Markdown an arrow, which cannot be read as a minus sign.
DIRECTION_MARKS = {"text": {"+": "+", "-": "-"}, "markdown": {"+": "\u2191", "-": "\u2193"}}
DIRECTION_LEGEND = {"text": "AUC direction: + higher means success, - lower means success",
                    "markdown": "AUC direction: \u2191 a higher value means success, "
                                "\u2193 a lower value means success"}


def auc_text(value, direction, style="text"):
    """An AUC with its direction: '0.661 -' in text, '0.661 \u2193' in Markdown."""
    if value is None:
        return "undefined"
    return f"{fmt(value)} {DIRECTION_MARKS.get(style, DIRECTION_MARKS['text'])[direction]}"


def signed(value):
    return "undefined" if value is None else ("+" if value > 0 else "") + fmt(value)


def summary_lines(result, style="text"):
    """(label, sentence) pairs for the report's header."""
    up = DIRECTION_MARKS.get(style, DIRECTION_MARKS["text"])["+"]
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
                              f"{auc_text(base['auc'], base['direction'], style)}{pooled}"))
    check = meta["baseline_check"]
    if not check:
        lines.append(("baseline check", "not made: no tool_calls.csv beside the runs table"
                      if base["name"] == DEFAULT_BASELINE else
                      f"not made: {base['name']!r} is not the tool-call count"))
    elif check.get("checked") and check.get("equal") is not None:
        if check["equal"]:
            text = (f"recounted from {relative_path(check['source'])} "
                    f"({plural(check['calls_counted'], 'call')}): "
                    f"equal to {check['column']!r} on all {check['runs_compared']} runs")
        else:
            first = check["first_mismatch"]
            text = (f"recounted from {relative_path(check['source'])}: differs on "
                    f"{check['mismatches']} of "
                    f"{check['runs_compared']} runs, first {first['run_id']} "
                    f"({count_text(first['table'])} vs {count_text(first['recomputed'])})")
        lines.append(("baseline check", text))
    if not meta["task"]:
        identity = "undefined (no task column)"
    elif result["n_tasks"] < 2:
        identity = "undefined (fewer than 2 tasks)"
    elif result["task_identity_auc"] is None:
        identity = ("undefined: it scores only the runs that share their task with "
                    "another, and those hold no success and failure pair")
    else:
        identity = (f"AUC {auc_text(result['task_identity_auc'], '+', style)} from the "
                    f"other runs' success rate in the same task, read in the fixed {up} "
                    f"direction "
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
    untested = result["verdict"]["passing_gates_1_and_2_only"]
    if untested:
        lines.append(f"Passes gates 1 and 2; gate 3 not applied: no task column, so "
                     f"nothing here says the signal is more than task difficulty: "
                     f"{', '.join(untested)}.")
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
            if doubts:
                lines.append(f"But {feature['name']}: {'; '.join(doubts)}. It may measure "
                             f"task difficulty rather than the quality of the work.")
    elif not untested:
        lines.append("No feature passes all three gates.")
    for feature in features:
        if feature["name"] not in passing and feature["name"] not in untested:
            lines.append(f"{feature['name']}: {feature['verdict']} (diff "
                         f"{signed(feature['delta_same_rows'])} "
                         f"{fmt_ci(feature['delta_ci']) or '[undefined]'}, minP adj p "
                         f"{fmt_p(feature['adjusted_p'], null['smallest_p'])}).")
    lines.append(power_line(result))
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
    return lines


def power_line(result):
    """The verdict's power sentence: what gate 1 could have detected, per feature."""
    parts, blocked, needs = [], [], []
    for feature in result["features"]:
        power = feature["power"]
        if not power["can_pass"]:
            blocked.append(feature["name"])
            if power["tasks_for_observed_80"] is not None:
                needs.append(f"{feature['name']}'s {signed(feature['delta_same_rows'])} "
                             f"about {power['tasks_for_observed_80']}")
            continue
        if power["detectable_diff_80"] is None:
            continue
        text = f"{feature['name']} {fmt(power['detectable_diff_80'])}"
        if power["tasks_for_observed_80"] is not None:
            text += f" (its {signed(feature['delta_same_rows'])} needs about " \
                    f"{power['tasks_for_observed_80']} tasks)"
        parts.append(text)
    kind = "tasks" if result["clusters"] == "tasks" else "runs"
    line = (f"Power: a failed gate means these data could not see an effect, not that "
            f"there is none. The smallest same-row difference gate 1 detects with "
            f"{int(POWER * 100)}% power, (joint c + {fmt(Z_POWER)}) x the task-cluster "
            f"bootstrap sd (a normal approximation; gates 2 and 3 only make passing "
            f"harder): ")
    line += ("; ".join(parts) + ".") if parts else "none here."
    if blocked:
        line += (f" No effect of any size could pass for {', '.join(blocked)}: fewer than "
                 f"{FEW_CLUSTERS} {kind} hold a success, or a failure, on their rows.")
    if blocked and too_few_clusters(result["bootstrap"]["clusters"]):
        line += (f" With {plural(result['bootstrap']['clusters'], kind[:-1])} in all no "
                 f"resamples are drawn, so there is no spread to give the {kind} needed "
                 f"from: nothing can pass before {FEW_CLUSTERS} {kind} hold a success and "
                 f"{FEW_CLUSTERS} a failure.")
    if needs:
        line += (f" At the bootstrap's spread of these {plural(result['bootstrap']['clusters'], kind[:-1])}"
                 f" (bar {fmt(statistics.NormalDist().inv_cdf(1 - (1 - CONFIDENCE) / 2))}, "
                 f"one feature), {ALL_POWER_PERCENT}% power for the observed difference "
                 f"takes: {'; '.join(needs)} {kind}.")
    return line


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
    """The gate-1 table, the p-values table and the gate-3 table; `names` maps a
    feature's name to the form printed (shortened in text, full in Markdown)."""
    stratified = bool(result["meta"]["strata"])
    first = []
    for f in result["features"]:
        row = [names[f["name"]], str(f["n_defined"]),
               auc_text(f["auc"], f["direction"], style)]
        if stratified:
            row.append(auc_text(f["auc_pooled"], f["direction_pooled"], style))
        row += [fmt(f["baseline_auc_all_rows"]), fmt(f["baseline_auc_same_rows"]),
                signed(f["delta_same_rows"]), fmt_ci(f["delta_ci"]) or "undefined"]
        first.append(row)
    letters = {code: letter for code, letter, _ in FLAG_LETTERS}
    # Two tables, not one: each fits an issue comment (about 780 px) without
    # wrapping a value. The p-values first, then gate 3 and the flags.
    floor = result["family_null"]["smallest_p"]
    second = [[names[f["name"]], fmt_p(f["permutation_p"], floor),
               fmt_p(f["adjusted_p"], floor), fmt_p(f["max_auc_p"], floor),
               fmt_p(f["delong_p"]), fmt_p(f["clustered"]["p"])]
              for f in result["features"]]
    third = [[names[f["name"]], fmt_ci(f["delta_joint_ci"]) or "undefined",
              fmt(f["within_task_auc"]), str(f["within_task_pairs"]),
              fmt_p(f["within_task_p"], (f["within_task_test"] or {}).get("smallest_p")),
              fmt(f["task_ceiling_same_rows"]),
              " ".join(letters[c] for c in f["flags"]) or "-", verdict_word(f)]
              for f in result["features"]]
    headers = ["feature", "rows", "AUC"] + (["pooled"] if stratified else []) + \
        ["base all", "base same", "diff", "95% CI"]
    return (render_table(headers, first, style),
            render_table(["feature", "perm p", "minP adj p", "max-AUC p", "DeLong p",
                          "clustered p"], second, style),
            render_table(["feature", "joint 95% CI", "within", "pairs", "within p",
                          "ceiling", "flags", "verdict"], third, style))


def verdict_word(feature):
    """The verdict column: 'passes', 'fails gate N', or 'gate 3 not applied' (short,
    so it never wraps; the verdict section gives the reason)."""
    if feature["verdict"] == PASS_VERDICT:
        return "passes"
    if feature["verdict"] == NO_TASK_VERDICT:
        return "gate 3 not applied"
    return feature["verdict"].split(":")[0]


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
    if style == "markdown":       # reasons are sentences: a list reads better than a table
        return "\n".join(f"- {name}: {reason}" for name, reason in rows)
    table = render_table(["column", "reason"], rows, style)
    if style == "markdown" or max(len(line) for line in table.splitlines()) <= TEXT_WIDTH:
        return table
    return "\n".join(wrap(f"{name}: {reason}", TEXT_WIDTH, indent="    ")
                     for name, reason in rows)


def report_names(result, md):
    """Each feature's and left-out column's name as the report prints it."""
    names = {} if md else text_names(result)
    for name in itertools.chain((f["name"] for f in result["features"]),
                                (d["name"] for d in result["degenerate"])):
        names.setdefault(name, name)
    return names


def report_heading(text, md):
    """A section heading: '### ' in Markdown, a wrapped line in text."""
    return f"### {text}" if md else wrap(text)


def report_paragraph(text, md):
    """A paragraph of prose, wrapped in text only."""
    # GitHub comments turn a line break into a break: Markdown prose stays one line.
    return text if md else wrap(text)


def header_section(result, style, md):
    """The title, the question the report answers, and the summary lines."""
    out = []
    title = "auc_audit: process measures against counting tool calls"
    out.append(f"## {title}" if md else title)
    out.append("")
    out.append("Does a measure beat counting tool calls, on the same rows, beyond chance?")
    out.append("")
    for label, text in summary_lines(result, style):
        out.append(f"- **{label}**: {text}" if md else wrap(f"{label:<15} {text}", indent=" " * 16))
    out.append("")
    return out


def gate_one_section(result, style, md, gate1):
    """Gate 1: each feature against the baseline on the same rows."""
    boot = result["bootstrap"]
    kind = "task" if result["clusters"] == "tasks" else "run"
    if boot["defined"]:
        interval = (f"{int(boot['confidence'] * 100)}% CI of diff from "
                    f"{boot['resamples']} resamples of the {plural(boot['clusters'], kind)}")
        short = [f for f in result["features"] if f["evidence_clusters"] < boot["few_clusters"]]
        if short:
            interval += (f", withheld ('undefined') for "
                         f"{'every feature' if len(short) == len(result['features']) else plural(len(short), 'feature')}"
                         f" whose rows hold fewer than {boot['few_clusters']} {kind}s with a "
                         f"success or fewer than {boot['few_clusters']} with a failure")
    elif boot["clusters"] < 2:
        interval = (f"CI of diff undefined: fewer than 2 clusters to resample "
                    f"({plural(boot['clusters'], kind)})")
    else:
        interval = (f"CI of diff withheld: fewer than {boot['few_clusters']} clusters "
                    f"to resample ({plural(boot['clusters'], kind)})")
    out = []
    out.append(report_heading("Gate 1: the same rows", md))
    out.append("")
    out.append(report_paragraph(f"Each feature on its defined rows, against the baseline on "
                                f"all rows and on those same rows; {interval}.", md))
    out.append("")
    out.append(gate1)
    out.append("")
    direction = DIRECTION_LEGEND[style if md else "text"]
    out.append(f"- {direction}" if md else direction)
    out.append("")
    return out


def gates_two_and_three_section(result, md, gates23):
    """Gates 2 and 3: the family null's p values, the within-task AUC and the flags."""
    null = result["family_null"]
    out = []
    out.append(report_heading("Gates 2 and 3: search width and tasks", md))
    out.append("")
    out.append(report_paragraph(f"The family null ({plural(null['perms'], 'shuffle')} "
                                f"{permute_words(null)}; direction re-chosen each time), "
                                f"DeLong's paired p (not a gate), gate 1's joint interval, "
                                f"the within-task AUC, the task ceiling and flags.", md))
    out.append("")
    out.append(gates23)
    legend = "; ".join(f"{letter} {text}" for _, letter, text in FLAG_LETTERS)
    out.append("")
    out.append(f"- flags: {legend}" if md else wrap(f"flags: {legend}", indent="  "))
    columns = ("perm p: the feature's own permutation p; minP adj p: Westfall-Young "
               "step-down minP over the family (gate 2); max-AUC p: single-step "
               f"family-maximum joint p (§7 of the seed report: {SEED_REPORT}); DeLong p "
               "and clustered p: "
               "DeLong's paired test and Obuchowski's "
               f"{'task' if result['clusters'] == 'tasks' else 'run'}-clustered test of "
               "the same-row difference (shown, not used by the verdict); joint 95% CI: "
               "simultaneous (max-|T|) interval of diff over the whole family, from the "
               "same task resamples (gate 1); within: AUC over pairs inside one task "
               f"{'x stratum cell' if result['meta']['strata'] else ''}"
               f"{' ' if result['meta']['strata'] else ''}"
               "and pairs, their number; within p: its one-sided permutation p, the "
               "outcomes shuffled among the runs of each cell (exact where every "
               "arrangement can be listed; gate 3 needs p < 0.05); ceiling: the best AUC "
               "any function of the task alone reaches on the feature's rows; verdict: "
               "'passes', or the first gate failed ('fails gate 1', 2 or 3)")
    out.append(f"- {columns}" if md else wrap(columns, indent="  "))
    out.append("")
    return out


def family_null_section(result, style, names):
    """The family null's table: the shuffles' maximum against the observed one."""
    null = result["family_null"]
    rows = [["null median of the family maximum", fmt(null["median_max"])],
            [f"share of shuffles whose maximum exceeds the baseline "
             f"{fmt(result['baseline']['auc'])}", fmt(null["p_clear_bar"])],
            [f"observed maximum ({names[null['observed_max_feature']]})",
             fmt(null["observed_max"])],
            ["joint p of the observed maximum (single-step max-AUC, the seed report's §7)",
             fmt_p(null["p_observed_max"], null["smallest_p"])]]
    rest = null["without_best"]
    if rest:
        rows.append([f"the same without {names[rest['removed']]}: joint p of "
                     f"{names[rest['observed_max_feature']]} {fmt(rest['observed_max'])}",
                     fmt_p(rest["p"], null["smallest_p"])])
    return [render_table(["family null", "value"], rows, style), ""]


def left_out_section(result, style, md, names):
    """The columns left out of the family, with the reason; empty when there are none."""
    if not result["degenerate"]:
        return []
    return [report_heading("Left out of the family, with the reason", md), "",
            degenerate_table(result["degenerate"], names, style), ""]


def verdict_section(result, md):
    """The verdict, one line per finding."""
    out = [report_heading("Verdict", md), ""]
    for line in verdict_lines(result):
        out.append(f"- {line}" if md else wrap(line, indent="  "))
    return out


def shuffle_notes(result):
    """Notes on what the shuffles can show: the smallest p and tasks that never move."""
    notes = []
    null_perms = result["family_null"]["perms"]
    floor = result["family_null"].get("smallest_adjusted_p")
    if result["features"] and floor is not None:
        family = result["family_null"]["family_size"]
        text = (f"minP floor: with --perms {null_perms} and {plural(family, 'feature')} the "
                f"smallest adjusted p any feature could reach is {fmt_p(floor)} (a feature "
                f"beating every shuffle still counts the shuffles where another feature "
                f"beats every draw: about K/(N+1), not 1/(N+1))")
        if floor >= SIGNIFICANCE:
            text += (f", so gate 2 cannot pass here; run --perms "
                     f"{perms_to_pass(family)} or more")
        notes.append(text)
    never_moved = result["family_null"]["tasks_never_moved"]
    if never_moved and never_moved == result["n_tasks"]:
        notes.append(f"task shuffle: no task can move (no two share a shape), so every "
                     f"shuffle moves runs' outcomes only within task x stratum cells: the "
                     f"null keeps each task's successes, and gate 2 then tests what a "
                     f"feature says within tasks, never a signal between tasks")
    elif never_moved:
        in_strata = " in each stratum" if result["family_null"].get("stratified") else ""
        notes.append(f"task shuffle: {plural(never_moved, 'task')} of "
                     f"{result['n_tasks']} {'has' if never_moved == 1 else 'have'} no "
                     f"other task with the same number of runs{in_strata} and never "
                     f"{'moves' if never_moved == 1 else 'move'} in the shuffles (only "
                     f"{'its' if never_moved == 1 else 'their'} runs' outcomes are "
                     f"reshuffled within the task)")
    return notes


def feature_notes(result):
    """Notes on single features: undefined tests, copies, equal cuts, skipped resamples."""
    notes = []
    for feature in result["features"]:
        if feature["delong_undefined"]:
            notes.append(f"{feature['name']}: DeLong p and clustered p undefined: "
                         f"{feature['delong_undefined']}")
        elif feature["clustered"]["undefined"]:
            notes.append(f"{feature['name']}: clustered p undefined: "
                         f"{feature['clustered']['undefined']}")
        if feature["delong_p"] is None and not feature["delong_undefined"]:
            notes.append(f"{feature['name']}: DeLong p undefined: its variance is 0 while "
                         f"the two AUCs differ (each success's credit, and each failure's, "
                         f"differs by the same amount between feature and baseline), so "
                         f"it has no normal reference")
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
    return notes


def notes_section(result, md):
    """The notes: the bootstrap's warning, the input's notes, then the shuffles' and the
    features'; empty when there are none."""
    notes = list(result["meta"]["notes"])
    if result["bootstrap"]["warning"]:
        notes.insert(0, result["bootstrap"]["warning"])
    notes += shuffle_notes(result) + feature_notes(result)
    if not notes:
        return []
    out = ["", report_heading("Notes", md), ""]
    out.extend(f"- {n}" if md else wrap("- " + n, indent="  ") for n in notes)
    return out


def render_report(result, style):
    """Text or Markdown report; reads the result, computes nothing new."""
    md = style == "markdown"
    names = report_names(result, md)
    out = header_section(result, style, md)
    if result["features"]:
        gate1, p_values, gate3 = feature_tables(result, style, names)
        out += gate_one_section(result, style, md, gate1)
        out += gates_two_and_three_section(result, md, p_values + "\n\n" + gate3)
        out += family_null_section(result, style, names)
    out += left_out_section(result, style, md, names)
    out += verdict_section(result, md)
    out += notes_section(result, md)
    out.append("")
    if md:
        out = [nonbreaking(line) for line in out]
    out.append(render_provenance(result["provenance"], style))
    text = "\n".join(out) + "\n"
    return fit_to_paste(text, "attach the --format json output, which holds every row") \
        if md else text


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


SVG_COLOURS = {"bars": "#9db4d3", "baseline": "#cf222e", "observed": "#1a7f37",
               "feature": "#0969da", "interval": "#1f2328", "grid": "#d0d7de"}


def svg_range(values, step=0.1, low=0.0, high=1.0):
    """An axis range around `values`, widened to whole steps, within [low, high].

    >>> svg_range([0.614, 0.775], low=0.5)
    (0.6, 0.8)
    >>> svg_range([-0.39, 0.303, 0.0], low=-1.0)
    (-0.4, 0.4)
    """
    values = [v for v in values if v is not None] or [low, high]
    start = max(low, math.floor(round(min(values) / step, 9)) * step)
    end = min(high, math.ceil(round(max(values) / step, 9)) * step)
    if end - start < step:
        end = min(high, start + step)
        start = end - step
    return round(start, 9), round(end, 9)


def svg_ticks(start, end):
    """Tick values: the multiples of 0.1 between start and end, or of 0.2 on a range
    wider than 0.6, so that the labels stay apart.

    >>> svg_ticks(0.5, 0.8), svg_ticks(-0.7, 0.4)
    ([0.5, 0.6, 0.7, 0.8], [-0.6, -0.4, -0.2, 0.0, 0.2, 0.4])
    """
    step = 0.2 if end - start > 0.6 + 1e-9 else 0.1
    first, last = math.ceil(round(start / step, 9)), math.floor(round(end / step, 9))
    return [round(step * k, 9) + 0.0 for k in range(first, last + 1)]


def svg_mark_labels(marks, left, right):
    """Place each mark's label on its own row above the plot: the leftmost mark's label
    to the left of its line and the rightmost's to the right, so a label never crosses
    the other mark's line; a label that would leave the panel flips side."""
    placed = []
    ordered = sorted((m for m in marks if m[0] is not None), key=lambda m: m[0])
    for index, (x, colour, label) in enumerate(ordered):
        size = SVG_CHAR_WIDTH * len(label)
        leftward = index == 0 and len(ordered) > 1
        if leftward and x - 4 - size < left:
            leftward = False
        if not leftward and x + 4 + size > right:
            leftward = True
        placed.append((x, colour, label, "end" if leftward else "start",
                       x - 4 if leftward else x + 4, index))
    return placed


def svg_null_panel(result, top, left, width):
    """Panel A: the family maximum on shuffled outcomes, with the baseline and the
    observed maximum marked, their labels in a band above the bars."""
    null, base = result["family_null"], result["baseline"]["auc"]
    counts, edges = null["histogram"]["counts"], null["histogram"]["edges"]
    used = [e for c, lo, hi in zip(counts, edges, edges[1:]) if c for e in (lo, hi)]
    start, end = svg_range(used + [base, null["observed_max"]], low=0.5)
    band, plot_h = 40, 140
    bottom = top + 18 + band + plot_h
    peak = max(counts) if counts and max(counts) else 1

    def x(value):
        return left + width * (value - start) / (end - start)
    out = [f'<text x="{left}" y="{top + 10}" font-weight="bold">A. The family maximum AUC on '
           f'{null["perms"]} shuffled outcomes</text>']
    for count, low, high in zip(counts, edges, edges[1:]):
        if count and low >= start - 1e-9 and high <= end + 1e-9:
            bar = count / peak * plot_h
            out.append(f'<rect x="{x(low):.2f}" y="{bottom - bar:.2f}" '
                       f'width="{x(high) - x(low):.2f}" height="{bar:.2f}" '
                       f'fill="{SVG_COLOURS["bars"]}"/>')
    out.append(f'<line x1="{left}" y1="{bottom}" x2="{left + width}" y2="{bottom}" '
               f'stroke="{SVG_COLOURS["interval"]}"/>')
    for tick in svg_ticks(start, end):
        out.append(f'<text x="{x(tick):.2f}" y="{bottom + 16}" text-anchor="middle">'
                   f'{tick:.1f}</text>')
    marks = [(None if base is None else x(base), SVG_COLOURS["baseline"],
              f"baseline {fmt(base)}"),
             (None if null["observed_max"] is None else x(null["observed_max"]),
              SVG_COLOURS["observed"], f"observed max {fmt(null['observed_max'])}")]
    for mx, colour, label, anchor, tx, row in svg_mark_labels(marks, left, left + width):
        label_y = top + 18 + 14 + 18 * row
        out.append(f'<line x1="{mx:.2f}" y1="{label_y - 10}" x2="{mx:.2f}" y2="{bottom}" '
                   f'stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{tx:.2f}" y="{label_y}" text-anchor="{anchor}" '
                   f'fill="{colour}">{svg_escape(label)}</text>')
    caption = (f'null median {fmt(null["median_max"])}; share of shuffles above the '
               f'baseline {fmt(null["p_clear_bar"])}; p of the observed maximum '
               f'{fmt_p(null["p_observed_max"], null["smallest_p"])}')
    out.append(f'<text x="{left}" y="{bottom + 36}">{svg_escape(caption)}</text>')
    return out, bottom + 36


def svg_feature_panel(result, top, width):
    """Panel B: per feature, its AUC against the baseline's on the same rows, and the
    difference with its task-cluster bootstrap interval."""
    features, boot = result["features"], result["bootstrap"]
    kind = "task" if result["clusters"] == "tasks" else "run"
    names_right, auc_left, auc_w, diff_left = 210, 240, 200, 500
    diff_w = width - diff_left - 20
    out = [f'<text x="10" y="{top + 10}" font-weight="bold">B. Each feature against the '
           f'baseline on the feature\'s own rows</text>']
    if not features:
        out.append('<text x="10" y="{}">No feature could be tested: every candidate is '
                   'degenerate.</text>'.format(top + 34))
        return out, top + 34
    legend_y = top + 32
    out += [f'<circle cx="16" cy="{legend_y - 4}" r="5" fill="{SVG_COLOURS["feature"]}"/>',
            f'<text x="26" y="{legend_y}">feature AUC</text>',
            f'<circle cx="122" cy="{legend_y - 4}" r="5" fill="{SVG_BACKGROUND}" '
            f'stroke="{SVG_COLOURS["baseline"]}" stroke-width="2"/>',
            f'<text x="132" y="{legend_y}">baseline AUC, same rows</text>',
            f'<line x1="310" y1="{legend_y - 4}" x2="340" y2="{legend_y - 4}" '
            f'stroke="{SVG_COLOURS["interval"]}" stroke-width="2"/>',
            f'<text x="346" y="{legend_y}">diff, 95% {kind} bootstrap interval '
            f'({boot["resamples"]} resamples)</text>']
    auc_range = svg_range([v for f in features for v in
                           (f["auc"], f["baseline_auc_same_rows"])], low=0.0)
    diff_range = svg_range([0.0] + [v for f in features for v in
                                    [f["delta_same_rows"]] + list(f["delta_ci"] or [])],
                           low=-1.0)
    rows_top, row_h = top + 66, 22
    rows_bottom = rows_top + row_h * len(features) - 8

    def xa(value):
        return auc_left + auc_w * (value - auc_range[0]) / (auc_range[1] - auc_range[0])

    def xd(value):
        return diff_left + diff_w * (value - diff_range[0]) / (diff_range[1] - diff_range[0])
    out.append(f'<text x="{auc_left + auc_w / 2}" y="{rows_top - 14}" text-anchor="middle">'
               f'AUC</text>')
    out.append(f'<text x="{diff_left + diff_w / 2}" y="{rows_top - 14}" '
               f'text-anchor="middle">diff = feature - baseline</text>')
    for scale, ticks in ((xa, svg_ticks(*auc_range)), (xd, svg_ticks(*diff_range))):
        for tick in ticks:
            zero = scale is xd and tick == 0
            out.append(f'<line x1="{scale(tick):.2f}" y1="{rows_top - 8}" '
                       f'x2="{scale(tick):.2f}" y2="{rows_bottom}" '
                       f'stroke="{SVG_COLOURS["interval" if zero else "grid"]}"/>')
            out.append(f'<text x="{scale(tick):.2f}" y="{rows_bottom + 16}" '
                       f'text-anchor="middle" font-size="11">{tick:.1f}</text>')
    for index, f in enumerate(features):
        y = rows_top + row_h * index + 4
        out.append(f'<text x="{names_right}" y="{y + 4}" text-anchor="end">'
                   f'{svg_escape(shorten(f["name"], SVG_NAME_LIMIT))} ({f["n_defined"]})</text>')
        fx, bx = xa(f["auc"]), f["baseline_auc_same_rows"]
        if bx is not None:
            bx = xa(bx)
            out.append(f'<line x1="{min(fx, bx):.2f}" y1="{y}" x2="{max(fx, bx):.2f}" '
                       f'y2="{y}" stroke="#8c959f"/>')
            out.append(f'<circle cx="{bx:.2f}" cy="{y}" r="5" fill="{SVG_BACKGROUND}" '
                       f'stroke="{SVG_COLOURS["baseline"]}" stroke-width="2"/>')
        out.append(f'<circle cx="{fx:.2f}" cy="{y}" r="5" fill="{SVG_COLOURS["feature"]}"/>')
        if f["delta_ci"] and f["delta_ci"][0] is not None:
            low, high = f["delta_ci"]
            out.append(f'<line x1="{xd(low):.2f}" y1="{y}" x2="{xd(high):.2f}" y2="{y}" '
                       f'stroke="{SVG_COLOURS["interval"]}" stroke-width="2"/>')
        if f["delta_same_rows"] is not None:
            out.append(f'<circle cx="{xd(f["delta_same_rows"]):.2f}" cy="{y}" r="4" '
                       f'fill="{SVG_COLOURS["feature"]}"/>')
    return out, rows_bottom + 16


def render_svg(result):
    """The null of the family maximum (A) and each feature against the baseline on the
    same rows (B). Every drawn value, the title and the caption are numbers the report
    prints."""
    width = 760
    title = (f"auc_audit: {plural(result['family_null']['family_size'], 'feature')} against "
             f"{result['baseline']['name']} (AUC {fmt(result['baseline']['auc'])}), "
             f"{result['n_runs']} runs")
    panel_a, a_end = svg_null_panel(result, 40, 50, width - 100)
    panel_b, b_end = svg_feature_panel(result, a_end + 30, width)
    passing = result["verdict"]["passing"]
    verdict = (f"Passes all three gates: "
               f"{', '.join(shorten(name, SVG_NAME_LIMIT) for name in passing)}."
               if passing else "No feature passes all three gates.")
    if SVG_CHAR_WIDTH * len(verdict) > width - 20:
        verdict = (f"Passes all three gates: {plural(len(passing), 'feature')}, named in "
                   f"the report's verdict.")
    caption = [verdict, "Every interval is a cluster bootstrap: an AUC difference has no "
                        "exact one."] if result["features"] else []
    out = svg_open(width, b_end + 20 + 18 * len(caption), title)
    out.append(f'<text x="10" y="22" font-size="15" font-weight="bold">{svg_escape(title)}'
               f'</text>')
    out += panel_a + panel_b
    out += [f'<text x="10" y="{b_end + 24 + 18 * index}">{svg_escape(line)}</text>'
            for index, line in enumerate(caption)]
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
    parser = Parser(__doc__ + HARNESS_MANUAL, prog="auc_audit.py")
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
                        help="what a shuffle keeps fixed (default: tasks where a task "
                        "holds several runs, else strata with --strata, else rows)")
    parser.add_argument("--verdicts", metavar="FILE", help="take the outcome from a "
                        "grader's output (regrade.py's verdicts.csv, SWE-bench, sb-cli or "
                        "OpenHands reports), joined on run id or instance id")
    parser.add_argument("--any-model", action="store_true",
                        help="join --verdicts on instance id even where the report names "
                             "another model than the runs' (default: refuse)")
    parser.add_argument("--svg", metavar="FILE", help="also draw the null and the same-row "
                        "comparison as SVG")
    parser.add_argument("--demo", action="store_true",
                        help="audit a small embedded table")
    add_agent_options(parser)
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
    inputs = Inputs(task_map=args.task_map)
    note = args.write_runs and write_runs_first(inputs, args.runs, args.write_runs,
                                                args.outcome, args.verdicts)
    if note:
        sys.stdout.write(note)
        return 0
    table, tool_table = runs_table(inputs, args.runs, demo=args.demo)
    data = read_runs(inputs, table, tool_table, run_id=args.run_id, task=args.task,
                     strata=args.strata, where=args.where, outcome=args.outcome,
                     baseline=args.baseline, verdicts=args.verdicts,
                     any_model=args.any_model, features=args.features)
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
    result["provenance"] = provenance(__file__, __version__, argv, args.seed, inputs,
                                      output_flags=("--svg", "--write-runs"))
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
