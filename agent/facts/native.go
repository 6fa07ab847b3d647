package facts

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pippet/pippet/agent/facts/native"
)

// The custom fact files pippet knows (package native: a module's
// lib/facter file in a version whose content digest it lists) are
// resolved in Go, the others by Facter, only them: an edited, newer or
// unknown file goes to Ruby as before, and the known ones stay native.
// Facter evaluates its files first, so that a known fact asking for one
// of theirs (systemd's asks for service_provider) sees their value.

// gatherCustom resolves the custom facts of o.CustomDirs: core are the
// core and external facts gathered so far, ext the external ones,
// overrides the FACTER_ ones.
func gatherCustom(ctx context.Context, o Options, core, ext, overrides Facts) (Facts, map[string]int64, []error) {
	dirErrs := checkDirs(o.CustomDirs)
	files := customFiles(o.CustomDirs)
	if len(files) == 0 {
		return nil, nil, dirErrs
	}
	nopts := native.Options{DefaultProvider: o.DefaultProvider, Puppet: o.Puppet, CommandTimeout: o.CommandTimeout, Path: envPath(o.Env)}
	known, others := map[string]*native.File{}, files
	if !o.NoNative {
		known, others = native.Recognise(files, nopts)
	}
	var custom Facts
	var weights map[string]int64
	errs := dirErrs
	if len(others) > 0 {
		var lerrs []error
		custom, weights, lerrs = loadCustom(ctx, o.CustomDirs, others, len(known) > 0, o.Evaluate, o.Ruby, o.CustomTimeout)
		errs = append(errs, lerrs...)
	}
	if len(known) == 0 {
		return custom, weights, errs
	}
	if custom == nil {
		custom, weights = Facts{}, map[string]int64{}
	}
	// A known file every fact of which Facter's evaluation gave already
	// (Facter loads every file of the directory when a fact asks for one
	// it cannot find: ipaclient's do) is not resolved again: Facter's
	// values win over the known files' anyway, and its commands
	// (apt-get's) are not run twice.
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
		return custom, weights, errs
	}
	lookup := func(name string) (any, bool, bool) {
		if v, ok := overrides[name]; ok {
			return v, true, true
		}
		if v, ok := ext[name]; ok {
			if w, isCustom := weights[name]; !isCustom || w <= externalFactWeight {
				return v, true, true
			}
		}
		if v, ok := custom[name]; ok {
			return v, false, true
		}
		v, ok := core[name]
		return v, false, ok
	}
	values, nerrs := native.Resolve(ctx, known, lookup, nopts)
	for name, v := range values {
		if _, dup := custom[name]; dup {
			continue
		}
		custom[name] = v.V
		weights[name] = v.Weight
	}
	return custom, weights, append(errs, nerrs...)
}

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
	files := customFiles(o.CustomDirs)
	if len(files) == 0 {
		return nil
	}
	others := files
	if !o.NoNative {
		_, others = native.Recognise(files, native.Options{DefaultProvider: o.DefaultProvider, Puppet: o.Puppet})
		if len(others) == 0 {
			return nil
		}
	}
	args := ExistingDirs(o.CustomDirs)
	if len(others) < len(files) {
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
