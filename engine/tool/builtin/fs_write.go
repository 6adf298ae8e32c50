package builtin

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mecha-agent/mecha/engine/tool"
)

const fsWriteDescription = `Create or overwrite a file in the workspace with the given content.

Missing parent directories are created. The file is replaced atomically (readers see the old content or the new, never a mix), and an existing file keeps its permissions. To change part of an existing file, prefer fs_edit.`

var fsWriteSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File path, relative to the workspace or absolute inside it."},
    "content": {"type": "string", "description": "The complete new content of the file."}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`)

type fsWriteParams struct {
	Path    string  `json:"path"`
	Content *string `json:"content"`
}

type fsWrite struct {
	ws   Workspace
	opts Options
}

// NewFSWrite returns the fs_write tool.
func NewFSWrite(ws Workspace, opts Options) tool.Tool {
	return &fsWrite{ws: ws, opts: opts.withDefaults()}
}

func (t *fsWrite) Spec() tool.Spec {
	return tool.Spec{Name: NameFSWrite, Description: fsWriteDescription, InputSchema: fsWriteSchema}
}

func (t *fsWrite) Capabilities() tool.Capabilities {
	return tool.Capabilities{ModifiesWorkspace: true}
}

func (t *fsWrite) Run(ctx context.Context, input json.RawMessage) (tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return tool.Result{}, fmt.Errorf("builtin: %s: %w", NameFSWrite, err)
	}
	var p fsWriteParams
	if err := decodeInput(input, &p, "path", "content"); err != nil {
		return errorResult("%v", err), nil
	}
	if p.Path == "" {
		return errorResult("%v", missing("path")), nil
	}
	if p.Content == nil {
		return errorResult("%v", missing("content")), nil
	}
	name, err := t.ws.name(p.Path)
	if err != nil {
		return nameFailed(err)
	}
	// The file a link leads to, so that the link stays a link.
	file, err := t.ws.target(name)
	if err != nil {
		return failure(p.Path, "cannot write ", err), nil
	}
	change, err := t.ws.keep(t.opts.Keep, file, nil)
	if err != nil {
		return failure(p.Path, "cannot keep the content it replaces, so did not write ", err), nil
	}
	existed, err := t.ws.writeAtomic(file, []byte(*p.Content))
	if err != nil {
		return failure(p.Path, "cannot write ", err), nil
	}
	verb := "created"
	if existed {
		verb = "overwrote"
	}
	return tool.Result{Content: fmt.Sprintf("%s %s (%d bytes written)", verb, display(file), len(*p.Content)),
		Files: change.after([]byte(*p.Content))}, nil
}
