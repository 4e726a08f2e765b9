"""text_stats: counts lines, words and characters; lists the most frequent words."""
import collections
import json
import re
import sys


def progress(percent, message):
    print(json.dumps({"progress": percent, "message": message}), file=sys.stderr, flush=True)


def main():
    request = json.load(sys.stdin)
    args = request["arguments"]
    text, top = args["text"], args.get("top", 5)
    progress(10, "counting")
    words = re.findall(r"[\w']+", text.lower())
    progress(60, "ranking words")
    common = collections.Counter(words).most_common(top)
    result = {
        "lines": len(text.splitlines()),
        "words": len(words),
        "characters": len(text),
        "top": [{"word": w, "count": n} for w, n in common],
    }
    summary = f"{result['words']} words, {result['lines']} lines"
    json.dump({"success": True, "result": result, "summary": summary}, sys.stdout)


if __name__ == "__main__":
    main()
