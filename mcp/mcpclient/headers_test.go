package mcpclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mecha-agent/mecha/testkit/mcptest"
)

// TestHTTPHeadersExpanded: an HTTP server's headers reach it with ${VAR}
// expanded at connect time, on every request, and neither the value nor
// the header is in what a config record stores; an unset variable stops
// that server, naming the variable.
func TestHTTPHeadersExpanded(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return mcptest.NewServer(mcptest.Options{}) }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	cfg := ServerConfig{Name: "h", URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer ${TOK}"}}
	getenv := func(k string) string {
		if k == "TOK" {
			return "s3cret-value"
		}
		return ""
	}
	set := Start(context.Background(), []ServerConfig{cfg}, Options{Getenv: getenv})
	defer set.Close()
	s := set.Servers()[0]
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	tools, err := set.Tools()
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if tl.Remote() == "echo" {
			if res, err := tl.Run(context.Background(), json.RawMessage(`{"text":"hi"}`)); err != nil || res.Content != "hi" {
				t.Fatalf("echo: %+v %v", res, err)
			}
		}
	}
	mu.Lock()
	if len(seen) < 3 {
		t.Errorf("%d requests", len(seen))
	}
	for _, v := range seen {
		if v != "Bearer s3cret-value" {
			t.Errorf("a request carried Authorization %q", v)
		}
	}
	mu.Unlock()
	rec, err := json.Marshal(set.Record(nil))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(rec), "s3cret") || strings.Contains(string(rec), "Authorization") || strings.Contains(string(rec), "TOK") {
		t.Errorf("the record holds the header: %s", rec)
	}
	if !strings.Contains(string(rec), `"url":"`+srv.URL+`"`) {
		t.Errorf("the record lacks the url: %s", rec)
	}

	unset := Start(context.Background(), []ServerConfig{cfg}, Options{Getenv: func(string) string { return "" }})
	defer unset.Close()
	if err := unset.Servers()[0].Err; err == nil || !strings.Contains(err.Error(), "${TOK} is not set") {
		t.Errorf("unset variable: %v", err)
	}
}
