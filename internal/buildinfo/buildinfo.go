// Package buildinfo says which mecha this is, from the binary's build
// information.
package buildinfo

import "runtime/debug"

// Version is mecha's version from the binary's build information: the
// module's for a "go install ...@version"; for a build in a checkout,
// "devel-" and its commit ("+dirty" with changes); else "dev".
func Version() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		return versionOf(info)
	}
	return "dev"
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
