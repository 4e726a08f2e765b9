"""reminder: an async directory tool (asyncType polling) that keeps no state.

Toolbelt runs this handler for each step of the job, with one JSON request on
stdin (docs/directory-tools.md, "Async tools"):
  submit  {"operation": "submit", "arguments": {...}, "idempotencyKey": ..., "jobId": ...}
          -> {"success": true, "taskId": ...}: the task id carries when the
             reminder is due and its message, so nothing is stored anywhere
  poll    {"operation": "poll", "taskId": ...}
          -> {"status": "processing", "progress": 40, "message": "..."} until due,
             then {"status": "completed", "result": "Reminder: ..."}
"""
import base64
import json
import sys
import time


def encode(task):
    return "rem_" + base64.urlsafe_b64encode(json.dumps(task).encode()).decode()


def decode(task_id):
    if not task_id.startswith("rem_"):
        raise ValueError("not a reminder task id: " + task_id[:40])
    return json.loads(base64.urlsafe_b64decode(task_id[4:]))


def main():
    req = json.load(sys.stdin)
    op = req.get("operation")
    if op == "submit":
        args = req["arguments"]
        task = {"due": time.time() + args["seconds"], "seconds": args["seconds"], "message": args["message"]}
        answer = {"success": True, "taskId": encode(task)}
    elif op == "poll":
        try:
            task = decode(req["taskId"])
        except ValueError as e:
            answer = {"success": False, "error": str(e)}
        else:
            left = task["due"] - time.time()
            if left <= 0:
                answer = {"status": "completed", "progress": 100, "result": "Reminder: " + task["message"]}
            else:
                done = 100 * (1 - left / task["seconds"])
                answer = {"status": "processing", "progress": max(0, min(99, round(done))), "message": "%d s to go" % (int(left) + 1)}
    else:
        answer = {"success": False, "error": "reminder is a polling tool: unexpected operation %r" % op}
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()
