//go:build !unix

package builtin

import (
	"context"
	"errors"
	"io"
)

func runCommand(ctx context.Context, spec commandSpec, out io.Writer) outcome {
	return outcome{startErr: errors.New("the shell tool is only supported on Unix systems")}
}
