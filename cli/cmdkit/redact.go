package cmdkit

import (
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/mecha-agent/mecha/internal/credential"
)

// Redacted stands for a secret value that is not shown.
const Redacted = "<redacted>"

// RedactURL hides a URL's password, the values of its query and its
// fragment. It works on the text, so that a URL holding ${VAR}
// references, which does not parse, is shown all the same.
func RedactURL(s string) string {
	s, frag, hasFrag := strings.Cut(s, "#")
	s, q, hasQuery := strings.Cut(s, "?")
	if i := strings.Index(s, "://"); i >= 0 {
		rest := s[i+3:]
		auth, path, _ := strings.Cut(rest, "/")
		if at := strings.LastIndexByte(auth, '@'); at >= 0 {
			if user, _, ok := strings.Cut(auth[:at], ":"); ok {
				auth = user + ":" + Redacted + auth[at:]
			}
		}
		s = s[:i+3] + auth
		if len(rest) > len(auth) || strings.Contains(rest, "/") {
			s += "/" + path
		}
	}
	if hasQuery {
		var keys []string
		for _, kv := range strings.Split(q, "&") {
			if k, _, _ := strings.Cut(kv, "="); k != "" {
				keys = append(keys, k+"="+Redacted)
			}
		}
		sort.Strings(keys)
		s += "?" + strings.Join(keys, "&")
	}
	if hasFrag && frag != "" {
		s += "#" + Redacted
	}
	return s
}

// RedactArgs replaces the value of each argument named like a credential:
// "--token X" and "--api-key=X" (see CredentialName).
func RedactArgs(args []string) []string {
	if len(args) == 0 {
		return nil
	}
	out := make([]string, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		out[i] = a
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !credential.Named(strings.ReplaceAll(name, "-", "_")) {
			continue
		}
		if hasValue {
			out[i] = a[:strings.IndexByte(a, '=')+1] + Redacted
		} else if i+1 < len(args) {
			i++
			out[i] = Redacted
		}
	}
	return out
}

// urlInText finds URLs in a message, up to a space or a quote.
var urlInText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>` + "`" + `]+`) })

// RedactURLsIn applies RedactURL to every URL in a message, such as an
// error that quotes the URL a request was sent to.
func RedactURLsIn(msg string) string {
	return urlInText().ReplaceAllStringFunc(msg, RedactURL)
}
