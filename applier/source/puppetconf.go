package source

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// PuppetConfDir is where the agent reads puppet.conf: /etc/puppet for
// root, ~/.puppet/etc otherwise (Debian's Puppet 7).
func PuppetConfDir() string {
	if os.Geteuid() == 0 {
		return "/etc/puppet"
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".puppet", "etc")
	}
	return "/etc/puppet"
}

// ReadPuppetConf returns the settings of [main] overlaid by [agent] (the
// agent's view), with $confdir, $vardir, $ssldir and $certname
// interpolated. A missing file is no settings and no error.
func ReadPuppetConf(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	main, agent := map[string]string{}, map[string]string{}
	cur := main
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			switch strings.TrimSpace(line[1 : len(line)-1]) {
			case "main":
				cur = main
			case "agent":
				cur = agent
			default:
				cur = nil // another application's section
			}
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: not a setting: %q", path, n, line)
		}
		if cur != nil {
			v = strings.TrimSpace(v)
			if i := strings.Index(v, " #"); i >= 0 {
				v = strings.TrimSpace(v[:i])
			}
			cur[strings.TrimSpace(k)] = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for k, v := range agent {
		main[k] = v
	}
	return main, nil
}

// ResolvePuppet fills what given (the agent's settings as flags gave
// them: Server, Port, Environment, Certname, SSLDir) leaves empty from
// dir/puppet.conf ([main] overlaid by [agent]) and Puppet's defaults;
// fqdn is asked for the certname only when neither gives one. A broken
// puppet.conf is not fatal: the options returned are usable, with an
// error that is a *ConfWarning.
func ResolvePuppet(given PuppetOptions, dir string, fqdn func() string) (*PuppetOptions, error) {
	conf, confErr := ReadPuppetConf(filepath.Join(dir, "puppet.conf"))
	if confErr != nil {
		// A broken puppet.conf must not stop a receiver that may never
		// see a puppet:// source: the caller warns, defaults apply.
		conf = map[string]string{}
		confErr = &ConfWarning{fmt.Errorf("puppet.conf: %w; puppet:// sources use the defaults", confErr)}
	}
	if conf["confdir"] != "" {
		dir = conf["confdir"]
	}
	o := &given
	or := func(s *string, key, def string) {
		if *s == "" {
			*s = conf[key]
		}
		if *s == "" {
			*s = def
		}
	}
	or(&o.Server, "server", "puppet")
	if o.Server == "puppet" && conf["server"] == "" && conf["server_list"] != "" {
		h, _, _ := strings.Cut(strings.Split(conf["server_list"], ",")[0], ":")
		o.Server = strings.TrimSpace(h)
	}
	if o.Port == 0 {
		if v := conf["serverport"]; v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 65535 {
				o.Port = 8140
				confErr = &ConfWarning{fmt.Errorf("puppet.conf: serverport %q is not a port; using 8140", v)}
			} else {
				o.Port = n
			}
		} else {
			o.Port = 8140
		}
	}
	if o.Port < 1 || o.Port > 65535 {
		return nil, fmt.Errorf("--serverport %d is not a port", o.Port)
	}
	or(&o.Environment, "environment", "production")
	if o.Certname == "" && conf["certname"] == "" {
		o.Certname = fqdn()
	}
	or(&o.Certname, "certname", "")
	o.Certname = strings.ToLower(o.Certname)
	defSSL := "/var/lib/puppet/ssl"
	if os.Geteuid() != 0 {
		if st, err := os.Stat(defSSL); err != nil || !ownedByMe(st) {
			defSSL = filepath.Join(dir, "ssl")
		}
	}
	or(&o.SSLDir, "ssldir", defSSL)
	o.SSLDir = strings.NewReplacer("$confdir", dir, "$vardir", "/var/cache/puppet").Replace(o.SSLDir)
	if v := conf["certificate_revocation"]; v == "false" {
		o.NoCRL = true
	}
	if confErr != nil {
		return o, confErr
	}
	return o, nil
}

// ConfWarning is a puppet.conf problem: the settings returned with it
// are usable (the defaults); the caller warns and goes on.
type ConfWarning struct{ err error }

func (w *ConfWarning) Error() string { return w.err.Error() }
func (w *ConfWarning) Unwrap() error { return w.err }

func ownedByMe(st os.FileInfo) bool {
	s, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(s.Uid) == os.Geteuid()
}
