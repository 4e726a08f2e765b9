"""video_api: the steps of the async video tools over the fake video API
(examples/async-video/api), shared by video_generate (webhooks) and
video_generate_polling (polling). Each tool's handler.py calls main.

Toolbelt runs a handler for each step of a job, with one JSON request on stdin:
  submit   start the render (the idempotency key makes a repeated submit start nothing new);
           answer the API's id of the render as "taskId"
  poll     ask how the render goes, given that "taskId" (asyncType polling)
  webhook  read the API's verified webhook "payload" and say which render it is about (asyncType webhook)
"""
import json
import os
import sys
import urllib.request

API = os.environ.get("VIDEO_API_URL", "http://127.0.0.1:7430")


def call(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(API + path, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.load(resp)


def status(task):
    out = {"status": task["status"], "progress": task.get("progress", 0), "message": task.get("message", ""),
           "taskId": task.get("id", ""), "jobId": task.get("jobId", "")}
    if task["status"] == "completed":
        out["result"] = task["result"]
    return out


def main():
    req = json.load(sys.stdin)
    op = req["operation"]
    if op == "submit":
        task = call("POST", "/generate", {"prompt": req["arguments"]["prompt"], "idempotencyKey": req["idempotencyKey"],
                                         "jobId": req["jobId"], "webhookUrl": req.get("webhookUrl", "")})
        answer = {"success": True, "taskId": task["id"]}
    elif op == "poll":
        answer = status(call("GET", "/tasks/" + req["taskId"]))
    elif op == "webhook":
        answer = status(req["payload"])
    else:
        answer = {"success": False, "error": "unknown operation " + op}
    json.dump(answer, sys.stdout)

