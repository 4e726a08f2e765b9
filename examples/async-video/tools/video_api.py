"""video_api: the steps of the async video tools over the fake video API
(examples/async-video/api), shared by video_generate (webhooks) and
video_generate_polling (polling). Each tool's handler.py calls main.

Toolbelt runs a handler for each step of a job, with one JSON request on stdin:
  submit   start the render (the idempotency key makes a repeated submit start nothing new)
  poll     ask how the render goes (asyncType polling)
  webhook  read the API's verified webhook body (asyncType webhook)
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
    out = {"success": True, "status": task["status"], "progress": task.get("progress", 0),
           "message": task.get("message", ""), "taskId": task.get("taskId", ""), "externalId": task.get("id", "")}
    if task["status"] == "completed":
        out["result"] = task["result"]
    return out


def main():
    req = json.load(sys.stdin)
    op = req["operation"]
    if op == "submit":
        task = call("POST", "/generate", {"prompt": req["arguments"]["prompt"], "idempotencyKey": req["idempotencyKey"],
                                         "taskId": req["taskId"], "webhookUrl": req.get("webhookUrl", "")})
        answer = {"success": True, "externalId": task["id"]}
    elif op == "poll":
        answer = status(call("GET", "/tasks/" + req["externalId"]))
    elif op == "webhook":
        answer = status(req["body"])
    else:
        answer = {"success": False, "error": "unknown operation " + op}
    json.dump(answer, sys.stdout)

