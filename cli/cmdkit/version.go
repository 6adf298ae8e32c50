package cmdkit

import "runtime/debug"

// Version is mecha's version: the module version when built from a tagged
// module, else "dev".
func Version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}
