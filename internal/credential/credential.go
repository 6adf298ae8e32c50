// Package credential tells what looks like a credential by its name, for
// the environment handed to tools and servers and for what mecha shows.
package credential

import "strings"

// Scrub is an environment less anything that looks like a credential (the
// environment of shell commands and MCP servers), so a model that runs env cannot
// copy a key into the transcript.
func Scrub(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if Named(name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Named reports whether an environment variable's name says it
// holds a credential: it contains API_KEY, APIKEY, SECRET, TOKEN, PASSWORD
// or CREDENTIAL, in any case.
func Named(name string) bool {
	u := strings.ToUpper(name)
	for _, w := range []string{"API_KEY", "APIKEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL"} {
		if strings.Contains(u, w) {
			return true
		}
	}
	return false
}
