package applier

import (
	"os"
	"runtime"
	"strings"

	"github.com/pippet/pippet/internal/osfacts"
)

// factsRoot is where LoadFacts reads the machine's files from; tests call
// loadFactsFrom with a fake tree instead.
const factsRoot = "/"

// LoadFacts reads what pippet knows about this machine: /etc/os-release
// (and /etc/debian_version for Debian's point release), the kernel's name
// and release from /proc, the hostname and the DNS domain from
// /etc/resolv.conf. It does no DNS lookups and runs no commands, so it is
// cheap; engine.New calls it when it is handed no facts. The parsers are
// internal/osfacts's, which agent/facts (the agent's whole
// Facter-compatible set, handed in by an agent run) builds on too: these
// flat names hold the same values as its dotted paths, except domain and
// fqdn when the host name has no dot and a canonical name (agent/facts's
// HostNames, Facter's lookup, which this one does not do).
func LoadFacts() Facts { return loadFactsFrom(factsRoot) }

// loadFactsFrom is LoadFacts with the files read under root.
func loadFactsFrom(root string) Facts {
	f := Facts{}
	read := func(p string) []byte {
		b, _ := os.ReadFile(strings.TrimSuffix(root, "/") + p)
		return b
	}

	osr := osfacts.ParseOSRelease(read("/etc/os-release"))
	if len(osr) == 0 {
		osr = osfacts.ParseOSRelease(read("/usr/lib/os-release"))
	}
	id := strings.ToLower(osr["ID"])
	name := osfacts.OSName(id, osr["NAME"])
	family := osfacts.OSFamily(id, strings.Fields(strings.ToLower(osr["ID_LIKE"])), name)
	release := osr["VERSION_ID"]
	if family == "Debian" && id == "debian" {
		if dv := strings.TrimSpace(string(read("/etc/debian_version"))); dv != "" && dv[0] >= '0' && dv[0] <= '9' {
			release = dv
		}
	}
	major, minor := osfacts.SplitRelease(release)
	kernel := strings.TrimSpace(string(read("/proc/sys/kernel/ostype")))
	if kernel == "" {
		kernel = strings.ToUpper(runtime.GOOS[:1]) + runtime.GOOS[1:]
	}
	kernelrelease := strings.TrimSpace(string(read("/proc/sys/kernel/osrelease")))
	hardware := osfacts.HardwareModel(runtime.GOARCH)
	arch := osfacts.Architecture(family, runtime.GOARCH)

	host, _ := os.Hostname()
	if root != factsRoot {
		host = strings.TrimSpace(string(read("/etc/hostname")))
	}
	hostname, domain, _ := strings.Cut(host, ".")
	if domain == "" {
		domain = osfacts.ResolvDomain(read("/etc/resolv.conf"))
	}
	fqdn := hostname
	if domain != "" {
		fqdn = hostname + "." + domain
	}

	set := func(k, v string) {
		if v != "" {
			f[k] = v
		}
	}
	set("os.family", family)
	set("os.name", name)
	set("os.release.full", release)
	set("os.release.major", major)
	set("os.release.minor", minor)
	set("os.distro.codename", osr["VERSION_CODENAME"])
	set("os.architecture", arch)
	set("os.hardware", hardware)
	set("kernel", kernel)
	set("kernelrelease", kernelrelease)
	set("architecture", arch)
	set("hardwaremodel", hardware)
	set("hostname", hostname)
	set("domain", domain)
	set("fqdn", fqdn)
	// Legacy flat names.
	set("osfamily", family)
	set("operatingsystem", name)
	set("operatingsystemrelease", release)
	set("operatingsystemmajrelease", major)
	return f
}
