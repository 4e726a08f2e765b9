package tts

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// paragraph is 54 words: at espeak-ng's normal 175 words a minute, 18.5 s.
const paragraph = "The quick brown fox jumps over the lazy dog. Speech synthesis turns written words into sound, one sentence after another. " +
	"This paragraph has a known number of words, so its spoken length can be estimated from the speaking rate. " +
	"At one hundred and seventy five words a minute, it should last about fifteen seconds."

// runner returns a runner of the tts tool with the settings cfg in a new
// workspace, and the workspace.
func runner(t *testing.T, cfg map[string]any, openai *Endpoint) (*invoke.Runner, string) {
	t.Helper()
	ws := t.TempDir()
	b, err := fsbridge.OpenLocal(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	reg := registry.New()
	if err := Register(reg); err != nil {
		t.Fatal(err)
	}
	tc := &tool.Context{Identity: tool.Identity{Workspace: ws}, FSRoot: ws, FS: b, Config: tool.Config{ConfigKey: cfg}}
	if openai != nil {
		OpenAIService.Set(tc, *openai)
	}
	return invoke.New(reg, tc), ws
}

// speakCall runs one call of the tool with args.
func speakCall(t *testing.T, r *invoke.Runner, args string) tool.ResultMessage {
	t.Helper()
	return r.Run(context.Background(), tool.Call{ID: "c1", Name: "tts", Arguments: json.RawMessage(args)})
}

// written checks a successful result's shape against the file it names
// and returns the file and the details.
func written(t *testing.T, ws string, res tool.ResultMessage, mime string) ([]byte, map[string]any) {
	t.Helper()
	if res.IsError || len(res.Content) != 2 {
		t.Fatalf("result = %+v, want MEDIA text and audio", res)
	}
	rel, ok := strings.CutPrefix(res.Content[0].Text, "MEDIA:")
	if !ok {
		t.Fatalf("first block = %q, want MEDIA:<path>", res.Content[0].Text)
	}
	file, err := os.ReadFile(filepath.Join(ws, rel))
	if err != nil {
		t.Fatal(err)
	}
	audio := res.Content[1]
	if audio.Type != tool.AudioContent || audio.MIMEType != mime || audio.Data != base64.StdEncoding.EncodeToString(file) {
		t.Fatalf("audio block = %s %s (%d chars), want the file's %d bytes as %s", audio.Type, audio.MIMEType, len(audio.Data), len(file), mime)
	}
	var d map[string]any
	b, _ := json.Marshal(res.Details)
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if d["path"] != rel || d["bytes"] != float64(len(file)) {
		t.Fatalf("details = %v, want path %s and bytes %d", d, rel, len(file))
	}
	return file, d
}

func needEspeak(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath(espeakBin); err != nil {
		t.Skip("espeak-ng is not installed (apt-get install espeak-ng; .ci/run installs it)")
	}
}

// TestEspeakDuration: espeak-ng speaks a paragraph into a WAV file whose
// measured duration is within 20% of the paragraph's length at the
// speaking rate, at normal and double speed.
func TestEspeakDuration(t *testing.T) {
	needEspeak(t)
	t.Parallel()
	for _, speed := range []float64{1, 2} {
		r, ws := runner(t, nil, nil)
		args, _ := json.Marshal(map[string]any{"text": paragraph, "speed": speed, "path": "out/speech.wav"})
		file, d := written(t, ws, speakCall(t, r, string(args)), "audio/wav")
		want := float64(len(strings.Fields(paragraph))) / (espeakWPM * speed) * 60 * 1000
		got := d["durationMs"].(float64)
		if math.Abs(got-want) > want*0.2 || d["format"] != "wav" {
			t.Errorf("speed %g: durationMs = %v, format %v; want wav within 20%% of %.0f", speed, got, d["format"], want)
		}
		w, err := parseWAV(file)
		if err != nil || binary.LittleEndian.Uint32(file[40:44]) != uint32(len(w.data)) || int(binary.LittleEndian.Uint32(file[4:8])) != len(file)-8 {
			t.Errorf("speed %g: the file's WAV header does not match its %d bytes: %v", speed, len(file), err)
		}
	}
}

// smallLimit is an engine that takes little text per request.
type smallLimit struct{ engine }

func (smallLimit) limit() int { return 80 }

// TestLongTextJoined: text longer than the engine takes is spoken in
// chunks cut at sentence ends and joined into one WAV holding the chunks'
// samples in order, about as long as the text spoken in one piece.
func TestLongTextJoined(t *testing.T) {
	needEspeak(t)
	t.Parallel()
	e := smallLimit{espeak{}}
	o := options{voice: "en", format: "wav", speed: 1}
	chunks := split(paragraph, e.limit())
	if len(chunks) < 3 {
		t.Fatalf("split into %d chunks, want several", len(chunks))
	}
	var pcm []byte
	for _, c := range chunks {
		b, err := e.speak(context.Background(), c, o)
		if err != nil {
			t.Fatal(err)
		}
		w, err := parseWAV(b)
		if err != nil {
			t.Fatal(err)
		}
		pcm = append(pcm, w.data...)
	}
	joined, err := render(context.Background(), e, formats["wav"], paragraph, o)
	if err != nil {
		t.Fatal(err)
	}
	w, err := parseWAV(joined)
	if err != nil || !bytes.Equal(w.data, pcm) {
		t.Fatalf("joined file: %v; its %d bytes of samples are not the chunks' %d, in order", err, len(w.data), len(pcm))
	}
	whole, err := render(context.Background(), espeak{}, formats["wav"], paragraph, o)
	if err != nil {
		t.Fatal(err)
	}
	dj, _ := wavDuration(joined)
	dw, _ := wavDuration(whole)
	if math.Abs(float64(dj-dw)) > float64(dw)/5 {
		t.Errorf("joined chunks last %v, the text in one piece %v: want them within 20%%", dj, dw)
	}
}

// TestMissingEngine: without espeak-ng the tool is unavailable, the reason
// saying how to install it.
func TestMissingEngine(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := factory(&tool.Context{})
	var nh *tool.NotHere
	if !errors.As(err, &nh) || !strings.Contains(nh.Reason, "apt-get install espeak-ng") {
		t.Fatalf("factory error = %v, want NotHere saying apt-get install espeak-ng", err)
	}
}

// TestRefusals: a format or speed the engine does not take is refused
// naming what it takes, and nothing is written.
func TestRefusals(t *testing.T) {
	needEspeak(t)
	t.Parallel()
	r, ws := runner(t, nil, nil)
	for args, want := range map[string]string{
		`{"text":"Hi.","format":"mp3"}`: "espeak cannot make mp3 audio: it makes wav",
		`{"text":"Hi.","speed":4}`:      "espeak speaks at speeds from 0.5 to 2.5",
	} {
		res := speakCall(t, r, args)
		if !res.IsError || !strings.Contains(res.Content[0].Text, want) {
			t.Errorf("%s: result = %+v, want an error saying %q", args, res, want)
		}
	}
	if entries, _ := os.ReadDir(ws); len(entries) != 0 {
		t.Errorf("refused calls wrote %v", entries)
	}
}

// fakeMP3 makes n silent MPEG-1 layer III frames (128 kbit/s, 44.1 kHz),
// after an ID3 tag and a Xing frame as encoders write them.
func fakeMP3(n int) []byte {
	frame := func(tag string) []byte {
		f := make([]byte, 417)
		copy(f, []byte{0xff, 0xfb, 0x90, 0x64})
		copy(f[36:], tag)
		return f
	}
	out := append([]byte("ID3\x04\x00\x00\x00\x00\x00\x05"), "abcde"...)
	out = append(out, frame("Xing")...)
	for range n {
		out = append(out, frame("")...)
	}
	return out
}

// oggPageBytes is one Ogg page with one packet (under 255 bytes).
func oggPageBytes(flags byte, granule uint64, packet []byte) []byte {
	h := append([]byte("OggS\x00"), flags)
	h = binary.LittleEndian.AppendUint64(h, granule)
	h = append(h, make([]byte, 12)...) // serial, sequence, CRC
	h = append(h, 1, byte(len(packet)))
	return append(h, packet...)
}

// fakeOpus is an Ogg Opus file of samples 48 kHz samples after a pre-skip
// of 312.
func fakeOpus(samples uint64) []byte {
	head := append([]byte("OpusHead\x01\x01"), binary.LittleEndian.AppendUint16(nil, 312)...)
	head = append(head, make([]byte, 7)...)
	out := oggPageBytes(2, 0, head)
	out = append(out, oggPageBytes(0, 0, []byte("OpusTags"))...)
	return append(out, oggPageBytes(4, samples+312, []byte{0xfc})...)
}

// TestOpenAI: the openai engine posts to providers.openai's URL with its
// key, one request per chunk of long text, and the MP3 or Ogg Opus
// answers are joined and measured.
func TestOpenAI(t *testing.T) {
	t.Setenv("TTS_TEST_OPENAI_KEY", "sk-test")
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if r.Method != http.MethodPost || r.URL.Path != "/v1/audio/speech" || r.Header.Get("Authorization") != "Bearer sk-test" || json.NewDecoder(r.Body).Decode(&body) != nil {
			http.Error(w, "unexpected request "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
			return
		}
		mu.Lock()
		bodies = append(bodies, body)
		mu.Unlock()
		if body["response_format"] == "opus" {
			_, _ = w.Write(fakeOpus(48000))
			return
		}
		_, _ = w.Write(fakeMP3(100))
	}))
	defer srv.Close()
	r, ws := runner(t, map[string]any{"engine": "openai", "model": "tts-1"}, &Endpoint{BaseURL: srv.URL + "/v1", KeyEnv: "TTS_TEST_OPENAI_KEY"})
	long := strings.Repeat("A sentence of some length to speak aloud. ", 120) // 5,040 bytes: two requests
	args, _ := json.Marshal(map[string]any{"text": long, "voice": "nova", "speed": 1.5})
	res := speakCall(t, r, string(args))
	file, d := written(t, ws, res, "audio/mpeg")
	if res.Content[0].Text != "MEDIA:tts/c1.mp3" {
		t.Errorf("without a path the file is %s, want tts/ and the call's id", res.Content[0].Text)
	}
	mu.Lock()
	if len(bodies) != 2 || bodies[0]["model"] != "tts-1" || bodies[0]["voice"] != "nova" || bodies[0]["speed"] != 1.5 || bodies[0]["response_format"] != "mp3" ||
		bodies[0]["input"].(string)+" "+bodies[1]["input"].(string) != strings.TrimSpace(long) {
		t.Fatalf("requests = %d, first %v; want two of model tts-1, voice nova, speed 1.5, mp3, splitting the text", len(bodies), bodies[0])
	}
	if want := 200 * 1152 * 1000 / 44100; int(d["durationMs"].(float64)) != want || len(file) != 200*417 {
		t.Errorf("durationMs = %v, %d bytes; want %d ms of 200 frames without tags", d["durationMs"], len(file), want)
	}
	mu.Unlock()
	res = speakCall(t, r, `{"text":"Twice. Or once.","format":"opus","path":"a.ogg"}`)
	if _, d := written(t, ws, res, "audio/ogg"); d["durationMs"] != float64(1000) || d["format"] != "opus" {
		t.Errorf("opus details = %v, want 1000 ms", d)
	}
}

// TestElevenLabs: the elevenlabs engine posts to its voice's URL with the
// key from ELEVENLABS_API_KEY and wraps the PCM it asks for in a WAV file.
func TestElevenLabs(t *testing.T) {
	t.Setenv("ELEVENLABS_API_KEY", "el-test")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/text-to-speech/voice1" || r.URL.Query().Get("output_format") != "pcm_22050" || r.Header.Get("xi-api-key") != "el-test" ||
			!bytes.Contains(body, []byte(`"model_id":"eleven_multilingual_v2"`)) || !bytes.Contains(body, []byte(`"text":"Hello there."`)) {
			http.Error(w, "unexpected request "+r.URL.String()+" "+string(body), http.StatusBadRequest)
			return
		}
		_, _ = w.Write(make([]byte, elevenLabsRate*2*3/2)) // 1.5 s
	}))
	defer srv.Close()
	r, ws := runner(t, map[string]any{"engine": "elevenlabs", "baseURL": srv.URL, "voice": "voice1"}, nil)
	_, d := written(t, ws, speakCall(t, r, `{"text":"Hello there.","format":"wav"}`), "audio/wav")
	if d["durationMs"] != float64(1500) {
		t.Errorf("details = %v, want 1500 ms", d)
	}
	if res := speakCall(t, r, `{"text":"Hello there.","format":"opus"}`); !res.IsError || !strings.Contains(res.Content[0].Text, "it makes mp3, wav") {
		t.Errorf("opus from elevenlabs: %+v, want refused naming mp3, wav", res)
	}
}

// TestSplit: chunks hold whole sentences within the limit, lose no word,
// and a sentence longer than the limit is cut at spaces.
func TestSplit(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 30) + "end."
	for _, tc := range []struct {
		text  string
		limit int
		want  []string
	}{
		{"One. Two! Three? Four", 100, []string{"One. Two! Three? Four"}},
		{"One. Two! Three? Four", 10, []string{"One. Two!", "Three?", "Four"}},
		{"Version 1.5 is out.\n\nNext  paragraph.", 16, []string{"Version 1.5 is", "out.", "Next paragraph."}},
		{"A. " + long, 60, nil},
	} {
		got := split(tc.text, tc.limit)
		for _, c := range got {
			if len(c) > tc.limit {
				t.Errorf("split(%q, %d): chunk %q over the limit", tc.text, tc.limit, c)
			}
		}
		if strings.Join(got, " ") != strings.Join(strings.Fields(tc.text), " ") {
			t.Errorf("split(%q, %d) = %q: words lost or reordered", tc.text, tc.limit, got)
		}
		if tc.want != nil && strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("split(%q, %d) = %q, want %q", tc.text, tc.limit, got, tc.want)
		}
	}
}

// FuzzSplit: every chunk fits the limit and is not empty, and the chunks
// hold the text's characters other than spaces, in order.
func FuzzSplit(f *testing.F) {
	f.Add("One. Two! Three? Four", 10)
	f.Add("Dès l'été… Ça va? Oui.\n\nFin", 8)
	f.Fuzz(func(t *testing.T, text string, limit int) {
		limit = 8 + abs(limit)%200
		got := split(text, limit)
		for _, c := range got {
			if c == "" || len(c) > limit {
				t.Fatalf("split(%q, %d): chunk %q", text, limit, c)
			}
		}
		kept := ""
		for _, c := range got {
			kept += strings.Join(strings.Fields(c), "")
		}
		if kept != strings.Join(strings.Fields(text), "") {
			t.Fatalf("split(%q, %d) = %q: characters lost", text, limit, got)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// FuzzDuration: the parsers never panic, whatever the bytes.
func FuzzDuration(f *testing.F) {
	f.Add(fakeMP3(2))
	f.Add(fakeOpus(480))
	f.Add(pcmWAV(make([]byte, 100), 8000))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, fm := range formats {
			_, _ = fm.duration(b)
			_, _ = fm.join([][]byte{b, b})
		}
	})
}
