#!/usr/bin/env python3
"""A tiny integration plugin for laika-host's `integration.invoke`.

Speaks `laika_integration_v1` (docs/plugin-protocol.md, "Integrations"):
reads ONE JSON request on stdin, writes ONE JSON object on stdout. It is
both the tests' double and the smallest example of an integration.

Usage (the host runs it without a shell):

    mock-integration.py [--mode MODE]

MODE:
  echo     {"result": {"operation", "payload", "idempotency_key"}, "message"}
  error    {"error": "..."} and a line on stderr
  garbage  not JSON on stdout
  no-result  a JSON object without "result"
  hang     sleeps 120 s (the host's timeout kills it)
  flood    writes 1 MiB of JSON on stdout (over the host's cap)
  exit     a valid answer, then exit status 3
"""
import json
import sys
import time


def main() -> int:
    mode = "echo"
    if len(sys.argv) >= 3 and sys.argv[1] == "--mode":
        mode = sys.argv[2]
    request = json.load(sys.stdin)
    task = request.get("task", {})
    if request.get("protocol") != "laika_integration_v1" or task.get("kind") != "integration_invoke":
        print(json.dumps({"error": "not a laika_integration_v1 integration_invoke request"}))
        return 0
    answer = {
        "result": {
            "operation": task.get("operation"),
            "payload": task.get("payload"),
            "idempotency_key": task.get("idempotency_key"),
        },
        "message": f"Mock {task.get('integration')} did {task.get('operation')}.",
    }
    if mode == "echo":
        print(json.dumps(answer))
    elif mode == "error":
        print("mock integration: refusing on purpose", file=sys.stderr)
        print(json.dumps({"error": "the remote service said no"}))
    elif mode == "garbage":
        print("<html>this is not JSON</html>")
    elif mode == "no-result":
        print(json.dumps({"message": "done, but no result"}))
    elif mode == "hang":
        time.sleep(120)
    elif mode == "flood":
        sys.stdout.write(json.dumps({"result": "x" * (1 << 20)}))
    elif mode == "exit":
        print(json.dumps(answer))
        return 3
    else:
        print(json.dumps({"error": f"unknown mode {mode}"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
