package fakellm

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(`{"turns":[{"text":"hi"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	urlFile := filepath.Join(dir, "url")
	logFile := filepath.Join(dir, "log.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr bytes.Buffer
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"-script", script, "-url-file", urlFile, "-log", logFile, "-slots", "3", "-key", "k"}, &stdout, &stderr)
	}()
	var url string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(urlFile); err == nil {
			url = string(b)
			break
		}
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") || strings.ContainsAny(url, "\n ") {
		cancel()
		t.Fatalf("url file holds %q (stderr %s)", url, stderr.String())
	}
	resp, err := http.Get(url + "/props")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.TrimSpace(string(b)) != `{"total_slots":3}` {
		t.Errorf("/props = %s", b)
	}
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(`{"model":"m","seed":7,"messages":[{"role":"user","content":"q"}]}`))
	req.Header.Set("Authorization", "Bearer k")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("status = %d", resp.StatusCode)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit code %d, stderr %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after cancellation")
	}
	if strings.TrimSpace(stdout.String()) != url {
		t.Errorf("stdout = %q, want the URL %q", stdout.String(), url)
	}
	if log, _ := os.ReadFile(logFile); !bytes.Contains(log, []byte(`"seed":7`)) {
		t.Errorf("log = %s", log)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("the directory holds %d files, want 3 (a temporary file left behind?)", len(entries))
	}
}

func TestRunUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"turns":[{"nope":1}]}`), 0o600)
	tests := []struct {
		args   []string
		code   int
		stderr string
	}{
		{nil, 2, "usage: fakellm -script FILE"},
		{[]string{"-script", bad, "extra"}, 2, "usage:"},
		{[]string{"-bogus"}, 2, "flag provided but not defined"},
		{[]string{"-script", filepath.Join(dir, "missing.json")}, 1, "fakellm: open"},
		{[]string{"-script", bad}, 1, `unknown field "nope"`},
		{[]string{"-script", bad, "-h"}, 0, "usage:"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tt.args, &stdout, &stderr)
		if code != tt.code || !strings.Contains(stderr.String(), tt.stderr) {
			t.Errorf("run %q = %d, stderr %q; want %d, %q", tt.args, code, stderr.String(), tt.code, tt.stderr)
		}
	}
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`{"turns":[]}`), 0o600)
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"-script", good, "-addr", "0.0.0.0:0"}, io.Discard, &stderr); code != 1 || !strings.Contains(stderr.String(), "not a loopback address") {
		t.Errorf("non-loopback: %d %s", code, stderr.String())
	}
}

// TestRunVerifies checks that the command fails at shutdown, with one line,
// when the script was not played exactly.
func TestRunVerifies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		script   string
		requests int
		code     int
		stderr   string
	}{
		{"played", `{"turns":[{"text":"a"}]}`, 1, 0, ""},
		{"unplayed", `{"turns":[{"text":"a"},{"text":"b"},{"text":"c"}]}`, 1, 1, "fakellm: turns 2-3 of 3 were not played\n"},
		{"late", `{"turns":[{"text":"a"}]}`, 2, 1,
			"fakellm: model request 2 (POST /v1/chat/completions) came after the script ended (it has 1 turn)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			script := filepath.Join(dir, "script.json")
			if err := os.WriteFile(script, []byte(tt.script), 0o600); err != nil {
				t.Fatal(err)
			}
			urlFile := filepath.Join(dir, "url")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var stderr bytes.Buffer
			done := make(chan int)
			go func() {
				done <- run(ctx, []string{"-script", script, "-url-file", urlFile}, io.Discard, &stderr)
			}()
			url := waitURL(t, urlFile, done, &stderr)
			for range tt.requests {
				resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(oHello))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			cancel()
			if code := <-done; code != tt.code || stderr.String() != tt.stderr {
				t.Errorf("exit %d, stderr %q; want %d, %q", code, stderr.String(), tt.code, tt.stderr)
			}
		})
	}
}

// waitURL waits for the command to write its URL file, or to end without.
func waitURL(t *testing.T, path string, done <-chan int, stderr *bytes.Buffer) string {
	t.Helper()
	for {
		if b, err := os.ReadFile(path); err == nil {
			return string(b)
		}
		select {
		case code := <-done:
			t.Fatalf("fakellm exited %d before listening: %s", code, stderr)
		case <-time.After(5 * time.Millisecond):
		}
	}
}
