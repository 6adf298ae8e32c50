package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mecha-agent/mecha/engine/tool"
)

const fsEditDescription = `Edit a text file in the workspace by exact string replacement.

old_string must match the file's text exactly, including whitespace and indentation, and must occur exactly once unless replace_all is true; include enough surrounding lines to make it unique. new_string replaces it and must differ from it. The file is rewritten atomically and keeps its permissions. To create a file, use fs_write.`

var fsEditSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File path, relative to the workspace or absolute inside it."},
    "old_string": {"type": "string", "description": "The exact text to replace."},
    "new_string": {"type": "string", "description": "The text to put in its place."},
    "replace_all": {"type": "boolean", "description": "Replace every occurrence instead of requiring exactly one. Default false."}
  },
  "required": ["path", "old_string", "new_string"],
  "additionalProperties": false
}`)

type fsEditParams struct {
	Path       string  `json:"path"`
	OldString  *string `json:"old_string"`
	NewString  *string `json:"new_string"`
	ReplaceAll bool    `json:"replace_all"`
}

type fsEdit struct {
	ws   Workspace
	opts Options
}

// NewFSEdit returns the fs_edit tool.
func NewFSEdit(ws Workspace, opts Options) tool.Tool {
	return &fsEdit{ws: ws, opts: opts.withDefaults()}
}

func (t *fsEdit) Spec() tool.Spec {
	return tool.Spec{Name: NameFSEdit, Description: fsEditDescription, InputSchema: fsEditSchema}
}

func (t *fsEdit) Capabilities() tool.Capabilities {
	return tool.Capabilities{ReadsWorkspace: true, ModifiesWorkspace: true, UntrustedWorkspace: t.opts.UntrustedWorkspace}
}

func (t *fsEdit) Run(ctx context.Context, input json.RawMessage) (tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return tool.Result{}, fmt.Errorf("builtin: %s: %w", NameFSEdit, err)
	}
	var p fsEditParams
	if err := decodeInput(input, &p, "path", "old_string", "new_string", "replace_all"); err != nil {
		return errorResult("%v", err), nil
	}
	switch {
	case p.Path == "":
		return errorResult("%v", missing("path")), nil
	case p.OldString == nil:
		return errorResult("%v", missing("old_string")), nil
	case p.NewString == nil:
		return errorResult("%v", missing("new_string")), nil
	case *p.OldString == "":
		return errorResult("invalid input: old_string is empty; to create or overwrite a whole file, use fs_write"), nil
	case *p.OldString == *p.NewString:
		return errorResult("invalid input: old_string and new_string are the same; there is nothing to change"), nil
	}
	name, err := t.ws.name(p.Path)
	if err != nil {
		return nameFailed(err)
	}
	// The file a link leads to, so that the write below replaces it.
	file, err := t.ws.target(name)
	if err != nil {
		return failure(p.Path, "", err), nil
	}
	f, bad := t.ws.openRegular(p.Path, file, ", not a file")
	if bad != nil {
		return *bad, nil
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return errorResult("%s", pathErr(p.Path, err)), nil
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return errorResult("%s is a binary file (it contains NUL bytes); fs_edit edits text files only", p.Path), nil
	}
	text, old, repl := string(data), *p.OldString, *p.NewString
	n := strings.Count(text, old)
	switch {
	case n == 0:
		return errorResult("old_string was not found in %s; it must match the file exactly, including whitespace and indentation (read the file with fs_read to check)", p.Path), nil
	case n > 1 && !p.ReplaceAll:
		return errorResult("old_string occurs %d times in %s; include more surrounding text to make it unique, or set replace_all to replace every occurrence", n, p.Path), nil
	}
	if p.ReplaceAll {
		text = strings.ReplaceAll(text, old, repl)
	} else {
		text = strings.Replace(text, old, repl, 1)
	}
	change, err := t.ws.keep(t.opts.Keep, file, data)
	if err != nil {
		return failure(p.Path, "cannot keep the content it replaces, so did not write ", err), nil
	}
	if _, err := t.ws.writeAtomic(file, []byte(text)); err != nil {
		return failure(p.Path, "cannot write ", err), nil
	}
	return tool.Result{Content: fmt.Sprintf("replaced %s in %s", plural(n, "occurrence"), display(file)),
		Files: change.after([]byte(text))}, nil
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
