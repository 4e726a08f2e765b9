package tool

import "encoding/base64"

// MediaPrefix starts the text line that names a file a result carries:
// MEDIA:<path>, the path relative to the workspace.
const MediaPrefix = "MEDIA:"

// Media returns the result of a file a tool read or made, in the shape
// OpenClaw's tools use: a text block MEDIA:<path> (the tool's own words),
// the image (base64), and details {path}. Callers add to the details.
func Media(path string, data []byte, mimeType string) Result {
	return Result{
		Content: []Content{
			{Type: TextContent, Text: MediaPrefix + path, Origin: OwnWords()},
			{Type: ImageContent, Data: base64.StdEncoding.EncodeToString(data), MIMEType: mimeType},
		},
		Details: map[string]any{"path": path},
	}
}
