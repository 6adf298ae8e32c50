package harness

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// TestListModels: each provider's list is asked at its base URL with its
// key; mock lists none; an error names neither the key nor a password in
// the URL.
func TestListModels(t *testing.T) {
	t.Parallel()
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.Path+" "+r.Header.Get("x-api-key")+r.Header.Get("Authorization"))
		w.Write([]byte(`{"data":[{"id":"model-a"},{"id":"model-b"}]}`))
	}))
	t.Cleanup(srv.Close)
	vars := map[string]string{"ANTHROPIC_BASE_URL": srv.URL, "ANTHROPIC_API_KEY": "ak", "OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_API_KEY": "ok",
		"MECHA_LOCAL_URL": srv.URL + "/"}
	w := &World{Getenv: func(k string) string { return vars[k] }, HTTPClient: srv.Client()}
	for _, p := range []string{"anthropic", "openai", "local"} {
		ids, err := ListModels(context.Background(), w, p)
		if err != nil || !slices.Equal(ids, []string{"model-a", "model-b"}) {
			t.Errorf("%s: %v, %v", p, ids, err)
		}
	}
	if want := []string{"/v1/models ak", "/v1/models Bearer ok", "/v1/models "}; !slices.Equal(got, want) {
		t.Errorf("requests %q, want %q", got, want)
	}
	if _, err := ListModels(context.Background(), w, "mock"); !errors.Is(err, ErrNoModelList) {
		t.Errorf("mock: %v", err)
	}
	vars["MECHA_LOCAL_URL"] = "http://user:hunter2@127.0.0.1:1"
	_, err := ListModels(context.Background(), w, "local")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a refused connection: %v", err)
	}
}
