package tool

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"io"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"
)

const canary = "CANARY-db+pw/9f3b?x=1&y" // + / ? = & change under base64, URL-safe base64 and percent-encoding

// leaks returns how text still shows secret, found by decoding rather than
// by the Redactor's own list of forms: the value itself, any 3 bytes of it
// in hex, or any 3 bytes of it in what a run of base64 characters decodes
// to at each of its four alignments, in either alphabet. "" when none.
func leaks(text, secret string) string {
	if strings.Contains(text, secret) {
		return "the value"
	}
	for i := 0; i+3 <= len(secret); i++ {
		w := hex.EncodeToString([]byte(secret[i : i+3]))
		if strings.Contains(text, w) || strings.Contains(text, strings.ToUpper(w)) {
			return "hex of " + secret[i:i+3]
		}
	}
	if d, err := url.QueryUnescape(text); err == nil && d != text && strings.Contains(d, secret) {
		return "percent-encoded"
	}
	isB64 := func(r rune) bool {
		return 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || strings.ContainsRune("+/-_", r)
	}
	for _, run := range strings.FieldsFunc(text, func(r rune) bool { return !isB64(r) }) {
		for off := range 4 {
			if off >= len(run) {
				break
			}
			s := run[off:]
			s = s[:len(s)/4*4]
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
				d, _ := enc.DecodeString(s) // what decodes before a bad character counts too
				for i := 0; i+3 <= len(secret); i++ {
					if bytes.Contains(d, []byte(secret[i:i+3])) {
						return "base64 of " + secret[i:i+3]
					}
				}
			}
		}
	}
	return ""
}

// encoded are the texts a command could print canary in: the encodings a
// Redactor knows, base64 at each alignment inside a longer stream.
func encoded(secret string) map[string]string {
	out := map[string]string{
		"raw":             "value=" + secret + "\n",
		"hex":             hex.EncodeToString([]byte("x" + secret + "y")),
		"HEX":             strings.ToUpper(hex.EncodeToString([]byte(secret))),
		"base64 alone":    base64.StdEncoding.EncodeToString([]byte(secret)) + "\n",
		"base64url alone": base64.URLEncoding.EncodeToString([]byte(secret)),
		"base64 raw":      base64.RawStdEncoding.EncodeToString([]byte(secret)),
		"percent":         "https://h/?q=" + url.QueryEscape(secret),
	}
	for k := range 3 {
		for j := range 3 {
			in := strings.Repeat("P", 10+k) + secret + strings.Repeat("S", j) + "\n"
			out["base64 stream "+string(rune('0'+k))+"/"+string(rune('0'+j))] = base64.StdEncoding.EncodeToString([]byte(in))
			out["base64url stream "+string(rune('0'+k))+"/"+string(rune('0'+j))] = base64.RawURLEncoding.EncodeToString([]byte(in))
		}
	}
	return out
}

func TestRedactorEncodings(t *testing.T) {
	t.Parallel()
	r := NewRedactor([]Secret{{"DB_PASS", canary}})
	for name, text := range encoded(canary) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if how := leaks(text, canary); how == "" {
				t.Fatalf("the control found no canary in %q", text)
			}
			got := r.Replace(text)
			if how := leaks(got, canary); how != "" {
				t.Errorf("Replace(%q) = %q: leaks %s", text, got, how)
			}
			if !strings.Contains(got, "[redacted DB_PASS]") {
				t.Errorf("Replace(%q) = %q: says nothing was redacted", text, got)
			}
		})
	}
}

// TestRedactorForms: each form is replaced whole where it stands alone,
// and the padded form of a value is not left with its padding.
func TestRedactorForms(t *testing.T) {
	t.Parallel()
	r := NewRedactor([]Secret{{"K", "abcdefgh"}})
	for _, f := range []string{"abcdefgh", "6162636465666768", "6162636465666768", "YWJjZGVmZ2g=", "YWJjZGVmZ2g"} {
		if got := r.Replace("<" + f + ">"); got != "<[redacted K]>" {
			t.Errorf("Replace(<%s>) = %q", f, got)
		}
	}
	if NewRedactor([]Secret{{"SHORT", "1234567"}}) != nil {
		t.Error("a value shorter than MinSecretLen has a redactor")
	}
	var none *Redactor
	if none.Replace("x") != "x" || none.Reader(strings.NewReader("x")) == nil {
		t.Error("a nil Redactor does not pass text through")
	}
}

// TestRedactWriterStreams: Replace does what a strings.Replacer given the
// forms longest first does, and written in pieces of any size, the stream
// comes out the same: a secret split across writes is replaced whole.
func TestRedactWriterStreams(t *testing.T) {
	t.Parallel()
	secrets := []Secret{{"LONG", canary + "-and-more"}, {"DB_PASS", canary}, {"OTHER", "zzzzzzzzzz"}}
	r := NewRedactor(secrets)
	var text strings.Builder
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range encoded(canary) {
		text.WriteString(s)
	}
	text.WriteString("head " + canary + "-and-more zzzzzzzzzzzz " + canary[:10] + " tail " + canary)
	whole := text.String()
	var pairs []string
	for _, p := range r.pats {
		pairs = append(pairs, p.old, p.new)
	}
	want := strings.NewReplacer(pairs...).Replace(whole)
	if got := r.Replace(whole); got != want {
		t.Fatalf("Replace =\n%q\nwant\n%q", got, want)
	}
	for trial := range 200 {
		var out bytes.Buffer
		w := r.Writer(&out)
		for rest := whole; rest != ""; {
			n := min(len(rest), 1+rng.IntN(40))
			if _, err := w.Write([]byte(rest[:n])); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("trial %d: streamed\n%q\nwant\n%q", trial, out.String(), want)
		}
	}
	got, err := io.ReadAll(iotest.OneByteReader(r.Reader(strings.NewReader(whole))))
	if err != nil || string(got) != want {
		t.Errorf("Reader = %q, %v\nwant %q", got, err, want)
	}
}

// TestRedactWriterCut: a stream cut inside a secret drops the part written
// (the beginning of the value, of its hex, of its base64); Close would
// have written it.
func TestRedactWriterCut(t *testing.T) {
	t.Parallel()
	r := NewRedactor([]Secret{{"DB_PASS", canary}})
	for _, f := range []string{canary, hex.EncodeToString([]byte(canary)), base64.StdEncoding.EncodeToString([]byte(canary))} {
		text := "kept text " + f[:len(f)/2]
		var out bytes.Buffer
		w := r.Writer(&out)
		w.Write([]byte(text))
		if err := w.Cut(); err != nil {
			t.Fatal(err)
		}
		if out.String() != "kept text " {
			t.Errorf("cut %q: wrote %q", text, out.String())
		}
		out.Reset()
		w = r.Writer(&out)
		w.Write([]byte(text))
		w.Close()
		if out.String() != text {
			t.Errorf("control: closed %q: wrote %q", text, out.String())
		}
	}
}
