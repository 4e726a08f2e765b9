package mcp

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
)

// Resource is a resource the operator configured (mcp.resources): a fixed
// URI, or a URI template whose {variables} fill in the text and the file's
// path, answered with inline text or the contents of a file.
type Resource struct {
	// URI or URITemplate (RFC 6570) names it; one of them is set.
	URI, URITemplate string
	// Name (default: the URI or template), Title and Description are what
	// resources/list shows.
	Name, Title, Description string
	// MIMEType is its media type (default: from the file, else
	// text/plain).
	MIMEType string
	// Text is its contents; or File, an absolute path, holds them (read
	// at each resources/read).
	Text, File string
}

// serveConfigured adds the configured resources and templates.
func (s *Server) serveConfigured() {
	for _, r := range s.opts.Resources {
		read := func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return s.readConfigured(req.Params.URI)
		}
		if r.URI != "" {
			s.sdk.AddResource(&sdk.Resource{URI: r.URI, Name: cmp.Or(r.Name, r.URI), Title: r.Title, Description: r.Description, MIMEType: r.MIMEType}, read)
			continue
		}
		s.sdk.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: r.URITemplate, Name: cmp.Or(r.Name, r.URITemplate), Title: r.Title, Description: r.Description, MIMEType: r.MIMEType}, read)
	}
}

// configuredOf returns the configured resource that serves uri, with its
// text and file for that URI (a template's variables filled in).
func (s *Server) configuredOf(uri string) (r Resource, text, file string, err error) {
	for _, r := range s.opts.Resources {
		if r.URI != "" {
			if r.URI == uri {
				return r, r.Text, r.File, nil
			}
			continue
		}
		t, err := uritemplate.New(r.URITemplate)
		if err != nil {
			continue // refused by the configuration's check
		}
		vars := t.Match(uri)
		if vars == nil {
			continue
		}
		text, file := r.Text, r.File
		for _, name := range t.Varnames() {
			v := vars.Get(name).String()
			if file != "" && strings.Contains(file, "{"+name+"}") && (!filepath.IsLocal(v) || strings.ContainsAny(v, `/\`)) {
				return r, "", "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s: {%s} is %q, which does not name a file of the folder (no /, .. or empty value)", uri, name, v)}
			}
			text = strings.ReplaceAll(text, "{"+name+"}", v)
			file = strings.ReplaceAll(file, "{"+name+"}", v)
		}
		return r, text, file, nil
	}
	return Resource{}, "", "", sdk.ResourceNotFoundError(uri)
}

// readConfigured answers resources/read of uri, a configured resource.
func (s *Server) readConfigured(uri string) (*sdk.ReadResourceResult, error) {
	r, text, file, err := s.configuredOf(uri)
	if err != nil {
		return nil, err
	}
	if file == "" {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: cmp.Or(r.MIMEType, "text/plain"), Text: text}}}, nil
	}
	st, err := os.Stat(file)
	switch {
	case os.IsNotExist(err):
		return nil, sdk.ResourceNotFoundError(uri)
	case err != nil:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s: %v", uri, err)}
	case !st.Mode().IsRegular():
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s: %s is not a regular file", uri, file)}
	case st.Size() > int64(s.opts.MaxResponseBytes):
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s has %d bytes, more than the response limit of %d bytes", uri, st.Size(), s.opts.MaxResponseBytes)}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s: %v", uri, err)}
	}
	c := fileContents(uri, file, data)
	c.MIMEType = cmp.Or(r.MIMEType, c.MIMEType)
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{c}}, nil
}

// readOwn reads uri, one of the server's own resources, as the client of
// session ss (with extra) would by resources/read: a workspace file or a
// kept output under the same policy, or a configured resource.
func (s *Server) readOwn(ctx context.Context, ss *sdk.ServerSession, extra *sdk.RequestExtra, uri string) (*sdk.ReadResourceResult, error) {
	req := &sdk.ReadResourceRequest{Session: ss, Extra: extra, Params: &sdk.ReadResourceParams{URI: uri}}
	switch {
	case strings.HasPrefix(uri, "workspace:") && s.runner.Context().FS != nil:
		return s.readFile(ctx, req)
	case strings.HasPrefix(uri, "toolbelt://outputs/"):
		return s.readOutput(ctx, req)
	}
	return s.readConfigured(uri)
}
