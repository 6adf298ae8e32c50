// Package s3test runs a real S3 server for tests: Versity's S3 gateway
// (github.com/versity/versitygw), serving a temporary directory on
// loopback. The binary is found on $MECHA_VERSITYGW, else in the test
// cache ($HOME/.cache/mecha-test/bin, or $XDG_CACHE_HOME/mecha-test/bin),
// else built there with "go install" once (about 80 s) and kept. A test
// that cannot have it is skipped with the reason.
package s3test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Version is the versitygw release the tests run against.
const Version = "v1.8.0"

// Keys of the server's root account.
const (
	AccessKey = "mechatestroot"
	SecretKey = "mecha-test-secret-key-8c1f27"
)

var (
	buildOnce sync.Once
	binPath   string
	binErr    error
)

// CacheDir is where the binary is kept.
func CacheDir() string {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "mecha-test", "bin")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "mecha-test", "bin")
}

// Binary returns the path of versitygw, building it when it is missing.
func Binary() (string, error) {
	buildOnce.Do(func() { binPath, binErr = binary() })
	return binPath, binErr
}

func binary() (string, error) {
	if p := os.Getenv("MECHA_VERSITYGW"); p != "" {
		return p, nil
	}
	dir := CacheDir()
	p := filepath.Join(dir, "versitygw")
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
		return p, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// One build at a time across test processes.
	lf, err := os.OpenFile(filepath.Join(dir, ".versitygw.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("no go command to build versitygw %s: %v", Version, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "install", "github.com/versity/versitygw/cmd/versitygw@"+Version)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=", "CGO_ENABLED=0")
	cmd.Dir = os.TempDir()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install versitygw@%s: %v: %s", Version, err, lastLine(string(out)))
	}
	return p, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// Server is a running versitygw.
type Server struct {
	Endpoint string // http://127.0.0.1:PORT
	Dir      string // the directory it serves
	addr     string
	bin      string
	cmd      *exec.Cmd
	t        testing.TB
}

// Start starts a server on loopback for the test, stopped at its end; it
// skips the test when versitygw cannot be had.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Skipf("no S3 server to test against: %v", err)
	}
	s := &Server{Dir: t.TempDir(), bin: bin, t: t, addr: freeAddr(t)}
	s.Endpoint = "http://" + s.addr
	s.start()
	t.Cleanup(s.Kill)
	return s
}

func freeAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func (s *Server) start() {
	s.t.Helper()
	cmd := exec.Command(s.bin, "--port", s.addr, "posix", s.Dir)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+AccessKey, "ROOT_SECRET_KEY="+SecretKey)
	logf, err := os.Create(filepath.Join(s.t.TempDir(), "versitygw.log"))
	if err != nil {
		s.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("starting versitygw: %v", err)
	}
	s.cmd = cmd
	for i := 0; i < 300; i++ {
		if c, err := net.DialTimeout("tcp", s.addr, 100*time.Millisecond); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	b, _ := os.ReadFile(logf.Name())
	s.t.Fatalf("versitygw did not listen on %s: %s", s.addr, lastLine(string(b)))
}

// Kill stops the server at once (SIGKILL), as a crash would.
func (s *Server) Kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}

// Restart starts the server again on the same address and directory.
func (s *Server) Restart() {
	s.t.Helper()
	s.Kill()
	s.start()
}

// Client is a client of the server as its root account: path-style, no
// checksums but those S3 requires (as mecha's own client).
func (s *Server) Client() *s3.Client {
	return s3.New(s3.Options{
		Region:                     "us-east-1",
		Credentials:                credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, ""),
		BaseEndpoint:               aws.String(s.Endpoint),
		UsePathStyle:               true,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

// Bucket creates a bucket.
func (s *Server) Bucket(name string) {
	s.t.Helper()
	if _, err := s.Client().CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &name}); err != nil {
		s.t.Fatalf("make bucket %s: %v", name, err)
	}
}

// Objects lists every object under prefix, key to content.
func (s *Server) Objects(bucket, prefix string) map[string][]byte {
	s.t.Helper()
	c, ctx := s.Client(), context.Background()
	out := map[string][]byte{}
	pages := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: &prefix})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			s.t.Fatal(err)
		}
		for _, o := range page.Contents {
			obj, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: o.Key})
			if err != nil {
				s.t.Fatal(err)
			}
			b, err := io.ReadAll(obj.Body)
			obj.Body.Close()
			if err != nil {
				s.t.Fatal(err)
			}
			out[aws.ToString(o.Key)] = b
		}
	}
	return out
}
