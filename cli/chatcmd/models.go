package chatcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/mecha-agent/mecha/engine/provider/anthropic"
	"github.com/mecha-agent/mecha/engine/provider/openai"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/internal/textfmt"
)

// /model's picker offers the models mecha knows for the chat's provider:
// its default and config.toml's model for it, the models of the built-in
// price table (and config.toml's [prices]), and the models the provider
// itself lists (GET /v1/models, which Anthropic, OpenAI, llama-server and
// Ollama answer), asked in the background when the picker opens, within
// modelsTimeout; a provider that does not answer leaves the list as it is,
// with a note saying why.

const modelsTimeout = 5 * time.Second

// modelsMsg is the provider's list of models, or why there is none.
type modelsMsg struct {
	provider string
	ids      []string
	err      error
}

// openModelPicker opens /model's picker.
func (m *model) openModelPicker() tea.Cmd {
	prov := m.status.provider
	cfg := m.eng.door.Config()
	known := map[string]string{}
	add := func(id, from string) {
		if id != "" && known[id] == "" {
			known[id] = from
		}
	}
	add(m.status.model, "in use")
	add(cfg.Model(prov), "config.toml")
	add(harness.DefaultModel(cfg, prov), "mecha's default")
	for id := range cfg.Prices[prov] {
		if id != "*" {
			add(id, "priced")
		}
	}
	m.pick = &picker{title: "model for " + textfmt.Visible(prov), choose: func(it pickItem) tea.Cmd {
		m.model(it.value)
		return nil
	}, note: "asking " + textfmt.Visible(prov) + " for its models…"}
	m.pick.items = modelItems(known)
	base, header := m.modelsEndpoint(prov)
	if base == "" {
		m.pick.note = ""
		return nil
	}
	client := m.eng.env.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	ctx := m.eng.base
	return func() tea.Msg {
		ids, err := listModels(ctx, client, base+"/v1/models", header)
		return modelsMsg{prov, ids, err}
	}
}

// modelItems are the picker's rows, the model in use first, then by name.
func modelItems(known map[string]string) []pickItem {
	ids := make([]string, 0, len(known))
	for id := range known {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		if (known[a] == "in use") != (known[b] == "in use") {
			if known[a] == "in use" {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	out := make([]pickItem, len(ids))
	for i, id := range ids {
		out[i] = pickItem{label: textfmt.Visible(id), detail: "(" + known[id] + ")", value: id}
	}
	return out
}

// modelsDone adds the provider's models to the picker, if it is still open.
func (m *model) modelsDone(msg modelsMsg) {
	p := m.pick
	if p == nil || !strings.HasPrefix(p.title, "model for ") {
		return
	}
	if msg.err != nil {
		p.note = textfmt.Visible(msg.provider) + " did not list its models: " + textfmt.Visible(textfmt.OneLine(msg.err.Error()))
		return
	}
	known := map[string]string{}
	for _, it := range p.items {
		known[it.value] = strings.Trim(it.detail, "()")
	}
	for _, id := range msg.ids {
		if known[id] == "" {
			known[id] = "listed by " + msg.provider
		}
	}
	p.items = modelItems(known)
	p.note = fmt.Sprintf("%s lists %d models", textfmt.Visible(msg.provider), len(msg.ids))
}

// modelsEndpoint is where prov lists its models and the header it needs;
// "" for a provider with no list (mock).
func (m *model) modelsEndpoint(prov string) (string, http.Header) {
	get := m.eng.env.Vars.Get
	h := http.Header{}
	base := ""
	switch prov {
	case anthropic.Name:
		base = or(get("ANTHROPIC_BASE_URL"), anthropic.DefaultBaseURL)
		h.Set("x-api-key", get("ANTHROPIC_API_KEY"))
		h.Set("anthropic-version", "2023-06-01")
	case openai.NameOpenAI:
		base = or(get("OPENAI_BASE_URL"), openai.DefaultBaseURL)
		h.Set("Authorization", "Bearer "+get("OPENAI_API_KEY"))
	case openai.NameLocal:
		base = or(get("MECHA_LOCAL_URL"), openai.LocalDefaultBaseURL)
	}
	return strings.TrimSuffix(strings.TrimRight(base, "/"), "/v1"), h
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// listModels is GET url: the ids of the list Anthropic's and OpenAI's
// APIs answer alike ({"data":[{"id":...}]}), at most 1 MiB of it.
func listModels(ctx context.Context, client *http.Client, addr string, h http.Header) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, modelsTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, addr, nil)
	if err != nil {
		return nil, fmt.Errorf("not a URL: %v", err)
	}
	req.Header = h
	resp, err := client.Do(req)
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		return nil, ue.Err // its URL may hold a password
	} else if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /v1/models answered %s", resp.Status)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&list); err != nil {
		return nil, fmt.Errorf("GET /v1/models did not answer a model list")
	}
	var ids []string
	for _, d := range list.Data {
		if d.ID != "" {
			ids = append(ids, d.ID)
		}
	}
	return ids, nil
}
