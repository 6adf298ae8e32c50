package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Block types of a message's content.
const (
	BlockText       = "text"
	BlockToolUse    = "tool_use"
	BlockToolResult = "tool_result"
	BlockThinking   = "thinking"
	BlockImage      = "image"
)

// Block is one element of a message's content. Which fields are meaningful
// depends on Type:
//
//	text         Text, Citations
//	tool_use     ID, Name, Input
//	tool_result  ToolUseID, Content, IsError, OutcomeUnknown
//	thinking     Thinking, Signature
//	image        Name, MediaType, SHA256, Size (Data in memory only)
//
// A block of any other type is kept verbatim in Raw, so a transcript written
// by a newer build survives being read and written back by this one.
type Block struct {
	Type string
	Text string
	// Citations are a text block's citations as the model's API gave
	// them (Anthropic's array of citation objects), sent back as they
	// were; nil when it had none.
	Citations json.RawMessage
	ID        string
	Name      string
	Input     json.RawMessage
	ToolUseID string
	Content   string
	IsError   bool
	// OutcomeUnknown marks a tool result the harness wrote for a call
	// whose real result was never recorded (the run died while the call
	// was running, or before it started): the call may have run, and its
	// effects may be in place. Content then says so; it is not the call's
	// output.
	OutcomeUnknown bool
	// FileChanges, on a tool result, are the files the call wrote (fs_write,
	// fs_edit), each with the content it had before, kept by hash in the
	// blob store: what a rewind restores.
	FileChanges []FileChange
	Thinking    string
	Signature   string
	// MediaType, SHA256 and Size describe an image block's bytes, which
	// the transcript does not hold: they are kept in the blob store under
	// SHA256 (Name is the file's name as it was attached). Data is the
	// bytes in memory, read from the blob store before a request; it is
	// never recorded.
	MediaType string
	SHA256    string
	Size      int64
	Data      []byte
	Raw       json.RawMessage
}

// TextOf is the text of a content. Text blocks that follow one another
// are one text, joined as they are: the API splits a text into blocks
// where a citation starts or ends, mid-sentence. Texts with another block
// between them (a tool call, a thinking block) are joined with a newline.
// Empty text blocks are left out.
func TextOf(blocks []Block) string {
	var b strings.Builder
	apart := false // another block since the last text
	for _, bl := range blocks {
		switch {
		case bl.Type != BlockText:
			apart = b.Len() > 0
		case bl.Text != "":
			if apart {
				b.WriteByte('\n')
				apart = false
			}
			b.WriteString(bl.Text)
		}
	}
	return b.String()
}

// AttachedFileMark starts each text file an @mention inlined after the
// prompt's text, in the user message a run records: what comes before
// the first is the prompt as the person typed it.
const AttachedFileMark = "\n\n<file path="

// Typed is the part of a recorded prompt's text the person typed: the text
// before the first file an @mention inlined (AttachedFileMark).
func Typed(text string) string {
	typed, _, _ := strings.Cut(text, AttachedFileMark)
	return typed
}

// TextBlock returns a text block.
func TextBlock(s string) Block { return Block{Type: BlockText, Text: s} }

// ToolUseBlock returns a tool call block.
func ToolUseBlock(id, name string, input json.RawMessage) Block {
	return Block{Type: BlockToolUse, ID: id, Name: name, Input: input}
}

// ToolResultBlock returns a tool result block.
func ToolResultBlock(toolUseID, content string, isError bool) Block {
	return Block{Type: BlockToolResult, ToolUseID: toolUseID, Content: content, IsError: isError}
}

// UnknownOutcomeBlock returns the tool result the harness writes for a call
// whose result was never recorded: an error result, marked OutcomeUnknown,
// whose content (shown to the model) says so.
func UnknownOutcomeBlock(toolUseID, content string) Block {
	return Block{Type: BlockToolResult, ToolUseID: toolUseID, Content: content, IsError: true, OutcomeUnknown: true}
}

type textJSON struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Citations json.RawMessage `json:"citations,omitempty"`
}

type toolUseJSON struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type toolResultJSON struct {
	Type           string       `json:"type"`
	ToolUseID      string       `json:"tool_use_id"`
	Content        string       `json:"content"`
	IsError        bool         `json:"is_error"`
	OutcomeUnknown bool         `json:"outcome_unknown,omitempty"`
	FileChanges    []FileChange `json:"file_changes,omitempty"`
}

// FileChange is one file a tool call wrote: its path relative to the
// workspace, the SHA-256 (hex) of its content before the call ("" when it
// did not exist), kept whole in the blob store under that hash, and of
// the content the call left.
type FileChange struct {
	Path   string `json:"path"`
	Before string `json:"before"`
	After  string `json:"after"`
}

type imageJSON struct {
	Type      string `json:"type"`
	Name      string `json:"name,omitempty"`
	MediaType string `json:"media_type"`
	SHA256    string `json:"sha256"`
	Size      int64  `json:"size"`
}

// ImageBlock returns an image block for data stored under sum.
func ImageBlock(name, mediaType, sum string, data []byte) Block {
	return Block{Type: BlockImage, Name: name, MediaType: mediaType, SHA256: sum, Size: int64(len(data)), Data: data}
}

type thinkingJSON struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature,omitempty"`
}

var emptyObject = json.RawMessage(`{}`)

// MarshalJSON writes the block in the shape of its type.
func (b Block) MarshalJSON() ([]byte, error) {
	v, err := b.wire()
	if err != nil {
		return nil, err
	}
	return marshal(v)
}

// wire returns the value encoding/json writes for the block: a struct of
// its type's shape, or its raw text for a type this build does not know.
// Encoding a message marshals these directly, so each block is encoded
// once instead of being encoded and then re-scanned as a Marshaler's output.
func (b Block) wire() (any, error) {
	switch b.Type {
	case BlockText:
		return textJSON{b.Type, b.Text, b.Citations}, nil
	case BlockToolUse:
		in := b.Input
		if len(bytes.TrimSpace(in)) == 0 {
			in = emptyObject
		}
		return toolUseJSON{b.Type, b.ID, b.Name, in}, nil
	case BlockToolResult:
		return toolResultJSON{b.Type, b.ToolUseID, b.Content, b.IsError, b.OutcomeUnknown, b.FileChanges}, nil
	case BlockThinking:
		return thinkingJSON{b.Type, b.Thinking, b.Signature}, nil
	case BlockImage:
		if b.SHA256 == "" {
			break // another tool's image block, kept in Raw
		}
		return imageJSON{b.Type, b.Name, b.MediaType, b.SHA256, b.Size}, nil
	}
	if len(b.Raw) > 0 {
		return b.Raw, nil
	}
	if b.Type == "" {
		return nil, fmt.Errorf("transcript: content block has no type")
	}
	return struct {
		Type string `json:"type"`
	}{b.Type}, nil
}

// UnmarshalJSON reads a block. A tool result's content may be a string or,
// as other tools write it, an array of text blocks; both read as text.
func (b *Block) UnmarshalJSON(data []byte) error {
	var w blockWire[resultContent]
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	out, known, err := w.block()
	if err != nil {
		return err
	}
	if !known {
		out.Raw = append(json.RawMessage(nil), data...)
	}
	*b = out
	return nil
}

// resultText turns a tool result's content into text.
func resultText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", err
		}
		var sb strings.Builder
		for i, p := range parts {
			if i > 0 {
				sb.WriteByte('\n')
			}
			if p.Type == BlockText {
				sb.WriteString(p.Text)
			} else {
				fmt.Fprintf(&sb, "[%s]", p.Type)
			}
		}
		return sb.String(), nil
	}
	return string(raw), nil
}
