package sandbox

import (
	"fmt"
	"io"
	"net/netip"
	"strings"
)

// Allowed reports whether host (a name or an address, without port) is on
// the list: equal to an entry, or a subdomain of an entry "*.domain".
func Allowed(allow []string, host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, a := range allow {
		a = strings.TrimSuffix(strings.ToLower(a), ".")
		if d, ok := strings.CutPrefix(a, "*."); ok {
			if strings.HasSuffix(host, "."+d) {
				return true
			}
			continue
		}
		if host == a {
			return true
		}
	}
	return false
}

// CheckDomain refuses what is not a host name or address, or "*." and
// one: a URL, a port, a path, a wildcard elsewhere.
func CheckDomain(d string) error {
	h := strings.TrimPrefix(d, "*.")
	if h == "" || strings.ContainsAny(h, "/:*@ ") && !isAddr(h) {
		return fmt.Errorf("%q is not a host name (write pypi.org, or *.npmjs.org for its subdomains; no scheme, port or path)", d)
	}
	return nil
}

// isAddr reports whether h is an IP address without a zone.
func isAddr(h string) bool {
	a, err := netip.ParseAddr(h)
	return err == nil && a.Zone() == ""
}

// Splice copies ar (what a reads, or a buffer over it) to b and b to a,
// and closes both when either way ends: the egress proxy's tunnel and the
// helper's forwarder.
func Splice(a io.WriteCloser, ar io.Reader, b io.ReadWriteCloser) {
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(b, ar); done <- struct{}{} }()
	go func() { _, _ = io.Copy(a, b); done <- struct{}{} }()
	<-done
	a.Close()
	b.Close()
	<-done
}
