package sandboxtest

import "golang.org/x/sys/unix"

func addKey(typ, payload string) error {
	_, err := unix.AddKey(typ, "mecha-escape", []byte(payload), unix.KEY_SPEC_SESSION_KEYRING)
	return err
}
