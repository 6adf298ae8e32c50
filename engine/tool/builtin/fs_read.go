package builtin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mecha-agent/mecha/engine/tool"
)

const fsReadDescription = `Read a text file in the workspace.

The result is the file's text exactly as stored, without line numbers, so it can be quoted in fs_edit's old_string. Use offset (1-based line number) and limit (number of lines) to read part of a large file. When the result is not the whole file, a last line in square brackets says which lines were shown, out of how many, and the offset to continue from. Directories (use fs_list) and binary files are refused.`

var fsReadSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File path, relative to the workspace or absolute inside it."},
    "offset": {"type": "integer", "minimum": 1, "description": "First line to read, 1-based. Default 1."},
    "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of lines to read. Default: to the end of the file."}
  },
  "required": ["path"],
  "additionalProperties": false
}`)

type fsReadParams struct {
	Path   string `json:"path"`
	Offset *int   `json:"offset"`
	Limit  *int   `json:"limit"`
}

type fsRead struct {
	ws   Workspace
	opts Options
}

// NewFSRead returns the fs_read tool.
func NewFSRead(ws Workspace, opts Options) tool.Tool {
	return &fsRead{ws: ws, opts: opts.withDefaults()}
}

func (t *fsRead) Spec() tool.Spec {
	return tool.Spec{Name: NameFSRead, Description: fsReadDescription, InputSchema: fsReadSchema}
}

func (t *fsRead) Capabilities() tool.Capabilities {
	return tool.Capabilities{ReadsWorkspace: true, UntrustedWorkspace: t.opts.UntrustedWorkspace}
}

func (t *fsRead) Run(ctx context.Context, input json.RawMessage) (tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return tool.Result{}, fmt.Errorf("builtin: %s: %w", NameFSRead, err)
	}
	var p fsReadParams
	if err := decodeInput(input, &p, "path", "offset", "limit"); err != nil {
		return errorResult("%v", err), nil
	}
	if p.Path == "" {
		return errorResult("%v", missing("path")), nil
	}
	offset, limit := 1, 0
	if p.Offset != nil {
		if *p.Offset < 1 {
			return errorResult("invalid input: offset must be at least 1 (lines are numbered from 1), got %d", *p.Offset), nil
		}
		offset = *p.Offset
	}
	if p.Limit != nil {
		if *p.Limit < 1 {
			return errorResult("invalid input: limit must be at least 1, got %d", *p.Limit), nil
		}
		limit = *p.Limit
	}
	name, err := t.ws.name(p.Path)
	if err != nil {
		return nameFailed(err)
	}
	f, bad := t.ws.openRegular(p.Path, name, "; use fs_list to list it")
	if bad != nil {
		return *bad, nil
	}
	defer f.Close()
	// Redacted as it is read, before the selection is cut to size.
	sel, err := selectLines(t.opts.redactor.Reader(f), offset, limit, t.opts.MaxResultBytes)
	switch {
	case errors.Is(err, errBinary):
		return errorResult("%s is a binary file (it contains NUL bytes); fs_read reads text files only", p.Path), nil
	case err != nil:
		return errorResult("%s", pathErr(p.Path, err)), nil
	}
	return sel.result(p.Path), nil
}

var errBinary = errors.New("binary file")

// selection is the part of a file fs_read shows.
type selection struct {
	text    []byte
	first   int  // first line asked for
	last    int  // last line shown in full; first-1 when none
	lines   int  // lines in the file
	full    bool // the byte limit stopped the selection
	max     int  // the byte limit
	cutLine int  // when > 0, line first was cut short; its length in bytes
}

// selectLines reads r to the end (to count lines and find NUL bytes) and
// keeps limit lines (0 for all) from line offset on, within max bytes. A
// line that does not fit is dropped, unless it is the first, which is then
// cut on a UTF-8 boundary. A long line is never held whole in memory.
func selectLines(r io.Reader, offset, limit, max int) (*selection, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	s := &selection{first: offset, last: offset - 1, max: max}
	wanted := func(line int) bool { return line >= offset && (limit == 0 || line < offset+limit) }
	var out bytes.Buffer
	lineStart := 0 // out.Len() where the current line began
	lineLen := 0   // bytes of the current line read so far
	atStart := true
	cutting := false // inside the first line, which is being cut
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			if bytes.IndexByte(chunk, 0) >= 0 {
				return nil, errBinary
			}
			if atStart {
				s.lines++
				lineStart, lineLen = out.Len(), 0
			}
			lineLen += len(chunk)
			atStart = chunk[len(chunk)-1] == '\n'
			if wanted(s.lines) && !s.full {
				if room := max - out.Len(); len(chunk) <= room {
					out.Write(chunk)
					if atStart {
						s.last = s.lines
					}
				} else {
					s.full = true
					if s.lines == offset {
						out.Write(cutHead(chunk, room))
						cutting = true
					} else {
						out.Truncate(lineStart)
					}
				}
			}
			if cutting && atStart {
				s.cutLine, cutting = lineLen, false
			}
		}
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
		default:
			return nil, err
		}
		if cutting {
			s.cutLine = lineLen
		}
		if !atStart && !s.full && wanted(s.lines) {
			s.last = s.lines // a last line without "\n"
		}
		s.text = out.Bytes()
		return s, nil
	}
}

// result renders the selection for the model: the text, then a note in
// square brackets when it is not the whole file.
func (s *selection) result(path string) tool.Result {
	if s.lines == 0 {
		if s.first > 1 {
			return errorResult("offset %d is past the end of %s, which is empty", s.first, path)
		}
		return tool.Result{Content: "[empty file]"}
	}
	if s.first > s.lines {
		return errorResult("offset %d is past the end of %s, which has %d lines", s.first, path, s.lines)
	}
	text := strings.ToValidUTF8(string(s.text), "\uFFFD")
	if s.first == 1 && s.last == s.lines && !s.full {
		return tool.Result{Content: text}
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	var note string
	last := s.last
	if s.cutLine > 0 {
		last = s.first
		note = fmt.Sprintf("[line %d is %d bytes long, more than the %d-byte output limit: showing its first %d bytes",
			s.first, s.cutLine, s.max, len(s.text))
	} else {
		note = fmt.Sprintf("[showing lines %d-%d of %d", s.first, last, s.lines)
		if s.full {
			note += fmt.Sprintf(", stopped at the %d-byte output limit", s.max)
		}
	}
	if last < s.lines {
		note += fmt.Sprintf("; continue with offset=%d", last+1)
	}
	return tool.Result{Content: text + note + "]"}
}
