package native

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultCommandTimeout bounds each command a native fact runs. Facter's
// own bound is 300 s; an agent's run should not wait that long for a
// version string.
const DefaultCommandTimeout = 30 * time.Second

// DefaultMaxOutput bounds what a native fact's command may print.
const DefaultMaxOutput = 4 << 20

// A Value is one custom fact as a file resolves it: its value (nil:
// absent, as Facter leaves out a fact whose value is nil) and the weight
// of the resolution that gave it (Facter's has_weight, else the number
// of its confines), which decides against an external fact of the same
// name.
type Value struct {
	V      any
	Weight int64
	// File is the fact file that defined it (Resolve sets it).
	File string
}

// A File is one fact file pippet knows: a module's lib/facter file, in
// the versions whose content digests it lists. Its facts are resolved by
// resolve as Facter resolves the Ruby, same values, same kinds.
type File struct {
	// Module and Name say where the file comes from: NAME in the
	// module's lib/facter.
	Module, Name string
	// Digests are the sha256 digests (hex) of the versions known.
	Digests []string
	// Facts are the facts the file may define.
	Facts []string
	// NeedsProviders: the file asks Puppet which provider it would
	// choose (Options.DefaultProvider must be set to answer natively).
	NeedsProviders bool
	// resolve sets the file's facts into out.
	resolve func(r *Run, out map[string]Value)
	// Forge are the versions of the file the module's Forge releases
	// have (Digests are Debian's), checked against Facter as Debian's.
	Forge []Release
}

// A Release is a version of a known file as a module's recent Forge
// releases have it.
type Release struct {
	// Module and Version name the Forge release the comparison tests
	// install (puppetlabs-apt, 11.3.2); Releases says which releases
	// ship the same content (10.0.1 to 11.3.2).
	Module, Version, Releases string
	// Digest is the file's sha256 digest (hex).
	Digest string
	// resolve resolves this version, when its code differs from
	// Debian's; nil: the file's resolve.
	resolve func(r *Run, out map[string]Value)
}

// Files are the known fact files, one entry per file of a module.
var Files []*File

// byDigest is what a digest resolves: f, with resolve when it is not
// f's own (a Forge release's code).
var byDigest = map[string]version{}

type version struct {
	f       *File
	resolve func(r *Run, out map[string]Value)
}

// register adds f to the known files.
func register(f *File) {
	add := func(d string, resolve func(r *Run, out map[string]Value)) {
		if g, dup := byDigest[d]; dup {
			panic(fmt.Sprintf("native facts: %s/%s and %s/%s share a digest", f.Module, f.Name, g.f.Module, g.f.Name))
		}
		byDigest[d] = version{f, resolve}
	}
	for _, d := range f.Digests {
		add(d, nil)
	}
	for _, r := range f.Forge {
		add(r.Digest, r.resolve)
	}
	Files = append(Files, f)
	sort.Slice(Files, func(i, j int) bool {
		return Files[i].Module+"/"+Files[i].Name < Files[j].Module+"/"+Files[j].Name
	})
}

// Digest is the sha256 digest (hex) of content, as Files list them.
func Digest(content []byte) string {
	s := sha256.Sum256(content)
	return hex.EncodeToString(s[:])
}

// Options tune Resolve.
type Options struct {
	// CommandTimeout bounds each command (default DefaultCommandTimeout);
	// MaxOutput what it may print (default DefaultMaxOutput).
	CommandTimeout time.Duration
	MaxOutput      int
	// DefaultProvider answers which provider Puppet would choose for a
	// type (stdlib's package_provider, service_provider); nil: the files
	// that ask are not known here, and go to Facter.
	DefaultProvider func(typ string) (string, error)
	// Puppet are the Puppet settings facts may read (vardir,
	// environmentpath, server), as the agent's run has them; a file that
	// asks for one missing here is not known, and goes to Facter.
	Puppet map[string]string
	// Path is the PATH commands are looked up in (Facter adds /sbin and
	// /usr/sbin); "": the process's.
	Path string
	// Rival, when not nil, says whether a file Facter evaluates also
	// resolves a fact a known file defines, and how (it may wait for
	// Facter); Order are the custom fact files in Facter's load order.
	// Facter.value of such a fact is the resolution that wins (Wins).
	Rival func(name string) (Rival, bool)
	Order []string
}

// A Rival is a fact's resolution by a file Facter evaluates, when a known
// file defines the fact too: one Facter would hold both resolutions.
type Rival struct {
	V      any
	Weight int64
	// File is the file that defined the fact ("": unknown).
	File string
}

// Wins says whether the rival's value is the fact's, against v, the
// known file's resolution (nil: none), as Facter chooses among a fact's
// resolutions: the greater weight, the one loaded first on a tie (order
// is the load order; a rival of unknown file wins), the other when one
// is nil.
func (rv Rival) Wins(v Value, order []string) bool {
	switch {
	case rv.V == nil:
		return false
	case v.V == nil || rv.Weight > v.Weight:
		return true
	case rv.Weight < v.Weight:
		return false
	}
	ri, vi := slices.Index(order, rv.File), slices.Index(order, v.File)
	return ri < 0 || vi < 0 || ri < vi
}

// Recognise splits files (paths of custom fact files) into those pippet
// resolves natively (by content: an edited, newer or unknown version is
// not known) and the others, which Facter must evaluate. A file that
// cannot be read is among the others (Facter says why).
func Recognise(files []string, o Options) (known map[string]*File, others []string) {
	known = map[string]*File{}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			others = append(others, p)
			continue
		}
		v, ok := byDigest[Digest(b)]
		f := v.f
		if !ok || filepath.Base(p) != f.Name || (f.NeedsProviders && o.DefaultProvider == nil) || !hasSettings(f, o) {
			others = append(others, p)
			continue
		}
		if v.resolve != nil {
			// A Forge release's code.
			g := *f
			g.resolve = v.resolve
			f = &g
		}
		known[p] = f
	}
	return known, others
}

// needsSettings lists the Puppet settings a file reads.
var needsSettings = map[*File][]string{}

func hasSettings(f *File, o Options) bool {
	for _, s := range needsSettings[f] {
		if _, ok := o.Puppet[s]; !ok {
			return false
		}
	}
	return true
}

// Lookup answers Facter.value for the facts that are not the known
// files' own: core, external, FACTER_ and the custom facts Facter
// evaluated; external says whether name is an external (or FACTER_)
// fact, which wins over a custom one.
type Lookup func(name string) (v any, external, ok bool)

// Run is one resolution of the known files: what a fact's code may ask
// (other facts, commands, files) and what it reports.
type Run struct {
	ctx    context.Context
	o      Options
	lookup Lookup
	path   string

	mu     sync.Mutex
	errs   []error
	byFact map[string]*fileRun
	cmds   map[string]*cmdRun
}

type fileRun struct {
	f    *File
	path string
	once sync.Once
	out  map[string]Value
}

type cmdRun struct {
	once sync.Once
	out  string
	err  error
}

// Resolve resolves the facts of known (as Recognise returned them),
// each file in its own goroutine, the commands they run concurrently,
// each bounded. It returns the facts with a value and their weights;
// each failure is one error naming the fact and its file (the fact is
// then absent, as Facter leaves out a fact whose code raised).
func Resolve(ctx context.Context, known map[string]*File, lookup Lookup, o Options) (map[string]Value, []error) {
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = DefaultCommandTimeout
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	r := &Run{ctx: ctx, o: o, lookup: lookup, byFact: map[string]*fileRun{}, cmds: map[string]*cmdRun{}}
	r.path = o.Path
	if r.path == "" {
		r.path = os.Getenv("PATH")
	}
	var runs []*fileRun
	paths := make([]string, 0, len(known))
	for p := range known {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fr := &fileRun{f: known[p], path: p}
		runs = append(runs, fr)
		for _, n := range fr.f.Facts {
			if _, dup := r.byFact[n]; !dup {
				r.byFact[n] = fr
			}
		}
	}
	var wg sync.WaitGroup
	for _, fr := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.resolveFile(fr)
		}()
	}
	wg.Wait()
	all := map[string]Value{}
	for _, fr := range runs {
		for n, v := range fr.out {
			if v.V == nil {
				continue
			}
			if _, dup := all[n]; !dup {
				v.File = fr.path
				all[n] = v
			}
		}
	}
	return all, r.errs
}

func (r *Run) resolveFile(fr *fileRun) {
	fr.once.Do(func() {
		out := map[string]Value{}
		fr.f.resolve(r, out)
		fr.out = out
	})
}

// Value is Facter.value(name): an external (or FACTER_) fact, else the
// fact of a known file present, else what Facter and the core facts
// say; nil when nothing defines it.
func (r *Run) Value(name string) any {
	v, ext, ok := r.lookup(name)
	if ok && ext {
		return v
	}
	if fr := r.byFact[name]; fr != nil {
		r.resolveFile(fr)
		v := fr.out[name]
		if r.o.Rival != nil {
			if rv, ok := r.o.Rival(name); ok && rv.Wins(Value{V: v.V, Weight: v.Weight, File: fr.path}, r.o.Order) {
				return rv.V
			}
		}
		return v.V
	}
	if ok {
		return v
	}
	// Facter 4's dotted query: os.family is the fact os's family.
	if top, rest, dotted := strings.Cut(name, "."); dotted {
		cur := r.Value(top)
		for _, k := range strings.Split(rest, ".") {
			m, isMap := cur.(map[string]any)
			if !isMap {
				return nil
			}
			cur = m[k]
		}
		return cur
	}
	return nil
}

// own is Facter.value(fact) for a fact of the file being resolved whose
// own resolution is v: v's value, unless a file Facter evaluates resolves
// the fact too and wins (Rival.Wins).
func (r *Run) own(fact string, v Value) any {
	if r.o.Rival != nil {
		if fr := r.byFact[fact]; fr != nil {
			v.File = fr.path
		}
		if rv, ok := r.o.Rival(fact); ok && rv.Wins(v, r.o.Order) {
			return rv.V
		}
	}
	return v.V
}

// Setting is a Puppet setting, as Options.Puppet has it.
func (r *Run) Setting(name string) string { return r.o.Puppet[name] }

// DefaultProvider is the provider Puppet would choose for typ.
func (r *Run) DefaultProvider(typ string) (string, error) { return r.o.DefaultProvider(typ) }

// Fail records that fact (of file f) has no value: err says why.
func (r *Run) Fail(f *File, fact string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Errorf("custom fact %s (%s/lib/facter/%s, resolved natively): %w", fact, f.Module, f.Name, err))
}

// Which finds bin as Facter does: an absolute path as is, else in PATH,
// then /sbin and /usr/sbin; "" when it is not an executable file.
func (r *Run) Which(bin string) string {
	isExe := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.Mode().IsRegular() && syscall.Access(p, 1) == nil
	}
	if strings.HasPrefix(bin, "/") {
		if isExe(bin) {
			return bin
		}
		return ""
	}
	for _, d := range append(filepath.SplitList(r.path), "/sbin", "/usr/sbin") {
		if p := filepath.Join(d, bin); isExe(p) {
			return p
		}
	}
	return ""
}

// ErrNotFound is Exec's error for a command that is not installed.
var ErrNotFound = errors.New("command not found")

// Exec is Facter::Util::Resolution.exec(command): the first word looked
// up as Which does (not found: ErrNotFound, and Facter's nil), the line
// run by /bin/sh with LC_ALL=C and LANG=C, its standard output with
// surrounding white space removed, whatever its exit status (Facter
// does not look at it). Unlike Facter, it is bounded in time and in
// output: over either, the command's process group is killed and the
// error says which. The same command line asked by several facts runs
// once.
func (r *Run) Exec(command string) (string, error) {
	r.mu.Lock()
	c := r.cmds[command]
	if c == nil {
		c = &cmdRun{}
		r.cmds[command] = c
	}
	r.mu.Unlock()
	c.once.Do(func() { c.out, c.err = r.exec(command) })
	return c.out, c.err
}

func firstWord(command string) string {
	w, _, _ := strings.Cut(command, " ")
	return w
}

func (r *Run) exec(command string) (string, error) {
	exe, args, _ := strings.Cut(command, " ")
	full := r.Which(exe)
	if full == "" {
		return "", fmt.Errorf("%s: %w", exe, ErrNotFound)
	}
	line := full
	if args != "" {
		line += " " + args
	}
	out, err := r.run(command, line, true)
	return rubyStrip(out), err
}

// Shell is Ruby's Open3.capture2(line): line run by /bin/sh as it is
// (no lookup, the environment unchanged), its standard output as
// printed; bounded as Exec.
func (r *Run) Shell(line string) (string, error) {
	return r.run(line, line, false)
}

// run runs line with /bin/sh (cLocale: LC_ALL=C and LANG=C, as Facter
// sets them), bounded in time and output; command names it in errors.
func (r *Run) run(command, line string, cLocale bool) (string, error) {
	ctx, cancel := context.WithTimeout(r.ctx, r.o.CommandTimeout)
	defer cancel()
	cmd := exec.Command("/bin/sh", "-c", line)
	cmd.Env = append(os.Environ(), "PATH="+r.path)
	if cLocale {
		cmd.Env = append(cmd.Env, "LC_ALL=C", "LANG=C")
	}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", fmt.Errorf("%s: %w", command, err)
	}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("%s: %w", command, err)
	}
	kill := func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	type read struct {
		b    []byte
		over bool
	}
	done := make(chan read, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(stdout, int64(r.o.MaxOutput)+1))
		over := len(b) > r.o.MaxOutput
		if over {
			kill()
			_, _ = io.Copy(io.Discard, stdout)
		}
		done <- read{b, over}
	}()
	var res read
	select {
	case res = <-done:
	case <-ctx.Done():
		kill()
		<-done
		_ = cmd.Wait()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return "", fmt.Errorf("%s: still running after %s; killed", command, r.o.CommandTimeout)
		}
		return "", fmt.Errorf("%s: %w", command, ctx.Err())
	}
	_ = cmd.Wait()
	kill() // what it left running in the background
	if res.over {
		return "", fmt.Errorf("%s: printed more than %d bytes; killed", command, r.o.MaxOutput)
	}
	return string(res.b), nil
}

// rubyStrip is Ruby's String#strip: leading and trailing white space and
// NULs.
func rubyStrip(s string) string {
	return strings.Trim(s, " \t\n\v\f\r\x00")
}

// fileExists is Ruby's File.exist?; fileIsFile File.file?.
func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func fileIsFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// confineFact is Facter's confine NAME: VALUE on a fact's value: equal
// as strings, case folded (Facter downcases both), any of a list.
func (r *Run) confine(name string, want ...string) bool {
	v := r.Value(name)
	if v == nil {
		return false
	}
	have := fmt.Sprint(v)
	for _, w := range want {
		if strings.EqualFold(have, w) {
			return true
		}
	}
	return false
}

// file is the known file that defines fact in this resolution.
func (r *Run) file(fact string) *File {
	if fr := r.byFact[fact]; fr != nil {
		return fr.f
	}
	return &File{Module: "?", Name: "?"}
}

// rubyToS is Ruby's to_s of a fact value, for the scalars facts compare.
func rubyToS(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}
