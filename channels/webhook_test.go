package channels_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/channels"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/internal/stdwebhook"
	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/store"
)

// A retried delivery (the same webhook-id, signed again) is acknowledged
// with 200 and not delivered twice — by the channel that took it, and by a
// channel opened afresh on the same store (a restart, or another gateway
// sharing a PostgreSQL store); another webhook-id is delivered.
func TestWebhookRetriesDeliveredOnce(t *testing.T) {
	t.Parallel()
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		open := func() (http.Handler, chan channels.Message) {
			hub, err := channels.NewHub(map[string]config.Channel{"chat": {Type: "webhook", URL: "http://127.0.0.1:1", SecretEnv: "S"}},
				channels.Options{Getenv: func(string) string { return secret }, Deliveries: st.Cache(store.CacheOptions{})})
			if err != nil {
				t.Fatal(err)
			}
			got := make(chan channels.Message, 10)
			if err := hub.Start(context.Background(), func(m channels.Message) { got <- m }); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { hub.Stop(context.Background()) })
			return hub.Handlers()["/channels/chat"], got
		}
		post := func(h http.Handler, id string) int {
			body, _ := json.Marshal(channels.WebhookEvent{Type: "message", Conversation: "c1", Sender: "ada", Text: "hi " + id})
			req := httptest.NewRequest("POST", "/channels/chat", bytes.NewReader(body))
			req.Header, _ = stdwebhook.Header(secret, id, time.Now(), body)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			return rec.Code
		}
		first, got1 := open()
		for i, want := range []int{http.StatusAccepted, http.StatusOK, http.StatusOK} {
			if code := post(first, "msg_1"); code != want {
				t.Errorf("delivery %d of msg_1: %d, want %d", i+1, code, want)
			}
		}
		again, got2 := open()
		if code := post(again, "msg_1"); code != http.StatusOK {
			t.Errorf("msg_1 after a restart: %d, want 200 (a retry)", code)
		}
		if code := post(again, "msg_2"); code != http.StatusAccepted {
			t.Errorf("msg_2: %d, want 202", code)
		}
		if len(got1) != 1 || len(got2) != 1 {
			t.Fatalf("delivered %d then %d messages, want 1 and 1", len(got1), len(got2))
		}
		if m := <-got1; m.ID != "msg_1" {
			t.Errorf("first channel delivered %+v", m)
		}
		if m := <-got2; m.ID != "msg_2" {
			t.Errorf("second channel delivered %+v", m)
		}
	})
}
