// Command record runs real Puppet over case files (see package
// puppetcase) and writes what it did back into them:
//
//	go run ./applier/typetest/puppetcase/record applier/types/file_line/testdata/puppet_cases.json ...
//
// It needs Puppet 7 and the Debian module packages (stdlib, concat,
// inifile under /usr/share/puppet/modules) and runs Puppet with Debian's
// root PATH. Cases are applied together in one `puppet apply` per file
// (each has its own file and resources), except Solo ones (they fail the
// catalog), which get a run each. Facts are read once and given to every
// run from a yaml facts cache (a run then takes seconds, not tens).
// With -only NAME, only the cases whose name contains NAME are recorded.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/pippet/pippet/applier/typetest/puppetcase"
	"github.com/pippet/pippet/internal/dsl"
)

const debianPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

var only = flag.String("only", "", "record only the cases whose name contains this")

func main() {
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: record [-only NAME] CASEFILE...")
		os.Exit(2)
	}
	vardir, err := factsCache()
	if err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		os.Exit(1)
	}
	for _, f := range flag.Args() {
		if err := recordFile(f, vardir); err != nil {
			fmt.Fprintln(os.Stderr, "record:", f+":", err)
			os.Exit(1)
		}
	}
}

func puppet(args ...string) *exec.Cmd {
	cmd := exec.Command("puppet", args...)
	cmd.Env = append(os.Environ(), "PATH="+debianPath)
	return cmd
}

// factsCache makes a vardir whose yaml facts terminus answers this
// host's facts, read once.
func factsCache() (string, error) {
	dir := filepath.Join(os.TempDir(), "pippet-puppetcase-vardir")
	out, err := puppet("config", "print", "certname").Output()
	if err != nil {
		return "", fmt.Errorf("puppet config print certname: %w", err)
	}
	cert := strings.TrimSpace(string(out))
	facts := filepath.Join(dir, "yaml", "facts", cert+".yaml")
	if _, err := os.Stat(facts); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(facts), 0o755); err != nil {
		return "", err
	}
	out, err = puppet("facts", "find", "--render-as", "yaml").Output()
	if err != nil {
		return "", fmt.Errorf("puppet facts find: %w", err)
	}
	return dir, os.WriteFile(facts, out, 0o644)
}

func recordFile(path, vardir string) error {
	cases, err := puppetcase.Load(path)
	if err != nil {
		return err
	}
	var batch []*puppetcase.Case
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.Name] {
			return fmt.Errorf("case %q twice", c.Name)
		}
		seen[c.Name] = true
		if *only != "" && !strings.Contains(c.Name, *only) {
			continue
		}
		if c.Solo {
			if err := run([]*puppetcase.Case{c}, vardir); err != nil {
				return err
			}
			continue
		}
		batch = append(batch, c)
	}
	if len(batch) > 0 {
		if err := run(batch, vardir); err != nil {
			return err
		}
	}
	return puppetcase.Save(path, cases)
}

// run applies the cases in one puppet apply and records each outcome.
func run(cases []*puppetcase.Case, vardir string) error {
	dir, err := os.MkdirTemp("", "puppetcase-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var m strings.Builder
	for _, c := range cases {
		cdir := filepath.Join(dir, c.Name)
		if err := os.Mkdir(cdir, 0o755); err != nil {
			return err
		}
		file := filepath.Join(cdir, "target")
		if c.Before != nil {
			mode := os.FileMode(0o644)
			if c.Mode != "" {
				n, err := strconv.ParseUint(c.Mode, 8, 32)
				if err != nil {
					return fmt.Errorf("case %s: mode: %w", c.Name, err)
				}
				mode = os.FileMode(n)
			}
			if err := os.WriteFile(file, []byte(*c.Before), mode); err != nil {
				return err
			}
			if err := os.Chmod(file, mode); err != nil {
				return err
			}
		}
		for name, content := range c.Extra {
			if err := os.WriteFile(filepath.Join(cdir, name), []byte(content), 0o644); err != nil {
				return err
			}
		}
		for _, r := range c.Resources {
			params := r.ParamsIn(file, cdir) // whole numbers as integers
			fmt.Fprintf(&m, "%s { %s:\n", r.Type, dsl.Value(puppetcase.Expand(r.Title, file, cdir)))
			keys := make([]string, 0, len(r.Params))
			for k := range r.Params {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(&m, "  %s => %s,\n", k, dsl.Value(params[k]))
			}
			m.WriteString("}\n")
		}
		if c.Refresh {
			fmt.Fprintf(&m, "notify { %s: } ~> %s\n", dsl.String(c.Name+"-refresh"), puppetcase.Expand(c.Resources[0].Ref(), file, cdir))
		}
	}
	manifest := filepath.Join(dir, "site.pp")
	if err := os.WriteFile(manifest, []byte(m.String()), 0o644); err != nil {
		return err
	}
	logf := filepath.Join(dir, "log.json")
	cmd := puppet("apply", "--vardir", vardir, "--facts_terminus", "yaml", "--logdest", logf,
		"--detailed-exitcodes", "--modulepath", "/usr/share/puppet/modules", manifest)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return fmt.Errorf("puppet apply: %w: %s", err, out)
	}
	b, err := os.ReadFile(logf)
	if err != nil {
		return fmt.Errorf("puppet apply left no log (%w): %s", err, out)
	}
	// Puppet leaves its JSON log's array unclosed.
	b = bytes.TrimRight(bytes.TrimSpace(b), ",")
	if !bytes.HasSuffix(b, []byte("]")) {
		b = append(b, ']')
	}
	var log []puppetcase.Entry
	if err := json.Unmarshal(b, &log); err != nil {
		return fmt.Errorf("puppet's log: %w", err)
	}
	if len(cases) > 1 {
		for _, e := range log {
			if e.Level == "err" && e.Source == "Puppet" && (strings.HasPrefix(e.Message, "Failed to apply catalog") ||
				strings.Contains(e.Message, "Evaluation Error") || strings.Contains(e.Message, "Could not parse")) {
				return fmt.Errorf("the run of %d cases failed as a whole (make the case that fails it solo): %s", len(cases), e.Message)
			}
		}
	}
	for _, c := range cases {
		cdir := filepath.Join(dir, c.Name)
		file := filepath.Join(cdir, "target")
		c.Recorded, c.Log, c.Changed, c.Failed, c.After, c.ModeAfter = true, nil, false, false, nil, ""
		if b, err := os.ReadFile(file); err == nil {
			s := string(b)
			c.After = &s
			if fi, err := os.Stat(file); err == nil {
				c.ModeAfter = fmt.Sprintf("%04o", fi.Mode().Perm())
			}
		}
		refs := make([]string, len(c.Resources))
		for i, r := range c.Resources {
			refs[i] = "/" + r.Ref()
		}
		// A concat_file's target is the File Puppet generates for it.
		generated := "/File[@FILE@]"
		if c.Resources[0].Type == "concat_file" {
			refs = append(refs, generated)
		}
		for _, e := range log {
			e.Message = strings.ReplaceAll(strings.ReplaceAll(e.Message, file, "@FILE@"), cdir, "@DIR@")
			e.Source = strings.ReplaceAll(strings.ReplaceAll(e.Source, file, "@FILE@"), cdir, "@DIR@")
			mine := false
			for _, ref := range refs {
				mine = mine || strings.Contains(e.Source, ref)
			}
			if c.Solo && (e.Source == "Puppet" || mine) && !strings.HasPrefix(e.Message, "Compiled catalog") &&
				!strings.HasPrefix(e.Message, "Applied catalog") && !strings.HasPrefix(e.Message, "Facter:") {
				mine = true
			}
			if !mine {
				continue
			}
			c.Log = append(c.Log, puppetcase.Entry{Level: e.Level, Source: e.Source, Message: e.Message})
			if e.Level == "err" {
				c.Failed = true
			}
			if e.Level == "notice" && (strings.Contains(e.Source, refs[0]+"/") || strings.Contains(e.Source, generated+"/") && c.Resources[0].Type == "concat_file") {
				c.Changed = true
			}
		}
	}
	return nil
}
