package native

import (
	"errors"
	"math/big"
	"regexp"
	"strings"
	"syscall"
)

// The facts that read a program's version, module by module. Each runs
// its command only when the program is installed (Facter's which: PATH,
// then /sbin and /usr/sbin); without it the fact is absent, unless said.

// apache_version (puppetlabs-apache), on FreeBSD and Linux: the first of
// httpd -V, apache2 -V, apachectl -v, apache2ctl -v found, its "Server
// version: Apache/X.Y.Z" line's version.
var apacheServer = regexp.MustCompile(`(?m)^Server version: Apache/(\d+.\d+(.\d+)?)`)

// haproxy_version (puppetlabs-haproxy): the version in haproxy -v's first
// line ("HAProxy version 2.6.12-1 2023/..." gives 2.6.12); the fact is
// not defined at all without haproxy.
var (
	haproxyName    = regexp.MustCompile(`HA?.Proxy`)
	haproxyVersion = regexp.MustCompile(`version`)
	haproxyNumber  = regexp.MustCompile(`((\d+\.){2,}\d+).*`)
)

// collectd_version (voxpupuli-collectd): collectd -h's "collectd X.Y.Z,
// http://collectd.org/". python_dir: python's first site-packages
// directory (distutils' get_python_lib on RedHat), "" without python.
var (
	collectdHelp   = regexp.MustCompile(`(?m)^collectd ([\w\.]+), http://collectd\.org/`)
	collectdHelp15 = regexp.MustCompile(`(?m)^collectd ([+\w.]+), http://collectd\.org/`)
)

// iptables_version, ip6tables_version (puppetlabs-firewall), on Linux:
// the first X.Y.Z in iptables --version (ip6tables), "" when there is
// none. iptables_persistent_version, on Debian and Ubuntu: the version
// dpkg-query reports of netfilter-persistent (Debian 8 and later, Ubuntu
// 14.10 and later; iptables-persistent before), when it looks like one.
var (
	threeNumbers = regexp.MustCompile(`\d+\.\d+\.\d+`)
	twoNumbers   = regexp.MustCompile(`\d+\.\d+`)
)

// mysql_version (puppetlabs-mysql): the first X.Y.Z of mysql --version.
// mysqld_version: mysqld --no-defaults -V, as it prints it.
// mysql_server_id: the macaddress fact's bytes from the third on, six
// bits each, as an integer.

// erl_ssl_path (puppetlabs-rabbitmq): erl's code:lib_dir(ssl, ebin),
// without its quotes (absent when it printed none, as Ruby's gsub!
// answers nil). rabbitmq_nodename: the node in rabbitmqctl status's
// "Status of node NAME@HOST". rabbitmq_version: rabbitmqadmin --version's.
var (
	rabbitNode    = regexp.MustCompile(`(?m)^Status of node '?([\w\.\-]+@[\w\.\-]+)'?`)
	rabbitVersion = regexp.MustCompile(`(?m)^rabbitmqadmin ([\w\.]+)`)
	erlQuotes     = regexp.MustCompile(`\A"|"\z`)
	// From puppet-rabbitmq 12.0.0: rabbitmq_clustername, the name in
	// rabbitmqctl -q cluster_status's {cluster_name,<<"NAME">>} (or
	// "Cluster name: NAME" line); rabbitmq_plugins_dirs, the directories
	// of rabbit's plugins_dir, as rabbitmqctl eval prints it ({ok,"DIRS"}).
	rabbitClusterTerm = regexp.MustCompile(`\{cluster_name,<<"(\S+)">>\}`)
	rabbitClusterName = regexp.MustCompile(`(?m)^Cluster name: (\S+)$`)
	rabbitPluginsDir  = regexp.MustCompile(`(?m)^\{ok,"(/.+/\w+)`)
)

// redis_server_version (arioch-redis): redis-server -v's "Redis server
// v=X.Y.Z" (or "version X.Y.Z").
var (
	redisV        = regexp.MustCompile(`v=([\w\.]+)`)
	redisVMatch   = regexp.MustCompile(`Redis server v=([\w\.]+).+`)
	redisVer      = regexp.MustCompile(`version ([\w\.]+)`)
	redisVerMatch = regexp.MustCompile(`Redis server version ([\w\.]+).+`)
)

// filebeat_version (pcfens-filebeat), on FreeBSD, OpenBSD, Linux and
// Windows: the version `filebeat version` (else `filebeat --version`)
// prints, of the first of /usr/bin, /usr/local/bin,
// /usr/share/filebeat/bin and /usr/local/sbin that has it; false without
// filebeat.
var filebeatVersion = regexp.MustCompile(`(?m)^filebeat version ([^\s]+)?`)

func init() {
	register(&File{Module: "apache", Name: "apache_version.rb", Facts: []string{"apache_version"},
		Digests: []string{"f2a89933196490669e861453ee4e1954cc828728af1b95962e1de9e8618eb5f6"}, // Debian 5.5.0-2
		// The same code: a frozen_string_literal comment (5.9.0), then
		// Facter::Core::Execution for Facter::Util::Resolution (8.3.0).
		// From 9.0.0 the module ships no fact file.
		Forge: []Release{
			{Module: "puppetlabs-apache", Version: "8.2.1", Releases: "5.9.0 to 8.2.1",
				Digest: "6dba684cadb3a8f0af2db1f6dfc90724f75faa3a7ba7d7f9ab2ac1bca1118ef6"},
			{Module: "puppetlabs-apache", Version: "8.6.0", Releases: "8.3.0 to 8.6.0",
				Digest: "1a7c52d4f67be7cd4b048a5e2b606b6dbf5c59c6b06318fb1a6cfaed16772dc8"},
		},
		resolve: func(r *Run, out map[string]Value) {
			if !r.confine("kernel", "FreeBSD", "Linux") {
				return
			}
			for _, c := range []string{"httpd -V 2>&1", "apache2 -V 2>&1", "apachectl -v 2>&1", "apache2ctl -v 2>&1"} {
				if r.Which(firstWord(c)) == "" {
					continue
				}
				text, err := r.Exec(c)
				if err != nil {
					r.Fail(r.file("apache_version"), "apache_version", err)
					return
				}
				if m := apacheServer.FindStringSubmatch(text); m != nil {
					out["apache_version"] = Value{V: m[1], Weight: 1}
				}
				return
			}
		}})
	register(&File{Module: "haproxy", Name: "haproxy_version.rb", Facts: []string{"haproxy_version"},
		Digests: []string{"22b2896015c658381e7534570e2464c3232200b57dfd72338b2d49f9435201e1"}, // Debian 2.1.0-5
		// Facter::Core::Execution's which and execute for
		// Facter::Util::Resolution's: the same lookup, the same command
		// (neither looks at the exit status).
		Forge: []Release{{Module: "puppetlabs-haproxy", Version: "8.2.0", Releases: "6.5.0 to 8.2.0",
			Digest: "7fe199c3dd3360016ead20f0efb1ad0eff6e48f9dc709b08134fc91b9f999b43"}},
		resolve: func(r *Run, out map[string]Value) {
			if r.Which("haproxy") == "" {
				return
			}
			text, err := r.Exec("haproxy -v 2>&1")
			fail := func(err error) { r.Fail(r.file("haproxy_version"), "haproxy_version", err) }
			if err != nil {
				fail(err)
				return
			}
			lines := rubyLines(text)
			if len(lines) == 0 {
				fail(errors.New("haproxy -v printed nothing"))
				return
			}
			after := rubySplitRe(rubyStrip(lines[0]), haproxyName)
			if len(after) < 2 {
				fail(errors.New("haproxy -v: no HAProxy in " + lines[0]))
				return
			}
			parts := rubySplitRe(rubyStrip(after[1]), haproxyVersion)
			if len(parts) < 2 {
				fail(errors.New("haproxy -v: no version in " + lines[0]))
				return
			}
			if m := haproxyNumber.FindStringSubmatch(rubyStrip(parts[1])); m != nil {
				out["haproxy_version"] = Value{V: m[1]}
			}
		}})
	register(&File{Module: "collectd", Name: "collectd_version.rb", Facts: []string{"collectd_version"},
		Digests: []string{"ee2cbcc263461b9e163b271e9d839d7583974d6fdf7dcb412232096da245340b"}, // Debian 11.0.0-4
		resolve: collectdVersion(collectdHelp),
		Forge: []Release{
			// The same code, written otherwise.
			{Module: "puppet-collectd", Version: "14.0.0", Releases: "14.0.0",
				Digest: "e74daecb5d7e4532ce2407dea7838e3173b953eb0c61b4a4ab928deb80401a51"},
			// A version may hold a + (5.12.0.git+...).
			{Module: "puppet-collectd", Version: "15.0.0", Releases: "15.0.0",
				Digest: "eb63fb51d6e6e5ad11277c670a438b42d6ee893cf4693cd1a8f6c80dda81be56", resolve: collectdVersion(collectdHelp15)},
		}})
	register(&File{Module: "collectd", Name: "python_dir.rb", Facts: []string{"python_dir"},
		Digests: []string{"9dd095aa6cb4c3887d5ca709a5ed27af4c23d4a09824e358e7a764755527a469"}, // Debian 11.0.0-4
		resolve: pythonDir(false, "python"),
		// python, else python3, else /usr/libexec/platform-python.
		Forge: []Release{{Module: "puppet-collectd", Version: "15.0.0", Releases: "14.0.0 to 15.0.0",
			Digest: "9868cc372ba333fb1d48c43222005409bec5a9b9fd13fc21d69942d523d1ea82", resolve: pythonDir(true, "python", "python3")}}})
	register(&File{Module: "firewall", Name: "iptables_version.rb", Facts: []string{"iptables_version"},
		Digests: []string{"58d4bc9cb7c21d318824c0b9f162ae3b807e6122c2d1e0754307619016bc307d"}, // Debian 3.4.0-1
		resolve: iptablesVersion("iptables_version", "iptables --version"),
		Forge: []Release{{Module: "puppetlabs-firewall", Version: "8.5.0", Releases: "4.0.1 to 8.5.0",
			Digest: "d27d5347f60fa7b63134044cd7fd4cd6d4a983d8e7d8080791f1c83f585a80ad", resolve: iptablesVersion4("iptables")}}})
	register(&File{Module: "firewall", Name: "ip6tables_version.rb", Facts: []string{"ip6tables_version"},
		Digests: []string{"5733b5b89974a9aa4c3341c3f67d3c2a5faff5e4c9379c094401dc53012ce2bd"}, // Debian 3.4.0-1
		resolve: iptablesVersion("ip6tables_version", "ip6tables --version"),
		Forge: []Release{{Module: "puppetlabs-firewall", Version: "8.5.0", Releases: "4.0.1 to 8.5.0",
			Digest: "02336b41a675f30ecab7fe4d02484bdfc13f81a9b2f9f29f3f0b8fe8fbf88b07", resolve: iptablesVersion4("ip6tables")}}})
	register(&File{Module: "firewall", Name: "iptables_persistent_version.rb", Facts: []string{"iptables_persistent_version"},
		Digests: []string{"6742f64b5d2a61fc1d2bc629b6c38dac61059e51dba9f3e8c7611e4b9b4b1e3f"}, // Debian 3.4.0-1
		resolve: func(r *Run, out map[string]Value) {
			if !r.confine("operatingsystem", "Debian", "Ubuntu") {
				return
			}
			os, _ := r.Value("operatingsystem").(string)
			rel := rubyToS(r.Value("operatingsystemrelease"))
			pkg := "iptables-persistent"
			if os == "Debian" && (versionCmp(rel, "8.0") >= 0 || versionCmp(rel, "unstable") >= 0) ||
				os == "Ubuntu" && versionCmp(rel, "14.10") >= 0 {
				pkg = "netfilter-persistent"
			}
			v, err := r.Exec("dpkg-query -Wf '${Version}' " + pkg + " 2>/dev/null")
			if err != nil && !errors.Is(err, ErrNotFound) {
				r.Fail(r.file("iptables_persistent_version"), "iptables_persistent_version", err)
				return
			}
			if err == nil && twoNumbers.MatchString(v) {
				out["iptables_persistent_version"] = Value{V: v, Weight: 1}
			}
		},
		// Confined on os.name; netfilter-persistent's version whatever
		// the release.
		Forge: []Release{{Module: "puppetlabs-firewall", Version: "8.5.0", Releases: "8.1.4 to 8.5.0",
			Digest: "29110a98cbea63543c5f76dddc66423f621bad53694bde8bb3ca66fc5533bddf",
			resolve: func(r *Run, out map[string]Value) {
				if !r.confine("os.name", "Debian", "Ubuntu") {
					return
				}
				v, err := r.Exec("dpkg-query -Wf '${Version}' netfilter-persistent 2>/dev/null")
				if err != nil && !errors.Is(err, ErrNotFound) {
					r.Fail(r.file("iptables_persistent_version"), "iptables_persistent_version", err)
					return
				}
				if err == nil && twoNumbers.MatchString(v) {
					out["iptables_persistent_version"] = Value{V: v, Weight: 1}
				}
			}}}})
	register(&File{Module: "mysql", Name: "mysql_version.rb", Facts: []string{"mysql_version"},
		Digests: []string{"dbbdcbd11788275c9ff9f0b1bce2e80ecaf6e580c5645be67d3b831bc6636cd4"}, // Debian 8.1.0-7
		resolve: func(r *Run, out map[string]Value) {
			v, err := r.Exec("mysql --version")
			switch {
			case errors.Is(err, ErrNotFound):
			case err != nil:
				r.Fail(r.file("mysql_version"), "mysql_version", err)
			case threeNumbers.MatchString(v):
				out["mysql_version"] = Value{V: threeNumbers.FindString(v)}
			default:
				r.Fail(r.file("mysql_version"), "mysql_version", errors.New("mysql --version: no version in "+v))
			}
		},
		// mysql, else mariadb, when installed.
		Forge: []Release{{Module: "puppetlabs-mysql", Version: "16.3.0", Releases: "16.3.0",
			Digest: "151b226b1a5c92e985ce5e262441e65e23e9cb66d7ddd49033eeabe0f9c62649",
			resolve: func(r *Run, out map[string]Value) {
				var c string
				switch {
				case r.Which("mysql") != "":
					c = "mysql --version"
				case r.Which("mariadb") != "":
					c = "mariadb --version"
				default:
					return
				}
				v, err := r.Exec(c)
				if err == nil && !threeNumbers.MatchString(v) {
					err = errors.New(c + ": no version in " + v)
				}
				if err != nil {
					r.Fail(r.file("mysql_version"), "mysql_version", err)
					return
				}
				out["mysql_version"] = Value{V: threeNumbers.FindString(v)}
			}}}})
	register(&File{Module: "mysql", Name: "mysqld_version.rb", Facts: []string{"mysqld_version"},
		Digests: []string{"5b2cebcf10319ce69159ea71c0d6081a75608d1817118564c35f96da653d03ae"}, // Debian 8.1.0-7
		resolve: func(r *Run, out map[string]Value) {
			v, err := r.Exec("mysqld --no-defaults -V 2>/dev/null")
			if err == nil {
				out["mysqld_version"] = Value{V: v}
			} else if !errors.Is(err, ErrNotFound) {
				r.Fail(r.file("mysqld_version"), "mysqld_version", err)
			}
		},
		// mysqld (in PATH, or /usr/libexec), else mariadbd, when installed.
		Forge: []Release{{Module: "puppetlabs-mysql", Version: "16.3.0", Releases: "16.3.0",
			Digest: "8db534ed1f90f86beb23c396024999ef70c35b8f83dd7903dceeb83a9d3695b7",
			resolve: func(r *Run, out map[string]Value) {
				var c string
				switch {
				case r.Which("mysqld") != "" || r.Which("/usr/libexec/mysqld") != "":
					c = "env PATH=$PATH:/usr/libexec mysqld --no-defaults -V 2>/dev/null"
				case r.Which("mariadbd") != "":
					c = "mariadbd --no-defaults -V 2>/dev/null"
				default:
					return
				}
				v, err := r.Exec(c)
				if err != nil {
					r.Fail(r.file("mysqld_version"), "mysqld_version", err)
					return
				}
				out["mysqld_version"] = Value{V: v}
			}}}})
	register(&File{Module: "mysql", Name: "mysql_server_id.rb", Facts: []string{"mysql_server_id"},
		Digests: []string{"8f8b24c4e09d100e6e599f588067412a31c8941a9866737e06f74e032512f5e3"}, // Debian 8.1.0-7
		resolve: func(r *Run, out map[string]Value) {
			mac, ok := r.Value("macaddress").(string)
			if !ok {
				return // Ruby's rescue: nil
			}
			parts := rubySplit(mac, ":")
			if len(parts) < 2 {
				return
			}
			var id int64
			for _, p := range parts[2:] {
				id = id<<6 + rubyHex(p)
			}
			out["mysql_server_id"] = Value{V: id}
		},
		// The whole MAC address as a number, modulo 4294967294, plus 1.
		Forge: []Release{{Module: "puppetlabs-mysql", Version: "16.3.0", Releases: "14.0.0 to 16.3.0",
			Digest: "340366620d349cdf248b789c7f6f85710b081b2d2a1d197d1f00b9ae69960e7b",
			resolve: func(r *Run, out map[string]Value) {
				mac, ok := r.Value("macaddress").(string)
				if !ok {
					return // Ruby's rescue: nil
				}
				n, ok := new(big.Int).SetString(rubyHexDigits(strings.ReplaceAll(mac, ":", "")), 16)
				if !ok {
					n = new(big.Int)
				}
				id := n.Mod(n, big.NewInt(4_294_967_295-1)).Int64() + 1
				out["mysql_server_id"] = Value{V: id}
			}}}})
	rabbitmq15 := func(digest, releases string, resolve func(r *Run, out map[string]Value)) []Release {
		return []Release{{Module: "puppet-rabbitmq", Version: "15.0.0", Releases: releases, Digest: digest, resolve: resolve}}
	}
	register(&File{Module: "rabbitmq", Name: "erl_ssl_path.rb", Facts: []string{"erl_ssl_path"},
		Digests: []string{"14e54ab63714309c853a64bce3eb927793a69667ec905e0c2cb25ce9f0436bf8"}, // Debian 8.5.0-7
		// The same code (comments, a blank line).
		Forge: rabbitmq15("bdccb8e55860147872bc85d77006a3fb22b4c4fe65d09e5a7f120cab9c69630d", "12.0.0 to 15.0.0", nil),
		resolve: func(r *Run, out map[string]Value) {
			if r.Which("erl") == "" {
				return
			}
			data, err := r.Exec(`erl -eval 'io:format("~p", [code:lib_dir(ssl, ebin)]),halt().' -noshell`)
			if err != nil {
				r.Fail(r.file("erl_ssl_path"), "erl_ssl_path", err)
				return
			}
			if erlQuotes.MatchString(data) {
				out["erl_ssl_path"] = Value{V: erlQuotes.ReplaceAllString(data, "")}
			}
		}})
	register(&File{Module: "rabbitmq", Name: "rabbitmq_nodename.rb", Facts: []string{"rabbitmq_nodename"},
		Digests: []string{"84823ba9b746dd8f9de2dd5e90d69562ce2f96d3a0cb963bc9e25bd28ea1e190"}, // Debian 8.5.0-7
		// Without a node name in the output, absent without an error
		// (the module rescues it).
		Forge: rabbitmq15("5e2985f48c8a996a69705a44f92128bde4e4efd8c9e68cd68556f0ecb436bd06", "13.3.0 to 15.0.0",
			func(r *Run, out map[string]Value) {
				if r.Which("rabbitmqctl") == "" {
					return
				}
				text, err := r.Exec("rabbitmqctl status 2>&1")
				if err != nil {
					r.Fail(r.file("rabbitmq_nodename"), "rabbitmq_nodename", err)
					return
				}
				if m := rabbitNode.FindStringSubmatch(text); m != nil {
					out["rabbitmq_nodename"] = Value{V: m[1]}
				}
			}),
		resolve: func(r *Run, out map[string]Value) {
			if r.Which("rabbitmqctl") == "" {
				return
			}
			text, err := r.Exec("rabbitmqctl status 2>&1")
			if err == nil {
				if m := rabbitNode.FindStringSubmatch(text); m != nil {
					out["rabbitmq_nodename"] = Value{V: m[1]}
					return
				}
				err = errors.New("rabbitmqctl status: no node name")
			}
			r.Fail(r.file("rabbitmq_nodename"), "rabbitmq_nodename", err)
		}})
	register(&File{Module: "rabbitmq", Name: "rabbitmq_version.rb", Facts: []string{"rabbitmq_version"},
		Digests: []string{"c636aee596aad96de06903350b1a6278dac9bd04281b8804db1f9333d7dde710"}, // Debian 8.5.0-7
		// The same code ([\w.] for [\w\.]).
		Forge: rabbitmq15("6c033cb337dc17317d0d6d1c34ef911a7c68bce21cc2ed78a137dcc9ebcb6a97", "12.0.0 to 15.0.0", nil),
		resolve: func(r *Run, out map[string]Value) {
			if r.Which("rabbitmqadmin") == "" {
				return
			}
			text, err := r.Exec("rabbitmqadmin --version 2>&1")
			if err != nil {
				r.Fail(r.file("rabbitmq_version"), "rabbitmq_version", err)
				return
			}
			if m := rabbitVersion.FindStringSubmatch(text); m != nil {
				out["rabbitmq_version"] = Value{V: m[1]}
			}
		}})
	// Files Debian's rabbitmq module does not have.
	register(&File{Module: "rabbitmq", Name: "rabbitmq_clustername.rb", Facts: []string{"rabbitmq_clustername"},
		Forge: rabbitmq15("d9755a891eb4bd49fc25776966d47eff63dd25e07ee1e7af19a210f3eb8baf3d", "12.0.0 to 15.0.0",
			func(r *Run, out map[string]Value) {
				if r.Which("rabbitmqctl") == "" {
					return
				}
				text, err := r.Exec("rabbitmqctl -q cluster_status 2>&1")
				if err != nil {
					r.Fail(r.file("rabbitmq_clustername"), "rabbitmq_clustername", err)
					return
				}
				for _, re := range []*regexp.Regexp{rabbitClusterTerm, rabbitClusterName} {
					if m := re.FindStringSubmatch(text); m != nil {
						out["rabbitmq_clustername"] = Value{V: m[1]}
						return
					}
				}
			})})
	register(&File{Module: "rabbitmq", Name: "rabbitmq_plugins_dirs.rb", Facts: []string{"rabbitmq_plugins_dirs"},
		Forge: rabbitmq15("e0d96aa0bab52eab08d1d1e541579c8ad4ff509afc445061086e2cc24c94df69", "12.0.0 to 15.0.0",
			func(r *Run, out map[string]Value) {
				if r.Which("rabbitmqctl") == "" {
					return
				}
				text, err := r.Exec("rabbitmqctl eval 'application:get_env(rabbit, plugins_dir).'")
				if err != nil {
					r.Fail(r.file("rabbitmq_plugins_dirs"), "rabbitmq_plugins_dirs", err)
					return
				}
				if m := rabbitPluginsDir.FindStringSubmatch(text); m != nil {
					var dirs []any
					for _, d := range rubySplit(m[1], ":") {
						dirs = append(dirs, d)
					}
					if dirs == nil {
						dirs = []any{}
					}
					out["rabbitmq_plugins_dirs"] = Value{V: dirs}
				}
			})})
	register(&File{Module: "redis", Name: "redis_server_version.rb", Facts: []string{"redis_server_version"},
		Digests: []string{"b7eadf355e9fd2b0890c7526333e2d32eb5cd03e409d8666b62dffa09b541ceb"}, // Debian 3.2.0-3
		Forge: []Release{{Module: "puppet-redis", Version: "13.0.0", Releases: "12.1.0 to 13.0.0",
			Digest: "ac8d8674da455f0b1501fe8203547bd1f794ea1f252bc2bc3f673762eba26c76", resolve: redisVersion12}},
		resolve: func(r *Run, out map[string]Value) {
			if r.Which("redis-server") == "" {
				return
			}
			text, err := r.Exec("redis-server -v")
			if err != nil {
				r.Fail(r.file("redis_server_version"), "redis_server_version", err)
				return
			}
			var m []string
			switch {
			case redisV.MatchString(text):
				m = redisVMatch.FindStringSubmatch(text)
			case redisVer.MatchString(text):
				m = redisVerMatch.FindStringSubmatch(text)
			default:
				return
			}
			if m == nil {
				r.Fail(r.file("redis_server_version"), "redis_server_version", errors.New("redis-server -v: no version in "+text))
				return
			}
			out["redis_server_version"] = Value{V: m[1]}
		}})
	register(&File{Module: "filebeat", Name: "filebeat_version.rb", Facts: []string{"filebeat_version"},
		Digests: []string{"c92e14e638a06918988566ad55214a8ced0a9ac2f75dcb2c49a2704d8268b326"}, // Debian 4.9.0-3
		resolve: filebeatVersionOf([]string{"FreeBSD", "OpenBSD", "Linux", "Windows"}, []filebeatPath{
			{"/usr/bin/filebeat", true}, {"/usr/local/bin/filebeat", true}, {"/usr/share/filebeat/bin/filebeat", false}, {"/usr/local/sbin/filebeat", false}}),
		// SunOS too; /opt/local/bin/filebeat; /usr/local/sbin/filebeat
		// asked `version` first.
		Forge: []Release{{Module: "pcfens-filebeat", Version: "4.14.0", Releases: "4.12.0 to 4.14.0",
			Digest: "d2e0a73f79ea70261eacbcf61f986df591f1843d9aae2b4b80e9b7ff758cd67d",
			resolve: filebeatVersionOf([]string{"FreeBSD", "OpenBSD", "Linux", "Windows", "SunOS"}, []filebeatPath{
				{"/usr/bin/filebeat", true}, {"/usr/local/bin/filebeat", true}, {"/opt/local/bin/filebeat", true},
				{"/usr/share/filebeat/bin/filebeat", false}, {"/usr/local/sbin/filebeat", true}})}}})
}

// collectdVersion is collectd_version, the version help's line gives.
func collectdVersion(help *regexp.Regexp) func(r *Run, out map[string]Value) {
	return func(r *Run, out map[string]Value) {
		if r.Which("collectd") == "" {
			return
		}
		text, err := r.Exec("collectd -h")
		if err == nil {
			if m := help.FindStringSubmatch(text); m != nil {
				out["collectd_version"] = Value{V: m[1]}
				return
			}
			err = errors.New("collectd -h: no version")
		}
		r.Fail(r.file("collectd_version"), "collectd_version", err)
	}
}

// pythonDir is python_dir: the site-packages of the first of pythons
// installed (distutils' get_python_lib on RedHat), else, with
// platformPython, /usr/libexec/platform-python's get_python_lib; ""
// without any.
func pythonDir(platformPython bool, pythons ...string) func(r *Run, out map[string]Value) {
	return func(r *Run, out map[string]Value) {
		c := ""
		for _, py := range pythons {
			if r.Which(py) != "" {
				c = py + ` -c "import site; print(site.getsitepackages()[0])"`
				if r.Value("osfamily") == "RedHat" {
					c = py + ` -c "from distutils.sysconfig import get_python_lib; print(get_python_lib())"`
				}
				break
			}
		}
		if c == "" && platformPython && fileExists("/usr/libexec/platform-python") {
			c = `/usr/libexec/platform-python -c "from distutils.sysconfig import get_python_lib; print(get_python_lib())"`
		}
		if c == "" {
			out["python_dir"] = Value{V: ""}
			return
		}
		if text, err := r.Exec(c); err == nil {
			out["python_dir"] = Value{V: text}
		} else {
			r.Fail(r.file("python_dir"), "python_dir", err)
		}
	}
}

// A filebeatPath is where filebeat_version looks for filebeat, and
// whether it asks `filebeat version` first (else only --version).
type filebeatPath struct {
	path       string
	tryVersion bool
}

// filebeatVersionOf is filebeat_version on kernels, filebeat looked for
// at paths, in order.
func filebeatVersionOf(kernels []string, paths []filebeatPath) func(r *Run, out map[string]Value) {
	return func(r *Run, out map[string]Value) {
		if !r.confine("kernel", kernels...) {
			return
		}
		var text string
		var err error
		found := false
		for _, c := range paths {
			if !executable(c.path) {
				continue
			}
			found = true
			if c.tryVersion {
				text, err = r.Exec(c.path + " version")
			}
			if !c.tryVersion || err == nil && text == "" {
				text, err = r.Exec(c.path + " --version")
			}
			break
		}
		if !found {
			out["filebeat_version"] = Value{V: false, Weight: 1}
			return
		}
		if err == nil {
			if m := filebeatVersion.FindStringSubmatch(text); m != nil {
				if m[1] != "" {
					out["filebeat_version"] = Value{V: m[1], Weight: 1}
				}
				return
			}
			err = errors.New("no filebeat version in " + text)
		}
		r.Fail(r.file("filebeat_version"), "filebeat_version", err)
	}
}

// iptablesVersion4 is puppetlabs-firewall's (ip6)iptables_version from
// 4.0.1: confined on the program's presence too (weight 2), "" when its
// --version has no X.Y.Z, absent when it cannot be run.
func iptablesVersion4(program string) func(r *Run, out map[string]Value) {
	fact := program + "_version"
	return func(r *Run, out map[string]Value) {
		if !r.confine("kernel", "Linux") || r.Which(program) == "" {
			return
		}
		v, err := r.Exec(program + " --version")
		if err != nil {
			if !errors.Is(err, ErrNotFound) {
				r.Fail(r.file(fact), fact, err)
			}
			return
		}
		out[fact] = Value{V: threeNumbers.FindString(v), Weight: 2}
	}
}

// redisVersion12 is puppet-redis' redis_server_version from 12.1.0: the
// version in redis-server -v's "Redis server v=X.Y.Z ..." (or "version
// X.Y.Z ..."), else valkey-server -v's "Valkey server ..."; absent when
// neither is installed or the line is not there.
func redisVersion12(r *Run, out map[string]Value) {
	for _, s := range []struct {
		program string
		re      *regexp.Regexp
	}{{"redis-server", redisServer}, {"valkey-server", valkeyServer}} {
		if r.Which(s.program) == "" {
			continue
		}
		text, err := r.Exec(s.program + " -v")
		if err != nil {
			r.Fail(r.file("redis_server_version"), "redis_server_version", err)
			return
		}
		if m := s.re.FindStringSubmatch(text); m != nil {
			out["redis_server_version"] = Value{V: m[1]}
		}
		return
	}
}

var (
	redisServer  = regexp.MustCompile(`Redis server (?:version|v=)([\w.]+).+`)
	valkeyServer = regexp.MustCompile(`Valkey server (?:version|v=)([\w.]+).+`)
)

// rubyHexDigits is what Ruby's to_i(16) reads of s: an optional sign and
// 0x, then hexadecimal digits (underscores between them ignored), up to
// the first other character; "0" when there are none.
func rubyHexDigits(s string) string {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	sign := ""
	if s != "" && (s[0] == '-' || s[0] == '+') {
		if s[0] == '-' {
			sign = "-"
		}
		s = s[1:]
	}
	if len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
		s = s[2:]
	}
	isHex := func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if isHex(s[i]) {
			b.WriteByte(s[i])
		} else if !(s[i] == '_' && i > 0 && isHex(s[i-1]) && i+1 < len(s) && isHex(s[i+1])) {
			break
		}
	}
	if b.Len() == 0 {
		return "0"
	}
	return sign + b.String()
}

func iptablesVersion(fact, command string) func(r *Run, out map[string]Value) {
	return func(r *Run, out map[string]Value) {
		if !r.confine("kernel", "Linux") {
			return
		}
		v, err := r.Exec(command)
		if errors.Is(err, ErrNotFound) {
			return
		}
		if err != nil {
			r.Fail(r.file(fact), fact, err)
			return
		}
		out[fact] = Value{V: threeNumbers.FindString(v), Weight: 1}
	}
}

// rubyHex is Ruby's String#hex: the leading hexadecimal digits (an
// optional sign and 0x), 0 when there are none.
func rubyHex(s string) int64 {
	s = strings.TrimSpace(s)
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	var n int64
	for _, c := range s {
		var d int64
		switch {
		case c >= '0' && c <= '9':
			d = int64(c - '0')
		case c >= 'a' && c <= 'f':
			d = int64(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = int64(c-'A') + 10
		case c == '_':
			continue
		default:
			if neg {
				return -n
			}
			return n
		}
		n = n*16 + d
	}
	if neg {
		return -n
	}
	return n
}

var versionToken = regexp.MustCompile(`[-.]|\d+|[^-.\d]+`)

// versionCmp is Puppet::Util::Package.versioncmp: -1, 0 or 1.
func versionCmp(a, b string) int {
	ax, bx := versionToken.FindAllString(a, -1), versionToken.FindAllString(b, -1)
	isNum := func(s string) bool {
		for _, c := range s {
			if c < '0' || c > '9' {
				return false
			}
		}
		return s != ""
	}
	for len(ax) > 0 && len(bx) > 0 {
		x, y := ax[0], bx[0]
		ax, bx = ax[1:], bx[1:]
		switch {
		case x == y:
			continue
		case x == "-":
			return -1
		case y == "-":
			return 1
		case x == ".":
			return -1
		case y == ".":
			return 1
		case isNum(x) && isNum(y):
			if x[0] == '0' || y[0] == '0' {
				return strings.Compare(strings.ToUpper(x), strings.ToUpper(y))
			}
			return compareDigits(x, y)
		}
		return strings.Compare(strings.ToUpper(x), strings.ToUpper(y))
	}
	return strings.Compare(a, b)
}

// compareDigits compares two decimal numbers without leading zeros.
func compareDigits(x, y string) int {
	if len(x) != len(y) {
		if len(x) < len(y) {
			return -1
		}
		return 1
	}
	return strings.Compare(x, y)
}

// executable is Ruby's File.executable?.
func executable(p string) bool {
	return syscall.Access(p, 1) == nil
}
