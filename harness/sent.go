package harness

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/provider/anthropic"
	"github.com/mecha-agent/mecha/engine/provider/openai"
	"github.com/mecha-agent/mecha/record/transcript"
)

// unsentSettings names the settings of rc its provider does not send,
// as the provider's client says (anthropic.Unsent, openai.Unsent). The
// mock takes them all: it has no wire, and its script stands for a model
// that would.
func unsentSettings(rc *transcript.Config) []string {
	req := &provider.Request{MaxTokens: rc.MaxTokens, Temperature: rc.Temperature, Seed: rc.Seed,
		Thinking: rc.Thinking, CachePrompt: rc.CachePrompt}
	if rc.Effort != nil {
		req.Effort = *rc.Effort
	}
	switch rc.Provider {
	case anthropic.Name:
		return anthropic.Unsent(req)
	case openai.NameOpenAI, openai.NameLocal:
		return openai.Unsent(rc.Provider, req)
	}
	return nil
}

// flags are the flags that set each setting, for the note.
var flags = map[string]string{
	provider.SettingTemperature: "--temperature", provider.SettingSeed: "--seed", provider.SettingEffort: "--effort",
	provider.SettingThinking: "--thinking", provider.SettingCachePrompt: "--no-cache-prompt",
}

// recordSent makes rc hold what its provider sends: each setting the
// provider does not send becomes null (a pointer set to nil, a flag named
// in Nulls), whatever was asked, so that the record never claims a seed
// that shaped no request. A flag another provider's attach recorded as
// null that this provider sends gets its default back (thinking off,
// cache_prompt on). It returns the flags of the settings that were asked
// for (a value other than the default) and are not sent, for a note.
func recordSent(rc *transcript.Config) (asked []string) {
	unsent := unsentSettings(rc)
	rc.Nulls = slices.DeleteFunc(slices.Clone(rc.Nulls), func(n string) bool {
		if slices.Contains(unsent, n) {
			return false
		}
		switch n {
		case provider.SettingThinking:
			rc.Thinking = false
		case provider.SettingCachePrompt:
			rc.CachePrompt = true
		default:
			return false
		}
		return true
	})
	null := func(name string) {
		if !slices.Contains(rc.Nulls, name) {
			rc.Nulls = append(rc.Nulls, name)
		}
	}
	for _, n := range unsent {
		var wasAsked bool
		switch n {
		case provider.SettingTemperature:
			wasAsked, rc.Temperature = rc.Temperature != nil, nil
		case provider.SettingSeed:
			wasAsked, rc.Seed = rc.Seed != nil, nil
		case provider.SettingEffort:
			wasAsked, rc.Effort = rc.Effort != nil, nil
		case provider.SettingThinking:
			wasAsked, rc.Thinking = rc.Thinking, false
			null(n)
		case provider.SettingCachePrompt:
			wasAsked, rc.CachePrompt = !rc.CachePrompt && !slices.Contains(rc.Nulls, n), false
			null(n)
		}
		if wasAsked {
			asked = append(asked, flags[n])
		}
	}
	if len(rc.Nulls) == 0 {
		rc.Nulls = nil
	}
	return asked
}

// unsentNote is the one line that says which settings asked for were not
// sent.
func unsentNote(provider string, asked []string) string {
	return fmt.Sprintf("mecha: not sent to %s, so recorded as null: %s", provider, strings.Join(asked, ", "))
}

// recordSent makes rc hold what its provider sends (recordSent), and says
// once per door, on World.Err, which settings asked for are not sent.
func (d *Door) recordSent(rc *transcript.Config) {
	var fresh []string
	for _, flag := range recordSent(rc) {
		key := rc.Provider + " " + flag
		if !d.unsentNoted[key] {
			if d.unsentNoted == nil {
				d.unsentNoted = map[string]bool{}
			}
			d.unsentNoted[key] = true
			fresh = append(fresh, flag)
		}
	}
	if len(fresh) > 0 {
		fmt.Fprintln(d.world.errw(), unsentNote(rc.Provider, fresh))
	}
}
