#!/usr/bin/env python3
"""Write the SYNTHETIC agent-output samples: python3 examples/agents/make_agents.py

Every file this writes is made up: structure only, in the layout each harness
writes (field names as in each project's own source), with four runs per format
of the one instance in ../regrade/instances.jsonl. The diffs are real diffs
against ../regrade/calc.bundle (taken from ../regrade/predictions.jsonl), so
regrade.py grades them. Each record carries "synthetic" in a field the harness
leaves free (a model name, a session id or a message).

The four runs (the same story in every format; the tests check the measures
derived from them against values worked out by hand):
    model-a  read, search, edit, test                  correct fix
    model-b  read, test, edit, test, edit               wrong fix; tests only before
                                                        its last edit
    model-c  read, search, bash                         never edits: no diff, and
                                                        the phase measures undefined
    model-d  read, edit, edit, test, read               correct fix
SWE-agent, mini-swe-agent and OpenHands record how each run ended, and that is the
claim their folders carry (no runs.csv beside them): model-c stops at a cost limit
(exit_cost, LimitsExceeded; OpenHands task_completed false), the others submit
(model-d's OpenHands finish says partial). Claude Code and Codex transcripts name no
task and carry no diff: runs.csv beside them names the task (and the claim), and
verdicts.csv stands in for a grader.
The same inputs always write the same bytes.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
INSTANCE = "example__calc-1"
START = 1767614400                      # 2026-01-05T12:00:00Z
# (kind, start second, duration) per call; then the second the run ends.
RUNS = {
    "model-a": ([("read", 10, 2), ("search", 15, 1), ("edit", 20, 1), ("test", 30, 5)], 40),
    "model-b": ([("read", 5, 1), ("test", 10, 4), ("edit", 20, 2), ("test", 30, 3),
                 ("edit", 40, 2)], 50),
    "model-c": ([("read", 5, 1), ("search", 10, 1), ("bash", 15, 2)], 25),
    "model-d": ([("read", 5, 1), ("edit", 10, 1), ("edit", 20, 1), ("test", 25, 5),
                 ("read", 35, 1)], 45),
}
DIFF_OF = {"model-a": "correct-fix", "model-b": "false-completion", "model-d": "correct-fix"}
COST = {"model-a": 0.5, "model-b": 0.25, "model-c": 0.125, "model-d": 0.75}
CLAIM = {"model-a": "yes", "model-b": "yes", "model-c": "no", "model-d": "equivocal"}
OPENHANDS_CLAIM = {"yes": "true", "no": "false", "equivocal": "partial"}
FINAL = {"yes": "Fixed clamp() and ran the tests: all pass.",
         "no": "I could not find a safe fix; nothing was changed.",
         "equivocal": "Changed clamp(); the reversed-range case may need more work."}
COMMANDS = {"read": "cat calc/ops.py", "search": "grep -rn clamp calc",
            "bash": "git status", "test": "python -m unittest tests.test_ops",
            "edit": "sed -i 's/return low$/return high/' calc/ops.py"}
SESSION = {"model-a": "synthetic-0a", "model-b": "synthetic-0b", "model-c": "synthetic-0c",
           "model-d": "synthetic-0d"}


def tokens(turn):
    """Turn k's usage (input, output): 100 (k + 1) and 10, so turn k counts 100 k + 110."""
    return 100 * (turn + 1), 10


def iso(second, zone="Z"):
    minutes, seconds = divmod(second, 60)
    return f"2026-01-05T12:{minutes:02d}:{seconds:02d}.000{zone}"


def diffs():
    found = {}
    with open(os.path.join(HERE, "..", "regrade", "predictions.jsonl"), encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            found[record["run_id"]] = record["model_patch"]
    with open(os.path.join(HERE, "..", "regrade", "instances.jsonl"), encoding="utf-8") as f:
        problem = json.loads(f.readline())["problem_statement"]
    return {m: found[DIFF_OF[m]] if m in DIFF_OF else "" for m in RUNS}, problem


def write(path, data, jsonl=False):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        if jsonl:
            out.write("".join(json.dumps(r, sort_keys=True) + "\n" for r in data))
        else:
            out.write(json.dumps(data, indent=1, sort_keys=True) + "\n")


def write_text(path, text):
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        out.write(text)


def claims_csv(key_of, task=False):
    header = "run_id,task_id,claimed\n" if task else "run_id,claimed\n"
    return header + "".join(f"{key_of(m)},{INSTANCE + ',' if task else ''}{CLAIM[m]}\n"
                            for m in sorted(RUNS))


def swe_agent(diff, problem):
    root = os.path.join(HERE, "swe-agent")
    for model, (calls, _) in RUNS.items():
        out = os.path.join(root, model)
        steps = [{"action": f"str_replace_editor view /repo/calc/ops.py" if kind == "read" else
                  "str_replace_editor str_replace /repo/calc/ops.py" if kind == "edit" else
                  "search_dir clamp" if kind == "search" else COMMANDS[kind],
                  "execution_time": seconds, "observation": "(synthetic)", "query": [],
                  "response": f"Next: {kind}.", "state": {}, "thought": f"Next: {kind}.",
                  "extra_info": {}} for kind, _, seconds in calls]
        steps.append({"action": "submit", "execution_time": 0.5, "observation": diff[model],
                      "query": [], "response": FINAL[CLAIM[model]], "state": {},
                      "thought": FINAL[CLAIM[model]], "extra_info": {}})
        info = {"exit_status": "exit_cost" if model == "model-c" else "submitted",
                "submission": diff[model] or None,
                "model_stats": {"instance_cost": COST[model], "tokens_sent": 1000,
                                "tokens_received": 100, "api_calls": len(steps)},
                "swe_agent_version": "synthetic"}
        pred = {"model_name_or_path": model, "instance_id": INSTANCE,
                "model_patch": diff[model] or None}
        write(os.path.join(out, INSTANCE, INSTANCE + ".traj"),
              {"environment": "synthetic", "history": [{"role": "user", "content": problem,
                                                        "message_type": "observation"}],
               "info": info, "trajectory": steps, "replay_config": "{}"})
        write(os.path.join(out, INSTANCE, INSTANCE + ".pred"), pred)
        write(os.path.join(out, "preds.json"), {INSTANCE: pred})


def mini_swe_agent(diff, problem):
    root = os.path.join(HERE, "mini-swe-agent")
    for model, (calls, end) in RUNS.items():
        messages = [{"role": "system", "content": "You are a helpful assistant (synthetic)."},
                    {"role": "user", "content": problem, "extra": {"timestamp": START}}]
        turn = 0
        for kind, start, seconds in calls:
            prompt, completion = tokens(turn)
            messages.append({"role": "assistant", "content": f"```bash\n{COMMANDS[kind]}\n```",
                             "extra": {"actions": [{"command": COMMANDS[kind]}],
                                       "timestamp": START + start,
                                       "response": {"usage": {"prompt_tokens": prompt,
                                                              "completion_tokens": completion}}}})
            messages.append({"role": "user", "content": "<returncode>0</returncode>",
                             "extra": {"returncode": 0, "timestamp": START + start + seconds}})
            turn += 1
        prompt, completion = tokens(turn)
        messages.append({"role": "assistant", "content": FINAL[CLAIM[model]],
                         "extra": {"actions": [], "timestamp": START + end,
                                   "response": {"usage": {"prompt_tokens": prompt,
                                                          "completion_tokens": completion}}}})
        status = "LimitsExceeded" if model == "model-c" else "Submitted"
        messages.append({"role": "exit", "content": status,
                         "extra": {"exit_status": status, "submission": diff[model]}})
        info = {"exit_status": status, "submission": diff[model],
                "model_stats": {"instance_cost": COST[model], "api_calls": turn + 1},
                "config": {"model": {"model_name": model}}, "mini_version": "synthetic"}
        out = os.path.join(root, model)
        write(os.path.join(out, INSTANCE, INSTANCE + ".traj.json"),
              {"info": info, "messages": messages, "instance_id": INSTANCE,
               "trajectory_format": "mini-swe-agent-1.1"})
        write(os.path.join(out, "preds.json"),
              {INSTANCE: {"model_name_or_path": model, "instance_id": INSTANCE,
                          "model_patch": diff[model]}})


def openhands_history(model, calls, end, problem):
    history = [{"id": 0, "timestamp": iso(0, ""), "source": "agent", "action": "system",
                "args": {"content": "You are OpenHands (synthetic)."}, "message": ""},
               {"id": 1, "timestamp": iso(0, ""), "source": "user", "action": "message",
                "args": {"content": problem}, "message": problem}]
    for turn, (kind, start, seconds) in enumerate(calls):
        action, args, function = {
            "read": ("read", {"path": "/workspace/calc/ops.py"}, "str_replace_editor"),
            "edit": ("edit", {"path": "/workspace/calc/ops.py", "command": "str_replace"},
                     "str_replace_editor"),
        }.get(kind, ("run", {"command": COMMANDS[kind]}, "execute_bash"))
        prompt, completion = tokens(turn)
        event_id = len(history)
        history.append({"id": event_id, "timestamp": iso(start, ""), "source": "agent",
                        "action": action, "args": args, "message": kind,
                        "tool_call_metadata": {
                            "function_name": function, "tool_call_id": f"call-{turn}",
                            "model_response": {"id": f"synthetic-{model}-{turn}",
                                               "usage": {"prompt_tokens": prompt,
                                                         "completion_tokens": completion}}}})
        history.append({"id": event_id + 1, "timestamp": iso(start + seconds, ""),
                        "source": "environment", "observation": action, "cause": event_id,
                        "content": "(synthetic)", "extras": {}, "message": ""})
    prompt, completion = tokens(len(calls))
    history.append({"id": len(history), "timestamp": iso(end, ""), "source": "agent",
                    "action": "finish", "message": "finish",
                    "args": {"final_thought": FINAL[CLAIM[model]], "outputs": {},
                             "task_completed": OPENHANDS_CLAIM[CLAIM[model]], "thought": ""},
                    "tool_call_metadata": {
                        "function_name": "finish", "tool_call_id": "call-finish",
                        "model_response": {"id": f"synthetic-{model}-final",
                                           "usage": {"prompt_tokens": prompt,
                                                     "completion_tokens": completion}}}})
    return history


def openhands(diff, problem):
    for model, (calls, end) in RUNS.items():
        turns = len(calls) + 1
        record = {"instance_id": INSTANCE, "instruction": problem,
                  "metadata": {"agent_class": "CodeActAgent", "llm_config": {"model": model},
                               "note": "synthetic"},
                  "history": openhands_history(model, calls, end, problem),
                  "metrics": {"accumulated_cost": COST[model],
                              "accumulated_token_usage": {
                                  "prompt_tokens": sum(tokens(t)[0] for t in range(turns)),
                                  "completion_tokens": sum(tokens(t)[1] for t in range(turns))}},
                  "test_result": {"git_patch": diff[model]}, "error": None}
        write(os.path.join(HERE, "openhands", model, "output.jsonl"), [record], jsonl=True)


CLAUDE_INPUT = {"read": ("Read", {"file_path": "/repo/calc/ops.py"}),
                "search": ("Grep", {"pattern": "clamp"}),
                "edit": ("Edit", {"file_path": "/repo/calc/ops.py", "old_string": "return low",
                                  "new_string": "return high"}),
                "test": ("Bash", {"command": COMMANDS["test"]}),
                "bash": ("Bash", {"command": COMMANDS["bash"]})}


def claude_entry(session, number, second, kind, message, stream):
    entry = {"type": kind, "message": message}
    if stream:
        entry["session_id"] = session
    else:
        entry.update(sessionId=session, uuid=f"{session}-{number}", timestamp=iso(second),
                     parentUuid=f"{session}-{number - 1}" if number else None)
    return entry


def claude_code(model, calls, end, problem, stream):
    session, entries = SESSION[model], []

    def add(second, kind, message):
        entries.append(claude_entry(session, len(entries), second, kind, message, stream))
    if not stream:                           # transcripts may open with housekeeping
        entries.append({"type": "file-history-snapshot", "messageId": f"msg-{session}-0",
                        "snapshot": {}, "isSnapshotUpdate": False})
    if stream:
        entries.append({"type": "system", "subtype": "init", "session_id": session,
                        "model": "claude-synthetic", "tools": sorted({t for t, _ in
                                                                      CLAUDE_INPUT.values()})})
    add(0, "user", {"role": "user", "content": problem})
    for turn, (kind, start, seconds) in enumerate(calls):
        name, given = CLAUDE_INPUT[kind]
        prompt, completion = tokens(turn)
        usage = {"input_tokens": prompt - 40, "cache_read_input_tokens": 40,
                 "cache_creation_input_tokens": 0, "output_tokens": completion}
        base = {"id": f"msg-{session}-{turn}", "role": "assistant",
                "model": "claude-synthetic", "stop_reason": "tool_use", "usage": usage}
        # Claude Code writes one entry per content block, each repeating the usage (the
        # final usage, with its stop_reason, as newer versions write it).
        add(start, "assistant", dict(base, content=[{"type": "text", "text": f"Next: {kind}."}]))
        add(start, "assistant", dict(base, content=[{"type": "tool_use", "id": f"tu-{turn}",
                                                     "name": name, "input": given}]))
        add(start + seconds, "user", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"tu-{turn}", "content": "(synthetic)"}]})
    prompt, completion = tokens(len(calls))
    add(end, "assistant", {"id": f"msg-{session}-final", "role": "assistant",
                           "model": "claude-synthetic",
                           "content": [{"type": "text", "text": FINAL[CLAIM[model]]}],
                           "stop_reason": "end_turn",
                           "usage": {"input_tokens": prompt, "output_tokens": completion}})
    if stream:
        entries.append({"type": "result", "subtype": "success", "is_error": False,
                        "result": FINAL[CLAIM[model]], "session_id": session,
                        "num_turns": len(calls) + 1, "total_cost_usd": COST[model],
                        "duration_ms": end * 1000, "usage": {}})
    return entries


CODEX_CALL = {"read": COMMANDS["read"], "search": COMMANDS["search"], "bash": COMMANDS["bash"],
              "test": COMMANDS["test"]}


def codex(model, calls, end, problem):
    session, lines = SESSION[model], []

    def add(second, kind, payload):
        lines.append({"timestamp": iso(second), "type": kind, "payload": payload})
    add(0, "session_meta", {"id": session, "timestamp": iso(0), "cwd": "/repo",
                            "originator": "codex_exec", "cli_version": "synthetic"})
    add(0, "turn_context", {"model": "gpt-synthetic", "cwd": "/repo"})
    add(0, "response_item", {"type": "message", "role": "user",
                             "content": [{"type": "input_text", "text": problem}]})
    used = [0, 0]
    for turn, (kind, start, seconds) in enumerate(calls):
        call_id = f"call-{turn}"
        if kind == "edit":
            add(start, "response_item", {"type": "custom_tool_call", "name": "apply_patch",
                                         "call_id": call_id, "input": "*** Begin Patch"})
            output = {"type": "custom_tool_call_output", "call_id": call_id, "output": "ok"}
        else:
            arguments = json.dumps({"command": ["bash", "-lc", CODEX_CALL[kind]]})
            add(start, "response_item", {"type": "function_call", "name": "shell",
                                         "arguments": arguments, "call_id": call_id})
            output = {"type": "function_call_output", "call_id": call_id, "output": "ok"}
        codex_tokens(add, start, turn, used, repeat=turn == 1)
        add(start + seconds, "response_item", output)
    add(end, "response_item", {"type": "message", "role": "assistant",
                               "content": [{"type": "output_text",
                                            "text": FINAL[CLAIM[model]]}]})
    codex_tokens(add, end, len(calls), used)
    add(end, "event_msg", {"type": "task_complete", "last_agent_message": FINAL[CLAIM[model]]})
    return lines


def codex_tokens(add, second, turn, used, repeat=False):
    prompt, completion = tokens(turn)
    used[0] += prompt
    used[1] += completion
    info = {"last_token_usage": {"input_tokens": prompt, "output_tokens": completion},
            "total_token_usage": {"input_tokens": used[0], "output_tokens": used[1]}}
    for _ in range(2 if repeat else 1):      # Codex may report the same usage twice
        add(second, "event_msg", {"type": "token_count", "info": info})


def transcripts(problem):
    root = os.path.join(HERE, "claude-code")
    for model, (calls, end) in RUNS.items():
        stream = model == "model-d"          # a `claude -p --output-format stream-json` log
        name = f"{SESSION[model]}.stream.jsonl" if stream else f"{SESSION[model]}.jsonl"
        write(os.path.join(root, name), claude_code(model, calls, end, problem, stream), jsonl=True)
        write(os.path.join(HERE, "codex", f"rollout-2026-01-05T12-00-00-{SESSION[model]}.jsonl"),
              codex(model, calls, end, problem), jsonl=True)
    for folder in ("claude-code", "codex"):
        write_text(os.path.join(HERE, folder, "runs.csv"),
                   claims_csv(lambda m: SESSION[m], task=True))
        write_text(os.path.join(HERE, folder, "verdicts.csv"),
                   "run_id,instance_id,completed,status\n" + "".join(
                       f"{SESSION[m]},{INSTANCE},{'true' if m in ('model-a', 'model-d') else 'false'},"
                       f"{'resolved' if m in ('model-a', 'model-d') else 'unresolved'}\n"
                       for m in sorted(RUNS)))


def main():
    diff, problem = diffs()
    swe_agent(diff, problem)
    mini_swe_agent(diff, problem)
    openhands(diff, problem)
    transcripts(problem)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
