// Package sandboxtest is what the escape tests share (tests only): the
// probe, a network client the test binary becomes inside the sandbox, and
// the local servers it tries to reach.
package sandboxtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"
)

// ProbeArg is the first argument that makes a test binary the probe.
const ProbeArg = "__sandbox_probe"

// IsProbe reports whether args (without the program name) start the probe.
func IsProbe(args []string) bool { return len(args) > 0 && args[0] == ProbeArg }

// Probe sends a payload by one route and exits 0 when it went out:
//
//	__sandbox_probe tcp|udp|unix|abstract ADDRESS PAYLOAD
//	__sandbox_probe dns SERVER NAME   (a DNS query for NAME sent to SERVER)
//	__sandbox_probe addkey TYPE PAYLOAD (add_key(2) to the session key ring)
func Probe(args []string) int {
	if len(args) != 4 {
		fmt.Fprintln(os.Stderr, "probe: usage: ROUTE ADDRESS PAYLOAD")
		return 2
	}
	route, addr, payload := args[1], args[2], args[3]
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var err error
	switch route {
	case "tcp", "udp", "unix":
		err = send(ctx, route, addr, payload)
	case "abstract":
		err = send(ctx, "unix", "@"+addr, payload)
	case "dns":
		r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "udp", addr)
		}}
		_, err = r.LookupHost(ctx, payload)
	case "addkey":
		err = addKey(addr, payload)
	default:
		err = fmt.Errorf("unknown route %q", route)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		return 1
	}
	return 0
}

func send(ctx context.Context, network, addr, payload string) error {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write([]byte(payload))
	return err
}
