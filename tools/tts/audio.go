package tts

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// A format is an audio file format tts writes.
type format struct {
	name, ext, mime string
	// join makes one file of the files of the chunks of a text, in order.
	join func(parts [][]byte) ([]byte, error)
	// duration measures how long the file plays.
	duration func(b []byte) (time.Duration, error)
}

// formats are the formats by name.
var formats = map[string]format{
	"wav":  {"wav", ".wav", "audio/wav", joinWAV, wavDuration},
	"mp3":  {"mp3", ".mp3", "audio/mpeg", joinMP3, mp3Duration},
	"opus": {"opus", ".ogg", "audio/ogg", joinOgg, oggDuration},
}

// wavFile is a PCM WAV file: its fmt chunk and its samples.
type wavFile struct {
	fmt  []byte // the fmt chunk's body
	data []byte
}

// parseWAV reads a RIFF WAVE file. A data chunk whose size runs past the
// end (espeak-ng's --stdout writes one, not knowing the size) ends at the
// end of b.
func parseWAV(b []byte) (wavFile, error) {
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return wavFile{}, errors.New("not a WAV file (no RIFF WAVE header)")
	}
	var w wavFile
	for p := 12; p+8 <= len(b); {
		id, size := string(b[p:p+4]), int(binary.LittleEndian.Uint32(b[p+4:p+8]))
		body := b[p+8:]
		if size > len(body) {
			size = len(body)
		}
		switch id {
		case "fmt ":
			w.fmt = body[:size]
		case "data":
			w.data = body[:size]
		}
		p += 8 + size + size%2
	}
	if len(w.fmt) < 16 || w.data == nil {
		return wavFile{}, errors.New("WAV file without fmt or data chunk")
	}
	return w, nil
}

// byteRate is the bytes of one second of the file's samples.
func (w wavFile) byteRate() int { return int(binary.LittleEndian.Uint32(w.fmt[8:12])) }

// encode writes the file with sizes that match its samples.
func (w wavFile) encode() []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	b.WriteString("RIFF")
	b.Write(le.AppendUint32(nil, uint32(4+8+len(w.fmt)+8+len(w.data))))
	b.WriteString("WAVEfmt ")
	b.Write(le.AppendUint32(nil, uint32(len(w.fmt))))
	b.Write(w.fmt)
	b.WriteString("data")
	b.Write(le.AppendUint32(nil, uint32(len(w.data))))
	b.Write(w.data)
	return b.Bytes()
}

// pcmWAV wraps 16-bit little-endian mono samples at rate Hz in a WAV file.
func pcmWAV(samples []byte, rate int) []byte {
	le := binary.LittleEndian
	f := le.AppendUint16(nil, 1) // PCM
	f = le.AppendUint16(f, 1)    // mono
	f = le.AppendUint32(f, uint32(rate))
	f = le.AppendUint32(f, uint32(rate*2))
	f = le.AppendUint16(f, 2)
	f = le.AppendUint16(f, 16)
	return wavFile{fmt: f, data: samples}.encode()
}

// joinWAV puts the samples of WAV files of one sample format one after
// the other in one file.
func joinWAV(parts [][]byte) ([]byte, error) {
	var out wavFile
	for i, p := range parts {
		w, err := parseWAV(p)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			out.fmt = w.fmt
		} else if !bytes.Equal(w.fmt, out.fmt) {
			return nil, errors.New("the chunks' WAV files differ in sample format")
		}
		out.data = append(out.data, w.data...)
	}
	return out.encode(), nil
}

// wavDuration is the playing time of a WAV file's samples.
func wavDuration(b []byte) (time.Duration, error) {
	w, err := parseWAV(b)
	if err != nil {
		return 0, err
	}
	if w.byteRate() == 0 {
		return 0, errors.New("WAV file with a byte rate of 0")
	}
	return time.Duration(float64(len(w.data)) / float64(w.byteRate()) * float64(time.Second)), nil
}

// mp3Frame is one MPEG audio frame of an MP3 file.
type mp3Frame struct {
	data    []byte
	samples int // per channel
	rate    int
	info    bool // a Xing/Info/VBRI frame: tags, no sound
}

// mp3 tables: bitrates in kbit/s of layer III by version (MPEG-1; MPEG-2
// and 2.5), and sample rates by version (index 3: MPEG-1, 2: MPEG-2, 0:
// MPEG-2.5).
var (
	mp3Bitrates = [2][16]int{
		{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0},
		{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0},
	}
	mp3Rates = map[int][3]int{3: {44100, 48000, 32000}, 2: {22050, 24000, 16000}, 0: {11025, 12000, 8000}}
)

// mp3Frames splits an MP3 file into its layer III frames, leaving out ID3
// tags.
func mp3Frames(b []byte) ([]mp3Frame, error) {
	if len(b) >= 10 && string(b[:3]) == "ID3" {
		size := int(b[6])<<21 | int(b[7])<<14 | int(b[8])<<7 | int(b[9])
		b = b[min(10+size, len(b)):]
	}
	var frames []mp3Frame
	for len(b) >= 4 {
		if len(b) == 128 && string(b[:3]) == "TAG" { // ID3v1 at the end
			break
		}
		h := binary.BigEndian.Uint32(b)
		version, layer := int(h>>19&3), int(h>>17&3)
		rates, ok := mp3Rates[version]
		bi, ri := int(h>>12&15), int(h>>10&3)
		if h>>21 != 0x7ff || !ok || layer != 1 || ri == 3 || mp3Bitrates[min(3-version, 1)][bi] == 0 {
			return nil, fmt.Errorf("not an MP3 (layer III) frame at byte %d", len(b))
		}
		rate, kbps, pad := rates[ri], mp3Bitrates[min(3-version, 1)][bi], int(h>>9&1)
		size, samples := 144000*kbps/rate+pad, 1152
		if version != 3 {
			size, samples = 72000*kbps/rate+pad, 576
		}
		if size > len(b) {
			return nil, errors.New("MP3 file cut in the middle of a frame")
		}
		f := b[:size]
		info := bytes.Contains(f[:min(len(f), 64)], []byte("Xing")) || bytes.Contains(f[:min(len(f), 64)], []byte("Info")) || bytes.Contains(f[:min(len(f), 64)], []byte("VBRI"))
		frames = append(frames, mp3Frame{data: f, samples: samples, rate: rate, info: info})
		b = b[size:]
	}
	if len(frames) == 0 {
		return nil, errors.New("MP3 file without frames")
	}
	return frames, nil
}

// joinMP3 puts the sound frames of MP3 files one after the other, leaving
// out their tags and Xing/Info frames (whose counts would describe one
// part only).
func joinMP3(parts [][]byte) ([]byte, error) {
	var out []byte
	for _, p := range parts {
		frames, err := mp3Frames(p)
		if err != nil {
			return nil, err
		}
		for _, f := range frames {
			if !f.info {
				out = append(out, f.data...)
			}
		}
	}
	return out, nil
}

// mp3Duration is the playing time of an MP3 file's sound frames.
func mp3Duration(b []byte) (time.Duration, error) {
	frames, err := mp3Frames(b)
	if err != nil {
		return 0, err
	}
	var d float64
	for _, f := range frames {
		if !f.info {
			d += float64(f.samples) / float64(f.rate)
		}
	}
	return time.Duration(d * float64(time.Second)), nil
}

// oggPage is one page of an Ogg file.
type oggPage struct {
	bos     bool // the first page of a logical stream
	granule int64
	payload []byte
}

// oggPages splits an Ogg file into its pages.
func oggPages(b []byte) ([]oggPage, error) {
	var pages []oggPage
	for len(b) > 0 {
		if len(b) < 27 || string(b[:4]) != "OggS" {
			return nil, fmt.Errorf("not an Ogg page %d bytes before the end", len(b))
		}
		n := int(b[26])
		if len(b) < 27+n {
			return nil, errors.New("an Ogg file cut in a page header")
		}
		size := 0
		for _, s := range b[27 : 27+n] {
			size += int(s)
		}
		if len(b) < 27+n+size {
			return nil, errors.New("an Ogg file cut in a page")
		}
		pages = append(pages, oggPage{bos: b[5]&2 != 0, granule: int64(binary.LittleEndian.Uint64(b[6:14])), payload: b[27+n : 27+n+size]})
		b = b[27+n+size:]
	}
	if len(pages) == 0 {
		return nil, errors.New("empty Ogg file")
	}
	return pages, nil
}

// joinOgg chains Ogg files: one after the other is a valid Ogg file whose
// streams play in turn.
func joinOgg(parts [][]byte) ([]byte, error) {
	for _, p := range parts {
		if _, err := oggPages(p); err != nil {
			return nil, err
		}
	}
	return bytes.Join(parts, nil), nil
}

// oggDuration is the playing time of an Ogg Opus or Vorbis file: for each
// chained stream, its last page's granule position less the Opus pre-skip,
// at the stream's granule rate.
func oggDuration(b []byte) (time.Duration, error) {
	pages, err := oggPages(b)
	if err != nil {
		return 0, err
	}
	var total float64
	var rate, skip, last int64
	end := func() {
		if rate > 0 {
			total += float64(max(last-skip, 0)) / float64(rate)
		}
	}
	for _, p := range pages {
		if p.bos {
			end()
			if rate, skip, err = oggStream(p.payload); err != nil {
				return 0, err
			}
			last = 0
		}
		if p.granule >= 0 {
			last = max(last, p.granule)
		}
	}
	end()
	return time.Duration(total * float64(time.Second)), nil
}

// oggStream reads a stream's granule rate and pre-skip from its first
// packet: Opus counts 48 kHz samples, Vorbis its sample rate.
func oggStream(head []byte) (rate, skip int64, err error) {
	switch {
	case len(head) >= 12 && string(head[:8]) == "OpusHead":
		return 48000, int64(binary.LittleEndian.Uint16(head[10:12])), nil
	case len(head) >= 16 && string(head[:7]) == "\x01vorbis":
		return int64(binary.LittleEndian.Uint32(head[12:16])), 0, nil
	}
	return 0, 0, errors.New("an Ogg stream that is neither Opus nor Vorbis")
}
