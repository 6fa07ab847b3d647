package integration

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/protocol"
)

// oracleCase is one case recorded from real Puppet (see the oracle's
// README.md).
type oracleCase struct {
	Setup   [][]*string       `json:"setup"`
	Steps   []string          `json:"steps"`
	Results []map[string]any  `json:"results"`
	State   []json.RawMessage `json:"state"`
	Departs bool              `json:"departs_from_puppet"`
}

// deliberatelyUnknown are type names the oracle uses because no such type
// exists; a case using them needs no registration.
var deliberatelyUnknown = map[string]bool{"starship": true}

// findOracle looks for shared/puppet-oracle/cases.json next to the project
// root or any of its parents ($PIPPET_ORACLE names the file directly).
func findOracle() (string, error) {
	if p := os.Getenv("PIPPET_ORACLE"); p != "" {
		return p, nil
	}
	dir, err := filepath.Abs("..")
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(filepath.Dir(dir), "shared", "puppet-oracle", "cases.json")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("shared/puppet-oracle/cases.json not found beside the project or its parents (set PIPPET_ORACLE)")
		}
		dir = parent
	}
}

// TestOracle runs every case of cases.json whose types are all registered,
// comparing as the oracle's score script does: each answer's error, failed
// and changed (and resource where both name one), then the scratch tree.
func TestOracle(t *testing.T) {
	path, err := findOracle()
	if err != nil {
		t.Skip(err)
	}
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var cases map[string]oracleCase
	require.NoError(t, json.Unmarshal(raw, &cases))
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	ran := 0
	for _, name := range names {
		c := cases[name]
		t.Run(name, func(t *testing.T) {
			if missing := missingTypes(c.Steps); len(missing) > 0 {
				t.Skipf("types not registered yet: %v", missing)
			}
			ran++
			runOracleCase(t, c)
		})
	}
	t.Logf("%d of %d oracle cases ran", ran, len(cases))
}

func missingTypes(steps []string) []string {
	var missing []string
	for _, s := range steps {
		var req protocol.Request
		typ := ""
		if err := protocol.DecodeLine([]byte(strings.ReplaceAll(s, "@ROOT@", "/r")), &req); err == nil {
			typ = req.Type
		} else if de := (*protocol.DecodeError)(nil); errors.As(err, &de) {
			typ = de.Type
		}
		if typ != "" && !deliberatelyUnknown[strings.ToLower(typ)] && !registered(typ) {
			missing = append(missing, typ)
		}
	}
	return missing
}

func runOracleCase(t *testing.T, c oracleCase) {
	root := t.TempDir()
	for _, s := range c.Setup {
		require.Len(t, s, 3)
		p := filepath.Join(root, *s[1])
		if *s[0] == "dir" {
			require.NoError(t, os.MkdirAll(p, 0o755))
		} else {
			require.NoError(t, os.WriteFile(p, []byte(*s[2]), 0o644))
		}
	}
	lines := make([]string, len(c.Steps))
	for i, s := range c.Steps {
		lines[i] = strings.ReplaceAll(s, "@ROOT@", root)
	}
	out, stderr, _ := run(t, root, strings.NewReader(strings.Join(lines, "\n")+"\n"))
	var why []string
	var got []map[string]any
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "{") {
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(l), &obj); err != nil {
			why = append(why, fmt.Sprintf("unparsable answer %.200q", l))
			continue
		}
		_, ready := obj["ready"]
		_, changed := obj["changed"]
		if ready && !changed {
			continue
		}
		got = append(got, obj)
	}
	if len(got) != len(c.Results) {
		why = append(why, fmt.Sprintf("%d answer lines, expected %d", len(got), len(c.Results)))
	}
	for i := 0; i < len(got) && i < len(c.Results); i++ {
		want, have := c.Results[i], got[i]
		for _, k := range []string{"error", "failed", "changed"} {
			if want[k] != have[k] {
				why = append(why, fmt.Sprintf("step %d: %s=%v, expected %v", i+1, k, have[k], want[k]))
			}
		}
		wr, _ := want["resource"].(string)
		hr, _ := have["resource"].(string)
		hr = strings.ReplaceAll(hr, root, "@ROOT@")
		if wr != "" && hr != "" && wr != hr {
			why = append(why, fmt.Sprintf("step %d: resource=%s, expected %s", i+1, hr, wr))
		}
	}
	if len(why) == 0 {
		state, err := snapshot(root)
		require.NoError(t, err)
		want := make([][]any, 0, len(c.State))
		for _, e := range c.State {
			var v []any
			require.NoError(t, json.Unmarshal(e, &v))
			want = append(want, v)
		}
		if !reflect.DeepEqual(state, want) {
			why = append(why, fmt.Sprintf("files %v, expected %v", state, want))
		}
	}
	if len(why) > 0 {
		t.Errorf("%s\nstdout:\n%s\nstderr:\n%s", strings.Join(why, "; "), out, stderr)
	}
}

// snapshot lists the tree under root as the score script's os.walk does:
// top-down, each directory's entries sorted by name, symbolic links not
// followed.
func snapshot(root string) ([][]any, error) {
	out := [][]any{}
	var walk func(dir string) error
	walk = func(dir string) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		var subdirs []string
		for _, e := range entries { // ReadDir sorts by name
			p := filepath.Join(dir, e.Name())
			rel, _ := filepath.Rel(root, p)
			st, err := os.Lstat(p)
			if err != nil {
				return err
			}
			mode := "0o" + fmt.Sprintf("%o", uint32(st.Mode().Perm())|specialBits(st.Mode()))
			switch {
			case st.Mode()&os.ModeSymlink != 0:
				target, err := os.Readlink(p)
				if err != nil {
					return err
				}
				// os.walk lists a link to a directory but does not descend.
				out = append(out, []any{rel, "link", strings.ReplaceAll(target, root, "@ROOT@")})
			case st.IsDir():
				out = append(out, []any{rel, "dir", mode})
				subdirs = append(subdirs, p)
			default:
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				sum := sha256.Sum256(data)
				out = append(out, []any{rel, "file", mode, hex.EncodeToString(sum[:])[:16]})
			}
		}
		for _, d := range subdirs {
			if err := walk(d); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(root)
}

// specialBits maps Go's setuid/setgid/sticky flags to their octal bits.
func specialBits(m os.FileMode) uint32 {
	var b uint32
	if m&os.ModeSetuid != 0 {
		b |= 0o4000
	}
	if m&os.ModeSetgid != 0 {
		b |= 0o2000
	}
	if m&os.ModeSticky != 0 {
		b |= 0o1000
	}
	return b
}
