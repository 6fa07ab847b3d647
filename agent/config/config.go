package config

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pippet/pippet/agent/facts"
)

// Settings is what the agent run needs of Puppet's settings, typed, and
// every setting as resolved in Values.
type Settings struct {
	// ConfFile is the puppet.conf that was read (it may not exist).
	ConfFile string

	Confdir, Codedir, Vardir, SSLDir, Statedir, Rundir, Logdir, Publicdir, ClientDataDir string
	// Libdir is where pluginsync puts the modules' lib (plugindest);
	// PluginFactDest where it puts pluginfacts (facts.d).
	Libdir, PluginFactDest string

	// Certname is the node's certificate name: puppet.conf's or the host's
	// FQDN, lowercased (Facter's hostname and domain).
	Certname string

	Server     string
	ServerPort int // serverport (alias of masterport): 8140
	// ServerList is server_list, when set: the servers tried in order,
	// each with its port or ServerPort.
	ServerList []HostPort
	CAServer   string // ca_server: $server
	CAPort     int    // ca_port: $serverport
	// ReportServer and ReportPort: report_server ($server), report_port
	// ($serverport).
	ReportServer string
	ReportPort   int

	// Environment is the agent's environment (production); EnvironmentSet
	// says the command line or puppet.conf chose it (the node's
	// server-specified environment may still win, as in Puppet).
	Environment           string
	EnvironmentSet        bool
	StrictEnvironmentMode bool

	Noop bool
	// Tags and SkipTags: the tags and skip_tags settings, split on commas,
	// lowercased as Puppet compares tags.
	Tags, SkipTags []string

	Report, Pluginsync, UseCacheOnFailure, UseCachedCatalog, Splay, Daemonize, Onetime, ShowDiff bool

	// Runinterval, Splaylimit (defaults to Runinterval), Waitforcert and
	// the HTTP timeouts, from Puppet's duration syntax (30m, 1h, 2d, 1y or
	// plain seconds).
	Runinterval, Splaylimit, Waitforcert, HTTPConnectTimeout, HTTPReadTimeout time.Duration
	// Maxwaitforcert is how long waiting for the certificate may last
	// (Unlimited by default).
	Maxwaitforcert time.Duration

	// Waitforlock and Maxwaitforlock: how often and how long a run waits
	// for another run's lock (0: it does not wait; Maxwaitforlock
	// Unlimited: no limit). See LockWait.
	Waitforlock, Maxwaitforlock time.Duration
	// Runtimeout bounds a run from the run lock to the report (1h; 0: no
	// bound), as Puppet's agent.
	Runtimeout time.Duration
	// ResubmitFacts: send the facts again after the apply
	// (resubmit_facts).
	ResubmitFacts bool

	CertificateRevocation string // chain, leaf or false
	Keylength             int    // 4096

	// LastRunFile is last_run_summary.yaml, LastRunReport
	// last_run_report.yaml; CatalogRunLockfile and DisabledLockfile are the
	// lock files Lock and Disable manage.
	LastRunFile, LastRunReport, CatalogRunLockfile, DisabledLockfile string

	CSRAttributes string // csr_attributes: $confdir/csr_attributes.yaml
	DNSAltNames   []string

	// Values keeps every setting as resolved, as `puppet config print
	// --section agent` prints it: booleans true/false, durations in
	// seconds, paths interpolated.
	Values map[string]string

	// setByConfig: the settings the command line or puppet.conf set.
	setByConfig map[string]bool

	// Warnings are things Puppet goes past silently or with a warning
	// (a setting puppet.conf names that Puppet does not know): the caller
	// logs them.
	Warnings []string
}

// Unlimited is a TTL setting's "unlimited" (maxwaitforlock,
// maxwaitforcert) as a duration.
const Unlimited time.Duration = -1

// SetByConfig says whether the command line or puppet.conf ([agent] or
// [main]) set the setting, rather than its default: Puppet's
// set_by_config?. With server_list set, Puppet's agent sends every request
// to the first server_list entry that answers, except the CA's when
// ca_server is set by config and the reports when report_server is.
func (s *Settings) SetByConfig(name string) bool { return s.setByConfig[name] }

// HostPort is one entry of server_list.
type HostPort struct {
	Host string
	Port int
}

// DefaultConfFile is where the agent reads puppet.conf: /etc/puppet/puppet.conf
// for root, ~/.puppet/etc/puppet.conf otherwise (Debian's Puppet 7).
func DefaultConfFile() string {
	return filepath.Join(runMode(os.Geteuid() == 0, homeDir()).confdir, "puppet.conf")
}

// env is what the defaults depend on: root or not, the home directory,
// the working directory (relative paths), how to learn the host's FQDN.
type env struct {
	root bool
	home string
	cwd  string
	// sslOwned: /var/lib/puppet/ssl exists and belongs to this user (then
	// a non-root agent uses it, as Puppet).
	sslOwned bool
	fqdn     func() (hostname, domain string)
}

func homeDir() string {
	if h := os.Getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

func currentEnv() env {
	e := env{root: os.Geteuid() == 0, home: homeDir(), fqdn: hostFQDN}
	e.cwd, _ = os.Getwd()
	if st, err := os.Stat(systemSSLDir); err == nil {
		if s, ok := st.Sys().(*syscall.Stat_t); ok && int(s.Uid) == os.Geteuid() {
			e.sslOwned = true
		}
	}
	return e
}

const systemSSLDir = "/var/lib/puppet/ssl"

// hostFQDN is Facter 4's hostname and domain facts: the host name cut at
// its first dot; without a dot, the domain of the host name's canonical
// name (getaddrinfo's AI_CANONNAME: /etc/hosts, then DNS, bounded to 2 s
// here) when that is HOSTNAME.DOMAIN, else resolv.conf's domain or first
// search entry.
func hostFQDN() (string, string) {
	host, _ := os.Hostname()
	hostname, domain, _ := strings.Cut(host, ".")
	if domain == "" && hostname != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		cname, err := net.DefaultResolver.LookupCNAME(ctx, hostname)
		cancel()
		if cname = strings.TrimSuffix(cname, "."); err == nil && strings.HasPrefix(cname, hostname+".") {
			domain = cname[len(hostname)+1:]
		}
	}
	if domain == "" {
		b, _ := os.ReadFile("/etc/resolv.conf")
		domain = facts.ResolvDomain(b)
	}
	return hostname, domain
}

// modeDirs are the directories Puppet takes from the run mode.
type modeDirs struct{ confdir, codedir, vardir, publicdir, rundir, logdir, ssldir string }

// runMode is Debian's Puppet 7 UnixRunMode: system directories for root,
// ~/.puppet for anyone else.
func runMode(root bool, home string) modeDirs {
	if root {
		return modeDirs{"/etc/puppet", "/etc/puppet/code", "/var/cache/puppet", "/var/cache/puppet/public", "/run/puppet", "/var/log/puppet", systemSSLDir}
	}
	p := func(s string) string { return filepath.Join(home, ".puppet", s) }
	return modeDirs{p("etc"), p("code"), p("cache"), p("cache/public"), p("var/run"), p("var/log"), "$confdir/ssl"}
}

// Load reads confFile ([main], then [agent] overriding; the other
// applications' sections read past), applies Puppet's defaults for this
// user, interpolates, then applies overrides (the command line's settings,
// name -> value, as ParseArgs gives them) above everything. confFile ""
// is $confdir/puppet.conf, confdir being the override's or the default.
func Load(confFile string, overrides map[string]string) (*Settings, error) {
	return load(currentEnv(), confFile, overrides)
}

// source is where a setting's raw value came from.
type source struct {
	raw   string
	where string // "" for a default
}

type resolver struct {
	env    env
	conf   *confFile
	cli    map[string]string
	app    map[string]string
	values map[string]string // interpolated, munged, printed
	stack  []string          // the settings being interpolated
}

func load(e env, confFile string, overrides map[string]string) (*Settings, error) {
	cli := map[string]string{}
	var names []string
	for k := range overrides {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		name := strings.ReplaceAll(k, "-", "_")
		if byName[name] == nil {
			return nil, fmt.Errorf("--%s: no such setting", k)
		}
		// Puppet's ValueTranslator, as for puppet.conf (no file metadata).
		cli[name] = translateValue(overrides[k])
	}
	m := runMode(e.root, e.home)
	if !e.root && e.sslOwned {
		m.ssldir = systemSSLDir
	}
	app := map[string]string{
		"confdir": m.confdir, "codedir": m.codedir, "vardir": m.vardir, "publicdir": m.publicdir,
		"rundir": m.rundir, "logdir": m.logdir, "ssldir": m.ssldir,
	}
	if confFile == "" {
		switch {
		case cli["config"] != "":
			confFile = cli["config"]
		case cli["confdir"] != "":
			confFile = filepath.Join(cli["confdir"], "puppet.conf")
		default:
			confFile = filepath.Join(m.confdir, "puppet.conf")
		}
	}
	conf, err := readConf(confFile)
	if err != nil {
		return nil, err
	}
	r := &resolver{env: e, conf: conf, cli: cli, app: app, values: map[string]string{}}
	// Dynamic defaults: the host's FQDN for certname (Facter's hostname
	// and domain facts), its domain for srv_domain.
	hostname, domain := e.fqdn()
	fqdn := hostname
	if domain != "" {
		fqdn = hostname + "." + domain
	}
	app["certname"] = strings.ToLower(strings.TrimSuffix(fqdn, "."))
	app["srv_domain"] = domain
	app["http_user_agent"] = "Puppet/7.23.0 (pippet receiver agent)"

	s := &Settings{ConfFile: confFile, Values: map[string]string{}}
	for _, d := range defs {
		if _, err := r.get(d.name); err != nil {
			return nil, err
		}
	}
	for k, v := range r.values {
		s.Values[k] = v
	}
	for _, sec := range []string{"main", "agent"} {
		var unknown []string
		for k := range conf.sections[sec] {
			if byName[k] == nil {
				unknown = append(unknown, k)
			}
		}
		sort.Strings(unknown)
		for _, k := range unknown {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: unknown setting %q ignored", conf.where(conf.sections[sec][k]), k))
		}
	}
	if err := r.fill(s); err != nil {
		return nil, err
	}
	return s, nil
}

// lookup finds a setting's raw value: the command line, [agent], [main];
// set says one of them had it (not a default).
func (r *resolver) lookup(name string) (source, bool) {
	if src, ok := r.lookupOwn(name); ok {
		return src, true
	}
	d := byName[name]
	if d.kind == kAlias {
		return r.lookup(d.alias)
	}
	if v, ok := r.app[name]; ok {
		return source{raw: v}, false
	}
	return source{raw: d.def}, false
}

// lookupOwn finds a value set for name itself (not through an alias or
// a default).
func (r *resolver) lookupOwn(name string) (source, bool) {
	if v, ok := r.cli[name]; ok {
		return source{raw: v, where: "--" + name}, true
	}
	for _, sec := range []string{"agent", "main"} {
		if e, ok := r.conf.sections[sec][name]; ok {
			return source{raw: e.value, where: r.conf.where(e)}, true
		}
	}
	return source{}, false
}

// describe names a setting's source for an error.
func (s source) describe(name string) string {
	if s.where == "" {
		return "default of " + name
	}
	if strings.HasPrefix(s.where, "--") {
		return s.where
	}
	return s.where + ": " + name
}

var interp = regexp.MustCompile(`\$(\w+)|\$\{(\w+)\}`)

// get resolves a setting: lookup, interpolation, munging by type.
func (r *resolver) get(name string) (string, error) {
	if v, ok := r.values[name]; ok {
		return v, nil
	}
	d := byName[name]
	for i, n := range r.stack {
		if n == name {
			loop := append(append([]string(nil), r.stack[i:]...), name)
			// Name the loop from the setting a person set.
			for j := range loop[:len(loop)-1] {
				if _, own := r.lookupOwn(loop[j]); own {
					loop = append(loop[j:len(loop)-1], loop[:j+1]...)
					break
				}
			}
			src, _ := r.lookup(loop[0])
			return "", fmt.Errorf("%s: interpolation loop: %s", src.describe(loop[0]), strings.Join(loop, " -> $"))
		}
	}
	src, set := r.lookup(name)
	if d.kind == kAlias {
		if _, direct := r.lookupOwn(name); !direct {
			v, err := r.get(d.alias)
			if err == nil {
				r.values[name] = v
			}
			return v, err
		}
		d = byName[d.alias]
	}
	r.stack = append(r.stack, name)
	defer func() { r.stack = r.stack[:len(r.stack)-1] }()
	if !set && (name == "cadir" || name == "hiera_config") {
		raw, err := r.diskDefault(name)
		if err != nil {
			return "", err
		}
		src.raw = raw
	}
	var ierr error
	v := interp.ReplaceAllStringFunc(src.raw, func(m string) string {
		sub := interp.FindStringSubmatch(m)
		vn := sub[1] + sub[2]
		switch {
		case vn == "environment" && name != "config_version":
			return m // Puppet leaves $environment alone outside config_version
		case vn == "run_mode":
			return "agent"
		case byName[vn] == nil:
			if ierr == nil {
				ierr = fmt.Errorf("%s: could not find a value for %s", src.describe(name), m)
			}
			return m
		}
		pv, err := r.get(vn)
		if err != nil && ierr == nil {
			ierr = err
		}
		return pv
	})
	if ierr != nil {
		return "", ierr
	}
	out, err := r.munge(d, v)
	if err != nil {
		return "", fmt.Errorf("%s: %w", src.describe(name), err)
	}
	r.values[name] = out
	return out, nil
}

// diskDefault is the default of cadir and hiera_config, which depends on
// what exists: cadir is $ssldir/ca when that exists (its target when it is
// a symbolic link), else Puppet Server's /etc/puppet/puppetserver/ca;
// hiera_config is $codedir/hiera.yaml when that exists, else
// $confdir/hiera.yaml.
func (r *resolver) diskDefault(name string) (string, error) {
	if name == "cadir" {
		ssl, err := r.get("ssldir")
		if err != nil {
			return "", err
		}
		old := filepath.Join(ssl, "ca")
		st, err := os.Lstat(old)
		switch {
		case err != nil:
			return "/etc/puppet/puppetserver/ca", nil
		case st.Mode()&os.ModeSymlink != 0:
			if t, err := os.Readlink(old); err == nil {
				return t, nil
			}
		}
		return old, nil
	}
	code, err := r.get("codedir")
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(code, "hiera.yaml")); err == nil {
		return filepath.Join(code, "hiera.yaml"), nil
	}
	conf, err := r.get("confdir")
	if err != nil {
		return "", err
	}
	return filepath.Join(conf, "hiera.yaml"), nil
}

var (
	durationFormat = regexp.MustCompile(`^(\d+)([ydhms]?)$`)
	certnameFormat = regexp.MustCompile(`^[ -.0-~]+$`)
	envName        = regexp.MustCompile(`^\w+$`)
)

var unitSeconds = map[string]int64{"y": 365 * 24 * 60 * 60, "d": 24 * 60 * 60, "h": 60 * 60, "m": 60, "s": 1, "": 1}

// parseDuration is Puppet's duration syntax: digits and an optional unit
// (y, d, h, m, s); plain digits are seconds.
func parseDuration(v string) (int64, error) {
	m := durationFormat.FindStringSubmatch(v)
	if m == nil {
		return 0, fmt.Errorf("invalid duration %q (digits and an optional unit y, d, h, m or s: 30m, 1h, 2d, 90)", v)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || n > (1<<62)/unitSeconds[m[2]]/int64(time.Second) {
		return 0, fmt.Errorf("duration %q is too large", v)
	}
	return n * unitSeconds[m[2]], nil
}

// munge checks a value by its setting's type and returns it as Puppet's
// config print shows it.
func (r *resolver) munge(d *def, v string) (string, error) {
	switch d.kind {
	case kBool:
		switch v {
		case "true", "false":
			return v, nil
		}
		return "", fmt.Errorf("invalid value %q for a boolean (true or false)", v)
	case kDuration:
		if v == "" && d.def == "" {
			return "", nil
		}
		n, err := parseDuration(v)
		if err != nil {
			return "", err
		}
		return strconv.FormatInt(n, 10), nil
	case kTTL:
		if v == "unlimited" {
			return v, nil
		}
		n, err := parseDuration(v)
		if err != nil {
			return "", fmt.Errorf("%w, or unlimited", err)
		}
		return strconv.FormatInt(n, 10), nil
	case kInt, kPort:
		n, err := strconv.ParseInt(strings.TrimSpace(v), 0, 64)
		if err != nil {
			return "", fmt.Errorf("%q is not an integer", v)
		}
		if d.kind == kPort && (n < 1 || n > 65535) {
			return "", fmt.Errorf("%d is not a port number (1-65535)", n)
		}
		return strconv.FormatInt(n, 10), nil
	case kCertRev:
		switch v {
		case "chain", "true":
			return "chain", nil
		case "leaf", "false":
			return v, nil
		}
		return "", fmt.Errorf("invalid certificate_revocation %q: must be one of chain (or true), leaf, false", v)
	case kEnum:
		for _, a := range strings.Fields(d.values) {
			if v == a {
				return v, nil
			}
		}
		return "", fmt.Errorf("invalid value %q: allowed values are %s", v, strings.ReplaceAll(d.values, " ", ", "))
	case kFile:
		return r.expand(v), nil
	case kAutosign:
		if v == "true" || v == "false" {
			return v, nil
		}
		return r.expand(v), nil
	case kPath:
		if v == "" {
			return v, nil
		}
		parts := strings.Split(v, ":")
		for i, p := range parts {
			parts[i] = r.expand(p)
		}
		return strings.Join(parts, ":"), nil
	case kPriority:
		switch v {
		case "", "high", "normal", "low", "idle":
			return v, nil
		}
		if regexp.MustCompile(`\d`).MatchString(v) {
			return v, nil
		}
		return "", fmt.Errorf("invalid priority %q (a number, high, normal, low or idle)", v)
	}
	return v, nil
}

// expand is Ruby's File.expand_path: ~ is the home directory, a relative
// path is taken from the working directory. An empty value stays empty.
func (r *resolver) expand(p string) string {
	switch {
	case p == "":
		return ""
	case p == "~":
		return r.env.home
	case strings.HasPrefix(p, "~/"):
		return filepath.Join(r.env.home, p[2:])
	case !filepath.IsAbs(p):
		return filepath.Join(r.env.cwd, p)
	}
	return filepath.Clean(p)
}

// fill sets the struct's fields from the resolved values and checks the
// values Puppet refuses later in the run (certname, environment,
// server_list).
func (r *resolver) fill(s *Settings) error {
	v := r.values
	bad := func(name string, err error) error {
		src, _ := r.lookup(name)
		return fmt.Errorf("%s: %w", src.describe(name), err)
	}
	s.setByConfig = map[string]bool{}
	for _, d := range defs {
		if _, own := r.lookupOwn(d.name); own {
			s.setByConfig[d.name] = true
		}
	}
	s.Confdir, s.Codedir, s.Vardir, s.SSLDir = v["confdir"], v["codedir"], v["vardir"], v["ssldir"]
	s.Statedir, s.Rundir, s.Logdir, s.Publicdir = v["statedir"], v["rundir"], v["logdir"], v["publicdir"]
	s.ClientDataDir, s.Libdir, s.PluginFactDest = v["client_datadir"], v["plugindest"], v["pluginfactdest"]

	s.Certname = v["certname"]
	switch {
	case s.Certname == "":
		return bad("certname", errors.New("the certname is empty (and the host has no name to default to)"))
	case s.Certname != strings.ToLower(s.Certname):
		return bad("certname", fmt.Errorf("certificate names must be lower case: %q", s.Certname))
	case !certnameFormat.MatchString(s.Certname):
		return bad("certname", fmt.Errorf("certname %q must be printable ASCII without '/'", s.Certname))
	case s.Certname == "." || s.Certname == "..":
		return bad("certname", fmt.Errorf("certname %q is not a name", s.Certname))
	}

	s.Server = v["server"]
	s.ServerPort, _ = strconv.Atoi(v["serverport"])
	if sl := v["server_list"]; sl != "" {
		for _, item := range commaSplit.Split(strings.TrimSpace(sl), -1) {
			if item == "" {
				continue
			}
			host, port, hasPort := strings.Cut(item, ":")
			hp := HostPort{Host: host, Port: s.ServerPort}
			if hasPort {
				n, err := strconv.Atoi(port)
				if err != nil || n < 1 || n > 65535 {
					return bad("server_list", fmt.Errorf("%q: the port is not a number 1-65535", item))
				}
				hp.Port = n
			}
			if host == "" {
				return bad("server_list", fmt.Errorf("%q has no host", item))
			}
			s.ServerList = append(s.ServerList, hp)
		}
	}
	s.CAServer = v["ca_server"]
	s.CAPort, _ = strconv.Atoi(v["ca_port"])
	s.ReportServer = v["report_server"]
	s.ReportPort, _ = strconv.Atoi(v["report_port"])

	s.Environment = v["environment"]
	_, s.EnvironmentSet = r.lookup("environment")
	if !envName.MatchString(s.Environment) {
		return bad("environment", fmt.Errorf("%q is not an environment name (letters, digits and underscores)", s.Environment))
	}
	b := func(name string) bool { return v[name] == "true" }
	s.StrictEnvironmentMode = b("strict_environment_mode")
	s.Noop = b("noop")
	s.Tags, s.SkipTags = splitTags(v["tags"]), splitTags(v["skip_tags"])
	s.Report, s.Pluginsync, s.UseCacheOnFailure, s.UseCachedCatalog = b("report"), b("pluginsync"), b("usecacheonfailure"), b("use_cached_catalog")
	s.Splay, s.Daemonize, s.Onetime, s.ShowDiff = b("splay"), b("daemonize"), b("onetime"), b("show_diff")
	dur := func(name string) time.Duration {
		n, _ := strconv.ParseInt(v[name], 10, 64)
		return time.Duration(n) * time.Second
	}
	s.Runinterval, s.Splaylimit, s.Waitforcert = dur("runinterval"), dur("splaylimit"), dur("waitforcert")
	s.HTTPConnectTimeout, s.HTTPReadTimeout = dur("http_connect_timeout"), dur("http_read_timeout")
	ttl := func(name string) time.Duration {
		if v[name] == "unlimited" {
			return Unlimited
		}
		return dur(name)
	}
	s.Waitforlock, s.Maxwaitforlock, s.Maxwaitforcert = dur("waitforlock"), ttl("maxwaitforlock"), ttl("maxwaitforcert")
	s.Runtimeout, s.ResubmitFacts = dur("runtimeout"), b("resubmit_facts")
	s.CertificateRevocation = v["certificate_revocation"]
	s.Keylength, _ = strconv.Atoi(v["keylength"])
	if s.Keylength < 1024 || s.Keylength > 16384 {
		return bad("keylength", fmt.Errorf("%d is not an RSA key length (1024-16384)", s.Keylength))
	}
	s.LastRunFile, s.LastRunReport = v["lastrunfile"], v["lastrunreport"]
	s.CatalogRunLockfile, s.DisabledLockfile = r.expand(v["agent_catalog_run_lockfile"]), r.expand(v["agent_disabled_lockfile"])
	s.CSRAttributes = v["csr_attributes"]
	for _, n := range commaSplit.Split(strings.TrimSpace(v["dns_alt_names"]), -1) {
		if n != "" {
			s.DNSAltNames = append(s.DNSAltNames, n)
		}
	}
	return nil
}

// splitTags splits a tags setting on commas, lowercased, empty entries
// dropped.
func splitTags(v string) []string {
	var out []string
	for _, t := range commaSplit.Split(strings.TrimSpace(v), -1) {
		if t = strings.ToLower(strings.TrimSpace(t)); t != "" {
			out = append(out, t)
		}
	}
	return out
}
