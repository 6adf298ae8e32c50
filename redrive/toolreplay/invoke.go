package toolreplay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/internal/textfmt"
)

// ErrUnknownTool is wrapped by Invoke's error for a tool the registry does
// not hold.
var ErrUnknownTool = errors.New("unknown tool")

// ErrNotObject is wrapped by CheckInput's error for input that is not a
// JSON object.
var ErrNotObject = errors.New("the input is not a JSON object")

// CheckInput reports whether input is one JSON object (empty input counts
// as {}), as every tool's input must be.
func CheckInput(input []byte) error {
	in := bytes.TrimSpace(input)
	if len(in) == 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(in))
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return fmt.Errorf("toolreplay: %w: %s", ErrNotObject, textfmt.Clip(textfmt.OneLine(string(in)), 60))
	}
	if dec.More() {
		return fmt.Errorf("toolreplay: %w: trailing data after the object", ErrNotObject)
	}
	return nil
}

// Invoke runs one call through reg exactly as the agent loop does: the
// tool's own result, or, when the tool returns an error (the harness
// failed), an error result saying so. The returned error is for what ends
// the caller, not the call: an unknown tool (ErrUnknownTool) or a
// cancelled ctx.
func Invoke(ctx context.Context, reg *tool.Registry, name string, input json.RawMessage) (tool.Result, error) {
	t, ok := reg.Get(name)
	if !ok {
		return tool.Result{}, fmt.Errorf("toolreplay: %w %q (available: %s)", ErrUnknownTool, name, strings.Join(reg.Names(), ", "))
	}
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage(`{}`)
	}
	res, err := t.Run(ctx, input)
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() != nil:
		return res, fmt.Errorf("toolreplay: %s: %w", name, ctx.Err())
	}
	return tool.Result{Content: "the tool failed: " + err.Error(), IsError: true}, nil
}
