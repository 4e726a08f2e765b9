package content

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	_ "image/gif" // decoders for the formats models accept
	"image/jpeg"
	_ "image/png"
	"net/http"
	"strings"

	xdraw "golang.org/x/image/draw"
	_ "golang.org/x/image/webp"
)

// ImageLimits bound the images sent to a model.
type ImageLimits struct {
	// MaxSide is the longest side in pixels (default 1200).
	MaxSide int
	// MaxBytes is the largest encoded size (default 5 MiB).
	MaxBytes int
}

// Default image limits.
const (
	DefaultMaxSide  = 1200
	DefaultMaxBytes = 5 << 20
	// maxPixels refuses images whose decoding alone would use too much memory.
	maxPixels = 40_000_000
)

func (l ImageLimits) withDefaults() ImageLimits {
	if l.MaxSide <= 0 {
		l.MaxSide = DefaultMaxSide
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	return l
}

// FittedImage is an image ready for a model, or the reason it is not.
type FittedImage struct {
	// Data is the base64 of the image (standard alphabet, padded).
	Data string
	// MIMEType is sniffed from the bytes; it wins over the declared type.
	MIMEType string
	// Resized says the image was re-encoded to fit the limits.
	Resized bool
	// Width and Height are the image's size as sent.
	Width, Height int
	// Note, when set, says why the image cannot be sent; Data is then empty.
	Note string
}

var modelImageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// FitImage checks the base64 image data of a content block and makes it fit
// the limits: the base64 is canonicalized (whitespace, data: URLs, the
// URL-safe alphabet and missing padding are accepted), the MIME type is
// sniffed from the bytes, and an image over the limits is re-encoded as JPEG
// over a ladder of sizes and qualities until it fits. An image that is empty,
// invalid or cannot be made to fit comes back with a Note instead.
func FitImage(data, declared string, lim ImageLimits) FittedImage {
	lim = lim.withDefaults()
	raw, err := decodeBase64(data)
	switch {
	case err != nil:
		return FittedImage{Note: fmt.Sprintf("[image omitted: its data is not valid base64 (%v)]", err)}
	case len(raw) == 0:
		return FittedImage{Note: "[image omitted: its data is empty]"}
	}
	mime := http.DetectContentType(raw)
	if !modelImageTypes[mime] {
		return FittedImage{Note: fmt.Sprintf("[image omitted: the data is not a PNG, JPEG, GIF or WebP image (declared %s, looks like %s)]", orUnknown(declared), mime)}
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		return FittedImage{Note: fmt.Sprintf("[image omitted: the %s image cannot be decoded: %v]", mime, err)}
	}
	if cfg.Width*cfg.Height > maxPixels || cfg.Width <= 0 || cfg.Height <= 0 {
		return FittedImage{Note: fmt.Sprintf("[image omitted: %d×%d pixels is too large to process]", cfg.Width, cfg.Height)}
	}
	if max(cfg.Width, cfg.Height) <= lim.MaxSide && len(raw) <= lim.MaxBytes {
		return FittedImage{Data: base64.StdEncoding.EncodeToString(raw), MIMEType: mime, Width: cfg.Width, Height: cfg.Height}
	}
	img, _, err := image.Decode(bytes.NewReader(raw))
	if err != nil {
		return FittedImage{Note: fmt.Sprintf("[image omitted: the %s image cannot be decoded: %v]", mime, err)}
	}
	return shrink(img, lim)
}

// shrink re-encodes img as JPEG, trying smaller sizes and lower qualities
// until the result fits.
func shrink(img image.Image, lim ImageLimits) FittedImage {
	b := img.Bounds()
	longest := max(b.Dx(), b.Dy())
	var buf bytes.Buffer
	for _, side := range []int{lim.MaxSide, lim.MaxSide * 3 / 4, lim.MaxSide / 2, lim.MaxSide / 3} {
		if side <= 0 {
			continue
		}
		scaled := scale(img, min(side, longest))
		for _, q := range []int{85, 70, 55, 40} {
			buf.Reset()
			if err := jpeg.Encode(&buf, scaled, &jpeg.Options{Quality: q}); err != nil {
				return FittedImage{Note: fmt.Sprintf("[image omitted: re-encoding failed: %v]", err)}
			}
			if buf.Len() <= lim.MaxBytes {
				sb := scaled.Bounds()
				return FittedImage{Data: base64.StdEncoding.EncodeToString(buf.Bytes()), MIMEType: "image/jpeg", Resized: true, Width: sb.Dx(), Height: sb.Dy()}
			}
		}
	}
	return FittedImage{Note: fmt.Sprintf("[image omitted: %d×%d could not be reduced below %d bytes]", b.Dx(), b.Dy(), lim.MaxBytes)}
}

// scale returns img resized so its longest side is side pixels, over a white
// background (JPEG has no transparency). A large reduction first averages
// whole blocks of pixels, so thin lines and text survive, then interpolates
// the small remaining step.
func scale(img image.Image, side int) image.Image {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w >= h {
		w, h = side, max(1, h*side/w)
	} else {
		w, h = max(1, w*side/h), side
	}
	flat := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	if o, ok := img.(interface{ Opaque() bool }); ok && o.Opaque() {
		draw.Draw(flat, flat.Bounds(), img, b.Min, draw.Src)
	} else {
		draw.Draw(flat, flat.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
		draw.Draw(flat, flat.Bounds(), img, b.Min, draw.Over)
	}
	src := boxShrink(flat, min(b.Dx()/w, b.Dy()/h))
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	xdraw.BiLinear.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
	return dst
}

// boxShrink returns src reduced by an integer factor, each pixel the average
// of a factor×factor block.
func boxShrink(src *image.RGBA, factor int) *image.RGBA {
	if factor < 2 {
		return src
	}
	w, h := src.Rect.Dx()/factor, src.Rect.Dy()/factor
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	n := uint32(factor * factor)
	sums := make([]uint32, 4*w)
	for y := range h {
		clear(sums)
		for dy := range factor {
			row := src.Pix[(y*factor+dy)*src.Stride:]
			for x := range w {
				p := row[x*factor*4 : (x+1)*factor*4]
				s := sums[x*4 : x*4+4]
				for i := 0; i < len(p); i += 4 {
					s[0] += uint32(p[i])
					s[1] += uint32(p[i+1])
					s[2] += uint32(p[i+2])
					s[3] += uint32(p[i+3])
				}
			}
		}
		out := dst.Pix[y*dst.Stride:]
		for i, v := range sums {
			out[i] = uint8(v / n)
		}
	}
	return dst
}

// decodeBase64 accepts standard or URL-safe base64, with or without padding,
// whitespace, or a data: URL prefix.
func decodeBase64(s string) ([]byte, error) {
	if rest, ok := strings.CutPrefix(s, "data:"); ok {
		if _, payload, found := strings.Cut(rest, ","); found {
			s = payload
		}
	}
	if strings.ContainsAny(s, " \n\r\t-_") {
		s = strings.Map(canonicalBase64, s)
	}
	s = strings.TrimRight(s, "=")
	return base64.RawStdEncoding.DecodeString(s)
}

// canonicalBase64 maps the URL-safe alphabet to the standard one and drops
// whitespace.
func canonicalBase64(r rune) rune {
	switch r {
	case ' ', '\n', '\r', '\t':
		return -1
	case '-':
		return '+'
	case '_':
		return '/'
	}
	return r
}

func orUnknown(s string) string {
	if s == "" {
		return "no type"
	}
	return s
}
