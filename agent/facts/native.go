package facts

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/pippet/pippet/agent/facts/native"
)

// The custom fact files pippet knows (package native: a module's
// lib/facter file in a version whose content digest it lists) are
// resolved in Go, the others by Facter, only them: an edited, newer or
// unknown file goes to Ruby as before, and the known ones stay native.
// Both go on at once: a known fact waits for Ruby only when it asks
// (Facter.value) for a fact one of Facter's files may define (systemd's
// asks for service_provider: an edited stdlib's file defines it), so that
// it sees Facter's value, as in Facter; the others do not wait.

// gatherCustom resolves the custom facts of o.CustomDirs: core are the
// core and external facts gathered so far, ext the external ones,
// overrides the FACTER_ ones; coreNames are the names of the core facts
// (a custom fact of one of those names is a warning).
func gatherCustom(ctx context.Context, o Options, core, ext, overrides Facts, coreNames map[string]bool) (Facts, map[string]int64, []error) {
	custom, weights, defined, errs := resolveCustom(ctx, o, core, ext, overrides)
	return custom, weights, append(errs, coreNameWarnings(custom, weights, defined, coreNames)...)
}

// resolveCustom is gatherCustom but for the warnings about core fact
// names; defined says which file defined each fact, when known.
func resolveCustom(ctx context.Context, o Options, core, ext, overrides Facts) (Facts, map[string]int64, map[string]string, []error) {
	dirErrs := checkDirs(o.CustomDirs)
	files := customFiles(o.CustomDirs)
	if len(files) == 0 {
		return nil, nil, nil, dirErrs
	}
	nopts := native.Options{DefaultProvider: o.DefaultProvider, Puppet: o.Puppet, CommandTimeout: o.CommandTimeout, Path: envPath(o.Env)}
	// Those whose facts are all cached are not evaluated (cache.go).
	files, skipped := o.cache.uncached(files, o.NoNative, nopts)
	known, others := map[string]*native.File{}, files
	if !o.NoNative {
		known, others = native.Recognise(files, nopts)
	}
	if len(known) == 0 {
		// Only the uncached files when some were skipped (cache.go).
		custom, weights, defined, lerrs := loadCustom(ctx, o.CustomDirs, others, skipped, o.Evaluate, o.Ruby, o.CustomTimeout)
		return custom, weights, defined, append(dirErrs, lerrs...)
	}
	// Facter's files evaluated in the background; what they define is
	// read only once rubyDone is closed. Unless Facter, evaluating them,
	// would evaluate the known files too (loadsAll): then first, and the
	// known files whose facts it gave are not resolved again.
	var custom Facts
	var weights map[string]int64
	var defined map[string]string
	var lerrs []error
	rubyDone := make(chan struct{})
	scan := scanRuby(others)
	mayDefine := scan.mayDefine
	have := func(name string) bool {
		top, _, _ := strings.Cut(name, ".")
		if _, ok := core[top]; ok {
			return true
		}
		if _, ok := ext[top]; ok {
			return true
		}
		return mayDefine(name)
	}
	switch {
	case len(others) == 0:
		close(rubyDone)
	case scan.loadsAll(have):
		custom, weights, defined, lerrs = loadCustom(ctx, o.CustomDirs, others, true, o.Evaluate, o.Ruby, o.CustomTimeout)
		close(rubyDone)
		// A known file every fact of which Facter's evaluation gave
		// already is not resolved again: its commands (apt-get's) are
		// not run twice, and Facter's values are the ones Facter keeps.
		for p, f := range known {
			all := len(f.Facts) > 0
			for _, n := range f.Facts {
				if _, ok := custom[n]; !ok {
					all = false
					break
				}
			}
			if all {
				delete(known, p)
			}
		}
		if len(known) == 0 {
			return custom, weights, defined, append(dirErrs, lerrs...)
		}
	default:
		go func() {
			defer close(rubyDone)
			custom, weights, defined, lerrs = loadCustom(ctx, o.CustomDirs, others, true, o.Evaluate, o.Ruby, o.CustomTimeout)
		}()
	}
	nopts.Order = files
	nopts.Rival = func(name string) (native.Rival, bool) {
		if !mayDefine(name) {
			return native.Rival{}, false
		}
		<-rubyDone
		v, ok := custom[name]
		return native.Rival{V: v, Weight: weights[name], File: defined[name]}, ok
	}
	lookup := func(name string) (any, bool, bool) {
		if v, ok := overrides[name]; ok {
			return v, true, true
		}
		if mayDefine(name) {
			<-rubyDone
			if v, ok := ext[name]; ok {
				if w, isCustom := weights[name]; !isCustom || w <= externalFactWeight {
					return v, true, true
				}
			}
			if v, ok := custom[name]; ok {
				return v, false, true
			}
		} else if v, ok := ext[name]; ok {
			return v, true, true
		}
		v, ok := core[name]
		return v, false, ok
	}
	values, nerrs := native.Resolve(ctx, known, lookup, nopts)
	<-rubyDone
	errs := append(dirErrs, lerrs...)
	if custom == nil {
		custom, weights, defined = Facts{}, map[string]int64{}, map[string]string{}
	}
	for name, v := range values {
		if cv, dup := custom[name]; dup && (native.Rival{V: cv, Weight: weights[name], File: defined[name]}).Wins(v, files) {
			continue
		}
		custom[name] = v.V
		weights[name] = v.Weight
		defined[name] = v.File
	}
	return custom, weights, defined, append(errs, nerrs...)
}

// A CoreNameWarning is about a custom fact named like a core fact (a
// module defining os or kernel): Facter takes its value only when its
// resolution has weight, and says nothing; Gather does the same, with
// this warning.
type CoreNameWarning struct {
	Fact, File string
	Weight     int64
}

func (w *CoreNameWarning) Error() string {
	file := w.File
	if file == "" {
		file = "file unknown"
	}
	if w.Weight <= 0 {
		return fmt.Sprintf("custom fact %s (%s) is named like a core fact; its resolution has no weight, so the core value is kept, as Facter keeps it", w.Fact, file)
	}
	return fmt.Sprintf("custom fact %s (%s) is named like a core fact; its resolution has weight %d, so its value replaces the core fact's, as in Facter", w.Fact, file, w.Weight)
}

// IsWarning says whether err, one of Gather's errors, is a warning about
// the custom fact directories or names (the facts are gathered all the
// same, as Facter would): a *DirWarning, a *CoreNameWarning or a
// *CacheWarning.
func IsWarning(err error) bool {
	var dw *DirWarning
	var cw *CoreNameWarning
	var cache *CacheWarning
	return errors.As(err, &dw) || errors.As(err, &cw) || errors.As(err, &cache)
}

// coreNameWarnings are the warnings about the custom facts named like
// core facts, in the order of their names.
func coreNameWarnings(custom Facts, weights map[string]int64, defined map[string]string, coreNames map[string]bool) []error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(custom)) {
		if coreNames[name] {
			errs = append(errs, &CoreNameWarning{Fact: name, File: defined[name], Weight: weights[name]})
		}
	}
	return errs
}

// rubyScan is what the text of the Ruby fact files Facter evaluates
// tells, read once: which facts they may define (the literal names of
// their Facter.add calls, or anything when the text cannot tell:
// Kernel's load, eval, require_relative, a require of the module's own
// code, a computed name, a file that cannot be read) and which facts
// they ask for (Facter.value, Facter.fact).
type rubyScan struct {
	anything bool            // they may define any fact
	defines  map[string]bool // else these
	askedBy  bool            // a fact asked for by a name not written literally
	asks     []string
}

func scanRuby(files []string) rubyScan {
	s := rubyScan{defines: map[string]bool{}}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			s.anything, s.askedBy = true, true
			continue
		}
		if opaqueRuby.Match(b) {
			s.anything = true
		}
		for _, m := range rubyRequire.FindAllSubmatch(b, -1) {
			if !libraryRequire.Match(m[1]) {
				s.anything = true
			}
		}
		literal := literalFactAdd.FindAllSubmatch(b, -1)
		if len(literal) != len(factAdd.FindAllIndex(b, -1)) {
			s.anything = true
		}
		for _, m := range literal {
			s.defines[strings.ToLower(string(slices.Concat(m[1], m[2], m[3])))] = true
		}
		asks := literalFactAsk.FindAllSubmatch(b, -1)
		if len(asks) != len(factAsk.FindAllIndex(b, -1)) {
			s.askedBy = true
		}
		for _, m := range asks {
			s.asks = append(s.asks, strings.ToLower(string(slices.Concat(m[1], m[2], m[3]))))
		}
	}
	return s
}

// mayDefine says whether the files may define the fact name.
func (s rubyScan) mayDefine(name string) bool { return s.anything || s.defines[name] }

// loadsAll says whether Facter, evaluating the files, may load every
// fact file of its directories, the known ones too: it does when a fact
// asks (Facter.value, Facter.fact) for one it cannot find (ipaclient's
// ipa_facts.rb asks for ipa_server as it loads); have says which names
// it finds (core, external, the files' own). A name not written
// literally counts as not found.
func (s rubyScan) loadsAll(have func(name string) bool) bool {
	if s.askedBy {
		return true
	}
	for _, name := range s.asks {
		if !have(name) {
			return true
		}
	}
	return false
}

var (
	factAsk        = regexp.MustCompile(`Facter\.(?:value|fact)\b`)
	literalFactAsk = regexp.MustCompile(`Facter\.(?:value|fact)\s*\(?\s*(?::([A-Za-z_]\w*)|'([^'\\]*)'|"([^"\\#]*)")`)
	factAdd        = regexp.MustCompile(`Facter\.add\b`)
	literalFactAdd = regexp.MustCompile(`Facter\.add\s*\(?\s*(?::([A-Za-z_]\w*)|'([^'\\]*)'|"([^"\\#]*)")\s*[,)\s]`)
	// Kernel's require_relative, load and eval (not a method of an
	// object: Augeas' aug.load), or facts defined otherwise.
	opaqueRuby  = regexp.MustCompile(`(?m)(?:^|[^.\w:])(?:require_relative|load|eval)\b|\b(?:define_fact|instance_eval|class_eval|module_eval)\b`)
	rubyRequire = regexp.MustCompile(`\brequire\b\s*\(?\s*(\S*)`)
	// A library (json, open3, augeas) or Puppet's own code, quoted.
	libraryRequire = regexp.MustCompile(`^(?:'(?:[\w.-]+|puppet/[\w/.-]+)'|"(?:[\w.-]+|puppet/[\w/.-]+)")\)?$`)
)

// A DirWarning is about a custom fact directory Gather read all the
// same, or could not read: a warning, the run goes on.
type DirWarning struct {
	Dir, Problem string
}

func (w *DirWarning) Error() string { return "custom fact directory " + w.Dir + ": " + w.Problem }

// checkDirs says which of dirs is a symbolic link to elsewhere (its
// facts are read from there, as Facter reads them) or cannot be read
// (its facts are missing).
func checkDirs(dirs []string) []error {
	var errs []error
	for _, d := range dirs {
		fi, err := os.Lstat(d)
		if err != nil {
			continue // absent: nothing to say, as Facter
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			target, _ := filepath.EvalSymlinks(d)
			errs = append(errs, &DirWarning{Dir: d, Problem: "a symbolic link to " + target + "; its facts are read from there"})
		}
		if _, err := os.ReadDir(d); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, &DirWarning{Dir: d, Problem: fmt.Sprintf("cannot be read (%v); its facts are missing", err)})
		}
	}
	return errs
}

// NeedsFacter says whether Gather with o would have Facter evaluate
// custom facts: whether o.CustomDirs hold a fact file that is not
// resolved natively. No Ruby starts for the facts otherwise.
func NeedsFacter(o Options) bool { return len(FacterArgs(o)) > 0 }

// FacterArgs are what Gather with o hands an Evaluator (o.Evaluate):
// the custom fact directories that exist and, when some of their files
// are resolved natively, the files Facter is to evaluate; nil when
// Facter has nothing to evaluate.
func FacterArgs(o Options) []string {
	all := customFiles(o.CustomDirs)
	if len(all) == 0 {
		return nil
	}
	nopts := native.Options{DefaultProvider: o.DefaultProvider, Puppet: o.Puppet}
	files, _ := peekCache(o).uncached(all, o.NoNative, nopts)
	if len(files) == 0 {
		return nil
	}
	others := files
	if !o.NoNative {
		_, others = native.Recognise(files, nopts)
		if len(others) == 0 {
			return nil
		}
	}
	args := ExistingDirs(o.CustomDirs)
	if len(others) < len(all) {
		args = append(args, others...)
	}
	return args
}

// envPath is PATH in env (nil: the process's environment).
func envPath(env []string) string {
	for _, kv := range env {
		if len(kv) > 5 && kv[:5] == "PATH=" {
			return kv[5:]
		}
	}
	return ""
}
