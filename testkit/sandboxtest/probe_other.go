//go:build !linux

package sandboxtest

import "errors"

func addKey(string, string) error { return errors.New("add_key is Linux's") }
