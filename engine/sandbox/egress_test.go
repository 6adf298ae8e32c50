package sandbox_test

import (
	"testing"

	"github.com/mecha-agent/mecha/engine/sandbox"
)

// TestCheckDomain: a host name, an address, or "*." and a name pass; a
// URL, a port, a path, a user, a wildcard elsewhere and an IPv6 address
// with a zone are refused (--allow-domain, allow_domains, trusted_hosts,
// --trust-host all go through it).
func TestCheckDomain(t *testing.T) {
	t.Parallel()
	for _, d := range []string{"pypi.org", "*.npmjs.org", "127.0.0.1", "::1", "localhost", "2001:db8::1"} {
		if err := sandbox.CheckDomain(d); err != nil {
			t.Errorf("CheckDomain(%q) = %v, want nil", d, err)
		}
	}
	for _, d := range []string{"", "*.", "https://pypi.org", "pypi.org:443", "pypi.org/simple", "me@pypi.org", "a*.org", "*.*.org", "fe80::1%eth0", "pypi .org"} {
		if err := sandbox.CheckDomain(d); err == nil {
			t.Errorf("CheckDomain(%q) = nil, want an error", d)
		}
	}
}
