package tool

import (
	"encoding/json"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/mecha-agent/mecha/record/transcript"
)

// CallDestinations is implemented by a tool that knows where a call goes:
// web_fetch reaches its URL's host, and nothing else its input names.
// DestinationsOf returns the hosts a call with input would reach; an error
// (input it cannot read) falls back to the hosts its input names
// (HostsIn).
type CallDestinations interface {
	DestinationsOf(input json.RawMessage) ([]string, error)
}

// DestinationsOf returns the hosts a call of t with input would reach,
// normalised (NormalizeHost): t's own answer when t, or a tool it wraps
// (Unwrap), implements CallDestinations, else every host its string
// arguments name (HostsIn). Nil: no destination can be told.
func DestinationsOf(t Tool, input json.RawMessage) []string {
	for u := t; u != nil; {
		if d, ok := u.(CallDestinations); ok {
			if hs, err := d.DestinationsOf(input); err == nil {
				return normalizeAll(hs)
			}
			break
		}
		w, ok := u.(interface{ Unwrap() Tool })
		if !ok {
			break
		}
		u = w.Unwrap()
	}
	return HostsIn(input)
}

// HostsIn returns the hosts named in the string values of a JSON input
// (at any depth), normalised, each once, in order: the host of every
// http, https, ws or wss URL, the domain of every e-mail address, and
// every bare host name (www.example.com, docs.example.org/page) whose
// last label is a common top-level domain (see bareTLDs) and which is
// neither part of a path nor of a longer word. Bare names are taken
// conservatively, so that file names (README.md, main.py), Go selectors
// (errors.Is, rec.At) and version numbers are not hosts; an address
// written as a URL is always one.
func HostsIn(input json.RawMessage) []string {
	var out []string
	transcript.StringValues(input, func(v string) { out = append(out, HostsInText(v)...) })
	return dedupe(out)
}

// hostPatterns are what HostsInText recognises hosts by, made at its
// first call rather than at start-up (compiling them took 0.4 ms of every
// command's start).
var hostPatterns = sync.OnceValue(func() *hostPats {
	p := &hostPats{
		url:   regexp.MustCompile(`(?i)\b(?:https?|wss?)://[^\s"'<>(){}\x60]+`),
		email: regexp.MustCompile(`[A-Za-z0-9._%+\-]+@((?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63})\b`),
		bare:  regexp.MustCompile(`(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}`),
		tlds:  map[string]bool{},
	}
	for _, t := range strings.Fields(bareTLDs) {
		p.tlds[t] = true
	}
	return p
})

type hostPats struct {
	url, email, bare *regexp.Regexp
	tlds             map[string]bool
}

// bareTLDs are the top-level domains a bare host name (one written with
// no scheme) is recognised by. Common ones only, and none that is also a
// common file extension or a short word in code: md, py, sh, rs, pl, so,
// ps, am, ml, mk, pm, tf, cc, zip, mov (files), in, is, at, to, ch, no,
// id, go (words and selectors) are left out. A host under another
// top-level domain is still recognised written as a URL.
const bareTLDs = `com org net edu gov mil int io dev app ai co info biz me tv xyz
	online site tech blog cloud news shop store page link live ly gg fm
	uk eu de fr nl es it se dk fi pt gr cz hu ro ru ua jp cn kr tw hk sg au nz ca us br ar mx za ie be`

// HostsInText returns the hosts text names, normalised, each once, in
// order (see HostsIn).
func HostsInText(text string) []string {
	if !strings.Contains(text, ".") {
		return nil
	}
	pats := hostPatterns()
	var out []string
	blank := []byte(text) // text with each URL and address blanked out once taken
	for _, loc := range pats.url.FindAllStringIndex(text, -1) {
		raw := strings.TrimRight(text[loc[0]:loc[1]], ".,;:!?")
		if !strings.Contains(raw, "[") {
			raw = strings.TrimRight(raw, "].,;:!?")
		}
		if u, err := url.Parse(raw); err == nil && u.Hostname() != "" {
			out = append(out, NormalizeHost(u.Hostname()))
		}
		for i := loc[0]; i < loc[1]; i++ {
			blank[i] = ' '
		}
	}
	for _, m := range pats.email.FindAllSubmatchIndex(blank, -1) {
		out = append(out, NormalizeHost(string(blank[m[2]:m[3]])))
		for i := m[0]; i < m[1]; i++ {
			blank[i] = ' '
		}
	}
	for _, loc := range pats.bare.FindAllIndex(blank, -1) {
		s, e := loc[0], loc[1]
		if s > 0 && strings.IndexByte("/\\_.-@:$%=~", blank[s-1]) >= 0 {
			continue // part of a path, a word, a variable or an address
		}
		if e < len(blank) && (isWordByte(blank[e]) || blank[e] == '@' ||
			blank[e] == '.' && e+1 < len(blank) && isWordByte(blank[e+1])) {
			continue
		}
		h := string(blank[s:e])
		if tld := h[strings.LastIndexByte(h, '.')+1:]; !pats.tlds[strings.ToLower(tld)] || !isLetters(tld) {
			continue
		}
		out = append(out, NormalizeHost(h))
	}
	return dedupe(out)
}

func isWordByte(b byte) bool {
	return b == '_' || b == '-' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return s != ""
}

// NormalizeHost is host as the interlock compares it: lower case, without
// brackets around an IPv6 address, a trailing dot or a leading "www.".
func NormalizeHost(host string) string {
	h := strings.ToLower(strings.TrimSpace(host))
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	h = strings.TrimSuffix(h, ".")
	if net.ParseIP(h) == nil {
		h = strings.TrimPrefix(h, "www.")
	}
	return h
}

func normalizeAll(hs []string) []string {
	out := make([]string, 0, len(hs))
	for _, h := range hs {
		if h = NormalizeHost(h); h != "" {
			out = append(out, h)
		}
	}
	return dedupe(out)
}

func dedupe(hs []string) []string {
	var out []string
	for _, h := range hs {
		if h != "" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// hostSet is the hosts whose provenance is trusted: names (normalised)
// and the domains whose subdomains are trusted ("*.example.com" given).
type hostSet struct {
	names   map[string]bool
	domains []string
}

// add adds a host, or "*.domain" for the domain's subdomains.
func (s *hostSet) add(h string) {
	if d, ok := strings.CutPrefix(strings.TrimSpace(h), "*."); ok {
		if d = strings.TrimSuffix(strings.ToLower(d), "."); d != "" && !slices.Contains(s.domains, d) {
			s.domains = append(s.domains, d)
		}
		return
	}
	if h = NormalizeHost(h); h == "" {
		return
	}
	if s.names == nil {
		s.names = map[string]bool{}
	}
	s.names[h] = true
}

// has reports whether host (normalised) is trusted: named, or a subdomain
// of a domain given as "*.domain". Since a leading "www." is ignored,
// "*.example.com" trusts www.example.com, which is example.com itself.
func (s *hostSet) has(host string) bool {
	if s.names[host] {
		return true
	}
	for _, d := range s.domains {
		if host == d || host == NormalizeHost(d) || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

// list is the set as config would write it: names, then "*.domain"s.
func (s *hostSet) list() []string {
	out := make([]string, 0, len(s.names)+len(s.domains))
	for h := range s.names {
		out = append(out, h)
	}
	slices.Sort(out)
	for _, d := range s.domains {
		out = append(out, "*."+d)
	}
	return out
}
