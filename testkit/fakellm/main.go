package fakellm

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mecha-agent/mecha/internal/atomicfile"
)

// Main is the fakellm command: it serves a script until interrupted or
// terminated, and returns the exit code: 0 after a signal when the script
// was played exactly, 1 when it was not (with one line on stderr naming the
// turns not played or the requests that came late; see Server.Verify) or
// when the server cannot start, 2 for bad usage. args excludes the program
// name.
//
//	fakellm -script FILE [-addr 127.0.0.1:0] [-url-file FILE] [-log FILE]
//	        [-slots N] [-no-index] [-split N] [-key KEY]
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, args, os.Stdout, os.Stderr)
}

// run is Main with its context and streams given.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fakellm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		script  = fs.String("script", "", "the script of turns to play (JSON; required)")
		urlFile = fs.String("url-file", "", "write the base URL to this file once listening")
		opts    Options
	)
	fs.StringVar(&opts.Addr, "addr", "127.0.0.1:0", "loopback address to listen on")
	fs.StringVar(&opts.LogPath, "log", "", "append every request received to this file, one JSON line each")
	fs.IntVar(&opts.Slots, "slots", 1, "total_slots reported by GET /props")
	fs.BoolVar(&opts.NoIndex, "no-index", false, "omit index from OpenAI tool call deltas (as llama.cpp does)")
	fs.IntVar(&opts.SplitArgs, "split", 0, "split tool arguments into deltas of at most N characters")
	fs.BoolVar(&opts.ContentParts, "content-parts", false, "send OpenAI content as lists of text and thinking parts (as Mistral does)")
	fs.StringVar(&opts.APIKey, "key", "", "require this API key")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: fakellm -script FILE [-addr ADDR] [-url-file FILE] [-log FILE] [-slots N] [-no-index] [-split N] [-content-parts] [-key KEY]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *script == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	s, err := LoadScript(*script)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	srv, err := Start(s, opts)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer srv.Close()
	if *urlFile != "" {
		if err := writeAtomic(*urlFile, srv.URL()); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	fmt.Fprintln(stdout, srv.URL())
	<-ctx.Done()
	srv.Close()
	if err := srv.Verify(); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// writeAtomic writes a file through a temporary file and a rename, so that
// a reader sees either nothing or the whole content.
func writeAtomic(path, content string) error {
	if err := atomicfile.WriteFile(path, []byte(content), 0o600); err != nil {
		return fmt.Errorf("fakellm: %w", err)
	}
	return nil
}
