package engine

import (
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/protocol"
)

// provInfo is what the engine caches per provider: the verdict of the
// checks that cannot change while the process runs (facts, features) and
// how well its Defaults match the facts.
type provInfo struct {
	static string // "" when facts and features allow it, else what is missing
	score  int    // number of matching Defaults entries; 0: not a default here
}

func (e *Engine) info(p *applier.ProviderSpec) *provInfo {
	if v, ok := e.prov.Load(p); ok {
		return v.(*provInfo)
	}
	pi := &provInfo{static: staticConfine(&p.Confine, e.env), score: defaultScore(p.Defaults, e.env)}
	e.prov.Store(p, pi)
	return pi
}

// staticConfine checks facts and features.
func staticConfine(c *applier.Confine, env *applier.Env) string {
	for fact, want := range c.Facts {
		have := env.Facts[fact]
		if !anyFold(want, have) {
			if have == "" {
				return fmt.Sprintf("fact '%s' is unset, not %s", fact, strings.Join(want, " or "))
			}
			return fmt.Sprintf("fact '%s' is '%s', not %s", fact, have, strings.Join(want, " or "))
		}
	}
	for _, f := range c.Features {
		if !env.Features[f] {
			return fmt.Sprintf("feature '%s' missing", f)
		}
	}
	return ""
}

// dynamicConfine checks what may change while the process runs: commands
// on PATH, files, and the provider's own function.
func dynamicConfine(c *applier.Confine, env *applier.Env) string {
	for _, cmd := range c.Commands {
		if !commandFound(cmd) {
			return fmt.Sprintf("command '%s' not found", cmd)
		}
	}
	for _, f := range c.Files {
		if _, err := os.Stat(f); err != nil {
			return fmt.Sprintf("file '%s' not found", f)
		}
	}
	if c.Func != nil {
		return c.Func(env)
	}
	return ""
}

// found is where a command was last found on PATH, and what it was.
type found struct {
	envPath, path string
	dev, ino      uint64
}

// foundCommands caches commandFound's lookups by command name.
var foundCommands sync.Map // string -> *found

// commandFound is exec.LookPath for a confine, cached: while PATH is
// unchanged and the file found last time is still that file (device and
// inode) and executable, it is found with one stat instead of a search of
// every PATH directory (a service request's confine named two commands:
// a dozen stats). Only whether some such command exists matters here; the
// command runner looks it up again when it runs it.
func commandFound(cmd string) bool {
	envPath := os.Getenv("PATH")
	if v, ok := foundCommands.Load(cmd); ok {
		f := v.(*found)
		var st syscall.Stat_t
		if f.envPath == envPath && syscall.Stat(f.path, &st) == nil &&
			uint64(st.Dev) == f.dev && st.Ino == f.ino && st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Mode&0o111 != 0 {
			return true
		}
		foundCommands.Delete(cmd)
	}
	p, err := exec.LookPath(cmd)
	if err != nil {
		return false
	}
	var st syscall.Stat_t
	if syscall.Stat(p, &st) == nil {
		foundCommands.Store(cmd, &found{envPath: envPath, path: p, dev: uint64(st.Dev), ino: st.Ino})
	}
	return true
}

// Suitable reports whether the provider can work here: "" when it can,
// else what is missing.
func (e *Engine) Suitable(p *applier.ProviderSpec) string {
	if s := e.info(p).static; s != "" {
		return s
	}
	return dynamicConfine(&p.Confine, e.env)
}

func defaultScore(d map[string][]string, env *applier.Env) int {
	if len(d) == 0 {
		return 0
	}
	for k, want := range d {
		if k == "feature" {
			ok := false
			for _, f := range want {
				ok = ok || env.Features[f]
			}
			if !ok {
				return 0
			}
			continue
		}
		if !anyFold(want, env.Facts[k]) {
			return 0
		}
	}
	return len(d)
}

func anyFold(want []string, have string) bool {
	for _, w := range want {
		if strings.EqualFold(w, have) {
			return true
		}
	}
	return false
}

// SelectProvider picks r's provider: the one the `provider` parameter
// names (which must be suitable), else among the suitable ones the one
// whose Defaults match the facts best, else the first suitable one.
func (e *Engine) SelectProvider(r *applier.Resource) (*applier.ProviderSpec, error) {
	t := r.Type
	if len(t.Providers) == 0 {
		return nil, fmt.Errorf("type %s has no providers", t.Name)
	}
	if !r.Declares("provider") {
		// The type's one built-in implementation (notify).
		return t.Providers[0], nil
	}
	if name, ok := r.Value("provider").(string); ok && r.Given("provider") {
		var p *applier.ProviderSpec
		for _, q := range t.Providers {
			if q.Name == name {
				p = q
			}
		}
		if p == nil {
			return nil, &applier.ParamError{Resource: r.Ref(), Param: "provider", Err: fmt.Errorf("Invalid %s provider '%s'", t.Name, name)}
		}
		if why := e.Suitable(p); why != "" {
			return nil, &applier.ParamError{Resource: r.Ref(), Param: "provider", Err: fmt.Errorf("provider %s is not functional on this host: %s", name, why)}
		}
		return p, nil
	}
	// The statically suitable providers, best default first: the first of
	// them whose commands and files are present wins, so the common case
	// checks one provider's dynamic confines, not every provider's.
	for _, p := range e.preference(t) {
		if dynamicConfine(&p.Confine, e.env) == "" {
			return p, nil
		}
	}
	var reasons []string
	for _, p := range t.Providers {
		if why := e.Suitable(p); why != "" {
			if len(t.Providers) > 1 {
				why = p.Name + ": " + why
			}
			reasons = append(reasons, why)
		}
	}
	return nil, fmt.Errorf("no suitable provider for %s: %s", protocol.RefType(t.Name), strings.Join(reasons, "; "))
}

// preference lists t's providers that facts and features allow, the one
// whose Defaults match the facts best first, ties in declaration order.
// Neither facts nor features change while the process runs, so the list
// is made once per type.
func (e *Engine) preference(t *applier.Type) []*applier.ProviderSpec {
	if v, ok := e.order.Load(t); ok {
		return v.([]*applier.ProviderSpec)
	}
	var list []*applier.ProviderSpec
	for _, p := range t.Providers {
		if e.info(p).static == "" {
			list = append(list, p)
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return e.info(list[i]).score > e.info(list[j]).score })
	e.order.Store(t, list)
	return list
}

// DefaultProvider is the provider a resource of type typ gets when it
// names none: Puppet's default provider for the type here (stdlib's
// package_provider and service_provider facts ask Puppet for it).
func (e *Engine) DefaultProvider(typ string) (string, error) {
	t, ok := e.reg.Lookup(typ)
	if !ok {
		return "", fmt.Errorf("unknown type %s", typ)
	}
	r, err := t.NewResource("dummy", nil, false)
	if err != nil {
		return "", fmt.Errorf("%s: %w", typ, err)
	}
	p, err := e.SelectProvider(r)
	if err != nil {
		return "", err
	}
	return p.Name, nil
}
