package mcpclient

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/engine/tool/builtin"
)

// MapResult turns a tools/call result into what the model reads: text
// blocks as their text; an image or audio block as a one-line placeholder
// with its MIME type and size (the model is told it was there, not fed
// base64); a resource as its text, or a placeholder when it is binary; the
// structured content as its JSON, unless a text block already holds the
// same value (servers are asked to send both); isError as an error result.
// The whole is redacted by r (nil: nothing is) and then cut to max bytes
// the way the built-ins cut theirs.
func MapResult(res *mcp.CallToolResult, max int, r *tool.Redactor) tool.Result {
	if res == nil {
		return tool.Result{Content: "mcp: the server answered with no result", IsError: true}
	}
	var parts []string
	var texts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
			texts = append(texts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image: %s, %d bytes, not shown]", orUnknown(c.MIMEType), len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %d bytes, not shown]", orUnknown(c.MIMEType), len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link: %s %s]", c.URI, c.Name))
		case *mcp.EmbeddedResource:
			parts = append(parts, resourceText(c.Resource))
		default:
			b, _ := json.Marshal(c)
			parts = append(parts, string(b))
		}
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil && !anyJSONEqual(texts, b) {
			parts = append(parts, string(b))
		}
	}
	return tool.Result{Content: builtin.Cut(r.Replace(strings.Join(parts, "\n")), max), IsError: res.IsError}
}

func resourceText(r *mcp.ResourceContents) string {
	switch {
	case r == nil:
		return "[resource: empty]"
	case r.Blob != nil:
		return fmt.Sprintf("[resource: %s, %s, %d bytes, not shown]", r.URI, orUnknown(r.MIMEType), len(r.Blob))
	}
	return r.Text
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}

// anyJSONEqual reports whether one of texts is the same JSON value as b.
func anyJSONEqual(texts []string, b []byte) bool {
	var want any
	if json.Unmarshal(b, &want) != nil {
		return false
	}
	wb, _ := json.Marshal(want)
	for _, t := range texts {
		var got any
		if json.Unmarshal([]byte(t), &got) != nil {
			continue
		}
		if gb, _ := json.Marshal(got); string(gb) == string(wb) {
			return true
		}
	}
	return false
}
