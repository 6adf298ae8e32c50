//go:build !linux

package root

// hideProcess does nothing where there is no PR_SET_DUMPABLE; the
// redaction of tool results still keeps keys out of what is recorded.
func hideProcess() error { return nil }
