package facts

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pippet/pippet/internal/osfacts"
)

// FacterVersion is the Facter release whose output Gather emulates.
const FacterVersion = "4.3.0"

// DefaultExternalDirs are Facter's facts.d directories, read in this order
// (a later directory's fact wins, as in Facter).
var DefaultExternalDirs = []string{
	"/opt/puppetlabs/facter/facts.d",
	"/etc/facter/facts.d",
	"/etc/puppetlabs/facter/facts.d",
}

// Options tune Gather. The zero value gathers this machine's facts with
// Facter's external directories.
type Options struct {
	// Root is where /etc, /proc and /sys are read from ("" or "/": the
	// machine). Tests point it at a fake tree; the interface table,
	// identity, PATH and time zone always come from the running process.
	Root string
	// ExternalDirs are the facts.d directories; nil means
	// DefaultExternalDirs, an empty non-nil slice means none.
	ExternalDirs []string
	// ScriptTimeout bounds each executable external fact (default 10s).
	ScriptTimeout time.Duration
	// MaxOutput bounds what an executable external fact may print
	// (default 1 MiB); beyond it the script is killed and its facts dropped.
	MaxOutput int
	// HideLegacy leaves out Facter's legacy core facts (IsLegacy), as
	// `facter --json` does without --show-legacy.
	HideLegacy bool
	// Env is consulted for PATH and FACTER_* overrides; nil means os.Environ.
	Env []string
	// CustomDirs are custom (Ruby) fact directories, Puppet's factpath:
	// the facts of their *.rb files are evaluated by Facter where it is
	// installed (LoadCustom). nil: none.
	CustomDirs []string
	// Ruby is the Ruby that runs Facter for the custom facts ("": the
	// all-in-one agent's, else ruby on PATH).
	Ruby string
	// CustomTimeout bounds Facter's evaluation of the custom facts
	// (default DefaultCustomTimeout).
	CustomTimeout time.Duration
	// Evaluate, when not nil, evaluates the custom facts instead of a
	// Facter process of their own (an agent's Puppet, already running);
	// when it fails, the error is one of Gather's and the process
	// evaluates them after all.
	Evaluate Evaluator
	// NoNative has Facter evaluate every custom fact file, the known
	// ones too (package native resolves those otherwise).
	NoNative bool
	// DefaultProvider answers which provider Puppet would choose for a
	// type, for the known fact files that ask (stdlib's
	// package_provider, service_provider); nil: those files go to
	// Facter.
	DefaultProvider func(typ string) (string, error)
	// Puppet are Puppet's settings as the run has them (vardir,
	// environmentpath, server), for the known fact files that read them
	// (stdlib's puppet_settings); a file that reads one missing here goes
	// to Facter.
	Puppet map[string]string
	// CommandTimeout bounds each command a natively resolved custom fact
	// runs (default native.DefaultCommandTimeout).
	CommandTimeout time.Duration
	// Core are the core facts gathered ahead with the same Options
	// (Core): Gather takes them instead of gathering them again; nil:
	// gathered now.
	Core *CoreFacts
	// Names is how hostname, domain and fqdn are learnt (HostNames);
	// nil: SystemNames. With Root set, Root's /etc/hostname and
	// resolv.conf, without a lookup.
	Names *Names
	// FacterConf is the facter.conf whose facts.ttls Gather honours, as
	// Facter does (cache.go): "" is Facter's (the first of
	// FacterLocations that exists; none with Root set), "-" none.
	FacterConf string
	// CacheDir is the fact cache's directory: "" is that of Facter's
	// location (/var/cache/facter/facts for Debian's Facter).
	CacheDir string
	// NoCache neither reads nor writes the fact cache (facter
	// --no-cache).
	NoCache bool

	// cache is the fact cache of the gathering under way.
	cache *factCache
}

// UseVardir adds what the agent's pluginsync brought into vardir, as
// Puppet's agent hands it to Facter: VARDIR/facts.d (pluginfactdest)
// read after the other external directories (its facts win), and
// VARDIR/lib/facter and VARDIR/facts (the factpath) as custom fact
// directories.
func (o *Options) UseVardir(vardir string) {
	if o.ExternalDirs == nil {
		o.ExternalDirs = append([]string(nil), DefaultExternalDirs...)
	}
	o.ExternalDirs = append(o.ExternalDirs, filepath.Join(vardir, "facts.d"))
	o.CustomDirs = append(o.CustomDirs, filepath.Join(vardir, "lib", "facter"), filepath.Join(vardir, "facts"))
}

// Facts maps top-level fact names to values.
type Facts map[string]any

// Get looks up a dotted path (os.release.major) in f.
func (f Facts) Get(path string) (any, bool) {
	var cur any = map[string]any(f)
	for _, p := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// CoreFacts are the core facts gathered ahead (Core).
type CoreFacts struct {
	f    Facts
	errs []error
}

// Core gathers the core facts alone, as Gather would with o: an agent
// gathers them while pluginsync runs, for Gather to take
// (Options.Core); nothing of what pluginsync brings (external and
// custom facts) is read.
func Core(ctx context.Context, o Options) *CoreFacts {
	g := gatherCore(ctx, o)
	return &CoreFacts{f: g.f, errs: g.errs}
}

// gatherCore gathers the core facts (o.HideLegacy honoured).
func gatherCore(ctx context.Context, o Options) *gatherer {
	g := &gatherer{ctx: ctx, names: SystemNames(), root: strings.TrimSuffix(o.Root, "/"), f: Facts{}}
	if o.Names != nil {
		g.names = *o.Names
	}
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	g.osFacts()
	g.kernelFacts()
	g.networkFacts()
	g.processorFacts()
	g.memoryFacts()
	g.identityFacts()
	g.uptimeFacts()
	g.f["timezone"], _ = time.Now().Zone()
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			g.f["path"] = v
		}
	}
	g.f["facterversion"] = FacterVersion
	if v := puppetVersion(g.read); v != "" {
		g.f["puppetversion"] = v
	}
	g.virtualFacts()
	g.sshFacts()
	g.miscFacts()
	g.storageFacts()
	return g
}

// Gather collects the core and external facts. The errors are about
// single facts or external fact files (each names what it is about); the
// facts gathered despite them are returned.
func Gather(ctx context.Context, o Options) (Facts, []error) {
	var g *gatherer
	if o.Core != nil {
		g = &gatherer{ctx: ctx, root: strings.TrimSuffix(o.Root, "/"), f: make(Facts, len(o.Core.f)+64)}
		for k, v := range o.Core.f {
			g.f[k] = v
		}
		g.errs = append(g.errs, o.Core.errs...)
	} else {
		g = gatherCore(ctx, o)
	}

	// The core facts' names, legacy ones included, as custom facts
	// named like them are warned about.
	coreNames := map[string]bool{}
	for k := range g.f {
		coreNames[k] = true
	}
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	dirs := o.ExternalDirs
	if dirs == nil {
		dirs = DefaultExternalDirs
		if g.root != "" {
			dirs = nil
			for _, d := range DefaultExternalDirs {
				dirs = append(dirs, g.root+d)
			}
		}
	}
	cache, errs := openCache(o, dirs, false)
	g.errs = append(g.errs, errs...)
	o.cache = cache
	var hook *extHook
	if cache != nil {
		cache.core(g.f)
		hook = cache.externalHook()
	}
	if o.HideLegacy {
		for k := range g.f {
			if IsLegacy(k) {
				delete(g.f, k)
			}
		}
	}
	ext, errs := loadExternal(ctx, dirs, o.ScriptTimeout, o.MaxOutput, hook)
	g.errs = append(g.errs, errs...)
	if cache != nil {
		cache.recordCore(g.f, ext)
	}
	for k, v := range ext {
		g.f[k] = v
	}
	overrides := Facts{}
	// FACTER_name=value in the environment overrides everything, as in Facter.
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if n, isFact := strings.CutPrefix(k, "FACTER_"); ok && isFact && n != "" {
			overrides[strings.ToLower(n)] = v
		}
	}
	seen := g.f // what the custom facts see of the others
	if cache != nil {
		seen = cache.withSkipped(o, g.f)
	}
	custom, weights, errs := gatherCustom(ctx, o, seen, ext, overrides, coreNames)
	g.errs = append(g.errs, errs...)
	if cache != nil {
		custom, weights = cache.customFacts(custom, weights)
		g.errs = append(g.errs, cache.errs...)
		g.errs = append(g.errs, cache.flush(ctx)...)
	}
	mergeCustom(g.f, custom, weights, ext)
	for k, v := range overrides {
		g.f[k] = v
	}
	return g.f, g.errs
}

type gatherer struct {
	ctx   context.Context
	names Names
	root  string
	f     Facts
	errs  []error
}

func (g *gatherer) read(p string) []byte {
	b, _ := os.ReadFile(g.root + p)
	return b
}

func (g *gatherer) readString(p string) string { return strings.TrimSpace(string(g.read(p))) }

func (g *gatherer) osFacts() {
	osr := osfacts.ParseOSRelease(g.read("/etc/os-release"))
	if len(osr) == 0 {
		osr = osfacts.ParseOSRelease(g.read("/usr/lib/os-release"))
	}
	id := strings.ToLower(osr["ID"])
	name := osfacts.OSName(id, osr["NAME"])
	family := osfacts.OSFamily(id, strings.Fields(strings.ToLower(osr["ID_LIKE"])), name)
	full := osr["VERSION_ID"]
	if id == "debian" {
		if dv := g.readString("/etc/debian_version"); dv != "" && dv[0] >= '0' && dv[0] <= '9' {
			full = dv
		}
	}
	major, minor := osfacts.SplitRelease(full)
	hardware := osfacts.HardwareModel(runtime.GOARCH)
	arch := osfacts.Architecture(family, runtime.GOARCH)
	rel := map[string]any{"full": full, "major": major}
	if minor != "" {
		rel["minor"] = minor
	}
	o := map[string]any{
		"name": name, "family": family, "hardware": hardware, "architecture": arch,
		"selinux": map[string]any{"enabled": g.selinuxEnabled()},
	}
	if full != "" {
		o["release"] = rel
	}
	distro := map[string]any{"id": name}
	if c := osr["VERSION_CODENAME"]; c != "" {
		distro["codename"] = c
	}
	if d := osr["PRETTY_NAME"]; d != "" {
		distro["description"] = d
	}
	if full != "" {
		distro["release"] = map[string]any{"full": full, "major": major, "minor": minor}
		if minor == "" {
			delete(distro["release"].(map[string]any), "minor")
		}
	}
	o["distro"] = distro
	g.f["os"] = o
	g.f["osfamily"] = family
	g.f["operatingsystem"] = name
	g.f["architecture"] = arch
	g.f["hardwaremodel"] = hardware
	g.f["hardwareisa"] = isa(family, hardware)
	g.f["selinux"] = o["selinux"].(map[string]any)["enabled"]
	if full != "" {
		g.f["operatingsystemrelease"] = full
		g.f["operatingsystemmajrelease"] = major
		g.f["lsbdistrelease"] = full
		g.f["lsbmajdistrelease"] = major
		if minor != "" {
			g.f["lsbminordistrelease"] = minor
		}
	}
	g.f["lsbdistid"] = name
	if v, ok := distro["codename"]; ok {
		g.f["lsbdistcodename"] = v
	}
	if v, ok := distro["description"]; ok {
		g.f["lsbdistdescription"] = v
	}
}

// isa is what `uname -p` prints, which Facter reports: Debian's coreutils
// print "unknown", Red Hat's patched one the machine.
func isa(family, hardware string) string {
	if family == "RedHat" || family == "Suse" {
		return hardware
	}
	return "unknown"
}

func (g *gatherer) selinuxEnabled() bool {
	for _, line := range strings.Split(string(g.read("/proc/self/mounts")), "\n") {
		if fs := strings.Fields(line); len(fs) > 2 && fs[2] == "selinuxfs" {
			return true
		}
	}
	return false
}

func (g *gatherer) kernelFacts() {
	kernel := g.readString("/proc/sys/kernel/ostype")
	if kernel == "" {
		kernel = strings.ToUpper(runtime.GOOS[:1]) + runtime.GOOS[1:]
	}
	g.f["kernel"] = kernel
	rel := g.readString("/proc/sys/kernel/osrelease")
	if rel == "" {
		return
	}
	version, _, _ := strings.Cut(rel, "-")
	g.f["kernelrelease"] = rel
	g.f["kernelversion"] = version
	parts := strings.SplitN(version, ".", 3)
	if len(parts) >= 2 {
		g.f["kernelmajversion"] = parts[0] + "." + parts[1]
	} else {
		g.f["kernelmajversion"] = version
	}
}

// Meminfo is what ParseMeminfo reads, in bytes.
type Meminfo struct {
	Total, Available, SwapTotal, SwapFree uint64
}

// ParseMeminfo reads /proc/meminfo as Facter does: available is
// MemAvailable, or MemFree+Buffers+Cached on kernels without it.
func ParseMeminfo(b []byte) (Meminfo, error) {
	kv := map[string]uint64{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		fs := strings.Fields(v)
		if len(fs) == 0 {
			continue
		}
		n, err := strconv.ParseUint(fs[0], 10, 64)
		if err != nil || n > math.MaxUint64/1024 {
			continue
		}
		kv[k] = n * 1024
	}
	t, ok := kv["MemTotal"]
	if !ok {
		return Meminfo{}, fmt.Errorf("meminfo: no MemTotal line")
	}
	m := Meminfo{Total: t, SwapTotal: kv["SwapTotal"], SwapFree: kv["SwapFree"]}
	if a, ok := kv["MemAvailable"]; ok {
		m.Available = a
	} else {
		m.Available = kv["MemFree"] + kv["Buffers"] + kv["Cached"]
	}
	if m.Available > m.Total {
		m.Available = m.Total
	}
	if m.SwapFree > m.SwapTotal {
		m.SwapFree = m.SwapTotal
	}
	return m, nil
}

func (g *gatherer) memoryFacts() {
	m, err := ParseMeminfo(g.read("/proc/meminfo"))
	if err != nil {
		g.errs = append(g.errs, fmt.Errorf("memory: %w", err))
		return
	}
	mem := map[string]any{"system": memBlock(m.Total, m.Available)}
	g.f["memorysize"] = BytesToHuman(m.Total)
	g.f["memoryfree"] = BytesToHuman(m.Available)
	g.f["memorysize_mb"] = float64(m.Total) / (1 << 20)
	g.f["memoryfree_mb"] = float64(m.Available) / (1 << 20)
	if m.SwapTotal > 0 {
		mem["swap"] = memBlock(m.SwapTotal, m.SwapFree)
		g.f["swapsize"] = BytesToHuman(m.SwapTotal)
		g.f["swapfree"] = BytesToHuman(m.SwapFree)
		g.f["swapsize_mb"] = float64(m.SwapTotal) / (1 << 20)
		g.f["swapfree_mb"] = float64(m.SwapFree) / (1 << 20)
	}
	g.f["memory"] = mem
}

func memBlock(total, avail uint64) map[string]any {
	used := total - avail
	return map[string]any{
		"total": BytesToHuman(total), "total_bytes": total,
		"available": BytesToHuman(avail), "available_bytes": avail,
		"used": BytesToHuman(used), "used_bytes": used,
		"capacity": fmt.Sprintf("%.2f%%", float64(used)/float64(total)*100),
	}
}

// BytesToHuman formats a size as Facter does: "1020.31 MiB", "23.54 GiB".
func BytesToHuman(b uint64) string {
	if b < 1024 {
		return fmt.Sprintf("%d bytes", b)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	exp := int(math.Floor(math.Log2(float64(b)) / 10))
	n := math.Round(100*float64(b)/math.Pow(1024, float64(exp))) / 100
	if math.Abs(n-1024) < 1e-9 {
		exp++
		n = 1
	}
	return fmt.Sprintf("%.2f %s", n, units[exp-1])
}

// CPUInfo is what ParseCPUInfo reads.
type CPUInfo struct {
	Count      int
	Models     []string
	Physical   int   // distinct physical ids (0 when the file has none)
	SpeedHz    int64 // the last "cpu MHz" line, whole MHz, as Facter reads it
	CoresPerPk int   // "cpu cores"
	Siblings   int   // "siblings": threads per package
}

// ParseCPUInfo reads /proc/cpuinfo as Facter does.
func ParseCPUInfo(b []byte) CPUInfo {
	var c CPUInfo
	phys := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "processor":
			c.Count++
		case "model name", "cpu":
			c.Models = append(c.Models, v)
		case "physical id":
			phys[v] = true
		case "cpu MHz", "clock":
			num := v
			if i := strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
				num = v[:i]
			}
			if n, err := strconv.ParseInt(num, 10, 64); err == nil {
				c.SpeedHz = n * 1_000_000
			}
		case "cpu cores":
			c.CoresPerPk, _ = strconv.Atoi(v)
		case "siblings":
			c.Siblings, _ = strconv.Atoi(v)
		}
	}
	c.Physical = len(phys)
	return c
}

// HertzToHuman formats a frequency as Facter does: "2.60 GHz".
func HertzToHuman(hz int64) string {
	v := float64(hz)
	prefixes := []string{"", "k", "M", "G", "T"}
	i := 0
	for v >= 1000 && i < len(prefixes)-1 {
		v /= 1000
		i++
	}
	return fmt.Sprintf("%.2f %sHz", math.Round(v*100)/100, prefixes[i])
}

func (g *gatherer) processorFacts() {
	c := ParseCPUInfo(g.read("/proc/cpuinfo"))
	if c.Count == 0 {
		c.Count = runtime.NumCPU()
	}
	phys := c.Physical
	if phys == 0 {
		seen := map[string]bool{}
		ds, _ := filepath.Glob(g.root + "/sys/devices/system/cpu/cpu[0-9]*/topology/physical_package_id")
		for _, d := range ds {
			b, _ := os.ReadFile(d)
			seen[strings.TrimSpace(string(b))] = true
		}
		phys = len(seen)
	}
	models := make([]any, len(c.Models))
	for i, m := range c.Models {
		models[i] = m
	}
	p := map[string]any{
		"count": c.Count, "physicalcount": phys, "models": models,
		"isa": g.f["hardwareisa"],
	}
	if c.SpeedHz > 0 {
		p["speed"] = HertzToHuman(c.SpeedHz)
	}
	if c.CoresPerPk > 0 {
		p["cores"] = c.CoresPerPk
		if c.Siblings > 0 {
			p["threads"] = c.Siblings / c.CoresPerPk
		}
	}
	g.f["processors"] = p
	g.f["processorcount"] = c.Count
	g.f["physicalprocessorcount"] = phys
	for i, m := range c.Models {
		g.f["processor"+strconv.Itoa(i)] = m
	}
}

func (g *gatherer) identityFacts() {
	uid, gid := os.Getuid(), os.Getgid()
	id := map[string]any{"uid": uid, "gid": gid, "privileged": uid == 0}
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		id["user"] = u.Username
		g.f["id"] = u.Username
	}
	if gr, err := user.LookupGroupId(strconv.Itoa(gid)); err == nil {
		id["group"] = gr.Name
		g.f["gid"] = gr.Name
	}
	g.f["identity"] = id
}

// Uptime is Facter's system_uptime for a number of seconds.
func Uptime(seconds int64) map[string]any {
	hours := seconds / 3600
	days := hours / 24
	minutes := (seconds / 60) % 60
	var text string
	switch days {
	case 0:
		text = fmt.Sprintf("%d:%02d hours", hours, minutes)
	case 1:
		text = "1 day"
	default:
		text = fmt.Sprintf("%d days", days)
	}
	return map[string]any{"seconds": seconds, "hours": hours, "days": days, "uptime": text}
}

func (g *gatherer) uptimeFacts() {
	fs := strings.Fields(string(g.read("/proc/uptime")))
	if len(fs) == 0 {
		return
	}
	s, err := strconv.ParseFloat(fs[0], 64)
	if err != nil || s < 0 || s > math.MaxInt64/2 {
		g.errs = append(g.errs, fmt.Errorf("system_uptime: /proc/uptime: bad value %q", fs[0]))
		return
	}
	u := Uptime(int64(s))
	g.f["system_uptime"] = u
	g.f["uptime"] = u["uptime"]
	g.f["uptime_seconds"] = u["seconds"]
	g.f["uptime_hours"] = u["hours"]
	g.f["uptime_days"] = u["days"]
}

var puppetVersionRE = regexp.MustCompile(`PUPPETVERSION\s*=\s*['"]([^'"]+)['"]`)

// puppetVersion reads Puppet's version from its source (Debian's package,
// then the all-in-one agent's), without starting Ruby; "" when Puppet is
// not installed.
func puppetVersion(read func(string) []byte) string {
	for _, p := range []string{
		"/usr/lib/ruby/vendor_ruby/puppet/version.rb",
		"/opt/puppetlabs/puppet/lib/ruby/vendor_ruby/puppet/version.rb",
	} {
		if m := puppetVersionRE.FindSubmatch(read(p)); m != nil {
			return string(m[1])
		}
	}
	return ""
}

// virtualFacts is the cheap part of Facter's virtual: containers by their
// marker files, hypervisors by DMI's product and vendor names.
func (g *gatherer) virtualFacts() {
	v := "physical"
	dmi := strings.ToLower(g.readString("/sys/class/dmi/id/product_name") + " " + g.readString("/sys/class/dmi/id/sys_vendor"))
	switch {
	case g.exists("/.dockerenv"):
		v = "docker"
	case g.exists("/run/.containerenv"):
		v = "podman"
	case strings.Contains(dmi, "vmware"):
		v = "vmware"
	case strings.Contains(dmi, "virtualbox"):
		v = "virtualbox"
	case strings.Contains(dmi, "kvm"), strings.Contains(dmi, "qemu"):
		v = "kvm"
	case strings.Contains(dmi, "google"):
		v = "gce"
	case strings.Contains(dmi, "microsoft"):
		v = "hyperv"
	case strings.Contains(dmi, "xen"):
		v = "xenhvm"
	case strings.Contains(strings.ToLower(g.readString("/sys/hypervisor/type")), "xen"):
		v = "xen"
	case bytes.Contains(g.read("/proc/cpuinfo"), []byte(" hypervisor")):
		v = "kvm" // a hypervisor with no DMI tables: firecracker, cloud-hypervisor
	}
	g.f["virtual"] = v
	g.f["is_virtual"] = v != "physical"
}

func (g *gatherer) exists(p string) bool {
	_, err := os.Lstat(g.root + p)
	return err == nil
}

// inet6 is one line of /proc/net/if_inet6.
type inet6 struct {
	ip     net.IP
	prefix int
	scope  string
	flags  []any
}

var inet6Flags = []struct {
	name string
	bit  uint64
}{
	{"temporary", 0x01}, {"noad", 0x02}, {"optimistic", 0x04}, {"dadfailed", 0x08},
	{"homeaddress", 0x10}, {"deprecated", 0x20}, {"tentative", 0x40}, {"permanent", 0x80},
}

// ParseIfInet6 reads /proc/net/if_inet6: per interface, its IPv6
// addresses in the kernel's order with scope and flags.
func ParseIfInet6(b []byte) map[string][]inet6 {
	out := map[string][]inet6{}
	for _, line := range strings.Split(string(b), "\n") {
		fs := strings.Fields(line)
		if len(fs) != 6 || len(fs[0]) != 32 {
			continue
		}
		raw, err := hex.DecodeString(fs[0])
		if err != nil {
			continue
		}
		prefix, err1 := strconv.ParseUint(fs[2], 16, 8)
		scope, err2 := strconv.ParseUint(fs[3], 16, 8)
		flags, err3 := strconv.ParseUint(fs[4], 16, 32)
		if err1 != nil || err2 != nil || err3 != nil || prefix > 128 {
			continue
		}
		a := inet6{ip: net.IP(raw), prefix: int(prefix), flags: []any{}}
		switch scope {
		case 0x00:
			a.scope = "global"
		case 0x10:
			a.scope = "host"
		case 0x20:
			a.scope = "link"
		case 0x40:
			a.scope = "site"
		case 0x80:
			a.scope = "compat"
		default:
			a.scope = "global"
		}
		for _, f := range inet6Flags {
			if flags&f.bit != 0 {
				a.flags = append(a.flags, f.name)
			}
		}
		out[fs[5]] = append(out[fs[5]], a)
	}
	return out
}

// PrimaryInterface is the interface of the first default route in
// /proc/net/route.
func PrimaryInterface(b []byte) string {
	for i, line := range strings.Split(string(b), "\n") {
		fs := strings.Fields(line)
		if i == 0 || len(fs) < 8 {
			continue
		}
		if fs[1] == "00000000" && fs[7] == "00000000" {
			return fs[0]
		}
	}
	return ""
}

func ignoredIP(a string) bool {
	return a == "" || strings.HasPrefix(a, "127.") || strings.HasPrefix(a, "fe80")
}

func (g *gatherer) networkFacts() {
	n := map[string]any{}
	nn := g.names
	if g.root != "" {
		// Another system's files: its /etc/hostname, no lookup.
		nn = Names{
			Hostname:   func() (string, error) { return g.readString("/etc/hostname"), nil },
			CanonName:  func(context.Context, string) (string, error) { return "", errors.New("no lookup in another root") },
			ResolvConf: func() ([]byte, error) { return g.read("/etc/resolv.conf"), nil },
		}
	}
	hostname, domain, fqdn := HostNames(g.ctx, nn)
	if domain != "" {
		n["domain"] = domain
		g.f["domain"] = domain
	}
	n["hostname"], n["fqdn"] = hostname, fqdn
	g.f["hostname"], g.f["fqdn"] = hostname, fqdn

	ifaces, err := net.Interfaces()
	if err != nil {
		g.errs = append(g.errs, fmt.Errorf("networking: %w", err))
	}
	v6 := ParseIfInet6(g.read("/proc/net/if_inet6"))
	all := map[string]any{}
	names := []string{}
	for _, ifc := range ifaces {
		m := map[string]any{"mtu": ifc.MTU}
		g.f["mtu_"+ifc.Name] = ifc.MTU
		if len(ifc.HardwareAddr) > 0 {
			m["mac"] = ifc.HardwareAddr.String()
			g.f["macaddress_"+ifc.Name] = m["mac"]
		}
		var b4 []map[string]any
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok || ipn.IP.To4() == nil {
				continue
			}
			b4 = append(b4, map[string]any{
				"address": ipn.IP.String(), "netmask": net.IP(ipn.Mask).String(),
				"network": ipn.IP.Mask(ipn.Mask).String(),
			})
		}
		var b6 []map[string]any
		for _, a := range v6[ifc.Name] {
			mask := net.CIDRMask(a.prefix, 128)
			b6 = append(b6, map[string]any{
				"address": a.ip.String(), "netmask": net.IP(mask).String(),
				"network": a.ip.Mask(mask).String(), "scope6": a.scope, "flags": a.flags,
			})
		}
		if b := pick(b4); b != nil {
			m["bindings"] = anySlice(b4)
			m["ip"], m["netmask"], m["network"] = b["address"], b["netmask"], b["network"]
			g.f["ipaddress_"+ifc.Name], g.f["netmask_"+ifc.Name], g.f["network_"+ifc.Name] = b["address"], b["netmask"], b["network"]
		}
		if b := pick(b6); b != nil {
			m["bindings6"] = anySlice(b6)
			m["ip6"], m["netmask6"], m["network6"], m["scope6"] = b["address"], b["netmask"], b["network"], b["scope6"]
			g.f["ipaddress6_"+ifc.Name], g.f["netmask6_"+ifc.Name], g.f["network6_"+ifc.Name], g.f["scope6_"+ifc.Name] = b["address"], b["netmask"], b["network"], b["scope6"]
		}
		all[ifc.Name] = m
		names = append(names, ifc.Name)
	}
	n["interfaces"] = all
	sort.Strings(names)
	if len(names) > 0 {
		g.f["interfaces"] = strings.Join(names, ",")
	}
	primary := PrimaryInterface(g.read("/proc/net/route"))
	if _, ok := all[primary]; !ok {
		primary = ""
		for _, name := range names { // Facter's fallback: the first with a usable IPv4 address
			if ip, ok := all[name].(map[string]any)["ip"].(string); ok && !ignoredIP(ip) {
				primary = name
				break
			}
		}
	}
	if primary != "" {
		n["primary"] = primary
		for _, k := range []string{"ip", "ip6", "mac", "mtu", "netmask", "netmask6", "network", "network6", "scope6"} {
			if v, ok := all[primary].(map[string]any)[k]; ok {
				n[k] = v
			}
		}
		for legacy, k := range map[string]string{"ipaddress": "ip", "ipaddress6": "ip6", "macaddress": "mac", "netmask": "netmask", "netmask6": "netmask6", "network": "network", "network6": "network6", "scope6": "scope6"} {
			if v, ok := n[k]; ok {
				g.f[legacy] = v
			}
		}
	}
	g.f["networking"] = n
}

// pick is Facter's choice of an interface's address: the first that is
// not loopback or link-local, else the first.
func pick(bs []map[string]any) map[string]any {
	for _, b := range bs {
		if !ignoredIP(b["address"].(string)) {
			return b
		}
	}
	if len(bs) > 0 {
		return bs[0]
	}
	return nil
}

func anySlice(bs []map[string]any) []any {
	out := make([]any, len(bs))
	for i, b := range bs {
		out[i] = b
	}
	return out
}

// legacyNames are Facter's legacy facts (hidden by `facter --json`
// without --show-legacy) that Gather produces; legacyPrefixes are the
// per-interface, per-processor and per-key families.
var legacyNames = map[string]bool{
	"architecture": true, "domain": true, "fqdn": true, "hostname": true, "gid": true, "id": true,
	"hardwareisa": true, "hardwaremodel": true, "interfaces": true, "ipaddress": true, "ipaddress6": true,
	"macaddress": true, "netmask": true, "netmask6": true, "network": true, "network6": true, "scope6": true,
	"lsbdistcodename": true, "lsbdistdescription": true, "lsbdistid": true, "lsbdistrelease": true,
	"lsbmajdistrelease": true, "lsbminordistrelease": true, "memoryfree": true, "memoryfree_mb": true,
	"memorysize": true, "memorysize_mb": true, "swapfree": true, "swapfree_mb": true, "swapsize": true,
	"swapsize_mb": true, "operatingsystem": true, "operatingsystemmajrelease": true,
	"operatingsystemrelease": true, "osfamily": true, "physicalprocessorcount": true, "processorcount": true,
	"selinux": true, "uptime": true, "uptime_days": true, "uptime_hours": true, "uptime_seconds": true,
	"sshdsakey": true, "sshecdsakey": true, "sshed25519key": true, "sshrsakey": true,
}

var legacyPrefixes = []string{
	"ipaddress_", "ipaddress6_", "macaddress_", "mtu_", "netmask_", "netmask6_", "network_", "network6_",
	"scope6_", "sshfp_",
}

// IsLegacy says whether name is one of Facter's legacy core facts, which
// `facter --json` shows only with --show-legacy (Puppet's agent sends them).
func IsLegacy(name string) bool {
	if legacyNames[name] || storageLegacy(name) {
		return true
	}
	for _, p := range legacyPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(name, "processor"); ok && rest != "" {
		_, err := strconv.Atoi(rest)
		return err == nil
	}
	return false
}
