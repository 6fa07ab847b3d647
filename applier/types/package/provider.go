package pkg

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/command"
)

// The tools, by absolute path as Puppet names them.
var (
	aptGet   = "/usr/bin/apt-get"
	aptCache = "/usr/bin/apt-cache"
	aptMark  = "/usr/bin/apt-mark"
	preseed  = "/usr/bin/debconf-set-selections"
	dpkgCmd  = "/usr/bin/dpkg"
	dpkgDeb  = "/usr/bin/dpkg-deb"
)

// LockTimeout is how long apt-get waits for a dpkg lock another process
// holds before it fails (its DPkg::Lock::Timeout).
var LockTimeout = 60 * time.Second

// SourcesList is where apt's cdrom check looks.
var SourcesList = "/etc/apt/sources.list"

// Apt is the apt provider: apt-get, apt-cache, debconf-set-selections.
var Apt = &applier.ProviderSpec{
	Name: "apt",
	Doc: "Package management through apt-get: installs from the configured apt sources, a " +
		"given version or version range, `latest` (apt's candidate); `install_options`, " +
		"`responsefile` (debconf preseeding), `mark: hold`. Default on Debian.",
	Confine:  applier.Confine{Func: tools(aptGet, aptCache, aptMark, preseed, dpkgCmd)},
	Defaults: map[string][]string{"os.family": {"Debian"}},
	New: func(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
		return newProvider(r, env, true)
	},
	Instances: instances,
}

// Dpkg is the dpkg provider: dpkg and dpkg-deb, from a .deb file only.
var Dpkg = &applier.ProviderSpec{
	Name: "dpkg",
	Doc: "Package management through dpkg alone: installs the .deb file named by `source` " +
		"(required), so it cannot choose versions; `latest` is the version in that file.",
	Confine: applier.Confine{Func: tools(dpkgCmd, dpkgDeb)},
	New: func(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
		return newProvider(r, env, false)
	},
	Instances: instances,
}

// tools confines a provider to the tools it runs. Once they are all found
// the verdict is kept: removing dpkg from a running system is not a case
// to pay a stat per tool and request for. A missing tool is looked for
// again on every request, since an earlier resource may install it.
func tools(paths ...string) func(*applier.Env) string {
	var found atomic.Bool
	return func(*applier.Env) string {
		if found.Load() {
			return ""
		}
		for _, p := range paths {
			if _, err := os.Stat(p); err != nil {
				return fmt.Sprintf("command '%s' not found", p)
			}
		}
		found.Store(true)
		return ""
	}
}

type provider struct {
	r   *applier.Resource
	env *applier.Env
	apt bool
	// name is the package managed: the name attribute, or with
	// allow_virtual the package providing it.
	name string
	// cur is the package's database entry (nil: unknown to dpkg).
	cur *entry
	// markChanged: a Set changed only the hold (apt then marks the package
	// manual in Flush, as Puppet's apt provider does).
	markChanged, ensureChanged bool
}

func newProvider(r *applier.Resource, env *applier.Env, apt bool) (applier.Provider, error) {
	if e := r.String("ensure"); !apt && isVersion(e) {
		return nil, &applier.ParamError{Param: "ensure",
			Err: fmt.Errorf("Provider dpkg must have features 'versionable' to set 'ensure' to '%s'", e)}
	}
	return &provider{r: r, env: env, apt: apt, name: r.Name()}, nil
}

// Resolve finds the package in the dpkg database and, for `latest` on an
// installed package, the version to compare with.
func (p *provider) Resolve(ctx context.Context) error {
	db, err := loadDB()
	if err != nil {
		return fmt.Errorf("reading the dpkg database: %w", err)
	}
	if p.r.Bool("allow_virtual") {
		if e := db.provider(p.name); e != nil {
			p.env.Logger().Info(fmt.Sprintf("%s: Package %s is virtual, defaulting to %s", p.r.Ref(), p.name, e.Name))
			p.name = e.Name
		}
	}
	p.cur = db.lookup(p.name)
	if p.cur != nil && p.cur.Eflag != "ok" {
		return fmt.Errorf("Package %s, version %s is in error state: %s", p.cur.Name, p.cur.ensure(), p.cur.Eflag)
	}
	if p.r.String("ensure") != "latest" || p.current() == "absent" || p.current() == "purged" {
		return nil
	}
	v, err := p.latest(ctx)
	if err != nil {
		return fmt.Errorf("Could not get latest version: %w", err)
	}
	p.r.Set("ensure", Latest(v))
	return nil
}

func (p *provider) current() string {
	if p.cur == nil {
		return "purged"
	}
	return p.cur.ensure()
}

func (p *provider) currentMark() string {
	if p.cur == nil {
		return "none"
	}
	return p.cur.mark()
}

// The value Get reports for a package dpkg does not know.
var purgedV any = "purged"

// Get reports what Resolve found.
func (p *provider) Get(_ context.Context, cur *applier.State) error {
	report(cur, p.cur)
	return nil
}

// report is a package's state, from its database entry (nil: dpkg does
// not know it): what Get reports and what search lists. mark is reported
// for an installed package only: a package that is absent or purged
// takes no mark (the type refuses one with those ensure values, so a
// find's params would not apply), and none is compared.
func report(cur *applier.State, e *entry) {
	if e == nil {
		cur.Set("ensure", purgedV)
		return
	}
	cur.Set("ensure", e.ensureV)
	if s := e.ensureV; s != "absent" && s != "purged" {
		cur.Set("mark", e.markV)
	}
}

// instances lists every package the dpkg database knows, as
// `dpkg-query -W` lists them for Puppet's dpkg and apt providers: by
// name, in name order, each with the state a find of that name reports
// (the instance lookup picks: native or `all` architecture first), those
// dpkg records as not-installed (purged) left out. The database is the
// one Get reads, parsed once and kept while the file is unchanged.
func instances(_ context.Context, _ *applier.Env, _ *applier.Resource, add func(string) *applier.State) error {
	db, err := loadDB()
	if err != nil {
		return fmt.Errorf("reading the dpkg database: %w", err)
	}
	for _, name := range db.sortedNames() {
		if e := db.lookup(name); e != nil && e.ensure() != "purged" {
			report(add(name), e)
		}
	}
	return nil
}

func (p *provider) Set(ctx context.Context, c *applier.Change) error {
	defer dropDB()
	switch c.Property {
	case "mark":
		p.markChanged = true
		if c.Should == "hold" {
			return p.hold(ctx)
		}
		return p.unhold(ctx)
	case "ensure":
		p.ensureChanged = true
		return p.ensure(ctx, c)
	}
	return fmt.Errorf("cannot set %s", c.Property)
}

// Flush marks a package whose hold changed as manually installed, as
// Puppet's apt provider does after any change (apt-get install already
// marks what it installs).
func (p *provider) Flush(ctx context.Context) error {
	if !p.apt || !p.markChanged || p.ensureChanged {
		return nil
	}
	if e := p.r.String("ensure"); e == "absent" || e == "purged" {
		return nil
	}
	_, err := p.run(ctx, nil, aptMark, "manual", p.name)
	return err
}

func (p *provider) ensure(ctx context.Context, c *applier.Change) error {
	is, _ := c.Is.(string)
	gone := is == "absent" || is == "purged" || is == ""
	switch should := c.Should.(type) {
	case Latest:
		return p.update(ctx, c, gone)
	case string:
		switch should {
		case "absent":
			return p.uninstall(ctx)
		case "purged":
			c.Message = "purged"
			return p.purge(ctx)
		case "present":
			if gone {
				c.Message = "created"
			}
			return p.install(ctx, "")
		case "latest":
			return p.update(ctx, c, gone)
		}
		if gone {
			c.Message = "created"
		}
		if err := p.install(ctx, should); err != nil {
			return fmt.Errorf("Could not update: %w", err)
		}
		return nil
	}
	return fmt.Errorf("unexpected ensure value %v", c.Should)
}

// update is `latest`: install the newest version (dpkg: the source's).
func (p *provider) update(ctx context.Context, c *applier.Change, gone bool) error {
	if gone {
		c.Message = "created"
	}
	if err := p.install(ctx, ""); err != nil {
		return fmt.Errorf("Could not update: %w", err)
	}
	return nil
}

// env is Puppet's environment for package commands: no prompts, no
// apt-listbugs or apt-listchanges.
func cmdEnv() []string {
	return append(os.Environ(), "DEBIAN_FRONTEND=noninteractive",
		"APT_LISTBUGS_FRONTEND=none", "APT_LISTCHANGES_FRONTEND=none")
}

// run runs a tool and fails, worded as Puppet words it, unless it exits 0.
// dpkg fails at once when another process holds its lock: it is tried
// again every lockRetry until LockTimeout has passed (apt-get waits by
// itself), so a short-lived lock costs a wait, and a lock held for long
// fails with dpkg's own words.
func (p *provider) run(ctx context.Context, stdin []byte, argv ...string) (string, error) {
	// A package tool runs to its end whatever becomes of the receiver: dpkg
	// cut short leaves a package half-configured (command.Cmd.Finish).
	c := &command.Cmd{Argv: argv, Env: cmdEnv(), Stdin: stdin, Finish: true}
	out, err := command.Check(ctx, c)
	if argv[0] != dpkgCmd {
		return out, err
	}
	deadline := time.Now().Add(LockTimeout)
	for err != nil && lockedRe.MatchString(out) && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return out, err
		case <-time.After(lockRetry):
		}
		out, err = command.Check(ctx, c)
	}
	return out, err
}

// lockRetry is how often a dpkg refused by a held lock is tried again.
const lockRetry = 250 * time.Millisecond

// lockedRe finds dpkg's words for a lock another process holds.
var lockedRe = regexp.MustCompile(`lock was locked by another process|database is locked by another process`)

func (p *provider) aptArgs(args ...string) []string {
	secs := int(LockTimeout / time.Second)
	return append([]string{aptGet, "-o", fmt.Sprintf("DPkg::Lock::Timeout=%d", secs)}, args...)
}

func (p *provider) confOption() string {
	if p.r.String("configfiles") == "replace" {
		return "--force-confnew"
	}
	return "--force-confold"
}

// install installs the package: version "" is any (the newest for apt),
// else that version or the best one in that range.
func (p *provider) install(ctx context.Context, version string) error {
	source := p.r.String("source")
	if !p.apt {
		if source == "" {
			return errors.New("You cannot install dpkg packages without a source")
		}
		return p.withHold(ctx, func() error {
			_, err := p.run(ctx, nil, dpkgCmd, p.confOption(), "-i", source)
			return err
		})
	}
	if err := p.runPreseed(ctx); err != nil {
		return err
	}
	if version != "" {
		if rng, err := parseVersionRange(version); err == nil && !rng.exact() {
			version = p.bestVersion(ctx, rng, version)
		}
	}
	if err := p.checkCDROM(); err != nil {
		return err
	}
	args := p.aptArgs("-q", "-y", "-o", "DPkg::Options::="+p.confOption())
	target := p.name
	if version != "" {
		target += "=" + version
		args = append(args, "--allow-downgrades")
	}
	args = append(args, options(p.r, "install_options")...)
	args = append(args, "install")
	if source != "" {
		args = append(args, source)
	} else {
		args = append(args, target)
	}
	err := p.withHold(ctx, func() error {
		_, err := p.run(ctx, nil, args...)
		return err
	})
	if err != nil {
		return err
	}
	if source != "" && version != "" {
		// apt installed whatever the file holds: check it is the version wanted.
		dropDB()
		db, err := loadDB()
		if err != nil {
			return fmt.Errorf("reading the dpkg database: %w", err)
		}
		e := db.lookup(p.name)
		if e == nil {
			return fmt.Errorf("Could not find package %s", p.name)
		}
		if got := e.ensure(); !ensureInSync(got, version) {
			return fmt.Errorf("Failed to update to version %s, got version %s instead", version, got)
		}
	}
	return nil
}

// withHold releases a hold around an install, and puts it back when the
// resource wants it (also when the install failed).
func (p *provider) withHold(ctx context.Context, install func() error) error {
	if p.currentMark() == "hold" {
		if err := p.unhold(ctx); err != nil {
			return err
		}
	}
	err := install()
	if p.r.String("mark") == "hold" {
		if herr := p.hold(ctx); herr != nil && err == nil {
			err = herr
		}
	}
	return err
}

// bestVersion is the newest version apt-cache madison lists that the
// range includes; none: the range itself, which apt-get then refuses.
func (p *provider) bestVersion(ctx context.Context, rng versionRange, fallback string) string {
	out, err := command.Check(ctx, &command.Cmd{Argv: []string{aptCache, "madison", p.name}, Env: cmdEnv()})
	if err != nil {
		p.env.Logger().Debug(p.r.Ref() + ": " + err.Error())
		return fallback
	}
	var best *debVersion
	bestStr := ""
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "|")
		if len(f) < 2 {
			continue
		}
		s := strings.TrimSpace(f[1])
		v, err := parseDebVersion(s)
		if err != nil || !rng.includes(v) {
			continue
		}
		if best == nil || v.compare(*best) > 0 {
			vv := v
			best, bestStr = &vv, s
		}
	}
	if best == nil {
		p.env.Logger().Debug(fmt.Sprintf("%s: No available version for package %s is included in range %s", p.r.Ref(), p.name, fallback))
		return fallback
	}
	return bestStr
}

var cdromRe = regexp.MustCompile(`(?m)^[^#\n]*cdrom:`)

func (p *provider) checkCDROM() error {
	data, err := os.ReadFile(SourcesList)
	if err != nil || !cdromRe.Match(data) || p.r.String("allowcdrom") == "true" {
		return nil
	}
	return fmt.Errorf("%s contains a cdrom source; not installing.  Use 'allowcdrom' to override this failure.", SourcesList)
}

// runPreseed feeds responsefile to debconf-set-selections (apt only).
func (p *provider) runPreseed(ctx context.Context) error {
	if !p.apt || !p.r.Given("responsefile") {
		return nil
	}
	file := p.r.String("responsefile")
	if _, err := os.Stat(file); err != nil {
		p.env.Logger().Info(p.r.Ref() + ": No responsefile specified or non existent, not preseeding anything")
		return nil
	}
	p.env.Logger().Info(fmt.Sprintf("%s: Preseeding %s to debconf-set-selections", p.r.Ref(), file))
	_, err := p.run(ctx, nil, preseed, file)
	return err
}

func (p *provider) uninstall(ctx context.Context) error {
	if !p.apt {
		_, err := p.run(ctx, nil, dpkgCmd, "-r", p.name)
		return err
	}
	if err := p.runPreseed(ctx); err != nil {
		return err
	}
	args := p.aptArgs("-y", "-q")
	if p.currentMark() == "hold" {
		args = append(args, "--allow-change-held-packages")
	}
	_, err := p.run(ctx, nil, append(args, "remove", p.name)...)
	return err
}

func (p *provider) purge(ctx context.Context) error {
	if p.apt {
		if err := p.runPreseed(ctx); err != nil {
			return err
		}
		args := p.aptArgs("-y", "-q")
		if p.currentMark() == "hold" {
			args = append(args, "--allow-change-held-packages")
		}
		if _, err := p.run(ctx, nil, append(args, "remove", "--purge", p.name)...); err != nil {
			return err
		}
	}
	// apt does not purge a package already removed: dpkg does.
	_, err := p.run(ctx, nil, dpkgCmd, "--purge", p.name)
	return err
}

func (p *provider) setSelection(ctx context.Context, sel string) error {
	_, err := p.run(ctx, []byte(p.name+" "+sel+"\n"), dpkgCmd, "--set-selections")
	return err
}

func (p *provider) hold(ctx context.Context) error   { return p.setSelection(ctx, "hold") }
func (p *provider) unhold(ctx context.Context) error { return p.setSelection(ctx, "install") }

// candidateRe finds apt-cache policy's candidate version.
var candidateRe = regexp.MustCompile(`Candidate:\s+(\S+)\s`)

// latest is the version `latest` means: apt's candidate, or the version
// in the dpkg provider's source file.
func (p *provider) latest(ctx context.Context) (string, error) {
	if !p.apt {
		source := p.r.String("source")
		if source == "" {
			return "", errors.New("Could not update: You cannot install dpkg packages without a source")
		}
		var out strings.Builder
		if _, err := command.Check(ctx, &command.Cmd{Argv: []string{dpkgDeb, "--show", source}, Env: cmdEnv(), Stdout: &out}); err != nil {
			return "", err
		}
		f := strings.Split(strings.TrimSpace(out.String()), "\t")
		if len(f) != 2 {
			return "", fmt.Errorf("cannot read the package and version from %s: %q", source, out.String())
		}
		if !strings.Contains(f[0], p.name) {
			p.env.Logger().Warn(fmt.Sprintf("%s: source doesn't contain named package, but %s", p.r.Ref(), f[0]))
		}
		return f[1], nil
	}
	var out strings.Builder
	if _, err := command.Check(ctx, &command.Cmd{Argv: []string{aptCache, "policy", p.name}, Env: cmdEnv(), Stdout: &out}); err != nil {
		return "", err
	}
	m := candidateRe.FindStringSubmatch(out.String())
	if m == nil || m[1] == "(none)" {
		return "", fmt.Errorf("apt-cache policy names no candidate version of %s", p.name)
	}
	return m[1], nil
}
