package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
	"github.com/pippet/pippet/protocol"
)

// oracleCase is one case recorded from real Puppet (see the oracle's
// README.md).
type oracleCase struct {
	Setup   [][]*string       `json:"setup"`
	Cleanup []string          `json:"cleanup"`
	Steps   []string          `json:"steps"`
	Results []map[string]any  `json:"results"`
	Probe   []string          `json:"probe"`
	State   []json.RawMessage `json:"state"`
	Departs bool              `json:"departs_from_puppet"`
}

// deliberatelyUnknown are type names the oracle uses because no such type
// exists; a case using them needs no registration.
var deliberatelyUnknown = map[string]bool{"starship": true}

// rootTypes change the machine (accounts, crontabs, packages) or give
// files to an account: their cases need root.
var rootTypes = map[string]bool{"user": true, "group": true, "cron": true, "package": true, "ssh_authorized_key": true}

// findOracleDir looks for shared/puppet-oracle/ (the directory holding
// cases.json) next to the project root or any of its parents
// ($PIPPET_ORACLE names the directory, or one cases file in it).
func findOracleDir() (string, error) {
	if p := os.Getenv("PIPPET_ORACLE"); p != "" {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return filepath.Dir(p), nil
		}
		return p, nil
	}
	dir, err := filepath.Abs("..")
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(filepath.Dir(dir), "shared", "puppet-oracle")
		if _, err := os.Stat(filepath.Join(p, "cases.json")); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("shared/puppet-oracle/cases.json not found beside the project or its parents (set PIPPET_ORACLE)")
		}
		dir = parent
	}
}

// loadOracle reads every cases*.json of the oracle (in name order, a later
// file's case replacing an earlier one's of the same name, as score does),
// and the value-kind cases this project recorded itself
// (testdata/oracle-*.json).
func loadOracle(t *testing.T) map[string]oracleCase {
	var files []string
	dir, err := findOracleDir()
	if err != nil {
		// CI always has shared/ beside the clone: there a missing oracle
		// is a broken checkout, not a reason to skip.
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		// A clone on its own: the protocol cases, copied from the oracle
		// into testdata, still run.
		t.Logf("%v; running the copy of its proto-* cases", err)
		files = []string{"testdata/oracle-proto.json"}
	} else {
		files, err = filepath.Glob(filepath.Join(dir, "cases*.json"))
		require.NoError(t, err)
		require.NotEmpty(t, files, "no cases*.json in %s", dir)
		sort.Strings(files)
	}
	own, err := filepath.Glob("testdata/oracle-*.json")
	require.NoError(t, err)
	sort.Strings(own)
	for _, f := range own {
		if f != "testdata/oracle-proto.json" {
			files = append(files, f)
		}
	}
	cases := map[string]oracleCase{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var m map[string]oracleCase
		require.NoError(t, json.Unmarshal(raw, &m), f)
		for name, c := range m {
			cases[name] = c
		}
	}
	return cases
}

// TestOracle runs every case recorded from real Puppet and compares as the
// oracle's score script does: each answer's error, failed and changed (a
// null in the recording accepts either; resource where both name one),
// then the scratch tree and the probes' output. Cases run one at a time:
// those of the system types share accounts, ids, root's crontab and a
// package.
func TestOracle(t *testing.T) {
	cases := loadOracle(t)
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	_, partial := findOracleDir() // alone, only the proto-* copy and our own cases load
	for name := range oraclePending {
		if _, ok := cases[name]; !ok && (partial == nil || strings.HasPrefix(name, "kind-")) {
			t.Errorf("pending case %s is not in the oracle: remove it from oraclePending", name)
		}
	}
	ran, passed := 0, 0
	for _, name := range names {
		c := cases[name]
		t.Run(name, func(t *testing.T) {
			if why := caseNeedsRoot(c); why != "" && os.Geteuid() != 0 {
				t.Skip(why)
			}
			if usesDpkg(c) {
				// The package type's own tests install packages too.
				testutil.MachineLock(t, "dpkg")
			}
			ran++
			why, diag := runOracleCase(t, c)
			if len(why) > 0 {
				if missing := missingTypes(c.Steps); len(missing) > 0 {
					why = append(why, fmt.Sprintf("the case uses types pippet does not have: %v", missing))
				}
			}
			reason, pending := oraclePending[name]
			switch {
			case pending && len(why) == 0:
				t.Errorf("pending case passes (%s): remove it from oraclePending", reason)
			case pending:
				t.Logf("pending (%s): %.300s", reason, strings.Join(why, "; "))
			case len(why) > 0:
				t.Errorf("%s\n%s", strings.Join(why, "; "), diag)
			default:
				passed++
			}
		})
	}
	t.Logf("%d of %d oracle cases ran, %d passed, %d pending", ran, len(cases), passed, len(oraclePending))
}

// caseNeedsRoot says why a case can only run as root ("" when it can run
// as anyone).
func caseNeedsRoot(c oracleCase) string {
	if len(c.Cleanup) > 0 {
		return "changes the machine (it has cleanup commands), which needs root"
	}
	for _, typ := range stepTypes(c.Steps) {
		if rootTypes[strings.ToLower(typ)] {
			return "a " + typ + " resource, which needs root"
		}
	}
	return needsRoot(c.Steps)
}

// usesDpkg tells a case that installs or removes packages.
func usesDpkg(c oracleCase) bool {
	for _, typ := range stepTypes(c.Steps) {
		if strings.EqualFold(typ, "package") {
			return true
		}
	}
	for _, cmd := range c.Cleanup {
		if strings.Contains(cmd, "dpkg") || strings.Contains(cmd, "apt") {
			return true
		}
	}
	return false
}

// stepTypes returns the type named by each step that names one.
func stepTypes(steps []string) []string {
	var types []string
	for _, s := range steps {
		var req protocol.Request
		typ := ""
		if err := protocol.DecodeLine([]byte(strings.ReplaceAll(s, "@ROOT@", "/r")), &req); err == nil {
			typ = req.Type
		} else if de := (*protocol.DecodeError)(nil); errors.As(err, &de) {
			typ = de.Type
		}
		if typ != "" {
			types = append(types, typ)
		}
	}
	return types
}

func missingTypes(steps []string) []string {
	var missing []string
	for _, typ := range stepTypes(steps) {
		if !deliberatelyUnknown[strings.ToLower(typ)] && !registered(typ) {
			missing = append(missing, typ)
		}
	}
	return missing
}

// oracleShell runs one case shell command as score does: /bin/sh, the
// scratch root as working directory and $ROOT, @ROOT@ in the command
// replaced by it; the whole process group is killed at the timeout.
func oracleShell(root, command string, timeout time.Duration) (stdout, stderr []byte, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", strings.ReplaceAll(command, "@ROOT@", root))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "ROOT="+root)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%q: %w", command, ctx.Err())
	}
	return o.Bytes(), e.Bytes(), err
}

// oracleCleanup runs a case's cleanup commands, errors ignored.
func oracleCleanup(root string, cmds []string) {
	for _, c := range cmds {
		oracleShell(root, c, time.Minute)
	}
}

// runOracleCase runs one case in a fresh scratch root and returns what
// differs from the recording (nothing: it passes) and the receiver's
// output to show when it does.
func runOracleCase(t *testing.T, c oracleCase) (why []string, diag string) {
	root := t.TempDir()
	// Registered after TempDir, so it runs before the tree is removed;
	// it runs whatever happened, a panic or a timeout included.
	t.Cleanup(func() { oracleCleanup(root, c.Cleanup) })
	oracleCleanup(root, c.Cleanup)
	for _, s := range c.Setup {
		if len(s) != 3 || s[0] == nil || s[1] == nil {
			return []string{fmt.Sprintf("malformed setup entry %v", s)}, ""
		}
		p := filepath.Join(root, *s[1])
		var err error
		switch *s[0] {
		case "dir":
			err = os.MkdirAll(p, 0o777)
		case "sh":
			var stderr []byte
			if s[2] == nil {
				err = errors.New("sh setup without a command")
				break
			}
			if _, stderr, err = oracleShell(root, *s[2], 2*time.Minute); err != nil {
				if len(stderr) > 300 {
					stderr = stderr[len(stderr)-300:]
				}
				err = fmt.Errorf("setup %q: %w: %s", *s[2], err, stderr)
			}
		default:
			content := ""
			if s[2] != nil {
				content = *s[2]
			}
			err = os.WriteFile(p, []byte(content), 0o666)
		}
		if err != nil {
			return []string{err.Error()}, ""
		}
	}
	lines := make([]string, len(c.Steps))
	for i, s := range c.Steps {
		lines[i] = strings.ReplaceAll(s, "@ROOT@", root)
	}
	out, stderr, err := runReceiverIn(root, strings.Join(lines, "\n")+"\n", time.Minute)
	diag = fmt.Sprintf("stdout:\n%s\nstderr:\n%s", out, stderr)
	if err != nil {
		why = append(why, err.Error())
	}
	var got []map[string]any
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "{") {
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(l), &obj); err != nil {
			got = append(got, map[string]any{"unparsable": fmt.Sprintf("%.200s", l)})
			continue
		}
		_, ready := obj["ready"]
		_, changed := obj["changed"]
		if ready && !changed {
			continue
		}
		got = append(got, obj)
	}
	if len(why) == 0 && len(got) != len(c.Results) {
		why = append(why, fmt.Sprintf("%d answer lines, expected %d", len(got), len(c.Results)))
	}
	for i := 0; i < len(got) && i < len(c.Results); i++ {
		want, have := c.Results[i], got[i]
		for _, k := range []string{"error", "failed", "changed"} {
			if want[k] != nil && want[k] != have[k] { // null: either is fine
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
	state, err := snapshot(root)
	if err != nil {
		return append(why, err.Error()), diag
	}
	for _, p := range c.Probe {
		o, _, _ := oracleShell(root, p, time.Minute)
		state = append(state, []any{"probe", p, decodeReplace(normalizeOracle(o, root))})
	}
	if len(why) == 0 {
		want := make([][]any, 0, len(c.State))
		for _, e := range c.State {
			var v []any
			if err := json.Unmarshal(e, &v); err != nil {
				return append(why, fmt.Sprintf("state entry %s: %v", e, err)), diag
			}
			want = append(want, v)
		}
		if !reflect.DeepEqual(state, want) {
			why = append(why, fmt.Sprintf("state %v, expected %v", state, want))
		}
	}
	return why, diag
}

// runReceiverIn pipes input to one receiver process working in dir (its
// state directory a temporary one) and returns its output; a receiver that
// does not finish in time is killed and reported.
func runReceiverIn(dir, input string, timeout time.Duration) (stdout, stderr string, err error) {
	state, err := os.MkdirTemp("", "pippet-oracle-state-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(state)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, receiverBin, "--state-dir", state)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(input)
	cmd.WaitDelay = 5 * time.Second
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	if ctx.Err() != nil {
		return o.String(), e.String(), fmt.Errorf("receiver did not finish in %v", timeout)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		err = nil // the answers tell; score does not look at the exit status
	}
	return o.String(), e.String(), err
}

// normalizeOracle is data as the oracle compares it: the scratch root
// spelled @ROOT@, and lines starting with "# HEADER:" (the time-stamped
// headers of Puppet's parsed files) dropped. Lines end as Python's
// bytes.splitlines ends them: at \n, \r\n or \r.
func normalizeOracle(data []byte, root string) []byte {
	data = bytes.ReplaceAll(data, []byte(root), []byte("@ROOT@"))
	out := make([]byte, 0, len(data))
	for len(data) > 0 {
		n := len(data)
		if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
			n = i + 1
			if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
				n++
			}
		}
		if line := data[:n]; !bytes.HasPrefix(line, []byte("# HEADER:")) {
			out = append(out, line...)
		}
		data = data[n:]
	}
	return out
}

// decodeReplace is Python's bytes.decode("utf-8", "replace"): each byte
// that is not part of valid UTF-8 becomes U+FFFD.
func decodeReplace(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var s strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		s.WriteRune(r) // RuneError for an invalid byte, n == 1
		b = b[n:]
	}
	return s.String()
}

// snapshot lists the tree under root as the score script's os.walk does:
// top-down, each directory's entries sorted by name, then its
// subdirectories in order; symbolic links not followed. Files are hashed
// as normalizeOracle leaves them.
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
				sum := sha256.Sum256(normalizeOracle(data, root))
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
	err := walk(root)
	return out, err
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

// TestOracleNormalize checks the comparison helpers against what score's
// Python does.
func TestOracleNormalize(t *testing.T) {
	root := "/tmp/x"
	for in, want := range map[string]string{
		"a /tmp/x/b\n":                       "a @ROOT@/b\n",
		"# HEADER: stamp\nkeep\n":            "keep\n",
		"k\r\n# HEADER: x\r\n# HEADER: y\rz": "k\r\nz",
		"# HEADER: last":                     "",
		" # HEADER: indented\n":              " # HEADER: indented\n",
		"":                                   "",
	} {
		require.Equal(t, want, string(normalizeOracle([]byte(in), root)), "%q", in)
	}
	require.Equal(t, "a\uFFFD\uFFFDb", decodeReplace([]byte("a\xff\xfeb")))
}
