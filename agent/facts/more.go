package facts

import (
	"crypto/sha1" //nolint:gosec // SSHFP type 1 is SHA-1 by definition (RFC 4255)
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// sshKeyKinds are the host key kinds Facter reports, with their SSHFP
// algorithm numbers (RFC 4255, 6594, 7479).
var sshKeyKinds = []struct {
	name string
	algo int
}{{"rsa", 1}, {"dsa", 2}, {"ecdsa", 3}, {"ed25519", 4}}

// sshDirs are where Facter looks for host keys, first found wins.
var sshDirs = []string{"/etc/ssh", "/usr/local/etc/ssh", "/etc", "/usr/local/etc", "/etc/opt/ssh"}

// SSHHostKey parses a host key's .pub line into Facter's ssh.KIND value.
func SSHHostKey(pub []byte, algo int) (map[string]any, error) {
	fs := strings.Fields(string(pub))
	if len(fs) < 2 {
		return nil, fmt.Errorf("not a public key line")
	}
	raw, err := base64.StdEncoding.DecodeString(fs[1])
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	s1 := sha1.Sum(raw) //nolint:gosec
	s256 := sha256.Sum256(raw)
	return map[string]any{
		"type": fs[0],
		"key":  fs[1],
		"fingerprints": map[string]any{
			"sha1":   fmt.Sprintf("SSHFP %d 1 %s", algo, hex.EncodeToString(s1[:])),
			"sha256": fmt.Sprintf("SSHFP %d 2 %s", algo, hex.EncodeToString(s256[:])),
		},
	}, nil
}

func (g *gatherer) sshFacts() {
	ssh := map[string]any{}
	for _, k := range sshKeyKinds {
		for _, d := range sshDirs {
			p := d + "/ssh_host_" + k.name + "_key.pub"
			b := g.read(p)
			if len(b) == 0 {
				continue
			}
			v, err := SSHHostKey(b, k.algo)
			if err != nil {
				g.errs = append(g.errs, fmt.Errorf("ssh: %s: %w", p, err))
				break
			}
			ssh[k.name] = v
			fp := v["fingerprints"].(map[string]any)
			g.f["ssh"+k.name+"key"] = v["key"]
			g.f["sshfp_"+k.name] = fp["sha1"].(string) + "\n" + fp["sha256"].(string)
			break
		}
	}
	if len(ssh) > 0 {
		g.f["ssh"] = ssh
	}
}

// miscFacts are the other cheap /proc facts: load_averages, fips_enabled,
// filesystems.
func (g *gatherer) miscFacts() {
	if fs := strings.Fields(string(g.read("/proc/loadavg"))); len(fs) >= 3 {
		la := map[string]any{}
		for i, k := range []string{"1m", "5m", "15m"} {
			if v, err := strconv.ParseFloat(fs[i], 64); err == nil {
				la[k] = v
			}
		}
		g.f["load_averages"] = la
	}
	g.f["fips_enabled"] = g.readString("/proc/sys/crypto/fips_enabled") == "1"
	if b := g.read("/proc/filesystems"); len(b) > 0 {
		g.f["filesystems"] = ParseFilesystems(b)
	}
}

// ParseFilesystems is Facter's filesystems: the block-device file systems
// /proc/filesystems lists (not nodev, not fuseblk), sorted, comma-joined.
func ParseFilesystems(b []byte) string {
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "nodev") {
			continue
		}
		if n := strings.TrimSpace(line); n != "" && n != "fuseblk" {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}
