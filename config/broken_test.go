package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tools"
	"github.com/toolbelt/toolbelt/tools/dir"
)

// brokenConfigs are broken configurations and every problem config check
// reports for each, exactly: {{dir}} is a directory that exists, holding a
// file named file.
var brokenConfigs = []struct{ yaml, want string }{
	// Keys that do not exist.
	{"limits:\n  timout: 5m\n", `toolbelt.yaml:2:3: limits.timout: unknown key; did you mean "timeout"?`},
	{"limits:\n  zzqx: 1\n", `toolbelt.yaml:2:3: limits.zzqx: unknown key: limits takes eventMaxChars, imageMaxBytes, imageMaxSide, maxResultChars, maxResultTokens, maxTimeout, timeout, updateInterval`},
	{"workspace: .\nexec:\n  defaultTimeout: 30\n", `toolbelt.yaml:2:1: exec: unknown key: a tool's settings go under tools: (tools.exec); the top-level keys are workspace, data, database, retention, limits, confirm, mode, cron, console, tools, agents, channels, routes, principals, sandbox, subagents, mcpServers, mcp, hooks, skills, audit, jobs, model, providers, compaction, repair, toolRequests`},
	{"tools:\n  byProvider:\n    openai: {dney: [x]}\n", `toolbelt.yaml:3:14: tools.byProvider.openai.dney: unknown key; did you mean "deny"?`},
	{"agents:\n  a:\n    tool: {deny: [x]}\n", `toolbelt.yaml:3:5: agents.a.tool: unknown key; did you mean "tools"?`},
	{"tools:\n  denny: exec\n", `toolbelt.yaml:2:3: tools.denny is "exec": a tool's settings are a mapping; the policy keys are profile, allow, alsoAllow, deny, ask, byProvider; did you mean "deny"?`},
	{"mcpServers:\n  gh:\n    comand: gh-mcp\n", `toolbelt.yaml:3:5: mcpServers.gh.comand: unknown key; did you mean "command"?
toolbelt.yaml:3:11: mcpServers.gh needs a command (stdio) or a url (HTTP)`},
	{"mcpServers:\n  s:\n    command: x\n    oauth: {}\n", `toolbelt.yaml:4:12: mcpServers.s.oauth: OAuth is for servers reached over streamable HTTP (a url, type http); a stdio server gets its credentials in env`},
	{"mcpServers:\n  s:\n    url: https://h/mcp\n    oauth:\n      grant: password\n      tokenEndpointAuth: basic\n      clientMetadataUrl: http://h/client.json\n", `toolbelt.yaml:5:14: mcpServers.s.oauth.grant is "password": use authorization_code, client_credentials, enterprise
toolbelt.yaml:6:26: mcpServers.s.oauth.tokenEndpointAuth is "basic": use none, client_secret_basic, client_secret_post
toolbelt.yaml:7:26: mcpServers.s.oauth.clientMetadataUrl is "http://h/client.json": a client ID metadata document is served over https`},
	{"mcpServers:\n  s:\n    url: https://h/mcp\n    oauth:\n      grant: client_credentials\n      clientId: c\n", `toolbelt.yaml:5:14: mcpServers.s.oauth.grant is client_credentials, which needs clientId and clientSecret (or privateKeyFile)`},
	{"mcpServers:\n  s:\n    url: https://h/mcp\n    oauth:\n      grant: enterprise\n      clientId: c\n      idp:\n        issuer: https://idp\n        clientId: t\n        idToken: x\n        idTokenEnv: ID_TOKEN\n", `toolbelt.yaml:8:15: mcpServers.s.oauth.idp has more than one of idToken, idTokenCommand and idTokenEnv: keep one`},
	{"mcpServers:\n  s:\n    url: https://h/mcp\n    oauth:\n      grant: enterprise\n      clientId: c\n      idp:\n        issuer: https://idp\n        clientId: t\n", `toolbelt.yaml:5:14: mcpServers.s.oauth.grant is enterprise, which needs clientId and idp with issuer, clientId and idToken (or idTokenCommand, or idTokenEnv)`},
	// Values of the wrong type.
	{"confirm: true\n", `toolbelt.yaml:1:10: confirm is true: want a mapping of medium, onTimeout, timeout`},
	{"confirm:\n  medium: \"yes\"\n", `toolbelt.yaml:2:11: confirm.medium is "yes": want true or false`},
	{"limits:\n  maxResultChars: lots\n", `toolbelt.yaml:2:19: limits.maxResultChars is "lots": want a whole number`},
	{"limits:\n  timeout: soon\n", `toolbelt.yaml:2:12: limits.timeout is "soon": want a duration such as 30s, 5m or 1h`},
	{"limits:\n  timeout: 5\n", `toolbelt.yaml:2:12: limits.timeout is 5: want a duration such as 30s, 5m or 1h`},
	{"limits:\n  timeout: -5s\n", `toolbelt.yaml:2:12: limits.timeout is "-5s": want a duration such as 30s, 5m or 1h`},
	{"console:\n  approvalTimeout: a while\n", `toolbelt.yaml:2:20: console.approvalTimeout is "a while": want a duration such as 30s, 5m or 1h`},
	{"tools:\n  deny: {a: {b: c}}\n", `toolbelt.yaml:2:9: tools.deny is a mapping: want a tool name, alias, * glob or group: reference`},
	{"tools:\n  ask:\n    - tool: 5\n", `toolbelt.yaml:3:13: tools.ask[0].tool is 5: want a tool name, alias, * glob or group: reference`},
	{"agents: [a, b]\n", `toolbelt.yaml:1:9: agents is a list: want a mapping`},
	{"mcpServers:\n  gh:\n    command: gh\n    args: stdio\n", `toolbelt.yaml:4:11: mcpServers.gh.args is "stdio": want a list`},
	{"agents: [\n", `toolbelt.yaml:1:9: sequence end token ']' not found`},
	// Values out of range.
	{"mcp:\n  tokens:\n    - {token: x}\n", `toolbelt.yaml:3:7: mcp.tokens[0] has no principal: name who the token stands for`},
	{"mcp:\n  resources:\n    - {uri: test://a, text: x, file: a.txt}\n", `toolbelt.yaml:3:7: mcp.resources[0] needs either text or file (relative to toolbelt.yaml), not both`},
	{"mcp:\n  resources:\n    - {uriTemplate: 'test://a/{id', text: x}\n", `toolbelt.yaml:3:21: mcp.resources[0].uriTemplate "test://a/{id" is not a URI template (RFC 6570): incomplete expression: test://a/{id_`},
	{"mcp:\n  resources:\n    - {uri: notes, text: x}\n", `toolbelt.yaml:3:7: mcp.resources[0] is "notes": a resource's URI needs a scheme (scheme://…)`},
	{"mcp:\n  tokens: [{token: x, principal: a}, {token: x, principal: b}]\n", `toolbelt.yaml:2:38: mcp.tokens[1] repeats the token of an earlier entry: each token must map to one principal`},
	{"mcp:\n  oauth:\n    issuer: https://as.example\n    resource: tools\n", `toolbelt.yaml:4:15: mcp.oauth.resource is "tools": give an absolute http(s) URL`},
	{"mcp:\n  oauth:\n    issuer: https://as.example\n    resource: https://t.example/mcp\n    scopes: [a]\n    ownerScope: b\n", `toolbelt.yaml:6:17: mcp.oauth.ownerScope names the scope "b", which is not in mcp.oauth.scopes`},
	{"mcp:\n  maxSessions: -1\n", `toolbelt.yaml:2:16: mcp.maxSessions is -1: it must not be negative (0 means the default)`},
	{"mcp:\n  confirmFallback: ask\n", `toolbelt.yaml:2:20: mcp.confirmFallback is "ask": use console, deny or allow`},
	{"toolRequests:\n  sampling: ask\n", `toolbelt.yaml:2:13: toolRequests.sampling is "ask": use allow or deny`},
	{"audit:\n  sync: sometimes\n", `toolbelt.yaml:2:9: audit.sync is "sometimes": use none (the default: records reach the operating system before the result) or always (fsync before the result)`},
	{"confirm:\n  onTimeout: maybe\n", `toolbelt.yaml:2:14: confirm.onTimeout is "maybe": use deny or allow`},
	{"mode: acceptedits\n", `toolbelt.yaml:1:7: mode: "acceptedits" is not a permission mode: use default, acceptEdits, plan, dontAsk or bypass; did you mean "acceptEdits"?`},
	{"mode: yolo\n", `toolbelt.yaml:1:7: mode: "yolo" is not a permission mode: use default, acceptEdits, plan, dontAsk or bypass`},
	{"agents:\n  a:\n    mode: plann\n", `toolbelt.yaml:3:11: agents.a.mode: "plann" is not a permission mode: use default, acceptEdits, plan, dontAsk or bypass; did you mean "plan"?`},
	{"database: mysql://x\n", `toolbelt.yaml:1:11: database is "mysql://x": it must be a postgres:// URL (SQLite lives in the data directory)`},
	{"model: gpt-4o\n", `toolbelt.yaml:1:8: model is "gpt-4o": write it as PROVIDER/MODEL, e.g. anthropic/claude-sonnet-4-5`},
	{"agents:\n  a:\n    model: gpt-4o\n", `toolbelt.yaml:3:12: agents.a.model is "gpt-4o": write PROVIDER/MODEL, e.g. anthropic/claude-sonnet-4-5`},
	{"agents:\n  a:\n    subagents: {allow: [b]}\n", `toolbelt.yaml:3:24: agents.a.subagents.allow names "b", which is not a configured agent (configured: a)`},
	{"agents:\n  'a:b':\n    name: x\n", `toolbelt.yaml:3:9: agents: the id "a:b" may use only letters, digits, '_' and '-' (it becomes part of session keys)`},
	{"jobs:\n  webhookSecret: abc\n", `toolbelt.yaml:2:18: jobs.webhookSecret must be "whsec_" followed by base64 (the Standard Webhooks form); make one with: echo whsec_$(head -c 32 /dev/urandom | base64)`},
	{"jobs:\n  workers: -1\n", `toolbelt.yaml:2:12: jobs.workers is -1: use a positive number, or leave it out for 25`},
	{"hooks:\n  before:\n    - {name: x}\n", `toolbelt.yaml:3:7: hooks.before[0] needs a command or a url`},
	{"hooks:\n  stop:\n    - {url: 'http://127.0.0.1:9/h'}\n", `toolbelt.yaml:3:7: hooks.stop[0] needs a secret to sign its requests: "whsec_" followed by base64; make one with: echo whsec_$(head -c 32 /dev/urandom | base64)`},
	{"tools:\n  dirs:\n    - {trusted: true}\n", `toolbelt.yaml:3:7: tools.dirs[0] has no path: give the folder of the tools`},
	{"providers:\n  local: {url: localhost:8080}\n", `toolbelt.yaml:2:16: providers.local.url is "localhost:8080": it must be an http:// or https:// URL`},
	{"compaction:\n  threshold: 1.5\n", `toolbelt.yaml:2:12: compaction: threshold must be a share of the context window between 0 and 1, keepTurns and toolResultTurns must not be negative (0 means the default)`},
	{"agents:\n  a:\n    repair: {model: gpt-4o-mini}\n    compaction: {keepTurns: -1}\n", `toolbelt.yaml:3:21: agents.a.repair.model is "gpt-4o-mini": write it as PROVIDER/MODEL, e.g. anthropic/claude-sonnet-4-5
toolbelt.yaml:4:17: agents.a.compaction: threshold must be a share of the context window between 0 and 1, keepTurns and toolResultTurns must not be negative (0 means the default)`},
	{"limits:\n  maxResultChars: -1\n", `toolbelt.yaml:2:19: limits.maxResultChars is -1: it must not be negative`},
	// Paths that must exist.
	{"workspace: /nonexistent/project\n", `toolbelt.yaml:1:12: workspace is "/nonexistent/project", which does not exist: create it or give another directory`},
	{"workspace: nowhere\n", `toolbelt.yaml:1:12: workspace is "nowhere" ({{cwd}}/nowhere), which does not exist: create it or give another directory`},
	{"workspace: {{dir}}/file\n", `toolbelt.yaml:1:12: workspace is "{{dir}}/file", which is a file, not a directory`},
	{"agents:\n  a:\n    workspace: /nonexistent/project\n", `toolbelt.yaml:3:16: agents.a.workspace is "/nonexistent/project", which does not exist: create it or give another directory`},
	{"agents:\n  a:\n    workspace: nowhere\n", `toolbelt.yaml:3:16: agents.a.workspace is "nowhere" ({{cwd}}/nowhere), which does not exist: create it or give another directory`},
	{"agents:\n  a:\n    workspace: {{dir}}/file\n", `toolbelt.yaml:3:16: agents.a.workspace is "{{dir}}/file", which is a file, not a directory`},
	{"agents:\n  a:\n    workspace: {{dir}}\n  b:\n    workspace: gone\n", `toolbelt.yaml:5:16: agents.b.workspace is "gone" ({{cwd}}/gone), which does not exist: create it or give another directory`},
	{"mcpServers:\n  gh:\n    command: gh\n    envFile: missing.env\n", `toolbelt.yaml:4:14: mcpServers.gh.envFile is "missing.env", which does not exist`},
	{"mcpServers:\n  gh:\n    command: gh\n    envFile: " + filepath.Join("testdata", "bad.env") + "\n", `toolbelt.yaml:4:14: mcpServers.gh.envFile is "testdata/bad.env", whose line 3 is not NAME=value`},
	// Imported servers as clients write them, wrongly.
	{"mcpServers:\n  gh:\n    type: stdoi\n    command: gh\n", `toolbelt.yaml:3:11: mcpServers.gh.type is "stdoi": use stdio (a command), http (streamable HTTP at url) or sse (HTTP with server-sent events at url); did you mean "stdio"?`},
	{"mcpServers:\n  gh:\n    type: stdio\n    url: http://127.0.0.1:9000/mcp\n", `toolbelt.yaml:3:11: mcpServers.gh.type is stdio, which starts a command, but it has a url and no command: use type http (or sse) for a url`},
	{"mcpServers:\n  gh:\n    type: http\n    command: gh\n", `toolbelt.yaml:3:11: mcpServers.gh.type is http, which needs a url, but it has a command: use type stdio (or leave type out) for a command`},
	{"mcpServers:\n  gh:\n    url: ftp://example.com/mcp\n", `toolbelt.yaml:3:10: mcpServers.gh.url is "ftp://example.com/mcp": it must be an http:// or https:// URL`},
	{"mcpServers:\n  gh:\n    type: http\n    url: https://api.example.com/mcp\n    headers: {Authorization: \"Bearer ${input:token}\"}\n", `toolbelt.yaml:5:30: mcpServers.gh.headers.Authorization uses ${input:token}, VS Code's prompt for a value, which Toolbelt cannot show: write ${NAME} to read the environment variable NAME`},
	// Tool settings.
	{"tools:\n  exec:\n    sandbox: {requird: true}\n", `toolbelt.yaml:3:15: tools.exec.sandbox.requird: unknown key; did you mean "required"?`},
	{"tools:\n  memory:\n    embedings: {provider: openai}\n", `toolbelt.yaml:3:5: tools.memory.embedings: unknown key; did you mean "embeddings"?`},
	{"tools:\n  exec:\n    defaultTimeout: soon\n", `toolbelt.yaml:3:21: tools.exec.defaultTimeout is "soon": want a whole number`},
	{"tools:\n  exec:\n    defaultTimeout: -5\n", `toolbelt.yaml:3:21: tools.exec.defaultTimeout is -5: it must not be negative`},
	{"tools:\n  exec:\n    sessionTtl: forever\n", `toolbelt.yaml:3:17: tools.exec.sessionTtl is "forever": want a positive duration such as 30m`},
	{"tools:\n  exec:\n    sandbox: {required: true, bwrap: /nonexistent/bwrap}\n", `toolbelt.yaml:3:25: tools.exec.sandbox.required is true, but bubblewrap (/nonexistent/bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), so no command could run: install it or set required: false`},
	{"tools:\n  web_fetch:\n    allowHost: [docs.internal]\n", `toolbelt.yaml:3:5: tools.web_fetch.allowHost: unknown key; did you mean "allowHosts"?`},
	{"tools:\n  web_search:\n    provider: googel\n", `toolbelt.yaml:3:15: tools.web_search.provider is "googel": use one of brave, tavily, exa, perplexity, grok, searxng`},
	{"tools:\n  memory:\n    embeddings: {provider: nope}\n", `toolbelt.yaml:3:17: tools.memory.embeddings cannot be used: embeddings.provider "nope" is not known: use openai (also for OpenAI-compatible servers, with baseUrl), gemini or ollama`},
	{"tools:\n  process:\n    shell: /bin/sh\n", `toolbelt.yaml:2:3: tools.process: process takes its settings under tools.exec`},
	{"tools:\n  read:\n    encoding: latin1\n", `toolbelt.yaml:2:3: tools.read: read takes no settings`},
	{"tools:\n  fs:\n    root: /\n", `toolbelt.yaml:2:3: tools.fs: the fs tools take their settings under tools.apply_patch`},
	{"tools:\n  agents:\n    root: /\n", `toolbelt.yaml:2:3: tools.agents: the agents tools take no settings`},
	{"tools:\n  web:\n    timeoutSeconds: 5\n", `toolbelt.yaml:2:3: tools.web: the web tools take their settings under tools.web_search, tools.web_fetch`},
	{"tools:\n  execc: {}\n", `toolbelt.yaml:2:3: tools.execc: no tool or section is named "execc", and it is not a policy key (profile, allow, alsoAllow, deny, ask, byProvider); did you mean "exec"?`},
	// A directory tool's settings, against the JSON Schema its metadata.json
	// declares (dirTools).
	{"tools:\n  notes:\n    baseUrll: http://127.0.0.1:9\n", `toolbelt.yaml:3:5: tools.notes.baseUrll: unknown key; did you mean "baseUrl"?`},
	{"tools:\n  notes:\n    auth: {tokn: x}\n", `toolbelt.yaml:3:11: tools.notes.auth: missing required property "token"
toolbelt.yaml:3:12: tools.notes.auth.tokn: unknown key; did you mean "token"?`},
	{"tools:\n  notes:\n    zzqx: 1\n", `toolbelt.yaml:3:5: tools.notes.zzqx: unknown key: tools.notes takes auth, baseUrl, maxItems, mode`},
	{"tools:\n  notes:\n    maxItems: lots\n", `toolbelt.yaml:3:15: tools.notes.maxItems is "lots": got string, want integer`},
	{"tools:\n  notes:\n    maxItems: 0\n", `toolbelt.yaml:3:15: tools.notes.maxItems is 0: minimum: got 0, want at least 1`},
	{"tools:\n  notes:\n    mode: fast\n", `toolbelt.yaml:3:11: tools.notes.mode is "fast": value must be one of "brief", "full"`},
	{"tools:\n  notes:\n    auth: {}\n", `toolbelt.yaml:3:11: tools.notes.auth: missing required property "token"`},
	{"tools:\n  notes:\n    baseUrl: [a]\n    maxItems: -1\n    extra: x\n", `toolbelt.yaml:3:14: tools.notes.baseUrl is a list: got array, want string
toolbelt.yaml:4:15: tools.notes.maxItems is -1: minimum: got -1, want at least 1
toolbelt.yaml:5:5: tools.notes.extra: unknown key: tools.notes takes auth, baseUrl, maxItems, mode`},
	{"tools:\n  plain:\n    baseUrl: x\n", `toolbelt.yaml:2:3: tools.plain: plain takes no settings`},
	// Rules on arguments whose specifier cannot be used, and a tool name
	// with a typo before one.
	{"tools:\n  deny: [exec()]\n", `toolbelt.yaml:2:10: tools.deny[0]: "exec()" has an empty specifier: leave out the parentheses to name the whole tool`},
	{"tools:\n  allow:\n    - web_fetch(domain:https://github.com)\n", `toolbelt.yaml:3:7: tools.allow[0]: "web_fetch(domain:https://github.com)": "https://github.com" is not a domain pattern: use a host name (github.com), *. and a host name for its subdomains (*.github.com), or an IP address`},
	{"tools:\n  ask:\n    - read(../secrets/**)\n", `toolbelt.yaml:3:7: tools.ask[0]: "read(../secrets/**)": a path pattern lies inside the workspace and has no .. (./secrets/**, **/*.env)`},
	{"agents:\n  a:\n    tools:\n      deny: [message($.channel)]\n", `toolbelt.yaml:4:14: agents.a.tools.deny[0]: "message($.channel)": a condition is $.argument=pattern, e.g. $.channel=slack or $.options.force=true`},
	{"tools:\n  byProvider:\n    openai:\n      deny: [\"exec(npm run test:*\"]\n", `toolbelt.yaml:4:14: tools.byProvider.openai.deny[0]: "exec(npm run test:*" has unbalanced parentheses: write tool(specifier), e.g. exec(npm run test:*)`},
	{"tools:\n  allow: [exce(npm run test:*)]\n", `toolbelt.yaml:2:11: no tool, alias or group matches "exce(npm run test:*)"; did you mean "exec"?`},
	// Every problem of a file, in its order.
	{"mcpServers:\n  b: {command: x, url: http://x}\n  a: {}\nlimits:\n  timout: 5m\n  maxResultChars: -1\nconfirm: {medium: 1}\ntools:\n  exec: {shel: bash}\n", `toolbelt.yaml:2:6: mcpServers.b has both a command and a url: give one
toolbelt.yaml:3:6: mcpServers.a needs a command (stdio) or a url (HTTP)
toolbelt.yaml:5:3: limits.timout: unknown key; did you mean "timeout"?
toolbelt.yaml:6:19: limits.maxResultChars is -1: it must not be negative
toolbelt.yaml:7:19: confirm.medium is 1: want true or false
toolbelt.yaml:9:10: tools.exec.shel: unknown key; did you mean "shell"?`},
}

func TestBrokenConfigurations(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "file"), nil, 0o600))
	cwd, err := os.Getwd()
	must(t, err)
	reg, closer := tools.Core()
	defer closer.Close()
	dirTools(t, reg)
	if len(brokenConfigs) < 40 {
		t.Fatalf("%d broken configurations; the issue asks for at least 40", len(brokenConfigs))
	}
	for _, c := range brokenConfigs {
		src := strings.ReplaceAll(c.yaml, "{{dir}}", dir)
		err := Check("toolbelt.yaml", []byte(src), reg)
		got := "(no error)"
		if err != nil {
			got = strings.NewReplacer(dir, "{{dir}}", cwd, "{{cwd}}").Replace(err.Error())
		}
		if got != c.want {
			t.Errorf("%s\ngot:\n%s\nwant:\n%s", c.yaml, got, c.want)
		}
	}
}

// dirTools registers two directory tools in reg: notes, whose metadata.json
// declares settings, and plain, which declares none.
func dirTools(t *testing.T, reg *registry.Registry) {
	t.Helper()
	folder := t.TempDir()
	for name, settings := range map[string]string{
		"notes": `, "settings": {"type": "object", "properties": {
			"baseUrl": {"type": "string"},
			"maxItems": {"type": "integer", "minimum": 1},
			"mode": {"enum": ["brief", "full"]},
			"auth": {"type": "object", "properties": {"token": {"type": "string"}}, "required": ["token"]}}}`,
		"plain": "",
	} {
		must(t, os.MkdirAll(filepath.Join(folder, name), 0o755))
		must(t, os.WriteFile(filepath.Join(folder, name, "metadata.json"), []byte(`{"name": "`+name+`", "description": "A tool."`+settings+`}`), 0o644))
		must(t, os.WriteFile(filepath.Join(folder, name, "handler.sh"), []byte("cat\n"), 0o644))
	}
	set := dir.LoadDirs([]dir.Source{{Path: folder, Trusted: true}}, dir.Options{})
	if len(set.Problems) > 0 {
		t.Fatal(set.Problems)
	}
	if problems := set.Register(reg); len(problems) > 0 {
		t.Fatal(problems)
	}
}
