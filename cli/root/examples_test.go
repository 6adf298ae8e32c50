package root

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/cmdkit"
)

// walk calls f on cmd and every command under it.
func walk(cmd *cobra.Command, f func(*cobra.Command)) {
	f(cmd)
	for _, c := range cmd.Commands() {
		walk(c, f)
	}
}

// TestEveryCommandHasExamples fails on a command a person can run that
// shows no example in its help, and on an example that names a command or
// a flag that does not exist.
func TestEveryCommandHasExamples(t *testing.T) {
	t.Parallel()
	n := 0
	walk(NewCmdRoot(&cmdkit.Env{}), func(c *cobra.Command) {
		if c.Hidden || !c.Runnable() {
			return
		}
		n++
		// cobra prints Example under its own heading: a Long with one of
		// its own would print "Examples:" twice (chat's did).
		for _, line := range strings.Split(c.Long, "\n") {
			if strings.EqualFold(strings.TrimSpace(line), "examples:") {
				t.Errorf("%q: its Long has an Examples section besides its Example", c.CommandPath())
			}
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%q has no Example", c.CommandPath())
			return
		}
		lines := 0
		for _, line := range strings.Split(c.Example, "\n") {
			args, ok := exampleArgs(line)
			if !ok {
				continue
			}
			lines++
			checkExample(t, c, line, args)
		}
		if lines == 0 {
			t.Errorf("%q: no example runs mecha", c.CommandPath())
		}
	})
	if n < 20 {
		t.Errorf("walked %d runnable commands: the tree is not what this test expects", n)
	}
}

// checkExample parses an example's arguments on a fresh tree: the command
// it finds must be c itself or one of c's subcommands (an example of the
// noun may show its verbs), and its flags must exist.
func checkExample(t *testing.T, c *cobra.Command, line string, args []string) {
	t.Helper()
	root := NewCmdRoot(&cmdkit.Env{})
	found, rest, err := root.Find(args)
	if err != nil {
		t.Errorf("%q: example %q: %v", c.CommandPath(), line, err)
		return
	}
	if !strings.HasPrefix(found.CommandPath()+" ", c.CommandPath()+" ") {
		t.Errorf("%q: example %q runs %q", c.CommandPath(), line, found.CommandPath())
		return
	}
	if err := found.ParseFlags(rest); err != nil {
		t.Errorf("%q: example %q: %v", c.CommandPath(), line, err)
		return
	}
	if err := found.ValidateArgs(found.Flags().Args()); err != nil {
		t.Errorf("%q: example %q: %v", c.CommandPath(), line, err)
	}
}

// exampleArgs are the words after "mecha" in a line of an example, up to
// a pipe, a redirection, a comment or a command substitution's end; ok is false for
// a line that does not run mecha.
func exampleArgs(line string) ([]string, bool) {
	line = strings.NewReplacer(`"$(`, " ", `)"`, " ", "$(", " ").Replace(line)
	words := shellWords(line)
	for i, w := range words {
		if w == "mecha" {
			var args []string
			for _, a := range words[i+1:] {
				if a == "|" || a == ">" || a == "<" || a == "&&" || a == ";" || strings.HasPrefix(a, ">") || strings.HasPrefix(a, "#") {
					break
				}
				args = append(args, a)
			}
			return args, true
		}
	}
	return nil, false
}

// shellWords splits a line as sh would, for quotes only.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

func TestShellWords(t *testing.T) {
	t.Parallel()
	got, ok := exampleArgs(`  $EDITOR "$(mecha config path)"`)
	if !ok || strings.Join(got, ",") != "config,path" {
		t.Errorf("exampleArgs = %q, %v", got, ok)
	}
	got, _ = exampleArgs(`  mecha run -p local 'what changed?' | tee out`)
	if strings.Join(got, ",") != "run,-p,local,what changed?" {
		t.Errorf("exampleArgs = %q", got)
	}
	if _, ok := exampleArgs("  # a comment"); ok {
		t.Error("a line without mecha runs it")
	}
}

// TestExamplesNameCommands fails on an entry of examples that names no
// command (one renamed or removed).
func TestExamplesNameCommands(t *testing.T) {
	t.Parallel()
	paths := map[string]bool{}
	walk(NewCmdRoot(&cmdkit.Env{}), func(c *cobra.Command) { paths[c.CommandPath()] = true })
	for p := range examples {
		if !paths[p] {
			t.Errorf("examples has %q, which is not a command", p)
		}
	}
}
