package content

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"strings"
	"testing"
)

// noisy returns a w×h image of random colours, which compresses badly.
func noisy(w, h int, seed uint64) *image.RGBA {
	rng := rand.New(rand.NewPCG(seed, seed))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = uint8(rng.Uint32()), uint8(rng.Uint32()), uint8(rng.Uint32()), 255
	}
	return img
}

func encodePNG(t testing.TB, img image.Image) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestFitImageWithinLimits(t *testing.T) {
	t.Parallel()
	img := image.NewRGBA(image.Rect(0, 0, 40, 30))
	img.Set(1, 1, color.RGBA{255, 0, 0, 255})
	raw := encodePNG(t, img)
	std := base64.StdEncoding.EncodeToString(raw)
	for name, in := range map[string]string{
		"standard":     std,
		"data URL":     "data:image/png;base64," + std,
		"line breaks":  std[:10] + "\n" + std[10:20] + "\r\n " + std[20:],
		"no padding":   strings.TrimRight(std, "="),
		"url alphabet": base64.URLEncoding.EncodeToString(raw),
		"raw url":      base64.RawURLEncoding.EncodeToString(raw),
	} {
		// The declared type is wrong on purpose: the sniffed one wins.
		f := FitImage(in, "image/jpeg", ImageLimits{})
		if f.Note != "" || f.Data != std || f.MIMEType != "image/png" || f.Resized || f.Width != 40 || f.Height != 30 {
			t.Errorf("%s: %+v", name, f)
		}
	}
}

func TestFitImageRejects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ data, want string }{
		{"", "its data is empty"},
		{"   ", "its data is empty"},
		{"!!!not base64!!!", "not valid base64"},
		{base64.StdEncoding.EncodeToString([]byte("hello, I am text")), "not a PNG, JPEG, GIF or WebP image (declared image/png, looks like text/plain"},
		{base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n garbage")), "cannot be decoded"},
	} {
		f := FitImage(tc.data, "image/png", ImageLimits{})
		if f.Data != "" || !strings.Contains(f.Note, tc.want) {
			t.Errorf("%q: %+v, want note %q", tc.data, f, tc.want)
		}
	}
}

func TestFitImageShrinksOversized(t *testing.T) {
	t.Parallel()
	// 3000×2000 of noise: over 1200 px and, as PNG, far over 5 MiB.
	raw := encodePNG(t, noisy(3000, 2000, 1))
	if len(raw) <= DefaultMaxBytes {
		t.Fatalf("test image is only %d bytes", len(raw))
	}
	f := FitImage(base64.StdEncoding.EncodeToString(raw), "image/png", ImageLimits{})
	if f.Note != "" || !f.Resized || f.MIMEType != "image/jpeg" {
		t.Fatalf("%+v", f.Note)
	}
	out, err := base64.StdEncoding.DecodeString(f.Data)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if max(cfg.Width, cfg.Height) > DefaultMaxSide || len(out) > DefaultMaxBytes || cfg.Width != f.Width || cfg.Width != 1200 || cfg.Height != 800 {
		t.Errorf("result %d×%d, %d bytes", cfg.Width, cfg.Height, len(out))
	}
	// A tight byte limit forces a smaller size and quality.
	f = FitImage(base64.StdEncoding.EncodeToString(raw), "", ImageLimits{MaxSide: 800, MaxBytes: 60_000})
	out, _ = base64.StdEncoding.DecodeString(f.Data)
	if f.Note != "" || len(out) > 60_000 || f.Width > 800 {
		t.Errorf("tight limits: %d bytes, %d px, note %q", len(out), f.Width, f.Note)
	}
	// A limit no size can meet gives a note, not a broken image.
	f = FitImage(base64.StdEncoding.EncodeToString(raw), "", ImageLimits{MaxSide: 1200, MaxBytes: 100})
	if f.Data != "" || !strings.Contains(f.Note, "could not be reduced below 100 bytes") {
		t.Errorf("impossible limit: %+v", f.Note)
	}
}

func TestFitImageTransparentBecomesWhite(t *testing.T) {
	t.Parallel()
	img := image.NewNRGBA(image.Rect(0, 0, 2000, 10)) // fully transparent
	f := FitImage(base64.StdEncoding.EncodeToString(encodePNG(t, img)), "", ImageLimits{})
	out, _ := base64.StdEncoding.DecodeString(f.Data)
	dec, err := jpeg.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if r, g, b, _ := dec.At(5, 2).RGBA(); r>>8 < 240 || g>>8 < 240 || b>>8 < 240 {
		t.Errorf("transparent pixels became %d,%d,%d", r>>8, g>>8, b>>8)
	}
}

func BenchmarkResize4000x3000(b *testing.B) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, noisy(4000, 3000, 2), &jpeg.Options{Quality: 90}); err != nil {
		b.Fatal(err)
	}
	data := base64.StdEncoding.EncodeToString(buf.Bytes())
	b.ReportAllocs()
	for b.Loop() {
		if f := FitImage(data, "image/jpeg", ImageLimits{}); !f.Resized {
			b.Fatal(f.Note)
		}
	}
}
