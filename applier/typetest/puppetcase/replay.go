package puppetcase

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/protocol"
)

// Run is an applier.Run over a case's resources, as a catalog would give
// them: the run a replayed concat_file reads its fragments from.
type Run []applier.RunResource

// Managed reports whether the run has typ[title].
func (r Run) Managed(typ, title string) bool {
	for _, x := range r {
		if x.Type == typ && x.Title == title {
			return true
		}
	}
	return false
}

// Resources returns the run's resources of type typ, in order.
func (r Run) Resources(typ string) []applier.RunResource {
	var out []applier.RunResource
	for _, x := range r {
		if x.Type == typ {
			out = append(out, x)
		}
	}
	return out
}

// ParamsIn returns the resource's params with the case's placeholders
// replaced and JSON's integral numbers made integers, as a request's
// YAML would give them.
func (r Resource) ParamsIn(file, dir string) map[string]any {
	p, _ := ints(Expand(r.Params, file, dir)).(map[string]any)
	return p
}

func ints(v any) any {
	switch x := v.(type) {
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
	case []any:
		for i := range x {
			x[i] = ints(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = ints(x[k])
		}
	}
	return v
}

var refreshDetail = regexp.MustCompile(` \([^)]*\)$`)

// Replay applies each recorded case of the file at path with e, every
// resource of the case in order in a temp directory (the run of all of
// them in the context), and checks the first one's outcome against
// Puppet's: the file after (content and mode), changed, failed, the
// change notices, and each of Puppet's error messages contained in the
// answer's (or the case's WantError where pippet differs on purpose).
func Replay(t *testing.T, path string, e *engine.Engine) {
	t.Helper()
	cases, err := Load(path)
	require.NoError(t, err)
	require.NotEmpty(t, cases)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if !c.Recorded {
				t.Fatalf("case %s has not been recorded: run the recorder", c.Name)
			}
			if why := needsRoot(c); why != "" && os.Geteuid() != 0 {
				t.Skip(why)
			}
			dir := t.TempDir()
			file := filepath.Join(dir, "target")
			if c.Before != nil {
				mode := os.FileMode(0o644)
				if c.Mode != "" {
					n, err := strconv.ParseUint(c.Mode, 8, 32)
					require.NoError(t, err)
					mode = os.FileMode(n)
				}
				require.NoError(t, os.WriteFile(file, []byte(*c.Before), mode))
				require.NoError(t, os.Chmod(file, mode))
			}
			for name, content := range c.Extra {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
			}
			var run Run
			for _, r := range c.Resources {
				run = append(run, applier.RunResource{Type: r.Type, Title: Expand(r.Title, file, dir).(string), Params: r.ParamsIn(file, dir)})
			}
			ctx := applier.WithRun(context.Background(), run)
			var res protocol.Result
			for i, r := range c.Resources { // in manifest order, as Puppet applies them
				got := e.Apply(ctx, &protocol.Request{Type: r.Type, Title: Expand(r.Title, file, dir).(string), Params: r.ParamsIn(file, dir), Refresh: i == 0 && c.Refresh})
				if i == 0 {
					res = got
				}
			}
			b, err := os.ReadFile(file)
			after := c.After
			if c.WantAfter != nil {
				after = c.WantAfter
			}
			if c.WantNoFile {
				after = nil
			}
			if after == nil {
				assert.True(t, os.IsNotExist(err), "Puppet left no file; pippet left %q", b)
			} else if assert.NoError(t, err) {
				// Puppet's ParsedFile header carries the time of the run.
				assert.Equal(t, dropHeader(*after), dropHeader(string(b)), "the file after")
				if c.ModeAfter != "" {
					fi, err := os.Stat(file)
					require.NoError(t, err)
					assert.Equal(t, c.ModeAfter, fmt.Sprintf("%04o", fi.Mode().Perm()), "mode after")
				}
			}
			// A refresh is a change to pippet's engine (an event), a log
			// line to Puppet's.
			wantChanged := c.Changed
			for _, ch := range c.Changes() {
				wantChanged = wantChanged || strings.HasPrefix(ch, "refresh: ")
			}
			if c.Differs == "" {
				assert.Equal(t, wantChanged, res.Changed, "changed: %+v", res)
				assert.Equal(t, c.Failed, res.Failed || res.Error, "failed: %+v", res)
			}
			var changes []string
			for _, ev := range res.Events {
				if ev.Status == protocol.StatusSuccess {
					msg := strings.ReplaceAll(strings.ReplaceAll(ev.Message, file, "@FILE@"), dir, "@DIR@")
					if ev.Property == "refresh" { // pippet says what the refresh did, in parentheses
						msg = refreshDetail.ReplaceAllString(msg, "")
					}
					// The file type puts the diff show_diff asks for in the
					// message; Puppet logs it apart (and only with its
					// show_diff setting).
					msg, _, _ = strings.Cut(msg, "\n--- ")
					changes = append(changes, ev.Property+": "+msg)
				}
			}
			if c.Differs == "" {
				assert.Equal(t, c.Changes(), changes, "change messages")
			}
			text := strings.ReplaceAll(strings.ReplaceAll(res.Exception, file, "@FILE@"), dir, "@DIR@")
			for _, ev := range res.Events {
				text += "\n" + strings.ReplaceAll(ev.Message, file, "@FILE@")
			}
			if c.Differs != "" {
				if c.WantError != "" {
					assert.Contains(t, text, c.WantError, "pippet's error (differs: %s)", c.Differs)
				}
				return
			}
			for _, msg := range c.Errors() {
				assert.Contains(t, text, msg, "Puppet's error")
			}
		})
	}
}

// dropHeader removes the lines starting "# HEADER:" that Puppet's
// ParsedFile providers (and pippet's) write with the time of the run.
func dropHeader(s string) string {
	if !strings.Contains(s, "# HEADER:") {
		return s
	}
	lines := strings.SplitAfter(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		if !strings.HasPrefix(l, "# HEADER:") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// needsRoot says why a case can only be replayed as root ("" when anyone
// can): it gives a file to an owner or a group, which only root may do
// (Puppet recorded it as root).
func needsRoot(c *Case) string {
	for _, r := range c.Resources {
		for _, k := range []string{"owner", "group"} {
			if _, ok := r.Params[k]; ok {
				return r.Type + " sets " + k + ", which needs root"
			}
		}
	}
	return ""
}
