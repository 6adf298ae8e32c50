package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"

	"github.com/mecha-agent/mecha/engine/tool"
)

// Defaults of web_fetch, for the zero values of its Options fields.
const (
	DefaultFetchTimeout   = 30 * time.Second
	DefaultMaxFetchBytes  = 2 << 20
	DefaultMaxRedirects   = 5
	webFetchUserAgent     = "mecha-web_fetch/1"
	webFetchAcceptHeader  = "text/html, text/plain;q=0.9, application/json;q=0.8, */*;q=0.5"
	webFetchMaxURLDisplay = 2048
)

const webFetchDescription = `Fetch an http or https URL with GET and return its text: HTML is converted to Markdown-like text, other text as it is. The result starts with the final URL (after redirects, at most %d) and the HTTP status. The body is cut at %d bytes and the whole fetch at %d seconds. %s are refused.`

var webFetchSchema = json.RawMessage(`{"type":"object","properties":{"url":{"type":"string","description":"the http or https URL to fetch"}},"required":["url"],"additionalProperties":false}`)

// Resolver finds the addresses of a host name (web_fetch's DNS; tests
// inject one).
type Resolver func(ctx context.Context, host string) ([]netip.Addr, error)

// ForbiddenError is the error of a connection web_fetch refused to make.
type ForbiddenError struct {
	Addr   netip.Addr
	Reason string
}

func (e *ForbiddenError) Error() string {
	return fmt.Sprintf("refused to connect to %s: %s", e.Addr, e.Reason)
}

type webFetch struct {
	opts   Options
	client *http.Client
}

// NewWebFetch returns the web_fetch tool. The address of every connection
// is checked as it is dialed (a net.Dialer Control hook, before connect),
// so a URL, a redirect or a DNS answer that leads to a forbidden address
// (see ForbiddenAddr; private ones too with Options.RefusePrivate) is
// refused alike; no proxy from the environment is used, since the address
// dialed would then be the proxy's.
func NewWebFetch(opts Options) tool.Tool {
	opts = opts.withDefaults()
	t := &webFetch{opts: opts}
	dialer := &net.Dialer{Timeout: opts.FetchTimeout, Control: t.control}
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return t.dial(ctx, dialer, network, addr)
		},
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        4,
		IdleConnTimeout:     30 * time.Second,
		TLSHandshakeTimeout: opts.FetchTimeout,
	}
	t.client = &http.Client{Transport: tr, CheckRedirect: t.checkRedirect}
	return t
}

func (t *webFetch) Spec() tool.Spec {
	return tool.Spec{Name: NameWebFetch,
		Description: fmt.Sprintf(webFetchDescription, t.opts.MaxRedirects, t.opts.MaxFetchBytes, int(t.opts.FetchTimeout/time.Second), strings.ToUpper(t.refused()[:1])+t.refused()[1:]),
		InputSchema: webFetchSchema}
}

// Capabilities: it reaches the network, and what it brings back comes from
// outside. It does not act outward: it only GETs, which HTTP defines as
// safe (RFC 9110, 9.2.1: the client asks for no change on the server), so
// a fetch with nothing private in the conversation can leak nothing and
// change nothing of the user's; following a link a page gave is what
// reading the web is. It is a send channel, judged by the trifecta.
func (t *webFetch) Capabilities() tool.Capabilities {
	return tool.Capabilities{ReachesNetwork: true, External: true}
}

// refused names the addresses refused, in the description and in each
// refusal: the spec recorded in each config record says which were.
func (t *webFetch) refused() string {
	if t.opts.RefusePrivate {
		return "link-local, cloud-metadata and private addresses (loopback included)"
	}
	return "link-local and cloud-metadata addresses"
}

// control runs for every connection, with the address about to be dialed.
func (t *webFetch) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("web_fetch: unexpected dial address %q", address)
	}
	forbidden := func(a netip.Addr) string { return ForbiddenAddr(a, t.opts.RefusePrivate) }
	if t.opts.forbidden != nil {
		forbidden = t.opts.forbidden
	}
	if why := forbidden(ap.Addr()); why != "" {
		return &ForbiddenError{Addr: ap.Addr().Unmap(), Reason: why}
	}
	if t.opts.loopbackOnly && !ap.Addr().IsLoopback() {
		return fmt.Errorf("web_fetch test: %s is not loopback", ap.Addr())
	}
	return nil
}

// dial resolves addr's host with the configured resolver (when one is set)
// and dials the addresses in turn; Control checks each.
func (t *webFetch) dial(ctx context.Context, d *net.Dialer, network, addr string) (net.Conn, error) {
	if t.opts.Resolver == nil {
		return d.DialContext(ctx, network, addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return d.DialContext(ctx, network, addr)
	}
	ips, err := t.opts.Resolver(ctx, host)
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("no address for %s", host)
	}
	var errs []error
	for _, ip := range ips {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

func (t *webFetch) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > t.opts.MaxRedirects {
		return fmt.Errorf("stopped after %d redirects", t.opts.MaxRedirects)
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return fmt.Errorf("redirect to a %q URL refused (only http and https)", req.URL.Scheme)
	}
	return nil
}

type webFetchParams struct {
	URL *string `json:"url"`
}

// DestinationsOf is the host of the call's URL, the one place it goes
// (redirects aside: the interlock judges the call as the model made it).
// Input that names no absolute http or https URL is an error: the
// interlock then judges it by every host it names.
func (t *webFetch) DestinationsOf(input json.RawMessage) ([]string, error) {
	var p webFetchParams
	if err := json.Unmarshal(input, &p); err != nil {
		return nil, err
	}
	if p.URL == nil {
		return nil, errors.New("no url")
	}
	u, err := url.Parse(*p.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, fmt.Errorf("not an absolute http or https URL: %q", *p.URL)
	}
	return []string{u.Hostname()}, nil
}

func (t *webFetch) Run(ctx context.Context, input json.RawMessage) (tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return tool.Result{}, fmt.Errorf("builtin: %s: %w", NameWebFetch, err)
	}
	var p webFetchParams
	if err := decodeInput(input, &p, "url"); err != nil {
		return errorResult("%v", err), nil
	}
	if p.URL == nil {
		return errorResult("%v", missing("url")), nil
	}
	u, err := url.Parse(*p.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errorResult("web_fetch: want an absolute http or https URL, not %q", clipURL(*p.URL)), nil
	}
	ctx, cancel := context.WithTimeoutCause(ctx, t.opts.FetchTimeout, errFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return errorResult("web_fetch: %v", err), nil
	}
	req.Header.Set("User-Agent", webFetchUserAgent)
	req.Header.Set("Accept", webFetchAcceptHeader)
	resp, err := t.client.Do(req)
	if err != nil {
		if ctx.Err() != nil && context.Cause(ctx) != errFetchTimeout {
			return tool.Result{}, fmt.Errorf("builtin: %s: %w", NameWebFetch, ctx.Err())
		}
		return t.failure(ctx, err), nil
	}
	defer resp.Body.Close()
	body, readErr := io.ReadAll(io.LimitReader(resp.Body, int64(t.opts.MaxFetchBytes)+1))
	cut := len(body) > t.opts.MaxFetchBytes
	if cut {
		body = cutHead(body, t.opts.MaxFetchBytes)
	}
	body = redactBody(t.opts.redactor, body, cut)
	if readErr != nil {
		if context.Cause(ctx) == errFetchTimeout {
			return errorResult("web_fetch: %s: timed out after %s while reading the body (%d bytes read)", clipURL(resp.Request.URL.String()), t.opts.FetchTimeout, len(body)), nil
		}
		if ctx.Err() != nil {
			return tool.Result{}, fmt.Errorf("builtin: %s: %w", NameWebFetch, ctx.Err())
		}
		return errorResult("web_fetch: %s: reading the body: %v", clipURL(resp.Request.URL.String()), readErr), nil
	}
	return t.render(resp, body, cut), nil
}

var errFetchTimeout = errors.New("web_fetch timed out")

// failure turns a failed request into the result the model reads.
func (t *webFetch) failure(ctx context.Context, err error) tool.Result {
	var fe *ForbiddenError
	switch {
	case errors.As(err, &fe):
		return errorResult("web_fetch: %v (%s are never fetched, by URL, redirect or DNS)", fe, t.refused())
	case context.Cause(ctx) == errFetchTimeout:
		return errorResult("web_fetch: timed out after %s", t.opts.FetchTimeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return errorResult("web_fetch: %s: %v", clipURL(ue.URL), ue.Err)
	}
	return errorResult("web_fetch: %v", err)
}

// render builds the result: a head of final URL, status and type, then the
// text.
func (t *webFetch) render(resp *http.Response, body []byte, cut bool) tool.Result {
	var b strings.Builder
	fmt.Fprintf(&b, "URL: %s\nStatus: %s\n", clipURL(resp.Request.URL.String()), resp.Status)
	ctype := resp.Header.Get("Content-Type")
	if ctype != "" {
		fmt.Fprintf(&b, "Content-Type: %s\n", ctype)
	}
	if cut {
		fmt.Fprintf(&b, "Note: the body was cut at %d bytes\n", t.opts.MaxFetchBytes)
	}
	b.WriteString("\n")
	text, err := bodyText(ctype, body)
	if err != nil {
		fmt.Fprintf(&b, "[%v]\n", err)
	} else {
		b.WriteString(text)
	}
	content := t.opts.redactor.Replace(b.String())
	if len(content) > t.opts.MaxResultBytes {
		content = string(cutHead([]byte(content), t.opts.MaxResultBytes)) +
			fmt.Sprintf("\n[... cut: showing the first %d bytes of %d ...]", t.opts.MaxResultBytes, len(content))
	}
	return tool.Result{Content: content, IsError: resp.StatusCode >= 400 || err != nil}
}

// redactBody replaces the secrets in a body; when the body was cut at the
// read limit, a secret's beginning left at its end is dropped too.
func redactBody(r *tool.Redactor, body []byte, cut bool) []byte {
	if r == nil {
		return body
	}
	var out bytes.Buffer
	w := r.Writer(&out)
	_, _ = w.Write(body)
	if cut {
		_ = w.Cut()
	} else {
		_ = w.Close()
	}
	return out.Bytes()
}

// bodyText is the readable text of a body: HTML converted by
// html-to-markdown, other text as it is, anything else refused.
func bodyText(ctype string, body []byte) (string, error) {
	mt, _, _ := mime.ParseMediaType(ctype)
	if mt == "" {
		mt = http.DetectContentType(body)
		mt, _, _ = mime.ParseMediaType(mt)
	}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		md, err := htmltomarkdown.ConvertReader(bytes.NewReader(body))
		if err != nil {
			return "", fmt.Errorf("the HTML could not be converted: %v", err)
		}
		return strings.ToValidUTF8(string(md), "\uFFFD"), nil
	case strings.HasPrefix(mt, "text/"), mt == "application/json", mt == "application/xml",
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"), mt == "application/javascript":
		if !utf8.Valid(body) {
			return strings.ToValidUTF8(string(body), "\uFFFD"), nil
		}
		return string(body), nil
	}
	return "", fmt.Errorf("not text: %s, %d bytes not shown", mt, len(body))
}

func clipURL(s string) string {
	if len(s) <= webFetchMaxURLDisplay {
		return s
	}
	return string(cutHead([]byte(s), webFetchMaxURLDisplay)) + "..."
}
