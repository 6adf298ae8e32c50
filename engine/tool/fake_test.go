package tool

import (
	"context"
	"encoding/json"
)

// fakeTool is a Tool that records whether it ran.
type fakeTool struct {
	name string
	caps Capabilities
	runs int
}

func (f *fakeTool) Spec() Spec {
	return Spec{Name: f.name, Description: "fake " + f.name, InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (f *fakeTool) Capabilities() Capabilities { return f.caps }

func (f *fakeTool) Run(ctx context.Context, input json.RawMessage) (Result, error) {
	f.runs++
	return Result{Content: "ran " + f.name}, nil
}
