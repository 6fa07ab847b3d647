package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// testEnv is a root or non-root agent on host vm.example.com.
func testEnv(t *testing.T, root bool) env {
	t.Helper()
	return env{root: root, home: "/home/u", cwd: "/work", fqdn: func() (string, string) { return "VM", "Example.COM" }}
}

// loadText writes puppet.conf and loads it.
func loadText(t *testing.T, e env, text string, overrides map[string]string) (*Settings, string, error) {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "puppet.conf")
	if text != "" {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := load(e, p, overrides)
	return s, p, err
}

// TestDefaults records Puppet's defaults as Debian's Puppet 7.23 prints
// them (`puppet config print --section agent NAME`, as root and as a user
// whose home is /home/u; certname from the host name VM.Example.COM).
func TestDefaults(t *testing.T) {
	cases := []struct{ name, root, user string }{
		{"confdir", "/etc/puppet", "/home/u/.puppet/etc"},
		{"codedir", "/etc/puppet/code", "/home/u/.puppet/code"},
		{"vardir", "/var/cache/puppet", "/home/u/.puppet/cache"},
		{"publicdir", "/var/cache/puppet/public", "/home/u/.puppet/cache/public"},
		{"rundir", "/run/puppet", "/home/u/.puppet/var/run"},
		{"logdir", "/var/log/puppet", "/home/u/.puppet/var/log"},
		{"ssldir", "/var/lib/puppet/ssl", "/home/u/.puppet/etc/ssl"},
		{"statedir", "/var/cache/puppet/state", "/home/u/.puppet/cache/state"},
		{"client_datadir", "/var/cache/puppet/client_data", "/home/u/.puppet/cache/client_data"},
		{"libdir", "/var/cache/puppet/lib", "/home/u/.puppet/cache/lib"},
		{"plugindest", "/var/cache/puppet/lib", "/home/u/.puppet/cache/lib"},
		{"pluginfactdest", "/var/cache/puppet/facts.d", "/home/u/.puppet/cache/facts.d"},
		{"certname", "vm.example.com", "vm.example.com"},
		{"srv_domain", "Example.COM", "Example.COM"},
		{"hostcert", "/var/lib/puppet/ssl/certs/vm.example.com.pem", "/home/u/.puppet/etc/ssl/certs/vm.example.com.pem"},
		{"hostprivkey", "/var/lib/puppet/ssl/private_keys/vm.example.com.pem", "/home/u/.puppet/etc/ssl/private_keys/vm.example.com.pem"},
		{"localcacert", "/var/lib/puppet/ssl/certs/ca.pem", "/home/u/.puppet/etc/ssl/certs/ca.pem"},
		{"hostcrl", "/var/lib/puppet/ssl/crl.pem", "/home/u/.puppet/etc/ssl/crl.pem"},
		{"server", "puppet", "puppet"},
		{"serverport", "8140", "8140"},
		{"masterport", "8140", "8140"},
		{"server_list", "", ""},
		{"ca_server", "puppet", "puppet"},
		{"ca_port", "8140", "8140"},
		{"report_server", "puppet", "puppet"},
		{"report_port", "8140", "8140"},
		{"environment", "production", "production"},
		{"strict_environment_mode", "false", "false"},
		{"noop", "false", "false"},
		{"tags", "", ""},
		{"skip_tags", "", ""},
		{"report", "true", "true"},
		{"pluginsync", "true", "true"},
		{"usecacheonfailure", "true", "true"},
		{"use_cached_catalog", "false", "false"},
		{"splay", "false", "false"},
		{"splaylimit", "1800", "1800"},
		{"runinterval", "1800", "1800"},
		{"waitforcert", "120", "120"},
		{"maxwaitforcert", "unlimited", "unlimited"},
		{"http_connect_timeout", "120", "120"},
		{"http_read_timeout", "600", "600"},
		{"certificate_revocation", "chain", "chain"},
		{"keylength", "4096", "4096"},
		{"lastrunfile", "/var/cache/puppet/public/last_run_summary.yaml", "/home/u/.puppet/cache/public/last_run_summary.yaml"},
		{"lastrunreport", "/var/cache/puppet/state/last_run_report.yaml", "/home/u/.puppet/cache/state/last_run_report.yaml"},
		{"agent_catalog_run_lockfile", "/var/cache/puppet/state/agent_catalog_run.lock", "/home/u/.puppet/cache/state/agent_catalog_run.lock"},
		{"agent_disabled_lockfile", "/var/cache/puppet/state/agent_disabled.lock", "/home/u/.puppet/cache/state/agent_disabled.lock"},
		{"csr_attributes", "/etc/puppet/csr_attributes.yaml", "/home/u/.puppet/etc/csr_attributes.yaml"},
		{"dns_alt_names", "", ""},
		{"daemonize", "true", "true"},
		{"onetime", "false", "false"},
		{"show_diff", "false", "false"},
		{"pidfile", "/run/puppet/agent.pid", "/home/u/.puppet/var/run/agent.pid"},
		{"basemodulepath", "/etc/puppet/code/modules:/usr/share/puppet/modules", "/home/u/.puppet/code/modules:/usr/share/puppet/modules"},
		{"factpath", "/var/cache/puppet/lib/facter:/var/cache/puppet/facts", "/home/u/.puppet/cache/lib/facter:/home/u/.puppet/cache/facts"},
		{"statettl", "2764800", "2764800"},
		{"environment_timeout", "0", "0"},
		{"log_level", "notice", "notice"},
		{"digest_algorithm", "sha256", "sha256"},
		{"config", "/etc/puppet/puppet.conf", "/home/u/.puppet/etc/puppet.conf"},
	}
	for _, root := range []bool{true, false} {
		s, _, err := loadText(t, testEnv(t, root), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			want := c.user
			if root {
				want = c.root
			}
			if got := s.Values[c.name]; got != want {
				t.Errorf("root=%v %s = %q, want %q", root, c.name, got, want)
			}
		}
	}
	s, _, err := loadText(t, testEnv(t, true), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{
		Confdir: "/etc/puppet", Codedir: "/etc/puppet/code", Vardir: "/var/cache/puppet", SSLDir: "/var/lib/puppet/ssl",
		Statedir: "/var/cache/puppet/state", Rundir: "/run/puppet", Logdir: "/var/log/puppet",
		Publicdir: "/var/cache/puppet/public", ClientDataDir: "/var/cache/puppet/client_data",
		Libdir: "/var/cache/puppet/lib", PluginFactDest: "/var/cache/puppet/facts.d",
		Certname: "vm.example.com", Server: "puppet", ServerPort: 8140, CAServer: "puppet", CAPort: 8140,
		ReportServer: "puppet", ReportPort: 8140, Environment: "production",
		Report: true, Pluginsync: true, UseCacheOnFailure: true, Daemonize: true,
		Runinterval: 30 * time.Minute, Splaylimit: 30 * time.Minute, Waitforcert: 2 * time.Minute,
		HTTPConnectTimeout: 2 * time.Minute, HTTPReadTimeout: 10 * time.Minute,
		Maxwaitforcert: Unlimited, Waitforlock: 0, Maxwaitforlock: time.Minute, Runtimeout: time.Hour,
		CertificateRevocation: "chain", Keylength: 4096,
		LastRunFile:        "/var/cache/puppet/public/last_run_summary.yaml",
		LastRunReport:      "/var/cache/puppet/state/last_run_report.yaml",
		CatalogRunLockfile: "/var/cache/puppet/state/agent_catalog_run.lock",
		DisabledLockfile:   "/var/cache/puppet/state/agent_disabled.lock",
		CSRAttributes:      "/etc/puppet/csr_attributes.yaml",
	}
	got := *s
	got.Values, got.ConfFile, got.setByConfig = nil, "", nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Settings:\n got %+v\nwant %+v", got, want)
	}
	if len(s.Values) != len(defs) {
		t.Errorf("Values has %d settings, Puppet defines %d", len(s.Values), len(defs))
	}
}

func TestSSLDirNonRootOwningSystemSSL(t *testing.T) {
	e := testEnv(t, false)
	e.sslOwned = true
	s, _, err := loadText(t, e, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.SSLDir != "/var/lib/puppet/ssl" {
		t.Errorf("ssldir %q: a user owning /var/lib/puppet/ssl uses it, as Puppet", s.SSLDir)
	}
}

// TestLoad: puppet.conf as Puppet reads it (each case checked against
// `puppet config print --confdir DIR --section agent`).
func TestLoad(t *testing.T) {
	cases := []struct {
		name string
		conf string
		over map[string]string
		want map[string]string
	}{
		{"before any section is [main]", "server = pre.example\n[agent]\nnoop = true\n",
			nil, map[string]string{"server": "pre.example", "noop": "true"}},
		{"agent over main", "[main]\nserver = m\nca_server = ca\n[agent]\nserver = a\n",
			nil, map[string]string{"server": "a", "ca_server": "ca", "report_server": "a"}},
		{"other sections ignored", "[main]\nenvironment = m\n[user]\nenvironment = u\nnoop = true\n[server]\nenvironment = s\n[master]\nserver = x\n",
			nil, map[string]string{"environment": "m", "noop": "false", "server": "puppet"}},
		{"first of a name in a section wins", "[main]\ncertname = first\ncertname = second\n",
			nil, map[string]string{"certname": "first"}},
		{"a section seen twice", "[main]\nserver = a\n[agent]\nnoop = true\n[main]\nca_port = 9000\n",
			nil, map[string]string{"server": "a", "ca_port": "9000", "noop": "true"}},
		{"comment after a value is part of it", "[main]\nca_server = ca.example # comment\n",
			nil, map[string]string{"ca_server": "ca.example # comment"}},
		{"comments and blank lines", "# top\n\n  # indented\n[main]\n\t\nserver=x\n",
			nil, map[string]string{"server": "x"}},
		{"quotes dropped", "[main]\nreport_server = 'quoted'\ntags = \"a, B\"\n",
			nil, map[string]string{"report_server": "quoted", "tags": "a, B"}},
		{"booleans in any case", "[main]\nnoop = TRUE\nreport = False\n",
			nil, map[string]string{"noop": "true", "report": "false"}},
		{"durations", "[main]\nruninterval = 1h\nsplaylimit = 2d\nwaitforcert=1y\nhttp_connect_timeout = 45\nhttp_read_timeout = 15s\n",
			nil, map[string]string{"runinterval": "3600", "splaylimit": "172800", "waitforcert": "31536000", "http_connect_timeout": "45", "http_read_timeout": "15"}},
		{"splaylimit follows runinterval", "[agent]\nruninterval = 5m\n",
			nil, map[string]string{"splaylimit": "300"}},
		{"interpolation", "[main]\nvardir = /tmp/xv\ncertname = n1\nskip_tags = $certname.x\n[agent]\nstatedir = $vardir/st\n",
			nil, map[string]string{"statedir": "/tmp/xv/st", "lastrunreport": "/tmp/xv/st/last_run_report.yaml",
				"agent_catalog_run_lockfile": "/tmp/xv/st/agent_catalog_run.lock", "skip_tags": "n1.x",
				"hostcert": "/var/lib/puppet/ssl/certs/n1.pem", "client_datadir": "/tmp/xv/client_data"}},
		{"ssldir moves the certificates", "[main]\nssldir = $vardir/ssl\n",
			nil, map[string]string{"hostcert": "/var/cache/puppet/ssl/certs/vm.example.com.pem", "localcacert": "/var/cache/puppet/ssl/certs/ca.pem"}},
		{"$environment is left alone", "[main]\nca_server = $environment\n",
			nil, map[string]string{"ca_server": "$environment"}},
		{"serverport moves the other ports", "[main]\nserverport = 8141\n",
			nil, map[string]string{"serverport": "8141", "ca_port": "8141", "report_port": "8141", "masterport": "8140"}},
		{"masterport is serverport's default", "[main]\nmasterport = 8142\n",
			nil, map[string]string{"serverport": "8142", "ca_port": "8142"}},
		{"file metadata dropped", "[main]\nssldir = /x/ssl { owner = puppet, mode = 0771 }\n",
			nil, map[string]string{"ssldir": "/x/ssl"}},
		{"relative and home paths", "[main]\nvardir = var\nlogdir = ~/log\n",
			nil, map[string]string{"vardir": "/work/var", "logdir": "/home/u/log", "statedir": "/work/var/state"}},
		{"certificate_revocation true is chain", "[main]\ncertificate_revocation = true\n",
			nil, map[string]string{"certificate_revocation": "chain"}},
		{"certificate_revocation false", "[main]\ncertificate_revocation = false\n",
			nil, map[string]string{"certificate_revocation": "false"}},
		{"overrides win", "[main]\nserver = m\n[agent]\nnoop = true\n",
			map[string]string{"server": "cli", "noop": "false", "vardir": "/o"}, map[string]string{"server": "cli", "noop": "false", "statedir": "/o/state"}},
		{"override with dashes", "", map[string]string{"http-read-timeout": "9"}, map[string]string{"http_read_timeout": "9"}},
		{"CRLF lines", "[main]\r\nserver = crlf\r\n", nil, map[string]string{"server": "crlf"}},
		{"empty value", "[main]\npostrun_command =\n", nil, map[string]string{"postrun_command": ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _, err := loadText(t, testEnv(t, true), c.conf, c.over)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range c.want {
				if s.Values[k] != v {
					t.Errorf("%s = %q, want %q", k, s.Values[k], v)
				}
			}
		})
	}
}

func TestLoadFields(t *testing.T) {
	s, _, err := loadText(t, testEnv(t, true), `[main]
server_list = a.example:8150, b.example ,c.example:9
serverport = 8141
tags = Web, db ,
skip_tags = slow
dns_alt_names = puppet, puppet.example.com
environment = staging
strict_environment_mode = true
[agent]
splay = true
splaylimit = 10m
keylength = 2048
certificate_revocation = leaf
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []HostPort{{"a.example", 8150}, {"b.example", 8141}, {"c.example", 9}}; !reflect.DeepEqual(s.ServerList, want) {
		t.Errorf("ServerList %v, want %v", s.ServerList, want)
	}
	if !reflect.DeepEqual(s.Tags, []string{"web", "db"}) || !reflect.DeepEqual(s.SkipTags, []string{"slow"}) {
		t.Errorf("Tags %q SkipTags %q", s.Tags, s.SkipTags)
	}
	if !reflect.DeepEqual(s.DNSAltNames, []string{"puppet", "puppet.example.com"}) {
		t.Errorf("DNSAltNames %q", s.DNSAltNames)
	}
	if s.Environment != "staging" || !s.EnvironmentSet || !s.StrictEnvironmentMode {
		t.Errorf("environment %q set=%v strict=%v", s.Environment, s.EnvironmentSet, s.StrictEnvironmentMode)
	}
	if !s.Splay || s.Splaylimit != 10*time.Minute || s.Runinterval != 30*time.Minute || s.Keylength != 2048 || s.CertificateRevocation != "leaf" {
		t.Errorf("splay %v %v runinterval %v keylength %d revocation %q", s.Splay, s.Splaylimit, s.Runinterval, s.Keylength, s.CertificateRevocation)
	}
	for name, want := range map[string]bool{"server_list": true, "serverport": true, "ca_server": false, "report_server": false, "splay": true, "server": false, "nosuch": false} {
		if s.SetByConfig(name) != want {
			t.Errorf("SetByConfig(%s) = %v", name, !want)
		}
	}
	d, _, err := loadText(t, testEnv(t, true), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.EnvironmentSet || d.ServerList != nil {
		t.Errorf("defaults: EnvironmentSet %v ServerList %v", d.EnvironmentSet, d.ServerList)
	}
	o, _, err := loadText(t, testEnv(t, true), "", map[string]string{"environment": "production"})
	if err != nil || !o.EnvironmentSet {
		t.Errorf("--environment production: EnvironmentSet %v, %v", o != nil && o.EnvironmentSet, err)
	}
}

// TestLoadRunSettings: runtimeout, resubmit_facts, waitforlock and
// maxwaitforlock from puppet.conf, the command line winning.
func TestLoadRunSettings(t *testing.T) {
	conf := "[agent]\nruntimeout = 10m\nresubmit_facts = true\nwaitforlock = 5\nmaxwaitforlock = unlimited\n"
	s, _, err := loadText(t, testEnv(t, true), conf, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Runtimeout != 10*time.Minute || !s.ResubmitFacts || s.Waitforlock != 5*time.Second || s.Maxwaitforlock != Unlimited {
		t.Errorf("runtimeout %v resubmit_facts %v waitforlock %v maxwaitforlock %v", s.Runtimeout, s.ResubmitFacts, s.Waitforlock, s.Maxwaitforlock)
	}
	s, _, err = loadText(t, testEnv(t, true), conf, map[string]string{"runtimeout": "0", "resubmit_facts": "false", "maxwaitforlock": "2m"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Runtimeout != 0 || s.ResubmitFacts || s.Maxwaitforlock != 2*time.Minute {
		t.Errorf("overridden: runtimeout %v resubmit_facts %v maxwaitforlock %v", s.Runtimeout, s.ResubmitFacts, s.Maxwaitforlock)
	}
}

// TestLoadErrors: a bad value is an error naming the setting and where it
// was set.
func TestLoadErrors(t *testing.T) {
	cases := []struct {
		name, conf string
		over       map[string]string
		want       []string // substrings; "FILE" is the puppet.conf path
	}{
		{"unknown boolean word", "[main]\n\nnoop = yes\n", nil, []string{"FILE:3: noop", `"yes"`, "boolean"}},
		{"negative duration", "[agent]\nruninterval = -5\n", nil, []string{"FILE:2: runinterval", `"-5"`, "duration"}},
		{"duration unit", "[agent]\nruninterval = 5w\n", nil, []string{"FILE:2: runinterval", `"5w"`}},
		{"empty duration", "[agent]\nruninterval =\n", nil, []string{"FILE:2: runinterval"}},
		{"port out of range", "[main]\nserverport = 70000\n", nil, []string{"FILE:2: serverport", "70000", "port"}},
		{"port zero", "[main]\nca_port = 0\n", nil, []string{"FILE:2: ca_port", "port"}},
		{"port from interpolation", "[main]\nmasterport = x\n", nil, []string{"FILE:2: masterport", "not an integer"}},
		{"not an integer", "[main]\nkeylength = abc\n", nil, []string{"FILE:2: keylength", "integer"}},
		{"upper-case certname", "[main]\ncertname = Foo.Example\n", nil, []string{"FILE:2: certname", "lower case"}},
		{"slash in certname", "[main]\ncertname = foo/bar\n", nil, []string{"FILE:2: certname", "/"}},
		{"certname dot-dot", "[main]\ncertname = ..\n", nil, []string{"FILE:2: certname"}},
		{"certname from the command line", "", map[string]string{"certname": "A"}, []string{"--certname", "lower case"}},
		{"revocation", "[main]\ncertificate_revocation = maybe\n", nil, []string{"FILE:2: certificate_revocation", "maybe"}},
		{"enum", "[main]\nlog_level = loud\n", nil, []string{"FILE:2: log_level", "loud"}},
		{"environment name", "[agent]\nenvironment = bad-env\n", nil, []string{"FILE:2: environment", "bad-env"}},
		{"server_list port", "[main]\nserver_list = a:1, c:x\n", nil, []string{"FILE:2: server_list", "c:x"}},
		{"unknown variable", "[main]\nserver = $nosuch/x\n", nil, []string{"FILE:2: server", "$nosuch"}},
		{"self reference", "[main]\nvardir = $statedir/x\n", nil, []string{"FILE:2: vardir: interpolation loop: vardir -> $statedir -> $vardir"}},
		{"illegal section", "[main]\n[production]\nserver = x\n", nil, []string{"FILE:2:", "[production]"}},
		{"section with spaces", "[ agent ]\n", nil, []string{"FILE:1:", "[ agent ]"}},
		{"junk line", "[main]\njunk line\n", nil, []string{"FILE:2:", "junk line"}},
		{"braces that are not metadata", "[main]\npostrun_command = echo ${certname}\n", nil, []string{"FILE:2: postrun_command"}},
		{"bad mode metadata", "[main]\nssldir = /x { mode = rw }\n", nil, []string{"FILE:2: ssldir", "mode"}},
		{"unknown override", "", map[string]string{"nosuch": "1"}, []string{"--nosuch", "no such setting"}},
		{"bad override", "", map[string]string{"runinterval": "soon"}, []string{"--runinterval", "soon"}},
		{"binary file", "[main]\nserver = a\x00b\n", nil, []string{"FILE", "UTF-8"}},
		{"tiny keylength", "[main]\nkeylength = 16\n", nil, []string{"FILE:2: keylength"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, p, err := loadText(t, testEnv(t, true), c.conf, c.over)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				w = strings.ReplaceAll(w, "FILE", p)
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestUnknownSettingWarns(t *testing.T) {
	s, p, err := loadText(t, testEnv(t, true), "[main]\nbogus_setting = 1\nserver = x\n[user]\nother_bogus = 2\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], p+":2") || !strings.Contains(s.Warnings[0], "bogus_setting") {
		t.Errorf("warnings %q", s.Warnings)
	}
	if s.Server != "x" {
		t.Errorf("server %q", s.Server)
	}
}

func TestConfFileLocation(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "puppet.conf"), []byte("[agent]\nserver = fromconfdir\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := load(testEnv(t, true), "", map[string]string{"confdir": dir})
	if err != nil {
		t.Fatal(err)
	}
	if s.Server != "fromconfdir" || s.ConfFile != filepath.Join(dir, "puppet.conf") || s.CSRAttributes != filepath.Join(dir, "csr_attributes.yaml") {
		t.Errorf("--confdir: server %q conf %q csr %q", s.Server, s.ConfFile, s.CSRAttributes)
	}
	other := filepath.Join(dir, "other.conf")
	if err := os.WriteFile(other, []byte("server = fromconfig\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = load(testEnv(t, true), "", map[string]string{"config": other})
	if err != nil || s.Server != "fromconfig" {
		t.Errorf("--config: %v %v", s, err)
	}
	if err := os.Chmod(other, 0); err == nil && os.Geteuid() != 0 {
		if _, err := load(testEnv(t, true), other, nil); err == nil {
			t.Error("an unreadable puppet.conf is not an error")
		}
	}
	if got := DefaultConfFile(); os.Geteuid() == 0 && got != "/etc/puppet/puppet.conf" {
		t.Errorf("DefaultConfFile %q", got)
	}
}

func TestCadirAndHieraConfig(t *testing.T) {
	dir := t.TempDir()
	conf := "[main]\nssldir = " + dir + "/ssl\ncodedir = " + dir + "/code\nconfdir = " + dir + "\n"
	s, _, err := loadText(t, testEnv(t, true), conf, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Values["cadir"] != "/etc/puppet/puppetserver/ca" || s.Values["cacert"] != "/etc/puppet/puppetserver/ca/ca_crt.pem" || s.Values["hiera_config"] != dir+"/hiera.yaml" {
		t.Errorf("cadir %q cacert %q hiera %q", s.Values["cadir"], s.Values["cacert"], s.Values["hiera_config"])
	}
	os.MkdirAll(dir+"/ssl/ca", 0o755)
	os.MkdirAll(dir+"/code", 0o755)
	os.WriteFile(dir+"/code/hiera.yaml", nil, 0o644)
	s, _, err = loadText(t, testEnv(t, true), conf, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Values["cadir"] != dir+"/ssl/ca" || s.Values["hiera_config"] != dir+"/code/hiera.yaml" {
		t.Errorf("cadir %q hiera %q", s.Values["cadir"], s.Values["hiera_config"])
	}
}
