package tool

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mecha-agent/mecha/record/transcript"
)

// ErrUnknownTool is wrapped by the error Restrict returns when it is asked
// for a tool the registry does not hold.
var ErrUnknownTool = errors.New("unknown tool")

// ErrDuplicateTool is wrapped by the error Register returns when a tool of
// the same name is already registered.
var ErrDuplicateTool = errors.New("duplicate tool")

// Registry is an ordered set of tools keyed by name. Tools keep the order in
// which they were registered: that is the order the model is shown them in,
// so a run's tool list is stable and replayable.
//
// The zero value is an empty registry ready to use. A Registry is not safe
// for concurrent Register calls; build it first, then share it.
type Registry struct {
	tools []Tool
	index map[string]int
}

// NewRegistry returns a registry holding tools, in the order given.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{}
	for _, t := range tools {
		if err := r.Register(t); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Register appends t. It is an error to register a nil tool, a tool with an
// empty name, or a second tool of the same name.
func (r *Registry) Register(t Tool) error {
	if t == nil {
		return errors.New("tool: register: nil tool")
	}
	name := t.Spec().Name
	if name == "" {
		return errors.New("tool: register: tool has an empty name")
	}
	if r.index == nil {
		r.index = make(map[string]int)
	}
	if _, ok := r.index[name]; ok {
		return fmt.Errorf("tool: register %q: %w", name, ErrDuplicateTool)
	}
	r.index[name] = len(r.tools)
	r.tools = append(r.tools, t)
	return nil
}

// Get returns the tool called name.
func (r *Registry) Get(name string) (Tool, bool) {
	i, ok := r.index[name]
	if !ok {
		return nil, false
	}
	return r.tools[i], true
}

// Len returns the number of tools.
func (r *Registry) Len() int { return len(r.tools) }

// Tools returns the tools in registration order. The slice is a copy.
func (r *Registry) Tools() []Tool {
	return append([]Tool(nil), r.tools...)
}

// Names returns the tool names in registration order.
func (r *Registry) Names() []string {
	names := make([]string, len(r.tools))
	for i, t := range r.tools {
		names[i] = t.Spec().Name
	}
	return names
}

// Specs returns the tool specs in registration order.
func (r *Registry) Specs() []Spec {
	specs := make([]Spec, len(r.tools))
	for i, t := range r.tools {
		specs[i] = t.Spec()
	}
	return specs
}

// TranscriptSpecs returns the specs in registration order as a config
// record stores them. It is never nil: an empty registry records that no
// tool was offered.
func (r *Registry) TranscriptSpecs() []transcript.ToolSpec {
	specs := make([]transcript.ToolSpec, len(r.tools))
	for i, t := range r.tools {
		s := t.Spec()
		specs[i] = transcript.ToolSpec{Name: s.Name, Description: s.Description, InputSchema: s.InputSchema}
	}
	return specs
}

// Restrict returns a new registry holding only the named tools, in this
// registry's order (not the order of names). A name given twice counts once.
// An empty names gives an empty registry. When a name is not registered the
// error wraps ErrUnknownTool and lists the unknown and the available names.
func (r *Registry) Restrict(names []string) (*Registry, error) {
	want := make(map[string]bool, len(names))
	var unknown []string
	for _, n := range names {
		if want[n] {
			continue
		}
		want[n] = true
		if _, ok := r.index[n]; !ok {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return nil, &UnknownError{Unknown: unknown, Available: r.Names()}
	}
	out := &Registry{}
	for _, t := range r.tools {
		if want[t.Spec().Name] {
			// Cannot fail: names in r are unique and non-empty.
			_ = out.Register(t)
		}
	}
	return out, nil
}

// UnknownError is the error of Restrict when names are not registered. It
// wraps ErrUnknownTool.
type UnknownError struct {
	Unknown   []string // the names asked for that are not registered
	Available []string // the registered names
}

func (e *UnknownError) Error() string {
	return fmt.Sprintf("tool: %v %s (available: %s)", ErrUnknownTool, quoteList(e.Unknown), strings.Join(e.Available, ", "))
}

func (e *UnknownError) Unwrap() error { return ErrUnknownTool }

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
