package cmdkit

import "runtime/debug"

// Version is mecha's version, from the build information the Go command
// stamps into the binary: the module's version for a "go install
// ...@version" (a tag, or a pseudo-version naming the commit); for a
// build in a checkout, "devel" and the commit it was built at (with
// "+dirty" when the tree had changes); "dev" when the binary says nothing.
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	return versionOf(info)
}

func versionOf(info *debug.BuildInfo) string {
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "+dirty"
		}
	}
	if rev == "" {
		return "dev"
	}
	return "devel-" + rev[:min(len(rev), 12)] + dirty
}
