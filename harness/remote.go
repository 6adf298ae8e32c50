package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gopkg.in/ini.v1"

	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/remote"
)

// ErrNoRemote is a remote command with no remote to go to.
var ErrNoRemote = errors.New("no remote")

// RemoteName picks the remote a command goes to: the one named, else the
// only one configured.
func RemoteName(cfg *config.Config, name string) (string, error) {
	var names []string
	for n := range cfg.Remotes {
		names = append(names, n)
	}
	sort.Strings(names)
	switch {
	case name != "" && slices.Contains(names, name):
		return name, nil
	case name != "":
		return "", fmt.Errorf("%w %q in config.toml (configured: %s)", ErrNoRemote, name, orNone(names))
	case len(names) == 1:
		return names[0], nil
	case len(names) == 0:
		return "", fmt.Errorf("%w is configured: add a [remotes.NAME] table with url = \"s3://BUCKET/PREFIX\" to config.toml", ErrNoRemote)
	}
	return "", fmt.Errorf("%w named: pass --remote, one of %s", ErrNoRemote, strings.Join(names, ", "))
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// OpenRemote opens a configured remote with the credentials of the AWS
// variables and files (RemoteCredentials). The upload state of a push
// interrupted mid-way is kept in $MECHA_HOME/remote-uploads.
func OpenRemote(w *World, cfg *config.Config, name string) (*remote.Remote, error) {
	name, err := RemoteName(cfg, name)
	if err != nil {
		return nil, err
	}
	rc := cfg.Remotes[name]
	creds, err := RemoteCredentials(w.getenv)
	if err != nil {
		return nil, fmt.Errorf("remote %s: %w", name, err)
	}
	home, err := config.Home(w.getenv)
	if err != nil {
		return nil, err
	}
	region := rc.Region
	if region == "" {
		region = firstSet(w.getenv("AWS_REGION"), w.getenv("AWS_DEFAULT_REGION"))
	}
	var tr = w.HTTPClient
	o := remote.Options{Name: name, URL: rc.URL, Endpoint: rc.Endpoint, Region: region, PathStyle: rc.PathStyle,
		Creds: creds, StateDir: filepath.Join(home, "remote-uploads"), Now: w.Now, Who: who(w.getenv)}
	if tr != nil && tr.Transport != nil {
		o.Transport = tr.Transport
	}
	if ps := w.getenv("MECHA_REMOTE_PART_SIZE"); ps != "" {
		var n int64
		if _, err := fmt.Sscan(ps, &n); err != nil || n < 5<<20 {
			return nil, fmt.Errorf("remote %s: MECHA_REMOTE_PART_SIZE must be a byte count of at least 5 MiB (5242880)", name)
		}
		o.PartSize = n
	}
	return remote.Open(o)
}

func firstSet(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// who names the pusher: $USER@$HOSTNAME as far as they are known.
func who(getenv func(string) string) string {
	u, h := getenv("USER"), getenv("HOSTNAME")
	switch {
	case u != "" && h != "":
		return u + "@" + h
	default:
		return u + h
	}
}

// RemoteCredentials reads the credentials of a remote the way the AWS
// tools do, from the environment given: AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), else the profile
// AWS_PROFILE (default "default") of AWS_SHARED_CREDENTIALS_FILE (default
// ~/.aws/credentials). Source says which, never a value.
func RemoteCredentials(getenv func(string) string) (remote.Credentials, error) {
	id, secret := getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY")
	if id != "" || secret != "" {
		if id == "" || secret == "" {
			return remote.Credentials{}, errors.New("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must both be set")
		}
		return remote.Credentials{AccessKey: id, SecretKey: secret, SessionToken: getenv("AWS_SESSION_TOKEN"), Source: "environment (AWS_ACCESS_KEY_ID)"}, nil
	}
	file := getenv("AWS_SHARED_CREDENTIALS_FILE")
	if file == "" {
		home := getenv("HOME")
		if home == "" {
			return remote.Credentials{}, remote.ErrNoCredentials
		}
		file = filepath.Join(home, ".aws", "credentials")
	}
	profile := firstSet(getenv("AWS_PROFILE"), "default")
	f, err := ini.Load(file)
	if errors.Is(err, os.ErrNotExist) {
		return remote.Credentials{}, fmt.Errorf("%w: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile in %s", remote.ErrNoCredentials, file)
	}
	if err != nil {
		return remote.Credentials{}, fmt.Errorf("%s cannot be read as an AWS credentials file", file)
	}
	sec, err := f.GetSection(profile)
	if err != nil {
		return remote.Credentials{}, fmt.Errorf("%w: %s has no profile [%s]", remote.ErrNoCredentials, file, profile)
	}
	c := remote.Credentials{AccessKey: sec.Key("aws_access_key_id").String(), SecretKey: sec.Key("aws_secret_access_key").String(),
		SessionToken: sec.Key("aws_session_token").String(), Source: fmt.Sprintf("%s [%s]", file, profile)}
	if c.AccessKey == "" || c.SecretKey == "" {
		return remote.Credentials{}, fmt.Errorf("%w: profile [%s] of %s lacks aws_access_key_id or aws_secret_access_key", remote.ErrNoCredentials, profile, file)
	}
	return c, nil
}
