package root_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdJSONL parses FILE as JSON lines, failing on a line that is not one
// JSON object, and writes the value of FIELD of each line that has it to
// stdout, one per line (JSON-encoded), for stdout to check their order:
//
//	jsonl FILE FIELD
func cmdJSONL(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: jsonl FILE FIELD")
	}
	b, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &obj); err != nil {
			ts.Fatalf("%s:%d: not a JSON object: %v", args[0], n, err)
		}
		if v, ok := obj[args[1]]; ok {
			fmt.Fprintf(ts.Stdout(), "%s\n", v)
		}
	}
	ts.Check(sc.Err())
}
