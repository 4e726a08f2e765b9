package channels_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/channels"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/internal/stdwebhook"
	"github.com/toolbelt/toolbelt/internal/storetest"
)

// A retried delivery (the same webhook-id, signed again) is acknowledged
// with 200 and not delivered twice — by the channel that took it, and by a
// channel opened afresh on the same store (a restart); another webhook-id
// is delivered. Two gateways' hubs on one store (SQLite, or PostgreSQL
// when TOOLBELT_TEST_POSTGRES_URL is set) sent the same deliveries at the
// same moment take each exactly once between them.
func TestWebhookRetriesDeliveredOnce(t *testing.T) {
	t.Parallel()
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	storetest.Run(t, func(t *testing.T, dsn string) {
		st := storetest.Open(t, dsn)
		open := func() (http.Handler, chan channels.Message) {
			hub, err := channels.NewHub(map[string]config.Channel{"chat": {Type: "webhook", URL: "http://127.0.0.1:1", SecretEnv: "S"}},
				channels.Options{Getenv: func(string) string { return secret }, State: st.ChannelState()})
			if err != nil {
				t.Fatal(err)
			}
			got := make(chan channels.Message, 100)
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

		// Two gateways, each with its own hub and its own handle on the
		// store, both sent every delivery at once.
		gatewayA, gotA := open()
		other := storetest.Open(t, dsn)
		hubB, err := channels.NewHub(map[string]config.Channel{"chat": {Type: "webhook", URL: "http://127.0.0.1:1", SecretEnv: "S"}},
			channels.Options{Getenv: func(string) string { return secret }, State: other.ChannelState()})
		if err != nil {
			t.Fatal(err)
		}
		gotB := make(chan channels.Message, 100)
		if err := hubB.Start(context.Background(), func(m channels.Message) { gotB <- m }); err != nil {
			t.Fatal(err)
		}
		defer hubB.Stop(context.Background())
		gatewayB := hubB.Handlers()["/channels/chat"]
		const n = 20
		var wg sync.WaitGroup
		for i := range n {
			for _, h := range []http.Handler{gatewayA, gatewayB, gatewayA, gatewayB} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if code := post(h, fmt.Sprintf("race_%d", i)); code != http.StatusAccepted && code != http.StatusOK {
						t.Errorf("race_%d: %d", i, code)
					}
				}()
			}
		}
		wg.Wait()
		taken := map[string]int{}
		for len(gotA)+len(gotB) > 0 {
			select {
			case m := <-gotA:
				taken[m.ID]++
			case m := <-gotB:
				taken[m.ID]++
			}
		}
		for i := range n {
			if id := fmt.Sprintf("race_%d", i); taken[id] != 1 {
				t.Errorf("%s was delivered %d times between the two gateways, want once", id, taken[id])
			}
		}
	})
}

// failingState is a State whose store is down.
type failingState struct{}

func (failingState) Claim(context.Context, string, string, time.Duration) (bool, error) {
	return false, errors.New("the database is unreachable")
}
func (failingState) Get(context.Context, string, string) ([]byte, bool, error) {
	return nil, false, errors.New("the database is unreachable")
}
func (failingState) Put(context.Context, string, string, []byte, time.Duration) error {
	return errors.New("the database is unreachable")
}

// A delivery that cannot be recorded is neither taken nor acknowledged:
// 503, so that the sender sends it again (nothing lost, nothing taken
// twice).
func TestWebhookUnrecordedDeliveryRefused(t *testing.T) {
	t.Parallel()
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	hub, err := channels.NewHub(map[string]config.Channel{"chat": {Type: "webhook", URL: "http://127.0.0.1:1", SecretEnv: "S"}},
		channels.Options{Getenv: func(string) string { return secret }, State: failingState{}})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan channels.Message, 1)
	if err := hub.Start(context.Background(), func(m channels.Message) { got <- m }); err != nil {
		t.Fatal(err)
	}
	defer hub.Stop(context.Background())
	body, _ := json.Marshal(channels.WebhookEvent{Type: "message", Conversation: "c1", Sender: "ada", Text: "hi"})
	req := httptest.NewRequest("POST", "/channels/chat", bytes.NewReader(body))
	req.Header, _ = stdwebhook.Header(secret, "msg_1", time.Now(), body)
	rec := httptest.NewRecorder()
	hub.Handlers()["/channels/chat"].ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "send it again later") || len(got) != 0 {
		t.Errorf("answered %d %q, delivered %d; want 503, nothing delivered", rec.Code, rec.Body.String(), len(got))
	}
}
