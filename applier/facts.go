package applier

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"strings"
)

// factsRoot is where LoadFacts reads the machine's files from; tests call
// LoadFactsFrom with a fake tree instead.
const factsRoot = "/"

// LoadFacts reads what pippet knows about this machine: /etc/os-release
// (and /etc/debian_version for Debian's point release), the kernel's name
// and release from /proc, the hostname and the DNS domain from
// /etc/resolv.conf. It does no DNS lookups and runs no commands, so it is
// cheap; engine.New calls it once per process.
func LoadFacts() Facts { return LoadFactsFrom(factsRoot) }

// LoadFactsFrom is LoadFacts with the files read under root.
func LoadFactsFrom(root string) Facts {
	f := Facts{}
	read := func(p string) []byte {
		b, _ := os.ReadFile(strings.TrimSuffix(root, "/") + p)
		return b
	}

	osr := parseOSRelease(read("/etc/os-release"))
	if len(osr) == 0 {
		osr = parseOSRelease(read("/usr/lib/os-release"))
	}
	id := strings.ToLower(osr["ID"])
	name := osName(id, osr["NAME"])
	family := osFamily(id, strings.Fields(strings.ToLower(osr["ID_LIKE"])), name)
	release := osr["VERSION_ID"]
	if family == "Debian" && id == "debian" {
		if dv := strings.TrimSpace(string(read("/etc/debian_version"))); dv != "" && dv[0] >= '0' && dv[0] <= '9' {
			release = dv
		}
	}
	major, minor, _ := strings.Cut(release, ".")
	if minor != "" {
		minor, _, _ = strings.Cut(minor, ".")
	}
	kernel := strings.TrimSpace(string(read("/proc/sys/kernel/ostype")))
	if kernel == "" {
		kernel = strings.ToUpper(runtime.GOOS[:1]) + runtime.GOOS[1:]
	}
	kernelrelease := strings.TrimSpace(string(read("/proc/sys/kernel/osrelease")))
	hardware := hardwareModel(runtime.GOARCH)
	arch := hardware
	if family == "Debian" {
		arch = runtime.GOARCH // dpkg's names: amd64, arm64, i386 (386), ...
		if arch == "386" {
			arch = "i386"
		}
	}

	host, _ := os.Hostname()
	if root != factsRoot {
		host = strings.TrimSpace(string(read("/etc/hostname")))
	}
	hostname, domain, _ := strings.Cut(host, ".")
	if domain == "" {
		domain = resolvDomain(read("/etc/resolv.conf"))
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

func parseOSRelease(b []byte) map[string]string {
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		m[k] = v
	}
	return m
}

// osNames maps os-release IDs to the names Facter reports.
var osNames = map[string]string{
	"debian": "Debian", "ubuntu": "Ubuntu", "linuxmint": "LinuxMint", "raspbian": "Raspbian",
	"rhel": "RedHat", "centos": "CentOS", "fedora": "Fedora", "rocky": "Rocky",
	"almalinux": "AlmaLinux", "ol": "OracleLinux", "amzn": "Amazon", "scientific": "Scientific",
	"sles": "SLES", "opensuse": "OpenSuSE", "opensuse-leap": "OpenSuSE", "opensuse-tumbleweed": "OpenSuSE",
	"arch": "Archlinux", "manjaro": "ManjaroLinux", "alpine": "Alpine", "gentoo": "Gentoo",
	"void": "Void", "photon": "PhotonOS",
}

func osName(id, name string) string {
	if n, ok := osNames[id]; ok {
		return n
	}
	if id != "" {
		return strings.ToUpper(id[:1]) + id[1:]
	}
	if name != "" {
		return name
	}
	return strings.ToUpper(runtime.GOOS[:1]) + runtime.GOOS[1:]
}

// osFamilies maps os-release IDs (and ID_LIKE entries) to Facter's os.family.
var osFamilies = map[string]string{
	"debian": "Debian", "ubuntu": "Debian", "linuxmint": "Debian", "raspbian": "Debian",
	"rhel": "RedHat", "centos": "RedHat", "fedora": "RedHat", "rocky": "RedHat", "almalinux": "RedHat",
	"ol": "RedHat", "amzn": "RedHat", "scientific": "RedHat",
	"sles": "Suse", "suse": "Suse", "opensuse": "Suse", "opensuse-leap": "Suse", "opensuse-tumbleweed": "Suse",
	"arch": "Archlinux", "manjaro": "Archlinux", "alpine": "Alpine", "gentoo": "Gentoo",
}

func osFamily(id string, like []string, name string) string {
	if f, ok := osFamilies[id]; ok {
		return f
	}
	for _, l := range like {
		if f, ok := osFamilies[l]; ok {
			return f
		}
	}
	return name
}

func hardwareModel(goarch string) string {
	switch goarch {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	case "386":
		return "i686"
	case "arm":
		return "armv7l"
	default:
		return goarch
	}
}

func resolvDomain(b []byte) string {
	var search string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 2 {
			continue
		}
		switch fs[0] {
		case "domain":
			return strings.TrimSuffix(fs[1], ".")
		case "search":
			if search == "" {
				search = strings.TrimSuffix(fs[1], ".")
			}
		}
	}
	return search
}
