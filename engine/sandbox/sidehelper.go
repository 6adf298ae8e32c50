package sandbox

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// SideHelperName is the small helper executable built from cmd/mecha-sandbox
// (`go install ./cmd/...` installs it beside mecha). It is only the helper:
// a few megabytes with none of mecha's other packages, it starts in about
// a third of the time mecha's executable takes, which every confined shell
// call pays once.
const SideHelperName = "mecha-sandbox"

// sources are this package's own source files, in both executables. The
// side helper is started only when its executable holds the very same
// files and was linked against the same modules by the same Go: it then
// applies exactly what mecha's own helper would. Anything else (an older
// or newer build, a different checkout, a file that is not a helper) is
// passed over for mecha's executable.
//
//go:embed cache.go deny.go doc.go egress.go egress_linux.go ns_linux.go sandbox.go sandbox_linux.go sandbox_other.go sidehelper.go supervise_linux.go
var sources embed.FS

// Digest is the SHA-256 of the sandbox's sources, what `mecha-sandbox
// __mecha_sandbox_exec --digest` prints (and mecha's doctor shows).
func Digest() string {
	h := sha256.New()
	for _, name := range sourceNames() {
		b, _ := sources.ReadFile(name)
		fmt.Fprintf(h, "%s %d\n", name, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func sourceNames() []string {
	ents, _ := fs.ReadDir(sources, ".")
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// The helper executable chosen for each mecha executable, once per process.
var helperFor sync.Map // exe -> sideChoice

type sideChoice struct{ path, note string }

// HelperExecutable returns the executable to start as the helper for
// mecha's executable exe: the side helper beside it when it carries this
// build's sandbox (see sources), else exe; with a note saying why the side
// helper was passed over ("" when it is used, or there is none).
func HelperExecutable(exe string) (path, note string) {
	if v, ok := helperFor.Load(exe); ok {
		c := v.(sideChoice)
		return c.path, c.note
	}
	c := sideChoice{path: exe}
	side := filepath.Join(filepath.Dir(exe), SideHelperName)
	if ok, why := usableSide(exe, side); ok {
		c.path = side
	} else {
		c.note = why
	}
	helperFor.Store(exe, c)
	return c.path, c.note
}

// usableSide reports whether side may stand for exe's helper, and why not.
// The check reads both executables (a few milliseconds), so its answer is
// kept like the namespace trial's, per build of both.
func usableSide(exe, side string) (bool, string) {
	fi, err := os.Stat(side)
	if err != nil {
		return false, ""
	}
	switch {
	case !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0:
		return false, side + " is not an executable file"
	case fi.Mode()&0o022 != 0:
		return false, side + " is writable by others than its owner"
	}
	own := exeKey(exe)
	if own == "" {
		return false, ""
	}
	key := fmt.Sprintf("side %s %d %d %s", side, fi.Size(), fi.ModTime().UnixNano(), own)
	return cachedAnswer("sandbox-helper", key, func() (bool, string, bool) {
		why := sameSandbox(exe, side)
		return why == "", why, true
	})
}

// sameSandbox returns "" when side holds this package's sources and was
// built by the same Go against the same modules as exe, else why not.
func sameSandbox(exe, side string) string {
	own, err := buildinfo.ReadFile(exe)
	if err != nil {
		return fmt.Sprintf("%s: %v", exe, err)
	}
	bi, err := buildinfo.ReadFile(side)
	if err != nil {
		return fmt.Sprintf("%s is not a Go executable: %v", side, err)
	}
	if bi.GoVersion != own.GoVersion || bi.Main.Path != own.Main.Path {
		return fmt.Sprintf("%s was built by %s from %s, mecha by %s from %s", side, bi.GoVersion, bi.Main.Path, own.GoVersion, own.Main.Path)
	}
	mods := map[string]string{}
	for _, m := range own.Deps {
		mods[m.Path] = m.Version + " " + m.Sum
	}
	for _, m := range bi.Deps {
		if mods[m.Path] != m.Version+" "+m.Sum {
			return fmt.Sprintf("%s was built with %s %s, mecha with %s", side, m.Path, m.Version, mods[m.Path])
		}
	}
	b, err := os.ReadFile(side)
	if err != nil {
		return err.Error()
	}
	for _, name := range sourceNames() {
		src, _ := sources.ReadFile(name)
		if !bytes.Contains(b, src) {
			return fmt.Sprintf("%s was built from another mecha (its %s differs)", side, name)
		}
	}
	return ""
}
