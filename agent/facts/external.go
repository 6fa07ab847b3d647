package facts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/goccy/go-json"
	"gopkg.in/yaml.v3"
)

// Defaults for executable external facts.
const (
	DefaultScriptTimeout = 10 * time.Second
	DefaultMaxOutput     = 1 << 20
	maxFileSize          = 4 << 20 // a facts file larger than this is refused
)

// LoadExternal reads the external facts in dirs (in order; a later
// directory's fact wins, and within a directory files are read in name
// order): name.txt (key=value lines), name.json and name.yaml/.yml
// (a mapping), and executable files, run with no arguments, whose output
// is key=value lines or a JSON or YAML mapping. Fact names are lowercased,
// as Facter does. A missing directory is not an error; every bad file is
// one error naming it, and the other files still count.
func LoadExternal(ctx context.Context, dirs []string, timeout time.Duration, maxOutput int) (Facts, []error) {
	return loadExternal(ctx, dirs, timeout, maxOutput, nil)
}

// extHook is the fact cache's part in loadExternal (cache.go): cached
// answers a file's facts without reading or running it, loaded hears
// of the facts of a file read.
type extHook struct {
	cached func(path string) (Facts, bool)
	loaded func(path string, f Facts)
}

// loadExternal is LoadExternal with the fact cache's hook (nil: none).
func loadExternal(ctx context.Context, dirs []string, timeout time.Duration, maxOutput int, hook *extHook) (Facts, []error) {
	if timeout <= 0 {
		timeout = DefaultScriptTimeout
	}
	if maxOutput <= 0 {
		maxOutput = DefaultMaxOutput
	}
	out := Facts{}
	var errs []error
	for _, dir := range dirs {
		ents, err := os.ReadDir(dir)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, fmt.Errorf("external facts %s: %w", dir, err))
			}
			continue
		}
		names := make([]string, 0, len(ents))
		for _, e := range ents {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		for _, name := range names {
			p := filepath.Join(dir, name)
			st, err := os.Stat(p)
			if err != nil || !st.Mode().IsRegular() {
				continue
			}
			var f Facts
			ext := strings.ToLower(filepath.Ext(name))
			cached := false
			if hook != nil {
				f, cached = hook.cached(p)
			}
			switch {
			case cached:
			case st.Mode()&0o111 != 0:
				f, err = runScript(ctx, p, timeout, maxOutput)
			case ext == ".txt" || ext == ".json" || ext == ".yaml" || ext == ".yml":
				if st.Size() > maxFileSize {
					err = fmt.Errorf("larger than %d bytes", maxFileSize)
					break
				}
				var b []byte
				if b, err = os.ReadFile(p); err == nil {
					f, err = ParseExternal(ext, b)
				}
			default:
				continue // Facter ignores other files (README, .bak, ...)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("external fact %s: %w", p, err))
				continue
			}
			if hook != nil && !cached {
				hook.loaded(p, f)
			}
			for k, v := range f {
				out[k] = v
			}
		}
	}
	return out, errs
}

// ParseExternal parses an external facts file's content by its extension
// (".txt", ".json", ".yaml"/".yml"); "" means a script's output, which
// may be any of the three (a mapping if it starts with '{' or '---',
// key=value lines otherwise).
func ParseExternal(ext string, b []byte) (Facts, error) {
	if !utf8.Valid(b) {
		return nil, errors.New("not valid UTF-8")
	}
	if ext == "" {
		t := strings.TrimSpace(string(b))
		switch {
		case strings.HasPrefix(t, "{"):
			ext = ".json"
		case strings.HasPrefix(t, "---"):
			ext = ".yaml"
		default:
			ext = ".txt"
		}
	}
	f := Facts{}
	switch ext {
	case ".txt":
		for i, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || line[0] == '#' {
				continue
			}
			k, v, ok := strings.Cut(line, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, fmt.Errorf("line %d: %q is not key=value", i+1, truncate(line))
			}
			f[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
		}
		return f, nil
	case ".json":
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("JSON: %w", err)
		}
		for k, v := range m {
			f[strings.ToLower(k)] = v
		}
		return f, nil
	case ".yaml", ".yml":
		var m map[string]any
		if err := yaml.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("YAML: %w", err)
		}
		for k, v := range m {
			f[strings.ToLower(k)] = normalizeYAML(v)
		}
		return f, nil
	}
	return nil, fmt.Errorf("unknown external fact format %q", ext)
}

// normalizeYAML turns yaml.v3's map[any]any-free output into JSON-able
// values (ints stay ints; nested maps keep string keys).
func normalizeYAML(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = normalizeYAML(e)
		}
		return t
	case map[any]any:
		m := map[string]any{}
		for k, e := range t {
			m[fmt.Sprint(k)] = normalizeYAML(e)
		}
		return m
	case []any:
		for i, e := range t {
			t[i] = normalizeYAML(e)
		}
		return t
	case int:
		return int64(t)
	}
	return v
}

func truncate(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// runScript runs an executable external fact with no arguments, in its
// directory, and parses its output.
func runScript(ctx context.Context, path string, timeout time.Duration, max int) (Facts, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	out, err := runBounded(ctx, filepath.Dir(abs), timeout, max, abs)
	if err != nil {
		return nil, err
	}
	return ParseExternal("", out)
}

// runBounded runs argv in dir in its own process group, killing the
// group when it outlives timeout or prints more than max bytes, and once
// it exits (what it left running in the background would otherwise hold
// its output open); stderr is kept, bounded, for the error. It returns
// what the command printed on stdout.
func runBounded(ctx context.Context, dir string, timeout time.Duration, max int, argv ...string) ([]byte, error) {
	parent, start := ctx, time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	killGroup := func() {
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}
	cmd.Cancel = func() error { killGroup(); return nil }
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, err
	}
	var (
		out, stderr []byte
		over        bool
		wg          sync.WaitGroup
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		out, _ = io.ReadAll(io.LimitReader(outR, int64(max)+1))
		if len(out) > max {
			over = true
			killGroup()
		}
	}()
	go func() {
		defer wg.Done()
		stderr, _ = io.ReadAll(io.LimitReader(errR, 4096))
		_, _ = io.Copy(io.Discard, errR)
	}()
	werr := cmd.Wait()
	killGroup() // what it left running in the background
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Second): // a descendant that left the group holds the pipes
		outR.Close()
		errR.Close()
		<-done
	}
	outR.Close()
	errR.Close()
	switch {
	case over:
		return nil, fmt.Errorf("printed more than %d bytes; killed", max)
	case parent.Err() != nil:
		// The caller's end (the agent's runtimeout, a signal) came first:
		// say when and why, not the bound that was not reached.
		took := time.Since(start)
		if took >= time.Second {
			took = took.Round(100 * time.Millisecond)
		} else {
			took = took.Round(time.Millisecond)
		}
		return nil, fmt.Errorf("killed after %s: %w", took, context.Cause(parent))
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("still running after %s; killed", timeout)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case werr != nil:
		if msg := strings.TrimSpace(string(stderr)); msg != "" {
			return nil, &exitError{err: werr, stderr: msg}
		}
		return nil, werr
	}
	return out, nil
}

// exitError is a command that failed, with the start of its stderr.
type exitError struct {
	err    error
	stderr string
}

func (e *exitError) Error() string { return e.err.Error() + ": " + truncate(e.stderr) }
func (e *exitError) Unwrap() error { return e.err }
