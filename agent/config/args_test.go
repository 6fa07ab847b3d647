package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseArgs(t *testing.T) {
	testSettings := map[string]string{"onetime": "true", "daemonize": "false", "usecacheonfailure": "false", "splay": "false", "show_diff": "true"}
	with := func(base map[string]string, kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	cases := []struct {
		args []string
		want Args
	}{
		{nil, Args{Settings: map[string]string{}}},
		{[]string{"--server", "puppet.example.com", "--serverport=8141", "--environment", "dev"},
			Args{Settings: map[string]string{"server": "puppet.example.com", "serverport": "8141", "environment": "dev"}}},
		{[]string{"--noop", "--no-report", "--splay=false", "--no-daemonize"},
			Args{Settings: map[string]string{"noop": "true", "report": "false", "splay": "false", "daemonize": "false"}}},
		{[]string{"--onetime", "--http_read_timeout", "5m", "--http-connect-timeout=30s"},
			Args{Settings: map[string]string{"onetime": "true", "http_read_timeout": "5m", "http_connect_timeout": "30s"}}},
		{[]string{"-t"}, Args{Test: true, Verbose: true, DetailedExitcodes: true, Settings: testSettings}},
		// --test wins over the settings it implies, as in Puppet.
		{[]string{"--test", "--usecacheonfailure", "--noop"}, Args{Test: true, Verbose: true, DetailedExitcodes: true, Settings: with(testSettings, "noop", "true")}},
		{[]string{"-tdv", "-Eprod", "-o"}, Args{Test: true, Verbose: true, Debug: true, DetailedExitcodes: true, Settings: with(testSettings, "environment", "prod")}},
		{[]string{"-E", "prod", "-w", "60", "-l", "syslog, /var/log/x.log", "-f", "n.example"},
			Args{Settings: map[string]string{"environment": "prod", "waitforcert": "60", "logdest": "syslog, /var/log/x.log", "certname": "n.example"}, Logdest: []string{"syslog", "/var/log/x.log"}}},
		{[]string{"--waitforcert", "2m", "--detailed-exitcodes", "--verbose", "--debug"},
			Args{Settings: map[string]string{"waitforcert": "2m"}, DetailedExitcodes: true, Verbose: true, Debug: true}},
		{[]string{"--disable"}, Args{Settings: map[string]string{}, Disable: true, DisableMessage: "reason not specified"}},
		{[]string{"--disable", "upgrading ruby", "--verbose"}, Args{Settings: map[string]string{}, Disable: true, DisableMessage: "upgrading ruby", Verbose: true}},
		{[]string{"--disable", "--verbose"}, Args{Settings: map[string]string{}, Disable: true, DisableMessage: "reason not specified", Verbose: true}},
		{[]string{"--disable=x"}, Args{Settings: map[string]string{}, Disable: true, DisableMessage: "x"}},
		{[]string{"--enable"}, Args{Settings: map[string]string{}, Enable: true}},
		{[]string{"--fingerprint", "--digest", "SHA256", "--job-id", "42", "--help", "-V"},
			Args{Settings: map[string]string{}, Fingerprint: true, Digest: "SHA256", JobID: "42", Help: true, Version: true}},
		{[]string{"--certname=n1", "--confdir", "/tmp/c", "--", "--noop", "x"},
			Args{Settings: map[string]string{"certname": "n1", "confdir": "/tmp/c"}, Rest: []string{"--noop", "x"}}},
		{[]string{"stray", "--noop"}, Args{Settings: map[string]string{"noop": "true"}, Rest: []string{"stray"}}},
		{[]string{"--masterport", "1", "--server_list=a:1,b"}, Args{Settings: map[string]string{"masterport": "1", "server_list": "a:1,b"}}},
		{[]string{"--noop=TRUE"}, Args{Settings: map[string]string{"noop": "true"}}},
	}
	for _, c := range cases {
		got, err := ParseArgs(c.args)
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		if !reflect.DeepEqual(*got, c.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", c.args, *got, c.want)
		}
	}
}

func TestParseArgsErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--nosuch"}, "--nosuch"},
		{[]string{"--no-server"}, "--no-server"},
		{[]string{"--server"}, "--server needs a value"},
		{[]string{"-E"}, "-E needs a value"},
		{[]string{"-x"}, "-x"},
		{[]string{"-tq"}, "-q"},
		{[]string{"--test=yes"}, "--test takes no value"},
		{[]string{"--no-noop=true"}, "takes no value"},
		{[]string{"--enable", "--disable"}, "contradict"},
		{[]string{"--logdest"}, "needs a value"},
	}
	for _, c := range cases {
		_, err := ParseArgs(c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one with %q", c.args, err, c.want)
		}
	}
}

// TestParseArgsThenLoad: the command line's settings reach Load, and a bad
// value is named by its flag.
func TestParseArgsThenLoad(t *testing.T) {
	a, err := ParseArgs([]string{"-t", "--server", "s.example", "--runinterval", "1h", "--noop"})
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := loadText(t, testEnv(t, true), "[agent]\nserver = conf.example\nusecacheonfailure = true\n", a.Settings)
	if err != nil {
		t.Fatal(err)
	}
	if s.Server != "s.example" || s.Runinterval.Hours() != 1 || !s.Noop || !s.Onetime || s.Daemonize || s.UseCacheOnFailure || !s.ShowDiff || s.Splay {
		t.Errorf("%+v", s)
	}
	a, err = ParseArgs([]string{"--waitforcert", "soon"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := loadText(t, testEnv(t, true), "", a.Settings); err == nil || !strings.Contains(err.Error(), "--waitforcert") {
		t.Errorf("bad --waitforcert: %v", err)
	}
}
