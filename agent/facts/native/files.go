package native

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The facts that read files, module by module.

// os_workers, os_workers_small, os_workers_large, os_workers_heat_engine,
// os_workers_keystone (openstacklib, weight 100): worker counts from
// processors.count (Ruby's integer division): half of it between 2 and
// 12, a quarter between 2 and 8, half and at least 1, half between 4 and
// 24, all between 4 and 24. os_service_default is defined only for a
// Facter older than 2.0.1: never here.

// oci_etc_hosts_content (oci): /etc/hosts without the lines from the one
// that says OCISTA_MAINTAINED to the one that says OCIFIN_MAINTAINED.
// oci_role: /etc/oci/my-role without its final newline, else "default".
// oci_ssh_host_key_certs_list: /etc/ssh/ssh_host_*_key-cert.pub.

// ipa_hostname (nova), on Linux: the host of /etc/ipa/default.conf's
// xmlrpc_uri, when the file exists. libvirt_uuid: /etc/libvirt/libvirt_uuid,
// as it is, when it is a file.

// ovs_version (vswitch), on Linux: /usr/bin/ovs-vsctl --version's Open
// vSwitch version. ovs_uuid: ovs-vsctl get Open_vSwitch . _uuid.
// pci_address_driver_DRIVER: per driver of /proc/bus/pci/devices, the
// PCI addresses of its devices, comma-separated.

// swift_commented_fstab_entries (swift): per /etc/fstab UUID= entry
// mounted under /srv/node/, the drive's name and "active" or
// "commented". swift_device_uuids: per /dev/[vs]d* (or
// /dev/disk/oci-sort/[vs]d*) holding XFS, its UUID as blkid says it.

// staging_http_get (nanliu-staging): the first of powershell, curl, wget
// in PATH. staging_windir (staging), archive_windir (puppet-archive):
// Windows only, never here.

func init() {
	register(&File{Module: "openstacklib", Name: "os_workers.rb",
		Facts:   []string{"os_workers_small", "os_workers", "os_workers_large", "os_workers_heat_engine", "os_workers_keystone"},
		Digests: []string{"af4d2c4d8553c5d321528faf3a50e692528377d026966e49172f0101e98e2560"}, // Debian 21.0.0-1
		resolve: func(r *Run, out map[string]Value) {
			procs, ok := r.Value("processors").(map[string]any)
			if !ok {
				for _, f := range r.file("os_workers").Facts {
					r.Fail(r.file(f), f, errors.New("no processors fact"))
				}
				return
			}
			n := int64(1)
			if c, ok := procs["count"]; ok {
				n = rubyToI(c)
			}
			clamp := func(v, lo, hi int64) int64 { return min(max(v, lo), hi) }
			out["os_workers_small"] = Value{V: clamp(rubyDiv(n, 4), 2, 8), Weight: 100}
			out["os_workers"] = Value{V: clamp(rubyDiv(n, 2), 2, 12), Weight: 100}
			out["os_workers_large"] = Value{V: max(rubyDiv(n, 2), 1), Weight: 100}
			out["os_workers_heat_engine"] = Value{V: clamp(rubyDiv(n, 2), 4, 24), Weight: 100}
			out["os_workers_keystone"] = Value{V: clamp(n, 4, 24), Weight: 100}
		}})
	register(&File{Module: "openstacklib", Name: "os_service_default.rb", Facts: []string{"os_service_default"},
		Digests: []string{"1d6742092402043da3e64931690ab7622204f77669f0703974ac9d26d3012926"}, // Debian 21.0.0-1
		resolve: func(r *Run, out map[string]Value) {
			if versionCmp(rubyToS(r.Value("facterversion")), "2.0.1") < 0 {
				out["os_service_default"] = Value{V: "<SERVICE DEFAULT>"}
			}
		}})
	register(&File{Module: "oci", Name: "oci_etc_hosts_content.rb", Facts: []string{"oci_etc_hosts_content"},
		Digests: []string{"127b0145ad1e2309480101c3e419a89a3745898f03f200cab263233360bd20a4"}, // Debian 42.2.5
		resolve: func(r *Run, out map[string]Value) {
			b, err := os.ReadFile("/etc/hosts")
			if err != nil {
				r.Fail(r.file("oci_etc_hosts_content"), "oci_etc_hosts_content", err)
				return
			}
			var sb strings.Builder
			print := true
			for _, line := range rubyLines(string(b)) {
				if strings.Contains(line, "OCISTA_MAINTAINED") {
					print = false
				}
				if print {
					sb.WriteString(line)
				}
				if strings.Contains(line, "OCIFIN_MAINTAINED") {
					print = true
				}
			}
			out["oci_etc_hosts_content"] = Value{V: sb.String()}
		}})
	register(&File{Module: "oci", Name: "oci_role.rb", Facts: []string{"oci_role"},
		Digests: []string{"545de520b10c554c0e065c8d771ed4196ce124ddc1ee37390ace6c15eec8ea1e"}, // Debian 42.2.5
		resolve: func(r *Run, out map[string]Value) {
			role := "default"
			if fileExists("/etc/oci/my-role") {
				b, err := os.ReadFile("/etc/oci/my-role")
				if err != nil {
					r.Fail(r.file("oci_role"), "oci_role", err)
					return
				}
				role = string(b)
			}
			out["oci_role"] = Value{V: rubyChomp(role)}
		}})
	register(&File{Module: "oci", Name: "ssh_host_key_certs_list.rb", Facts: []string{"oci_ssh_host_key_certs_list"},
		Digests: []string{"af930baf7cc2646021b92d96f4fa69d8b8dd4dc716298e5850113d337fc94ff8"}, // Debian 42.2.5
		resolve: func(r *Run, out map[string]Value) {
			if fi, err := os.Stat("/etc/ssh"); err != nil || !fi.IsDir() {
				r.Fail(r.file("oci_ssh_host_key_certs_list"), "oci_ssh_host_key_certs_list", errors.New("no directory /etc/ssh"))
				return
			}
			files := []any{}
			for _, p := range rubyGlob("/etc/ssh/ssh_host_*_key-cert.pub") {
				files = append(files, p)
			}
			out["oci_ssh_host_key_certs_list"] = Value{V: files}
		}})
	register(&File{Module: "nova", Name: "ipa_hostname.rb", Facts: []string{"ipa_hostname"},
		Digests: []string{"9698dab73cf87463f915c5b4ebb4e3f35427636e1f333ba3be8e5d108f7e5142"}, // Debian 21.0.0-1
		resolve: func(r *Run, out map[string]Value) {
			if !r.confine("kernel", "Linux") || !fileExists("/etc/ipa/default.conf") {
				return
			}
			v, err := r.Exec("grep xmlrpc_uri /etc/ipa/default.conf | cut -d/ -f3")
			if err == nil {
				out["ipa_hostname"] = Value{V: v, Weight: 1}
			} else if !errors.Is(err, ErrNotFound) {
				r.Fail(r.file("ipa_hostname"), "ipa_hostname", err)
			}
		}})
	register(&File{Module: "nova", Name: "libvirt_uuid.rb", Facts: []string{"libvirt_uuid"},
		Digests: []string{"6a2b75eaf0c9f9d87c139e8d6bab3ce018a3049f13cc27cf427a1d90a6f0bff6"}, // Debian 21.0.0-1
		resolve: func(r *Run, out map[string]Value) {
			if !fileIsFile("/etc/libvirt/libvirt_uuid") {
				return
			}
			b, err := os.ReadFile("/etc/libvirt/libvirt_uuid")
			if err != nil {
				r.Fail(r.file("libvirt_uuid"), "libvirt_uuid", err)
				return
			}
			out["libvirt_uuid"] = Value{V: string(b)}
		}})
	register(&File{Module: "vswitch", Name: "ovs.rb", Facts: []string{"ovs_version"},
		Digests: []string{"e39666748426c6034eef93cdc5c82c5917f7cd7c0bf6f631e11f3405352004dd"}, // Debian 17.0.0-1
		resolve: func(r *Run, out map[string]Value) {
			if !r.confine("kernel", "Linux") {
				return
			}
			v, err := r.Exec("/usr/bin/ovs-vsctl --version")
			if err == nil {
				out["ovs_version"] = Value{V: ovsVersion.ReplaceAllString(v, "${1}"), Weight: 1}
			} else if !errors.Is(err, ErrNotFound) {
				r.Fail(r.file("ovs_version"), "ovs_version", err)
			}
		}})
	register(&File{Module: "vswitch", Name: "ovs_uuid.rb", Facts: []string{"ovs_uuid"},
		Digests: []string{"848dbbd3c8cf32f8e8caaa0e503fbfbd52750767b0877823c6bbd7d377991a9d"}, // Debian 17.0.0-1
		resolve: func(r *Run, out map[string]Value) {
			if !r.confine("kernel", "Linux") || !fileExists("/usr/bin/ovs-vsctl") {
				return
			}
			v, err := r.Exec("/usr/bin/ovs-vsctl get Open_vSwitch . _uuid")
			if err == nil {
				out["ovs_uuid"] = Value{V: v, Weight: 1}
			} else if !errors.Is(err, ErrNotFound) {
				r.Fail(r.file("ovs_uuid"), "ovs_uuid", err)
			}
		}})
	register(&File{Module: "vswitch", Name: "pci_address.rb", Facts: []string{"pci_address_driver_*"},
		Digests: []string{"f98046d25ca95d26261dbe7eb53e6b62be5050822ac560b15b1c03b2ada7bbda"}, // Debian 17.0.0-1
		resolve: func(r *Run, out map[string]Value) {
			b, err := os.ReadFile("/proc/bus/pci/devices")
			if err != nil || !r.confine("kernel", "linux") {
				return
			}
			drivers := map[string][]string{}
			for _, line := range strings.Split(string(b), "\n") {
				f := strings.Fields(line)
				if len(f) != 18 || len(f[0]) < 4 {
					continue
				}
				embed, driver := f[0], f[17]
				hexAt := func(i int) int64 { return rubyHex(embed[i : i+1]) }
				dev := strings.ToUpper(fmt.Sprintf("%02s", strconv.FormatInt(hexAt(2)<<1+hexAt(3)>>3, 16)))
				fun := strings.ToUpper(strconv.FormatInt(hexAt(3)&7, 16))
				drivers[driver] = append(drivers[driver], "0000:"+embed[0:2]+":"+dev+"."+fun)
			}
			for d, addrs := range drivers {
				out["pci_address_driver_"+d] = Value{V: strings.Join(addrs, ","), Weight: 1}
			}
		}})
	register(&File{Module: "swift", Name: "swift-commented-fstab-entries.rb", Facts: []string{"swift_commented_fstab_entries"},
		Digests: []string{"3d0f9555e04d48783d928721bbdd5850ede9516893da4b457c76f9fb586942b0"}, // Debian 21.0.0-2
		resolve: func(r *Run, out map[string]Value) {
			fail := func(err error) { r.Fail(r.file("swift_commented_fstab_entries"), "swift_commented_fstab_entries", err) }
			b, err := os.ReadFile("/etc/fstab")
			if err != nil {
				fail(err)
				return
			}
			entries := map[string]any{}
			for _, line := range rubyLines(string(b)) {
				if !fstabUUID.MatchString(line) {
					continue
				}
				f := strings.Fields(line)
				if len(f) < 2 {
					fail(fmt.Errorf("/etc/fstab: no mount point in %q", line))
					return
				}
				if mp := f[1]; strings.HasPrefix(mp, "/srv/node/") {
					state := "active"
					if strings.HasPrefix(line, "#") {
						state = "commented"
					}
					entries[strings.ReplaceAll(mp, "/srv/node/", "")] = state
				}
			}
			out["swift_commented_fstab_entries"] = Value{V: entries}
		}})
	register(&File{Module: "swift", Name: "swift-device-uuids.rb", Facts: []string{"swift_device_uuids"},
		Digests: []string{"5dc2613d4d066d19056ef236f947e2eca5542fcdb6992dfbc2969af9db7c7b71"}, // Debian 21.0.0-2
		resolve: func(r *Run, out map[string]Value) {
			dir := "/dev/"
			if fi, err := os.Stat("/dev/disk/oci-sort"); err == nil && fi.IsDir() {
				dir = "/dev/disk/oci-sort/"
			}
			uuids := map[string]any{}
			devs, _ := filepath.Glob(dir + "[vs]d*")
			sort.Strings(devs)
			for _, dev := range devs {
				real, err := filepath.EvalSymlinks(dev)
				if err != nil {
					r.Fail(r.file("swift_device_uuids"), "swift_device_uuids", err)
					return
				}
				text, err := r.Shell("blkid  " + real + `| grep xfs | sed 's/.*[ ]UUID="\([^"]*\)[a-zA-Z|0-9|\-]*".*/\1/p' | head -n 1`)
				if err != nil {
					r.Fail(r.file("swift_device_uuids"), "swift_device_uuids", err)
					return
				}
				if strings.TrimSpace(text) != "" {
					uuids[filepath.Base(dev)] = strings.ReplaceAll(text, "\n", "")
				}
			}
			out["swift_device_uuids"] = Value{V: uuids}
		}})
	register(&File{Module: "staging", Name: "staging_http_get.rb", Facts: []string{"staging_http_get"},
		Digests: []string{"4c66a64591518420db8ee2534d0bb97e2b041b810fd3eb9c64638d850dbd2749"}, // Debian 1.0.4-3
		resolve: func(r *Run, out map[string]Value) {
			for _, c := range []string{"powershell", "curl", "wget"} {
				for _, d := range filepath.SplitList(r.path) {
					if executable(filepath.Join(d, c)) {
						out["staging_http_get"] = Value{V: c}
						return
					}
				}
			}
		}})
	for _, w := range []struct {
		module, name, fact, digest string
		forge                      []Release
	}{
		{"staging", "staging_windir.rb", "staging_windir", "cebe4c35a35b26a82f5bc08513dec7f641adafa71c6be8450110952f1fb1dca2", nil}, // Debian 1.0.4-3
		{"archive", "archive_windir.rb", "archive_windir", "5ca420f2eb61d4dc027d5db27fd00568f273932e314cb696aff839f19fb07551", // Debian 4.1.0-1
			// The same code: a frozen_string_literal comment, then the
			// confine's hash written otherwise.
			[]Release{
				{Module: "puppet-archive", Version: "7.1.0", Releases: "6.1.0 to 7.1.0", Digest: "f7d0231ece35b48d65247fecf014f1da26160fe626961ba8ba2fbdf01eba2003"},
				{Module: "puppet-archive", Version: "8.1.0", Releases: "8.0.0 to 8.1.0", Digest: "80c332a20ca357a9ddb68485994d4bcb78f9e9eae6643a1b6c7e88120e5f7cfb"},
			}},
	} {
		register(&File{Module: w.module, Name: w.name, Facts: []string{w.fact}, Digests: []string{w.digest}, Forge: w.forge,
			resolve: func(r *Run, out map[string]Value) {
				if r.confine("osfamily", "windows") {
					r.Fail(r.file(w.fact), w.fact, errors.New("Windows facts are not resolved natively"))
				}
			}})
	}
}

var (
	ovsVersion = regexp.MustCompile(`.*ovs-vsctl\s+\(Open\s+vSwitch\)\s+(\d+\.\d+\.\d+).*`)
	fstabUUID  = regexp.MustCompile(`(?m)^[#]*UUID=`)
)

// rubyChomp is Ruby's String#chomp: one final \n, \r\n or \r removed.
func rubyChomp(s string) string {
	if t, ok := strings.CutSuffix(s, "\r\n"); ok {
		return t
	}
	if t, ok := strings.CutSuffix(s, "\n"); ok {
		return t
	}
	t, _ := strings.CutSuffix(s, "\r")
	return t
}

// rubyToI is Ruby's to_i of a fact value.
func rubyToI(v any) int64 {
	switch v := v.(type) {
	case int64:
		return v
	case int:
		return int64(v)
	case float64:
		return int64(v)
	case string:
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		return n
	default:
		n, _ := strconv.ParseInt(fmt.Sprint(v), 10, 64)
		return n
	}
}

// rubyDiv is Ruby's integer division (floored).
func rubyDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
