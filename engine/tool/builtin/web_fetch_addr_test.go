package builtin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// The addresses of the tests below. None is ever connected to: the address
// check refuses in the dialer's Control hook, before connect(2), and what it
// lets through the tests' loopbackOnly check refuses at the same point
// unless it is loopback.
var (
	// refusedV4 are refused whatever the configuration, in every form.
	refusedV4 = []string{
		"169.254.169.254", "169.254.170.2", "169.254.170.23", "169.254.0.23",
		"169.254.0.1", "169.254.255.255", "100.100.100.200", "192.0.0.192",
		"168.63.129.16", "0.0.0.0", "0.1.2.3", "224.0.0.1", "239.255.255.250",
		"255.255.255.255",
	}
	// refusedV6 are refused whatever the configuration.
	refusedV6 = []string{
		"::", "fe80::1", "fe80::1%lo", "febf:ffff::1", "fd00:ec2::254",
		"fd00:ec2::23", "fd20:ce::254", "ff02::1", "ff0e::1", "::a9fe:a9fe",
		"64:ff9b:1::a9fe:a9fe", "2002:a9fe:a9fe::1", "2001:0:a9fe:a9fe::1",
	}
	// privateV4 and privateV6 are refused only with RefusePrivate (but
	// privateV4's forms that are refused whole always are).
	privateV4 = []string{
		"127.0.0.1", "127.255.255.254", "10.0.0.1", "10.255.255.255",
		"172.16.0.1", "172.31.255.255", "192.168.0.1", "192.168.255.255",
		"100.64.0.1", "100.100.100.199", "100.100.100.201", "100.127.255.255",
	}
	privateV6 = []string{
		"::1", "fc00::1", "fd12:3456::1", "fdff:ffff::1", "fec0::1", "feff::1",
		"fd00:ec2::253", "fd20:ce::253",
	}
	// allowedV4 and allowedV6 are never refused (but allowedV4's forms
	// that are refused whole are): the neighbours of refused ranges.
	allowedV4 = []string{
		"8.8.8.8", "93.184.216.34", "1.0.0.0", "9.255.255.255", "11.0.0.0",
		"100.63.255.255", "100.128.0.0", "126.255.255.255", "128.0.0.0",
		"168.63.129.15", "168.63.129.17", "169.253.255.255", "169.255.0.0",
		"172.15.255.255", "172.32.0.0", "192.0.0.191", "192.0.0.193",
		"192.167.255.255", "192.169.0.0", "223.255.255.255",
	}
	allowedV6 = []string{
		"2606:4700:4700::1111", "2001:4860:4860::8888", "2001:1::1", "2003::1",
		"64:ff9b:2::1", "64:ff9b::1:0:0", "fe7f:ffff::1", "fbff:ffff::1",
	}
)

// v4Form is one way to write an IPv4 address as an IPv6 one; whole says
// the form is refused whatever the IPv4 address.
type v4Form struct {
	name  string
	whole bool
	addr  func(v4 [4]byte) [16]byte
}

var v4Forms = []v4Form{
	{"plain", false, nil},
	{"IPv4-mapped", false, func(v [4]byte) [16]byte {
		return [16]byte{10: 0xff, 11: 0xff, 12: v[0], 13: v[1], 14: v[2], 15: v[3]}
	}},
	{"IPv4-translated", false, func(v [4]byte) [16]byte {
		return [16]byte{8: 0xff, 9: 0xff, 12: v[0], 13: v[1], 14: v[2], 15: v[3]}
	}},
	{"NAT64", false, func(v [4]byte) [16]byte {
		return [16]byte{1: 0x64, 2: 0xff, 3: 0x9b, 12: v[0], 13: v[1], 14: v[2], 15: v[3]}
	}},
	{"IPv4-compatible", true, func(v [4]byte) [16]byte {
		return [16]byte{12: v[0], 13: v[1], 14: v[2], 15: v[3]}
	}},
	{"local-use NAT64 /96", true, func(v [4]byte) [16]byte {
		return [16]byte{1: 0x64, 2: 0xff, 3: 0x9b, 5: 1, 12: v[0], 13: v[1], 14: v[2], 15: v[3]}
	}},
	{"local-use NAT64 /48", true, func(v [4]byte) [16]byte {
		return [16]byte{1: 0x64, 2: 0xff, 3: 0x9b, 5: 1, 6: v[0], 7: v[1], 9: v[2], 10: v[3]}
	}},
	{"6to4", true, func(v [4]byte) [16]byte {
		return [16]byte{0: 0x20, 1: 0x02, 2: v[0], 3: v[1], 4: v[2], 5: v[3], 15: 1}
	}},
	{"Teredo", true, func(v [4]byte) [16]byte {
		return [16]byte{0: 0x20, 1: 0x01, 4: v[0], 5: v[1], 6: v[2], 7: v[3], 12: ^v[0], 13: ^v[1], 14: ^v[2], 15: ^v[3]}
	}},
}

// addrCase is an address and whether it is refused by default and with
// RefusePrivate.
type addrCase struct {
	name           string
	addr           netip.Addr
	byDefault, all bool
}

func addrCases() []addrCase {
	var cases []addrCase
	v4 := func(list []string, byDefault, all bool) {
		for _, s := range list {
			a := netip.MustParseAddr(s)
			for _, f := range v4Forms {
				c := addrCase{name: s + " " + f.name, addr: a, byDefault: byDefault || f.whole, all: all || f.whole}
				if f.addr != nil {
					c.addr = netip.AddrFrom16(f.addr(a.As4()))
				}
				cases = append(cases, c)
			}
		}
	}
	v6 := func(list []string, byDefault, all bool) {
		for _, s := range list {
			cases = append(cases, addrCase{name: s, addr: netip.MustParseAddr(s), byDefault: byDefault, all: all})
		}
	}
	v4(refusedV4, true, true)
	v6(refusedV6, true, true)
	v4(privateV4, false, true)
	v6(privateV6, false, true)
	v4(allowedV4, false, false)
	v6(allowedV6, false, false)
	return cases
}

func TestRefusedRangesTable(t *testing.T) {
	t.Parallel()
	seen := map[netip.Prefix]bool{}
	for _, r := range refusedRanges {
		if r.prefix != r.prefix.Masked() || r.reason == "" || seen[r.prefix] {
			t.Errorf("row %v: not masked, without a reason, or twice", r.prefix)
		}
		seen[r.prefix] = true
	}
	for _, f := range ipv4Forms {
		if f.prefix.Bits() != 96 || seen[f.prefix] {
			t.Errorf("IPv4 form %v: the IPv4 address must be its last 32 bits, and it not a row", f.prefix)
		}
	}
}

func TestForbiddenAddrForms(t *testing.T) {
	t.Parallel()
	for _, c := range addrCases() {
		if got := ForbiddenAddr(c.addr, false) != ""; got != c.byDefault {
			t.Errorf("%s (%s): refused by default %v, want %v", c.name, c.addr, got, c.byDefault)
		}
		if got := ForbiddenAddr(c.addr, true) != ""; got != c.all {
			t.Errorf("%s (%s): refused with refuse_private %v, want %v", c.name, c.addr, got, c.all)
		}
	}
	if ForbiddenAddr(netip.Addr{}, false) == "" {
		t.Error("the zero address is allowed")
	}
	// The reason names the address and the form it was written in.
	for addr, want := range map[string]string{
		"169.254.169.254":        "the instance metadata service of AWS, GCP, Azure",
		"100.100.100.200":        "Alibaba Cloud's metadata service",
		"192.0.0.192":            "Oracle Cloud Classic's metadata service",
		"fd00:ec2::254":          "the AWS EC2 instance metadata service over IPv6",
		"64:ff9b::a9fe:a9fe":     "169.254.169.254 in NAT64 form: the instance metadata service",
		"::ffff:100.100.100.200": "100.100.100.200 in IPv4-mapped form: Alibaba",
		"::ffff:0:c000:c0":       "192.0.0.192 in IPv4-translated (SIIT) form: Oracle",
		"::a9fe:a9fe":            "an IPv4-compatible address",
		"64:ff9b:1::a9fe:a9fe":   "the local-use NAT64 prefix",
		"fe80::1%eth0":           "a link-local address",
		"0.0.0.0":                "this machine's own services",
		"::":                     "the unspecified address",
		"64:ff9b::a00:1":         "10.0.0.1 in NAT64 form: a private address (RFC 1918)",
		"::1":                    "a loopback address",
	} {
		if got := ForbiddenAddr(netip.MustParseAddr(addr), true); !strings.Contains(got, want) {
			t.Errorf("%s: reason %q, want it to hold %q", addr, got, want)
		}
	}
}

// TestWebFetchControlRefuses runs the dialer's Control hook itself on the
// address of each case, as the dialer would before connect.
func TestWebFetchControlRefuses(t *testing.T) {
	t.Parallel()
	for _, private := range []bool{false, true} {
		wf := NewWebFetch(Options{RefusePrivate: private}).(*webFetch)
		for _, c := range addrCases() {
			want := c.byDefault
			if private {
				want = c.all
			}
			addr := netip.AddrPortFrom(c.addr, 80).String()
			err := wf.control("tcp", addr, nil)
			var fe *ForbiddenError
			if refused := errors.As(err, &fe); refused != want || !want && err != nil {
				t.Errorf("refuse_private %v, %s: control(%s) = %v, want refused %v", private, c.name, addr, err, want)
			}
		}
	}
	if err := NewWebFetch(Options{}).(*webFetch).control("tcp", ":80", nil); err == nil {
		t.Error("control(:80) = nil, want an error (an address that does not parse is refused)")
	}
}

func urlOf(a netip.Addr, path string) string {
	if a.Is4() {
		return "http://" + a.String() + path
	}
	return "http://[" + strings.Replace(a.String(), "%", "%25", 1) + "]" + path
}

// TestWebFetchRefusedEveryForm performs the attack on every form of every
// refused address, by the URL naming it, by a redirect to it from an
// allowed (loopback) server, and by a host name resolving to it: each is
// refused at the dial. The addresses the check lets through reach the
// tests' own loopbackOnly refusal instead (the control: the address check
// is what refuses the others), and nothing is connected to either way.
func TestWebFetchRefusedEveryForm(t *testing.T) {
	t.Parallel()
	hop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	}))
	defer hop.Close()
	hosts := map[string]netip.Addr{}
	resolver := func(_ context.Context, host string) ([]netip.Addr, error) {
		if a, ok := hosts[host]; ok {
			return []netip.Addr{a}, nil
		}
		return nil, fmt.Errorf("no such host %s", host)
	}
	cases := addrCases()
	for i, c := range cases {
		hosts[fmt.Sprintf("h%d.test", i)] = c.addr
	}
	for _, private := range []bool{false, true} {
		o := Options{Resolver: resolver, RefusePrivate: private}
		for i, c := range cases {
			want := c.byDefault
			if private {
				want = c.all
			}
			if !want && c.addr.Unmap().IsLoopback() {
				continue // reachable: TestWebFetchRefusePrivate fetches from loopback
			}
			direct := urlOf(c.addr, "/latest/meta-data/")
			routes := []string{direct, fmt.Sprintf("http://h%d.test/latest/meta-data/", i)}
			if !private { // with refuse_private the loopback hop is refused itself
				routes = append(routes, hop.URL+"/?to="+url.QueryEscape(direct))
			}
			for _, u := range routes {
				got, isErr := fetch(t, o, u)
				refused := strings.Contains(got, "web_fetch: refused to connect to ") &&
					strings.Contains(got, "never fetched, by URL, redirect or DNS")
				guard := strings.Contains(got, "is not loopback")
				if !isErr || refused != want || guard == want {
					t.Errorf("refuse_private %v, %s, %s: error %v, %q", private, c.name, u, isErr, got)
				}
			}
		}
	}
}

// TestWebFetchRefusePrivate is the switch's own attack and control: a
// loopback server (and its IPv4-mapped form, a redirect to it, a name
// resolving to it) is fetched by default and refused with RefusePrivate.
func TestWebFetchRefusePrivate(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		fmt.Fprint(w, "local secret")
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	resolver := func(_ context.Context, host string) ([]netip.Addr, error) {
		if host == "dev.test" {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, fmt.Errorf("no such host %s", host)
	}
	urls := []string{
		srv.URL + "/",
		fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", port),
		fmt.Sprintf("http://dev.test:%d/", port),
		srv.URL + "/?to=" + srv.URL + "/",
	}
	if ln, err := net.Listen("tcp", "[::1]:0"); err == nil {
		srv6 := httptest.NewUnstartedServer(srv.Config.Handler)
		srv6.Listener.Close()
		srv6.Listener = ln
		srv6.Start()
		defer srv6.Close()
		urls = append(urls, srv6.URL+"/")
	}
	for _, url := range urls {
		got, isErr := fetch(t, Options{Resolver: resolver}, url)
		if isErr || !strings.HasSuffix(got, "local secret") {
			t.Errorf("default (control), %s: error %v, %q", url, isErr, got)
		}
		got, isErr = fetch(t, Options{Resolver: resolver, RefusePrivate: true}, url)
		if !isErr || !strings.Contains(got, ": a loopback address (link-local, cloud-metadata and private addresses (loopback included) are never fetched") ||
			strings.Contains(got, "local secret") {
			t.Errorf("refuse_private, %s: error %v, %q", url, isErr, got)
		}
	}
}

func TestWebFetchSpecSaysWhatIsRefused(t *testing.T) {
	t.Parallel()
	for private, want := range map[bool]string{
		false: " Link-local and cloud-metadata addresses are refused.",
		true:  " Link-local, cloud-metadata and private addresses (loopback included) are refused.",
	} {
		if d := NewWebFetch(Options{RefusePrivate: private}).Spec().Description; !strings.HasSuffix(d, want) {
			t.Errorf("refuse_private %v: description %q, want it to end %q", private, d, want)
		}
	}
}
