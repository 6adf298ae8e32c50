package wire

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mecha-agent/mecha/engine/provider"
)

func TestPost(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/ok":
			if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" ||
				r.Header.Get("Accept") != "text/event-stream" || r.Header.Get("X-Api-Key") != testKey {
				http.Error(w, "bad request headers", http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write(body) // echo
		case "/untyped":
			w.Header()["Content-Type"] = nil // no type, and none sniffed
			w.Write([]byte("data: x\n\n"))
		case "/html":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html>\n<title>Sign in</title>\n<p>" + testKey + strings.Repeat(" la", 100) + "</p></html>"))
		case "/empty-html":
			w.Header().Set("Content-Type", "text/html")
		case "/teapot":
			http.Error(w, `{"error":{"type":"overloaded_error","message":"brewing"}}`, http.StatusTeapot)
		}
	}))
	t.Cleanup(srv.Close)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		url     string
		v       any
		want    string // the echoed body, or the error
		wantErr bool
	}{
		{"2xx", context.Background(), srv.URL + "/ok", map[string]string{"q": "<a&b>"}, `{"q":"<a&b>"}`, false},
		{"non-2xx", context.Background(), srv.URL + "/teapot", nil, "prov: HTTP 418: overloaded_error: brewing", true},
		{"no content type: a stream", context.Background(), srv.URL + "/untyped", nil, "data: x\n\n", false},
		{"HTML", context.Background(), srv.URL + "/html", nil, "prov: HTTP 200: " + srv.URL + "/html answered text/html, not an event stream or JSON: " +
			"<html> <title>Sign in</title> <p>[redacted]" + strings.Repeat(" la", 19) + "...", true},
		{"empty HTML", context.Background(), srv.URL + "/empty-html", nil, "prov: HTTP 200: " + srv.URL + "/empty-html answered text/html, not an event stream or JSON: an empty body", true},
		{"bad URL", context.Background(), "http://bad host/", nil, `prov: bad base URL: parse "http://bad host/": invalid character " " in host name`, true},
		{"no scheme", context.Background(), "localhost:8080/v1/messages", nil, `prov: bad base URL "localhost:8080/v1/messages": it needs http:// or https:// and a host (as in http://127.0.0.1:8080)`, true},
		{"no host", context.Background(), "http:///v1/messages", nil, `prov: bad base URL "http:///v1/messages": it needs http:// or https:// and a host (as in http://127.0.0.1:8080)`, true},
		{"cannot encode", context.Background(), srv.URL + "/ok", func() {}, "prov: encode request: json: unsupported type: func()", true},
		{"context done", cancelled, srv.URL + "/ok", nil, "prov: context canceled", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := testClient(testKey)
			c.HTTP = srv.Client()
			resp, err := c.Post(tt.ctx, tt.url, tt.v, map[string]string{"x-api-key": testKey})
			if tt.wantErr {
				if err == nil || err.Error() != tt.want {
					t.Fatalf("err = %v, want %q", err, tt.want)
				}
				noKey(t, err.Error())
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if got, _ := io.ReadAll(resp.Body); string(got) != tt.want {
				t.Errorf("body = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestPostRefused(t *testing.T) {
	t.Parallel()
	// Port 1 needs privileges to bind: nothing listens there.
	_, err := (&Client{Provider: "prov"}).Post(context.Background(), "http://127.0.0.1:1/", nil, nil)
	var perr *provider.Error
	if !errors.As(err, &perr) || perr.Retryable || !strings.Contains(perr.Message, "refused") {
		t.Errorf("err = %#v", err)
	}
}

func TestIsJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		contentType string
		want        bool
	}{
		{"application/json", true},
		{"application/json; charset=utf-8", true},
		{"text/event-stream", false},
		{"", false},
		{"nonsense;;", false},
	}
	for _, tt := range tests {
		t.Run(tt.contentType, func(t *testing.T) {
			t.Parallel()
			resp := &http.Response{Header: http.Header{"Content-Type": {tt.contentType}}}
			if got := IsJSON(resp); got != tt.want {
				t.Errorf("IsJSON(%q) = %v", tt.contentType, got)
			}
		})
	}
}

func TestReadAnswer(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name      string
		ctx       context.Context
		body      io.Reader
		want      string // the decoded value, or the error
		retryable bool
	}{
		{"JSON", context.Background(), strings.NewReader(`{"a":"b"}`), "b", false},
		{"malformed", context.Background(), strings.NewReader(`{"a": ` + testKey + `}`),
			`prov: malformed answer "{\"a\": [redacted]}": invalid character 's' looking for beginning of value`, false},
		{"read error", context.Background(), iotest.ErrReader(errRead), "prov: reading the answer: connection reset", true},
		{"read error, context done", cancelled, iotest.ErrReader(errRead), "prov: context canceled", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var v struct{ A string }
			data, err := testClient(testKey).ReadAnswer(tt.ctx, tt.body, &v)
			if err != nil {
				var perr *provider.Error
				if err.Error() != tt.want || errors.As(err, &perr) && perr.Retryable != tt.retryable {
					t.Errorf("err = %q %#v, want %q retryable %v", err, err, tt.want, tt.retryable)
				}
				noKey(t, err.Error())
				return
			}
			if v.A != tt.want || string(data) != `{"a":"b"}` {
				t.Errorf("decoded %q from %s, want %q", v.A, data, tt.want)
			}
		})
	}
}

func TestToolInput(t *testing.T) {
	t.Parallel()
	tests := []struct{ args, want string }{
		{"", `{}`},
		{"  null ", `{}`},
		{`{ "x" : [1, 2] }`, `{"x":[1,2]}`},
		{`"a string"`, `"a string"`},
		{`{"x":`, `"{\"x\":"`},
		{"not json", `"not json"`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			t.Parallel()
			if got := ToolInput(tt.args); string(got) != tt.want {
				t.Errorf("ToolInput(%q) = %s, want %s", tt.args, got, tt.want)
			}
		})
	}
}
