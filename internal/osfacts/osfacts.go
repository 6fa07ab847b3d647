// Package osfacts reads what the operating system's own files say about
// it, as Facter names it: os-release(5) and the names and family Facter
// derives from its ID, the release split into major and minor, the
// machine's architecture names, the domain of resolv.conf. These are the
// parsers both fact sets build on: applier's cheap flat facts, read once
// per engine for provider confinement (applier.LoadFacts), and agent/facts,
// the agent's Facter-compatible set. They live below both so that the type
// author's API does not depend on the agent's Facter emulation.
package osfacts

import (
	"bufio"
	"bytes"
	"regexp"
	"runtime"
	"strings"
)

// SplitRelease splits "12.11" into its major and minor parts.
func SplitRelease(full string) (major, minor string) {
	major, minor, _ = strings.Cut(full, ".")
	minor, _, _ = strings.Cut(minor, ".")
	return major, minor
}

// Architecture is Facter's os.architecture: dpkg's names on Debian's
// family, the kernel's machine elsewhere.
func Architecture(family, goarch string) string {
	if family != "Debian" {
		return HardwareModel(goarch)
	}
	if goarch == "386" {
		return "i386"
	}
	return goarch
}

// ParseOSRelease reads os-release(5): KEY=value lines, values optionally
// quoted.
func ParseOSRelease(b []byte) map[string]string {
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
		m[strings.TrimSpace(k)] = v
	}
	return m
}

var osNames = map[string]string{
	"debian": "Debian", "ubuntu": "Ubuntu", "linuxmint": "LinuxMint", "raspbian": "Raspbian",
	"rhel": "RedHat", "centos": "CentOS", "fedora": "Fedora", "rocky": "Rocky",
	"almalinux": "AlmaLinux", "ol": "OracleLinux", "amzn": "Amazon", "scientific": "Scientific",
	"sles": "SLES", "opensuse": "OpenSuSE", "opensuse-leap": "OpenSuSE", "opensuse-tumbleweed": "OpenSuSE",
	"arch": "Archlinux", "manjaro": "ManjaroLinux", "alpine": "Alpine", "gentoo": "Gentoo",
	"void": "Void", "photon": "PhotonOS",
}

// OSName maps an os-release ID to the name Facter reports.
func OSName(id, name string) string {
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

var osFamilies = map[string]string{
	"debian": "Debian", "ubuntu": "Debian", "linuxmint": "Debian", "raspbian": "Debian",
	"rhel": "RedHat", "centos": "RedHat", "fedora": "RedHat", "rocky": "RedHat", "almalinux": "RedHat",
	"ol": "RedHat", "amzn": "RedHat", "scientific": "RedHat",
	"sles": "Suse", "suse": "Suse", "opensuse": "Suse", "opensuse-leap": "Suse", "opensuse-tumbleweed": "Suse",
	"arch": "Archlinux", "manjaro": "Archlinux", "alpine": "Alpine", "gentoo": "Gentoo",
}

// OSFamily maps an os-release ID (then its ID_LIKE entries) to Facter's
// os.family; an unknown one is its own family.
func OSFamily(id string, like []string, name string) string {
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

// HardwareModel is the kernel's machine name (uname -m) for a GOARCH.
func HardwareModel(goarch string) string {
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

var (
	resolvDomainLine = regexp.MustCompile(`(?m)^domain\s+(\S+)`)
	resolvSearchLine = regexp.MustCompile(`(?m)^search\s+(\S+)`)
)

// ResolvDomain is the domain resolv.conf names as Facter reads it: the
// first domain line's, else the first search line's first entry, as
// written.
func ResolvDomain(b []byte) string {
	if m := resolvDomainLine.FindSubmatch(b); m != nil {
		return string(m[1])
	}
	if m := resolvSearchLine.FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return ""
}
