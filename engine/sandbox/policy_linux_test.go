package sandbox

import (
	"reflect"
	"syscall"
	"testing"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// TestLandlockPolicy pins the policy the helper hands Landlock, for the
// parts this machine's kernel cannot show by an escape: with the network
// cut, TCP rights and abstract Unix sockets are handled by Landlock as well
// as refused by seccomp (a second layer no escape test can see while the
// first holds); with it on, neither, and connecting to a path-named Unix
// socket (a file-system right from ABI 9 on) is allowed.
func TestLandlockPolicy(t *testing.T) {
	t.Parallel()
	cut, open := landlockConfig(false), landlockConfig(true)
	if cut.HandledAccessNet != landlock.V11.HandledAccessNet || cut.HandledAccessNet.String() == "" {
		t.Errorf("network cut: handled network rights %v, want %v", cut.HandledAccessNet, landlock.V11.HandledAccessNet)
	}
	if want := landlock.ScopedSet(ll.ScopeSignal | ll.ScopeAbstractUnixSocket); cut.Scoped != want {
		t.Errorf("network cut: scoped %v, want %v", cut.Scoped, want)
	}
	if open.HandledAccessNet != 0 || open.Scoped != landlock.ScopedSet(ll.ScopeSignal) {
		t.Errorf("network on: handled network rights %v, scoped %v; want none and signals", open.HandledAccessNet, open.Scoped)
	}
	for _, c := range []landlock.Config{cut, open} {
		if c.HandledAccessFS != landlock.V11.HandledAccessFS {
			t.Errorf("file-system rights %v, want every one of the kernel's ABI", c.HandledAccessFS)
		}
	}

	p := policy{Namespaces: true, Workspace: "/ws", Tmp: "/tmp/x"}
	if got, want := landlockRules(p)[0], landlock.Rule(landlock.RODirs("/")); !reflect.DeepEqual(got, want) {
		t.Errorf("network cut: read rule %v, want %v", got, want)
	}
	p.Network = true
	if got, want := landlockRules(p)[0], landlock.Rule(landlock.RODirs("/").WithResolveUnix()); !reflect.DeepEqual(got, want) {
		t.Errorf("network on: read rule %v, want %v", got, want)
	}
	// The workspace may be written but no device node made in it.
	if got, want := landlockRules(p)[1], landlock.Rule(landlock.PathAccess(writeNoDevices, "/ws")); !reflect.DeepEqual(got, want) {
		t.Errorf("write rule %v, want %v", got, want)
	}
	if writeNoDevices&landlock.AccessFSSet(ll.AccessFSMakeChar|ll.AccessFSMakeBlock) != 0 {
		t.Errorf("the workspace's rights %v include making devices", writeNoDevices)
	}
}

// TestIsHelper: only arguments that start with HelperArg make the
// executable the helper; none at all do not.
func TestIsHelper(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{}, false},
		{[]string{"run"}, false},
		{[]string{HelperArg}, true},
		{[]string{HelperArg, "0"}, true},
		{[]string{"run", HelperArg}, false},
	} {
		if got := IsHelper(tc.args); got != tc.want {
			t.Errorf("IsHelper(%q) = %v", tc.args, got)
		}
	}
}

// TestLandlockABI: the version a kernel without Landlock reports (-1 and
// an errno) is ABI 0, never a negative number in a note.
func TestLandlockABI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v    int
		err  error
		want int
	}{
		{7, nil, 7}, {1, nil, 1}, {0, nil, 0},
		{-1, syscall.ENOSYS, 0}, {-1, syscall.EOPNOTSUPP, 0}, {3, syscall.EINVAL, 0}, {-1, nil, 0},
	} {
		if got := landlockABI(tc.v, tc.err); got != tc.want {
			t.Errorf("landlockABI(%d, %v) = %d, want %d", tc.v, tc.err, got, tc.want)
		}
	}
}
