package credential

import (
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// InValue returns the credentials a variable's value holds whatever the
// variable is called: for each URL in it (scheme://...), its userinfo
// whole (user:password, or a user alone, which may be a token as in
// https://TOKEN@host) and its password alone, and the value of each query
// parameter whose name is Named (?password=..., ?access_token=...); each
// also percent-decoded where that differs. A value may hold several URLs
// (a comma-separated list of hosts). Nil when there is none.
func InValue(value string) []string {
	found, _ := scanValue(value)
	return found
}

// urlStart finds where a URL's authority begins: just after "scheme://".
var urlStart = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://`) })

// scanValue returns what InValue returns, and whether one of them is a
// password or a credential-named query parameter (which makes the variable
// Held, where a user name alone does not).
func scanValue(value string) (found []string, strong bool) {
	if !strings.Contains(value, "://") {
		return nil, false
	}
	add := func(s string, unescape func(string) (string, error)) {
		if s == "" {
			return
		}
		found = append(found, s)
		if d, err := unescape(s); err == nil && d != s {
			found = append(found, d)
		}
	}
	for _, loc := range urlStart().FindAllStringIndex(value, -1) {
		rest := value[loc[1]:]
		if i := strings.IndexAny(rest, " \t\r\n\"'<>`"); i >= 0 {
			rest = rest[:i]
		}
		rest, _, _ = strings.Cut(rest, "#")
		authority := rest
		if i := strings.IndexAny(rest, "/?"); i >= 0 {
			authority = rest[:i]
		}
		if at := strings.LastIndexByte(authority, '@'); at > 0 {
			userinfo := authority[:at]
			add(userinfo, url.PathUnescape)
			if _, pw, ok := strings.Cut(userinfo, ":"); ok && pw != "" {
				add(pw, url.PathUnescape)
				strong = true
			}
		}
		_, query, ok := strings.Cut(rest[len(authority):], "?")
		if !ok {
			continue
		}
		for _, kv := range strings.FieldsFunc(query, func(r rune) bool { return r == '&' || r == ';' }) {
			k, v, _ := strings.Cut(kv, "=")
			if dk, err := url.QueryUnescape(k); err == nil {
				k = dk
			}
			if v != "" && Named(k) {
				add(v, url.QueryUnescape)
				strong = true
			}
		}
	}
	return found, strong
}
