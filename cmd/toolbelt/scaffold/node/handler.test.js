// Runs the handler with a request and checks its answer: node --test
"use strict";
const { test } = require("node:test");
const assert = require("node:assert");
const { execFileSync } = require("node:child_process");
const path = require("node:path");

test("greets", () => {
  const request = { operation: "call", arguments: { name: "Ada" }, callId: "t1", context: {} };
  const out = execFileSync(process.execPath, [path.join(__dirname, "handler.js")], {
    input: JSON.stringify(request),
    stdio: ["pipe", "pipe", "ignore"],
  });
  const response = JSON.parse(out);
  assert.strictEqual(response.success, true);
  assert.strictEqual(response.result.greeting, "Hello, Ada!");
});
