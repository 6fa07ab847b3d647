package docs_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
)

// receiverBin is the receiver built once for the examples.
var receiverBin string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "pippet-docs-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "docs:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if receiverBin, err = testutil.BuildReceiver(dir); err != nil {
		fmt.Fprintln(os.Stderr, "docs: building the receiver:", err)
		return 1
	}
	return m.Run()
}

// block is one fenced code block of a page.
type block struct {
	page   string
	line   int    // of the opening fence
	info   string // the fence's info string: json, sh, ...
	indent string // the fence's indentation, taken off every line
	tested bool   // preceded by <!-- doc-test --> (shell blocks)
	text   string
}

func blocks(t *testing.T, page string) []block {
	t.Helper()
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	var out []block
	var cur *block
	prev := ""
	for i, l := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(l)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			cur = &block{page: page, line: i + 1, info: strings.TrimPrefix(trimmed, "```"), tested: prev == "<!-- doc-test -->",
				indent: l[:len(l)-len(strings.TrimLeft(l, " "))]}
		case cur != nil && trimmed == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += strings.TrimPrefix(l, cur.indent) + "\n"
		}
		if trimmed != "" {
			prev = trimmed
		}
	}
	return out
}

// asRoot marks a transcript that only root can run (it reads or changes
// what only root may).
const asRoot = "# as root"

// Every ```json block of the documentation is a transcript: request lines,
// each followed by the answer the receiver gives it (lines with a
// "resource" member), and # comments. Each is piped through the built
// receiver in a scratch directory that stands for /tmp (every /tmp/ of
// the block is rewritten to it, in requests and answers), and each answer
// must match the one shown: every member shown is equal, where a string
// "..." stands for any value, a string ending in "..." for any string
// with that beginning, and a list ending in "..." for any list with those
// first elements; members not shown are not compared.
func TestTranscripts(t *testing.T) {
	n := 0
	for _, page := range pages(t) {
		for _, bl := range blocks(t, page) {
			if bl.info != "json" {
				continue
			}
			n++
			name := strings.TrimPrefix(bl.page, root+"/") + ":" + fmt.Sprint(bl.line)
			t.Run(name, func(t *testing.T) {
				if strings.Contains(bl.text, asRoot+"\n") && os.Geteuid() != 0 {
					t.Skip("the example runs as root")
				}
				runTranscript(t, bl.text)
			})
		}
	}
	assert.GreaterOrEqual(t, n, 15, "transcripts run")
}

func runTranscript(t *testing.T, text string) {
	scratch := t.TempDir()
	text = strings.ReplaceAll(text, "/tmp/", scratch+"/")
	var requests []string
	expected := map[int]map[string]any{} // by request index
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		var obj map[string]any
		l = strings.ReplaceAll(l, "[...]", `["..."]`) // any list
		if strings.HasPrefix(l, "{") {
			require.NoError(t, json.Unmarshal([]byte(l), &obj), "a line of the example is not JSON: %s", l)
		}
		if _, isAnswer := obj["resource"]; isAnswer || obj["failed"] != nil && obj["type"] == nil {
			require.NotEmpty(t, requests, "an answer before any request: %s", l)
			expected[len(requests)-1] = obj
			continue
		}
		requests = append(requests, l)
	}
	require.NotEmpty(t, requests)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, receiverBin, "--no-banner", "--state-dir", filepath.Join(scratch, ".state"), "--fallback", "none")
	cmd.Dir = scratch
	cmd.Stdin = strings.NewReader(strings.Join(requests, "\n") + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())

	var answers []map[string]any
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var a map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &a), sc.Text())
		answers = append(answers, a)
	}
	require.Len(t, answers, len(requests), "one answer per request; stderr: %s", stderr.String())
	for i, req := range requests {
		want, ok := expected[i]
		if !ok {
			assert.NotEqual(t, true, answers[i]["error"], "request %s: %v", req, answers[i])
			continue
		}
		if msg := match("", want, answers[i]); msg != "" {
			got, _ := json.Marshal(answers[i])
			t.Errorf("request %s\nanswer %s\n%s", req, got, msg)
		}
	}
}

// match says how got differs from want ("" when it matches), as the
// transcripts compare.
func match(path string, want, got any) string {
	switch w := want.(type) {
	case string:
		if w == "..." {
			return ""
		}
		if g, ok := got.(string); ok && strings.HasSuffix(w, "...") && strings.HasPrefix(g, strings.TrimSuffix(w, "...")) {
			return ""
		}
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			break
		}
		for k, v := range w {
			gv, present := g[k]
			if !present {
				return fmt.Sprintf("%s.%s: missing", path, k)
			}
			if msg := match(path+"."+k, v, gv); msg != "" {
				return msg
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok {
			break
		}
		open := len(w) > 0 && w[len(w)-1] == "..."
		if open {
			w = w[:len(w)-1]
		}
		if len(g) < len(w) || !open && len(g) != len(w) {
			return fmt.Sprintf("%s: %d elements, want %d", path, len(g), len(w))
		}
		for i := range w {
			if msg := match(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); msg != "" {
				return msg
			}
		}
		return ""
	}
	if !reflect.DeepEqual(want, got) {
		return fmt.Sprintf("%s: got %v, want %v", path, got, want)
	}
	return ""
}

func TestMatch(t *testing.T) {
	got := map[string]any{"a": "xyz", "b": []any{1.0, 2.0}, "c": map[string]any{"d": true, "e": "f"}}
	for want, ok := range map[string]bool{
		`{"a":"xyz"}`:                         true,
		`{"a":"..."}`:                         true,
		`{"a":"xy..."}`:                       true,
		`{"a":"xz..."}`:                       false,
		`{"b":[1,"..."]}`:                     true,
		`{"b":[1]}`:                           false,
		`{"b":[1,2,3,"..."]}`:                 false,
		`{"c":{"d":true}}`:                    true,
		`{"c":{"d":false}}`:                   false,
		`{"z":"..."}`:                         false,
		`{"a":"xyz","c":{"e":"f"},"b":[1,2]}`: true,
	} {
		var w map[string]any
		require.NoError(t, json.Unmarshal([]byte(want), &w))
		assert.Equal(t, ok, match("", w, got) == "", want)
	}
}

// The shell blocks marked <!-- doc-test --> (the README's quick start) run
// as written, in order, in one bash with -e: bin/receiver is the built
// receiver, in a scratch directory that is also $HOME and $TMPDIR.
func TestShellExamples(t *testing.T) {
	n := 0
	for _, page := range pages(t) {
		var script strings.Builder
		for _, bl := range blocks(t, page) {
			if bl.tested {
				require.Equal(t, "sh", bl.info, "%s:%d: <!-- doc-test --> marks a sh block", bl.page, bl.line)
				script.WriteString(bl.text)
				n++
			}
		}
		if script.Len() == 0 {
			continue
		}
		t.Run(strings.TrimPrefix(page, root+"/"), func(t *testing.T) {
			scratch := t.TempDir()
			require.NoError(t, os.Mkdir(filepath.Join(scratch, "bin"), 0o755))
			require.NoError(t, os.Symlink(receiverBin, filepath.Join(scratch, "bin", "receiver")))
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", script.String())
			cmd.Dir = scratch
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + scratch, "TMPDIR=" + scratch, "XDG_STATE_HOME=" + scratch}
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s\n%s", script.String(), out)
			assert.NotContains(t, string(out), `"failed":true`)
			assert.NotContains(t, string(out), "Error:")
		})
	}
	assert.GreaterOrEqual(t, n, 2, "shell blocks run")
}

// The protocol page names every subcommand `receiver --help` lists.
func TestSubcommandsDocumented(t *testing.T) {
	out, err := exec.Command(receiverBin, "--help").CombinedOutput()
	require.NoError(t, err)
	var list string
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 3 && f[0] == "receiver" && f[1] == "SUBCOMMAND" {
			list = strings.Join(f[3:], " ")
		}
	}
	require.NotEmpty(t, list, "receiver --help has a line `receiver SUBCOMMAND [args] NAMES`:\n%s", out)
	b, err := os.ReadFile(filepath.Join(root, "docs", "protocol.md"))
	require.NoError(t, err)
	page := string(b)
	start := strings.Index(page, "Subcommands are dispatched")
	require.GreaterOrEqual(t, start, 0)
	para, _, _ := strings.Cut(page[start:], "\n\n")
	para = strings.Join(strings.Fields(para), " ")
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		assert.Contains(t, para, "`receiver "+name+"`", "docs/protocol.md's subcommand paragraph names %s", name)
	}
}
