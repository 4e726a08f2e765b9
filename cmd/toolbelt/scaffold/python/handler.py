"""One JSON request on stdin; one JSON response on stdout; progress and logs on stderr."""
import json
import sys


def handle(arguments, context):
    name = arguments["name"]
    return {"success": True, "result": {"greeting": f"Hello, {name}!"}, "summary": f"greeted {name}"}


def main():
    request = json.load(sys.stdin)
    print(json.dumps({"progress": 50, "message": "greeting"}), file=sys.stderr, flush=True)
    try:
        response = handle(request["arguments"], request.get("context", {}))
    except Exception as e:  # the model sees this, so say what to do
        response = {"success": False, "error": str(e), "canRetry": False, "suggestion": "Check the arguments."}
    json.dump(response, sys.stdout)


if __name__ == "__main__":
    main()
