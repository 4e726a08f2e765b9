package cmdhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/toolbelt/toolbelt/internal/randid"
	"github.com/toolbelt/toolbelt/internal/stdwebhook"
)

// hookClient sends HTTP hooks their input. It follows no redirect: a hook's
// answer may allow a call, so it comes from the URL configured or not at
// all (a redirect is an answer other than 2xx, a failure).
var hookClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// post sends an HTTP hook its input: a POST of body to its URL (https, or
// http to this machine), signed under its secret the Standard Webhooks
// way, and returns the response body, at most maxAnswer bytes. A status
// other than 2xx is an error.
func (h Hook) post(ctx context.Context, body []byte) ([]byte, error) {
	if err := stdwebhook.CheckEndpoint(h.URL); err != nil {
		return nil, fmt.Errorf("hook %s: %w", h.name(), err)
	}
	header, err := stdwebhook.Header(h.Secret, randid.New("hook_", 12), time.Now(), body)
	if err != nil {
		return nil, fmt.Errorf("hook %s: %w", h.name(), err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("hook %s: %w", h.name(), err)
	}
	req.Header = header
	req.Header.Set("Content-Type", "application/json")
	resp, err := hookClient.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			// Its text quotes the URL whole, query included.
			ue.URL = stdwebhook.Display(h.URL)
		}
		return nil, fmt.Errorf("hook %s could not be reached: %w", h.name(), err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("hook %s: reading its answer: %w", h.name(), err)
	case len(out) > maxAnswer:
		return nil, fmt.Errorf("hook %s answered more than %d bytes", h.name(), maxAnswer)
	case resp.StatusCode/100 != 2:
		return nil, fmt.Errorf("hook %s answered HTTP %s", h.name(), resp.Status)
	}
	return out, nil
}
