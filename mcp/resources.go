package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/tool"
)

// The resource templates Toolbelt serves: the workspace's files, and the
// full outputs the pipeline kept of results it cut short (what result_read
// pages through).
const (
	FilesTemplate   = "workspace:///{+path}"
	OutputsTemplate = "toolbelt://outputs/{callId}"
)

// serveResources adds the resource templates: the workspace's files when
// the server's context has a file bridge, and the kept outputs.
func (s *Server) serveResources() {
	if s.runner.Context().FS != nil {
		s.sdk.AddResourceTemplate(&sdk.ResourceTemplate{
			Name: "workspace-file", Title: "Workspace file", URITemplate: FilesTemplate,
			Description: "A file of the workspace, read-only, by its path relative to the workspace root (completion/complete suggests paths). " +
				"Served when the read tool is, to the same callers and paths.",
		}, s.readFile)
	}
	s.sdk.AddResourceTemplate(&sdk.ResourceTemplate{
		Name: "kept-output", Title: "Kept output", URITemplate: OutputsTemplate, MIMEType: "text/plain",
		Description: "The full output of a call whose result was cut short (the call id its truncation notice names). " +
			"Served when the result_read tool is, to the session that made the call.",
	}, s.readOutput)
}

// readFile answers resources/read for a workspace file: the policy must
// let the caller read it with the read tool, and the file is read through
// the same file bridge, confined to the workspace.
func (s *Server) readFile(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	p, ok := filePath(uri)
	if !ok {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	if err := s.mayCall(ctx, callerOf(s.opts.Owner, req.Session, req.Extra), "read", map[string]any{"path": p}); err != nil {
		return nil, err
	}
	b := s.runner.Context().FS
	st, err := b.Stat(ctx, p)
	if err != nil {
		return nil, resourceError(uri, err)
	}
	if st.IsDir() {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: p + " is a directory, not a file"}
	}
	if st.Size() > int64(s.opts.MaxResponseBytes) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s has %d bytes, more than the response limit of %d bytes", p, st.Size(), s.opts.MaxResponseBytes)}
	}
	data, err := b.ReadFile(ctx, p)
	if err != nil {
		return nil, resourceError(uri, err)
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{fileContents(uri, p, data)}}, nil
}

// filePath returns the workspace-relative path a workspace:/// URI names.
func filePath(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "workspace" || u.Host != "" {
		return "", false
	}
	p := strings.TrimPrefix(u.Path, "/")
	return p, p != ""
}

// fileContents is a file's contents as a resource: text when it is UTF-8
// text, else a blob; the MIME type from its extension, else sniffed.
func fileContents(uri, p string, data []byte) *sdk.ResourceContents {
	mt := mime.TypeByExtension(filepath.Ext(p))
	sniffed := http.DetectContentType(data)
	if mt == "" {
		mt = sniffed
	}
	if utf8.Valid(data) && (strings.HasPrefix(sniffed, "text/") || sniffed == "application/json") {
		return &sdk.ResourceContents{URI: uri, MIMEType: mt, Text: string(data)}
	}
	return &sdk.ResourceContents{URI: uri, MIMEType: mt, Blob: data}
}

// resourceError turns a file bridge's error into the client's: a missing
// file is the protocol's resource-not-found, a refusal says why.
func resourceError(uri string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return sdk.ResourceNotFoundError(uri)
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
}

// readOutput answers resources/read for a kept output: the policy must let
// the caller call result_read, and the output must be one the caller's
// session may see.
func (s *Server) readOutput(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	rest, ok := strings.CutPrefix(uri, "toolbelt://outputs/")
	id, err := url.PathUnescape(rest)
	if !ok || err != nil || id == "" || strings.Contains(id, "/") {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	caller := callerOf(s.opts.Owner, req.Session, req.Extra)
	if err := s.mayCall(ctx, caller, "result_read", map[string]any{"callId": id}); err != nil {
		return nil, err
	}
	out, ok, err := s.runner.Output(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: out.Text}}}, nil
}

// mayCall returns nil when the policy lets caller make the call of name
// with args without asking anyone: what a resource read stands for is
// allowed exactly when the tool's call would be. A call the policy would
// ask a person about is refused (a read cannot be asked about), as one of
// a tool the caller is not offered.
func (s *Server) mayCall(ctx context.Context, caller tool.Identity, name string, args map[string]any) error {
	raw, _ := json.Marshal(args)
	_, res, err := s.runner.Explain(invoke.WithCaller(ctx, caller), tool.Call{ID: tool.NewCallID("mcp"), Name: name, Arguments: raw})
	switch {
	case err != nil:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("not readable here: %v", err)}
	case res.Decision == policy.Deny, res.Decision == policy.Ask:
		reason := res.Reason
		if reason == "" {
			reason = fmt.Sprintf("the policy does not let this client call %s", name)
		}
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "refused: " + reason}
	}
	return nil
}

// maxCompletions bounds one completion answer (the protocol's limit).
const maxCompletions = 100

// completePath suggests workspace paths that start with prefix: the
// entries of its directory whose names continue it, directories with a
// trailing slash, to a caller the policy lets list that directory (ls).
// Hidden entries are suggested only when prefix names one.
func (s *Server) completePath(ctx context.Context, caller tool.Identity, prefix string) (*sdk.CompleteResult, error) {
	res := &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: []string{}}}
	b := s.runner.Context().FS
	if b == nil {
		return res, nil
	}
	dir, base := path.Split(prefix)
	if err := s.mayCall(ctx, caller, "ls", map[string]any{"path": cleanDir(dir)}); err != nil {
		return nil, err
	}
	entries, err := b.ReadDir(ctx, cleanDir(dir))
	if err != nil {
		return res, nil
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		if e.IsDir() {
			name += "/"
		}
		if len(res.Completion.Values) == maxCompletions {
			res.Completion.HasMore = true
			break
		}
		res.Completion.Values = append(res.Completion.Values, dir+name)
	}
	return res, nil
}

// cleanDir is the directory of a path prefix as the bridge names it.
func cleanDir(dir string) string {
	if dir == "" {
		return "."
	}
	return path.Clean(dir)
}
