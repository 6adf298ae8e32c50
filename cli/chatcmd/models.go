package chatcmd

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/mecha-agent/mecha/cli/attach"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/internal/textfmt"
)

// /model's picker offers the models mecha knows for the chat's provider:
// its default and config.toml's model for it, the models of the built-in
// price table (and config.toml's [prices]), and the models the provider
// itself lists (harness.ListModels), asked in the background when the
// picker opens; a provider that does not answer leaves the list as it is,
// with a note saying why.

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
	for id := range cfg.Prices()[prov] {
		if id != "*" {
			add(id, "priced")
		}
	}
	m.pick = &picker{title: "model for " + textfmt.Visible(prov), choose: func(it pickItem) tea.Cmd {
		m.model(it.value)
		return nil
	}, note: "asking " + textfmt.Visible(prov) + " for its models…"}
	m.pick.items = modelItems(known)
	world, ctx := attach.World(m.eng.env), m.eng.base
	return func() tea.Msg {
		ids, err := harness.ListModels(ctx, world, prov)
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
	if errors.Is(msg.err, harness.ErrNoModelList) {
		p.note = ""
		return
	}
	if msg.err != nil {
		p.note = "the provider did not list its models: " + textfmt.Visible(textfmt.OneLine(msg.err.Error()))
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
	p.note = fmt.Sprintf("%s lists %d model%s", textfmt.Visible(msg.provider), len(msg.ids), plural(len(msg.ids)))
}
