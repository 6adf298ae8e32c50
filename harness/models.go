package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mecha-agent/mecha/engine/provider/anthropic"
	"github.com/mecha-agent/mecha/engine/provider/openai"
)

// ErrNoModelList is ListModels' error for a provider that lists no models
// (mock).
var ErrNoModelList = errors.New("lists no models")

// modelsTimeout bounds ListModels.
const modelsTimeout = 5 * time.Second

// ListModels asks a provider which models it serves: GET /v1/models at its
// base URL (Anthropic, OpenAI, llama-server and Ollama all answer it, as
// {"data":[{"id":...}]}), with its key, within five seconds, at most 1 MiB
// read. The error never holds the key, nor a password in the URL.
func ListModels(ctx context.Context, w *World, name string) ([]string, error) {
	h := http.Header{}
	var base string
	switch name {
	case anthropic.Name:
		base = w.getenv("ANTHROPIC_BASE_URL")
		if base == "" {
			base = anthropic.DefaultBaseURL
		}
		h.Set("x-api-key", w.getenv("ANTHROPIC_API_KEY"))
		h.Set("anthropic-version", anthropic.APIVersion)
	case openai.NameOpenAI:
		base = w.getenv("OPENAI_BASE_URL")
		if base == "" {
			base = openai.DefaultBaseURL
		}
		h.Set("Authorization", "Bearer "+w.getenv("OPENAI_API_KEY"))
	case openai.NameLocal:
		base = w.getenv("MECHA_LOCAL_URL")
		if base == "" {
			base = openai.LocalDefaultBaseURL
		}
	default:
		return nil, fmt.Errorf("%s %w", name, ErrNoModelList)
	}
	base = strings.TrimSuffix(strings.TrimRight(base, "/"), "/v1")
	ctx, cancel := context.WithTimeout(ctx, modelsTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/models", nil)
	if err != nil {
		return nil, fmt.Errorf("%s: bad base URL", name)
	}
	req.Header = h
	resp, err := w.client().Do(req)
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		return nil, fmt.Errorf("%s: %w", name, ue.Err)
	} else if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: GET /v1/models answered %s", name, resp.Status)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&list); err != nil {
		return nil, fmt.Errorf("%s: GET /v1/models did not answer a model list", name)
	}
	var ids []string
	for _, d := range list.Data {
		if d.ID != "" {
			ids = append(ids, d.ID)
		}
	}
	return ids, nil
}
