package facts

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The facts of this file are those Facter 4 gives from the disks, the
// mounts, the hypervisor, the DHCP leases, Augeas and Ruby, read as
// Facter reads them (its resolvers disks, mountpoints, lspci, networking's
// dhcp, augeas and ruby), without starting Ruby:
//
//   - disks: every /sys/block entry with a device, its size (512-byte
//     sectors), vendor, model and type (rotational: hdd, else ssd);
//     serial and wwn from lsblk, as Facter asks it; the legacy
//     blockdevices and blockdevice_NAME_{size,vendor,model};
//   - mountpoints: /proc/mounts (not /proc and /sys but tmpfs, not
//     autofs; a path mounted twice is its last mount), statfs's figures;
//   - hypervisors: kvm (virtio PCI devices, which lspci names Virtio, or
//     DMI's KVM product; its provider by DMI's vendor);
//   - dhcp_servers: the server of each interface's lease (systemd-networkd,
//     dhclient), system the primary interface's;
//   - augeas, augeasversion: `augparse --version`;
//   - ruby, rubyversion, rubyplatform, rubysitedir: the rbconfig.rb of the
//     Ruby Puppet runs with, where one is installed.

// storageLegacy are this file's legacy facts, which `facter --json`
// shows only with --show-legacy.
func storageLegacy(name string) bool {
	switch name {
	case "blockdevices", "augeasversion", "dhcp_servers", "rubyversion", "rubyplatform", "rubysitedir":
		return true
	}
	return strings.HasPrefix(name, "blockdevice_")
}

// storageFacts gathers this file's facts.
func (g *gatherer) storageFacts() {
	g.diskFacts()
	g.mountFacts()
	g.hypervisorFacts()
	g.dhcpFacts()
	g.augeasFacts()
	g.rubyFacts()
}

func (g *gatherer) diskFacts() {
	dir := g.root + "/sys/block"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	disks := map[string]any{}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if _, err := os.Stat(filepath.Join(dir, name, "device")); err != nil {
			continue
		}
		d := map[string]any{}
		if s := g.readString("/sys/block/" + name + "/device/model"); s != "" {
			d["model"] = s
		}
		if s := g.readString("/sys/block/" + name + "/size"); s != "" {
			if n, err := strconv.ParseUint(s, 10, 64); err == nil {
				d["size_bytes"] = n * 512
				d["size"] = BytesToHuman(n * 512)
			}
		}
		if s := g.readString("/sys/block/" + name + "/device/vendor"); s != "" {
			d["vendor"] = s
		}
		if s := g.readString("/sys/block/" + name + "/queue/rotational"); s != "" {
			if s == "0" {
				d["type"] = "ssd"
			} else {
				d["type"] = "hdd"
			}
		}
		for _, k := range []string{"serial", "wwn"} {
			if v := g.lsblk(k, name); v != "" {
				d[k] = v
			}
		}
		disks[name] = d
		names = append(names, name)
	}
	if len(disks) == 0 {
		return
	}
	g.f["disks"] = disks
	g.f["blockdevices"] = strings.Join(names, ",")
	for _, name := range names {
		d := disks[name].(map[string]any)
		for _, k := range []struct{ legacy, key string }{{"model", "model"}, {"size", "size_bytes"}, {"vendor", "vendor"}} {
			if v, ok := d[k.key]; ok {
				g.f["blockdevice_"+name+"_"+k.legacy] = v
			}
		}
	}
}

// lsblk asks lsblk for one column of a disk, as Facter does (a second at
// most); "" when it has none.
func (g *gatherer) lsblk(column, disk string) string {
	if g.root != "" {
		return ""
	}
	path, err := exec.LookPath("lsblk")
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(g.ctx, time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "-dn", "-o", column, "/dev/"+disk).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// unescapeMount undoes /proc/mounts' octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func (g *gatherer) mountFacts() {
	b := g.read("/proc/mounts")
	if len(b) == 0 {
		return
	}
	mounts := map[string]any{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 {
			continue
		}
		device, path, fstype := unescapeMount(f[0]), unescapeMount(f[1]), f[2]
		if (strings.HasPrefix(path, "/proc") || strings.HasPrefix(path, "/sys")) && fstype != "tmpfs" || fstype == "autofs" {
			continue
		}
		if device == "/dev/root" {
			if m := regexp.MustCompile(`root=(\S+)`).FindStringSubmatch(g.readString("/proc/cmdline")); m != nil && !strings.Contains(m[1], "=") {
				device = m[1]
			}
		}
		m := map[string]any{"device": device, "filesystem": fstype, "options": anyStrings(strings.Split(f[3], ","))}
		var size, avail, used uint64
		var st syscall.Statfs_t
		if g.root == "" && syscall.Statfs(path, &st) == nil {
			bs := uint64(st.Frsize)
			if bs == 0 {
				bs = uint64(st.Bsize)
			}
			size, avail = st.Blocks*bs, st.Bavail*bs
			used = size - st.Bfree*bs
		}
		m["size_bytes"], m["available_bytes"], m["used_bytes"] = size, avail, used
		m["size"], m["available"], m["used"] = BytesToHuman(size), BytesToHuman(avail), BytesToHuman(used)
		m["capacity"] = capacity(used, used+avail)
		mounts[path] = m
	}
	if len(mounts) > 0 {
		g.f["mountpoints"] = mounts
	}
}

// capacity is Facter's: used of total in percent, two decimals; 100% when
// used is all of it (a file system of size 0 too), 0% when nothing is.
func capacity(used, total uint64) string {
	switch {
	case used == total:
		return "100%"
	case used > 0:
		return strconv.FormatFloat(float64(used)/float64(total)*100, 'f', 2, 64) + "%"
	}
	return "0%"
}

func anyStrings(ss []string) []any {
	out := make([]any, 0, len(ss))
	for _, s := range ss {
		out = append(out, strings.TrimSpace(s))
	}
	return out
}

func (g *gatherer) hypervisorFacts() {
	product := g.readString("/sys/class/dmi/id/product_name")
	for _, p := range []string{"VirtualBox", "Parallels"} {
		if strings.Contains(product, p) {
			return
		}
	}
	kvm := strings.Contains(product, "KVM") || strings.Contains(product, "OpenStack")
	bios := g.readString("/sys/class/dmi/id/bios_vendor")
	kvm = kvm || strings.Contains(bios, "Amazon EC2") || strings.Contains(bios, "Google")
	if !kvm {
		// lspci names the devices of vendor 0x1af4 Virtio.
		devs, _ := filepath.Glob(g.root + "/sys/bus/pci/devices/*/vendor")
		for _, d := range devs {
			if b, err := os.ReadFile(d); err == nil && strings.TrimSpace(string(b)) == "0x1af4" {
				kvm = true
				break
			}
		}
	}
	if !kvm {
		return
	}
	provider := map[string]any{}
	switch vendor := g.readString("/sys/class/dmi/id/sys_vendor"); {
	case vendor == "Google":
		provider["google"] = true
	case strings.HasPrefix(vendor, "OpenStack"):
		provider["openstack"] = true
	case strings.HasPrefix(vendor, "Amazon"):
		provider["amazon"] = true
	}
	g.f["hypervisors"] = map[string]any{"kvm": provider}
}

// dhcpFacts is Facter's dhcp_servers: system, the primary interface's
// DHCP server (null without one), and each interface that has one.
func (g *gatherer) dhcpFacts() {
	n, ok := g.f["networking"].(map[string]any)
	if !ok {
		return
	}
	ifaces, _ := n["interfaces"].(map[string]any)
	if len(ifaces) == 0 {
		return
	}
	servers := map[string]any{"system": nil}
	primary, _ := n["primary"].(string)
	for name := range ifaces {
		if s := g.dhcpServer(name); s != "" {
			servers[name] = s
			if name == primary {
				servers["system"] = s
			}
		}
	}
	g.f["dhcp_servers"] = servers
}

var leaseServer = regexp.MustCompile(`dhcp-server-identifier\s+([^;\s]+);`)

// dhcpServer is the DHCP server of iface's lease: systemd-networkd's
// (by the interface's index), else the last one of dhclient's lease files
// that name it.
func (g *gatherer) dhcpServer(iface string) string {
	if idx := g.readString("/sys/class/net/" + iface + "/ifindex"); idx != "" {
		for _, line := range strings.Split(string(g.read("/run/systemd/netif/leases/"+idx)), "\n") {
			if v, ok := strings.CutPrefix(line, "SERVER_ADDRESS="); ok {
				return strings.TrimSpace(v)
			}
		}
	}
	for _, dir := range []string{"/var/lib/dhclient", "/var/lib/dhcp", "/var/lib/dhcp3", "/var/lib/NetworkManager", "/var/db"} {
		files, _ := filepath.Glob(g.root + dir + "/*")
		for _, f := range files {
			if !strings.Contains(filepath.Base(f), "lease") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil || !bytes.Contains(b, []byte(`interface "`+iface+`"`)) {
				continue
			}
			if m := leaseServer.FindAllSubmatch(b, -1); len(m) > 0 {
				return string(m[len(m)-1][1])
			}
		}
	}
	return ""
}

var augparseVersion = regexp.MustCompile(`(?m)^augparse (\d+\.\d+\.\d+)`)

func (g *gatherer) augeasFacts() {
	if g.root != "" {
		return
	}
	path, err := exec.LookPath("augparse")
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(g.ctx, 5*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, path, "--version").CombinedOutput()
	if m := augparseVersion.FindSubmatch(out); m != nil {
		g.f["augeas"] = map[string]any{"version": string(m[1])}
		g.f["augeasversion"] = string(m[1])
	}
}

// rubyFacts reads the rbconfig.rb of the Ruby Puppet runs with: Debian's
// /usr/bin/ruby, else the all-in-one agent's.
func (g *gatherer) rubyFacts() {
	var files []string
	if bin, err := filepath.EvalSymlinks(g.root + "/usr/bin/ruby"); err == nil {
		// ruby3.1: its version's rbconfig.rb.
		ver := strings.TrimPrefix(filepath.Base(bin), "ruby")
		all, _ := filepath.Glob(g.root + "/usr/lib/*/ruby/*/rbconfig.rb")
		for _, f := range all {
			if ver == "" || strings.HasPrefix(filepath.Base(filepath.Dir(f)), ver+".") {
				files = append(files, f)
			}
		}
	} else if _, err := os.Stat(g.root + "/opt/puppetlabs/puppet/bin/ruby"); err == nil {
		files, _ = filepath.Glob(g.root + "/opt/puppetlabs/puppet/lib/ruby/*/*/rbconfig.rb")
	}
	if len(files) == 0 {
		return
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		return
	}
	conf := ParseRbConfig(b, strings.TrimPrefix(files[0], g.root))
	version, platform, sitedir := conf["RUBY_PROGRAM_VERSION"], conf["arch"], conf["sitelibdir"]
	if version == "" || platform == "" {
		return
	}
	g.f["ruby"] = map[string]any{"platform": platform, "sitedir": sitedir, "version": version}
	g.f["rubyplatform"], g.f["rubysitedir"], g.f["rubyversion"] = platform, sitedir, version
}

var (
	rbConfigLine = regexp.MustCompile(`^\s*CONFIG\["([^"]+)"\]\s*=\s*(.*)$`)
	rbTopDir     = regexp.MustCompile(`TOPDIR = File\.dirname\(__FILE__\)\.chomp!\("([^"]+)"\)`)
	rbVar        = regexp.MustCompile(`\$\(([^)]+)\)`)
)

// ParseRbConfig reads the CONFIG entries of a Ruby's rbconfig.rb (at
// path) with their $(name) references expanded, as RbConfig::CONFIG
// holds them: a quoted string is itself; TOPDIR (the prefix of an
// installation that moves) is the file's directory without the suffix
// rbconfig.rb chomps; DESTDIR is empty.
func ParseRbConfig(b []byte, path string) map[string]string {
	raw := map[string]string{"DESTDIR": ""}
	top := ""
	if m := rbTopDir.FindSubmatch(b); m != nil {
		if d := filepath.Dir(path); strings.HasSuffix(d, string(m[1])) {
			top = strings.TrimSuffix(d, string(m[1]))
		}
	}
	for _, line := range strings.Split(string(b), "\n") {
		m := rbConfigLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		v := strings.TrimSpace(m[2])
		switch {
		case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
			raw[m[1]] = strings.ReplaceAll(v[1:len(v)-1], `\"`, `"`)
		case strings.Contains(v, "TOPDIR") && top != "":
			raw[m[1]] = top
		case strings.Contains(v, "TOPDIR"):
			// (TOPDIR || DESTDIR + "/usr"): the default after DESTDIR.
			if q := regexp.MustCompile(`"([^"]*)"`).FindStringSubmatch(v); q != nil {
				raw[m[1]] = q[1]
			}
		}
	}
	out := make(map[string]string, len(raw))
	var expand func(s string, depth int) string
	expand = func(s string, depth int) string {
		if depth > 16 {
			return s
		}
		return rbVar.ReplaceAllStringFunc(s, func(ref string) string {
			return expand(raw[ref[2:len(ref)-1]], depth+1)
		})
	}
	for k, v := range raw {
		out[k] = expand(v, 0)
	}
	return out
}
