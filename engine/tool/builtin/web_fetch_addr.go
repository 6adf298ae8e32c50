package builtin

import (
	"fmt"
	"net/netip"
)

// refusedRange is one row of the table of addresses web_fetch refuses to
// connect to: a range and why. A private row is refused only when
// Options.RefusePrivate is set; every other row always is.
type refusedRange struct {
	prefix  netip.Prefix
	reason  string
	private bool
}

// refusedRanges is the one table of addresses web_fetch refuses. An
// address is judged by the most specific row holding it, so a metadata
// address inside a private range (fd00:ec2::254 in fc00::/7,
// 100.100.100.200 in 100.64.0.0/10) is refused even when private ones are
// not, and ::1 inside ::/96 is judged as loopback. IPv6 forms that lead to
// an IPv4 address are judged as that address (ipv4Forms), so each IPv4 row
// covers those forms too; the other forms are rows of their own, refused
// whole: IPv4-compatible (deprecated), local-use NAT64 (where the IPv4
// address sits is the translator's choice), 6to4 and Teredo (reached
// through a tunnel).
//
// Not refused even with RefusePrivate: documentation, benchmarking and
// reserved ranges (192.0.2.0/24, 198.18.0.0/15, 240.0.0.0/4, ...), where no
// server answers that the internet could not reach (local proxies in
// "fake IP" mode hand out 198.18.0.0/15 for public names).
var refusedRanges = []refusedRange{
	// Cloud metadata and credential services. Each is refused whatever
	// the configuration: the response can hold the machine's credentials.
	{prefix: pfx("169.254.169.254/32"), reason: "the instance metadata service of AWS, GCP, Azure, Oracle Cloud, DigitalOcean, OpenStack and others"},
	{prefix: pfx("169.254.170.2/32"), reason: "AWS ECS's task metadata and credentials service"},
	{prefix: pfx("169.254.170.23/32"), reason: "AWS EKS's Pod Identity agent (credentials)"},
	{prefix: pfx("169.254.0.23/32"), reason: "Tencent Cloud's metadata service"},
	{prefix: pfx("100.100.100.200/32"), reason: "Alibaba Cloud's metadata service"},
	{prefix: pfx("192.0.0.192/32"), reason: "Oracle Cloud Classic's metadata service"},
	{prefix: pfx("168.63.129.16/32"), reason: "Azure's WireServer (the host's platform endpoint)"},
	{prefix: pfx("fd00:ec2::254/128"), reason: "the AWS EC2 instance metadata service over IPv6"},
	{prefix: pfx("fd00:ec2::23/128"), reason: "AWS EKS's Pod Identity agent over IPv6 (credentials)"},
	{prefix: pfx("fd20:ce::254/128"), reason: "the GCP metadata service over IPv6"},

	// Link-local: where metadata services answer, on other clouds too.
	{prefix: pfx("169.254.0.0/16"), reason: "a link-local address, where cloud metadata services answer"},
	{prefix: pfx("fe80::/10"), reason: "a link-local address, where cloud metadata services answer"},

	// This machine in disguise, and addresses no TCP server has.
	{prefix: pfx("0.0.0.0/8"), reason: `"this network" (0.0.0.0 reaches this machine's own services)`},
	{prefix: pfx("::/128"), reason: "the unspecified address (it reaches this machine's own services)"},
	{prefix: pfx("224.0.0.0/4"), reason: "a multicast address"},
	{prefix: pfx("ff00::/8"), reason: "a multicast address"},
	{prefix: pfx("255.255.255.255/32"), reason: "the broadcast address"},

	// IPv6 forms of an IPv4 address that cannot be judged by it.
	{prefix: pfx("::/96"), reason: "an IPv4-compatible address (::a.b.c.d, deprecated by RFC 4291)"},
	{prefix: pfx("64:ff9b:1::/48"), reason: "the local-use NAT64 prefix (RFC 8215): where its IPv4 address sits depends on the translator, so it cannot be checked"},
	{prefix: pfx("2002::/16"), reason: "a 6to4 address (deprecated by RFC 7526), reached through a tunnel to the IPv4 address it carries"},
	{prefix: pfx("2001::/32"), reason: "a Teredo address (RFC 4380), reached through a tunnel to the IPv4 addresses it carries"},

	// Private networks: refused only with RefusePrivate (off by default,
	// for local development servers are normal targets).
	{prefix: pfx("127.0.0.0/8"), reason: "a loopback address", private: true},
	{prefix: pfx("::1/128"), reason: "a loopback address", private: true},
	{prefix: pfx("10.0.0.0/8"), reason: "a private address (RFC 1918)", private: true},
	{prefix: pfx("172.16.0.0/12"), reason: "a private address (RFC 1918)", private: true},
	{prefix: pfx("192.168.0.0/16"), reason: "a private address (RFC 1918)", private: true},
	{prefix: pfx("100.64.0.0/10"), reason: "a shared address (RFC 6598: carrier-grade NAT, Tailscale)", private: true},
	{prefix: pfx("fc00::/7"), reason: "a unique local address (RFC 4193)", private: true},
	{prefix: pfx("fec0::/10"), reason: "a site-local address (deprecated by RFC 3879)", private: true},
}

// ipv4Forms are the IPv6 ranges whose addresses lead to the IPv4 address in
// their last 32 bits: this machine's own stack connects to the IPv4 address
// of a mapped one, and a translator on the way (SIIT, NAT64) to that of the
// others. An address in one is judged as the IPv4 address it carries.
var ipv4Forms = []struct {
	prefix netip.Prefix
	name   string
}{
	{pfx("::ffff:0:0/96"), "IPv4-mapped"},
	{pfx("::ffff:0:0:0/96"), "IPv4-translated (SIIT)"},
	{pfx("64:ff9b::/96"), "NAT64"},
}

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// ForbiddenAddr reports why web_fetch refuses to connect to a, "" when it
// may: the reason of the most specific row of the table (refusedRanges)
// holding it, a private row only when refusePrivate is set. An IPv6
// address that carries an IPv4 address (IPv4-mapped, IPv4-translated,
// NAT64 64:ff9b::/96) is judged as that IPv4 address, and the reason says
// so. An address's zone is ignored; an invalid address is refused.
//
// Loopback and private networks are reachable unless refusePrivate: local
// development servers are normal targets, and this project's own tests
// fetch from loopback servers.
func ForbiddenAddr(a netip.Addr, refusePrivate bool) string {
	if !a.IsValid() {
		return "not a valid address"
	}
	a = a.WithZone("")
	for _, f := range ipv4Forms {
		if f.prefix.Contains(a) {
			b := a.As16()
			v4 := netip.AddrFrom4([4]byte(b[12:]))
			if why := ForbiddenAddr(v4, refusePrivate); why != "" {
				return fmt.Sprintf("%s in %s form: %s", v4, f.name, why)
			}
			return ""
		}
	}
	var row *refusedRange
	for i, r := range refusedRanges {
		if r.prefix.Contains(a) && (row == nil || r.prefix.Bits() > row.prefix.Bits()) {
			row = &refusedRanges[i]
		}
	}
	if row == nil || row.private && !refusePrivate {
		return ""
	}
	return row.reason
}
