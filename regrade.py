#!/usr/bin/env python3
# /// script
# requires-python = ">=3.9"
# dependencies = []
# ///
"""Regrade coding-agent runs offline from a diff, a baseline commit and the maintainers' test patch.

Basic usage:
    python3 regrade.py INSTANCES RUNS --repo PATH --out DIR   grade each run, verdicts in DIR
    python3 regrade.py INSTANCES gold --repo PATH             check instances: each fix resolves
    python3 regrade.py --make-instances FIXES --repo PATH --out DIR   instances from merged fixes
    python3 regrade.py --audit-instances INSTANCES --repo PATH   certify instances: sound or defects
For example:
    python3 regrade.py examples/regrade/instances.jsonl examples/regrade/predictions.jsonl \\
        --repo examples/regrade/calc.bundle
The manual follows.

One file, Python 3.9+ standard library, git, and optionally GNU patch and
bubblewrap (the sandbox); no Docker, no network, no model. A run is complete
only if every FAIL_TO_PASS and every PASS_TO_PASS test of its instance passes
after its diff is applied.

Arguments (python3 regrade.py INSTANCES RUNS --repo PATH [--out DIR]):
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
               optionally base_commit and run_id), agent output with diffs
               (a SWE-agent, mini-swe-agent or OpenHands folder: see "Reading
               harness folders" at the end of --help; run ids as the audits
               derive them), or a built-in set: gold (each instance's own
               patch) or empty (no change at all).
    --repo     a local clone or a git bundle file, or owner/name=PATH repeated
               for several repositories. Nothing in it is ever changed: an --out
               that is a --repo folder or lies inside one, or that names an input
               file (INSTANCES, RUNS, FIXES, --task-map, a bundle), is refused
               (exit 2) before anything is written.

Procedure per run (each step is recorded in the verdict):
    1. Check out base_commit into a throwaway folder: a private git repository
       that holds base_commit alone, so the code under test finds no future in
       it: one pack of that commit, its tree and blobs (built once per base and
       job, by a helper that only reads the clone, so the clone's branches,
       index, work files and metadata are never written), HEAD detached at it
       and marked shallow (git log shows that one commit), no ref, no reflog, no
       ORIG_HEAD or FETCH_HEAD, no remote, no alternates, no other object (git
       log --all, rev-list --all, cat-file on the fix's sha and a read of .git
       find nothing after base), and PWD and OLDPWD (a shell's folders, often
       the clone) are not passed on. Under bwrap a tree is kept for the next
       run (checking out and deleting a large tree costs seconds; Django's has
       6,900 files). After each run every
       file changed since the tree was handed out (its ctime, which no one can
       set back) is deleted so that git writes it anew, FIFOs and sockets (which
       git ignores) are deleted, folders get a checkout's mode back, and git
       clean -ffdx, git reset --hard and git clean -ffdx again (untracked files
       go first: git would read an untracked .gitattributes while writing files
       back) return it to its commit, with ignored files, __pycache__ and nested
       repositories gone, and its repository again holds its commit alone (what
       the grader's git wrote, ORIG_HEAD and the blobs git apply --3way stored,
       is deleted); it moves to the next run's commit with git checkout, that
       commit's pack copied in and the other's deleted.
       The code under test could not touch it meanwhile: the tree and its .git
       are mounts of their own (neither can be moved aside), .git read-only. A
       tree is deleted, never reused, when a step fails or times out, its HEAD,
       its .git config or its folders changed, or it then differs from its index
       in any way git leaves alone: an extra or missing entry, anything named
       .git below the top, a submodule folder that is not empty, a folder with
       user or ACL extended attributes. Runs are graded in history order of
       their base commits, so kept trees move little; verdicts keep the input
       order. Each verdict's work_tree says which it got: fresh checkout, kept
       tree, or kept tree, moved to its commit (--timings counts them). Under
       unshare or none every run gets a fresh checkout.
    2. Normalise the diff (drop text before the first 'diff --git', CRLF to LF,
       add a final newline) and apply it: git apply, then git apply --3way, then
       patch --batch --forward --fuzz=3 (a reversed hunk is never applied),
       cleaning the tree between attempts. None applies: patch_failed.
    3. Reset the test tree: every file the test patch touches and every test or
       test-configuration file the diff touched (tests/ anywhere, test/ and
       testing/ at the top, test_*.py, *_test.py, tests.py, noxfile.py;
       --test-files replaces that list) goes back to base_commit. So does every
       file the diff touched at any depth below the test tree: the nearest
       folder named test, tests or testing enclosing a listed test file or a
       test-patch test file (pyflakes/test/ with its helper harness.py); such
       folders holding no listed test (django/test/, numpy/testing/) are
       source code and stay as the diff left them. And so, anywhere
       in the tree and whatever --test-files says, does every pytest.ini,
       .pytest.ini, tox.ini, setup.cfg, pyproject.toml, conftest.py,
       sitecustomize.py, usercustomize.py and *.pth it touched (each is listed in
       touched_tests; one the diff made a symbolic link is replaced or deleted,
       the link never followed). A module or package the diff adds at an import root (the
       tree, or src/) under the name of a standard-library module or of pytest,
       _pytest, pluggy or py is removed, and listed in removed_shadowing.
    4. Apply the test patch. It does not apply: test_patch_failed (a grading
       error, not the agent's failure).
    5. Put the tree's import root (src/ if present, else the tree) first on
       PYTHONPATH; after the tests, check where the repository's own top-level
       packages were imported from. From outside the tree (say an editable
       install of another copy): wrong_code_under_test, a grading error.
    6. Run only the listed tests (--select ids, the default): pytest collects
       the listed tests' files and the recorder deselects every other item; the
       unittest runner loads each listed id by name. The ids reach the recorder
       through a file in the grader's folder, never the command line, so
       thousands of ids with brackets, spaces, '::' or non-ASCII need no quoting.
       --select files runs the listed tests' whole files instead (as SWE-bench's
       harness does), for tests that depend on their neighbours; --runner log
       and a custom unittest --test-cmd run what their command names. The
       django runner passes each listed test's dotted label (module.Class.test_y;
       a docstring id: every test it names) to tests/runtests.py; the sympy
       runner runs the listed tests' files with the runner's keyword filter
       hooked to keep exactly the listed names (bin/test -k matches substrings).
       Never the whole suite. The command runs with a timeout that
       kills the process group, a scrubbed environment (HOME and TMPDIR in the
       throwaway folder; dropped: credential-looking names (a word such as
       TOKEN, SECRET, AUTH, PASS or JWT, or one ending in KEY, TOKEN or
       PASSPHRASE: looks_like_credential), URLs with a user part, NETRC,
       PYTHON*, PYTEST_* such as PYTEST_ADDOPTS and PYTEST_PLUGINS; --keep-env
       NAME passes one on) and stdin closed.
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
       with no failure recorded, and a runner that recognised no test result at
       all (a --runner log parser that matched nothing), are grading errors. A
       listed test that did not run is told apart by the collection records: its
       file failed to collect (an import or syntax error) or was skipped whole
       (pytest.skip(allow_module_level=True), unittest.SkipTest on import): the
       run's failure, the error quoted in the reason; its file collected cleanly
       without it (a mistyped id): a grading error naming the id, listed in
       `uncollected`. pytest stopping before collection (a conftest.py whose
       imports fail) is the run's failure when its output names a file or module
       the run changed, else a grading error. Ids match exactly
       (parametrised pytest ids included), except that non-ASCII characters
       compare in pytest's escaped form: test_x[café] matches test_x[caf\\xe9]
       (canonical_id), and that under the unittest and log runners an id not
       recorded as listed is looked up in its dotted unittest spelling
       (lookup): tests/test_x.py::C::test_y and test_y (tests.test_x.C) both
       match tests.test_x.C.test_y.
       Never resolved, whatever the tests say: the code under test replaced a
       method of unittest's TestCase, TestResult, TestSuite, TestLoader or
       runner; a pytest plugin with code in the tree (conftest.py aside) was
       registered other than by module name from an untouched file; json,
       unittest, pytest, _pytest or pluggy came from the tree (unless the tree
       is that project); the test process ended before the recorder's last
       record; or the recorder started (it deletes its settings file first) and
       its results file was then removed, emptied or replaced (say by a FIFO).
       Reason: "the code under test tampered with the test runner"; where only
       the grader's own modules came from the tree, "the grader's own modules
       were imported from the tree", naming them.
       --repeat K runs the tests K times and lists tests whose outcome changed
       among passed, failing and skipped as flaky, a test that did not run
       counting as failing (so failed, then error or not run, is failing):
       is_flaky, the one rule --make-instances and --audit-instances count
       with; a test counts as passed only if it passed every time.
    9. Remove the throwaway folder, also on timeout, error, Ctrl-C, SIGTERM or
       SIGHUP (--keep-trees keeps it for debugging, renamed regrade-kept-run...
       so that no later job's sweep removes it, its path in the run's log, and
       keeps no tree for reuse);
       kept trees are removed when the job ends. A process killed outright
       (kill -9, a node lost) cannot remove its own: the next regrade.py on the
       machine does (see "Large jobs").

Runners (an instance's test_runner, else its log_parser's, else --runner: an
instance's own choice wins over the flag; auto picks django or sympy for the
repositories django/django and sympy/sympy or a tree laid out like them, then
pytest when a listed id contains '::', else unittest):
    runner    runs (only the listed tests)            listed ids look like
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
  Django LABELS are each listed test's module.Class.test_y (--select ids), or
  SWE-bench's (--select files): each Python file of the test patch, tests/ and
  .py dropped, slashes to dots, plus the modules of listed ids elsewhere. SymPy's
  FILES are the listed tests' files; under --select ids only the listed names in
  each run (the runner's keyword filter, hooked to match names exactly). A
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
repository lacks, is an error verdict; the other runs are still graded. So is
a run whose instance row is malformed (test_patch not text, FAIL_TO_PASS holding
non-strings, test_env not an object, ...), whose model_patch is not text, or
whose diff is binary (a NUL byte), not UTF-8 (a runs folder file's bytes, or a
JSON escape no UTF-8 file holds, a lone surrogate such as \\ud800: lone_surrogate,
which refuses such a run_id, model or instance field too), or over 64 MiB
(MAX_DIFF_BYTES); a null model_patch is graded as no change (patch_is_none). A
file with no usable row is bad input (exit 2), with a hint when INSTANCES and RUNS
look swapped. Resolution is SWE-bench's FULL / PARTIAL / NO (an empty
FAIL_TO_PASS or PASS_TO_PASS list counts as passed, as there).

Exit status: 0 when the runs were graded (whatever the verdicts); 1 when no run
could be graded (every run a grading error: the summary, or the --compare table,
is printed, and its last line, on stderr, says so); 2 for bad input or usage
(unreadable or malformed files, a --test-cmd or test_cmd that does not split, or
that lacks {python} where a structured runner needs it; --sandbox bwrap or
unshare where it cannot run) and an --out that cannot be written (a full disk, a
quota, a file-size limit: the line says how many verdicts are safe); 130 Ctrl-C,
143 SIGTERM, 129 SIGHUP (see "Large jobs").

Outputs with --out DIR:
    verdicts.jsonl   one line per run (with its `environment`: the test interpreter
                     by name (as given, without its folder) and its version, the
                     pytest version where pytest ran, the repository's identity (a
                     bundle's SHA-256, or a clone's HEAD and whether every base
                     commit was found) and the grader's SHA-256; the summary
                     prints them above its footer),
                     appended (whole, fsynced) as soon as it is graded, then
                     rewritten (atomically, sorted by run id) with each run once,
                     its latest verdict, when the job ends, fails or is
                     interrupted; several processes may share one --out (see
                     "Large jobs"); a re-run skips runs graded with the same
                     inputs and regrades the others, and the summary says how
                     many of each and why (key_parts: the instance row, diff,
                     base commit, grader version and SHA-256, --runner,
                     --test-cmd, --select, --timeout, --repeat, --p2p-skip-ok,
                     --test-files, --env, --keep-env, --fuzz, the isolation, the
                     test interpreter's path and version and its installed
                     distributions' names and versions); --force regrades
    verdicts.csv     run_id, instance_id, completed, status: the runs-table shape
                     that delivery_audit.py --verdicts and auc_audit.py
                     --verdicts read directly
    logs/RUN.log     every step's command and output, and the test output
    reports/RUN.json SWE-bench-style report {instance_id: {patch_is_None, ...}}
    swebench_summary.json  the official harness's run summary keys; every count is
                     in one unit, runs when ids_are is run_id (several runs share
                     an instance), plus one per instance with no run. Its
                     completed_instances keeps SWE-bench's meaning, graded
                     (resolved or unresolved; not empty, not an error), while
                     verdicts.csv's completed means resolved. A timeout is
                     unresolved in both (the tests did not finish: the run's
                     failure), so an audit reads either file alike
Shared and private: verdicts.jsonl, verdicts.csv, swebench_summary.json, reports/
(and, when making instances, instances.jsonl, rejected.jsonl and self_check.jsonl)
are the files people attach and merge: they name no host and no absolute path
outside --out (a path below the current folder is relative to it, the temporary
root is $TMPDIR, a run's tree <tree>, the home ~; the interpreter by name and
version). logs/ and made.jsonl (the resume record, with each run's seconds) are
this machine's and may name its paths.
Without --out nothing is written. The summary (--format text, markdown or
json) goes to stdout; progress to stderr when it is a terminal (--progress
forces it): one line per run with its status and seconds. --timings adds a
table of each run's test, total and grader seconds. Its provenance footer holds a
command that reruns the grading from the same folder (input paths relative to it,
--out left out and listed apart) and the SHA-256 of every input (past 12 files,
the script among them, one SHA-256 over their sorted manifest, which --manifest
FILE writes). Pasted
Markdown and the footer's paths follow the family's rules: delivery_audit.py --help,
"Pasting".

To regrade the shipped example (offline, standard library only):
    python3 regrade.py examples/regrade/instances.jsonl examples/regrade/predictions.jsonl \\
        --repo examples/regrade/calc.bundle
To check that instances are sound (gold resolves all, empty resolves none):
    python3 regrade.py instances.jsonl gold --repo ../project --out gold/
    python3 regrade.py instances.jsonl empty --repo ../project --out empty/
To make instances from a repository's own merged fixes (one commit a line in
fixes.txt; see "Making instances" at the end of --help):
    python3 regrade.py --make-instances fixes.txt --repo owner/name=../project \\
        --python ../project/.venv/bin/python --out made/
To grade a runs folder with the project's own virtualenv, 4 at a time:
    python3 regrade.py instances.jsonl runs/ --repo ../project \\
        --python ../project/.venv/bin/python --jobs 4 --out verdicts/
To split a large job into 10 array tasks (Slurm, Kubernetes indexed job, GNU parallel)
writing into one folder (a preempted task is rerun with the same command):
    python3 regrade.py instances.jsonl preds.jsonl --repo ../p \\
        --shard $((SLURM_ARRAY_TASK_ID+1))/10 --out out/all
  or each into a folder of its own, merged after:
    python3 regrade.py instances.jsonl preds.jsonl --repo ../p \\
        --shard $((SLURM_ARRAY_TASK_ID+1))/10 --out out/shard-$SLURM_ARRAY_TASK_ID
    then: python3 regrade.py --summarize out/shard-*/verdicts.jsonl --out out/all
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

Defaults: --select ids, --timeout 600 s, --jobs 1, --repeat 1 (3 with
--make-instances), --runner auto (see
Runners), --python the interpreter running this script, --sandbox auto.

Large jobs (schedulers that preempt, signal and rerun):
    Signals. SIGINT, SIGTERM and SIGHUP stop the job the same way: no run starts,
    the running tests' process groups are killed (the sandbox with them), a run
    they cut short gets no verdict (it is graded on resume), every verdict decided
    before is already on disk, this process's folders are removed, and one line
    says how many runs were graded and left ungraded and to rerun the same
    command. Exit 130, 143 or 129. A second signal ends the process at once. A
    signal while the job starts (inputs read, interpreter probed, repository
    opened) stops it the same way. An interruption is never a verdict: a step
    whose git, patch or test process failed because the job is stopping (the job's
    own signal reached it, as Ctrl-C reaches the whole process group) records
    nothing and is redone on resume. --make-instances stops the same way: no fix
    starts, a fix cut short records nothing (made on resume), the line counts the
    fixes made and left.
    Leftovers. Every folder the grader makes under the temporary root (TMPDIR)
    is named after its owner: regrade-KIND.HOST.PID.START.BOOT.xxxx, START being
    the process's start time (/proc/PID/stat field 22) and BOOT the boot id. At
    start, this user's folders whose owner is gone (no such PID, a PID now used
    by a process started at another time, an earlier boot) are removed and
    stderr says how many. A folder of a live process, of another host, or of a
    name without an owner is never touched. So in --out: each file is written
    through a temporary .tmp-regrade-part.HOST.PID.START.BOOT.xxxx.part and
    renamed; at start the .tmp-*.part files whose writer is gone are removed and
    counted the same way.
    One --out for many processes. Shards (or reruns) may grade into one folder
    at once. Each verdict is one line appended with an exclusive POSIX lock on
    --out/.verdicts.lock held (fcntl, which NFS honours), written whole (a short
    write goes on where it stopped) and fsynced before the run counts as graded
    and its progress line is printed; a line cut by a writer that died is cut
    off before the next is appended. Each process, as it ends, rewrites
    verdicts.jsonl under the lock from what is on disk (every process's lines,
    each run once, its latest), and verdicts.csv and swebench_summary.json with
    it; so the last process to end leaves every verdict exactly once. Why this
    design: a lock that refused the second process would forbid the shared
    folder schedulers like, and per-process files would need a merge step before
    any reader (delivery_audit.py --verdicts) sees them. Where --out cannot be
    locked (a filesystem without locks) the grader refuses at once; give each
    shard its own --out and merge with --summarize, which skips a cut last line
    and says so. A write that fails (ENOSPC, EDQUOT, EFBIG under a file-size
    limit) removes its part line and ends the job (exit 2) with one line naming
    the folder and how many verdicts are safe. made.jsonl, instances.jsonl,
    rejected.jsonl and self_check.jsonl of --make-instances go through the same
    writer (RecordFile) under the same lock: appended whole and fsynced before the
    fix's progress line, a cut line repaired, rewritten whole under the lock as
    each process ends, from every process's made.jsonl lines in FIXES order; so
    shards on one --out leave what one process leaves, byte for byte.

The sandbox (--sandbox auto|bwrap|unshare|none, default auto). The test
command, the only step that runs the code under test, runs inside bubblewrap
(bwrap, the sandbox Flatpak uses; install: apt-get install bubblewrap, dnf
install bubblewrap, pacman -S bubblewrap). Inside it:
    - no network: a private loopback only;
    - read-only: /usr, /lib*, a few /etc entries (the loader's cache, passwd,
      group, hosts, ssl, localtime, python*) and the interpreter's own prefix
      (a virtualenv's and its base's, even under your home: that prefix only);
    - writable: only the run's folder (HOME, TMPDIR), its tree and the grader's
      folder, and in them the tree's .git, the recorder modules and the list of
      selected ids stay read-only; /tmp is private. What the grader writes in
      those folders it creates afresh, never following a link the code under
      test left there, and it reads back only regular files (never a link or a
      FIFO), the test output through its own handle;
    - not visible: your home, your clone (nor its git history: git in the tree
      finds base_commit alone), the job's packs, other runs' folders, the rest
      of /etc, /root, /run, /var, /sys;
    - a new PID namespace, killed with the run (--die-with-parent), so no
      process outlives it; no capabilities, no nested user namespaces.
git and patch run outside it, reading the diff as data. auto uses bwrap where
it runs, else util-linux unshare (no network, its loopback down; no process
outlives a run; but the filesystem is not isolated), else none, and says so on
stderr and in the summary. --sandbox bwrap where bwrap is missing or cannot run
exits 2. --sandbox unshare asks for unshare itself, with its limits (no
network, no process outlives a run, the filesystem not isolated, every run a
fresh checkout), and exits 2 where it cannot run. Each verdict records its
isolation (bwrap, unshare or none), and so does the resume key. Where bwrap
cannot run, the error names the reason it found (user namespaces off,
AppArmor's restriction, a container's seccomp profile). Under every sandbox the
checkout holds base_commit alone and names no other place (step 1); but only
bwrap hides your clone itself: under unshare and none code that knows or
searches for its path on disk (under none, also in the grader's command line
in /proc) can read the fix there.

Not contained, even under bwrap: CPU, memory and disk use (only --timeout bounds
a run), and the recorder shares a process with the code under test. The checks
above catch the tampering seen so far (config files, shadowing modules, forged
result files, patched unittest methods, pytest plugins registered from the
code); code written to defeat this grader in particular (reading the recorder's
memory, faking a module's __file__) can still forge its own verdict, though
under bwrap it cannot reach your files, your network or other runs. Paths the
interpreter's .pth files add outside its prefix (an editable install of another
project) are not visible inside; use --sandbox none if the tests need them.
"""
# Map of this file: each section under its `# === Title ===` banner, in order, with its
# entry functions and the rules of the manual above (--help) that it implements.
# (test_audit.py TestMaps checks that each banner is listed, each name is defined in its
# section and reached from main, each quoted rule is in the manual, and each code name
# the manual cites is named in the row of its section; `name` marks a rule's home.)
#
#   Shared block              Inputs read_verdicts derive_tables write_runs render_table
#                             render_provenance run_main
#                             rules: "Reading harness folders" (agent folders as RUNS,
#                             --task-map, --write-runs); the provenance footer
#   Diffs                     normalise_diff normalised_run diff_paths is_test_path
#                             test_tree_folders shadowing_paths
#                             rules: "Procedure per run" 2 (normalise the diff, once per
#                             run: normalised_run), 3 (the test tree)
#   Git work trees            Source open_source base_pack hold_only make_tree apply_diff
#                             reset_paths restore_tree switch_commit TreePool
#                             rules: "Procedure per run" 1 (check out base_commit, holding
#                             that commit alone; kept trees), 2 (git apply, --3way,
#                             patch), 3 (reset), 9
#   Test runners              test_files unittest_name read_results parse_test_log
#                             tampering_plugins scrubbed_environment looks_like_credential
#                             run_command test_command
#                             rules: "Procedure per run" 5-7 (import root, only the
#                             listed tests, a structured record; step 6's environment:
#                             scrubbed_environment, `looks_like_credential`); Runners: pytest,
#                             unittest, log (--test-cmd)
#   Django and SymPy runners  runner_for pick_runner project_runner runner_from_fields
#                             django_plan sympy_plan project_plan project_lookup
#                             rules: Runners (auto's choice of a project runner, django,
#                             sympy, "SWE-bench v5 fields"; pytest or unittest:
#                             choose_runner, in Grading)
#   Sandbox                   choose_sandbox bwrap_argv unshare_argv sandboxed
#                             probe_sandbox
#                             rules: "The sandbox (--sandbox auto|bwrap|unshare|none, ...)";
#                             "Not contained, even under bwrap"
#   Grading                   SETTINGS new_settings check_interpreter Session grade_run
#                             grade_in_folder apply_run_diff reset_test_tree
#                             apply_test_patch plan_tests run_tests decide_run decide
#                             classify LIST_PASSING outcome_group is_flaky settle
#                             canonical_id lookup
#                             swebench_resolution choose_runner
#                             rules: a job's live state (its folder, kept trees, sandbox,
#                             private paths, opened repositories) is its Session's, the
#                             settings record holds what decides a verdict; "Procedure per
#                             run" 1-9, step 8 (Verdict; flaky under --repeat, the one
#                             rule --make-instances uses too); Statuses, what each says
#                             (completed and resolution follow from the status:
#                             `settle`); SWE-bench's FULL / PARTIAL / NO; --keep-trees
#                             (Session keeps no tree for reuse, grade_run keeps the run's
#                             folder: kept_folder, Large jobs)
#   Input                     read_instances parse_instance load_runs checked_run
#                             load_predictions default_run_ids check_test_commands
#                             pytest_needed check_python grading_key keyed_run check_out
#                             read_records diff_problem lone_surrogate in_shard
#                             rules: INSTANCES and RUNS (JSONL lines by the block's
#                             read_jsonl_records); --out never in an input; which runs
#                             are error verdicts (checked_run: a malformed row, an
#                             unknown instance; `diff_problem`: a binary diff, one not
#                             UTF-8 (`lone_surrogate`, for fields too) or over
#                             MAX_DIFF_BYTES); --shard (in_shard: by run-id hash); the
#                             resume key; --python; a run's
#                             record is never rewritten in place: checked_run,
#                             open_sources and keyed_run each return new records
#   Large jobs                SIGNAL_STATUS StopSignals owned_folder kept_folder
#                             sweep_leftovers FolderLock
#                             write_all RecordFile write_out sweep_parts job_stopping
#                             rules: every record file in --out is a RecordFile (lock,
#                             fsync, cut-tail repair, whole rewrite); "Large jobs
#                             (schedulers that preempt, signal and rerun)"; a folder
#                             --keep-trees keeps is out of the sweep's reach (kept_folder)
#   Report                    VerdictStore swebench_report swebench_summary verdicts_csv
#                             summarise render_summary Progress shareable_verdict
#                             rules: "Outputs with --out DIR" (shared and private); the
#                             summary (--format)
#   Making instances          make_instances parse_fixes expand_fixes prepare_fix
#                             make_fix derive_lists problem_statement self_check MadeStore
#                             render_made
#                             rules: "Making instances (--make-instances FIXES ...)"
#   Auditing instances        audit_instances audit_instance schema_defects
#                             duplicate_defects scope_defects match_listed id_defects
#                             outcome_defects grader_check order_defects fixed_rows
#                             render_audit
#                             rules: "Auditing instances (--audit-instances ...)"
#   Comparing with a grader   compare_output compare_verdicts compare_cause
#                             grader_evidence render_comparison
#                             rules: "Comparing with a grader (--compare REPORT ...)"
#   Main                      build_parser main summarize_only grade_all grade_runs output
#                             none_graded
#                             rules: "Basic usage"; --summarize; Defaults; Exit status
#                             (1 when no run could be graded: `none_graded`, after the
#                             summary or the --compare table; 2: the block's run_main;
#                             129, 130, 143: SIGNAL_STATUS, in Large jobs)
import ast
import collections
import concurrent.futures
import difflib
import errno
import fcntl
import fnmatch
import functools
import hmac
import re
import secrets
import shutil
import signal
import stat
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
# The folder names that make a test tree: every file below the nearest one
# enclosing a listed test file or a test-patch test file is reset (step 3).
TEST_TREE_NAMES = ("test", "tests", "testing")
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
DROPPED_NAMES = ("NETRC", "PWD", "OLDPWD")    # a shell's folders: the clone, often
# A URL with any user part (user:password@, or a bare token@ as GitHub's ghp_...@).
CREDENTIAL_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s@]+@")
# Words of a variable's name (split at anything not a letter or digit) that mark it as a
# credential, and the endings that do (STRIPE_KEY, MISTRAL_APIKEY, DEPLOY_PASSPHRASE).
CREDENTIAL_NAME_WORDS = frozenset({"PASS", "JWT", "BEARER", "CREDENTIALS", "PRIVATE"})
CREDENTIAL_ENDINGS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE")
TAMPERED = "the code under test tampered with the test runner"
# ... and the reason where only the grader's own modules came from the tree.
SHADOWED = "the grader's own modules were imported from the tree"
GIT_OPTIONS = ("-c", "core.hooksPath=/dev/null", "-c", "core.autocrlf=false",
               "-c", "core.fsmonitor=false", "-c", "gc.auto=0", "-c", "advice.detachedHead=false",
               "-c", "core.quotepath=off", "-c", "user.name=regrade",
               "-c", "user.email=regrade@localhost", "-c", "commit.gpgsign=false")
PLUGIN_MODULE = "regrade_pytest_plugin"
UNITTEST_MODULE = "regrade_unittest_runner"
RESULTS_VARIABLE = "REGRADE_RESULTS_FILE"
# The sandbox around the test command (--sandbox): bwrap where it runs, else
# unshare for the network and processes, else none. Tests replace the program
# names to play a machine that lacks one.
SANDBOXES = ("auto", "bwrap", "unshare", "none")
ISOLATIONS = ("bwrap", "unshare", "none")
SANDBOX_PROGRAMS = {"bwrap": "bwrap", "unshare": "unshare"}
BWRAP_INSTALL = ("install bubblewrap: apt-get install bubblewrap (Debian, Ubuntu), "
                 "dnf install bubblewrap (Fedora), pacman -S bubblewrap (Arch)")
# What of the system the sandbox shows, read-only: the programs and libraries,
# and the few /etc entries that Python, the C library and TLS read. Nothing else
# of /etc (not shadow, sudoers, ssh keys), nothing of /home, /root, /run or /var.
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/nix/store")
ETC_ENTRIES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "passwd",
               "group", "nsswitch.conf", "hosts", "host.conf", "gai.conf", "alternatives",
               "ssl", "pki", "ca-certificates", "ca-certificates.conf", "crypto-policies",
               "mime.types", "os-release", "locale.alias", "locale.conf", "python*")
SANDBOX_PROBE_TIMEOUT = 60
RESTORE_TIMEOUT = 300      # s for each git command that puts a kept tree back
MAX_RECORD_BYTES = 1 << 30      # a results file read back from the sandbox, at most
CTIME_MARGIN_NS = 50_000_000    # file times lag the clock by a tick (a few ms) at most
MAX_OUTPUT_BYTES = 64 << 20     # a test command's output kept for the log, at most
# What each isolation contains, as the summary and the warnings say it.
ISOLATION_MEANS = {
    "bwrap": "no network, the system read-only, only the run's tree and folder and the "
             "grader's folder writable, HOME and /tmp private, no process outlives a run",
    "unshare": "no network and no process outlives a run, but the filesystem is not "
               "isolated: the code under test can read and write whatever your user can",
    "none": "the code under test runs with your user's rights: files, network and "
            "processes are not isolated",
}
# A diff or test patch larger than this is not graded (that run is an error verdict).
MAX_DIFF_BYTES = 64 * 2 ** 20

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


def normalised_run(run, instance):
    """A run's record with its diff and its instance's test patch normalised, as a new record:
    once per run, for every step that reads them (the resume key, the verdict's hashes,
    applying the diff, the test tree, the test patch). Its `diff` stays as given: None
    for a missing patch (patch_is_none), checked raw (diff_problem), and what the key of a
    run of an unknown instance (None: no test patch) hashes."""
    return dict(run, normalised_diff=normalise_diff(run["diff"]),
                normalised_test_patch=normalise_diff(instance["test_patch"]) if instance else "")


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


def listed_test_paths(test_ids, import_roots):
    """Tree paths (files, or module paths without .py) of the listed tests.

    `import_roots` maps '' and 'src/' to the top-level names found there.

    >>> listed_test_paths(["t/test_a.py::test_x[a/b::c]", "pkg.test.test_b.T.test_y"],
    ...                   {"": {"t"}, "src/": {"pkg"}})
    ['src/pkg/test/test_b/T/test_y', 't/test_a.py']
    """
    found = set()
    for test_id in test_ids:
        if "::" in test_id or test_id.endswith(".py"):
            found.add(test_id.split("::")[0])
        else:
            dotted = unittest_name(test_id).split(".")
            root = next((r for r in import_roots if r and dotted[0] in import_roots[r]), "")
            found.add(root + "/".join(dotted))
    return sorted(found)


def test_tree_folders(paths):
    """The test tree: each path's nearest enclosing folder named test, tests or testing.

    Only such folders count, so a test file beside the source (pkg/test_x.py) adds
    none, and django/test/ or numpy/testing/ count only when a listed test lives there.

    >>> test_tree_folders(["pyflakes/test/test_api.py", "tests/unit/test_a.py", "pkg/test_x.py",
    ...                    "numpy/testing/tests/test_utils.py", "setup.cfg"])
    ['numpy/testing/tests', 'pyflakes/test', 'tests']
    """
    folders = set()
    for path in paths:
        parts = path.split("/")[:-1]
        for size in range(len(parts), 0, -1):
            if parts[size - 1] in TEST_TREE_NAMES:
                folders.add("/".join(parts[:size]))
                break
    return sorted(folders)


def in_test_tree(path, folders):
    """True when `path` lies anywhere below one of the test tree's folders.

    >>> [in_test_tree(p, ["pyflakes/test"]) for p in ("pyflakes/test/a/b.py", "pyflakes/x.py")]
    [True, False]
    """
    return any(path.startswith(folder + "/") for folder in folders)


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
    """SHA-256 of a text's UTF-8 bytes; '' hashes like an empty file. A lone surrogate
    (a JSON escape no UTF-8 file holds; diff_problem refuses such a diff) hashes as
    its surrogatepass bytes, so the error verdict that says so can still be keyed."""
    return hashlib.sha256((text or "").encode("utf-8", "surrogatepass")).hexdigest()


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


def git(args, *, cwd=None, input_text=None, check=True, timeout=None, errors="replace"):
    """Run git with safe options; return (status, output). Raise GradingError if check fails.

    errors="surrogateescape" reads paths that are not UTF-8 as os.fsdecode does.
    """
    try:
        done = subprocess.run(["git", *GIT_OPTIONS, *args], cwd=cwd, env=GIT_ENV,
                              input=(input_text or "").encode("utf-8"), timeout=timeout,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError as exc:
        raise GradingError(f"cannot run git ({exc.strerror or exc})") from None
    except subprocess.TimeoutExpired:
        if check:
            raise GradingError(f"git {' '.join(args[:2])} ran over {timeout:g} s") from None
        return 124, f"git {' '.join(args[:2])} ran over {timeout:g} s"
    output = done.stdout.decode("utf-8", errors)
    if done.returncode != 0 and job_stopping(done.returncode):
        raise Interrupted()         # the job's signal killed git: no verdict, redone on resume
    if check and done.returncode != 0:
        raise GradingError(f"git {' '.join(args[:2])} failed: {output.strip()[-500:]}")
    return done.returncode, output


class Source:
    """A repository to check commits out of: a clone, or a bundle imported once."""

    def __init__(self, label, git_dir, scratch=None):
        self.label = label                          # as the user named it
        self.git_dir = git_dir                      # absolute path of a git directory
        self.objects = os.path.join(git_dir, "objects")
        self.identity = {"path": label}               # what the environment record names
        self.scratch = scratch          # where each base's pack is kept for the job (None: a
        self.packs = {}                 # temporary folder per pack); {commit: [pack files]}
        self.packs_lock = threading.Lock()

    def base_pack(self, commit):
        """The files of a pack holding `commit` alone (see base_pack), built once per commit;
        None without a scratch folder to keep it in."""
        if self.scratch is None:
            return None
        with self.packs_lock:
            if commit not in self.packs:
                folder = tempfile.mkdtemp(prefix="pack-", dir=self.scratch)
                self.packs[commit] = base_pack(self.git_dir, commit, folder)
            return self.packs[commit]

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

    def commit_times(self, hashes):
        """{commit: committer time}, to grade in history order (kept trees then move little)."""
        hashes = sorted(set(hashes))
        if not hashes:
            return {}
        status, output = git(["--git-dir", self.git_dir, "log", "--no-walk=unsorted", "--stdin",
                              "--format=%H %ct"], input_text="".join(h + "\n" for h in hashes),
                             check=False)
        times = dict(line.split() for line in output.splitlines() if len(line.split()) == 2) \
            if status == 0 else {}
        return {h: int(times[h]) if times.get(h, "").isdigit() else 0 for h in hashes}


def open_source(path, scratch, inputs):
    """Open --repo PATH: a clone (any layout) or a bundle file, never writing into it."""
    if os.path.isdir(path):
        status, output = git(["-C", path, "rev-parse", "--path-format=absolute",
                              "--git-common-dir"], check=False)
        if status != 0:
            raise InputError(f"--repo {path}: not a git repository")
        source = Source(path, output.strip().splitlines()[-1], scratch)
        status, head = git(["--git-dir", source.git_dir, "rev-parse", "--verify", "-q", "HEAD"],
                           check=False)
        source.identity = {"path": relative_path(path), "kind": "clone",
                           "head": head.strip() if status == 0 else None}
        return source
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
        source = Source(path, cache, scratch)
        source.identity = {"path": relative_path(path), "kind": "bundle",
                           "sha256": digest.hexdigest()}
        return source
    raise InputError(f"--repo {path}: no such folder or file")


# --- checkouts that hold no future ---
# The code under test must not find the fix in history: a checkout that borrowed
# the clone's objects (objects/info/alternates) let `git cat-file -p FIX:path`,
# `git log --all` or a read of the object store find the upstream fix. A tree's
# repository holds its base commit alone: one pack of that commit, its tree and
# blobs, copied from a pack built once per base and job; HEAD detached at it,
# marked shallow (git log shows that one commit), no ref, no reflog, no
# alternates, no remote, no other object.
FORGOTTEN = ("ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD",
             "AUTO_MERGE", "packed-refs", "logs", "refs")


def base_pack(git_dir, commit, folder):
    """Build the pack of `commit` alone in folder (a helper repository borrowing git_dir's
    objects, so nothing is written into git_dir); return its files' paths."""
    helper = os.path.join(folder, "helper.git")
    git(["init", "-q", "--bare", "--template=", helper])
    with open(os.path.join(helper, "objects", "info", "alternates"), "w",
              encoding="utf-8") as handle:
        handle.write(os.path.join(git_dir, "objects") + "\n")
    # --no-walk: the commit's own tree and blobs, none of its parents'. Bytes
    # throughout: a path that is not UTF-8 (or holds a newline) must not break a line.
    command = ["git", *GIT_OPTIONS, "--git-dir", helper]
    try:
        listing = subprocess.run([*command, "rev-list", "--objects", "--no-object-names",
                                  "--no-walk", commit], env=GIT_ENV, stdin=subprocess.DEVNULL,
                                 capture_output=True, timeout=RESTORE_TIMEOUT)
        if listing.returncode != 0:
            raise GradingError(f"git rev-list {commit[:12]} failed: "
                               f"{listing.stderr.decode('utf-8', 'replace').strip()[-300:]}")
        packed = subprocess.run([*command, "pack-objects", "-q",
                                 os.path.join(helper, "objects", "pack", "pack")],
                                env=GIT_ENV, input=listing.stdout, capture_output=True,
                                timeout=RESTORE_TIMEOUT)
    except OSError as exc:
        raise GradingError(f"cannot run git ({exc.strerror or exc})") from None
    except subprocess.TimeoutExpired:
        raise GradingError(f"packing {commit[:12]} ran over {RESTORE_TIMEOUT} s") from None
    if packed.returncode != 0:
        raise GradingError(f"git pack-objects {commit[:12]} failed: "
                           f"{packed.stderr.decode('utf-8', 'replace').strip()[-300:]}")
    name = "pack-" + packed.stdout.decode("ascii", "replace").strip()
    pack_dir = os.path.join(helper, "objects", "pack")
    files = []
    for entry in sorted(os.listdir(pack_dir)):
        if entry.startswith(name + "."):
            files.append(os.path.join(folder, entry))
            os.replace(os.path.join(pack_dir, entry), files[-1])
    remove_folder(helper)       # its alternates name the clone: nothing is left to point there
    return files


def hold_only(git_dir, commit, packs):
    """Make a tree's repository hold `commit` alone: its pack (file names in `packs`), no
    other pack or loose object, no ref, reflog, ORIG_HEAD or FETCH_HEAD; shallow at it."""
    objects = os.path.join(git_dir, "objects")
    for entry in os.listdir(objects):
        path = os.path.join(objects, entry)
        if entry == "pack":
            for name in os.listdir(path):
                if name not in packs:
                    remove_entry(os.path.join(path, name))
        elif entry != "info":
            remove_entry(path)
    remove_entry(os.path.join(objects, "info", "alternates"))
    for name in FORGOTTEN:
        remove_entry(os.path.join(git_dir, name))
    os.makedirs(os.path.join(git_dir, "refs"))      # git wants the folder, even empty
    with open(os.path.join(git_dir, "shallow"), "w", encoding="ascii") as handle:
        handle.write(commit + "\n")


def install_pack(source, commit, git_dir):
    """Copy `commit`'s pack into a tree's repository (a copy: a run under unshare or none
    can write its .git, and must not reach the pack other trees copy); its file names."""
    files, built = source.base_pack(commit), None
    if files is None:           # no job folder to keep packs in: one for this tree only
        built = tempfile.mkdtemp(prefix="pack-", dir=os.path.dirname(os.path.dirname(git_dir)))
        files = base_pack(source.git_dir, commit, built)
    try:
        names = []
        for path in files:
            names.append(os.path.basename(path))
            target = os.path.join(git_dir, "objects", "pack", names[-1])
            if not os.path.exists(target):
                shutil.copyfile(path, target)
        return names
    finally:
        if built:
            remove_folder(built)


def make_tree(source, commit, folder):
    """Check `commit` out into folder/tree: a private repository holding that commit alone."""
    tree = os.path.join(folder, "tree")
    git(["init", "-q", "--template=", tree])
    git_dir = os.path.join(tree, ".git")
    git(["--git-dir", git_dir, "config", "core.logAllRefUpdates", "false"])
    hold_only(git_dir, commit, install_pack(source, commit, git_dir))
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
        if done.returncode != 0 and job_stopping(done.returncode):
            raise Interrupted()     # the job's signal, not the diff, stopped it
        reversed_hunk = "Reversed (or previously applied)" in output
        if done.returncode == 0 and not reversed_hunk:
            git(["-C", tree, "reset", "-q"])
            return method, "".join(log)
        clean_tree(tree)
    return None, "".join(log)


def reset_paths(tree, paths):
    """Put `paths` back to the tree's commit: restore what existed, delete what did not.

    A path counts as inside the tree when its folder is: the path itself may be a
    symbolic link, which the reset replaces or deletes and never follows (a run's
    conftest.py -> /elsewhere was left in place when the link's target was checked)."""
    root = os.path.realpath(tree)
    safe = [p for p in paths
            if (os.path.realpath(os.path.dirname(os.path.join(root, p))) + os.sep)
            .startswith(root + os.sep) and ".git" not in p.split("/")]
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


# --- trees kept between runs ---
# Checking out and deleting a large tree (Django's 6,900 files) costs seconds;
# putting a kept tree back costs a fraction of one. A tree is kept only where the
# code under test could not touch its .git: under bwrap the tree and its .git are
# their own mounts, .git read-only, so after a run the tree is still the same
# directory with the same repository, and git reset --hard plus git clean -ffdx
# (ignored files, __pycache__ and nested repositories included) return it to
# its commit, once FIFOs and sockets (which git ignores) are deleted and folders'
# modes reset; a walk then checks it against its index. Anything else (a git
# command failing, HEAD moved, the tree or .git not the same directory, an entry
# git leaves alone) removes the tree instead.
def directory_identity(tree):
    """(device, inode) of the tree and its .git, not following links, and a digest of the
    .git files that steer the grader's git commands (config, HEAD, info/, alternates)."""
    git_dir = os.path.join(tree, ".git")
    digest = hashlib.sha256()
    for name in ("config", "HEAD", "info/attributes", "info/exclude", "objects/info/alternates"):
        digest.update(f"{name}\0{read_untrusted(os.path.join(git_dir, name))}\0".encode())
    return [(s.st_dev, s.st_ino) for s in (os.lstat(tree), os.lstat(git_dir))] + \
        [digest.hexdigest()]


def restore_tree(tree, commit, identity, since):
    """Return the tree to `commit` with nothing untracked; False if it cannot be trusted to.

    Untracked files go before the reset too: git reads an untracked .gitattributes
    in the tree (working-tree-encoding, eol) as it writes tracked files back. Every
    file changed since `since` (ns; its ctime, which no one can set back) is deleted
    first, so git writes it anew: git's own check compares ctimes to the second, and
    a change in the index's second could keep a file's new content, mode or
    attributes.
    """
    try:
        if directory_identity(tree) != identity:
            return False
        sweep_tree(tree, skip=".git", since=since)
    except OSError:
        return False
    for args in (["clean", "-q", "-ffdx"], ["reset", "-q", "--hard", "HEAD"],
                 ["clean", "-q", "-ffdx"]):
        if git(["-C", tree, *args], check=False, timeout=RESTORE_TIMEOUT)[0] != 0:
            return False
    status, head = git(["-C", tree, "rev-parse", "--verify", "-q", "HEAD^{commit}"], check=False)
    if status != 0 or head.strip() != commit or not tree_is_its_index(tree):
        return False
    # What the grader's own git wrote during the run (ORIG_HEAD, the blobs git apply
    # --3way stored from the run's diff) is not for the next run to find.
    git_dir = os.path.join(tree, ".git")
    try:
        hold_only(git_dir, commit, os.listdir(os.path.join(git_dir, "objects", "pack")))
    except OSError:
        return False
    return True


def tracked_entries(tree):
    """{path: git mode} of the tree's index, or None if git cannot list it."""
    status, listing = git(["-C", tree, "ls-files", "-s", "-z"], check=False,
                          timeout=RESTORE_TIMEOUT, errors="surrogateescape")
    if status != 0:
        return None
    entries = {}
    for record in listing.split("\0"):
        if record:
            info, _, path = record.partition("\t")
            entries[path] = info.split()[0]
    return entries


def tree_is_its_index(tree):
    """True only if the tree holds exactly its index's entries, as a checkout makes them.

    What git clean and reset leave alone is refused: any extra or missing entry,
    anything named .git below the top, a submodule folder with something in it, a
    file where a link belongs or the reverse, and folders with a mode other than a
    checkout's or with user or ACL extended attributes (a default ACL makes every
    file later written there unreadable). Files' own modes and attributes need no
    look: restore_tree deleted every file changed during the run, and git wrote it
    anew.
    """
    tracked = tracked_entries(tree)
    if tracked is None:
        return False
    wanted = folder_mode()
    folders = {"": None}
    for path, mode in tracked.items():
        parts = path.split("/")
        for depth in range(1, len(parts)):
            folders["/".join(parts[:depth])] = None
        if mode == "160000":
            folders[path] = "submodule"
    seen, pending = 0, [""]
    try:
        while pending:
            folder = pending.pop()
            with os.scandir(os.path.join(tree, folder)) as entries:
                for entry in entries:
                    path = f"{folder}/{entry.name}" if folder else entry.name
                    if path == ".git":
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        if path not in folders or folders.get(folder) == "submodule" or \
                                stat.S_IMODE(entry.stat(follow_symlinks=False).st_mode) != \
                                wanted or odd_attributes(entry.path):
                            return False
                        pending.append(path)
                        continue
                    mode = tracked.get(path)
                    if not (mode == "120000" and entry.is_symlink() or
                            mode in ("100644", "100755") and not entry.is_symlink() and
                            entry.is_file(follow_symlinks=False)):
                        return False
                    seen += 1
    except OSError:
        return False
    return seen == sum(1 for mode in tracked.values() if mode != "160000")


def odd_attributes(folder):
    """True if a folder carries user or ACL extended attributes (a checkout sets none)."""
    return hasattr(os, "listxattr") and any(
        name.startswith(("user.", "system.")) for name in os.listxattr(folder))


def switch_commit(tree, source, commit):
    """Move a clean kept tree to another commit (only the files that differ are written);
    its repository then holds that commit alone, the other's objects gone."""
    git_dir = os.path.join(tree, ".git")
    try:
        packs = install_pack(source, commit, git_dir)
    except (GradingError, OSError):
        return False
    if not all(git(["-C", tree, *args], check=False, timeout=RESTORE_TIMEOUT)[0] == 0 for args in
               (["checkout", "-q", "--detach", "-f", commit], ["clean", "-q", "-ffdx"])):
        return False
    hold_only(git_dir, commit, packs)
    return True


def folder_mode():
    """The mode a checkout gives folders (never without the owner's rwx)."""
    return (0o777 & ~checkout_umask()) | 0o700


@functools.lru_cache(maxsize=None)
def checkout_umask():
    """The umask the trees were checked out under, read once: reading it means setting
    it, which must not happen while worker threads create files."""
    return current_umask()


def sweep_tree(root, skip=None, since=None):
    """Give `root` and every folder below it (but `skip`) a checkout's mode, each before
    it is read, and delete whatever is neither a file, a folder nor a link: git neither
    lists nor cleans FIFOs and sockets, which the code under test can leave behind.
    With `since` (ns), delete the files and links changed since then too."""
    wanted = folder_mode()

    def unlock(path, mode):
        if stat.S_IMODE(mode) != wanted:
            os.chmod(path, wanted)
    unlock(root, os.lstat(root).st_mode)
    folders = [root]
    while folders:
        folder = folders.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if folder == root and entry.name == skip:
                    continue
                if entry.is_symlink() or entry.is_file(follow_symlinks=False):
                    if since is not None and \
                            entry.stat(follow_symlinks=False).st_ctime_ns >= since:
                        os.remove(entry.path)
                    continue
                if entry.is_dir(follow_symlinks=False):
                    unlock(entry.path, entry.stat(follow_symlinks=False).st_mode)
                    folders.append(entry.path)
                else:
                    os.remove(entry.path)


def remove_folder(path):
    """Delete a folder the code under test wrote in, read-only folders included."""
    try:
        shutil.rmtree(path)
    except (OSError, RecursionError):     # a locked folder; a tree thousands deep
        try:
            sweep_tree(path)
        except OSError:
            pass
        try:
            shutil.rmtree(path)
        except (OSError, RecursionError):
            subprocess.run(["rm", "-rf", "--", path], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class TreePool:
    """Work trees for the runs: kept and reused between runs of one repository when
    `keep` > 0 (under bwrap), else checked out fresh into each run's folder."""

    def __init__(self, keep, scratch=None):
        self.keep, self.scratch = keep, scratch
        checkout_umask()            # read now, before any worker thread runs
        self.idle = []              # leases of trees restored and waiting, oldest first
        self.lock = threading.Lock()

    def take(self, source, commit, folder):
        """A tree at `commit`; returns (tree, lease for give(), how it was made)."""
        if not self.keep:
            return make_tree(source, commit, folder), None, "fresh checkout"
        with self.lock:
            mine = [lease for lease in self.idle if lease["git_dir"] == source.git_dir]
            lease = next((e for e in mine if e["commit"] == commit), mine[-1] if mine else None)
            if lease is not None:
                self.idle.remove(lease)
        how = "fresh checkout"
        if lease is not None:
            how = "kept tree" if lease["commit"] == commit else "kept tree, moved to its commit"
            if lease["commit"] != commit and not switch_commit(lease["tree"], source, commit):
                remove_folder(lease["folder"])
                lease, how = None, "fresh checkout"
        if lease is None:
            kept = tempfile.mkdtemp(prefix="regrade-tree-", dir=self.scratch)
            try:
                lease = {"git_dir": source.git_dir, "folder": kept,
                         "tree": make_tree(source, commit, kept)}
            except BaseException:
                remove_folder(kept)
                raise
        # What the restore checks against, taken now that only the grader has written.
        lease.update(commit=commit, identity=directory_identity(lease["tree"]),
                     since=time.time_ns() - CTIME_MARGIN_NS)
        return lease["tree"], lease, how

    def give(self, lease):
        """After a run: restore its tree for the next run, or remove it."""
        if lease is None:
            return
        if not restore_tree(lease["tree"], lease["commit"], lease["identity"], lease["since"]):
            remove_folder(lease["folder"])
            return
        with self.lock:
            self.idle.append(lease)
            surplus, self.idle = self.idle[:-self.keep], self.idle[-self.keep:]
        for entry in surplus:
            remove_folder(entry["folder"])

    def close(self):
        """Remove every kept tree (at the end, and on Ctrl-C)."""
        with self.lock:
            idle, self.idle = self.idle, []
        for entry in idle:
            remove_folder(entry["folder"])


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

import pytest as _pytest_module

_write({"kind": "start", "runner": "pytest", "shadowed": _shadowed(),
        "python": sys.version.split()[0], "pytest": getattr(_pytest_module, "__version__", "")})
_PLUGINS = {}
# --select ids: the listed ids, read now, before any test code is imported.
_SELECT = None
if _CONFIG.get("select"):
    with open(_CONFIG["select"], encoding="utf-8") as _handle:
        _SELECT = frozenset(json.load(_handle))


def _canonical(test_id):
    return "".join(c if ord(c) < 128 else c.encode("unicode_escape").decode("ascii")
                   for c in test_id)


def pytest_collection_modifyitems(session, config, items):
    if _SELECT is None:
        return
    root = str(getattr(config, "rootpath", None) or getattr(config, "rootdir", ""))
    prefix = os.path.relpath(os.path.realpath(root), os.path.realpath(_CONFIG["tree"]))
    prefix = "" if prefix == "." or prefix.startswith("..") else prefix.replace(os.sep, "/") + "/"
    keep, drop = [], []
    for item in items:
        (keep if _canonical(prefix + item.nodeid) in _SELECT else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


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


def _report_text(report):
    try:
        longrepr = report.longrepr
        if isinstance(longrepr, tuple) and len(longrepr) == 3:
            return str(longrepr[2])[-1000:]
        return str(getattr(report, "longreprtext", "") or longrepr or "")[-1000:]
    except Exception as exc:
        return repr(exc)[:200]


def pytest_collectreport(report):
    # Every collector's report: a listed test that never ran is told apart as
    # a file that failed to collect, was skipped whole, or collected without it.
    if report.failed:
        _write({"kind": "collect_error", "nodeid": report.nodeid, "error": _report_text(report)})
    elif report.skipped:
        _write({"kind": "collect_skip", "nodeid": report.nodeid, "error": _report_text(report)})
    else:
        _write({"kind": "collected", "nodeid": report.nodeid})


def pytest_collection_finish(session):
    _write({"kind": "items", "nodeids": [item.nodeid for item in session.items]})


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

# The outcome methods of both unittest-style recorders (unittest's and Django's):
# each calls the class's own _record after the result class has done its work.
RESULT_OUTCOMES = r'''
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
'''

UNITTEST_RUNNER = '"""Written by regrade.py: runs unittest modules, records outcomes to a file."""' + \
    RECORDER_COMMON + r'''
import importlib
import traceback
import unittest


class _Recorder(unittest.TextTestResult):
    def _record(self, test, outcome):
        _write({"kind": "test", "nodeid": test.id(), "outcome": outcome})

''' + RESULT_OUTCOMES + r'''

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


def _load(loader, suite, module_name, name):
    """Import the module (recording an error or a skip), find the name in it, load it."""
    try:
        module = importlib.import_module(module_name)
    except unittest.SkipTest as exc:
        _write({"kind": "collect_skip", "nodeid": module_name, "error": str(exc)[:1000]})
        return
    except (Exception, SystemExit):
        _write({"kind": "collect_error", "nodeid": module_name,
                "error": traceback.format_exc()[-1000:]})
        return
    _write({"kind": "collected", "nodeid": module_name})
    target = module
    for part in name[len(module_name):].lstrip(".").split(".") if name != module_name else []:
        target = getattr(target, part, None)
        if target is None:
            _write({"kind": "not_found", "nodeid": name})
            return
    try:
        suite.addTest(loader.loadTestsFromName(name))
    except Exception as exc:
        _write({"kind": "collect_error", "nodeid": name, "error": repr(exc)[:1000]})


def _tests(suite):
    for test in suite:
        if isinstance(test, unittest.TestSuite):
            yield from _tests(test)
        else:
            yield test


def main(names):
    _write({"kind": "start", "runner": "unittest", "shadowed": _shadowed(),
            "python": sys.version.split()[0]})
    before = _runner_parts()
    loader, suite = unittest.TestLoader(), unittest.TestSuite()
    # The grader names each module, and with --select ids each listed test, in
    # its settings file (never on the command line); a custom command names them.
    module_of = _CONFIG.get("module_of") or {}
    pairs = [(module_of.get(n, n), n) for n in names] if names else _CONFIG.get("load") or []
    for module_name, name in pairs:
        _load(loader, suite, module_name, name)
    _write({"kind": "items", "nodeids": [t.id() for t in _tests(suite)]})
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


def file_module(path, roots, tree):
    """The dotted module a test file is imported as, below the first import root holding it.

    >>> [file_module(p, ["/t/src", "/t"], "/t") for p in ("src/pkg/test_a.py", "tests/test_b.py")]
    ['pkg.test_a', 'tests.test_b']
    """
    full = os.path.join(tree, path)
    for root in roots:
        relative = os.path.relpath(full, root)
        if not relative.startswith(os.pardir + os.sep):
            return relative[:-3].replace(os.sep, ".") if relative.endswith(".py") else relative
    return path


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
    collect = {"errors": {}, "skips": {}, "collected": set(), "not_found": set(),
               "items": set()}
    start, finish, rootdir = None, None, None
    lines = read_untrusted(path).splitlines()
    records, rejected = signed_records(lines, secret)
    for record in records:
        kind = record.get("kind")
        if kind == "start" and start is None:
            start = record
        elif kind == "rootdir" and rootdir is None:
            rootdir = record.get("path")
        elif kind == "collect_error":
            collect_errors.append(record.get("nodeid", ""))
            collect["errors"].setdefault(str(record.get("nodeid", "")),
                                        str(record.get("error", "")))
        elif kind == "collect_skip":
            collect["skips"].setdefault(str(record.get("nodeid", "")), str(record.get("error", "")))
        elif kind == "collected":
            collect["collected"].add(str(record.get("nodeid", "")))
        elif kind == "not_found":
            collect["not_found"].add(str(record.get("nodeid", "")))
        elif kind == "items" and isinstance(record.get("nodeids"), list):
            collect["items"].update(str(n) for n in record["nodeids"])
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
    if prefix:
        collect = {"errors": {prefix + k: v for k, v in collect["errors"].items()},
                   "skips": {prefix + k: v for k, v in collect["skips"].items()},
                   "collected": {prefix + k for k in collect["collected"]},
                   "not_found": collect["not_found"],
                   "items": {prefix + k for k in collect["items"]}}
    shadowed = sorted(set((start or {}).get("shadowed") or []) |
                      set((finish or {}).get("shadowed") or []))
    return {"started": start is not None, "outcomes": outcomes,
            "collect_errors": collect_errors, "rejected": rejected,
            "finished": finish is not None,
            "exit_status": finish.get("exitstatus") if finish else None,
            "modules": finish.get("modules") if finish else None,
            "shadowed": shadowed, "tampered": (finish or {}).get("tampered") or [],
            "plugins": (finish or {}).get("plugins") or [], "collect": collect,
            "configured": rootdir is not None, "versions": {
                "python": (start or {}).get("python"), "pytest": (start or {}).get("pytest")}}


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


def looks_like_credential(name, value):
    """Whether a variable may hold a credential: by its name's prefix, a word or an ending
    of its name, or a value that is a URL with a user part.

    >>> [looks_like_credential(n, "x") for n in ("STRIPE_KEY", "KEYRING_PASS", "JWT", "LANG")]
    [True, True, True, False]
    >>> looks_like_credential("REPO_URL", "https://ghp_abc@github.com/o/r")
    True
    """
    upper = name.upper()
    words = [w for w in re.split(r"[^A-Z0-9]+", upper) if w]
    return (upper.startswith(CREDENTIAL_PREFIXES)
            or any(word in upper for word in CREDENTIAL_WORDS)
            or any(w in CREDENTIAL_NAME_WORDS or w.endswith(CREDENTIAL_ENDINGS) for w in words)
            or bool(CREDENTIAL_URL.search(value)))


def scrubbed_environment(folder, import_paths, python, extra, keep):
    """The test command's environment: no credentials, HOME and TMPDIR in the throwaway folder."""
    env = {}
    for name, value in os.environ.items():
        upper = name.upper()
        if name not in keep and (upper.startswith(DROPPED_PREFIXES) or upper in DROPPED_NAMES
                                 or looks_like_credential(name, value)):
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
_STOPPING = threading.Event()     # set on a signal or a full disk: no new test command starts


class Interrupted(BaseException):
    """A run that the job's stopping cut short: it has no verdict and is graded on resume.

    A BaseException, so that no step mistakes it for the run's own error.
    """


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


# --- files the code under test could have replaced ---
# The run's folder and the grader's folder are writable inside the sandbox, so
# between attempts the code under test can leave a link, a FIFO or a folder where
# the grader writes next or reads back. The grader never follows such an entry.
def remove_entry(path):
    """Remove whatever is at `path` (a file, a link, a FIFO, a folder), never following it."""
    if os.path.islink(path) or (os.path.lexists(path) and not os.path.isdir(path)):
        os.remove(path)
    elif os.path.isdir(path):
        remove_folder(path)


def create_private(path, mode="w"):
    """Open a new file at `path` for the grader's own writing, whatever was there before."""
    remove_entry(path)
    access = os.O_RDWR if "+" in mode else os.O_WRONLY
    handle = os.open(path, access | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    return os.fdopen(handle, mode, **({} if "b" in mode else {"encoding": "utf-8"}))


def read_untrusted(path, limit=MAX_RECORD_BYTES):
    """A file's text, or '' unless it is a regular file (never a link, a FIFO, a device);
    at most `limit` bytes."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return ""
    with os.fdopen(handle, "rb") as opened:
        if not stat.S_ISREG(os.fstat(opened.fileno()).st_mode):
            return ""
        return opened.read(limit).decode("utf-8", "replace")


def run_command(argv, *, cwd, env, timeout, output_path):
    """Run a test command in its own session, stdin closed; return (status, timed out,
    seconds, its output). The output is read back through the grader's own handle."""
    start = time.monotonic()
    if _STOPPING.is_set():
        raise Interrupted()
    with create_private(output_path, "w+b") as output:
        try:
            process = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                       stdout=output, stderr=subprocess.STDOUT,
                                       start_new_session=True)
        except OSError as exc:
            raise GradingError(f"cannot run {argv[0]} ({exc.strerror or exc})") from None
        with _LIVE_LOCK:
            _LIVE_GROUPS.add(process.pid)
        if _STOPPING.is_set():      # the job began stopping while this one started
            kill_group(process.pid)
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
        if status != 0 and not timed_out and job_stopping(status):
            raise Interrupted()     # killed by the job's stop, not by its own failure
        output.seek(0)
        text = output.read(MAX_OUTPUT_BYTES).decode("utf-8", "replace")
    return status, timed_out, time.monotonic() - start, text


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
    if choose_runner("auto", test_ids) == "pytest":      # the log runner's default command
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
    _write({"kind": "start", "runner": name, "shadowed": _shadowed(),
            "python": sys.version.split()[0]})
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

''' + RESULT_OUTCOMES + r'''

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
    names = _CONFIG.get("names")
    if names is not None:
        # --select ids: the runner's keyword filter keeps only each file's listed names.
        def matches(self, function):
            return getattr(function, "__name__", None) in names.get(_STATE["file"], ())
        runtests.SymPyTests.matches = matches


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


def runner_for(instance, runner, listed, tree=None):
    """The runner choice, the one rule that grading and every pre-flight check apply.

    The instance's test_runner, else `runner` (--runner), unless that is auto; for auto
    the repository's project runner (REPO_RUNNERS), then the one the tree's layout calls
    for, then the ids': pytest when any listed id is a pytest node id, unittest otherwise.
    Before a checkout (tree None) the layout is unknown and is passed over; with the ids
    unknown too (listed None: --make-instances finds them per fix) pytest is assumed.
    None when the instance's log_parser has no runner here.

    >>> runner_for({"repo": "django/django"}, "auto", ["tests/t.py::test_a"])
    'django'
    >>> runner_for({"repo": "o/r"}, "auto", ["t.py::test_a"]), runner_for({}, "auto", ["m.C.t"])
    ('pytest', 'unittest')
    >>> runner_for({"repo": "o/r"}, "auto", None), runner_for({"test_runner": "log"}, "auto", [])
    ('pytest', 'log')
    """
    if instance.get("no_runner"):
        return None
    chosen = instance.get("test_runner") or runner
    if chosen != "auto":
        return chosen
    found = REPO_RUNNERS.get(instance.get("repo"))
    if found is None and tree is not None:
        found = project_runner(tree)
    if found is not None:
        return found
    return "pytest" if listed is None else choose_runner("auto", listed)


def pick_runner(instance, settings, listed, tree):
    """The runner for one run (runner_for() on its tree); a log_parser with none is an error."""
    if instance.get("no_runner"):
        raise GradingError(instance["no_runner"])
    return runner_for(instance, settings["runner"], listed, tree)


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


def project_selection(project, argv, files):
    """--select ids on the django and sympy runners: (argv, {file: names} for the recorder).

    Django runs each listed test by its dotted label (a docstring id: every test
    it names). SymPy runs the listed functions' files, and the recorder's hook on
    the runner's keyword filter keeps only the listed names in each file.

    >>> plan = {"runner": "django", "mapping": {"Say A.": {"dotted": "m.T.test_a",
    ...         "places": ["m.T.test_a", "m.U.test_a"]}, "test_b (m.T)": {"dotted": "m.T.test_b"}}}
    >>> project_selection(plan, ["py", "runner.py", "tests/runtests.py", "m"], ["m"])
    (['py', 'runner.py', 'tests/runtests.py', 'm.T.test_a', 'm.U.test_a', 'm.T.test_b'], None)
    >>> plan = {"runner": "sympy", "mapping": {"test_x": {"dotted": "a/test_b.py::test_x",
    ...         "places": ["a/test_b.py::test_x"]}}}
    >>> project_selection(plan, ["py", "runner.py", "a/test_b.py", "a/test_c.py"],
    ...                   ["a/test_b.py", "a/test_c.py"])
    (['py', 'runner.py', 'a/test_b.py'], {'a/test_b.py': ['test_x']})
    """
    places = [place for entry in project["mapping"].values()
              for place in (entry.get("places") or [entry["dotted"]])]
    head = argv[:len(argv) - len(files)]
    if project["runner"] == "django":
        return head + list(dict.fromkeys(places)), None
    names = {}
    for place in places:
        path, name = place.split("::")
        names.setdefault(path, set()).add(name)
    return head + sorted(names), {path: sorted(found) for path, found in sorted(names.items())}


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
    records, _ = signed_records(read_untrusted(path).splitlines(), secret)
    return {r["nodeid"]: r.get("doc") for r in records
            if r.get("kind") == "test" and isinstance(r.get("nodeid"), str)}


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


# === Sandbox ===
def covered(path, roots):
    """Whether `path` is one of `roots` or lies below one.

    >>> covered("/usr/lib/python3", ["/usr"]), covered("/usrx", ["/usr"])
    (True, False)
    """
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def readable_paths(candidates, system_roots):
    """The interpreter's folders the sandbox must show: absolute, not already shown, not nested.

    >>> readable_paths(["/home/u/.venv", "/usr", "/home/u/.venv/lib", "/opt/py"], ["/usr"])
    ['/home/u/.venv', '/opt/py']
    """
    kept = []
    for path in sorted({os.path.normpath(p) for p in candidates if p and os.path.isabs(p)}):
        if path != "/" and not covered(path, system_roots) and not covered(path, kept):
            kept.append(path)
    return kept


def system_mounts(paths=SYSTEM_PATHS, etc_entries=ETC_ENTRIES):
    """What of the system the sandbox shows: (symlink|ro-bind, source, destination) triples."""
    mounts = []
    etc = sorted(name for name in (os.listdir("/etc") if os.path.isdir("/etc") else [])
                 if any(fnmatch.fnmatchcase(name, pattern) for pattern in etc_entries))
    for path in list(paths) + [os.path.join("/etc", name) for name in etc]:
        if os.path.islink(path):
            mounts.append(("symlink", os.readlink(path), path))
        elif os.path.exists(path):
            mounts.append(("ro-bind", path, path))
    return mounts


def interpreter_prefixes(python):
    """The folders the interpreter runs from (a virtualenv's and its base's), as it reports them."""
    probe = ("import json, sys; print(json.dumps([sys.prefix, sys.exec_prefix, sys.base_prefix, "
             "sys.base_exec_prefix]))")
    try:
        done = subprocess.run([python, "-I", "-c", probe], stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=SANDBOX_PROBE_TIMEOUT)
        reported = json.loads(done.stdout.decode("utf-8", "replace").strip().splitlines()[-1])
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        reported = []
    # The path as given and where it really lives: a venv's bin/python is a
    # symlink into the base interpreter's prefix.
    for executable in (os.path.abspath(python), os.path.realpath(python)):
        reported.append(os.path.dirname(os.path.dirname(executable)))
    found = set()
    for path in reported:
        if isinstance(path, str) and os.path.isdir(path):
            found.update((path, os.path.realpath(path)))
    return sorted(found)


def bwrap_argv(command, sandbox, *, cwd, writable, protected):
    """The command wrapped in bubblewrap: no network, read-only system, only `writable` writable.

    >>> sandbox = {"program": "/usr/bin/bwrap", "disable_userns": False,
    ...            "system": [("ro-bind", "/usr", "/usr"), ("symlink", "usr/bin", "/bin")],
    ...            "readable": ["/home/u/.venv"]}
    >>> print(" ".join(bwrap_argv(["python", "-c", "pass"], sandbox, cwd="/tmp/r/tree",
    ...       writable=["/tmp/r"], protected=["/tmp/r/tree/.git"])))
    ... # doctest: +NORMALIZE_WHITESPACE
    /usr/bin/bwrap --unshare-all --unshare-user --die-with-parent --new-session --cap-drop ALL
    --ro-bind /usr /usr --symlink usr/bin /bin --proc /proc --dev /dev --tmpfs /tmp
    --ro-bind /home/u/.venv /home/u/.venv --bind /tmp/r /tmp/r
    --ro-bind /tmp/r/tree/.git /tmp/r/tree/.git --remount-ro / --chdir /tmp/r/tree
    -- python -c pass
    """
    argv = [sandbox["program"], "--unshare-all", "--unshare-user"]
    if sandbox["disable_userns"]:
        argv.append("--disable-userns")   # no nested namespace to regain capabilities in
    argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    for kind, source, destination in sandbox["system"]:
        argv += ["--symlink" if kind == "symlink" else "--ro-bind", source, destination]
    # Mounts apply in order: the private /tmp first, then what lives in it.
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for path in sandbox["readable"]:
        argv += ["--ro-bind", path, path]
    for path in writable:
        argv += ["--bind", path, path]
    for path in protected:
        argv += ["--ro-bind", path, path]
    # The sandbox's own root (where the folders above the binds were made) read-only too.
    return argv + ["--remount-ro", "/", "--chdir", cwd, "--", *command]


def unshare_argv(command, sandbox):
    """The command in new network and PID namespaces (util-linux unshare); files are not isolated.

    >>> unshare_argv(["python"], {"program": "unshare", "root": False, "map_user": "current"})
    ... # doctest: +NORMALIZE_WHITESPACE
    ['unshare', '--user', '--map-current-user', '--net', '--pid', '--fork', '--kill-child',
     '--mount-proc', '--', 'python']
    """
    user = [] if sandbox["root"] else ["--user", f"--map-{sandbox['map_user']}-user"]
    return [sandbox["program"], *user, "--net", "--pid", "--fork", "--kill-child",
            "--mount-proc", "--", *command]


def sandboxed(sandbox, argv, *, tree, folder, grader_dir):
    """The test command as run under the chosen isolation (unchanged under none).

    Under bwrap the run's folder, the tree and the grader's folder are the only ones
    writable, and inside them the tree's .git and the recorder modules stay
    read-only, so the code under test cannot plant a git hook or config for the
    grader's later git commands, nor replace the recorder a --repeat loads.
    """
    isolation = (sandbox or {}).get("isolation", "none")
    if isolation == "unshare":
        return unshare_argv(argv, sandbox)
    if isolation != "bwrap":
        return list(argv)
    protected = [os.path.join(tree, ".git")] + sorted(
        os.path.join(grader_dir, name) for name in os.listdir(grader_dir)
        if name.endswith(".py") or name == "selected.json")
    # The tree is a mount of its own (inside the folder or not), so the code under
    # test cannot move it or its .git aside and leave another in their place.
    return bwrap_argv(argv, sandbox, cwd=tree, writable=[folder, tree, grader_dir],
                      protected=[p for p in protected if os.path.exists(p)])


def why_no_namespaces(limits):
    """The settings that keep new namespaces from this user, from the kernel's and host's facts.

    >>> [r[:48] for r in why_no_namespaces({"kernel.apparmor_restrict_unprivileged_userns": "1",
    ...                                      "root": False})]
    ['AppArmor restricts unprivileged user namespaces ']
    >>> why_no_namespaces({"kernel.unprivileged_userns_clone": "1", "root": True})
    []
    """
    reasons = []
    if limits.get("user.max_user_namespaces") == "0":
        reasons.append("user namespaces are off (user.max_user_namespaces = 0)")
    if not limits.get("root"):
        if limits.get("kernel.unprivileged_userns_clone") == "0":
            reasons.append("unprivileged user namespaces are off "
                           "(kernel.unprivileged_userns_clone = 0; sysctl -w "
                           "kernel.unprivileged_userns_clone=1 allows them)")
        if limits.get("kernel.apparmor_restrict_unprivileged_userns") == "1":
            reasons.append("AppArmor restricts unprivileged user namespaces "
                           "(kernel.apparmor_restrict_unprivileged_userns = 1; an AppArmor "
                           "profile for bwrap, as Ubuntu's apparmor-profiles ship, allows it)")
    if limits.get("container") and not reasons:
        reasons.append("this is a container, whose seccomp profile, missing CAP_SYS_ADMIN or "
                       "own user namespace may forbid new namespaces (Docker's default "
                       "profile does; so does a sandbox that disables nested ones)")
    return reasons


def namespace_limits():
    """The kernel settings and host facts that why_no_namespaces reads."""
    limits = {"root": os.geteuid() == 0,
              "container": os.path.exists("/.dockerenv") or os.path.exists("/run/.containerenv")}
    for name in ("kernel.unprivileged_userns_clone", "user.max_user_namespaces",
                 "kernel.apparmor_restrict_unprivileged_userns"):
        try:
            with open("/proc/sys/" + name.replace(".", "/"), encoding="ascii") as handle:
                limits[name] = handle.read().strip()
        except OSError:
            pass
    return limits


def interpreter_check(python, needs_pytest):
    """The command that shows the interpreter starts (and imports pytest where a run needs it)."""
    return [python, "-c", "import sys" + ("; import pytest" if needs_pytest else "")]


def probe_sandbox(sandbox, command):
    """Run `command` once under `sandbox`; return '' when it succeeds, else why not."""
    folder = owned_folder("probe")
    try:
        os.makedirs(os.path.join(folder, "tree"))
        argv = sandboxed(sandbox, command, tree=os.path.join(folder, "tree"), folder=folder,
                         grader_dir=folder)
        env = {k: v for k, v in os.environ.items() if not k.upper().startswith("PYTHON")}
        env.update(HOME=folder, TMPDIR=folder)
        try:
            done = subprocess.run(argv, cwd=folder, env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=SANDBOX_PROBE_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"cannot run it ({exc})"
        if done.returncode == 0:
            return ""
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return (lines[-1] if lines else f"exit {done.returncode}")[:300]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def program_usage(program):
    """A sandbox program's --help text, read for the options this version has."""
    try:
        return subprocess.run([program, "--help"], stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=SANDBOX_PROBE_TIMEOUT).stdout
    except (OSError, subprocess.TimeoutExpired):
        return b""


def bwrap_sandbox(python):
    """The bwrap settings for this machine and interpreter, or None where bwrap is missing."""
    program = shutil.which(SANDBOX_PROGRAMS["bwrap"])
    if not program:
        return None
    usage = program_usage(program)
    system = system_mounts()
    roots = [destination for _, _, destination in system]
    return {"isolation": "bwrap", "program": program, "system": system,
            "disable_userns": b"--disable-userns" in usage,
            "readable": readable_paths(interpreter_prefixes(python), roots)}


def unshare_sandbox():
    """The unshare settings for this machine, or None where unshare is missing."""
    program = shutil.which(SANDBOX_PROGRAMS["unshare"])
    if not program:
        return None
    usage = program_usage(program)
    # --map-current-user (util-linux 2.38) keeps the user's own uid; older ones
    # can only map it to root, which lets tests that expect a permission error pass.
    return {"isolation": "unshare", "program": program, "root": os.geteuid() == 0,
            "map_user": "current" if b"--map-current-user" in usage else "root"}


_CHOSEN = {}    # one probe per process and setting: tests call main() many times


def choose_sandbox(mode, python, needs_pytest):
    """--sandbox auto|bwrap|unshare|none: the isolation that works here, with why a better
    one did not.

    Returns the settings sandboxed() reads, with "isolation" and "fallback" (the
    reason bwrap was not used, empty when it was or when none was asked for).
    --sandbox bwrap where bwrap is missing or cannot run is an InputError.
    """
    key = (mode, python, needs_pytest, tuple(sorted(SANDBOX_PROGRAMS.items())))
    if key not in _CHOSEN:
        _CHOSEN[key] = probe_sandboxes(mode, python, needs_pytest)
    if isinstance(_CHOSEN[key], InputError):
        raise _CHOSEN[key]
    return dict(_CHOSEN[key])


def probe_sandboxes(mode, python, needs_pytest):
    """choose_sandbox's work: try bwrap, then unshare; an InputError is returned, not raised."""
    if mode == "none":
        return {"isolation": "none", "fallback": ""}
    if mode == "unshare":
        return unshare_chosen(python, needs_pytest)
    sandbox = bwrap_sandbox(python)
    check = interpreter_check(python, needs_pytest)
    if sandbox is None:
        why = f"bwrap is not installed ({BWRAP_INSTALL})"
    else:
        why = probe_sandbox(sandbox, check)
        if not why:
            return dict(sandbox, fallback="")
        bare = probe_sandbox(sandbox, ["true"])
        if bare:        # bwrap itself cannot start: say what keeps namespaces away
            why = f"bwrap cannot run here: {bare}"
            causes = why_no_namespaces(namespace_limits())
            if causes:
                why += " (" + "; ".join(causes) + ")"
        else:
            why = f"{python} does not start inside bwrap: {why}"
    if mode == "bwrap":
        return InputError(f"--sandbox bwrap: {why}; or grade with --sandbox auto, which says "
                          f"what it falls back to")
    fallback = unshare_sandbox()
    if fallback is not None:
        failed = probe_sandbox(fallback, check)
        if not failed:
            return dict(fallback, fallback=why)
        why += f"; unshare cannot run either: {failed}"
    else:
        why += "; unshare is not installed either"
    return {"isolation": "none", "fallback": why}


def unshare_chosen(python, needs_pytest):
    """--sandbox unshare: its settings, or the InputError (returned) saying why it cannot run."""
    sandbox = unshare_sandbox()
    if sandbox is None:
        return InputError("--sandbox unshare: unshare is not installed (util-linux); or grade "
                          "with --sandbox auto, which says what it falls back to")
    failed = probe_sandbox(sandbox, interpreter_check(python, needs_pytest))
    if failed:
        return InputError(f"--sandbox unshare: it cannot run here: {failed}")
    return dict(sandbox, fallback="")


# === Grading ===
# The settings record: the options and facts that decide a verdict (they reach the verdicts,
# the made instances and the resume key), besides a run and its instance. new_settings()
# makes it from the options (regrading, --make-instances and --audit-instances alike); the
# pre-flight and the session then fill the keys marked "set by", and no other key is ever
# added. The job's live state (its folder, kept trees, sandbox, opened repositories) is the
# Session's, never the record's.
# key: (value until set, meaning)
SETTINGS = {
    "grader_version": (None, "__version__+ the first 12 hex digits of this file's SHA-256"),
    "runner": ("auto", "--runner (an instance's test_runner comes first)"),
    "test_cmd": (None, "--test-cmd TEMPLATE (an instance's test_cmd comes first)"),
    "timeout": (DEFAULT_TIMEOUT, "--timeout: seconds per test command"),
    "repeat": (1, "--repeat K: runs of each test command (--make-instances grades once)"),
    "p2p_skip_ok": (False, "--p2p-skip-ok: a skipped PASS_TO_PASS test does not fail the run"),
    "env": ({}, "--env KEY=VALUE, as {KEY: VALUE}"),
    "keep_env": (frozenset(), "--keep-env NAME: variables passed through the scrubbing"),
    "test_patterns": (None, "--test-files GLOB as a tuple, None for the default test files"),
    "keep_trees": (False, "--keep-trees: the throwaway folders stay (named in the logs)"),
    "fuzz": (DEFAULT_FUZZ, "--fuzz: fuzz for the patch fallback"),
    "select": ("ids", "--select: the listed test ids, or their whole files"),
    "python": (None, "set by the pre-flight: the test interpreter, checked (check_python)"),
    "interpreter": (None, "set by the pre-flight: its name, version and path (interpreter_facts)"),
    "distributions": (None, "set by the pre-flight when regrading: its installed distributions"),
    "grader_sha256": (None, "set by the pre-flight: SHA-256 of this file's bytes"),
    "isolation": ("none", "set by the session: its sandbox's isolation level (choose_sandbox)"),
    "observe_all": (False, "--make-instances: record every test's outcome, not only the listed"),
}


def new_settings(args, *, repeat):
    """The settings record of a session from its options (see SETTINGS)."""
    settings = {key: value for key, (value, _) in SETTINGS.items()}
    settings.update({
        "grader_version": f"{__version__}+{script_sha256(__file__)[:12]}",
        "runner": args.runner, "test_cmd": args.test_cmd, "timeout": args.timeout,
        "repeat": repeat, "p2p_skip_ok": args.p2p_skip_ok,
        "env": parse_env_options(args.env, "--env"), "keep_env": set(args.keep_env),
        "test_patterns": tuple(args.test_files) if args.test_files else None,
        "keep_trees": args.keep_trees, "fuzz": args.fuzz, "select": args.select,
    })
    return settings


def check_interpreter(settings, python, needs_pytest, *, distributions=False):
    """The pre-flight: fill the settings' test interpreter (checked), its facts, its installed
    distributions (regrading's resume key names them) and this file's SHA-256."""
    settings["python"] = check_python(python, needs_pytest)
    settings["interpreter"] = interpreter_facts(python, settings["python"])
    if distributions:
        settings["distributions"] = interpreter_distributions(settings["python"])
    settings["grader_sha256"] = script_sha256(__file__)


class Session:
    """The live state of one job (grading, --make-instances, --audit-instances), apart from the
    settings record: the sandbox chosen, the job's private folder (scratch), the TreePool
    that keeps work trees between runs, the paths shared files may not name (private) and
    the repositories opened (source). Made at the pre-flight, where the sandbox is chosen,
    its isolation set in the settings and its fallback warned of, once; `with session:`
    then makes the folder and the pool, and its end closes the trees and removes the
    folder, however the job ended.

    args, argv, inputs and (when regrading) instances are the job's own inputs, for the
    mode's code to read from the session.
    """

    def __init__(self, settings, args, argv, inputs, *, needs_pytest, jobs, private=None,
                 instances=None):
        self.settings, self.args, self.argv, self.inputs = settings, args, argv, inputs
        self.instances = instances
        self.fallback, self.named = parse_repo_options(args.repo)
        self.sandbox = choose_sandbox(args.sandbox, settings["python"], needs_pytest)
        isolation = settings["isolation"] = self.sandbox["isolation"]
        if self.sandbox["fallback"]:
            sys.stderr.write(f"warning: {self.sandbox['fallback']}; the tests run under "
                             f"{isolation}: {ISOLATION_MEANS[isolation]}\n")
        # Trees are kept between runs only where the code under test cannot touch their .git.
        self.keep = jobs if isolation == "bwrap" and not args.keep_trees else 0
        # The input files shared files may not name, and the --repo paths (None: no path).
        self.private_inputs = None if private is None else \
            [*private, self.fallback, *self.named.values()]
        self.scratch, self.trees, self.private, self.sources = None, None, (), {}

    def __enter__(self):
        self.scratch = owned_folder("session")
        if self.private_inputs is not None:
            self.private = tuple(private_paths(self.private_inputs, self.scratch))
        self.trees = TreePool(self.keep, self.scratch)
        return self

    def __exit__(self, *exc_info):
        try:
            self.trees.close()
        finally:
            remove_folder(self.scratch)
        return False

    def repo_path(self, repo, where):
        """The --repo path of a repository (owner/name), else the unnamed one; InputError
        naming the row (`where`) when there is neither."""
        path = self.named.get(repo, self.fallback)
        if path is None:
            raise InputError(f"{where}: no --repo for repository {repo or '(unnamed)'}; "
                             f"give --repo {repo or 'owner/name'}=PATH")
        return path

    def source(self, path):
        """The repository at a --repo path, opened once for the job (open_source)."""
        if path not in self.sources:
            self.sources[path] = open_source(path, self.scratch, self.inputs)
        return self.sources[path]


PASSING = ("passed",)
FAILING = ("failed", "error", "xpassed")
SKIPPING = ("skipped", "xfailed")
# What passes in each list, as in SWE-bench: an expected failure keeps a PASS_TO_PASS
# test passing, never a FAIL_TO_PASS one. Grading (decide) and auditing a dataset
# (outcome_defects) both read it.
LIST_PASSING = {"FAIL_TO_PASS": PASSING, "PASS_TO_PASS": PASSING + ("xfailed",)}


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


def outcome_group(outcome):
    """passed, failing, skipping or None (it did not run): the classes a verdict tells apart.

    The one vocabulary of grading and making: a listed test's group (classify), a
    flaky test (is_flaky), two tests one id names disagreeing (project_lookup).

    >>> [outcome_group(o) for o in ("passed", "failed", "error", "xpassed", "xfailed", None)]
    ['passed', 'failing', 'failing', 'failing', 'skipping', None]
    """
    if outcome is None or outcome in PASSING:
        return outcome
    return "failing" if outcome in FAILING else "skipping"


def is_flaky(outcomes):
    """Whether one test's outcomes over repeated runs fall in more than one of passed,
    failing and skipping: the one flaky rule of grading (--repeat), making (--runs) and
    the dataset audit. A test that did not run (None) counts as failing, as making
    counts a test absent from a run. So a test that failed, then errored or did not
    run, never passed: it is failing, not flaky; one that passed once and failed (or did
    not run) once is flaky.

    >>> is_flaky(["failed", "error"]), is_flaky(["failed", None]), is_flaky(["passed"])
    (False, False, False)
    >>> is_flaky(["passed", "failed"]), is_flaky(["passed", None]), is_flaky(["xfailed", "error"])
    (True, True, True)
    """
    return len({outcome_group(o) or "failing" for o in outcomes}) > 1


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
    for name, listed, passing in (("fail_to_pass", fail_to_pass, LIST_PASSING["FAIL_TO_PASS"]),
                                  ("pass_to_pass", pass_to_pass, LIST_PASSING["PASS_TO_PASS"])):
        group = {"passed": [], "failed": [], "skipped": [], "missing": []}
        for test_id in listed:
            outcomes = observed.get(test_id) or [None]
            group[classify(outcomes, passing)].append(test_id)
            if is_flaky(outcomes):
                flaky.append(test_id)
        groups[name] = group
    f2p, p2p = groups["fail_to_pass"], groups["pass_to_pass"]
    f2p_success = f2p["passed"]
    f2p_failure = f2p["failed"] + f2p["skipped"] + f2p["missing"]
    p2p_success = p2p["passed"] + (p2p["skipped"] if p2p_skip_ok else [])
    p2p_failure = p2p["failed"] + p2p["missing"] + ([] if p2p_skip_ok else p2p["skipped"])
    tests_status = {"FAIL_TO_PASS": {"success": f2p_success, "failure": f2p_failure},
                    "PASS_TO_PASS": {"success": p2p_success, "failure": p2p_failure},
                    "FAIL_TO_FAIL": {"success": [], "failure": []},
                    "PASS_TO_FAIL": {"success": [], "failure": []}}
    return {"fail_to_pass": f2p, "pass_to_pass": p2p, "flaky": sorted(set(flaky)),
            "completed": not f2p_failure and not p2p_failure,
            "resolution": swebench_resolution(tests_status), "tests_status": tests_status}


def swebench_resolution(tests_status):
    """SWE-bench's FULL / PARTIAL / NO from a tests_status: PARTIAL when some but not all
    FAIL_TO_PASS tests and every PASS_TO_PASS test succeed.

    >>> swebench_resolution({"FAIL_TO_PASS": {"success": ["a"], "failure": ["b"]},
    ...                      "PASS_TO_PASS": {"success": [], "failure": []}})
    'PARTIAL'
    """
    f2p, p2p = tests_status["FAIL_TO_PASS"], tests_status["PASS_TO_PASS"]
    f2p_rate, p2p_rate = rate(f2p["success"], f2p["failure"]), rate(p2p["success"], p2p["failure"])
    if f2p_rate == 1 and p2p_rate == 1:
        return "FULL"
    if 0 < f2p_rate < 1 and p2p_rate == 1:
        return "PARTIAL"
    return "NO"


def settle(verdict, *, by_tests=False):
    """Set a verdict's completed and resolution from its status: the one place that sets them.

    resolved: completed, FULL. A grading error (GRADING_ERRORS): completed None (not
    decided), NO. Any other status (unresolved, patch_failed, timeout): not completed,
    NO, unless the listed tests' outcomes decided it (by_tests): then SWE-bench's rule
    on its tests_status, so a run with some FAIL_TO_PASS passing is PARTIAL. A status
    decided by something else (tampering, an unfinished record) is NO whatever passed.

    >>> settle({"status": "timeout"}), settle({"status": "error"})["completed"]
    ({'status': 'timeout', 'completed': False, 'resolution': 'NO'}, None)
    """
    status = verdict["status"]
    if status == "resolved":
        completed, resolution = True, "FULL"
    elif status in GRADING_ERRORS:
        completed, resolution = None, "NO"
    else:
        completed = False
        resolution = swebench_resolution(verdict["tests_status"]) if by_tests else "NO"
    verdict["completed"], verdict["resolution"] = completed, resolution
    return verdict


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
    """The verdict fields known before grading starts (an error until graded), from the run's
    record with its texts normalised (normalised_run)."""
    return settle({
        "run_id": run["run_id"], "instance_id": run["instance_id"], "repo": instance["repo"],
        "model": run.get("model"), "base_commit": run["base_commit"],
        "completed": None, "status": "error", "resolution": None, "reason": "",  # settle sets
        "fail_to_pass": {"passed": [], "failed": [], "skipped": [], "missing": []},
        "pass_to_pass": {"passed": [], "failed": [], "skipped": [], "missing": []},
        "flaky": [], "applied_with": None, "touched_tests": [], "removed_shadowing": [],
        "runner": None, "results_from": None, "exit_status": [],
        "code_under_test": "not checked",
        "patch_is_none": run["diff"] is None, "diff_empty": not run["normalised_diff"],
        "duration_s": 0.0, "test_s": 0.0, "work_tree": None,
        "diff_sha256": sha256_text(run["normalised_diff"]),
        "test_patch_sha256": sha256_text(run["normalised_test_patch"]),
        "grader_version": settings["grader_version"], "key": run["key"],
        "key_parts": run.get("key_parts"), "notes": [],
        "tests_status": None,
        "isolation": settings.get("isolation", "none"),
    })


def error_verdict(run, session, reason):
    """The verdict of a run that cannot be graded at all (unknown instance, missing base commit)."""
    instance = {"repo": "", "test_patch": ""}
    verdict = empty_verdict(dict(run, base_commit=run.get("base_commit") or "",
                                 normalised_test_patch=""), instance, session.settings)
    verdict["environment"] = environment_record(session.settings)
    verdict.update(status="error", reason=reason)
    return shareable_verdict(verdict, session.private)


def environment_record(settings, source=None):
    """What decided a verdict besides its inputs: interpreter, pytest, repository, grader."""
    interpreter = settings.get("interpreter") or {}
    return {"python": interpreter.get("python"),
            "python_executable": relative_path(settings.get("python") or ""),
            "python_version": interpreter.get("version"), "pytest_version": None,
            "repository": dict(source.identity) if source is not None else None,
            "grader_sha256": settings.get("grader_sha256")}


def grade_run(run, instance, source, settings, session):
    """Grade one run from its diff; return its verdict (a plain dict) and its log text.

    The session gives the folder, the kept trees, the sandbox and the private paths.
    """
    started = time.monotonic()
    verdict = empty_verdict(run, instance, settings)
    verdict["environment"] = environment_record(settings, source)
    log = [f"run {run['run_id']} of {run['instance_id']} at {run['base_commit']}\n"]
    folder = owned_folder("run")
    # The grader's own folder (recorders, their settings, results) lives apart
    # from the work tree, under a name the code under test cannot derive from it.
    grader_dir = tempfile.mkdtemp(prefix="g-", dir=session.scratch)
    trees, lease, tree = session.trees, None, None
    by_tests = False
    try:
        tree, lease, verdict["work_tree"] = trees.take(source, run["base_commit"], folder)
        log.append(f"checked out {run['base_commit']} ({verdict['work_tree']})\n")
        by_tests = grade_in_folder(run, instance, settings, session.sandbox, folder, tree,
                                   grader_dir, verdict, log)
    except GradingError as exc:
        verdict.update(status="error", reason=str(exc))
        log.append(f"grading error: {exc}\n")
    except OSError as exc:
        verdict.update(status="error", reason=f"{exc.strerror or exc}")
        log.append(f"grading error: {exc}\n")
    finally:
        remove_folder(grader_dir)
        trees.give(lease)
        if settings["keep_trees"]:
            verdict["notes"].append("kept its folder (its path is in its log)")
            log.append(f"kept {kept_folder(folder)}\n")
        else:
            remove_folder(folder)
        verdict["duration_s"] = round(time.monotonic() - started, 3)
    if _STOPPING.is_set():
        # The job began stopping (a signal, a full disk) before this verdict was
        # decided: its tests or git may have been killed under it. Graded on resume.
        raise Interrupted()
    settle(verdict, by_tests=by_tests)
    # The verdict is shared (verdicts.jsonl, made instances); its log may name this machine.
    here = [(tree + os.sep, ""), (tree, "<tree>")] if tree else []
    here += [(folder, "<run folder>"), (grader_dir, "<grader folder>")]
    return shareable_verdict(verdict, here + list(session.private)), "".join(log)


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


def grade_in_folder(run, instance, settings, sandbox, folder, tree, grader_dir, verdict, log):
    """Steps 2-8 of the procedure for one run checked out in `tree`, filling `verdict`'s
    status; True when the listed tests' outcomes decided it (see settle)."""
    job = job_state(run, instance, settings, sandbox, folder, tree, grader_dir)
    if not apply_run_diff(job, verdict, log):
        return False
    reset_test_tree(job, verdict, log)
    if not apply_test_patch(job, verdict, log):
        return False
    plan = plan_tests(job, verdict)
    if plan is None:
        return False
    record = run_tests(job, plan, verdict, log)
    return record is not None and decide_run(job, plan, record, verdict)


def job_state(run, instance, settings, sandbox, folder, tree, grader_dir):
    """A run's state as it goes through the steps (a plain dict), from its checked-out tree."""
    base_names = {"": import_names(tree), "src/": import_names(os.path.join(tree, "src"))}
    # The tree's own copies of pytest and friends (grading pytest itself) are code under test.
    own_tools = {n for n in GUARDED_MODULES + TEST_TOOL_MODULES
                 if any(n in names for names in base_names.values())}
    return {"run": run, "instance": instance, "settings": settings, "sandbox": sandbox,
            "folder": folder, "grader_dir": grader_dir, "tree": tree, "base_names": base_names,
            "own_tools": own_tools, "diff": run["normalised_diff"]}


def apply_run_diff(job, verdict, log):
    """Step 2: apply the run's diff with the fallbacks; False when none applies (patch_failed)."""
    diff = job["diff"]
    if diff:
        patch_file = os.path.join(job["folder"], "run.diff")
        with open(patch_file, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(diff)
        method, text = apply_diff(job["tree"], patch_file, job["settings"]["fuzz"])
        log.append(text)
        if method is None:
            last = [l for l in text.strip().splitlines() if l and not l.startswith(("$", "exit"))]
            verdict.update(status="patch_failed",
                           reason="the diff does not apply: " + (last[-1] if last else "")[:300])
            return False
        verdict["applied_with"] = method
    else:
        verdict["applied_with"] = "empty"
    log.append(f"applied with: {verdict['applied_with']}\n")
    return True


def reset_test_tree(job, verdict, log):
    """Step 3: the run's own test files and the test patch's files go back to base.

    Files the run added that would replace the grader's own modules are removed.
    """
    tree, settings = job["tree"], job["settings"]
    job["test_patch"] = job["run"]["normalised_test_patch"]
    patch_paths = job["patch_paths"] = diff_paths(job["test_patch"])
    run_paths = job["run_paths"] = diff_paths(job["diff"])
    instance = job["instance"]
    folders = test_tree_folders(listed_test_paths(
        instance["FAIL_TO_PASS"] + instance["PASS_TO_PASS"], job["base_names"]) +
        [p for p in patch_paths if is_test_path(p)])
    run_tests = [p for p in run_paths if is_test_path(p, settings["test_patterns"]) or
                 in_test_tree(p, folders)]
    roots = [""] + (["src/"] if os.path.isdir(os.path.join(tree, "src")) else [])
    shadowing = shadowing_paths(run_paths, roots, job["base_names"])
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


def apply_test_patch(job, verdict, log):
    """Step 4: apply the maintainers' test patch; False when it does not apply."""
    if not job["test_patch"]:
        return True
    test_patch_file = os.path.join(job["folder"], "test.diff")
    with open(test_patch_file, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(job["test_patch"])
    status, output = git(["-C", job["tree"], "apply", "--whitespace=nowarn", test_patch_file],
                         check=False)
    log.append(f"$ git apply test.diff\n{output}exit {status}\n")
    if status != 0:
        verdict.update(status="test_patch_failed",
                       reason="the test patch does not apply: " + output.strip()[-300:])
        return False
    return True


def plan_tests(job, verdict):
    """Step 5: the runner, the command and its environment, the tree's code first on the path.

    None when a listed id names no file or module at all (an error verdict).
    """
    tree, settings, instance = job["tree"], job["settings"], job["instance"]
    grader_dir = job["grader_dir"]
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
    env = scrubbed_environment(job["folder"], import_paths, settings["python"], env_extra,
                               settings["keep_env"])
    files = test_files(listed, job["patch_paths"])
    if instance.get("run_files") is not None:       # --make-instances: the touched test files
        files = list(instance["run_files"])
    dotted = [unittest_name(t) for t in listed]
    modules = sorted({unittest_module(d, [import_root, tree]) for d in dotted})
    if instance.get("run_files") is not None and not listed:
        modules = sorted({file_module(p, [import_root, tree], tree) for p in files})
    unfound = [] if template else unfound_tests(listed, dotted, tree, [import_root, tree])
    project = None
    if runner in PROJECT_RUNNERS:
        # Django and SymPy ids are mapped by their own plan, which says when one names no test.
        project, problem = project_plan(runner, listed, tree, job["patch_paths"])
        if problem:
            verdict.update(status="error", reason=problem)
            return None
        files, unfound = project["files"], []
    if unfound:
        # A listed id naming no file or module at all is the instance's mistake,
        # not the run's: grade it as an error, never as the agent's failure.
        verdict.update(status="error",
                       reason=f"{len(unfound)} listed test(s) name no file or module in the "
                              f"tree after the test patch, e.g. {unfound[0]!r}: check the "
                              f"instance's FAIL_TO_PASS / PASS_TO_PASS ids")
        return None
    argv = test_command(runner, template, settings["python"], files, listed, modules, grader_dir)
    structured = runner in ("pytest", "unittest") + PROJECT_RUNNERS
    verdict["results_from"] = {"pytest": "pytest plugin", "unittest": "unittest runner",
                               "django": "django runner", "sympy": "sympy runner",
                               "log": "log"}[runner]
    if not structured:
        verdict["notes"].append("results read from the test log, not from a structured record")
    module_of = {d: unittest_module(d, [import_root, tree]) for d in dotted}
    module_of.update({m: m for m in modules})
    recorder = {"module_of": module_of}
    if settings.get("select", "ids") == "ids":
        # Only the listed tests run. Their ids go to the recorder through a file
        # in the grader's folder, never the command line (no quoting, no ARG_MAX).
        if runner == "pytest":
            recorder["select"] = os.path.join(grader_dir, "selected.json")
            with open(recorder["select"], "w", encoding="utf-8") as handle:
                json.dump(sorted({canonical_id(t) for t in listed}), handle, ensure_ascii=False)
        elif runner == "unittest" and not template:
            argv = argv[:2]
            recorder["load"] = [[module_of[d], d] for d in dict.fromkeys(dotted)]
        elif runner in PROJECT_RUNNERS:
            argv, recorder["names"] = project_selection(project, argv, files)
    return {"f2p": f2p, "p2p": p2p, "listed": listed, "runner": runner, "argv": argv,
            "env": env, "structured": structured, "top_modules": top_level_modules(import_root),
            "recorder": recorder, "module_of": module_of, "project": project}


def run_tests(job, plan, verdict, log):
    """Step 6: run the test command --repeat times, reading each attempt's results.

    Return what was read (a plain dict), or None after a timeout (the verdict says so).
    """
    tree, settings, folder, grader_dir = job["tree"], job["settings"], job["folder"], \
        job["grader_dir"]
    argv, env = plan["argv"], plan["env"]
    record = {"observed": {}, "failures_recorded": False, "exit_statuses": [], "places": {},
              "shadowed": set(), "tampered": set(), "unfinished": False, "results_seen": 0,
              "collect": {"errors": {}, "skips": {}, "collected": set(), "not_found": set(),
                          "items": set()},
              "configured": False, "output": "", "versions": {}, "conflicts": []}
    for attempt in range(settings["repeat"]):
        results_path = os.path.join(grader_dir, f"results-{attempt}.jsonl")
        config_path = os.path.join(grader_dir, f"config-{attempt}.json")
        secret = secrets.token_bytes(32)
        remove_entry(results_path)       # nothing an earlier attempt left there counts
        with create_private(config_path) as handle:
            json.dump(dict(plan["recorder"], results=results_path, modules=plan["top_modules"],
                       secret=secret.hex(), tree=tree,
                       guarded=[n for n in GUARDED_MODULES if n not in job["own_tools"]]),
                  handle)
        env[RESULTS_VARIABLE] = config_path
        output_path = os.path.join(folder, f"output-{attempt}.txt")
        log.append(f"$ {' '.join(shlex.quote(a) for a in argv)}  (in the tree)\n")
        command = sandboxed(job["sandbox"], argv, tree=tree, folder=folder,
                            grader_dir=grader_dir)
        status, timed_out, seconds, output = run_command(command, cwd=tree, env=env,
                                                         timeout=settings["timeout"],
                                                         output_path=output_path)
        verdict["test_s"] = round(verdict["test_s"] + seconds, 3)
        log.append(output + ("" if output.endswith("\n") or not output else "\n"))
        log.append(f"exit {status} after {seconds:.2f} s\n")
        record["exit_statuses"].append(status)
        record["recorder_started"] = not os.path.lexists(config_path)   # it deletes it first
        remove_entry(config_path)
        if timed_out:
            verdict.update(status="timeout",
                           exit_status=record["exit_statuses"],
                           reason=f"the test command ran longer than {settings['timeout']:g} s "
                                  f"and was killed")
            return None
        if not read_attempt(job, plan, record, verdict, results_path, secret, output, status):
            break
    return record


def read_attempt(job, plan, record, verdict, results_path, secret, output, status):
    """Step 7: read one attempt's results into `record`; False to stop repeating.

    Structured runners are read from their signed record, --runner log from the output.
    """
    tree, runner = job["tree"], plan["runner"]
    if plan["structured"]:
        results = read_results(results_path, tree, secret)
        if results["rejected"]:
            verdict["notes"].append(f"{results['rejected']} result records without a valid "
                                    f"signature were ignored")
        record["shadowed"].update(results["shadowed"])
        record["tampered"].update(f"unittest: {name} replaced" for name in results["tampered"])
        record["tampered"].update(f"pytest plugin from the tree: {p}" for p in tampering_plugins(
            results["plugins"], tree, set(job["run_paths"]), job["own_tools"]))
        if not results["started"] and record.get("recorder_started"):
            # The recorder read its settings (it deletes them as it starts) and its
            # first record is gone: the results file was removed, emptied or replaced.
            record["tampered"].add("the recorder's results file was removed or replaced")
        if not results["started"]:
            if record["shadowed"] or record["tampered"]:
                return False
            raise GradingError(f"the {runner} recorder did not load (no structured results; "
                               f"exit {status})")
        record["unfinished"] |= not results["finished"]
        record["configured"] |= results["configured"]
        record["versions"] = results["versions"]
        environment = verdict.get("environment")
        if environment is not None:
            # As the test process itself reported them, not as probed beforehand.
            environment["python_version"] = results["versions"]["python"] or \
                environment["python_version"]
            if runner == "pytest":
                environment["pytest_version"] = results["versions"]["pytest"]
        outcomes = results["outcomes"]
        collect = results["collect"]
        for key in ("errors", "skips"):
            for nodeid, text in collect[key].items():
                record["collect"][key].setdefault(nodeid, text)
        for key in ("collected", "not_found", "items"):
            record["collect"][key].update(collect[key])
        record["results_seen"] += len(outcomes) + sum(len(v) for v in collect.values())
        record["failures_recorded"] |= bool(results["collect_errors"]) or any(
            o in FAILING for o in outcomes.values()) or bool(collect["skips"])
        if results["modules"] is None:
            verdict["notes"].append("the test process ended before recording where "
                                    "the code was imported from")
        else:
            for name, found in results["modules"].items():
                record["places"].setdefault(name, set()).update(found)
    else:
        outcomes = parse_test_log(output)
        environment = verdict.get("environment")
        if environment is not None and any("pytest" in a for a in plan["argv"]):
            environment["pytest_version"] = (job["settings"].get("interpreter") or {}).get(
                "pytest_version")
        record["results_seen"] += len(outcomes)
        record["failures_recorded"] |= any(o in FAILING for o in outcomes.values())
    record["output"] = output
    if job["settings"].get("observe_all"):          # --make-instances reads every test's outcome
        verdict.setdefault("all_outcomes", []).append(dict(outcomes))
        if runner == "django":      # and spells each test as Django's verbose runner prints it
            verdict.setdefault("all_descriptions", []).append(
                test_descriptions(results_path, secret))
    if plan["project"] is not None:
        # A Django or SymPy id stands for the tests its plan mapped it to.
        described = test_descriptions(results_path, secret)
        for test_id in plan["listed"]:
            outcome, conflict = project_lookup(plan["project"], outcomes, described, test_id)
            record["observed"].setdefault(test_id, []).append(outcome)
            record["conflicts"].extend([conflict] if conflict else [])
        return True
    outcomes = canonical_outcomes(outcomes)
    for test_id in plan["listed"]:
        record["observed"].setdefault(test_id, []).append(lookup(outcomes, test_id, runner))
    return True


def decide_run(job, plan, record, verdict):
    """Step 8: the verdict's status from what was read, tampering and grading errors first;
    True when the listed tests' outcomes decided it, False when something else did."""
    tree, settings = job["tree"], job["settings"]
    exit_statuses = record["exit_statuses"]
    shadowed, tampered = record["shadowed"], record["tampered"]
    decided = decide(plan["f2p"], plan["p2p"], record["observed"],
                     p2p_skip_ok=settings["p2p_skip_ok"])
    verdict.update(fail_to_pass=decided["fail_to_pass"], pass_to_pass=decided["pass_to_pass"],
                   flaky=decided["flaky"], tests_status=decided["tests_status"],
                   exit_status=exit_statuses)
    if shadowed or tampered:
        detail = [d.replace(os.path.realpath(tree) + os.sep, "").replace(tree + os.sep, "")
                  for d in sorted(shadowed) + sorted(tampered)]
        what = SHADOWED if shadowed and not tampered else TAMPERED
        verdict.update(status="unresolved", reason=f"{what}: " + "; ".join(detail)[:300])
        return False
    wrong = outside_tree({k: sorted(v) for k, v in record["places"].items()}, tree)
    if plan["structured"]:
        verdict["code_under_test"] = "outside the tree: " + "; ".join(wrong) if wrong else "tree"
    if wrong:
        verdict.update(status="wrong_code_under_test",
                       reason="the tests imported the repository's code from outside the "
                              "throwaway tree: " + "; ".join(wrong)[:300])
        return False
    startup_failed = plan["runner"] == "pytest" and not record["configured"] and \
        any(s != 0 for s in exit_statuses)
    # A recorder cut short by the run's code is judged below, as it always was.
    if not record["results_seen"] and (startup_failed or not record["unfinished"]):
        reason, runs_own = no_result_reason(job, plan, record)
        verdict.update(status="unresolved" if runs_own else "error", reason=reason)
        return False
    causes = missing_causes(plan, record)
    if causes["uncollected"]:
        uncollected = causes["uncollected"]
        verdict["uncollected"] = uncollected
        verdict.update(status="error",
                       reason=f"{len(uncollected)} listed test(s) never collected although "
                              f"their file collected without error, e.g. {uncollected[0]!r}: "
                              f"check the instance's FAIL_TO_PASS / PASS_TO_PASS ids")
        return False
    if record["conflicts"]:
        verdict.update(status="error", reason=record["conflicts"][0])
        return False
    silent = [s for s in exit_statuses if s != 0]
    if silent and not record["failures_recorded"]:
        verdict.update(status="error",
                       reason=f"the test command exited {silent[0]} but recorded no failing test")
        return False
    if decided["completed"] and record["unfinished"]:
        verdict.update(status="unresolved",
                       reason="the test process ended before the recorder's last record, so "
                              "tampering could not be ruled out")
        return False
    if decided["completed"]:
        verdict.update(status="resolved", reason="")
        if any(s != 0 for s in exit_statuses):
            verdict["notes"].append("listed tests all passed; other tests in their files failed")
        return True
    verdict["status"] = "unresolved"
    verdict["reason"] = unresolved_reason(decided, settings)
    for (what, place), text in sorted(causes["collection"].items()):
        first = next((l.strip() for l in reversed(text.splitlines()) if l.strip()), "")
        verdict["reason"] += f"; {place} {what}: {first[:200]}"
    return True


def collectors_of(test_id, runner, module_of):
    """The collector ids whose failure or skip would hide a listed test, the test's own first.

    >>> collectors_of("t/a/test_x.py::C::test_y[1]", "pytest", {})
    ['t/a/test_x.py::C', 't/a/test_x.py', 't/a', 't', '']
    >>> collectors_of("t.test_x.C.test_y", "unittest", {"t.test_x.C.test_y": "t.test_x"})
    ['t.test_x.C.test_y', 't.test_x']
    """
    if runner != "pytest":
        return [test_id] + [module_of[test_id]] if test_id in module_of else [test_id]
    parts = test_id.split("::")
    found = ["::".join(parts[:size]) for size in range(len(parts) - 1, 1, -1)]
    path = parts[0].split("/")
    found += ["/".join(path[:size]) for size in range(len(path), -1, -1)]
    return found


def project_collectors(project, test_id):
    """What a Django or SymPy recorder names when a listed test's file, or the runner, fails.

    >>> project_collectors({"runner": "sympy", "mapping": {"test_x": {
    ...     "dotted": "a/test_b.py::test_x", "places": ["a/test_b.py::test_x"]}}}, "test_x")
    ['a/test_b.py', 'sympy']
    >>> project_collectors({"runner": "django", "mapping": {"test_y (m.T)": {
    ...     "dotted": "m.T.test_y", "module": "m"}}}, "test_y (m.T)")
    ['m', 'django']
    """
    entry = project["mapping"].get(test_id) or {}
    if project["runner"] == "sympy":
        places = entry.get("places") or [entry.get("dotted") or ""]
        found = list(dict.fromkeys(p.split("::")[0] for p in places if p))
    else:
        found = [entry["module"]] if entry.get("module") else []
    return found + [project["runner"]]


def missing_causes(plan, record):
    """Why each listed test that never ran is missing: its collection failed or was skipped
    (the run's failure), or its file collected cleanly without it (the instance's mistake)."""
    causes = {"uncollected": [], "collection": {}}
    if not plan["structured"] or record["unfinished"]:
        return causes
    collect = record["collect"]
    items = {canonical_id(i): True for i in collect["items"]}
    for test_id in plan["listed"]:
        if any(o is not None for o in record["observed"].get(test_id, [None])):
            continue
        if plan["project"] is not None:
            # Django and SymPy map their ids before running (an id naming no test is
            # a grading error there); a missing test is the run's, quoted if a file broke.
            error = next((c for c in project_collectors(plan["project"], test_id)
                          if c in collect["errors"]), None)
            if error is not None:
                causes["collection"][("failed to load", error)] = collect["errors"][error]
            continue
        if lookup(items, test_id, plan["runner"]):
            continue      # collected but not run (say -x stopped early): the run's failure
        name = unittest_name(test_id) if plan["runner"] == "unittest" else test_id
        chain = collectors_of(name, plan["runner"], plan["module_of"])
        error = next((c for c in chain if c in collect["errors"]), None)
        skip = next((c for c in chain if c in collect["skips"]), None)
        if error is not None:
            causes["collection"][("failed to collect", error or "the session")] = \
                collect["errors"][error]
        elif skip is not None:
            causes["collection"][("was skipped whole at collection", skip or "the session")] = \
                collect["skips"][skip]
        else:
            causes["uncollected"].append(test_id)
    return causes


def no_result_reason(job, plan, record):
    """Why a test command left no test result at all, and whether that is the run's own failure.

    pytest that stops before collecting (a conftest.py whose imports fail) is the
    run's failure only when its output names a file or module the run changed.
    """
    exit_statuses = [s for s in record["exit_statuses"] if s != 0]
    lines = [l.strip() for l in record["output"].splitlines() if l.strip()]
    quoted = (lines[-1] if lines else "no output")[:200]
    if plan["runner"] == "pytest" and not record["configured"] and exit_statuses:
        changed = set(job["run_paths"])
        changed |= {p[:-3].replace("/", ".") for p in job["run_paths"] if p.endswith(".py")}
        changed |= {p[:-12].replace("/", ".") for p in job["run_paths"]
                    if p.endswith("/__init__.py")}
        if any(c and c in record["output"] for c in changed):
            return f"the run's code stopped pytest before it collected any test: {quoted}", True
        return (f"pytest stopped before collecting any test, naming none of the run's files: "
                f"{quoted}"), False
    where = "in the test output" if plan["runner"] == "log" else "in the structured record"
    status = f" (exit {exit_statuses[0]})" if exit_statuses else ""
    return f"the {plan['runner']} runner recognised no test result {where}{status}: {quoted}", \
        False


def unresolved_reason(decided, settings):
    """The counts that kept a run from resolving, e.g. '1 FAIL_TO_PASS failed': each list's
    failures as decide counted them (a skipped PASS_TO_PASS test is none under
    --p2p-skip-ok), by group."""
    reasons = []
    for key, label in (("fail_to_pass", "FAIL_TO_PASS"), ("pass_to_pass", "PASS_TO_PASS")):
        failing = set(decided["tests_status"][label]["failure"])
        for group in ("failed", "skipped", "missing"):
            count = sum(1 for test_id in decided[key][group] if test_id in failing)
            if count:
                reasons.append(f"{count} {label} {group}")
    if decided["flaky"]:
        reasons.append(f"{len(decided['flaky'])} flaky across {settings['repeat']} repeats")
    return ", ".join(reasons)


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
    elif not isinstance(value, str):
        raise InputError(f"{where}: expected a JSON list of test ids, got a JSON "
                         f"{'object' if isinstance(value, dict) else type(value).__name__}")
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
    elif not isinstance(value, str):
        raise InputError(f"{where}: expected a JSON object, got {type(value).__name__}")
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
        records = [(f"{path} line {number}", record)
                   for number, record in read_jsonl_records(inputs, path, text=text)]
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


def lone_surrogate(text):
    """Where a text holds what no UTF-8 file can (a lone surrogate, which JSON's \\ud800
    escape spells), as 'a lone surrogate (\\ud800) at offset N'; None for UTF-8 text.

    >>> lone_surrogate("ok"), lone_surrogate("ab\\udc80")
    (None, 'a lone surrogate (\\\\udc80) at offset 2')
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"a lone surrogate ({ascii(text[exc.start])[1:-1]}) at offset {exc.start}"
    return None


def text_field(record, field, where, *, required=False):
    """A field that must hold text (a number is taken as its digits); '' when absent or null."""
    value = record.get(field)
    if value is None or value == "":
        if required:
            raise InputError(f"{where}: no {field}")
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InputError(f"{where}, field {field!r}: expected text, got {type(value).__name__}")
    if isinstance(value, str) and lone_surrogate(value):
        raise InputError(f"{where}, field {field!r}: not UTF-8 text: {lone_surrogate(value)}")
    return str(value)


def diff_problem(text, what="the diff"):
    """Why a diff cannot be graded at all (too large, binary, not UTF-8), or None. A
    JSON file's escapes can spell text no UTF-8 file holds (a lone surrogate, \\ud800).

    >>> diff_problem("diff --git a/x b/x\\n"), diff_problem("a\\x00b")
    (None, 'the diff holds a NUL byte at offset 1: binary data, not a text diff')
    >>> diff_problem("+ok\\n+\\ud800\\n")
    'the diff is not UTF-8: a lone surrogate (\\\\ud800) at offset 5'
    """
    if not text:
        return None
    if lone_surrogate(text):
        return f"{what} is not UTF-8: {lone_surrogate(text)}"
    size = len(text.encode("utf-8"))
    if size > MAX_DIFF_BYTES:
        return (f"{what} is {size / 2 ** 20:.1f} MiB, over the "
                f"{MAX_DIFF_BYTES // 2 ** 20} MiB limit")
    if "\x00" in text:
        return (f"{what} holds a NUL byte at offset {text.index(chr(0))}: binary data, "
                f"not a text diff")
    return None


def parse_instance(record, where):
    """One instances row as the grader uses it; InputError naming the field when it is malformed."""
    instance_id = text_field(record, "instance_id", where, required=True)
    if "test_patch" not in record:
        raise InputError(f"{where}: no test_patch")
    text_field(record, "test_runner", where)
    text_field(record, "log_parser", where)
    text_field(record, "eval_type", where)
    runner, no_runner = runner_from_fields(record, where)
    test_patch = text_field(record, "test_patch", where)
    problem = diff_problem(test_patch, "the test patch")
    if problem:
        raise InputError(f"{where}, field 'test_patch': {problem}")
    instance = {
        "instance_id": instance_id, "repo": text_field(record, "repo", where),
        "base_commit": text_field(record, "base_commit", where, required=True).strip(),
        "test_patch": test_patch, "patch": text_field(record, "patch", where) or None,
        "FAIL_TO_PASS": parse_test_list(record.get("FAIL_TO_PASS"),
                                        f"{where}, field 'FAIL_TO_PASS'"),
        "PASS_TO_PASS": parse_test_list(record.get("PASS_TO_PASS"),
                                        f"{where}, field 'PASS_TO_PASS'"),
        "test_cmd": text_field(record, "test_cmd", where) or None, "test_runner": runner,
        "test_env": parse_json_object(record.get("test_env"), f"{where}, field 'test_env'"),
        "where": where, "no_runner": no_runner, "notes": v5_fields(record, where),
    }
    if not instance["FAIL_TO_PASS"]:
        raise InputError(f"{where}: FAIL_TO_PASS is empty; nothing would show the fix works")
    return instance


def swapped_hint(records, path, wanted):
    """A hint when INSTANCES and RUNS look given the wrong way round, else ''."""
    has = [set(r) for _, r in records]
    if wanted == "instances" and all("model_patch" in k and "test_patch" not in k for k in has):
        return (f"{path} looks like a predictions file (model_patch, no test_patch): "
                f"the instances file comes first, as in regrade.py INSTANCES RUNS --repo PATH")
    if wanted == "runs" and all("test_patch" in k and "model_patch" not in k for k in has):
        return (f"{path} looks like an instances file (test_patch, no model_patch): "
                f"the predictions come second, as in regrade.py INSTANCES RUNS --repo PATH")
    return ""


def read_instances(path, inputs):
    """Read the instances file: ({instance_id: instance}, {instance_id: why its row is unusable}).

    A malformed row makes its own runs grading errors; a file with no usable row,
    or a row naming no instance, is bad input.
    """
    records = read_records(path, inputs)
    hint = swapped_hint(records, path, "instances")
    if hint:
        raise InputError(hint)
    instances, invalid = {}, {}
    for where, record in records:
        instance_id = text_field(record, "instance_id", where, required=True)
        if instance_id in instances or instance_id in invalid:
            raise InputError(f"{where}: instance {instance_id!r} appears twice")
        try:
            instances[instance_id] = parse_instance(record, where)
        except InputError as exc:
            invalid[instance_id] = str(exc)
    if not instances:
        raise InputError(next(iter(invalid.values())))
    return instances, invalid


def default_run_ids(runs):
    """Give runs without a run_id a unique, deterministic one: instance@model, then #2, #3
    (the shared block's number_run_ids, the rule the audits use for harness runs)."""
    return number_run_ids(runs, lambda run: instance_at_model(run["instance_id"],
                                                              run.get("model")))


def load_predictions(path, instances, inputs):
    """Read a SWE-bench predictions file into runs."""
    runs = []
    records = read_records(path, inputs)
    hint = swapped_hint(records, path, "runs")
    if hint:
        raise InputError(hint)
    for where, record in records:
        if is_missing(record.get("instance_id")):
            raise InputError(f"{where}: no instance_id")
        if "model_patch" not in record:
            raise InputError(f"{where}: no model_patch")
        run, problem = {"where": where}, None
        for key, field in (("instance_id", "instance_id"), ("model", "model_name_or_path"),
                           ("run_id", "run_id"), ("base_commit", "base_commit")):
            try:
                run[key] = text_field(record, field, where) or None
            except InputError as exc:
                run[key], problem = (repr(record.get(field))[:80] if key != "base_commit"
                                     else None), problem or str(exc)
        patch = record["model_patch"]
        if patch is not None and not isinstance(patch, str):
            problem = problem or (f"{where}, field 'model_patch': expected a diff as text, "
                                  f"got {type(patch).__name__}")
            patch = None
        run["diff"] = patch
        if problem:
            run["grading_error"] = problem
        runs.append(run)
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
        try:
            diff, problem = inputs.read_bytes(diff_path).decode("utf-8-sig"), None
        except UnicodeDecodeError as exc:
            diff, problem = None, f"{diff_path}: not UTF-8 text (byte {exc.start})"
        runs.append({"instance_id": str(instance_id), "run_id": run_id, "diff": diff,
                     **({"grading_error": problem} if problem else {}),
                     "model": str(meta.get("model_name_or_path") or meta.get("model") or "")
                     or None,
                     "base_commit": str(meta.get("base_commit") or "") or None,
                     "where": meta_path or diff_path})
    if not runs:
        raise InputError(f"{path}: no run subfolders with a diff file")
    return runs


def load_agent_runs(spec, inputs):
    """Runs from agent output: the diffs and run ids the audits derive from it too."""
    derived = agent_output(inputs, spec)
    if not derived["predictions"]:
        raise InputError(f"{spec}: {', '.join(derived['formats'])} output carries no diff "
                         f"(the transcripts record tool calls, not the change); give regrade.py "
                         f"a predictions file with model_patch instead")
    return [{"instance_id": p["instance_id"], "run_id": p["run_id"], "diff": p["model_patch"],
             "model": p["model_name_or_path"], "base_commit": None,
             "where": f"{spec} (run {p['run_id']})"} for p in derived["predictions"]]


def load_runs(spec, instances, instances_path, inputs, invalid=None):
    """The runs to grade: a predictions file, a runs folder, or the built-in gold / empty.

    `invalid` maps instance ids whose row is malformed to why: their runs are errors.
    """
    invalid = invalid or {}
    if spec in ("gold", "empty"):
        runs = []
        for instance_id in sorted(invalid):
            runs.append({"instance_id": instance_id, "run_id": f"{instance_id}@{spec}",
                         "diff": None, "model": spec, "base_commit": None,
                         "where": f"{instances_path} ({spec})"})
        for instance_id in sorted(instances):
            patch = instances[instance_id]["patch"] if spec == "gold" else ""
            if spec == "gold" and not patch:
                raise InputError(f"{instances[instance_id]['where']}: no patch (the gold fix) "
                                 f"for the gold run set")
            runs.append({"instance_id": instance_id, "run_id": f"{instance_id}@{spec}",
                         "diff": patch, "model": spec, "base_commit": None,
                         "where": f"{instances_path} ({spec})"})
    elif agent_output(inputs, spec) is not None:
        runs = load_agent_runs(spec, inputs)
    elif os.path.isdir(spec):
        runs = load_runs_folder(spec, inputs)
    elif os.path.isfile(spec):
        runs = load_predictions(spec, instances, inputs)
    else:
        raise InputError(f"{spec}: no such file or folder (nor 'gold' or 'empty')")
    seen, checked = set(), []
    for run in runs:
        for field in ("run_id", "instance_id", "model"):
            if isinstance(run.get(field), str) and lone_surrogate(run[field]):
                raise InputError(f"{run['where']}: {field} is not UTF-8 text: "
                                 f"{lone_surrogate(run[field])}")
        if run["run_id"] in seen:
            raise InputError(f"{run['where']}: run id {run['run_id']!r} appears twice")
        seen.add(run["run_id"])
        checked.append(checked_run(run, instances, instances_path, invalid))
    return checked


def checked_run(run, instances, instances_path, invalid):
    """A loaded run as grading starts from it, as a new record (a run is never rewritten in
    place): why it cannot be graded (grading_error), else its base commit, the instance's
    when the run names none."""
    if run.get("grading_error"):
        return dict(run)
    problem = diff_problem(run["diff"])
    if problem:
        return dict(run, grading_error=f"{run['where']}: {problem}")
    if run["instance_id"] in invalid:
        return dict(run, grading_error=f"the instance's row is malformed: "
                                       f"{invalid[run['instance_id']]}")
    if run["instance_id"] not in instances:
        # Graded as an error verdict; the other runs are still graded.
        return dict(run, grading_error=f"instance {run['instance_id']!r} is not in "
                                       f"{instances_path}")
    return dict(run, base_commit=run["base_commit"] or
                instances[run["instance_id"]]["base_commit"])


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


def check_out(args):
    """Refuse an --out that is an input or lies inside an input folder, before anything is
    written: a --repo clone (never changed), a runs folder, the instances, predictions,
    FIXES or --task-map file. A bundle is a file: --out may not name it."""
    if not args.out:
        return
    fallback, named = parse_repo_options(args.repo)
    inputs = [("--repo", path) for path in [fallback, *named.values()] if path]
    inputs += [(what, path) for what, path in (
        ("the instances file", args.instances), ("the runs", args.runs),
        ("the FIXES file", args.make_instances), ("--task-map", args.task_map)) if path]
    for what, path in inputs:
        if not os.path.exists(path):
            continue            # gold, empty, or a path the reader will report
        where = input_overlap(args.out, path)
        if where:
            kind = "folder" if os.path.isdir(path) else "file"
            raise InputError(f"--out {args.out}: {where} {what} {path} (an input {kind}, which "
                             f"regrade.py never changes); choose a folder of its own")


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


def pytest_needed(instances, runner, test_cmd, *, ids_known=True):
    """Whether grading these instances may run pytest, so the interpreter and the sandbox
    probe must import it: runner_for() before any checkout, for each instance with no test
    command of its own or from --test-cmd (ids_known=False: their ids are found later)."""
    return any(runner_for(instance, runner, instance["FAIL_TO_PASS"] + instance["PASS_TO_PASS"]
                          if ids_known else None) == "pytest"
               and not (instance["test_cmd"] or test_cmd) for instance in instances)


def check_test_commands(instances, runner, test_cmd):
    """Check --test-cmd and every instance's test_cmd before any run is graded."""
    for instance in instances.values():
        chosen = runner_for(instance, runner, instance["FAIL_TO_PASS"] + instance["PASS_TO_PASS"])
        if instance["test_cmd"]:
            check_test_command(instance["test_cmd"], chosen, f"{instance['where']}: test_cmd")
        elif test_cmd is not None:
            check_test_command(test_cmd, chosen, "--test-cmd")


# Each option that can change a verdict, as the resume key names it.
KEY_OPTIONS = ("runner", "test_cmd", "select", "timeout", "repeat", "p2p_skip_ok",
               "test_patterns", "env", "keep_env", "fuzz")


def short_hash(value):
    """The first 16 hex digits of the SHA-256 of a value's JSON."""
    return sha256_text(json.dumps(value, sort_keys=True, default=sorted))[:16]


def grading_inputs(run, instance, settings):
    """Everything that can change a run's verdict, each part hashed by name: the instance
    row, the diff (normalised: normalised_run), the base commit, the grader, each option, the sandbox level and the
    test interpreter (path, version, installed distributions)."""
    interpreter = settings.get("interpreter") or {}
    parts = {
        "instance": short_hash({k: v for k, v in instance.items() if k != "where"}),
        "diff": short_hash(run["normalised_diff"]),
        "base_commit": short_hash(run["base_commit"]),
        "grader": short_hash([settings["grader_version"], settings.get("grader_sha256")]),
        "isolation": short_hash(settings.get("isolation", "none")),
        "python": short_hash([settings.get("python"), interpreter.get("version")]),
        "distributions": short_hash(settings.get("distributions")),
    }
    parts.update({f"--{name.replace('_', '-')}": short_hash(settings.get(name))
                  for name in KEY_OPTIONS})
    return parts


def grading_key(run, instance, settings):
    """SHA-256 of everything that decides a verdict: resume skips a run only when it matches."""
    return sha256_text(json.dumps(grading_inputs(run, instance, settings), sort_keys=True))


def keyed_run(run, instance, settings):
    """A run's record with its texts normalised (normalised_run), its resume key and the parts
    the key hashes, as a new record; a run whose instance is not in INSTANCES (None) is
    keyed by its raw diff and the grader."""
    run = normalised_run(run, instance)
    if instance is None:
        return dict(run, key_parts=None, key=sha256_text(json.dumps(
            [run["instance_id"], run["diff"], settings["grader_version"]])))
    return dict(run, key_parts=grading_inputs(run, instance, settings),
                key=grading_key(run, instance, settings))


def regrade_reason(stored, run, force):
    """Why a run with a stored verdict is graded again: the parts of its inputs that changed.

    >>> regrade_reason({"key_parts": {"diff": "a", "--timeout": "b"}}, \
            {"key_parts": {"diff": "a", "--timeout": "c"}}, False)
    '--timeout changed'
    """
    if force:
        return "--force"
    before, now = stored.get("key_parts"), run.get("key_parts")
    if not isinstance(before, dict) or not now:
        return "graded by a grader that did not record its inputs"
    changed = sorted(name for name in set(before) | set(now) if before.get(name) != now.get(name))
    return f"{', '.join(changed)} changed" if changed else "inputs changed"


def interpreter_distributions(executable):
    """The test interpreter's installed distributions, [[name, version], ...], sorted."""
    probe = ("import json\ntry:\n    from importlib import metadata\n"
             "    found = {((d.metadata['Name'] or '').lower(), d.version or '')\n"
             "             for d in metadata.distributions()}\nexcept Exception:\n"
             "    found = set()\nprint(json.dumps(sorted(found)))")
    try:
        done = subprocess.run([executable, "-c", probe], stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=120)
        return json.loads(done.stdout.decode("utf-8", "replace"))
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None


def interpreter_facts(python, executable):
    """The test interpreter as given and its version, and its pytest's version (None without)."""
    probe = ("import sys\ntry:\n    import pytest\n    v = pytest.__version__\n"
             "except Exception:\n    v = ''\nprint(sys.version.split()[0], v)")
    try:
        done = subprocess.run([executable, "-c", probe], stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=120)
        words = done.stdout.decode("utf-8", "replace").split()
    except (OSError, subprocess.TimeoutExpired):
        words = []
    # By name only: a folder (a venv under a home folder) is a path of this machine.
    return {"python": os.path.basename(python) or python, "version": words[0] if words else None,
            "pytest_version": words[1] if len(words) > 1 else None}


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


# === Large jobs ===
# Schedulers (Slurm, Kubernetes, GNU parallel) preempt a job with SIGTERM and
# then SIGKILL, rerun the same task, and point many tasks at one results folder.
# Every folder the grader makes under the temporary root is named after its
# owner; a signal stops the job cleanly; a lock file in --out lets any number of
# processes append to and compact one verdicts.jsonl (see "Large jobs").
OWNER_KINDS = ("session", "run", "probe", "part")
OWNED_FOLDER = re.compile(r"regrade-(" + "|".join(OWNER_KINDS) + r")\.([A-Za-z0-9-]+)\."
                          r"(\d+)\.(\d+)\.([0-9a-f]+)\.")
SIGNAL_STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
LOCK_NAME = ".verdicts.lock"
# A child (git, patch, the tests) that died of one of the job's stop signals may have
# got it before the grader's handler ran (Ctrl-C reaches the whole process group; a
# scheduler signals every process of the job): wait this long for the handler.
STOP_GRACE_S = 5.0


class JobStopped(Exception):
    """The job ended early (a signal, a folder that cannot be written): one line, a status."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def process_stat(pid):
    """A process's state letter and start time in clock ticks since boot (/proc/PID/stat
    fields 3 and 22), or (None, None) where /proc does not say.

    With the boot id the start time tells a live owner from a new process that got
    the same PID; state Z is a process that has ended and waits to be reaped.
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            text = handle.read().decode("ascii", "replace")
    except OSError:
        return None, None
    fields = text[text.rfind(")") + 2:].split()     # the name in (...) may hold spaces
    if len(fields) < 20 or not fields[19].isdigit():
        return None, None
    return fields[0], int(fields[19])


def process_start_time(pid):
    """A process's start time (/proc/PID/stat field 22), or None."""
    return process_stat(pid)[1]


def boot_id():
    """This boot's id (8 hex digits), or '0' where the system does not say."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
            return re.sub(r"[^0-9a-f]", "", handle.read().lower())[:8] or "0"
    except OSError:
        return "0"


def host_label():
    """This machine's name as it goes in a folder name (letters, digits, dashes)."""
    return re.sub(r"[^A-Za-z0-9-]", "-", platform.node())[:40] or "host"


def owner_prefix(kind, pid=None):
    """The name prefix of a folder this process owns: kind, host, PID, start time, boot.

    >>> bool(OWNED_FOLDER.match(owner_prefix("run") + "abc123"))
    True
    """
    pid = os.getpid() if pid is None else pid
    return f"regrade-{kind}.{host_label()}.{pid}.{process_start_time(pid) or 0}.{boot_id()}."


def owned_folder(kind, folder=None):
    """A new private folder named after its owner (this process), in `folder` or TMPDIR."""
    return tempfile.mkdtemp(prefix=owner_prefix(kind), dir=folder)


def kept_folder(folder):
    """A run's folder kept with --keep-trees, renamed out of sweep_leftovers' reach
    (regrade-kept-run...: it names no owner), so a later job does not remove it once
    this one has ended; returns its new path (its old one where the rename fails)."""
    head, name = os.path.split(folder)
    kept = os.path.join(head, "regrade-kept-" + name[len("regrade-"):])
    try:
        os.rename(folder, kept)
    except OSError:
        return folder
    return kept


def owner_alive(host, pid, start, boot):
    """Whether the process named in a folder's name may still run (True when in doubt).

    Another host's folder is never judged; a folder of an earlier boot is gone; on
    this boot the PID must exist and, where /proc says, have the same start time.
    """
    if host != host_label():
        return True
    if boot != "0" and boot_id() != "0" and boot != boot_id():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass                # another user's process: it exists
    state, now = process_stat(pid)
    if state in ("Z", "X"):
        return False
    return not (start and now is not None and now != start)


def sweep_leftovers(root=None):
    """Remove the folders under the temporary root whose owner is gone; return how many.

    Only this user's folders named by owner_prefix are looked at; a folder whose
    owner may be alive, or that names no owner, is never touched.
    """
    root = root or tempfile.gettempdir()
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return 0
    removed = 0
    for name in names:
        match = OWNED_FOLDER.match(name)
        path = os.path.join(root, name)
        try:
            mine = os.lstat(path).st_uid == os.geteuid() and os.path.isdir(path) and \
                not os.path.islink(path)
        except OSError:
            continue
        if not match or not mine or owner_alive(match.group(2), int(match.group(3)),
                                                int(match.group(4)), match.group(5)):
            continue
        remove_folder(path)
        removed += not os.path.lexists(path)
    return removed


def part_prefix():
    """The name prefix of this process's temporary files in --out (.tmp-regrade-part.HOST...)."""
    return ".tmp-" + owner_prefix("part")


def sweep_parts(folder):
    """Remove the unfinished .tmp-*.part files in --out (and its logs/ and reports/) whose
    writer is gone; return how many. A file of a live writer, of another host or of a
    name without an owner is never touched."""
    removed = 0
    for sub in ("", "logs", "reports"):
        where = os.path.join(folder, sub)
        try:
            names = sorted(os.listdir(where))
        except OSError:
            continue
        for name in names:
            match = OWNED_FOLDER.match(name[len(".tmp-"):]) if name.startswith(".tmp-") and \
                name.endswith(".part") else None
            path = os.path.join(where, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if not match or not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or \
                    owner_alive(match.group(2), int(match.group(3)), int(match.group(4)),
                                match.group(5)):
                continue
            try:
                os.remove(path)
                removed += 1
            except OSError:
                pass
    return removed


def sweep_temporary(out):
    """At start: remove what processes that are gone left in TMPDIR and --out; say how many."""
    removed = sweep_leftovers()
    if removed:
        sys.stderr.write(f"removed {removed} folder{'' if removed == 1 else 's'} left in "
                         f"{tempfile.gettempdir()} by regrade.py processes that are gone\n")
    if out:
        sweep_out(out)


def sweep_out(folder):
    """At start: remove what processes that are gone left in --out, and say how many."""
    removed = sweep_parts(folder)
    if removed:
        sys.stderr.write(f"removed {removed} unfinished file{'' if removed == 1 else 's'} "
                         f"(.tmp-*.part) left in {folder} by regrade.py processes that are gone\n")


def job_stopping(returncode):
    """Whether a child that failed (its return code) failed because this job is stopping.

    The job's own signal may reach git, patch or the tests before the grader's handler
    runs; a step it broke says nothing of the run (Interrupted: no verdict, redone on
    resume). Only a child killed by a stop signal waits (STOP_GRACE_S) for the handler.
    """
    if returncode == 0:
        return False
    if returncode is not None and -returncode in SIGNAL_STATUS:
        _STOPPING.wait(STOP_GRACE_S)
    return _STOPPING.is_set()


# --- signals ---
# SIGINT, SIGTERM and SIGHUP stop the job the same way: no run starts, the running
# tests' process groups are killed (bwrap dies with them), the runs they cut short
# get no verdict, every decided verdict is already on disk, the folders go.
_SIGNALLED = []


def on_stop_signal(signum, frame):
    """The first signal stops the job cleanly; a second one ends the process at once."""
    _SIGNALLED.append(signum)
    _STOPPING.set()
    # No lock here: the main thread may hold it when the signal arrives.
    for pid in list(_LIVE_GROUPS):
        kill_group(pid)
    if len(_SIGNALLED) > 1:
        os._exit(SIGNAL_STATUS.get(signum, 128 + signum))


class StopSignals:
    """While grading: SIGINT, SIGTERM and SIGHUP stop the job cleanly; SIGXFSZ is ignored,
    so that a file-size limit is a write error the grader reports, not a silent death."""

    def __enter__(self):
        _STOPPING.clear()
        del _SIGNALLED[:]
        self.saved = {}
        if threading.current_thread() is threading.main_thread():
            for signum in (*SIGNAL_STATUS, signal.SIGXFSZ):
                self.saved[signum] = signal.signal(
                    signum, signal.SIG_IGN if signum == signal.SIGXFSZ else on_stop_signal)
        return self

    def __exit__(self, *exc):
        for signum, handler in self.saved.items():
            signal.signal(signum, handler)

    @staticmethod
    def received():
        """The first signal received, or None."""
        return _SIGNALLED[0] if _SIGNALLED else None


def stopped_line(signum, graded, left, out, making=False):
    """The one line a stopped job ends with: what is left undone and how to resume.

    >>> stopped_line(signal.SIGTERM, 3, 4, "out")
    'interrupted by SIGTERM: 3 runs graded and on disk in out/verdicts.jsonl, 4 left ungraded; rerun the same command to grade only those'
    >>> stopped_line(signal.SIGINT, 1, 2, "made", making=True)
    'interrupted by SIGINT: 1 fix made and on disk in made/made.jsonl, 2 left unmade; rerun the same command to make only those'
    """
    name = signal.Signals(signum).name
    unit, done, undone, verb, file = (("fix", "made", "unmade", "make", "made.jsonl") if making
                                      else ("run", "graded", "ungraded", "grade",
                                            "verdicts.jsonl"))
    units = plural(graded, unit, unit + "es" if making else None)
    if out is None:
        return (f"interrupted by {name}: {units} {done}, "
                f"{left} left {undone}; nothing was written (no --out): rerun the command, "
                f"with --out DIR to make it resumable")
    return (f"interrupted by {name}: {units} {done} and on "
            f"disk in {os.path.join(out, file)}, {left} left {undone}; rerun the "
            f"same command to {verb} only those")


def starting_line(signum):
    """The line of a job stopped while it started (reading inputs, probing, opening the repository).

    >>> starting_line(signal.SIGHUP)
    'interrupted by SIGHUP while starting: no run began; rerun the same command'
    """
    return f"interrupted by {signal.Signals(signum).name} while starting: no run began; rerun the same command"


# --- record files in --out, shared by many processes: one store, RecordFile ---
# Every append-only file regrade keeps in --out (verdicts.jsonl, made.jsonl, instances.jsonl,
# rejected.jsonl, self_check.jsonl, and --summarize's merged verdicts.jsonl) is a RecordFile:
# appended under FolderLock, whole and fsynced, a cut last line repaired, rewritten whole.
# Every other file in --out is written whole by write_out. JSONL inputs (INSTANCES, RUNS,
# --summarize FILE...) are read by the shared block's read_jsonl_records.
def write_all(handle, data):
    """Write every byte of `data` to a file descriptor: a short write goes on from where it
    stopped, a write that makes no progress or fails raises OSError."""
    view = memoryview(data)
    while view:
        written = os.write(handle, view)
        if written <= 0:
            raise OSError(errno.EIO, "a write made no progress")
        view = view[written:]


def whole_lines(data):
    """The bytes of a verdicts file up to its last newline: a cut last line is no verdict.

    >>> whole_lines(b'{"a": 1}\\n{"b"')
    b'{"a": 1}\\n'
    """
    return data[:data.rfind(b"\n") + 1]


def record_lines(data, key):
    """Each key's latest record from a record file's whole lines, {record[key]: record}.

    >>> record_lines(b'{"k": 1, "v": 1}\\n{"k": 1, "v": 2}\\n{"k": 2', "k")
    {1: {'k': 1, 'v': 2}}
    """
    records = {}
    for line in whole_lines(data).decode("utf-8", "replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and key in record:
            records[record[key]] = record
    return records


def record_line(record):
    """A record as one line of a record file (its keys sorted, so equal records are equal bytes)."""
    return json.dumps(jsonable(record), ensure_ascii=False, sort_keys=True) + "\n"


class FolderLock:
    """An exclusive lock on --out (a POSIX lock on its .verdicts.lock, which NFS honours),
    held for each append and each rewrite; threads of one process take turns first."""

    def __init__(self, folder):
        self.path = os.path.join(folder, LOCK_NAME)
        self.threads = threading.Lock()

    def __enter__(self):
        self.threads.acquire()
        try:
            self.handle = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.lockf(self.handle, fcntl.LOCK_EX)
        except BaseException:
            if getattr(self, "handle", None) is not None:
                os.close(self.handle)
            self.handle = None
            self.threads.release()
            raise
        return self

    def __exit__(self, *exc):
        try:
            os.close(self.handle)         # closing releases the lock
        finally:
            self.handle = None
            self.threads.release()


def repair_tail(handle):
    """Cut a last line a dead writer left unfinished (under the lock no live one is writing),
    so that the next line does not glue onto it; return the file's size after."""
    size = os.fstat(handle).st_size
    if size and os.pread(handle, 1, size - 1) != b"\n":
        keep = size
        while keep > 0:
            start = max(0, keep - 65536)
            chunk = os.pread(handle, keep - start, start)
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                keep = start + newline + 1
                break
            keep = start
        os.ftruncate(handle, keep)
        size = keep
    return size


class RecordFile:
    """One append-only record file in --out (verdicts.jsonl, made.jsonl, instances.jsonl, ...),
    shared by every process writing into the folder; the one writer of all of them.

    Each record is one line appended under the folder's lock, written whole (a short
    write goes on where it stopped) and fsynced before it counts; a line a writer that
    died cut short is cut off first; a failed write takes its part line back. At the
    end the file is rewritten whole under the lock, each key once (rewrite).
    """

    def __init__(self, folder, name, key, lock):
        self.folder, self.name, self.key, self.lock = folder, name, key, lock
        self.path = os.path.join(folder, name)

    def read(self, repair=False):
        """The file's bytes (under the lock); with repair, a cut last line is cut off first."""
        try:
            handle = os.open(self.path, os.O_RDWR if repair else os.O_RDONLY)
        except FileNotFoundError:
            return b""
        try:
            if repair:
                repair_tail(handle)
            chunks = []
            while True:
                chunk = os.read(handle, 1 << 20)
                if not chunk:
                    return b"".join(chunks)
                chunks.append(chunk)
        finally:
            os.close(handle)

    def records(self, repair=False):
        """{key: latest record} of the whole lines on disk (call under the lock)."""
        return record_lines(self.read(repair=repair), self.key)

    def append(self, record):
        """Append one record whole, fsynced, or nothing at all (raises OSError)."""
        data = record_line(record).encode("utf-8")
        with self.lock:
            handle = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                size = repair_tail(handle)
                try:
                    write_all(handle, data)
                    os.fsync(handle)
                except OSError:
                    try:
                        os.ftruncate(handle, size)    # no cut line is left behind
                    except OSError:
                        pass
                    raise
            finally:
                os.close(handle)

    def rewrite(self, records):
        """Replace the file by these records, one line each (call under the lock)."""
        write_out(self.path, "".join(record_line(r) for r in records))


def write_out(path, text):
    """Write a file in --out atomically, as write_atomic does, through a temporary file named
    after its owner (part_prefix), so that one a killed writer left is removed at the next
    start (sweep_parts). A failure leaves nothing behind and raises InputError."""
    temp = None
    try:
        handle, temp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)),
                                        prefix=part_prefix(), suffix=".part")
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
        os.chmod(temp, 0o666 & ~current_umask())
        os.replace(temp, path)
    except OSError as exc:
        if temp is not None and os.path.exists(temp):
            os.remove(temp)
        raise InputError(f"{path}: cannot write ({exc.strerror or exc})") from None


def write_failure(folder, exc, safe, left, making=False):
    """The one line for a --out that cannot be written (a full disk, a quota, a size limit)."""
    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    if isinstance(exc, InputError):         # a log or report: keep why, not the file's name
        why = re.sub(r"^.*: cannot write \((.*)\)$", r"\1", why)
    unit, units, file, undone, verb = (("fix", "fixes", "made.jsonl", "unmade", "make")
                                       if making else ("verdict", "verdicts", "verdicts.jsonl",
                                                       "ungraded", "grade"))
    return (f"--out {folder}: cannot write ({why}): {safe} "
            f"{unit + ' is' if safe == 1 else units + ' are'} safe in {os.path.join(folder, file)} "
            f"(whole lines on disk), {left} left {undone}; free space and rerun the same command "
            f"to {verb} only those")


# === Report ===
# Shared files (verdicts.jsonl and .csv, swebench_summary.json, made instances and
# self-check verdicts) are attached and merged by others: they name no host and no
# absolute path outside --out. The logs may (see "Outputs").
SHARED_TEXT_FIELDS = ("reason", "notes", "environment", "code_under_test")
# A private path is replaced where it starts, never inside a path already shown relative
# ("../../tmp/x" holds "/tmp/x", which must not become "../..../../tmp/x").
NOT_INSIDE_A_PATH = r"(?<![\w.~-])"
PRIVATE_OWNER = re.compile(r"(regrade-(?:" + "|".join(OWNER_KINDS) + r")\.)[A-Za-z0-9-]+\.")


def private_paths(paths, scratch=None):
    """What a shared file may not name, each with what it says instead, longest first: the
    session folder, TMPDIR, each input as given (relative), the current folder (paths
    below it become relative) and the home folder (~)."""
    pairs = [(scratch, "<session folder>")] if scratch else []
    for path in paths:
        if path and path not in ("-", "gold", "empty") and os.path.exists(path):
            shown = relative_path(path)
            pairs += [(os.path.abspath(path), shown), (os.path.realpath(path), shown)]
    temp, home = tempfile.gettempdir(), os.path.expanduser("~")
    pairs += [(temp, "$TMPDIR"), (os.path.realpath(temp), "$TMPDIR"),
              (os.getcwd() + os.sep, ""), (os.path.realpath(os.getcwd()) + os.sep, "")]
    if home not in ("", "~", os.sep):
        pairs.append((home, "~"))
    unique = {old: new for old, new in pairs if old and old != os.sep}
    return sorted(unique.items(), key=lambda pair: -len(pair[0]))


def shareable(value, pairs):
    """A verdict or record with every private path in its text replaced (pairs: (old, new),
    longest first) and no host name left in a folder name.

    >>> shareable({"reason": "/t/x/a.py failed", "n": [1, "/t/x"]}, [("/t/x/", ""), ("/t/x", "<tree>")])
    {'reason': 'a.py failed', 'n': [1, '<tree>']}
    >>> shareable("/tmp/r", [("/tmp/r", "../../tmp/r"), ("/tmp", "$TMPDIR")])
    '../../tmp/r'
    >>> shareable("../../tmp/r", [("/tmp/r", "../../tmp/r"), ("/tmp", "$TMPDIR")])
    '../../tmp/r'
    """
    if isinstance(value, str):
        if pairs:       # in one pass: a replacement is never itself replaced
            olds = dict(pairs)
            value = re.sub(NOT_INSIDE_A_PATH + "(?:" + "|".join(re.escape(old) for old, _ in pairs)
                           + ")", lambda match: olds[match.group(0)], value)
        return PRIVATE_OWNER.sub(r"\1host.", value) if "regrade-" in value else value
    if isinstance(value, dict):
        return {key: shareable(item, pairs) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [shareable(item, pairs) for item in value]
    return value


def shareable_verdict(verdict, pairs):
    """A verdict whose free text (reason, notes, environment, code_under_test) names nothing
    private; test ids are data, never rewritten (a test may be named test_x[/tmp])."""
    return dict(verdict, **{field: shareable(verdict[field], pairs)
                            for field in SHARED_TEXT_FIELDS if field in verdict})


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
    """verdicts.jsonl in --out DIR, shared by every process grading into DIR (a RecordFile).

    Each verdict is one line appended under the folder's lock and fsynced before
    the run counts as graded; a line a dead writer cut short is dropped. At the end
    the file is rewritten from what is on disk (every process's lines), each run
    once, its latest verdict, together with verdicts.csv and swebench_summary.json.
    """

    def __init__(self, folder, inputs):
        self.folder = folder
        try:
            for sub in ("", "logs", "reports"):
                os.makedirs(os.path.join(folder, sub), exist_ok=True)
        except OSError as exc:
            raise InputError(f"--out {folder}: cannot create ({exc.strerror or exc})") from None
        for name in ("verdicts.jsonl", "verdicts.csv", "swebench_summary.json"):
            inputs.guard_output(os.path.join(folder, name))
        self.lock = FolderLock(folder)
        self.file = RecordFile(folder, "verdicts.jsonl", "run_id", self.lock)
        self.path = self.file.path
        try:
            with self.lock:
                self.previous = self.file.records(repair=True)
        except OSError as exc:
            raise InputError(f"--out {folder}: cannot lock or read verdicts.jsonl "
                             f"({exc.strerror or exc})") from None

    def graded(self, run):
        """The earlier verdict of this run with the same inputs, or None."""
        verdict = self.previous.get(run["run_id"])
        return verdict if verdict and verdict.get("key") == run["key"] else None

    def add(self, verdict, log_text):
        """Write the run's files, then append its verdict line whole (or not at all).

        Raises OSError (or InputError from a log) when --out cannot be written.
        """
        name = safe_name(verdict["run_id"])
        write_out(os.path.join(self.folder, "logs", name + ".log"), log_text)
        write_out(os.path.join(self.folder, "reports", name + ".json"),
                  to_json(swebench_report(verdict)))
        self.file.append(verdict)
        self.previous[verdict["run_id"]] = verdict

    def safe_count(self):
        """How many runs have a whole verdict line on disk (this process's and others')."""
        try:
            with self.lock:
                return len(self.file.records())
        except OSError:
            return len(self.previous)

    def compact(self, instance_ids):
        """Rewrite verdicts.jsonl from what is on disk, each run once, its latest verdict, by
        run id, and verdicts.csv and swebench_summary.json from it; False where the folder
        cannot be written (the appended file stands: a reader takes each run's last line)."""
        try:
            with self.lock:
                self.previous = self.file.records(repair=True)
                stored = sorted(self.previous.values(), key=lambda v: v["run_id"])
                self.file.rewrite(stored)
                write_out(os.path.join(self.folder, "verdicts.csv"), verdicts_csv(stored))
                write_out(os.path.join(self.folder, "swebench_summary.json"),
                          to_json(swebench_summary(stored, instance_ids)))
        except (OSError, InputError):
            return False
        return True


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
    # A timeout is the run's failure (settle: completed false), so unresolved here as in
    # verdicts.csv: an audit reading either file counts the same runs as failed.
    errors = {ident(v) for v in graded if v["status"] in GRADING_ERRORS}
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
            "completed_means": "graded (SWE-bench's key): resolved or unresolved, neither an "
                               "empty patch nor an error; verdicts.csv's completed means "
                               "resolved",
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
        "environment": environment_summary(verdicts),
        "seconds_total": round(total, 3), "seconds_tests": round(tests, 3),
        "overhead_per_run_s": round((total - tests) / len(verdicts), 3) if verdicts else None,
        "isolation": isolation_counts(verdicts),
        "work_trees": dict(sorted(collections.Counter(
            v["work_tree"] for v in verdicts if v.get("work_tree")).items())),
    }


def isolation_counts(verdicts):
    """Runs per isolation, best first; verdicts from before --sandbox count as 'not recorded'.

    >>> isolation_counts([{"isolation": "none"}, {"isolation": "bwrap"}, {}])
    {'bwrap': 1, 'none': 1, 'not recorded': 1}
    """
    counts = {}
    for verdict in verdicts:
        name = verdict.get("isolation") or "not recorded"
        counts[name] = counts.get(name, 0) + 1
    order = list(ISOLATIONS) + ["not recorded"]
    return {k: counts[k] for k in sorted(counts, key=lambda k: (
        order.index(k) if k in order else len(order), k))}


def isolation_lines(counts):
    """The summary's sentences on the sandbox: what each isolation used contains.

    >>> for line in isolation_lines({"bwrap": 2, "none": 1, "not recorded": 1}): print(line[:60])
    sandbox: 2 runs under bwrap (no network, the system read-onl
    sandbox: 1 run under none (the code under test runs with you
    sandbox: 1 run whose isolation was not recorded (graded befo
    """
    return [f"sandbox: {n} run{'' if n == 1 else 's'} under {name} ({ISOLATION_MEANS[name]})"
            if name in ISOLATION_MEANS else
            f"sandbox: {n} run{'' if n == 1 else 's'} whose isolation was not recorded "
            f"(graded before --sandbox existed)" for name, n in counts.items()]


def environment_summary(verdicts):
    """The distinct environments that decided the verdicts: interpreters, pytest, repositories.

    >>> environment_summary([{"environment": {"python": "py", "python_version": "3.9.1",
    ...     "pytest_version": "8.0", "repository": {"path": "r.bundle", "kind": "bundle",
    ...     "sha256": "ab"}, "grader_sha256": "cd"}}, {"environment": None}])["python"]
    ['py (3.9.1)']
    """
    pythons, pytests, repositories, graders = set(), set(), {}, set()
    for verdict in verdicts:
        environment = verdict.get("environment") or {}
        if environment.get("python"):
            pythons.add(f"{environment['python']} ({environment.get('python_version') or '?'})")
        if environment.get("pytest_version"):
            pytests.add(environment["pytest_version"])
        repository = environment.get("repository")
        if repository:
            repositories[json.dumps(repository, sort_keys=True)] = repository
        if environment.get("grader_sha256"):
            graders.add(environment["grader_sha256"])
    return {"python": sorted(pythons), "pytest": sorted(pytests),
            "repositories": [repositories[k] for k in sorted(repositories)],
            "grader_sha256": sorted(graders)}


def environment_lines(environment):
    """The summary's environment lines, one fact each, from environment_summary()."""
    lines = []
    if environment["python"]:
        lines.append(f"test interpreter: {', '.join(environment['python'])}; pytest "
                     f"{', '.join(environment['pytest']) or 'did not run'}")
    for repository in environment["repositories"]:
        found = {True: ", every base commit found", False: ", some base commits missing"}.get(
            repository.get("base_commits_found"), "")
        identity = {"bundle": f": sha256 {repository.get('sha256')}",
                    "clone": f": HEAD {repository.get('head') or 'none'}"}.get(
                        repository.get("kind"), "")
        lines.append(f"repository {relative_path(repository.get('path') or '')} "
                     f"({repository.get('kind') or 'unopened'}"
                     f"{found}){identity}")
    for digest in environment["grader_sha256"]:
        lines.append(f"grader: regrade.py sha256 {digest}")
    return lines


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
    # GitHub comments turn a line break into a break: Markdown lines are not wrapped.
    wrap = (lambda text: text) if style == "markdown" else wrapped
    heading = (f"regrade: {summary['runs']} run{'' if summary['runs'] == 1 else 's'}, "
               f"{summary['resolved']} resolved, {summary['grading_errors']} grading "
               f"error{'' if summary['grading_errors'] == 1 else 's'}")
    lines.append(f"## {heading}" if style == "markdown" else heading)
    if skipped:
        lines.append(f"({skipped} already graded with the same inputs, taken from verdicts.jsonl;"
                     f" --force regrades)")
    reuse = summary.get("reuse") or {}
    if reuse.get("regraded"):
        lines.append(wrap(f"({reuse['regraded']} graded again, their stored verdicts graded "
                          f"under other inputs: " + "; ".join(
                              f"{why}: {n}" for why, n in reuse["regraded_because"].items())
                          + ")"))
    lines.append("")
    rows = [[s, str(summary["statuses"][s])] for s in STATUSES if summary["statuses"][s]]
    rows += [[f"resolution {k}", str(v)] for k, v in summary["resolutions"].items()]
    lines.append(render_table(["status", "runs"], rows, style))
    lines.append("")
    # Which patch method applied, and which runs touched tests, are listed
    # below the table, so it stays within 100 columns.
    headers = ["run", "instance", "status", "resolution", "FAIL_TO_PASS", "PASS_TO_PASS"]
    rows = []
    for v in sorted(verdicts, key=lambda v: v["run_id"]):
        rows.append([v["run_id"], v["instance_id"], v["status"], v["resolution"],
                     share(v["fail_to_pass"], bool(v["tests_status"])),
                     share(v["pass_to_pass"], bool(v["tests_status"]))])
    table = render_table(headers, rows, style)
    if style == "text" and max(len(l) for l in table.splitlines()) > 100:
        table = render_table(["run", "status", "resolution", "F2P", "P2P"],
                             [r[:1] + r[2:] for r in rows], style)
        table += "\n" + wrapped("(to fit 100 columns the instance column is left out and "
                                "F2P, P2P stand for FAIL_TO_PASS, PASS_TO_PASS; verdicts.jsonl "
                                "and --format json name each run's instance)")
    lines.append(table)
    if timings and verdicts:
        # A table of its own, so neither table outgrows 100 columns.
        lines.append("")
        lines.append(render_table(
            ["run", "tests s", "all s", "grader s"],
            [[v["run_id"], fmt(v["test_s"], 2), fmt(v["duration_s"], 2),
              fmt(v["duration_s"] - v["test_s"], 2)]
             for v in sorted(verdicts, key=lambda v: v["run_id"])], style))
    reasons = [(v["run_id"], v["reason"]) for v in sorted(verdicts, key=lambda v: v["run_id"])
               if v["reason"]]
    # In Markdown a bold line heads each list, so GitHub renders the reasons and
    # the closing lines as two lists, not one.
    if reasons:
        lines.append("")
        # In Markdown a heading keeps this list apart from the closing one.
        lines += ["### Why not resolved", ""] if style == "markdown" else ["why not resolved:"]
        lines += [wrap(f"- {run_id}: {reason}") for run_id, reason in reasons]
    lines.append("")
    if style == "markdown":
        lines += ["### Checks", ""]
    # In Markdown each closing line is a list item, so they do not run together.
    item = "- " if style == "markdown" else ""
    lines += [wrap(item + line) for line in check_lines(summary, verdicts, timings)]
    environment = environment_lines(summary.get("environment") or environment_summary(verdicts))
    if environment:
        lines.append("")
        if style == "markdown":
            lines += ["### Environment", ""]
        lines += [wrap(f"{item}{line}") for line in environment]
    lines.append("")
    lines.append(render_provenance(prov, style))
    return "\n".join(lines) + "\n"


def check_lines(summary, verdicts, timings):
    """The closing checks: tests touched, flaky, fallbacks, logs, isolation, time, trees."""
    fallbacks = [f"{v['run_id']} ({v['applied_with']})"
                 for v in sorted(verdicts, key=lambda v: v["run_id"])
                 if v["applied_with"] not in (None, "git apply", "empty")]
    lines = [f"runs that touched tests (reset before grading): "
             f"{', '.join(summary['touched_tests']) or 'none'}",
             f"runs with flaky tests: {', '.join(summary['flaky']) or 'none'}",
             f"diffs applied only by a fallback: {', '.join(fallbacks) or 'none'}"]
    if summary["from_log"]:
        lines.append(f"results read from logs, not structured records: "
                     f"{', '.join(summary['from_log'])}")
    lines += isolation_lines(summary["isolation"])
    lines.append("'completed' in verdicts.csv means resolved; completed_instances "
                 "(SWE-bench's key) means graded")
    if timings and verdicts:
        lines.append(f"time: {fmt(summary['seconds_total'], 2)} s in all, "
                     f"{fmt(summary['seconds_tests'], 2)} s in test commands; grader overhead "
                     f"{fmt(summary['overhead_per_run_s'], 3)} s per run")
        trees = summary.get("work_trees") or {}
        if trees:
            lines.append("runs per work tree: " + ", ".join(
                f"{how} {count}" for how, count in trees.items()))
    return lines


class Progress:
    """Runs done / total, resolved so far, elapsed and time left, on stderr."""

    def __init__(self, total, enabled):
        self.total, self.enabled, self.done, self.resolved = total, enabled, 0, 0
        self.started = time.monotonic()

    def update(self, verdict):
        self.done += 1
        self.resolved += verdict["status"] == "resolved"
        if not self.enabled:
            return
        sys.stderr.write(self.line(verdict, time.monotonic() - self.started) + "\n")
        sys.stderr.flush()

    def line(self, verdict, elapsed):
        """One progress line per run: the run, its status and seconds, then the counts.

        >>> p = Progress(4, False); p.done, p.resolved = 1, 1
        >>> p.line({"run_id": "r1", "status": "resolved", "duration_s": 2.5}, 3.0)
        '[1/4] r1: resolved in 2.5 s (1 resolved so far, elapsed 3 s, about 9 s left)'
        """
        left = elapsed / self.done * (self.total - self.done)
        return (f"[{self.done}/{self.total}] {verdict['run_id']}: {verdict['status']} in "
                f"{verdict.get('duration_s') or 0:.1f} s ({self.resolved} resolved so far, "
                f"elapsed {elapsed:.0f} s, about {left:.0f} s left)")


# === Making instances ===
# --make-instances turns a repository's own merged fixes into SWE-style
# instances. It is regrading pointed the other way: each fix's test files run K
# times before the fix (base + test patch) and K times after it (base + patch +
# test patch), each run a grade_run of its own (its own checkout, the sandbox,
# the recorders), and the lists are what stayed the same in every run.
INSTANCES_MANUAL = """
Making instances (--make-instances FIXES --repo [OWNER/NAME=]PATH --out DIR)
    Builds SWE-bench instances from a repository's own merged fixes, with
    FAIL_TO_PASS and PASS_TO_PASS derived by running the tests, offline.
    FIXES      a text file, one fix per line: any revision git understands, then
               optionally the instance id (default owner__name-<first 8 of the
               sha>, or name-<...> when --repo names no owner/name) and the
               fields problem=FILE (the problem statement, a file relative to
               FIXES; default: the commit message) and version=V (default
               empty); `#` starts a comment. A line A..B stands for every
               commit of `git rev-list --first-parent A..B` that changes both
               test files and other files (a merge commit stands for what it
               merged).
    Per fix: base = its first parent (a merge commit's too); the diff base..fix
    (git diff --no-renames --binary --full-index) is split by file:
        test_patch  test files: a path part test, tests or testing, or a name
                    test_*.py, *_test.py or conftest.py (--test-files GLOB,
                    repeatable, replaces this rule: a path matching any glob,
                    or whose name does)
        left out    documentation and changelogs: a path part doc, docs,
                    changes, changelog.d, newsfragments or news, a name
                    starting with CHANGES, CHANGELOG, HISTORY, NEWS, AUTHORS
                    or RELEASE, or a .rst, .md or .txt file outside the test
                    files (requirements*.txt stays code); each is listed in
                    the instance's validation.left_out
        patch       the rest (the gold fix)
    The runs: the test modules the test patch touches (files named test_*.py,
    *_test.py or tests.py, or matching --test-files, that exist after the fix;
    never the whole suite) run K times (--repeat K, default 3 here) at base +
    test_patch and K times at base + patch + test_patch, each in its own
    checkout under the sandbox, with the runner regrading uses (--runner auto:
    django or sympy for those repositories, else pytest, which also runs
    unittest tests; --runner unittest loads the test modules with unittest;
    --runner log with a --test-cmd holding {files}). Django runs the test
    patch's labels and SymPy its test files, as SWE-bench does.
    Lists (a test id is spelled as SWE-bench's log parser reads it from the
    same run, so the harness can grade the instance: pytest's node id;
    unittest's module.Class.test_x; Django's `test_x (module.Class.test_x)`
    where the tests ran on Python 3.11+ and `test_x (module.Class)` before
    (unittest's str(test)), or the first line of the test's docstring where it
    has one (the line Django's verbose runner ends with ' ... ok'); SymPy's
    bare test_x. An id naming several tests, a docstring line two tests share
    or a name two run files define, counts as one, as grading reads it: their
    worst outcome when they agree; where one passed and another did not in
    any run, the id is in neither list (validation.excluded.ambiguous)):
        FAIL_TO_PASS  not passed in any before-run (a test that does not
                      exist or does not collect in a run counts as failing
                      there) and passed in every after-run
        PASS_TO_PASS  passed in every before-run and every after-run
        flaky         its outcome (passed, failing, skipped) changed
                      between the repeats of one side: in neither list, listed
                      in validation.flaky
        skipped       skipped or xfail in an after-run: in neither list
                      (validation.excluded.skipped)
    validation.excluded also lists the tests the fix breaks (passed before, not
    after) and those failing on both sides, so every test that ran is accounted
    for; validation.python_version is the interpreter the runs reported, which
    decided Django's spelling. A run that timed out is left out of its side (validation.timed_out).
    Rejected, with the reason (DIR/rejected.jsonl, counted in the report):
        a diff that is not UTF-8; no test file touched; only tests changed;
        the test patch does not apply; the patch does not apply; every run
        timed out; the runner could not collect (no test recorded on a side);
        a grading error (say wrong_code_under_test); no FAIL_TO_PASS test; the
        self-check failed. A commit with no parent, or a revision git cannot
        resolve, is rejected too.
    Self-check, at the end: each made instance, read back as regrade.py reads
    instances, is graded with its gold patch (must be resolved) and with no
    change (must be unresolved), --select ids; an instance failing either is
    moved to rejected with the reason. So a fix costs 2K + 2 runs.
    Outputs in DIR, each one regrade.py reads back:
        instances.jsonl  SWE-bench's schema: instance_id, repo, base_commit,
                         patch, test_patch, FAIL_TO_PASS and PASS_TO_PASS (JSON
                         strings), created_at (the fix's committer date, UTC),
                         problem_statement, version, environment_setup_commit
                         (= base_commit), plus test_runner, test_cmd, test_env
                         (--env) and validation (K, the interpreter and its
                         version, isolation, flaky, excluded, left_out, each
                         run's status and reason, the self-check's statuses,
                         the fix); no seconds, so a fix made again, resumed or
                         in another shard gives the same bytes
        rejected.jsonl   the same fields where known, and `rejected` (the
                         reason); FAIL_TO_PASS may be empty, so it is not an
                         INSTANCES file: it is the audit of what was dropped
        self_check.jsonl the self-check's verdicts (run ids ID/gold and
                         ID/empty): regrade.py --summarize self_check.jsonl
        made.jsonl       every fix's result with its key and each run's seconds
                         and work tree (resume; shared by shards): a rerun
                         redoes only the fixes whose inputs changed (sha, diff,
                         id, problem statement, options, interpreter, isolation,
                         grader); --force redoes all
        logs/ID.SIDE.N.log  each run's commands and test output
    --shard K/N makes only the fixes whose sha falls in shard K (by hash, as for
    runs); --jobs N makes N fixes at once. Shards may share one --out (see
    "Large jobs": each process as it ends writes every fix made so far, in FIXES
    order), or each have its own, merged with cat:
        cat out/shard-*/instances.jsonl > instances.jsonl
    Signals, kill -9 and a full disk are handled as in grading ("Large jobs").
    The report (--format text, markdown or json) lists each fix with its
    FAIL_TO_PASS, PASS_TO_PASS and flaky counts and seconds, then the rejected
    with their reasons and the count per reason, then the self-check's counts
    and the provenance footer.
    To make instances from three fixes of a clone, then grade the made ones:
        printf '%s\\n' 1a2b3c4d 5e6f7a8b 9c0d1e2f > fixes.txt
        python3 regrade.py --make-instances fixes.txt --repo pallets/click=../click \\
            --python ../venv/bin/python --out made/
        python3 regrade.py made/instances.jsonl gold --repo pallets/click=../click \\
            --python ../venv/bin/python --out gold/
"""
DEFAULT_MAKE_REPEAT = 3
# Files a fix carries that are neither code nor tests: left out of the patch.
DOC_DIRS = ("doc", "docs", "changes", "changelog.d", "newsfragments", "news")
DOC_PREFIXES = ("changes", "changelog", "history", "news", "authors", "release")
DOC_SUFFIXES = (".rst", ".md", ".txt")
INSTANCE_TEST_DIRS = ("test", "tests", "testing")
INSTANCE_TEST_NAMES = ("test_*.py", "*_test.py", "conftest.py")
TEST_MODULE_NAMES = ("test_*.py", "*_test.py", "tests.py")
# What --make-instances prints per reason it can reject a fix for, in report order.
REJECTIONS = ("not UTF-8", "no test file touched", "only tests changed",
              "test patch does not apply", "patch does not apply", "every run timed out",
              "runner could not collect", "grading error", "no FAIL_TO_PASS test",
              "self-check failed", "not a commit")


def is_instance_test_file(path, patterns=None):
    """The test-file rule of --make-instances (the issue's, SWE-bench's in spirit).

    >>> [is_instance_test_file(p) for p in ("tests/a.json", "pkg/test/helper.py",
    ...  "src/conftest.py", "pkg/x_test.py", "pkg/testing.py", "src/core.py")]
    [True, True, True, True, False, False]
    >>> is_instance_test_file("spec/a.rb", ["spec/*"]), is_instance_test_file("t/x.py", ["x.py"])
    (True, True)
    """
    name = path.rsplit("/", 1)[-1]
    if patterns:
        return any(fnmatch.fnmatchcase(path, g) or fnmatch.fnmatchcase(name, g) for g in patterns)
    return any(part in INSTANCE_TEST_DIRS for part in path.split("/")[:-1]) or \
        any(fnmatch.fnmatchcase(name, g) for g in INSTANCE_TEST_NAMES)


def is_doc_file(path):
    """Documentation or a changelog, left out of the patch (checked after the test rule).

    >>> [is_doc_file(p) for p in ("docs/api.rst", "CHANGES.rst", "README.md", "changelog.d/1.x",
    ...  "requirements.txt", "src/click/core.py", "HISTORY", "setup.cfg")]
    [True, True, True, True, False, False, True, False]
    """
    parts = path.split("/")
    name = parts[-1].lower()
    if any(part.lower() in DOC_DIRS for part in parts[:-1]):
        return True
    if name.startswith(DOC_PREFIXES):
        return True
    return name.endswith(DOC_SUFFIXES) and not name.startswith("requirements")


def is_test_module(path, patterns=None):
    """A touched test file the runs execute: a test module, not a helper, fixture or conftest."""
    name = path.rsplit("/", 1)[-1]
    if not name.endswith(".py") or name == "conftest.py":
        return False
    if patterns:
        return is_instance_test_file(path, patterns)
    return any(fnmatch.fnmatchcase(name, g) for g in TEST_MODULE_NAMES)


def parse_fixes(text, where):
    """FIXES lines as [{rev, instance_id, problem, version, line}]; InputError on a bad field.

    >>> parse_fixes("abc # the first\\n\\nv1..v2\\ndef my-id problem=p.txt version=1.0\\n", "F")
    ... # doctest: +NORMALIZE_WHITESPACE
    [{'rev': 'abc', 'instance_id': None, 'problem': None, 'version': '', 'line': 1},
     {'rev': 'v1..v2', 'instance_id': None, 'problem': None, 'version': '', 'line': 3},
     {'rev': 'def', 'instance_id': 'my-id', 'problem': 'p.txt', 'version': '1.0', 'line': 4}]
    """
    entries = []
    for number, raw in enumerate(text.splitlines(), 1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        entry = {"rev": words[0], "instance_id": None, "problem": None, "version": "",
                 "line": number}
        for word in words[1:]:
            key, sep, value = word.partition("=")
            if sep and key in ("problem", "version", "id") and value:
                entry["instance_id" if key == "id" else key] = value
            elif not sep and entry["instance_id"] is None:
                entry["instance_id"] = word
            else:
                raise InputError(f"{where} line {number}: unexpected field {word!r} (expected "
                                 f"REV [ID] [problem=FILE] [version=V])")
        if entry["rev"].startswith("-"):
            raise InputError(f"{where} line {number}: {entry['rev']!r} is not a revision")
        if entry["instance_id"] is not None and not re.fullmatch(r"[\w.+-]+", entry["instance_id"]):
            raise InputError(f"{where} line {number}: instance id {entry['instance_id']!r} may "
                             f"hold only letters, digits and . _ + -")
        entries.append(entry)
    return entries


def git_bytes(git_dir, args):
    """Run git on the clone's git directory, read-only; (status, stdout bytes)."""
    try:
        done = subprocess.run(["git", *GIT_OPTIONS, "--git-dir", git_dir, *args], env=GIT_ENV,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    except OSError as exc:
        raise InputError(f"cannot run git ({exc.strerror or exc})") from None
    if done.returncode != 0 and job_stopping(done.returncode):
        raise Interrupted()         # not "not a commit": the job's signal killed git
    return done.returncode, done.stdout


def git_text(git_dir, args):
    """git's output as text, or None when it fails."""
    status, output = git_bytes(git_dir, args)
    return output.decode("utf-8", "replace") if status == 0 else None


DIFF_OPTIONS = ("diff", "--no-color", "--no-ext-diff", "--no-renames", "--binary",
                "--full-index", "--src-prefix=a/", "--dst-prefix=b/", "--no-relative")


def split_diff(raw):
    """A git diff (bytes) split into one chunk per file: [(path, bytes)], in diff order.

    >>> split_diff(b"diff --git a/x b/x\\n+1\\ndiff --git a/y z/y\\n+2\\n")
    [('x', b'diff --git a/x b/x\\n+1\\n'), ('y', b'diff --git a/y z/y\\n+2\\n')]
    """
    chunks, starts = [], [m.start() for m in re.finditer(rb"(?m)^diff --git ", raw)]
    for at, end in zip(starts, starts[1:] + [len(raw)]):
        chunk = raw[at:end]
        header = chunk.split(b"\n", 1)[0].decode("utf-8", "replace")
        paths = diff_paths(header + "\n")
        chunks.append((paths[-1] if paths else header[len("diff --git "):], chunk))
    return chunks


def split_fix(chunks, patterns=None):
    """Chunks into (test_patch, patch, left_out, test paths, problem) where problem names a
    file whose diff is not UTF-8 (or is None)."""
    tests, code, left_out, test_paths = [], [], [], []
    for path, chunk in chunks:
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError:
            return "", "", [], [], f"the diff is not UTF-8 (in {path})"
        if is_instance_test_file(path, patterns):
            tests.append(text)
            test_paths.append(path)
        elif is_doc_file(path):
            left_out.append(path)
        else:
            code.append(text)
    return "".join(tests), "".join(code), left_out, test_paths, None


def scan_range(git_dir, rev_range, patterns=None):
    """The commits of A..B (first parents only, oldest first) that change tests and code."""
    listing = git_text(git_dir, ["rev-list", "--first-parent", "--reverse", rev_range, "--"])
    if listing is None:
        raise InputError(f"FIXES range {rev_range}: git cannot list it")
    found = []
    for commit in listing.split():
        names = git_text(git_dir, ["diff", "--name-only", "--no-renames", "-z",
                                   f"{commit}^1", commit, "--"])
        if names is None:
            continue
        paths = [p for p in names.split("\0") if p]
        if any(is_instance_test_file(p, patterns) for p in paths) and \
                any(not is_instance_test_file(p, patterns) and not is_doc_file(p) for p in paths):
            found.append(commit)
    return found


def expand_fixes(entries, git_dir, patterns=None):
    """FIXES entries with ranges expanded into one entry per commit, each resolved once."""
    expanded = []
    for entry in entries:
        if ".." in entry["rev"] and "..." not in entry["rev"]:
            for commit in scan_range(git_dir, entry["rev"], patterns):
                expanded.append(dict(entry, rev=commit, instance_id=None, scanned=entry["rev"]))
        else:
            expanded.append(entry)
    seen, unique = set(), []
    for entry in expanded:
        full = git_text(git_dir, ["rev-parse", "--verify", "-q", entry["rev"] + "^{commit}"])
        entry["sha"] = full.strip() if full else None
        if entry["sha"] is None or entry["sha"] not in seen:
            unique.append(entry)
            seen.add(entry["sha"])
    return unique


def default_instance_id(repo, sha):
    """owner__name-<first 8 of the sha>, as SWE-bench spells ids.

    >>> default_instance_id("pallets/click", "0123456789abcdef")
    'pallets__click-01234567'
    """
    return f"{repo.replace('/', '__')}-{sha[:8]}"


def fix_runner(runner, repo, git_dir, sha):
    """The runner for a fix's runs: --runner, else django/sympy by name or layout, else pytest."""
    if runner != "auto":
        return runner
    if repo in REPO_RUNNERS:
        return REPO_RUNNERS[repo]
    listed = git_text(git_dir, ["ls-tree", "--name-only", sha, "--", "tests/runtests.py",
                                "django", "bin/test", "sympy"]) or ""
    names = set(listed.split())
    if {"tests/runtests.py", "django"} <= names:
        return "django"
    if {"bin/test", "sympy"} <= names:
        return "sympy"
    return "pytest"


def prepare_fix(entry, git_dir, repo, context):
    """A fix's inputs read from git: base, patch, test patch, runs' files; or its rejection.

    Returns a plain dict; `rejected` holds the reason when the fix cannot be made.
    """
    sha = entry["sha"]
    fix = {"rev": entry["rev"], "sha": sha, "instance_id": entry["instance_id"],
           "repo": repo, "version": entry["version"], "base_commit": None, "patch": "",
           "test_patch": "", "left_out": [], "run_files": [], "rejected": None,
           "problem_statement": "", "created_at": None, "runner": None}
    if sha is None:
        fix.update(instance_id=fix["instance_id"] or entry["rev"],
                   rejected=f"not a commit: git cannot resolve {entry['rev']!r}")
        return fix
    fix["instance_id"] = fix["instance_id"] or default_instance_id(repo, sha)
    parents = (git_text(git_dir, ["rev-list", "--parents", "-n", "1", sha]) or "").split()
    if len(parents) < 2:
        fix["rejected"] = "not a commit with a parent: a root commit has no base"
        return fix
    fix["base_commit"] = parents[1]            # the first parent, a merge commit's too
    stamp = git_text(git_dir, ["show", "-s", "--format=%ct", sha]) or "0"
    fix["created_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(stamp.strip())))
    fix["problem_statement"] = problem_statement(entry, git_dir, context)
    status, raw = git_bytes(git_dir, [*DIFF_OPTIONS, fix["base_commit"], sha, "--"])
    if status != 0:
        fix["rejected"] = "not a commit: git cannot diff it against its first parent"
        return fix
    test_patch, patch, left_out, test_paths, problem = split_fix(split_diff(raw),
                                                                 context["patterns"])
    fix.update(test_patch=test_patch, patch=patch, left_out=left_out)
    present = set((git_text(git_dir, ["ls-tree", "-r", "--name-only", sha, "--", *test_paths])
                   or "").splitlines()) if test_paths else set()
    fix["run_files"] = [p for p in test_paths if p in present and
                        is_test_module(p, context["patterns"])]
    fix["runner"] = fix_runner(context["runner"], repo, git_dir, sha)
    if problem:
        fix["rejected"] = problem
    elif not test_patch:
        fix["rejected"] = "no test file touched"
    elif not patch:
        fix["rejected"] = "only tests changed" + (" (and documentation)" if left_out else "")
    elif not fix["run_files"] and fix["runner"] not in PROJECT_RUNNERS:
        fix["rejected"] = ("no test file touched: the test patch changes no test module "
                           "(only " + ", ".join(test_paths[:3]) + ")")
    return fix


def problem_statement(entry, git_dir, context):
    """The fix's problem statement: the file its line names (relative to FIXES), else the
    commit message."""
    if entry["problem"]:
        path = os.path.join(context["fixes_dir"], entry["problem"])
        return context["inputs"].read_text(path)
    return (git_text(git_dir, ["show", "-s", "--format=%B", entry["sha"]]) or "").strip() + "\n"


AMBIGUOUS = "ambiguous"      # an id naming tests that disagree in a run: in neither list


def django_spelling(test_id, doc, python_version):
    """SWE-bench's Django id for a recorded test: what its log parser reads before ' ... ok'.

    Django's verbose runner prints str(test), `test_x (module.Class.test_x)` on Python
    3.11+ and `test_x (module.Class)` before, and on the next line (the one holding
    the outcome) the first line of the test's docstring where it has one.

    >>> django_spelling("m.C.test_a", None, "3.11.7"), django_spelling("m.C.test_a", "", "3.9.18")
    ('test_a (m.C.test_a)', 'test_a (m.C)')
    >>> django_spelling("m.C.test_a", "Say A.", "3.12.1")
    'Say A.'
    """
    if doc:
        return doc
    owner, _, name = test_id.rpartition(".")
    if not owner:
        return test_id
    version = tuple(int(p) for p in re.findall(r"\d+", python_version or "")[:2])
    return f"{name} ({owner}.{name})" if version >= (3, 11) else f"{name} ({owner})"


def spelled_ids(outcomes, runner, descriptions=None, python_version=None):
    """One run's recorded outcomes keyed by SWE-bench's spelling of each id.

    Django: django_spelling (the docstring line where the test has one); SymPy: the
    bare name. Tests that one spelling names together (two docstrings alike, a name
    two files define) count as one, as grading reads that id: their worst outcome
    when they agree (AMBIGUOUS when one passes and another does not).

    >>> spelled_ids({"m.C.test_a": "passed", "m.C.test_b": "failed"}, "django",
    ...             {"m.C.test_b": "Say B."}, "3.9.18")
    {'test_a (m.C)': 'passed', 'Say B.': 'failed'}
    >>> sorted(spelled_ids({"a/t.py::test_x": "passed", "b/t.py::test_x": "failed",
    ...                     "a/t.py::test_y": "error", "b/t.py::test_y": "failed"},
    ...                    "sympy").items())
    [('test_x', 'ambiguous'), ('test_y', 'error')]
    """
    if runner == "django":
        descriptions = descriptions or {}
        names = {t: django_spelling(t, descriptions.get(t), python_version) for t in outcomes}
    elif runner == "sympy":
        names = {t: t.rsplit("::", 1)[-1] for t in outcomes}
    else:
        return dict(outcomes)
    seen = {}
    for test_id in sorted(outcomes):
        seen.setdefault(names[test_id], []).append(outcomes[test_id])
    spelled = {}
    for name, found in seen.items():
        if len({outcome_group(o) for o in found}) > 1:
            spelled[name] = AMBIGUOUS
        else:
            spelled[name] = max(found, key=lambda o: OUTCOME_RANK.get(o, 0))
    return spelled


def derive_lists(before, after):
    """FAIL_TO_PASS, PASS_TO_PASS, flaky and the other exclusions from each run's outcomes.

    `before` and `after` are lists of {test id: outcome}, one per run that
    finished; a test absent from a run did not run there (it did not exist, or
    its file did not collect), which counts as failing.

    >>> lists = derive_lists([{"a": "failed", "b": "passed", "c": "passed", "e": "passed"},
    ...                       {"b": "passed", "c": "failed", "e": "passed"}],
    ...                      [{"a": "passed", "b": "passed", "c": "passed", "d": "skipped",
    ...                        "e": "failed"}] * 2)
    >>> lists["FAIL_TO_PASS"], lists["PASS_TO_PASS"], lists["flaky"]
    (['a'], ['b'], ['c'])
    >>> lists["excluded"]
    {'skipped': ['d'], 'broken_by_fix': ['e'], 'failing_after': [], 'ambiguous': []}
    """
    lists = {"FAIL_TO_PASS": [], "PASS_TO_PASS": [], "flaky": [],
             "excluded": {"skipped": [], "broken_by_fix": [], "failing_after": [],
                          "ambiguous": []}}
    ids = sorted(set().union(*before, *after))
    for test_id in ids:
        if any(run.get(test_id) == AMBIGUOUS for run in before + after):
            lists["excluded"]["ambiguous"].append(test_id)
            continue
        # A test that did not run in a run (absent, or its file did not collect) failed there.
        seen_before = [run.get(test_id) or "failed" for run in before]
        seen_after = [run.get(test_id) or "failed" for run in after]
        if is_flaky(seen_before) or is_flaky(seen_after):
            lists["flaky"].append(test_id)
        elif any(o in SKIPPING for o in seen_after):
            lists["excluded"]["skipped"].append(test_id)
        elif all(o == "passed" for o in seen_after):
            passed_before = [o == "passed" for o in seen_before]
            if all(passed_before):
                lists["PASS_TO_PASS"].append(test_id)
            elif not any(passed_before):
                lists["FAIL_TO_PASS"].append(test_id)
        elif seen_before and all(o == "passed" for o in seen_before):
            lists["excluded"]["broken_by_fix"].append(test_id)
        else:
            lists["excluded"]["failing_after"].append(test_id)
    return lists


def fix_key(fix, context):
    """SHA-256 of everything that decides a fix's instance: a rerun redoes only what changed."""
    material = {"sha": fix["sha"], "base": fix["base_commit"], "id": fix["instance_id"],
                "repo": fix["repo"], "version": fix["version"], "runner": fix["runner"],
                "problem": sha256_text(fix["problem_statement"]),
                "patch": sha256_text(fix["patch"]), "test_patch": sha256_text(fix["test_patch"]),
                "run_files": fix["run_files"], "rejected": fix["rejected"],
                "options": {k: context["settings"].get(k) for k in (
                    "test_cmd", "env", "python", "timeout", "test_patterns", "fuzz", "isolation",
                    "grader_version")},
                "repeat": context["repeat"], "select": context["select"],
                "python_version": (context["settings"].get("interpreter") or {}).get("version")}
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode("utf-8")).hexdigest()


def run_side(fix, side, attempt, context):
    """One run of a fix's test files, before or after it, in its own checkout: a summary."""
    settings = dict(context["settings"], repeat=1, select="files", observe_all=True)
    instance = {"instance_id": fix["instance_id"], "repo": fix["repo"],
                "base_commit": fix["base_commit"], "test_patch": fix["test_patch"],
                "patch": fix["patch"], "FAIL_TO_PASS": [], "PASS_TO_PASS": [],
                "test_cmd": context["settings"]["test_cmd"], "test_runner": fix["runner"],
                "test_env": {}, "where": fix["instance_id"], "no_runner": None, "notes": [],
                "run_files": fix["run_files"]}
    run = normalised_run({
        "run_id": f"{fix['instance_id']}.{side}.{attempt}", "instance_id": fix["instance_id"],
        "base_commit": fix["base_commit"], "diff": fix["patch"] if side == "after" else "",
        "key": "", "model": None}, instance)
    verdict, log_text = grade_run(run, instance, context["source"], settings, context["session"])
    context["write_log"](f"{run['run_id']}.log", log_text)
    outcomes = (verdict.get("all_outcomes") or [None])[0]
    python_version = (verdict.get("environment") or {}).get("python_version")
    return {"status": verdict["status"], "reason": verdict["reason"], "test_s": verdict["test_s"],
            "duration_s": verdict["duration_s"], "work_tree": verdict["work_tree"],
            "outcomes": None if outcomes is None else spelled_ids(
                outcomes, fix["runner"], (verdict.get("all_descriptions") or [None])[0],
                python_version),
            "python_version": python_version}


def side_problem(side, runs):
    """Why one side's runs cannot decide the lists (a rejection reason), or None."""
    for run in runs:
        if run["status"] == "test_patch_failed":
            return "the test patch does not apply" + (" after the patch" if side == "after"
                                                      else "") + f": {run['reason']}"
        if run["status"] == "patch_failed":
            return f"the patch does not apply: {run['reason']}"
        if run["status"] == "wrong_code_under_test":
            return f"grading error: {run['reason']}"
    if all(run["status"] == "timeout" for run in runs):
        return f"every run timed out ({side} the fix; --timeout)"
    if side == "after" and not any(run["outcomes"] for run in runs if run["status"] != "timeout"):
        reasons = [run["reason"] for run in runs if run["reason"]]
        return "the runner could not collect: no test recorded after the fix" + \
            (f" ({reasons[0][:200]})" if reasons else "")
    return None


def make_fix(fix, context):
    """Run a fix's before- and after-runs and derive its lists: (instance row, rejection,
    each run's seconds and work tree). The row holds what decided it, never how long it
    took, so that the same fix gives the same bytes however the job was split or resumed."""
    repeat = context["repeat"]
    runs = {side: [run_side(fix, side, k, context) for k in range(1, repeat + 1)]
            for side in ("before", "after")}
    row = instance_row(fix, context)
    row["validation"]["runs"] = {side: [{k: run[k] for k in ("status", "reason")}
                                        for run in runs[side]] for side in runs}
    timings = {side: [{k: run[k] for k in ("test_s", "duration_s", "work_tree")}
                      for run in runs[side]] for side in runs}
    versions = [r["python_version"] for side in runs.values() for r in side if r["python_version"]]
    row["validation"]["python_version"] = versions[0] if versions else \
        row["validation"]["python_version"]
    for side in ("before", "after"):
        problem = side_problem(side, runs[side])
        if problem:
            return row, problem, timings
    finished = {side: [run["outcomes"] or {} for run in runs[side] if run["status"] != "timeout"]
                for side in runs}
    lists = derive_lists(finished["before"], finished["after"])
    row.update(FAIL_TO_PASS=json.dumps(lists["FAIL_TO_PASS"]),
               PASS_TO_PASS=json.dumps(lists["PASS_TO_PASS"]))
    row["validation"].update(flaky=lists["flaky"], excluded=lists["excluded"], timed_out={
        side: sum(run["status"] == "timeout" for run in runs[side]) for side in runs})
    if not lists["FAIL_TO_PASS"]:
        return (row, "no FAIL_TO_PASS test: no test failed before the fix and passed after it",
                timings)
    return row, None, timings


def instance_row(fix, context):
    """The instance in SWE-bench's schema, lists empty until the runs decide them."""
    settings = context["settings"]
    interpreter = settings.get("interpreter") or {}
    return {
        "instance_id": fix["instance_id"], "repo": fix["repo"],
        "base_commit": fix["base_commit"], "patch": fix["patch"],
        "test_patch": fix["test_patch"], "FAIL_TO_PASS": "[]", "PASS_TO_PASS": "[]",
        "created_at": fix["created_at"], "problem_statement": fix["problem_statement"],
        "version": fix["version"], "environment_setup_commit": fix["base_commit"],
        "hints_text": "", "test_runner": fix["runner"], "test_cmd": settings["test_cmd"],
        "test_env": dict(settings["env"]),
        "validation": {"K": context["repeat"], "python": interpreter.get("python"),
                       "python_version": interpreter.get("version"),
                       "isolation": settings.get("isolation"), "fix_commit": fix["sha"],
                       "fix_rev": fix["rev"], "run_files": fix["run_files"],
                       "left_out": fix["left_out"], "flaky": [], "excluded": {},
                       "timed_out": {}, "runs": {}, "self_check": {},
                       "grader_version": settings["grader_version"]},
    }


def self_check(row, context):
    """Grade a made instance, read back as regrade.py reads one, with gold and with nothing.

    Returns (the two verdicts, a rejection reason or None).
    """
    instance = parse_instance(json.loads(json.dumps(row)), row["instance_id"])
    settings = dict(context["settings"], repeat=1, select=context["select"])
    verdicts = {}
    for name, diff in (("gold", instance["patch"]), ("empty", "")):
        run = normalised_run({"run_id": f"{row['instance_id']}/{name}",
                              "instance_id": row["instance_id"],
                              "base_commit": row["base_commit"], "diff": diff, "model": name},
                             instance)
        run = dict(run, key=grading_key(run, instance, settings))
        verdict, log_text = grade_run(run, instance, context["source"], settings,
                                      context["session"])
        context["write_log"](f"{row['instance_id']}.{name}.log", log_text)
        verdicts[name] = verdict
    row["validation"]["self_check"] = {name: v["status"] for name, v in verdicts.items()}
    gold, empty = verdicts["gold"], verdicts["empty"]
    if gold["status"] != "resolved":
        return verdicts, (f"self-check failed: gold is {gold['status']}, not resolved"
                          f" ({gold['reason'][:200]})")
    if empty["status"] != "unresolved":
        return verdicts, f"self-check failed: the empty run is {empty['status']}, not unresolved"
    return verdicts, None


def rejection_kind(reason):
    """The report's name for a rejection reason (the REJECTIONS it starts like).

    >>> rejection_kind("the patch does not apply: x"), rejection_kind("only tests changed")
    ('patch does not apply', 'only tests changed')
    """
    for kind in REJECTIONS:
        if kind in reason:
            return kind
    return "grading error"


def make_one(fix, context):
    """A fix start to end: its result record for made.jsonl (instance or rejection)."""
    if _STOPPING.is_set():
        raise Interrupted()         # no fix starts once the job is stopping
    started = time.monotonic()
    row, reason, verdicts, timings = instance_row(fix, context), fix["rejected"], {}, {}
    if reason is None:
        row, reason, timings = make_fix(fix, context)
    if reason is None:
        verdicts, reason = self_check(row, context)
    return {"key": fix["key"], "instance_id": fix["instance_id"], "sha": fix["sha"],
            "row": row, "rejected": reason, "seconds": round(time.monotonic() - started, 3),
            "self_check": list(verdicts.values()), "runs": timings}


class MadeStore:
    """DIR/made.jsonl and the files made from it, shared by every process making into DIR.

    Each fix's result is appended to made.jsonl (a RecordFile, as verdicts are) before
    its progress line, then its instance, rejection and self-check verdicts to their
    files; as each process ends it rewrites all four under the lock from made.jsonl:
    the fixes of FIXES, in its order, each once. So the last process to end leaves
    every fix once, and shards on one --out give what one process gives.
    """

    def __init__(self, folder, inputs, force):
        self.folder = folder
        try:
            os.makedirs(os.path.join(folder, "logs"), exist_ok=True)
        except OSError as exc:
            raise InputError(f"--out {folder}: cannot create ({exc.strerror or exc})") from None
        for name in ("instances.jsonl", "rejected.jsonl", "self_check.jsonl", "made.jsonl"):
            inputs.guard_output(os.path.join(folder, name))
        self.lock = FolderLock(folder)
        self.made = RecordFile(folder, "made.jsonl", "key", self.lock)
        self.instances = RecordFile(folder, "instances.jsonl", "instance_id", self.lock)
        self.rejected = RecordFile(folder, "rejected.jsonl", "instance_id", self.lock)
        self.checks = RecordFile(folder, "self_check.jsonl", "run_id", self.lock)
        try:
            with self.lock:
                for file in (self.instances, self.rejected, self.checks):
                    file.read(repair=True)
                self.previous = {} if force else self.made.records(repair=True)
        except OSError as exc:
            raise InputError(f"--out {folder}: cannot lock or read made.jsonl "
                             f"({exc.strerror or exc})") from None

    def add(self, record):
        """Append a fix's result, then its instance or rejection and its self-check verdicts.

        Raises OSError when --out cannot be written (nothing half-written is left)."""
        self.made.append(record)
        if record["rejected"]:
            self.rejected.append(dict(record["row"], rejected=record["rejected"]))
        else:
            self.instances.append(record["row"])
        for verdict in record["self_check"]:
            self.checks.append(verdict)

    def safe_count(self):
        """How many fixes have a whole line in made.jsonl (this process's and others')."""
        try:
            with self.lock:
                return len(self.made.records())
        except OSError:
            return len(self.previous)

    def write_log(self, name, text):
        write_out(os.path.join(self.folder, "logs", safe_name(name)), text)

    def finish(self, keys):
        """Rewrite instances.jsonl, rejected.jsonl and self_check.jsonl from made.jsonl (every
        process's lines): the fixes whose keys are given, in that order; made.jsonl once per
        key. Returns the results of those keys on disk."""
        with self.lock:
            stored = self.made.records(repair=True)
            results = [stored[k] for k in dict.fromkeys(keys) if k in stored]
            self.instances.rewrite(r["row"] for r in results if not r["rejected"])
            self.rejected.rewrite(dict(r["row"], rejected=r["rejected"])
                                  for r in results if r["rejected"])
            self.checks.rewrite(sorted((v for r in results for v in r["self_check"]),
                                       key=lambda v: v["run_id"]))
            self.made.rewrite(sorted(stored.values(), key=lambda r: (r["instance_id"], r["key"])))
        return results


def make_context(args, argv, inputs):
    """Settings of the runs (as regrading's), the session, the repository and the options of
    --make-instances."""
    fallback, named = parse_repo_options(args.repo)
    if len(named) + (fallback is not None) != 1:
        raise InputError("--make-instances takes one --repo [OWNER/NAME=]PATH")
    repo, path = next(iter(named.items())) if named else (None, fallback)
    if args.runner == "log" and not (args.test_cmd and "{files}" in args.test_cmd):
        raise InputError("--make-instances --runner log needs a --test-cmd holding {files}")
    settings = new_settings(args, repeat=1)
    if args.test_cmd:
        check_test_command(args.test_cmd, args.runner, "--test-cmd")
    # Django's and SymPy's own runners need no pytest; a tree laid out like theirs under
    # another name is found per fix, and a missing pytest then rejects its fixes.
    needs_pytest = pytest_needed([{"repo": repo, "test_runner": None, "test_cmd": None}],
                                 args.runner, args.test_cmd, ids_known=False)
    check_interpreter(settings, args.python, needs_pytest)
    session = Session(settings, args, argv, inputs, needs_pytest=needs_pytest, jobs=args.jobs,
                      private=[args.make_instances])
    return {"settings": settings, "session": session, "repo_name": repo, "repo_path": path,
            "repeat": args.repeat if args.repeat is not None else DEFAULT_MAKE_REPEAT,
            "select": args.select, "runner": args.runner, "inputs": inputs,
            "patterns": tuple(args.test_files) if args.test_files else None,
            "fixes_dir": os.path.dirname(os.path.abspath(args.make_instances))}


def repo_name_of(source, given):
    """owner/name: as --repo gave it, else from the clone's origin URL, else its folder's name."""
    if given:
        return given
    url = git_text(source.git_dir, ["config", "--get", "remote.origin.url"]) or ""
    match = re.search(r"[/:]([\w.-]+)/([\w.-]+?)(?:\.git)?/?$", url.strip())
    if match and "github" in url or match and "gitlab" in url:
        return f"{match.group(1)}/{match.group(2)}"
    name = os.path.basename(os.path.normpath(source.label))
    return re.sub(r"\.(git|bundle)$", "", name)


def make_instances(args, argv):
    """--make-instances: prepare every fix, make what is not made yet, self-check, report."""
    inputs = Inputs()
    if not args.out:
        raise InputError("--make-instances needs --out DIR (instances.jsonl and the rest go there)")
    if args.repeat is not None and args.repeat < 1 or args.jobs < 1:
        raise InputError("--repeat and --jobs must be at least 1")
    check_out(args)
    entries = parse_fixes(inputs.read_text(args.make_instances), args.make_instances)
    context = make_context(args, argv, inputs)
    sweep_temporary(args.out)
    fixes, mine, store = [], [], None
    try:
        with context["session"]:
            try:
                source = context["source"] = context["session"].source(context["repo_path"])
                repo = repo_name_of(source, context["repo_name"])
                fixes = [prepare_fix(e, source.git_dir, repo, context)
                         for e in expand_fixes(entries, source.git_dir, context["patterns"])]
                for fix in fixes:
                    fix["key"] = fix_key(fix, context)
                mine = fixes
                if args.shard:
                    shard = parse_shard(args.shard)
                    mine = [f for f in fixes if in_shard(f["sha"] or f["rev"], shard)]
                store = MadeStore(args.out, inputs, args.force)
                context["write_log"] = store.write_log
                made = make_all(mine, context, store, args)
            except Interrupted:
                made = None         # a git the job's signal killed while fixes were read
    finally:
        if store is not None:       # every fix once in the files, however the job ended
            finish_made(store, fixes, mine, args)
    signum = StopSignals.received()
    if signum is not None or made is None:
        done = len(made or [])
        left = len(mine) - done if mine else len(entries)
        raise JobStopped(stopped_line(signum or signal.SIGINT, done, left, args.out,
                                      making=True), SIGNAL_STATUS.get(signum, 130))
    results = [dict(made.get(f["key"]) or {}) for f in mine]
    report = made_report(results, context, repo)
    prov = provenance(__file__, __version__, argv, None, inputs, output_flags=("--out",))
    if args.format == "json":
        sys.stdout.write(to_json({"summary": report, "provenance": prov}))
    else:
        sys.stdout.write(render_made(report, args.format, prov))
    return 0


def finish_made(store, fixes, mine, args):
    """Rewrite the made files from made.jsonl at the end; a write that fails ends the job."""
    try:
        store.finish([f["key"] for f in fixes])
    except (OSError, InputError) as exc:
        try:
            with store.lock:
                on_disk = store.made.records()
        except OSError:
            on_disk = store.previous
        left = sum(f["key"] not in on_disk for f in mine)
        raise JobStopped(write_failure(args.out, exc, store.safe_count(), left, making=True),
                         2) from None


def make_all(fixes, context, store, args):
    """Each fix's result by key, from made.jsonl where its key is unchanged; a fix the job's
    stopping cut short has none (it is made on resume)."""
    results, todo = {}, []
    for fix in fixes:
        earlier = store.previous.get(fix["key"])
        if earlier is not None:
            results[fix["key"]] = dict(earlier, reused=True)
        else:
            todo.append(fix)
    progress = args.progress or sys.stderr.isatty()

    def finish(result):
        try:
            store.add(result)
        except OSError as exc:
            stop_tests()
            raise JobStopped(write_failure(args.out, exc, store.safe_count(), sum(
                f["key"] not in results for f in todo), making=True), 2) from None
        results[result["key"]] = result
        if progress:                # only now: its whole line is on disk
            sys.stderr.write(f"{result['instance_id']}: {result['rejected'] or 'made'} "
                             f"({result['seconds']:.1f} s)\n")

    def one(fix):
        try:
            return make_one(fix, context)
        except InputError as exc:           # a log that cannot be written
            stop_tests()
            raise JobStopped(write_failure(args.out, exc, store.safe_count(), sum(
                f["key"] not in results for f in todo), making=True), 2) from None
    grade_runs(todo, one, finish, args.jobs)
    return results


def made_report(results, context, repo):
    """The report's numbers (a plain dict): per fix, rejections by reason, the self-check."""
    fixes = []
    for result in results:
        row, validation = result["row"], result["row"]["validation"]
        fixes.append({
            "instance_id": result["instance_id"], "fix": (result["sha"] or "")[:8],
            "made": not result["rejected"], "rejected": result["rejected"],
            "fail_to_pass": len(json.loads(row["FAIL_TO_PASS"])),
            "pass_to_pass": len(json.loads(row["PASS_TO_PASS"])),
            "flaky": len(validation.get("flaky") or []),
            "test_s": round(float(sum(r["test_s"] for side in (result.get("runs") or {}).values()
                                      for r in side)), 3),
            "seconds": result["seconds"], "reused": bool(result.get("reused")),
            "self_check": validation.get("self_check") or {}})
    by_reason = collections.Counter(rejection_kind(f["rejected"]) for f in fixes if f["rejected"])
    checked = [f for f in fixes if f["self_check"]]
    return {"repo": repo, "fixes": fixes, "made": sum(f["made"] for f in fixes),
            "rejected": sum(not f["made"] for f in fixes),
            "rejected_by_reason": {k: by_reason[k] for k in REJECTIONS if by_reason[k]},
            "self_checked": len(checked),
            "gold_resolved": sum(f["self_check"].get("gold") == "resolved" for f in checked),
            "empty_unresolved": sum(f["self_check"].get("empty") == "unresolved"
                                    for f in checked),
            "reused": sum(f["reused"] for f in fixes), "repeat": context["repeat"],
            "isolation": context["settings"]["isolation"],
            "python": (context["settings"].get("interpreter") or {}).get("python"),
            "python_version": (context["settings"].get("interpreter") or {}).get("version")}


def render_made(report, style, prov):
    """The --make-instances report as text or Markdown; it reads the numbers, computes none."""
    wrap = (lambda text: text) if style == "markdown" else wrapped
    item = "- " if style == "markdown" else ""
    fixes = len(report["fixes"])
    heading = (f"regrade --make-instances: {fixes} fix{'' if fixes == 1 else 'es'} of "
               f"{report['repo']}, "
               f"{report['made']} made, {report['rejected']} rejected")
    lines = [f"## {heading}" if style == "markdown" else heading]
    if report["reused"]:
        lines.append(f"({report['reused']} taken from made.jsonl, their inputs unchanged; "
                     f"--force redoes them)")
    lines.append("")
    rows = [[f["instance_id"], f["fix"], "made" if f["made"] else "rejected",
             str(f["fail_to_pass"]), str(f["pass_to_pass"]), str(f["flaky"]), fmt(f["test_s"], 2),
             fmt(f["seconds"], 2)] for f in report["fixes"]]
    lines.append(render_table(["instance", "fix", "result", "F2P", "P2P", "flaky", "tests s",
                               "all s"], rows, style))
    rejected = [f for f in report["fixes"] if f["rejected"]]
    if rejected:
        lines.append("")
        lines += ["### Rejected", ""] if style == "markdown" else ["rejected:"]
        lines += [wrap(f"- {f['instance_id']}: {f['rejected']}") for f in rejected]
        lines.append("")
        lines.append(render_table(["reason", "fixes"], [[k, str(v)] for k, v in
                                                        report["rejected_by_reason"].items()],
                                  style))
    lines.append("")
    if style == "markdown":
        lines += ["### Checks", ""]
    lines += [wrap(item + line) for line in (
        f"self-check: gold resolved {report['gold_resolved']} of {report['self_checked']}, "
        f"empty unresolved {report['empty_unresolved']} of {report['self_checked']} "
        f"(a failure moves the instance to rejected)",
        f"runs per fix: {report['repeat']} before and {report['repeat']} after the fix, each in "
        f"its own checkout, under {report['isolation']}; then gold and empty",
        f"test interpreter: {report['python']} ({report['python_version']})",
        "F2P, P2P: FAIL_TO_PASS and PASS_TO_PASS counts; flaky tests are in neither list")]
    lines.append("")
    lines.append(render_provenance(prov, style))
    return "\n".join(lines) + "\n"


# === Auditing instances ===
# --audit-instances certifies a dataset offline: the schema, every listed id against
# what the runner collects, K runs on each side of the gold patch (each a grade_run of
# its own, as --make-instances runs them), and a grading of gold and of no change with
# the listed ids only. Each finding is a defect with its evidence; --write-fixed
# repairs only the mechanical ones, where the repair is certain, and says so.
AUDIT_MANUAL = """
Auditing instances (--audit-instances INSTANCES --repo [OWNER/NAME=]PATH [--repeat K]
                    [--write-fixed FILE]; --repo repeatable, as for grading)
    Certifies a dataset before anyone grades against it: each instance is sound,
    or its defects are listed with their evidence. No instance is changed unless
    --write-fixed is given, and then each change is recorded in the instance.
    Per instance (read row by row, so a malformed row is reported, not refused):
      schema      instance_id, repo, base_commit, patch, test_patch, FAIL_TO_PASS,
                  PASS_TO_PASS present; each list a JSON string holding a list of
                  strings, as SWE-bench stores them (a bare JSON list is noted);
                  no id twice, none in both lists; the base commit in --repo;
                  test_patch touches only test files and patch none (the test-file
                  rule of "Making instances"); the test patch applies at base and
                  the patch on top of it. An instance id given twice, or the same
                  base, patches and lists under two ids (the lists as sets, however
                  spelled), is a duplicate.
      ids         every listed id matches exactly one test the runner recorded in
                  the runs below (the test patch's test modules and the listed ids'
                  files, run whole). An id that matches none gets its likely cause
                  and the nearest real id:
                    id cut at a space       a real id starts with it and goes on
                                            with a space (SWE-bench's log parsers
                                            split lines at whitespace)
                    progress-bar fragment   no test name at all: [100%], #15789, "
                    docstring line          the first line of a test's docstring
                                            (Django's runner prints it; a Django
                                            instance may use it, others may not)
                    renamed test            the same name elsewhere, or a close
                                            name in the same file (difflib)
                    no such test            none of these
                  an id naming several tests (a docstring two tests share) is a
                  defect too.
      runs        K runs before (base + test_patch) and K after (base + patch +
                  test_patch), --select files, each in its own checkout under the
                  sandbox (--repeat K, default 3). Each FAIL_TO_PASS test must fail
                  in every before-run and pass in every after-run, each
                  PASS_TO_PASS test pass in all 2K; a test whose outcome (passed,
                  failing, skipped) changes between the runs of one side is flaky.
                  Gold resolves k/K and the empty patch k/K are counted from those
                  runs with the lists as written (an unmatched id never passes):
                  gold must resolve K/K, the empty patch 0/K.
      grader      then gold and no change are graded once each as a grader would,
                  --select ids with the matched ids: gold must be resolved and no
                  change unresolved. A listed test whose outcome there differs
                  from its steady outcome in the whole-file runs is order-dependent.
      notes       tests that failed after gold and are in no list (not a defect:
                  the instance does not rely on them), and the grader's seconds per
                  run (a run's total less its test command's).
    So an instance costs 2K + 2 runs of its tests.
    Verdict: sound, or defective with each defect: its kind, the test, the
    evidence (outcomes per run), the nearest real id where one is known, and the
    repair --write-fixed makes, if any. The summary counts instances by verdict
    and defects by kind (--format text, markdown or json).
    --write-fixed FILE writes the instances (JSONL, input order, every field kept)
    with only these repairs, each appended to the instance's audit.changes as
    {field, from, to, why}: an id cut at a space or a docstring line mapped to the
    one real id it stands for (when exactly one real id fits), a progress-bar
    fragment and a second copy of an id removed, a flaky test moved out of its
    list (to audit.flaky), and a second, identical copy of an instance dropped.
    Nothing else is repaired: a FAIL_TO_PASS test that passes before, a test
    failing on gold, a renamed test or an incomplete gold patch need a person,
    and audit.defects_left lists them.
    --out DIR keeps each run's log as DIR/logs/ID.SIDE.N.log and the report as
    DIR/audit.json.
    To audit made instances and write a repaired copy:
        python3 regrade.py --audit-instances made/instances.jsonl \\
            --repo pallets/click=../click --python ../venv/bin/python \\
            --write-fixed fixed.jsonl

Comparing with a grader (--compare REPORT, with INSTANCES RUNS or --summarize)
    Puts regrade.py's verdict beside another grader's, run by run. REPORT is any
    grader output this script reads (a SWE-bench run report, a
    logs/run_evaluation/<run_id>/ folder, an sb-cli report, an OpenHands
    output.swebench_eval.jsonl, another verdicts.jsonl). Runs are joined as the
    audits join them (run id, else model and instance id, else instance id); a
    report of another model is refused unless --any-model.
    Each run: agree, or disagree with one cause per run, from the evidence both
    sides hold (the verdict's tests, repeats and reason here; the grader's
    tests_status and test_output.txt where its report.json has them):
        the grader errored            its verdict is an error or infra failure
        regrade errored               this verdict is a grading error
        id cut by the grader's parser a listed id holding a space passed here and
                                      failed there, and the grader's log shows
                                      the id cut at the space
        listed test never in the grader's log
                                      a test that passed here failed there and
                                      its name is nowhere in the grader's log
        flake                         the tests that differ changed outcome
                                      between the repeats here
        passed here, failed there     a listed test passed in every repeat here
                                      and failed there (the environment differs)
        failed here, passed there     a listed test failed here and passed there
                                      (the reason here is quoted)
        tampering caught here         this verdict says the code under test
                                      tampered with the test runner, or that
                                      the grader's own modules came from the tree
        different test lists          the grader graded other tests than listed
        no per-test evidence          the grader's report holds only its verdict
    The report: a Markdown table ready to paste (run, instance, here, there,
    agree, cause, evidence), counts by cause, and with --format json all of it.
    To compare verdicts already made with SWE-bench's logs of the same runs:
        python3 regrade.py --summarize out/verdicts.jsonl \\
            --compare logs/run_evaluation/my-run/
"""
DEFAULT_AUDIT_REPEAT = 3
# Defect kinds in report order; DEFECT_REPAIRABLE names those --write-fixed may repair.
DEFECT_KINDS = ("schema", "duplicate instance", "base commit unknown",
                "test patch does not apply", "gold patch does not apply",
                "test patch touches code", "patch touches tests", "duplicate id",
                "id cut at a space", "progress-bar fragment", "docstring line", "renamed test",
                "no such test", "id names several tests", "FAIL_TO_PASS passes before",
                "FAIL_TO_PASS fails on gold", "PASS_TO_PASS fails before",
                "PASS_TO_PASS fails on gold", "flaky", "order-dependent",
                "gold does not resolve", "empty patch resolves", "grading error")
AUDIT_FIELDS = ("instance_id", "repo", "base_commit", "patch", "test_patch", "FAIL_TO_PASS",
                "PASS_TO_PASS")
# No letter or digit beyond a percentage or an issue number: what a progress bar prints.
PROGRESS_FRAGMENT = re.compile(r"^(\[\s*\d{1,3}%\]|#\d+|\d{1,3}%|[\W_]*)$")


def audit_records(path, inputs):
    """Every row of INSTANCES as (where, record), duplicates and malformed rows kept."""
    return read_records(path, inputs)


def defect(kind, evidence, test=None, nearest=None, repair=None):
    """One finding: its kind (DEFECT_KINDS), the test, the evidence, the nearest id, the repair."""
    return {"kind": kind, "test": test, "evidence": evidence, "nearest": nearest,
            "repair": repair}


def schema_defects(record, where):
    """The schema's defects of one row: (defects, the instance as graded or None)."""
    found = [defect("schema", f"no field {field!r}") for field in AUDIT_FIELDS
             if field not in record]
    for field in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        value = record.get(field)
        if isinstance(value, list):
            found.append(defect("schema", f"{field} is a bare JSON list; SWE-bench stores a "
                                          f"JSON string holding one"))
        elif isinstance(value, str):
            try:
                parsed = json.loads(value)
            except ValueError:
                parsed = None
            if not isinstance(parsed, list) or not all(isinstance(t, str) for t in parsed):
                found.append(defect("schema", f"{field} is not a JSON list of strings"))
    if not (record.get("patch") or "").strip():
        found.append(defect("schema", "no gold patch (patch is empty)"))
    try:
        instance = parse_instance(record, where)
    except InputError as exc:
        return found + [defect("schema", str(exc).replace(where + ", ", "").replace(
            where + ": ", ""))], None
    for name in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        seen = collections.Counter(instance[name])
        found += [defect("duplicate id", f"listed {n} times in {name}", test=t,
                         repair="remove the second copy") for t, n in sorted(seen.items())
                  if n > 1]
    for test_id in sorted(set(instance["FAIL_TO_PASS"]) & set(instance["PASS_TO_PASS"])):
        found.append(defect("duplicate id", "listed in FAIL_TO_PASS and in PASS_TO_PASS",
                            test=test_id))
    return [d for d in found if not (d["kind"] == "schema" and "bare JSON list" in
                                     d["evidence"])], instance


def bare_list_notes(record):
    """Notes (not defects) for lists given as bare JSON lists."""
    return [f"{f} is a bare JSON list (SWE-bench stores a JSON string holding one)"
            for f in ("FAIL_TO_PASS", "PASS_TO_PASS") if isinstance(record.get(f), list)]


def duplicate_defects(rows):
    """{row number: [defect]}: an id given twice, or one instance's content under two ids."""
    found, by_id, by_content = {}, {}, {}

    def test_set(record, field):
        # The lists as the grader reads them, in any spelling and order: '["a","b"]',
        # a bare list and '["b", "a"]' are one list.
        try:
            return sorted(set(parse_test_list(record.get(field), field)))
        except InputError:
            return record.get(field)
    for number, (where, record) in enumerate(rows):
        instance_id = record.get("instance_id")
        content = sha256_text(json.dumps(
            [record.get(k) for k in ("repo", "base_commit", "patch", "test_patch")]
            + [test_set(record, k) for k in ("FAIL_TO_PASS", "PASS_TO_PASS")],
            sort_keys=True))
        if instance_id in by_id:
            first = by_id[instance_id]
            same = json.dumps(record, sort_keys=True) == json.dumps(rows[first][1],
                                                                     sort_keys=True)
            found.setdefault(number, []).append(defect(
                "duplicate instance", f"instance id given again ({rows[first][0]} has it"
                f"{', identical' if same else ', with other content'})",
                repair="drop this copy" if same else None))
        elif content in by_content:
            first = by_content[content]
            found.setdefault(number, []).append(defect(
                "duplicate instance", f"same base commit, patches and lists as "
                f"{rows[first][1].get('instance_id')!r} ({rows[first][0]})"))
        by_id.setdefault(instance_id, number)
        by_content.setdefault(content, number)
    return found


def scope_defects(instance, patterns=None):
    """test_patch touching code, patch touching tests (the test-file rule of Making instances)."""
    found = [defect("test patch touches code", f"the test patch changes {path}")
             for path in diff_paths(instance["test_patch"])
             if not is_instance_test_file(path, patterns)]
    found += [defect("patch touches tests", f"the gold patch changes {path}")
              for path in diff_paths(instance["patch"] or "")
              if is_instance_test_file(path, patterns)]
    return found


def audit_run_files(instance, source, patterns=None):
    """The files the audit runs whole: the test patch's test modules and the listed ids'
    files, those that exist at base or that the test patch adds."""
    patch_paths = diff_paths(instance["test_patch"])
    listed = instance["FAIL_TO_PASS"] + instance["PASS_TO_PASS"]
    wanted = set(test_files([t for t in listed if "::" in t], patch_paths))
    wanted |= {p for p in patch_paths if is_test_module(p, patterns)}
    present = set()
    for path in sorted(wanted):
        status, _ = git(["--git-dir", source.git_dir, "cat-file", "-e",
                         f"{instance['base_commit']}:{path}"], check=False)
        if status == 0 or path in patch_paths:
            present.add(path)
    return sorted(present)


def pytest_docstring_tests(text, path):
    """{first docstring line: [node id]} of a pytest file's test functions and methods.

    >>> pytest_docstring_tests("def test_a():\\n    '''Adds.'''\\nclass TestB:\\n"
    ...                        "    def test_c(self):\\n        '''Cs.'''\\n", "t.py")
    {'Adds.': ['t.py::test_a'], 'Cs.': ['t.py::TestB::test_c']}
    """
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    found = {}

    def visit(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    node.name.startswith("test"):
                line = docstring_line(node)
                if line:
                    found.setdefault(line, []).append(f"{prefix}::{node.name}")
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}::{node.name}")
    visit(tree.body, path)
    return found


def audit_tree_facts(instance, source, run_files, context):
    """Check out base in a scratch tree: does the test patch apply, and the gold patch on top
    of it; the run files' docstrings. Returns (defects, {docstring line: [ids]})."""
    folder = tempfile.mkdtemp(prefix="audit-", dir=context["session"].scratch)
    found, docstrings = [], {}
    try:
        tree = make_tree(source, instance["base_commit"], folder)
        # The row's runner, as its runs pick it (an instance's test_runner, the repository's).
        runner = runner_for(instance, context["runner"],
                            instance["FAIL_TO_PASS"] + instance["PASS_TO_PASS"], tree)
        for name, text in (("test patch", normalise_diff(instance["test_patch"])),
                           ("gold patch", normalise_diff(instance["patch"] or ""))):
            if not text:
                continue
            patch_file = os.path.join(folder, "diff.patch")
            with open(patch_file, "w", encoding="utf-8") as handle:
                handle.write(text)
            method, log_text = apply_diff(tree, patch_file, context["settings"]["fuzz"])
            if method is None:
                last = [l for l in log_text.splitlines() if l.strip()][-2:]
                found.append(defect(f"{name} does not apply", f"{name} at base"
                                    f"{' + test patch' if name == 'gold patch' else ''}: "
                                    + " / ".join(last)[:300]))
                break
        for path in run_files:
            full = os.path.join(tree, path)
            if not os.path.isfile(full):
                continue
            with open(full, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
            if runner == "django" and path.startswith("tests/"):
                for line, ids in django_docstring_tests(text, django_label(path)).items():
                    docstrings.setdefault(line, []).extend(
                        spelled_ids({i: None for i in ids}, "django"))
            else:
                for line, ids in pytest_docstring_tests(text, path).items():
                    docstrings.setdefault(line, []).extend(ids)
    finally:
        remove_folder(folder)
    return found, docstrings


def audit_run(instance, side, attempt, run_files, context):
    """One whole-file run before (no change) or after (gold) the fix: status and outcomes."""
    settings = dict(context["settings"], repeat=1, select="files", observe_all=True)
    runner = instance["test_runner"] or fix_runner(context["runner"], instance["repo"],
                                                   context["source"].git_dir,
                                                   instance["base_commit"])
    probe = dict(instance, FAIL_TO_PASS=[], PASS_TO_PASS=[], run_files=run_files,
                 test_runner=runner)
    run = normalised_run({
        "run_id": f"{instance['instance_id']}.{side}.{attempt}",
        "instance_id": instance["instance_id"], "base_commit": instance["base_commit"],
        "diff": instance["patch"] if side == "after" else "", "key": "", "model": None}, probe)
    verdict, log_text = grade_run(run, probe, context["source"], settings, context["session"])
    context["write_log"](f"{run['run_id']}.log", log_text)
    outcomes = (verdict.get("all_outcomes") or [None])[0]
    return {"status": verdict["status"], "reason": verdict["reason"], "runner": runner,
            "outcomes": None if outcomes is None else spelled_ids(outcomes, runner),
            "grader_s": round(verdict["duration_s"] - verdict["test_s"], 3),
            "test_s": verdict["test_s"]}


def id_variants(test_id):
    """The spellings one test goes by: canonical, and Django's two forms of one id.

    >>> sorted(id_variants("test_a (m.C.test_a)"))
    ['test_a (m.C)', 'test_a (m.C.test_a)']
    """
    test_id = canonical_id(test_id)
    found = {test_id}
    match = re.match(r"^(\w+) \(([\w.]+)\)$", test_id)
    if match:
        name, where = match.groups()
        found.add(f"{name} ({where[:-len(name) - 1]})" if where.endswith("." + name) else
                  f"{name} ({where}.{name})")
    return found


def match_listed(test_id, real, docstrings, runner):
    """Match one listed id against the real ids: (matched real ids, cause or None, nearest,
    certain). A cause is one of DEFECT_KINDS's id kinds."""
    by_variant = {}
    for real_id in real:
        for variant in id_variants(real_id):
            by_variant.setdefault(variant, set()).add(real_id)
    hits = set().union(*[by_variant.get(v, set()) for v in id_variants(test_id)])
    if len(hits) == 1:
        return sorted(hits), None, None, True
    if len(hits) > 1:
        return sorted(hits), "id names several tests", sorted(hits)[0], False
    documented = [r for r in docstrings.get(test_id.strip(), []) if r in real] or \
        docstrings.get(test_id.strip(), [])
    if documented and runner == "django" and len(documented) == 1:
        return documented, None, None, True
    if runner == "django" and len([r for r in documented if r in real]) > 1:
        return sorted(documented), "id names several tests", sorted(documented)[0], False
    if PROGRESS_FRAGMENT.match(test_id.strip()):
        return [], "progress-bar fragment", None, True
    cut = sorted(r for r in real if r.startswith(test_id) and r[len(test_id):][:1] == " ")
    if cut:
        return [], "id cut at a space", cut[0], len(cut) == 1
    if documented:
        return [], "docstring line", documented[0], len(documented) == 1
    if runner == "django" and not re.fullmatch(r"\w+ \([\w.]+\)", test_id.strip()):
        # A docstring line with a word changed: the nearest real docstring's test, not certain.
        near = difflib.get_close_matches(test_id.strip(), sorted(docstrings), n=1, cutoff=0.8)
        if near:
            return [], "docstring line", sorted(docstrings[near[0]])[0], False
    name = re.split(r"::|\.", test_id)[-1].split("[")[0]
    same_name = sorted(r for r in real if re.split(r"::|\.", r)[-1].split("[")[0] == name)
    if same_name:
        return [], "renamed test", same_name[0], False
    path = test_id.split("::")[0]
    close = difflib.get_close_matches(test_id, sorted(r for r in real if r.startswith(path))
                                      or sorted(real), n=1, cutoff=0.6)
    if close and "::" in test_id and close[0].startswith(path + "::"):
        return [], "renamed test", close[0], False
    return [], "no such test", (close or [None])[0], False


def id_defects(instance, real, docstrings, runner):
    """Each listed id's match: ({listed id: real id}, defects)."""
    matched, found = {}, []
    for field in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        for test_id in dict.fromkeys(instance[field]):
            hits, cause, nearest, certain = match_listed(test_id, real, docstrings, runner)
            if cause is None:
                matched[test_id] = hits[0]
                continue
            if cause == "id names several tests":
                evidence = f"{field}: names {len(hits)} tests: {', '.join(hits[:3])}"
            else:
                evidence = f"{field}: no recorded test has this id"
            repair = None
            if certain and cause == "progress-bar fragment":
                repair = "remove it (it names no test)"
            elif certain and cause in ("id cut at a space", "docstring line"):
                repair = f"map to {nearest!r}"
            found.append(defect(cause, evidence, test=test_id, nearest=nearest, repair=repair))
    return matched, found


def groups_text(outcomes):
    """'passed, failed, passed': a test's outcome in each run of a side."""
    return ", ".join(o or "absent" for o in outcomes)


def side_outcomes(runs, real_id):
    """A test's outcome in each finished run of a side (None where it did not run)."""
    return [(run["outcomes"] or {}).get(real_id) for run in runs]


def outcome_defects(instance, matched, before, after):
    """Each matched test against its list's rule over the 2K runs: defects, flaky ids."""
    found, flaky = [], []
    for field in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        for test_id in dict.fromkeys(instance[field]):
            if test_id not in matched:
                continue
            seen_before = side_outcomes(before, matched[test_id])
            seen_after = side_outcomes(after, matched[test_id])
            evidence = f"before: {groups_text(seen_before)}; after: {groups_text(seen_after)}"
            unsteady = [s for s, seen in (("before", seen_before), ("after", seen_after))
                        if is_flaky(seen)]
            if unsteady:
                flaky.append(test_id)
                found.append(defect("flaky", f"{field}: outcome changed between the runs "
                                    f"{' and '.join(unsteady)} the fix ({evidence})",
                                    test=test_id, repair=f"move out of {field}"))
                continue
            passed_before = classify(seen_before) == "passed"
            passed_after = classify(seen_after, LIST_PASSING[field]) == "passed"
            if field == "FAIL_TO_PASS" and passed_before:
                found.append(defect("FAIL_TO_PASS passes before", evidence, test=test_id))
            if field == "FAIL_TO_PASS" and not passed_after:
                found.append(defect("FAIL_TO_PASS fails on gold", evidence, test=test_id))
            if field == "PASS_TO_PASS" and not passed_after:
                found.append(defect("PASS_TO_PASS fails on gold", evidence, test=test_id))
            elif field == "PASS_TO_PASS" and not passed_before:
                found.append(defect("PASS_TO_PASS fails before", evidence, test=test_id))
    return found, flaky


def resolves(instance, matched, run):
    """Whether one whole-file run resolves the instance with the lists as written."""
    outcomes = {t: [(run["outcomes"] or {}).get(matched[t])] if t in matched else [None]
                for t in instance["FAIL_TO_PASS"] + instance["PASS_TO_PASS"]}
    return decide(instance["FAIL_TO_PASS"], instance["PASS_TO_PASS"], outcomes)["completed"]


def grader_check(instance, matched, context):
    """Gold and no change graded once each with the matched ids, --select ids: verdicts."""
    lists = {f: [matched[t] for t in dict.fromkeys(instance[f]) if t in matched]
             for f in ("FAIL_TO_PASS", "PASS_TO_PASS")}
    if not lists["FAIL_TO_PASS"]:
        return {}
    graded = dict(instance, **lists)
    settings = dict(context["settings"], repeat=1, select="ids")
    verdicts = {}
    for name, diff in (("gold", instance["patch"]), ("empty", "")):
        run = normalised_run({"run_id": f"{instance['instance_id']}/{name}",
                              "instance_id": instance["instance_id"],
                              "base_commit": instance["base_commit"], "diff": diff,
                              "model": name}, graded)
        run = dict(run, key=grading_key(run, graded, settings))
        verdict, log_text = grade_run(run, graded, context["source"], settings, context["session"])
        context["write_log"](f"{instance['instance_id']}.{name}.log", log_text)
        verdicts[name] = verdict
    return verdicts


def order_defects(instance, matched, flaky, after, verdicts):
    """Listed tests whose outcome alone (--select ids, gold) differs from their steady
    outcome in every whole-file after-run: they depend on what runs with them."""
    gold = verdicts.get("gold")
    if not gold or gold["status"] in GRADING_ERRORS:
        return []
    alone = {}
    for key in ("fail_to_pass", "pass_to_pass"):
        for group, ids in gold[key].items():
            alone.update({t: group for t in ids})
    found = []
    for test_id, real_id in sorted(matched.items()):
        seen = side_outcomes(after, real_id)
        if test_id in flaky or real_id not in alone or not seen or len(set(seen)) != 1:
            continue
        with_file = "passed" if seen[0] in PASSING else "failed"
        here = "passed" if alone[real_id] == "passed" else "failed"
        if with_file != here:
            found.append(defect("order-dependent", f"after gold: {seen[0]} in each run of its "
                                f"whole file, {alone[real_id]} when run alone (--select ids)",
                                test=test_id))
    return found


def audit_sides(instance, run_files, context):
    """K before-runs and K after-runs: (before, after, a defect that stops the audit or None)."""
    repeat = context["repeat"]
    runs = {side: [audit_run(instance, side, k, run_files, context) for k in range(1, repeat + 1)]
            for side in ("before", "after")}
    for side in ("before", "after"):
        for run in runs[side]:
            if run["status"] in ("test_patch_failed", "patch_failed"):
                kind = "test patch does not apply" if run["status"] == "test_patch_failed" \
                    else "gold patch does not apply"
                return runs["before"], runs["after"], defect(kind, run["reason"][:300])
            if run["status"] in ("error", "wrong_code_under_test") and run["outcomes"] is None:
                return runs["before"], runs["after"], defect(
                    "grading error", f"{side}: {run['reason'][:300]}")
    finished = {side: [r for r in runs[side] if r["status"] != "timeout"] for side in runs}
    return finished["before"], finished["after"], None


def audit_instance(where, record, extra, context):
    """One row start to end: its audit record (verdict, defects, notes, runs, matches)."""
    found, instance = schema_defects(record, where)
    found += extra
    result = {"instance_id": record.get("instance_id"), "where": where, "defects": found,
              "notes": bare_list_notes(record), "matched": {}, "flaky": [], "runs": {},
              "gold_resolves": None, "empty_resolves": None, "grader": {}, "K": context["repeat"]}
    if instance is None or any(d["kind"] == "duplicate instance" and d["repair"] for d in extra):
        return finish_audit(result)         # an identical copy is not run again
    path = context["session"].repo_path(instance["repo"], where)
    context = dict(context, source=context["session"].source(path))
    full = context["source"].resolve([instance["base_commit"]]).get(instance["base_commit"])
    if full is None:
        found.append(defect("base commit unknown", f"{instance['base_commit']} is not in "
                                                   f"{relative_path(path)}"))
        return finish_audit(result)
    instance["base_commit"] = full
    found += scope_defects(instance, context["patterns"])
    run_files = audit_run_files(instance, context["source"], context["patterns"])
    applied, docstrings = audit_tree_facts(instance, context["source"], run_files, context)
    found += applied
    if applied or not run_files:
        if not run_files:
            found.append(defect("grading error", "no test file to run: the test patch holds "
                                                 "no test module and no listed id names a file"))
        return finish_audit(result)
    before, after, stop = audit_sides(instance, run_files, context)
    result["runs"] = {"before": [strip_run(r) for r in before],
                      "after": [strip_run(r) for r in after]}
    if stop:
        found.append(stop)
        return finish_audit(result)
    real = set().union(*[set(r["outcomes"] or {}) for r in before + after])
    runner = (after or before)[0]["runner"] if after or before else "pytest"
    matched, id_found = id_defects(instance, real, docstrings, runner)
    found += id_found
    tests_found, flaky = outcome_defects(instance, matched, before, after)
    found += tests_found
    result.update(matched=matched, flaky=flaky,
                  gold_resolves=sum(resolves(instance, matched, r) for r in after),
                  empty_resolves=sum(resolves(instance, matched, r) for r in before))
    verdicts = grader_check(instance, matched, context)
    result["grader"] = {name: {"status": v["status"], "reason": v["reason"],
                               "grader_s": round(v["duration_s"] - v["test_s"], 3)}
                        for name, v in verdicts.items()}
    found += order_defects(instance, matched, flaky, after, verdicts)
    found += resolution_defects(result, id_found, tests_found)
    listed = set(matched.values())
    failing = sorted({t for r in after for t, o in (r["outcomes"] or {}).items()
                      if o in FAILING and t not in listed})
    if failing:
        result["notes"].append(f"{len(failing)} test(s) failed after gold and are in no list, "
                               f"e.g. {', '.join(failing[:3])}")
    result["failing_unlisted"] = failing
    return finish_audit(result)


def strip_run(run):
    """A run as the audit record keeps it (its outcomes are summarised elsewhere)."""
    return {k: run[k] for k in ("status", "reason", "test_s", "grader_s")}


def resolution_defects(result, id_found, tests_found):
    """Gold short of K/K, or the empty patch above 0/K, with the defects that explain it."""
    found, k = [], len(result["runs"].get("after") or [])
    explained = sorted({d["kind"] for d in id_found + tests_found})
    why = f" (explained by: {', '.join(explained)})" if explained else ""
    if result["gold_resolves"] is not None and result["gold_resolves"] < k:
        found.append(dict(defect("gold does not resolve", f"gold resolves "
                                 f"{result['gold_resolves']}/{k} whole-file runs with the lists "
                                 f"as written{why}"), because=explained))
    k_before = len(result["runs"].get("before") or [])
    if result["empty_resolves"]:
        found.append(dict(defect("empty patch resolves", f"no change resolves "
                                 f"{result['empty_resolves']}/{k_before} runs{why}"),
                          because=explained))
    for name, want in (("gold", "resolved"), ("empty", "unresolved")):
        got = result["grader"].get(name)
        if got and got["status"] != want and not explained:
            found.append(defect("gold does not resolve" if name == "gold" else
                                "empty patch resolves", f"graded with the listed ids, "
                                f"{name} is {got['status']}: {got['reason'][:200]}"))
    return found


def finish_audit(result):
    """The verdict follows from the defects: sound only with none; defects in kind order."""
    order = {kind: i for i, kind in enumerate(DEFECT_KINDS)}
    result["defects"].sort(key=lambda d: (order[d["kind"]], d["test"] or "", d["evidence"]))
    result["verdict"] = "defective" if result["defects"] else "sound"
    return result


def fixed_rows(rows, results):
    """The rows with only the certain, mechanical repairs; each change in row['audit']."""
    fixed = []
    for (where, record), result in zip(rows, results):
        if any(d["kind"] == "duplicate instance" and d["repair"] for d in result["defects"]):
            continue            # an identical second copy: the first stays
        row, changes = json.loads(json.dumps(record)), []
        repairs = {(d["test"], d["kind"]): d for d in result["defects"] if d["repair"]}
        for field in ("FAIL_TO_PASS", "PASS_TO_PASS"):
            value = row.get(field)
            try:
                listed = json.loads(value) if isinstance(value, str) else value
            except ValueError:
                continue
            if not isinstance(listed, list):
                continue
            kept, seen = [], set()
            for test_id in listed:
                change = repaired_id(test_id, field, repairs, result, seen)
                if change is None:
                    kept.append(test_id)
                    seen.add(test_id)
                    continue
                changes.append(dict(change, field=field, **{"from": test_id}))
                if change["to"] is not None:
                    kept.append(change["to"])
                    seen.add(change["to"])
            row[field] = json.dumps(kept) if isinstance(value, str) else kept
        # A resolution short of K/K that only repaired defects explain is left to a re-audit.
        repaired = {d["kind"] for d in result["defects"] if d["repair"]} - \
            {d["kind"] for d in result["defects"] if not d["repair"]}
        left = [{k: d[k] for k in ("kind", "test", "evidence")} for d in result["defects"]
                if not d["repair"] and not (d.get("because") and set(d["because"]) <= repaired)]
        row["audit"] = {"verdict": result["verdict"], "changes": changes,
                        "flaky": [c["from"] for c in changes if c["why"] == "flaky"],
                        "defects_left": left}
        fixed.append(row)
    return fixed


def repaired_id(test_id, field, repairs, result, seen):
    """The change --write-fixed makes to one listed id ({to, why}), or None to keep it."""
    if test_id in seen:
        return {"to": None, "why": "duplicate id"}
    for kind in ("id cut at a space", "docstring line"):
        found = repairs.get((test_id, kind))
        if found:
            return {"to": found["nearest"], "why": kind}
    if (test_id, "progress-bar fragment") in repairs:
        return {"to": None, "why": "progress-bar fragment"}
    if (test_id, "flaky") in repairs and field in repairs[(test_id, "flaky")]["evidence"]:
        return {"to": None, "why": "flaky"}
    return None


def audit_summary(results):
    """The dataset's counts: instances by verdict, defects by kind, runs and grader seconds."""
    kinds = collections.Counter(d["kind"] for r in results for d in r["defects"])
    grader_s = [run["grader_s"] for r in results for side in r["runs"].values() for run in side]
    grader_s += [g["grader_s"] for r in results for g in r["grader"].values()]
    return {"instances": len(results),
            "sound": sum(r["verdict"] == "sound" for r in results),
            "defective": sum(r["verdict"] == "defective" for r in results),
            "defects_by_kind": {k: kinds[k] for k in DEFECT_KINDS if kinds[k]},
            "runs": len(grader_s), "grader_s_max": max(grader_s) if grader_s else None,
            "grader_s_mean": sum(grader_s) / len(grader_s) if grader_s else None}


def render_audit(summary, results, style, prov):
    """The audit as text or Markdown: the summary, one row per instance, one per defect."""
    lines = [f"{'## ' if style == 'markdown' else ''}Instance audit: {summary['instances']} "
             f"instance(s), {summary['sound']} sound, {summary['defective']} defective", ""]
    if summary["runs"]:
        lines += [f"{summary['runs']} runs; grader seconds per run: mean "
                  f"{fmt(summary['grader_s_mean'])}, max {fmt(summary['grader_s_max'])}", ""]
    rows = [[r["instance_id"] or r["where"], r["verdict"],
             "" if r["gold_resolves"] is None else f"{r['gold_resolves']}/{r['K']}",
             "" if r["empty_resolves"] is None else f"{r['empty_resolves']}/{r['K']}",
             (r["grader"].get("gold") or {}).get("status", ""),
             (r["grader"].get("empty") or {}).get("status", ""),
             ", ".join(sorted({d["kind"] for d in r["defects"]})) or "-"] for r in results]
    lines += [render_table(["instance", "verdict", "gold k/K", "empty k/K", "gold (ids)",
                            "empty (ids)", "defects"], rows, style), ""]
    defects = [[r["instance_id"] or r["where"], d["kind"], d["test"] or "", d["evidence"],
                d["nearest"] or "", d["repair"] or "none"] for r in results for d in r["defects"]]
    if defects:
        lines += [("### " if style == "markdown" else "") + "Defects and their evidence", "",
                  render_table(["instance", "defect", "test", "evidence", "nearest real id",
                                "--write-fixed"], defects, style), ""]
    if summary["defects_by_kind"]:
        lines += [render_table(["defect", "count"], [[k, n] for k, n in
                                                     summary["defects_by_kind"].items()],
                               style), ""]
    notes = [[r["instance_id"] or r["where"], n] for r in results for n in r["notes"]]
    if notes:
        lines += [render_table(["instance", "note"], notes, style), ""]
    return "\n".join(lines) + render_provenance(prov, style)


def audit_context(args, argv, inputs, rows):
    """Settings of the audit's runs, as --make-instances makes them, its session and its
    options; the interpreter must import pytest only when a row's runner is pytest
    (runner_for, as grading asks: a Django or SymPy dataset needs no pytest)."""
    parse_repo_options(args.repo)       # a second unnamed --repo is refused first
    if not args.repo:
        raise InputError("--audit-instances needs --repo [OWNER/NAME=]PATH (repeatable)")
    settings = new_settings(args, repeat=1)
    if args.test_cmd:
        check_test_command(args.test_cmd, args.runner, "--test-cmd")
    needs_pytest = any(runner_for(record, args.runner, None) == "pytest" and
                       not (record.get("test_cmd") or args.test_cmd)
                       for _, record in rows if isinstance(record, dict))
    check_interpreter(settings, args.python, needs_pytest)
    # One run at a time, so one kept tree; the audit's report names no private path.
    session = Session(settings, args, argv, inputs, needs_pytest=needs_pytest, jobs=1)
    return {"settings": settings, "session": session,
            "repeat": args.repeat if args.repeat is not None else DEFAULT_AUDIT_REPEAT,
            "runner": args.runner, "inputs": inputs,
            "patterns": tuple(args.test_files) if args.test_files else None}


def audit_instances(args, argv):
    """--audit-instances: audit every row, print the report, write the repaired copy."""
    inputs = Inputs()
    if args.repeat is not None and args.repeat < 1:
        raise InputError("--repeat must be at least 1")
    rows = audit_records(args.audit_instances, inputs)
    context = audit_context(args, argv, inputs, rows)
    logs = os.path.join(args.out, "logs") if args.out else None
    if logs:
        os.makedirs(logs, exist_ok=True)
    context["write_log"] = (lambda name, text: write_out(os.path.join(logs, safe_name(name)),
                                                         text)) if logs else \
        (lambda name, text: None)
    duplicates = duplicate_defects(rows)
    progress = args.progress or sys.stderr.isatty()
    with StopSignals(), context["session"]:
        results = []
        for number, (where, record) in enumerate(rows):
            results.append(audit_instance(where, record, duplicates.get(number, []), context))
            if progress:
                sys.stderr.write(f"{results[-1]['instance_id']}: {results[-1]['verdict']}\n")
    return audit_output(args, argv, inputs, rows, results)


def audit_output(args, argv, inputs, rows, results):
    """Write --write-fixed and --out DIR/audit.json; print the report."""
    summary = audit_summary(results)
    if args.write_fixed:
        inputs.guard_output(args.write_fixed)
        write_atomic(args.write_fixed, "".join(json.dumps(r, ensure_ascii=False) + "\n"
                                               for r in fixed_rows(rows, results)))
    prov = provenance(__file__, __version__, argv, None, inputs,
                      output_flags=("--out", "--write-fixed"))
    data = {"summary": summary, "instances": results, "provenance": prov}
    if args.out:
        write_out(os.path.join(args.out, "audit.json"), to_json(data))
    if args.format == "json":
        sys.stdout.write(to_json(data))
    else:
        sys.stdout.write(render_audit(summary, results, args.format, prov))
    return 0


# === Comparing with a grader ===
# --compare puts each verdict beside another grader's, joined with the shared block's
# readers (read_verdicts, join_verdicts), and names one cause per disagreement from
# the evidence both sides hold.
COMPARE_CAUSES = ("the grader errored", "regrade errored", "tampering caught here",
                  "different test lists", "id cut by the grader's parser",
                  "listed test never in the grader's log", "flake",
                  "passed here, failed there", "failed here, passed there",
                  "no per-test evidence")


def grader_evidence(record, inputs):
    """What the grader's report holds for one run besides its verdict: tests_status from
    its report.json (or OpenHands line) and the test log beside it (test_output.txt)."""
    where, report = record["where"], None
    path, _, line = where.partition(" line ")
    try:
        if path.endswith(".json") and os.path.isfile(path) and not line:
            data = json.loads(inputs.read_text(path))
            if isinstance(data, dict):
                report = data.get(record["instance_id"]) if isinstance(
                    data.get(record["instance_id"]), dict) else data
        elif line.isdigit() and os.path.isfile(path):
            lines = inputs.read_text(path).splitlines()
            report = openhands_report(json.loads(lines[int(line) - 1]))
    except (ValueError, IndexError, InputError):
        report = None
    tests = report.get("tests_status") if isinstance(report, dict) else None
    log_path = os.path.join(os.path.dirname(path), "test_output.txt")
    log = inputs.read_text(log_path) if path.endswith("report.json") and \
        os.path.isfile(log_path) else None
    return {"tests_status": tests if isinstance(tests, dict) else None, "log": log}


def their_groups(tests_status):
    """(passed, failed) listed ids of a SWE-bench tests_status."""
    passed, failed = set(), set()
    for field in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        entry = tests_status.get(field) or {}
        passed.update(entry.get("success") or [])
        failed.update(entry.get("failure") or [])
    return passed, failed


def our_groups(verdict):
    """(passed, not passed) listed ids of a regrade.py verdict."""
    passed, failed = set(), set()
    for key in ("fail_to_pass", "pass_to_pass"):
        groups = verdict.get(key) or {}
        passed.update(groups.get("passed") or [])
        for group in ("failed", "skipped", "missing"):
            failed.update(groups.get(group) or [])
    return passed, failed


def cut_in_log(test_id, log):
    """The grader's log line that shows a listed id cut at its first space, or None."""
    if " " not in test_id:
        return None
    cut = test_id.split(" ")[0]
    return next((l.strip() for l in (log or "").splitlines()
                 if cut in l.split()), None)


def passed_here_cause(test_id, verdict, evidence):
    """Why a listed test that passed here failed there: (cause, evidence text)."""
    log = evidence["log"]
    line = cut_in_log(test_id, log)
    if line is not None:
        return ("id cut by the grader's parser", f"{test_id!r} holds a space" +
                (f": a parser that splits the grader's log line at whitespace keeps "
                 f"{test_id.split(' ')[0]!r}" if line else ""))
    name = re.split(r"::|\.", test_id)[-1]
    if log is not None and test_id not in log and name not in log:
        return "listed test never in the grader's log", f"{test_id!r} not in test_output.txt"
    # (Never a flake: a test passes here only by passing in every repeat.)
    return ("passed here, failed there",
            f"{test_id!r} passed in each of {len(verdict.get('exit_status') or [1])} "
            f"repeat(s) here")


def compare_cause(verdict, record, evidence):
    """One run's agreement and, where the two disagree, its cause and evidence."""
    status = verdict["status"]
    here = None if status in GRADING_ERRORS else status == "resolved"
    there = record["verified"]
    if here == there:
        return True, None, ("both are grading errors: " + f"{status}; {record['status']}"
                            if here is None else "")
    if there is None:
        return False, "the grader errored", record["status"]
    if here is None:
        return False, "regrade errored", f"{status}: {verdict['reason'][:200]}"
    if any(caught in (verdict.get("reason") or "") for caught in (TAMPERED, SHADOWED)):
        return False, "tampering caught here", verdict["reason"][:200]
    tests = evidence["tests_status"]
    ours_passed, ours_failed = our_groups(verdict)
    if tests is not None:
        theirs_passed, theirs_failed = their_groups(tests)
        theirs, ours = theirs_passed | theirs_failed, ours_passed | ours_failed
        if theirs and theirs != ours:
            return False, "different test lists", (f"{len(ours - theirs)} listed only here, "
                                                   f"{len(theirs - ours)} only there")
    if here:
        if tests is None and evidence["log"] is None:
            spaced = sorted(t for t in ours_passed if " " in t)
            return False, "no per-test evidence", "the grader's report holds only its verdict" + (
                f"; {len(spaced)} listed id(s) hold a space, which SWE-bench's log parsers cut "
                f"(e.g. {spaced[0]!r})" if spaced else "")
        suspects = sorted(ours_passed & theirs_failed) if tests is not None else \
            sorted(t for t in ours_passed if " " in t or t not in evidence["log"])
        if not suspects:
            return False, "no per-test evidence", "the grader's report holds only its verdict"
        causes = [passed_here_cause(t, verdict, evidence) for t in suspects]
        rank = {c: i for i, c in enumerate(COMPARE_CAUSES)}
        cause, text = min(causes, key=lambda c: rank[c[0]])
        same = sum(c[0] == cause for c in causes)
        return False, cause, text + (f" (and {same - 1} more)" if same > 1 else "") + \
            (f"; {len(causes) - same} other test(s)" if len(causes) > same else "")
    suspects = sorted(ours_failed & theirs_passed) if tests is not None else []
    if not suspects:
        return False, "no per-test evidence", (
            "the grader's report holds only its verdict" if evidence["log"] is None else
            "the grader's report holds no per-test outcomes, only its log, which is not "
            "parsed for a run that failed here")
    # A flake only where every test that differs changed outcome here: one that failed
    # in every repeat explains the disagreement whatever the flaky ones did.
    steady = [t for t in suspects if t not in (verdict.get("flaky") or [])]
    if not steady:
        return False, "flake", (f"{suspects[0]!r} changed outcome between the repeats here"
                                + (f" (and {len(suspects) - 1} more)" if len(suspects) > 1
                                   else ""))
    more = f" and {len(steady) - 1} more" if len(steady) > 1 else ""
    return False, "failed here, passed there", f"{steady[0]!r}{more}: {verdict['reason'][:160]}"


def compare_verdicts(verdicts, source, inputs, any_model=False):
    """Each verdict beside the grader's: rows {run_id, instance_id, here, there, agree,
    cause, evidence} in run order, and how the two were joined."""
    runs = [{"run_id": v["run_id"], "task": v["instance_id"], "model": v.get("model")}
            for v in verdicts]
    joined = join_verdicts(source, runs, runs_table="the verdicts", any_model=any_model)
    rows = []
    for verdict, record in zip(verdicts, joined["verdicts"]):
        agree, cause, text = compare_cause(verdict, record, grader_evidence(record, inputs))
        rows.append({"run_id": verdict["run_id"], "instance_id": verdict["instance_id"],
                     "here": verdict["status"], "there": record["status"], "agree": agree,
                     "cause": cause, "evidence": text})
    return rows, joined


def compare_summary(rows, joined):
    """Counts: runs, agreements, disagreements by cause (in COMPARE_CAUSES order)."""
    causes = collections.Counter(r["cause"] for r in rows if not r["agree"])
    return {"runs": len(rows), "agree": sum(r["agree"] for r in rows),
            "disagree": sum(not r["agree"] for r in rows),
            "by_cause": {c: causes[c] for c in COMPARE_CAUSES if causes[c]},
            "grader": joined["format"], "joined_on": joined["key"],
            "model_check": joined["model_check"]}


def render_comparison(summary, rows, style, prov):
    """The comparison as text or Markdown: counts, counts by cause, the table run by run."""
    lines = [f"{'## ' if style == 'markdown' else ''}regrade.py beside {summary['grader']}: "
             f"{summary['runs']} run(s), {summary['agree']} agree, {summary['disagree']} "
             f"disagree (joined on {summary['joined_on']}; model: {summary['model_check']})", ""]
    if summary["by_cause"]:
        lines += [render_table(["cause", "runs"], list(summary["by_cause"].items()), style), ""]
    table = [[r["run_id"], r["instance_id"], r["here"], r["there"],
              "yes" if r["agree"] else "no", r["cause"] or "", r["evidence"]] for r in rows]
    lines += [render_table(["run", "instance", "here", "there", "agree", "cause", "evidence"],
                           table, style), ""]
    return "\n".join(lines) + render_provenance(prov, style)


def compare_output(args, inputs, verdicts, argv):
    """--compare REPORT: read the grader's output, compare run by run, print the report."""
    source = read_verdicts(inputs, args.compare)
    rows, joined = compare_verdicts(sorted(verdicts, key=lambda v: v["run_id"]), source,
                                    inputs, getattr(args, "any_model", False))
    summary = compare_summary(rows, joined)
    prov = provenance(__file__, __version__, argv, None, inputs,
                      output_flags=("--out", "--write-runs"))
    if args.format == "json":
        sys.stdout.write(to_json({"comparison": summary, "runs": rows, "provenance": prov}))
    else:
        sys.stdout.write(render_comparison(summary, rows, args.format, prov))
    return 0


# === Main ===
def timeout_seconds(text):
    """--timeout: seconds, above 0 and at most what a timer can wait (threading.TIMEOUT_MAX);
    inf or 1e300 made the timer thread die with a traceback and the tests run unbounded.

    >>> timeout_seconds("2.5")
    2.5
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: not a number of seconds") from None
    if not 0 < value <= threading.TIMEOUT_MAX:
        raise argparse.ArgumentTypeError(f"{text}: must be above 0 and at most "
                                         f"{threading.TIMEOUT_MAX:.0f} seconds")
    return value


def build_parser():
    parser = Parser(__doc__ + HARNESS_MANUAL + INSTANCES_MANUAL + AUDIT_MANUAL, prog="regrade.py")
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
    parser.add_argument("--sandbox", choices=SANDBOXES, default="auto",
                        help="isolate the test command with bwrap, unshare (network and "
                        "processes only) or not at all (default: auto, bwrap where it runs, "
                        "else unshare)")
    parser.add_argument("--timeout", type=timeout_seconds, default=DEFAULT_TIMEOUT,
                        help=f"seconds per test command (default: {DEFAULT_TIMEOUT})")
    parser.add_argument("--repeat", type=int, default=None, metavar="K",
                        help="run the tests K times, flag changed outcomes as flaky (default: 1;"
                        f" {DEFAULT_MAKE_REPEAT} with --make-instances)")
    parser.add_argument("--p2p-skip-ok", action="store_true",
                        help="a skipped PASS_TO_PASS test does not fail the run")
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                        help="set a variable for the test command (repeatable)")
    parser.add_argument("--keep-env", action="append", default=[], metavar="NAME",
                        help="pass a variable through that would be scrubbed (repeatable)")
    parser.add_argument("--select", choices=("ids", "files"), default="ids",
                        help="run only the listed test ids, or their whole files "
                        "(default: ids)")
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
                        help="keep the throwaway folders (their paths go in the logs)")
    parser.add_argument("--progress", action="store_true",
                        help="show progress on stderr even when it is not a terminal")
    parser.add_argument("--timings", action="store_true",
                        help="show test and total seconds per run in the summary")
    parser.add_argument("--summarize", nargs="+", metavar="VERDICTS",
                        help="only summarise verdicts.jsonl files (e.g. shards'); with --out, "
                        "write the merged verdicts.jsonl, verdicts.csv and summary there")
    parser.add_argument("--make-instances", metavar="FIXES",
                        help="make SWE-bench instances from the fix commits listed in FIXES "
                        "(see 'Making instances' at the end)")
    parser.add_argument("--audit-instances", metavar="INSTANCES",
                        help="certify INSTANCES: schema, ids, K runs each side of gold "
                        "(see 'Auditing instances' at the end)")
    parser.add_argument("--write-fixed", metavar="FILE",
                        help="with --audit-instances: the instances with only the certain, "
                        "mechanical repairs, each recorded in the instance")
    parser.add_argument("--compare", metavar="REPORT",
                        help="put each verdict beside another grader's report, run by run, "
                        "with the cause of each disagreement")
    parser.add_argument("--any-model", action="store_true",
                        help="with --compare: join a report of another model on instance id")
    add_agent_options(parser)
    add_common_options(parser, __version__, __file__)
    return parser


def output(args, inputs, verdicts, instance_ids, argv, skipped=0, stored=None, regraded=None):
    """Write the verdict files (from every verdict stored in --out) and print the summary.

    After grading, `regraded` counts the runs graded again by why; the store has
    then written the files itself, under the folder's lock.
    """
    summary = summarise(verdicts)
    if regraded is not None:
        summary["reuse"] = {"reused": skipped, "regraded": sum(regraded.values()),
                            "regraded_because": dict(sorted(regraded.items()))}
    if args.out and regraded is None:
        stored = verdicts if stored is None else stored
        write_out(os.path.join(args.out, "verdicts.csv"), verdicts_csv(stored))
        write_out(os.path.join(args.out, "swebench_summary.json"),
                     to_json(swebench_summary(stored, instance_ids)))
    if args.compare:
        compare_output(args, inputs, verdicts, argv)
        return none_graded(summary)
    prov = provenance(__file__, __version__, argv, None, inputs,
                      output_flags=("--out", "--write-runs"))
    if args.format == "json":
        sys.stdout.write(to_json({"summary": summary,
                                  "swebench_summary": swebench_summary(verdicts, instance_ids),
                                  "runs": sorted(verdicts, key=lambda v: v["run_id"]),
                                  "provenance": prov}))
    else:
        sys.stdout.write(render_summary(summary, verdicts, args.format, prov,
                                        timings=args.timings, skipped=skipped))
    return none_graded(summary)


def none_graded(summary):
    """The exit status once the report is out: 1, with a last line on stderr saying
    why, when every run is a grading error (no run could be graded), else 0."""
    if not summary["runs"] or summary["grading_errors"] < summary["runs"]:
        return 0
    sys.stdout.flush()
    errors = {s: n for s, n in summary["statuses"].items() if s in GRADING_ERRORS and n}
    runs = ("the 1 run is a grading error" if summary["runs"] == 1 else
            f"all {summary['runs']} runs are grading errors")
    print(f"error: no run could be graded: {runs} "
          f"({', '.join(f'{s} {n}' for s, n in sorted(errors.items()))}); "
          f"no verdict says anything of the agent", file=sys.stderr)
    return 1


def summarize_only(args, argv):
    """--summarize: merge verdict files (the last line per run id wins) and report."""
    inputs, merged = Inputs(), {}
    for path in args.summarize:
        # A last line cut mid-line (kill -9, a full disk) is a run with no verdict yet;
        # a rerun of its shard grades it.
        for number, verdict in read_jsonl_records(inputs, path, cut_tail=True):
            if "run_id" not in verdict or "status" not in verdict:
                raise InputError(f"{path} line {number}: not a regrade.py verdict")
            merged[verdict["run_id"]] = verdict
    verdicts = list(merged.values())
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        target = os.path.join(args.out, "verdicts.jsonl")
        inputs.guard_output(target)
        store = RecordFile(args.out, "verdicts.jsonl", "run_id", FolderLock(args.out))
        try:
            with store.lock:
                store.rewrite(sorted(verdicts, key=lambda v: v["run_id"]))
        except OSError as exc:
            raise InputError(f"--out {args.out}: cannot lock ({exc.strerror or exc})") from None
    return output(args, inputs, verdicts, sorted({v["instance_id"] for v in verdicts}), argv)


def _main(argv):
    args = build_parser().parse_args(argv)
    if args.summarize:
        return summarize_only(args, argv)
    if args.compare and (args.make_instances or args.audit_instances):
        raise InputError("--compare goes with INSTANCES RUNS or --summarize, not with "
                         "--make-instances or --audit-instances")
    if args.make_instances:
        return make_instances(args, argv)
    if args.audit_instances:
        return audit_instances(args, argv)
    if args.write_fixed:
        raise InputError("--write-fixed goes with --audit-instances")
    args.repeat = 1 if args.repeat is None else args.repeat
    if not args.instances or not args.runs:
        raise InputError("expected INSTANCES and RUNS (or --summarize FILE...); see --help")
    for flag, value, low in (("--jobs", args.jobs, 1), ("--repeat", args.repeat, 1),
                             ("--fuzz", args.fuzz, 0)):
        if value < low:
            raise InputError(f"{flag} {value}: must be at least {low}")
    if not args.repo:
        raise InputError("--repo is required: a clone or a git bundle of the repository")
    check_out(args)
    inputs = Inputs(task_map=args.task_map)
    instances, invalid = read_instances(args.instances, inputs)
    runs = load_runs(args.runs, instances, args.instances, inputs, invalid)
    if args.instance:
        unknown = sorted(set(args.instance) - set(instances))
        if unknown:
            raise InputError(f"--instance {unknown[0]}: not in {args.instances}")
        runs = [r for r in runs if r["instance_id"] in set(args.instance)]
    if args.shard:
        shard = parse_shard(args.shard)
        runs = [r for r in runs if in_shard(r["run_id"], shard)]
    settings = new_settings(args, repeat=args.repeat)
    check_test_commands(instances, args.runner, args.test_cmd)
    needs_pytest = pytest_needed([instances[r["instance_id"]] for r in runs
                                  if r["instance_id"] in instances], args.runner, args.test_cmd)
    check_interpreter(settings, args.python, needs_pytest, distributions=True)
    session = Session(settings, args, argv, inputs, needs_pytest=needs_pytest, jobs=args.jobs,
                      private=[args.instances, args.runs, args.task_map], instances=instances)
    if args.write_runs:
        write_runs(inputs, args.runs, args.write_runs)
    sweep_temporary(args.out)
    with session:
        try:
            return grade_all(session, runs)
        except Interrupted:
            # A signal killed git while the repositories were opened: no run started.
            raise JobStopped(stopped_line(StopSignals.received() or signal.SIGINT, 0, len(runs),
                                          args.out),
                             SIGNAL_STATUS.get(StopSignals.received(), 130))


def open_sources(session, runs):
    """Open each run's repository and resolve its base commit: (the runs as new records, each
    with its full base commit, {run id: Source}).

    A base commit the repository lacks makes that run a grading error; each run
    also gets its place in history order (repository, commit time, commit).
    """
    sources, source_of = {}, {}
    for run in runs:
        if run.get("grading_error"):
            continue
        instance = session.instances[run["instance_id"]]
        path = session.repo_path(instance["repo"], instance["where"])
        sources[path] = session.source(path)
        source_of[run["run_id"]] = sources[path]
    found = {}          # run id: what resolving its base commit found
    for path, source in sorted(sources.items()):
        mine = [r for r in runs if source_of.get(r["run_id"]) is source]
        resolved = source.resolve(r["base_commit"] for r in mine)
        source.identity["base_commits_found"] = all(resolved.values())
        times = source.commit_times(h for h in resolved.values() if h)
        for run in mine:
            full = resolved.get(run["base_commit"])
            if full is None:
                found[run["run_id"]] = {
                    "grading_error": f"base commit {run['base_commit']} of "
                                     f"{run['instance_id']} is not in {path}",
                    "order": (path, 0, run["base_commit"])}
            else:
                found[run["run_id"]] = {"base_commit": full,
                                        "order": (path, times.get(full, 0), full)}
    return [dict(run, **found.get(run["run_id"], {})) for run in runs], source_of


def grade_all(session, runs):
    """Open the repositories, check every base commit, grade what is not graded yet, report."""
    args, argv, inputs = session.args, session.argv, session.inputs
    instances, settings = session.instances, session.settings
    runs, source_of = open_sources(session, runs)
    runs = [keyed_run(run, instances.get(run["instance_id"]), settings) for run in runs]
    store = VerdictStore(args.out, inputs) if args.out else None
    verdicts, todo, regraded = {}, [], collections.Counter()
    for run in runs:
        # Runs that cannot be graded at all are re-checked every time (it is instant).
        earlier = store.graded(run) if store and not args.force and \
            not run.get("grading_error") else None
        if earlier:
            verdicts[run["run_id"]] = earlier
            continue
        todo.append(run)
        stored = store.previous.get(run["run_id"]) if store else None
        if stored is not None and not run.get("grading_error"):
            regraded[regrade_reason(stored, run, args.force)] += 1
    # Runs go in history order, those of one base commit together, so kept trees
    # switch commits seldom and by little. Verdicts are reported in input order.
    todo.sort(key=lambda r: r.get("order") or ("", 0, ""))
    progress = Progress(len(todo), args.progress or sys.stderr.isatty())

    def finish(result):
        verdict, log_text = result
        if store:
            try:
                store.add(verdict, log_text)
            except (OSError, InputError) as exc:
                stop_tests()
                graded = sum(1 for r in todo if r["run_id"] in verdicts)
                raise JobStopped(write_failure(args.out, exc, store.safe_count(),
                                               len(todo) - graded), 2) from None
        verdicts[verdict["run_id"]] = verdict
        progress.update(verdict)     # only now: its whole line is on disk

    def one(run):
        if _STOPPING.is_set():
            raise Interrupted()
        if run.get("grading_error"):
            return (error_verdict(run, session, run["grading_error"]),
                    f"run {run['run_id']}: grading error: {run['grading_error']}\n")
        return grade_run(run, instances[run["instance_id"]], source_of[run["run_id"]], settings,
                         session)
    try:
        grade_runs(todo, one, finish, args.jobs)
    except KeyboardInterrupt:
        stop_tests()
        raise
    finally:
        if store:           # each run once in verdicts.jsonl, however the job ended
            store.compact(sorted(instances))
    if StopSignals.received() is not None:
        graded = sum(1 for r in todo if r["run_id"] in verdicts)
        signum = StopSignals.received()
        raise JobStopped(stopped_line(signum, graded + len(runs) - len(todo), len(todo) - graded,
                                      args.out), SIGNAL_STATUS.get(signum, 128 + signum))
    ordered = [verdicts[r["run_id"]] for r in runs if r["run_id"] in verdicts]
    return output(args, inputs, ordered, sorted(instances), argv,
                  skipped=len(runs) - len(todo),
                  stored=list(store.previous.values()) if store else None,
                  regraded=regraded)


def stopping_body(argv):
    """_main, where an error that follows the job's own stop signal is that signal's line."""
    try:
        return _main(argv)
    except (InputError, GradingError, Interrupted):
        signum = StopSignals.received()
        if signum is None:
            raise
        raise JobStopped(starting_line(signum), SIGNAL_STATUS.get(signum, 128 + signum)) from None


def stop_tests():
    """Start no other test command and kill those running (Ctrl-C, a full disk)."""
    kill_live_groups()


def grade_runs(todo, one, finish, jobs):
    """Grade each run with one() and hand each verdict to finish(), `jobs` at a time.

    Once the job is stopping no run starts; a run it cut short (Interrupted) has no
    verdict, while every run decided before it is still finished (written).
    """
    if jobs == 1:
        for run in todo:
            if _STOPPING.is_set():
                break
            try:
                result = one(run)
            except Interrupted:
                break
            finish(result)
        return
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(one, run) for run in todo]
        try:
            for future in concurrent.futures.as_completed(futures):
                try:
                    result = future.result()
                except Interrupted:
                    continue
                finish(result)
        except BaseException:
            for future in futures:
                future.cancel()
            stop_tests()
            raise


def main(argv=None):
    """Run the command line; return the exit status (143 after SIGTERM, 129 after SIGHUP,
    130 after Ctrl-C, 2 where --out cannot be written).

    The stop signals are handled from the first line on: a signal while the inputs
    are read, the interpreter probed or the repository opened stops the job as one
    during the runs does (a step it broke is no bad input, and no verdict).
    """
    try:
        with StopSignals():
            return run_main(stopping_body, argv)
    except JobStopped as exc:
        try:
            print(f"error: {exc}", file=sys.stderr)
        except OSError:         # SIGHUP: the terminal may be gone
            pass
        return exc.status


if __name__ == "__main__":
    sys.exit(main())
