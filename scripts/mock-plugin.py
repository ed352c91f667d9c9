#!/usr/bin/env python3
"""Deterministic mock plugin for laika-host's `command` runtime.

Speaks `laika_llm_plugin_v1` (docs/plugin-protocol.md): reads ONE JSON
request on stdin, writes ONE JSON response on stdout. It never calls a model:
the answer is built from the request (ids copied, the first sentence of the
summary document quoted as a citation), so the same request always gets the
same answer.

Usage (no shell involved; the host runs it as `python3 mock-plugin.py ...`):

    mock-plugin.py [--mode MODE] [--pid-file PATH] [--size BYTES]

MODE (else $LAIKA_MOCK_MODE, else `ok`):
  ok           a valid llmcp response packet as a JSON object in "answer"
  ok-text      the same packet inside prose and a code fence, as a string
  error        {"error": "..."} (and a line on stderr)
  garbage      not JSON on stdout, a marker line on stderr
  sleep        starts a helper process, then sleeps 120 s (timeouts, cancel)
  crash        half a response, then abort() (killed by SIGABRT)
  huge-stderr  BYTES (default 8 MiB) of stderr, then a valid answer
  huge-stdout  a valid answer padded with BYTES (default 8 MiB) of notes
  tool-call    tool_loop_step: a tool_call while the transcript is empty,
               then a final_answer; llmcp_turn: same as ok
  env          answer is the sorted list of environment variable names

--pid-file PATH: write this process's pid (and, in sleep mode, the helper's
on a second line) to PATH before answering.
"""

import json
import os
import subprocess
import sys
import time

PROTOCOL = "laika_llm_plugin_v1"
SUMMARY_DOC_ID = "doc:web:summary"
PREFIXES = ("H1:", "H2:", "H3:", "H4:", "H5:", "H6:", "Summary:", "Caption:")
MIB = 1 << 20


def parse_args(argv):
    opts = {"mode": os.environ.get("LAIKA_MOCK_MODE", "ok"), "pid_file": None, "size": 8 * MIB}
    i = 0
    while i < len(argv):
        arg = argv[i]
        value = argv[i + 1] if i + 1 < len(argv) else None
        if arg == "--mode" and value is not None:
            opts["mode"] = value
        elif arg == "--pid-file" and value is not None:
            opts["pid_file"] = value
        elif arg == "--size" and value is not None:
            opts["size"] = int(value)
        else:
            fail(f"unknown argument {arg!r}")
        i += 2
    return opts


def fail(message, status=1):
    sys.stdout.write(json.dumps({"error": message}))
    sys.stdout.flush()
    sys.exit(status)


def write_pid_file(path, pids):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(str(p) for p in pids) + "\n")
    os.replace(tmp, path)  # the reader never sees half a file


def first_sentence(text):
    """The first sentence of the first non-empty line, structure prefix off."""
    for line in text.splitlines():
        line = line.strip()
        for prefix in PREFIXES:
            if line.startswith(prefix):
                line = line[len(prefix):].strip()
        if not line:
            continue
        for i, ch in enumerate(line):
            if ch in ".!?" and (i + 1 == len(line) or line[i + 1] == " "):
                return line[: i + 1]
        return line[:300]
    return ""


def summary_text(packet):
    for doc in packet.get("context", {}).get("documents", []):
        if doc.get("doc_id") == SUMMARY_DOC_ID:
            content = doc.get("content") or {}
            text = content.get("text")
            if isinstance(text, str):
                return text
    return ""


def response_packet(packet, question):
    quote = first_sentence(summary_text(packet))
    paragraphs = [f"You asked: {question}"]
    citations = []
    if quote:
        paragraphs.insert(0, f"The page begins: {quote}")
        citations.append({"doc_id": SUMMARY_DOC_ID, "quote": quote})
    else:
        paragraphs.insert(0, "The page does not say.")
    assistant = {
        "title": "Mock answer",
        "render": {
            "type": "doc",
            "children": [
                {"type": "paragraph", "children": [{"type": "text", "text": p}]}
                for p in paragraphs
            ],
        },
        "citations": citations,
    }
    task = packet.get("input", {}).get("task", {})
    if task.get("name") == "web.extract":
        fields = task.get("args", {}).get("fields", [])
        names = fields if isinstance(fields, list) else list(fields)
        assistant["data"] = {str(n): None for n in names}
    return {
        "protocol": {"name": "laika.llmcp", "version": 1},
        "id": "mock-" + str(packet.get("id", "")),
        "type": "response",
        "created_at": packet.get("created_at", "1970-01-01T00:00:00.000Z"),
        "conversation": packet.get("conversation", {}),
        "sender": {"role": "assistant"},
        "in_reply_to": {"request_id": packet.get("id", "")},
        "assistant": assistant,
        "tool_calls": [],
    }


def tool_loop_step(task):
    tools = task.get("tools") or []
    transcript = task.get("transcript") or []
    if not transcript and tools:
        # A web search when it is offered (Laika's registry), else the first tool.
        names = [t.get("name") for t in tools]
        name = "search" if "search" in names else names[0]
        return {"tool_call": {"name": name, "args": {"query": task.get("question", "")}}}
    quote = first_sentence(summary_text(task.get("packet", {})))
    last = transcript[-1] if transcript else {}
    # Cited as the v3 specification does: a bare id from `schema`, and a quote.
    contexts = (task.get("schema") or {}).get("contexts") or [SUMMARY_DOC_ID]
    return {
        "final_answer": {
            "answer": f"{quote} (after {len(transcript)} tool call(s): {last.get('tool', 'none')})",
            "citations": [contexts[0], quote],
            "notes": ["mock plugin"],
        }
    }


def main():
    opts = parse_args(sys.argv[1:])
    mode = opts["mode"]
    raw = sys.stdin.buffer.read()
    try:
        request = json.loads(raw)
    except ValueError as e:
        fail(f"mock plugin: request is not JSON: {e}")
    if not isinstance(request, dict) or request.get("protocol") != PROTOCOL:
        fail(f"mock plugin: unsupported protocol (want {PROTOCOL})")
    task = request.get("task") or {}
    kind = task.get("kind")

    pids = [os.getpid()]
    if mode == "sleep":
        helper = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(120)"],
            stdin=subprocess.DEVNULL,
        )
        pids.append(helper.pid)
    if opts["pid_file"]:
        write_pid_file(opts["pid_file"], pids)

    if mode == "sleep":
        time.sleep(120)
        fail("mock plugin: woke up after 120 s")
    if mode == "error":
        sys.stderr.write("mock: loading model weights...\n")
        fail("mock plugin: model not loaded (mode=error)", status=0)
    if mode == "garbage":
        sys.stderr.write("mock: garbage mode, stderr tail marker\n")
        sys.stdout.write("this is not JSON {")
        return
    if mode == "crash":
        sys.stdout.write('{"answer": ')
        sys.stdout.flush()
        sys.stderr.write("mock: crashing now\n")
        sys.stderr.flush()
        os.abort()
    if mode == "env":
        sys.stdout.write(json.dumps({"answer": json.dumps(sorted(os.environ))}))
        return
    if mode == "huge-stderr":
        chunk = ("e" * 1023 + "\n") * 64
        left = opts["size"]
        while left > 0:
            piece = chunk[: min(left, len(chunk))]
            sys.stderr.write(piece)
            left -= len(piece)
        sys.stderr.write("mock: end of huge stderr\n")
        sys.stderr.flush()

    if kind == "tool_loop_step":
        if mode != "tool-call":
            fail("mock plugin: tool_loop_step needs --mode tool-call")
        sys.stdout.write(json.dumps(tool_loop_step(task)))
        return
    if kind != "llmcp_turn":
        fail(f"mock plugin: unknown task kind {kind!r}")

    packet = task.get("packet") or {}
    answer = response_packet(packet, task.get("question", ""))
    response = {"answer": answer, "notes": [f"mock plugin, mode {mode}, attempt {task.get('attempt')}"]}
    if mode == "ok-text":
        response["answer"] = "Here is the JSON:\n```json\n" + json.dumps(answer, indent=2) + "\n```\n"
    elif mode == "huge-stdout":
        response["notes"].append("n" * opts["size"])
    elif mode not in ("ok", "tool-call", "huge-stderr"):
        fail(f"mock plugin: unknown mode {mode!r}")
    sys.stdout.write(json.dumps(response))


if __name__ == "__main__":
    main()
