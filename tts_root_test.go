package toolbelt_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/config"
)

// TestTTSSpeaksThroughProvidersOpenAI: with tools.tts.engine openai, the
// tts tool of the root posts to providers.openai's url with the key from
// its keyEnv, and writes the answer into the workspace; a rule about
// writing Go files holds a tts call that would write one.
func TestTTSSpeaksThroughProvidersOpenAI(t *testing.T) {
	t.Setenv("TB_TTS_TEST_KEY", "sk-root")
	frame := make([]byte, 417) // one silent MPEG-1 layer III frame, 128 kbit/s, 44.1 kHz
	copy(frame, []byte{0xff, 0xfb, 0x90, 0x64})
	mp3 := bytes.Repeat(frame, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/audio/speech" || r.Header.Get("Authorization") != "Bearer sk-root" {
			http.Error(w, "unexpected request "+r.URL.Path, http.StatusBadRequest)
			return
		}
		_, _ = w.Write(mp3)
	}))
	defer srv.Close()
	yaml := "providers:\n  openai:\n    url: " + srv.URL + "/v1\n    keyEnv: TB_TTS_TEST_KEY\n" +
		"tools:\n  tts:\n    engine: openai\n  ask:\n    - tool: write\n      when: {path: \"*.go\"}\n"
	cfg, err := config.Parse("toolbelt.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	tb, err := toolbelt.Open(context.Background(), toolbelt.Options{Config: cfg, Workspace: ws, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close(context.Background())
	msg := call(t, tb, "c1", "tts", `{"text":"Hello.","path":"hello.mp3"}`)
	if msg.IsError || msg.Content[0].Text != "MEDIA:hello.mp3" {
		t.Fatalf("tts = %+v, want MEDIA:hello.mp3", msg.Content)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "hello.mp3")); err != nil || !bytes.Equal(b, mp3) {
		t.Errorf("hello.mp3: %d bytes, %v; want the server's %d", len(b), err, len(mp3))
	}
	msg = call(t, tb, "c2", "tts", `{"text":"Hello.","path":"main.go"}`)
	if !msg.IsError || !strings.Contains(msg.Content[0].Text, "ask write when path matches") {
		t.Errorf("tts into main.go = %+v, want held by the rule on writing Go files", msg.Content)
	}
	if _, err := os.Stat(filepath.Join(ws, "main.go")); err == nil {
		t.Error("main.go was written past the rule")
	}
}
