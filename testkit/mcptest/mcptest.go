// Package mcptest is a small MCP server for tests: a few tools, a version
// of choice, and the faults real servers have (dying mid-call, never
// answering initialize, ignoring SIGTERM, leaving a child behind). It runs
// in memory (NewServer) or as a stdio process (Main), which the testscript
// suite and tool/mcp's own tests start from their test binaries.
package mcptest

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options shape a server.
type Options struct {
	Name, Version string
	// Note ends the description of the echo tool (a hostile server's
	// words, for the tests of what reaches a terminal).
	Note string
	// Started, when set, is called when a slow call starts.
	Started func()
	// Cancelled, when set, is called when a slow call is cancelled.
	Cancelled func()
	// Die ends the process in the middle of a "die" call.
	Die func()
	// Mail makes the server a small mail server instead (MailToolNames):
	// a tool that reads untrusted text, one that sends it out, one that
	// does neither. read_inbox returns Inbox; send_email calls Sent.
	Mail  bool
	Inbox string
	Sent  func(to, body string)
}

// MailToolNames are the tools of a server with Options.Mail.
var MailToolNames = []string{"read_inbox", "send_email", "list_folders"}

// Tool names the server offers.
var ToolNames = []string{"echo", "add", "fail", "slow", "image", "big", "getenv", "die", "odd.name!", "fetch"}

// NewServer returns the server.
func NewServer(o Options) *mcp.Server {
	if o.Name == "" {
		o.Name = "mcptest"
	}
	if o.Version == "" {
		o.Version = "1.0.0"
	}
	s := mcp.NewServer(&mcp.Implementation{Name: o.Name, Version: o.Version}, nil)
	if o.Mail {
		addMail(s, o)
		return s
	}
	obj := func(props string, req ...string) json.RawMessage {
		r, _ := json.Marshal(req)
		if req == nil {
			r = []byte("[]")
		}
		return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":` + string(r) + `}`)
	}
	yes, no := true, false
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	args := func(req *mcp.CallToolRequest) map[string]any {
		var m map[string]any
		json.Unmarshal(req.Params.Arguments, &m)
		return m
	}
	s.AddTool(&mcp.Tool{Name: "echo", Description: "Echo the text back." + o.Note, InputSchema: obj(`"text":{"type":"string"}`, "text"),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(fmt.Sprint(args(req)["text"])), nil
		})
	s.AddTool(&mcp.Tool{Name: "add", Description: "Add two numbers.", InputSchema: obj(`"a":{"type":"number"},"b":{"type":"number"}`, "a", "b"),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a := args(req)
			x, _ := a["a"].(float64)
			y, _ := a["b"].(float64)
			return &mcp.CallToolResult{StructuredContent: map[string]any{"sum": x + y}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "fail", Description: "Always fails.", InputSchema: obj("")},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r := text("it failed, as asked")
			r.IsError = true
			return r, nil
		})
	s.AddTool(&mcp.Tool{Name: "slow", Description: "Wait for seconds, or until cancelled.", InputSchema: obj(`"seconds":{"type":"number"}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &yes}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			secs, _ := args(req)["seconds"].(float64)
			if secs == 0 {
				secs = 3600
			}
			if o.Started != nil {
				o.Started()
			}
			select {
			case <-time.After(time.Duration(secs * float64(time.Second))):
				return text("waited"), nil
			case <-ctx.Done():
				if o.Cancelled != nil {
					o.Cancelled()
				}
				return nil, ctx.Err()
			}
		})
	s.AddTool(&mcp.Tool{Name: "image", Description: "A picture and a sound.", InputSchema: obj("")},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "here:"},
				&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 1234)},
				&mcp.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 99)},
			}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "big", Description: "A large result.", InputSchema: obj(`"bytes":{"type":"number"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n, _ := args(req)["bytes"].(float64)
			return text("BEGIN" + strings.Repeat("x", int(n)) + "END"), nil
		})
	s.AddTool(&mcp.Tool{Name: "getenv", Description: "The value of an environment variable of the server.", InputSchema: obj(`"name":{"type":"string"}`, "name")},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			v, ok := os.LookupEnv(fmt.Sprint(args(req)["name"]))
			if !ok {
				return text("(unset)"), nil
			}
			return text(v), nil
		})
	s.AddTool(&mcp.Tool{Name: "die", Description: "The server dies during the call.", InputSchema: obj("")},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if o.Die != nil {
				o.Die()
			}
			<-ctx.Done()
			return nil, ctx.Err()
		})
	s.AddTool(&mcp.Tool{Name: "odd.name!", Description: "A name that needs sanitising.", InputSchema: obj("")},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("odd"), nil
		})
	// fetch reaches the network: the attack suite's MCP route out of an
	// armed conversation.
	s.AddTool(&mcp.Tool{Name: "fetch", Description: "GET a URL and return its body.", InputSchema: obj(`"url":{"type":"string"}`, "url"),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &yes}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprint(args(req)["url"]), nil)
			if err != nil {
				return nil, err
			}
			resp, err := http.DefaultClient.Do(hreq)
			if err != nil {
				r := text(err.Error())
				r.IsError = true
				return r, nil
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			return text(resp.Status + "\n" + string(b)), nil
		})
	return s
}

// addMail adds the mail server's tools, none with annotations: what they
// declare is what the client's configuration says.
func addMail(s *mcp.Server, o Options) {
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	s.AddTool(&mcp.Tool{Name: "read_inbox", Description: "Read the messages in the inbox.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(o.Inbox), nil
		})
	s.AddTool(&mcp.Tool{Name: "send_email", Description: "Send a message.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"to":{"type":"string"},"body":{"type":"string"}},"required":["to","body"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var m struct{ To, Body string }
			json.Unmarshal(req.Params.Arguments, &m)
			if o.Sent != nil {
				o.Sent(m.To, m.Body)
			}
			return text("sent to " + m.To), nil
		})
	s.AddTool(&mcp.Tool{Name: "list_folders", Description: "List the mail folders.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("INBOX\nSent\nArchive"), nil
		})
}

// Main runs the server on stdin and stdout and returns the exit code.
//
//	mcpserver [-name N] [-version V] [-note TEXT] [-no-init] [-stubborn] [-child] [-pid-file F] [-log TEXT] [-mark DIR]
//	mcpserver -mail [-inbox FILE] [-outbox FILE]
//
// -mail serves the mail server's tools (Options.Mail): read_inbox returns
// the content of -inbox's FILE, send_email appends "to: body" lines to
// -outbox's FILE.
// -no-init reads requests and never answers; -stubborn ignores SIGTERM
// and stays after stdin closes; -child starts a long sleep in the
// server's process group; -pid-file appends the pids (server, child) to F;
// -log writes TEXT to stderr at start; -mark writes DIR/slow-started when
// a slow call starts and DIR/slow-cancelled when the client cancels one.
func Main(args []string) int {
	fs := flag.NewFlagSet("mcpserver", flag.ContinueOnError)
	name := fs.String("name", "mcptest", "serverInfo name")
	version := fs.String("version", "1.0.0", "serverInfo version")
	noInit := fs.Bool("no-init", false, "never answer")
	stubborn := fs.Bool("stubborn", false, "ignore SIGTERM and stdin's end")
	child := fs.Bool("child", false, "start a child that sleeps")
	pidFile := fs.String("pid-file", "", "append pids here")
	logText := fs.String("log", "", "write this to stderr at start")
	mark := fs.String("mark", "", "write slow-started and slow-cancelled files here")
	mail := fs.Bool("mail", false, "serve the mail server's tools")
	inbox := fs.String("inbox", "", "read_inbox returns this file's content")
	outbox := fs.String("outbox", "", "send_email appends to this file")
	note := fs.String("note", "", "end the echo tool's description with this")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *logText != "" {
		fmt.Fprintln(os.Stderr, *logText)
	}
	pids := []string{strconv.Itoa(os.Getpid())}
	if *child {
		c := exec.Command("sleep", "3600")
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		pids = append(pids, strconv.Itoa(c.Process.Pid))
	}
	if *pidFile != "" {
		f, err := os.OpenFile(*pidFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err == nil {
			fmt.Fprintln(f, strings.Join(pids, "\n"))
			f.Close()
		}
	}
	if *stubborn {
		signal.Ignore(syscall.SIGTERM)
	}
	if *noInit {
		io.Copy(io.Discard, os.Stdin)
		if *stubborn {
			select {}
		}
		return 0
	}
	o := Options{Name: *name, Version: *version, Note: *note, Die: func() {
		fmt.Fprintln(os.Stderr, "mcpserver: dying mid-call, as asked")
		os.Exit(3)
	}}
	if *mail {
		o.Mail = true
		if *inbox != "" {
			b, err := os.ReadFile(*inbox)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			o.Inbox = string(b)
		}
		o.Sent = func(to, body string) {
			if *outbox == "" {
				return
			}
			f, err := os.OpenFile(*outbox, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
			if err == nil {
				fmt.Fprintf(f, "%s: %s\n", to, body)
				f.Close()
			}
		}
	}
	if *mark != "" {
		touch := func(f string) func() {
			return func() { os.WriteFile(filepath.Join(*mark, f), []byte(f+"\n"), 0o600) }
		}
		o.Started, o.Cancelled = touch("slow-started"), touch("slow-cancelled")
	}
	s := NewServer(o)
	err := s.Run(context.Background(), &mcp.StdioTransport{})
	if *stubborn {
		select {}
	}
	if err != nil && err != io.EOF && !strings.Contains(err.Error(), "EOF") {
		fmt.Fprintln(os.Stderr, "mcpserver:", err)
		return 1
	}
	return 0
}
