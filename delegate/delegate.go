// Package delegate forwards the requests whose type pippet does not
// implement to a Puppet process, and relays Puppet's answers: the
// receiver's --fallback.
//
// The Puppet side is pippet's own bridge, pippet-bridge.rb, embedded in
// the binary and run with the system's ruby and Puppet's libraries (ruby
// -e a two-line loader that evals the script passed in the environment,
// so nothing is written to disk). It applies each resource as `puppet
// resource` does, without compiling a catalog, and answers in the
// receiver's shape with Puppet's own failed, changed and exception. The
// process is driven through package runner, the same library engines use
// to drive the receiver: started on the first delegated request, kept for
// the next ones, replaced when it dies, stopped by Close.
//
// Finding Puppet only looks at files (no Ruby is started until a request
// needs it), and so does the list of the types it can apply: Puppet's own
// (PUPPETLIB/puppet/type/*.rb) and the modulepath's
// (MODULE/lib/puppet/type/*.rb, Resource API types included). A type in
// neither list gets the receiver's own "unknown resource type" answer at
// once.
package delegate

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	json "github.com/goccy/go-json"

	"github.com/pippet/pippet/internal/factsrb"
	"github.com/pippet/pippet/protocol"
	"github.com/pippet/pippet/runner"
)

// Bridge is the Ruby program run on the Puppet side: pippet-bridge.rb,
// after the custom facts' evaluation it shares with agent/facts
// (internal/factsrb).
var Bridge = factsrb.Source + bridge

//go:embed pippet-bridge.rb
var bridge string

// EnvBridge carries the bridge's source to the loader; the loader removes
// it from the environment before Puppet runs anything.
const EnvBridge = "PIPPET_BRIDGE"

// loader is the ruby -e program: it evaluates the bridge from the
// environment, naming it for backtraces.
const loader = `s = ENV.delete("` + EnvBridge + `") or abort("pippet-bridge: no ` + EnvBridge + ` in the environment"); eval(s, TOPLEVEL_BINDING, "pippet-bridge.rb", 1)`

// Fallback modes (Options.Fallback); any other value is a command line.
const (
	ModeAuto   = "auto"   // Puppet when an installation is found, else none
	ModePuppet = "puppet" // Puppet, or an error when none is found
	ModeNone   = "none"   // unknown types are error answers
)

// DefaultStartTimeout bounds the wait for the process' ready line.
const DefaultStartTimeout = 2 * time.Minute

// Installation is where Puppet was found: the ruby to run and the
// directory holding puppet.rb.
type Installation struct {
	Ruby   string
	LibDir string
}

// installations are the places looked at, in order: Puppet's all-in-one
// package (its own ruby) and Debian's puppet-agent (the system's ruby).
var installations = []struct{ ruby, lib string }{
	{"/opt/puppetlabs/puppet/bin/ruby", "/opt/puppetlabs/puppet/lib/ruby/vendor_ruby"},
	{"ruby", "/usr/lib/ruby/vendor_ruby"},
}

// FindPuppet looks for a Puppet installation by its files only: a ruby
// and a library directory with puppet.rb and puppet/type. It starts
// nothing.
func FindPuppet() (Installation, bool) {
	for _, c := range installations {
		if fi, err := os.Stat(filepath.Join(c.lib, "puppet", "type")); err != nil || !fi.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(c.lib, "puppet.rb")); err != nil {
			continue
		}
		ruby := c.ruby
		if !filepath.IsAbs(ruby) {
			p, err := exec.LookPath(ruby)
			if err != nil {
				continue
			}
			ruby = p
		} else if _, err := os.Stat(ruby); err != nil {
			continue
		}
		return Installation{Ruby: ruby, LibDir: c.lib}, true
	}
	return Installation{}, false
}

// DefaultModulePath is Puppet's default modulepath on Debian, as `puppet
// config print modulepath` gives it without a puppet.conf setting: the
// production environment's modules (when that directory exists), then
// the basemodulepath: CODEDIR/modules and /usr/share/puppet/modules, where
// CODEDIR is /etc/puppet/code for root and ~/.puppet/code for others.
func DefaultModulePath() []string {
	codedir := "/etc/puppet/code"
	if os.Geteuid() != 0 {
		home, err := os.UserHomeDir()
		if err != nil {
			home = "/"
		}
		codedir = filepath.Join(home, ".puppet", "code")
	}
	var mp []string
	if fi, err := os.Stat(filepath.Join(codedir, "environments", "production", "modules")); err == nil && fi.IsDir() {
		mp = append(mp, filepath.Join(codedir, "environments", "production", "modules"))
	}
	return append(mp, filepath.Join(codedir, "modules"), "/usr/share/puppet/modules")
}

// BridgeCommand is the argv that runs the bridge with inst's ruby and
// Puppet libraries; the environment must also hold EnvBridge=Bridge.
// level is Puppet's log level name.
func BridgeCommand(inst Installation, modulepath []string, level string, noop bool) []string {
	argv := []string{inst.Ruby, "-I", inst.LibDir, "-e", loader, "--",
		"--modulepath=" + strings.Join(modulepath, ":"), "--log_level=" + level}
	if noop {
		argv = append(argv, "--noop")
	}
	return argv
}

// Options configure a Fallback.
type Options struct {
	// Fallback is ModeAuto (or ""), ModePuppet, ModeNone, or a command
	// line (split on blanks) of any receiver to forward to, such as
	// `puppet yamlresource receive --color=no` where that face exists.
	Fallback string
	// ModulePath is the modulepath (colon-separated) Puppet loads custom
	// types and providers from; empty means DefaultModulePath, unless
	// LibDir is set.
	ModulePath string
	// LibDir is Puppet's libdir: a directory holding puppet/type,
	// puppet/provider and facter as a module's lib/ does, which Puppet
	// loads types, providers and facts from. The agent's is VARDIR/lib,
	// where pluginsync puts the server's modules' plugins. Puppet's
	// autoloader looks there after the modulepath's modules and before
	// its own types. With LibDir set and no ModulePath the modulepath is
	// empty, as the environment of Puppet's agent (a remote one, whose
	// modules are on the server) is.
	LibDir string
	// Noop runs Puppet with --noop (a resource's own noop still wins).
	Noop bool
	// LogLevel is the least severe level the bridge logs: Puppet's names
	// (debug, info, notice, warning, err); empty means notice.
	LogLevel string
	// MaxRequest is the receiver's own request limit (--max-line; 0:
	// runner.DefaultMaxRequest). A request is forwarded re-encoded up to
	// requestGrowth times that.
	MaxRequest int
	// StartTimeout bounds Puppet's start (0: DefaultStartTimeout).
	StartTimeout time.Duration
	// Logger receives the bridge's log lines (each at the level its
	// Puppet prefix names: see RelayHandler) and the process' starts and
	// exits at debug level. Nil discards them.
	Logger *slog.Logger
	// Env is added to the child's environment.
	Env []string
	// Settings are more of Puppet's settings for the bridge, each
	// "--name=value" (an agent's confdir, vardir and server, which the
	// custom facts and providers it loads may read).
	Settings []string
	// Types are sent to the fallback even when pippet has them natively
	// (the receiver's --delegate): a module on the modulepath whose
	// version differs from the one pippet's type follows. New ignores
	// it; the caller's Applier.NativeKnow consults it.
	Types []string
}

// requestGrowth is how much longer than the line the receiver read a
// forwarded request may be (see New).
const requestGrowth = 4

// TypeInfo is a type the fallback can apply, and where it comes from.
type TypeInfo struct {
	Name   string
	Source string // "puppet" for Puppet's own types, else the module's directory
}

// Fallback forwards requests to one Puppet (or other receiver) process.
type Fallback struct {
	desc       string
	inst       Installation
	modulepath []string
	libdir     string
	command    bool // a command line: send params as a string, any type goes
	recv       *runner.Receiver
	pipe       *runner.Pipeline // requests sent by Send, answers owed

	mu         sync.Mutex // guards registered
	registered bool

	typesOnce sync.Once
	types     map[string]TypeInfo
	paths     map[string]string // each type's file, as Puppet would load it

	autoMu sync.Mutex
	auto   map[string]bool // DeclaresAuto's verdicts

	logs *answered // the bridge's log, each request's closed before its answer

	catMu sync.Mutex // guards the catalog the bridge holds (catalogFor)
	cat   sentCatalog
	log   *slog.Logger
}

// New makes the fallback Options describe; nil (and no error) for
// ModeNone, or for ModeAuto when no Puppet is installed. Nothing is
// started.
func New(o Options) (*Fallback, error) {
	mode := strings.TrimSpace(o.Fallback)
	if mode == "" {
		mode = ModeAuto
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if o.StartTimeout <= 0 {
		// Loading Puppet takes seconds, more on a busy machine.
		o.StartTimeout = DefaultStartTimeout
	}
	// A request reaches Puppet re-encoded as JSON, which is longer than
	// the line the receiver read when that line held params as YAML
	// (`{a: b}` is `{"a":"b"}`, a list of short items twice as long), and
	// the bridge reads lines of any length: the limit on what is forwarded
	// is requestGrowth times the receiver's own, and Puppet's answers stay
	// bounded as the receiver's own answers are.
	maxLine := o.MaxRequest
	if maxLine <= 0 {
		maxLine = runner.DefaultMaxRequest
	}
	ropts := runner.Options{
		MaxRequest:   requestGrowth * maxLine,
		MaxLine:      max(runner.DefaultMaxLine, runner.DefaultMaxLine/runner.DefaultMaxRequest*maxLine),
		StartTimeout: o.StartTimeout,
		Logger:       logger,
		Env:          o.Env,
	}
	f := &Fallback{log: logger}
	switch mode {
	case ModeNone:
		return nil, nil
	case ModeAuto, ModePuppet:
		inst, ok := FindPuppet()
		if !ok {
			if mode == ModeAuto {
				return nil, nil
			}
			var where []string
			for _, c := range installations {
				where = append(where, c.lib+"/puppet.rb with "+c.ruby)
			}
			return nil, fmt.Errorf("--fallback puppet: no Puppet installation found (looked for %s)", strings.Join(where, "; "))
		}
		f.inst = inst
		switch {
		case o.ModulePath != "":
			f.modulepath = filepath.SplitList(o.ModulePath)
		case o.LibDir == "":
			f.modulepath = DefaultModulePath()
		}
		f.libdir = o.LibDir
		level := o.LogLevel
		if level == "" {
			level = "notice"
		}
		ropts.Command = BridgeCommand(inst, f.modulepath, level, o.Noop)
		if f.libdir != "" {
			ropts.Command = append(ropts.Command, "--libdir="+f.libdir)
		}
		ropts.Command = append(ropts.Command, o.Settings...)
		ropts.Env = append([]string{EnvBridge + "=" + Bridge}, o.Env...)
		f.logs = newAnswered(logger.Handler())
		ropts.Logger = slog.New(f.logs)
		f.desc = "Puppet (" + inst.LibDir + ")"
	default:
		argv := strings.Fields(mode)
		ropts.Command = argv
		f.command = true
		f.desc = "'" + mode + "'"
	}
	f.recv = runner.New(ropts)
	return f, nil
}

// String names what requests are delegated to.
func (f *Fallback) String() string { return f.desc }

// ModulePath is the modulepath given to Puppet (nil for a command).
func (f *Fallback) ModulePath() []string { return f.modulepath }

// Pid is the Puppet process' id, 0 while none runs.
func (f *Fallback) Pid() int { return f.recv.Pid() }

// Knows reports whether a request of this type is delegated: any type
// for a command; for Puppet, a type in Types.
func (f *Fallback) Knows(name string) bool {
	if f.command {
		return true
	}
	f.typesOnce.Do(f.scan)
	_, ok := f.types[strings.ToLower(name)]
	return ok
}

// Types lists the types Puppet can apply, sorted by name (nil for a
// command, whose types are not known in advance).
func (f *Fallback) Types() []TypeInfo {
	if f.command {
		return nil
	}
	f.typesOnce.Do(f.scan)
	out := make([]TypeInfo, 0, len(f.types))
	for _, t := range f.types {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// internalTypes are Puppet's types that only a compiled catalog uses.
var internalTypes = map[string]bool{"component": true, "whit": true, "stage": true}

// scan lists the type files of Puppet, of every module on the
// modulepath and of the libdir; an earlier one wins, as in Puppet's
// autoloader (modules, then the libdir, then Puppet's own).
func (f *Fallback) scan() {
	f.types = map[string]TypeInfo{}
	f.paths = map[string]string{}
	add := func(dir, source string) {
		names, err := filepath.Glob(filepath.Join(dir, "*.rb"))
		if err != nil {
			return
		}
		for _, n := range names {
			name := strings.TrimSuffix(filepath.Base(n), ".rb")
			if internalTypes[name] {
				continue
			}
			if _, dup := f.types[name]; !dup {
				f.types[name] = TypeInfo{Name: name, Source: source}
				f.paths[name] = n
			}
		}
	}
	for _, dir := range f.modulepath {
		mods, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, m := range mods {
			add(filepath.Join(dir, m.Name(), "lib", "puppet", "type"), filepath.Join(dir, m.Name()))
		}
	}
	if f.libdir != "" {
		add(filepath.Join(f.libdir, "puppet", "type"), f.libdir)
	}
	add(filepath.Join(f.inst.LibDir, "puppet", "type"), "puppet")
}

// register starts the process for the first request; a failed start is
// tried again by the next request.
func (f *Fallback) register(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.registered {
		return nil
	}
	if err := f.recv.RegisterContext(ctx); err != nil {
		return err
	}
	f.registered = true
	return nil
}

// Apply forwards one request and returns the answer: Puppet's own when
// it gave one (failed, changed, exception, events); an error answer when
// it could not be asked (it does not start); a failure when it died or
// broke the stream before answering (the resource may be half applied),
// the next request then going to a new process. It is not called while
// answers of Send are owed.
func (f *Fallback) Apply(ctx context.Context, req *protocol.Request) protocol.Result {
	ref := protocol.Ref(req.Type, req.Title)
	res, fail := f.resource(ctx, req, ref)
	if fail != nil {
		return *fail
	}
	result, err := runner.ApplyResult(ctx, f.recv, res)
	if err != nil && errors.Is(err, syscall.EPIPE) {
		// The process died before the request could be written (it was
		// killed between requests, and not yet reaped when this one
		// came): nothing reached it, so the request goes, once, to the
		// process that replaces it.
		result, err = runner.ApplyResult(ctx, f.recv, res)
	}
	if gotAnswer(err) {
		f.logs.wait(ctx, result.ID)
	}
	return f.answer(ref, result, err)
}

// gotAnswer is true when the bridge answered (err nil, or the answer of a
// resource that failed): its log lines for the request come before the
// answer, and are waited for whatever the answer says.
func gotAnswer(err error) bool {
	var re *runner.ResultError
	return err == nil || errors.As(err, &re)
}

// Read answers a find or search through Puppet's bridge, which reads as
// `puppet resource TYPE [NAME]` does (the provider's instances); the
// answer is the receiver's: a find's state and params, a search's
// instances, or Puppet's error. It is not called while answers of Send
// are owed.
func (f *Fallback) Read(ctx context.Context, req *protocol.Request) protocol.Result {
	ref := protocol.Ref(req.Type, req.Title)
	if req.Op == protocol.OpSearch {
		ref = protocol.RefType(req.Type)
	}
	if f.command {
		return protocol.ErrorResult(ref, fmt.Sprintf("%s: %s does not answer %s", ref, f.desc, req.Op))
	}
	if err := f.register(ctx); err != nil {
		return protocol.ErrorResult(ref, fmt.Sprintf("%s: cannot delegate to %s: %v", ref, f.desc, err))
	}
	res := &runner.Resource{Type: req.Type, Title: req.Title, Values: req.Params}
	if req.Op == protocol.OpSearch {
		inst, err := runner.Search(ctx, f.recv, req.Type, req.Params)
		if err != nil {
			return f.answer(ref, resultOf(err), err)
		}
		return protocol.Result{Resource: ref, Instances: inst}
	}
	found, err := runner.FindResource(ctx, f.recv, res)
	if err != nil {
		return f.answer(ref, resultOf(err), err)
	}
	return protocol.Result{Resource: found.Ref, State: found.State, Params: found.Params}
}

// resultOf is the answer a *runner.ResultError carries, if err is one.
func resultOf(err error) protocol.Result {
	var re *runner.ResultError
	if errors.As(err, &re) {
		return re.Result
	}
	return protocol.Result{}
}

// resource is the runner's request for req, the process started if it
// is not running yet; fail is the error answer when it can't be.
func (f *Fallback) resource(ctx context.Context, req *protocol.Request, ref string) (*runner.Resource, *protocol.Result) {
	if err := f.register(ctx); err != nil {
		r := protocol.ErrorResult(ref, fmt.Sprintf("%s: cannot delegate to %s: %v", ref, f.desc, err))
		return nil, &r
	}
	res := &runner.Resource{Type: req.Type, Title: req.Title, Refresh: req.Refresh}
	switch {
	case f.command:
		// Puppet's receivers read params only as a YAML string; JSON is YAML.
		b, err := json.Marshal(req.Params)
		if err != nil {
			r := protocol.ErrorResult(ref, fmt.Sprintf("%s: encoding params for %s: %v", ref, f.desc, err))
			return nil, &r
		}
		res.Params = string(b)
		res.Refresh = false // not part of Puppet's protocol
	case req.Params == nil:
		res.Values = map[string]any{}
	default:
		res.Values = req.Params
	}
	if !f.command {
		if token := f.catalogFor(ctx); token != "" {
			res.Values = withMember(res.Values, CatalogMember, token)
		}
	}
	return res, nil
}

// answer is the result of one delegated request as the receiver answers
// it, from the runner's result and error.
func (f *Fallback) answer(ref string, result protocol.Result, err error) protocol.Result {
	if err == nil {
		return result
	}
	var re *runner.ResultError
	if errors.As(err, &re) {
		return result
	}
	if errors.Is(err, runner.ErrInvalidRequest) || errors.Is(err, runner.ErrUnavailable) {
		return protocol.ErrorResult(ref, fmt.Sprintf("%s: cannot delegate to %s: %v", ref, f.desc, err))
	}
	return protocol.Result{Resource: ref, Failed: true, Exception: fmt.Sprintf("%s: delegated to %s: %v", ref, f.desc, err)}
}

// SendStatus is what Send did with a request.
type SendStatus int

const (
	// Sent: the answer is owed; Receive returns it, in order.
	Sent SendStatus = iota
	// Full: nothing was sent; Receive an owed answer, then Send again.
	Full
	// Answered: nothing was sent and the answer is the one returned (the
	// request cannot be delegated); it comes after the answers owed.
	Answered
)

// Send forwards req without waiting for its answer, so that a stream of
// delegated requests keeps Puppet busy instead of idle for a round trip
// of the relay between requests (runner.Pipeline). Puppet applies them
// one after the other, in order, as Apply would. A write that fails while
// answers are owed is Full: those answers tell what happened to the
// process, and the request is sent again once none is owed (as Apply, to
// a replacement when the process died). Apply and Close are not called
// while answers are owed.
func (f *Fallback) Send(ctx context.Context, req *protocol.Request) (SendStatus, protocol.Result) {
	ref := protocol.Ref(req.Type, req.Title)
	if f.pipe != nil && f.pipe.Owed() > 0 && f.needsCatalog(ctx) {
		// The catalog goes first, on its own, once no answer is owed.
		return Full, protocol.Result{}
	}
	res, fail := f.resource(ctx, req, ref)
	if fail != nil {
		return Answered, *fail
	}
	if f.pipe == nil {
		f.pipe = runner.NewPipeline(f.recv)
	}
	// The runner encodes the request in Send: req and its params may be
	// reused by the caller once Send returns.
	owed := f.pipe.Owed()
	sent, err := f.pipe.Send(ctx, res)
	if sent {
		// Encoded and written: what is kept for the answer is the
		// reference, not the caller's params map it reuses.
		res.Values = nil
	}
	switch {
	case err == nil && sent:
		return Sent, protocol.Result{}
	case err == nil:
		return Full, protocol.Result{}
	case owed > 0 && !errors.Is(err, runner.ErrInvalidRequest):
		return Full, protocol.Result{}
	case errors.Is(err, syscall.EPIPE):
		// Nothing owed and the process gone before the write: once more,
		// to its replacement, as Apply does.
		if sent, err = f.pipe.Send(ctx, res); err == nil && sent {
			res.Values = nil
			return Sent, protocol.Result{}
		}
	}
	return Answered, f.answer(ref, protocol.Result{}, err)
}

// Receive returns the answer to the oldest request Send sent.
func (f *Fallback) Receive(ctx context.Context) protocol.Result {
	res, result, err := f.pipe.Receive(ctx)
	if gotAnswer(err) {
		f.logs.wait(ctx, result.ID)
	}
	ref := ""
	if res != nil {
		ref = protocol.Ref(res.Type, res.Title)
	}
	return f.answer(ref, result, err)
}

// Close stops the process, if one was started: its input is closed, the
// request in progress finishes, and it is killed if it has not exited
// within runner's grace period or when ctx ends.
func (f *Fallback) Close(ctx context.Context) error {
	if f == nil {
		return nil
	}
	if f.pipe != nil && f.pipe.Owed() > 0 {
		f.pipe.Abort(errors.New("the fallback was closed"))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.registered {
		return nil
	}
	f.registered = false
	return f.recv.UnregisterContext(ctx)
}

// Applier sends an apply request to Native when it knows the type, else
// to the Fallback when that can apply it, else to Native (whose answer is
// then the unknown-type error). A find or search goes the same way to
// Puppet's bridge (which reads as `puppet resource TYPE [NAME]` does); a
// describe, and the read verbs with a command fallback (Puppet's own
// receiver has no verbs), go to Native.
type Applier struct {
	Native     protocol.Applier
	NativeKnow func(name string) bool
	Fallback   *Fallback
}

// Apply implements protocol.Applier.
func (a *Applier) Apply(ctx context.Context, req *protocol.Request) protocol.Result {
	if !a.Delegates(req) {
		return a.ApplyNative(ctx, req)
	}
	if res, ok := a.carried(ctx, req); ok {
		return res
	}
	return a.Fallback.Apply(ctx, req)
}

// Delegates reports whether Apply sends req to the Fallback.
func (a *Applier) Delegates(req *protocol.Request) bool {
	return a.Fallback != nil && req.Op == protocol.OpApply && !a.NativeKnow(req.Type) && a.Fallback.Knows(req.Type)
}

// ProviderName names the provider an apply of req would use, without
// applying it (for a skipped resource's report): Native's for a type it
// applies; for a delegated one, the provider parameter when given (only
// Puppet knows its default: an applied resource's answer names it).
func (a *Applier) ProviderName(req *protocol.Request) string {
	if a.Delegates(req) {
		p, _ := req.Params["provider"].(string)
		return p
	}
	if n, ok := a.Native.(interface {
		ProviderName(*protocol.Request) string
	}); ok {
		return n.ProviderName(req)
	}
	return ""
}

// ApplyNative applies a request Delegates refused: Apply without asking
// again (the loop asks Delegates first to know whether to send ahead).
// A find or search of a type only Puppet's bridge knows is the bridge's,
// one at a time (never sent ahead).
func (a *Applier) ApplyNative(ctx context.Context, req *protocol.Request) protocol.Result {
	if a.DelegatesRead(req) {
		return a.Fallback.Read(ctx, req)
	}
	return a.Native.Apply(ctx, req)
}

// DelegatesRead reports whether req is a find or search the Fallback
// answers: a type Native lacks and Puppet's bridge knows.
func (a *Applier) DelegatesRead(req *protocol.Request) bool {
	return a.Fallback != nil && !a.Fallback.command && (req.Op == protocol.OpFind || req.Op == protocol.OpSearch) &&
		!a.NativeKnow(req.Type) && a.Fallback.Knows(req.Type)
}

// Send is the Fallback's Send, for a request Delegates; a request its
// carrier applies (carried) is answered at once, as Apply answers it.
func (a *Applier) Send(ctx context.Context, req *protocol.Request) (SendStatus, protocol.Result) {
	if res, ok := a.carried(ctx, req); ok {
		return Answered, res
	}
	return a.Fallback.Send(ctx, req)
}

// Receive is the Fallback's Receive.
func (a *Applier) Receive(ctx context.Context) protocol.Result { return a.Fallback.Receive(ctx) }
