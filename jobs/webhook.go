package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/toolbelt/toolbelt/internal/stdwebhook"
	"github.com/toolbelt/toolbelt/tool"
)

// Webhooks follow the Standard Webhooks scheme (package
// internal/stdwebhook).

// WebhookTolerance is how far a webhook's timestamp may be from now.
const WebhookTolerance = stdwebhook.Tolerance

// maxWebhookBody bounds a webhook's body.
const maxWebhookBody = 1 << 20

// Sign returns the webhook-signature header of a webhook: "v1," and the
// base64 HMAC-SHA256 of "id.timestamp.body" under secret ("whsec_…").
// Senders (and tests) use it.
func Sign(secret, id string, timestamp time.Time, body []byte) (string, error) {
	return stdwebhook.Sign(secret, id, timestamp, body)
}

// Verify checks a webhook's headers and body against secret, at time now:
// a missing header, a timestamp more than WebhookTolerance away, or no
// matching v1 signature is an error that says which.
func Verify(secret string, h http.Header, body []byte, now time.Time) error {
	return stdwebhook.Verify(secret, h, body, now)
}

// WebhookHandler returns the HTTP handler of the registered tools' webhook
// paths: mount it at each of WebhookPaths. A verified delivery is read by
// the tool's OnWebhook and applied to the job it names; a delivery whose
// webhook-id was applied before is acknowledged without effect; one for a
// job that has finished (completed, failed, cancelled) is not applied and
// leaves the job as it is.
//
// Answers: 200 applied or duplicate; 400 a body the handler refuses; 401 a
// bad signature or stale timestamp; 404 no tool at that path or no job the
// delivery names (the sender retries); 409 the job has finished: not
// applied; 503 no webhook secret configured. Once a delivery is verified
// and read, the answer's body is a [Delivery].
func (q *Queue) WebhookHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "webhooks are POSTed", http.StatusMethodNotAllowed)
			return
		}
		q.mu.RLock()
		name, ok := q.hooks[r.URL.Path]
		t := q.tools[name]
		q.mu.RUnlock()
		if !ok {
			http.Error(w, "no async tool takes webhooks at "+r.URL.Path, http.StatusNotFound)
			return
		}
		if q.cfg.WebhookSecret == "" {
			http.Error(w, "webhooks are not accepted: no webhook secret is configured (jobs.webhookSecret)", http.StatusServiceUnavailable)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxWebhookBody))
		if err != nil {
			http.Error(w, "reading the body: "+err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		if err := Verify(q.cfg.WebhookSecret, r.Header, body, q.now()); err != nil {
			q.log.Warn("webhook refused", "path", r.URL.Path, "err", err)
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		st, err := callSafely(func() (tool.AsyncStatus, error) { return t.Handler.OnWebhook(r.Context(), json.RawMessage(body)) })
		if err == nil {
			err = st.Check()
		}
		if err != nil {
			http.Error(w, "the webhook body was refused: "+err.Error(), http.StatusBadRequest)
			return
		}
		code, d := q.deliver(r.Context(), name, r.Header.Get("webhook-id"), st)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(d)
	})
}

// Delivery is what the sender of a verified webhook is told.
type Delivery struct {
	// Applied says the delivery took effect (now, or when its webhook-id
	// was first delivered).
	Applied bool `json:"applied"`
	// TaskID and Status name the job and its status after the delivery,
	// when there is one.
	TaskID string `json:"taskId,omitempty"`
	Status string `json:"status,omitempty"`
	// Message says what happened, for people.
	Message string `json:"message"`
}

// finished is a delivery for a job that has finished: it is not applied.
type finished struct{ job tool.JobInfo }

func (f finished) Error() string {
	return fmt.Sprintf("job %s is %s: the delivery was not applied, and the job stays %s", f.job.TaskID, f.job.Status, f.job.Status)
}

// deliver applies a verified webhook once per webhook-id: the id is
// recorded in the same transaction that applies the delivery. A delivery
// for a job that has finished changes nothing — not the job, not the
// deliveries recorded — and is answered 409.
func (q *Queue) deliver(ctx context.Context, toolName, id string, st tool.AsyncStatus) (int, Delivery) {
	var (
		ev  *tool.JobEvent
		dup bool
		j   row
	)
	err := q.b.tx(ctx, func(qr querier, _ enqueueFunc) error {
		var rs []row
		var err error
		if st.TaskID != "" {
			rs, err = qr.jobs(ctx, "SELECT "+jobColumns+" FROM async_jobs WHERE task_id = ? AND tool = ?", st.TaskID, toolName)
		} else {
			rs, err = qr.jobs(ctx, "SELECT "+jobColumns+" FROM async_jobs WHERE tool = ? AND external_id = ? AND external_id <> ''", toolName, st.ExternalID)
		}
		if err != nil {
			return err
		}
		if len(rs) == 0 {
			return ErrNotFound
		}
		j = rs[0]
		n, err := qr.exec(ctx, "INSERT INTO async_webhooks (webhook_id, task_id, received_ns) VALUES (?, ?, ?) ON CONFLICT (webhook_id) DO NOTHING",
			id, j.TaskID, q.now().UnixNano())
		if err != nil {
			return err
		}
		if dup = n == 0; dup {
			return nil
		}
		if ev, _, err = q.applyTx(ctx, qr, j.TaskID, j.round, st); err != nil || ev != nil {
			return err
		}
		// Nothing changed: a progress the job already had, or a job that
		// had finished (a cancel, another delivery), whose row the
		// updates left alone. The latter rolls back.
		if j, err = q.load(ctx, qr, j.TaskID); err == nil && j.Final() {
			return finished{j.JobInfo}
		}
		return err
	})
	var fin finished
	switch {
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound, Delivery{Message: fmt.Sprintf("no job of %s has task id %q or external id %q: send it again later if the job is being submitted", toolName, st.TaskID, st.ExternalID)}
	case errors.As(err, &fin):
		q.log.Warn("webhook for a finished job not applied", "tool", toolName, "taskId", fin.job.TaskID, "status", fin.job.Status)
		return http.StatusConflict, Delivery{TaskID: fin.job.TaskID, Status: fin.job.Status, Message: fin.Error()}
	case err != nil:
		q.log.Error("applying a webhook", "tool", toolName, "err", err)
		return http.StatusInternalServerError, Delivery{Message: "applying the webhook failed; send it again"}
	case dup:
		return http.StatusOK, Delivery{Applied: true, TaskID: j.TaskID, Message: "duplicate delivery: already applied"}
	}
	q.emit(ev)
	if ev != nil {
		j.JobInfo = ev.Job
	}
	return http.StatusOK, Delivery{Applied: true, TaskID: j.TaskID, Status: j.Status, Message: "applied"}
}
