package puppetserver

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// BenchmarkAgentConverged (issues 24 and 34's Speed): one op is a run
// of `receiver agent -t` and a run of `puppet agent -t` on the same
// converged node against the same server, interleaved (which agent goes
// first alternates) so that a machine whose load moves weighs on both
// alike. Reported, each the MEDIAN over the ops (-benchtime 3x: the
// median of three interleaved runs): each agent's whole wall time
// (receiver-s, puppet-s) and their ratio (receiver/puppet, the ratio
// of the medians), and its phases as its own report's time metrics say
// (facts, pluginsync, node and catalog requests, apply), the server's
// time to take the report (its access log), and what lies outside the
// run's total (starting the process, sending the report, exiting);
// each agent's peak resident memory (the highest); and, for the site
// and lean cases, the Ruby floor (rubyfloor-s): starting Ruby, loading
// Puppet and evaluating the custom facts pluginsync brought, which any
// agent of these modules pays when it evaluates them in Ruby. Slow (a
// Puppet run takes seconds): `go test -run '^$' -bench
// BenchmarkAgentConverged -benchtime 3x ./integration/puppetserver/`,
// or `make bench-agent`; one case: -bench 'BenchmarkAgentConverged/native'.
func BenchmarkAgentConverged(b *testing.B) {
	s := need(b)
	if _, err := exec.LookPath("puppet"); err != nil {
		b.Skip("puppet is not installed")
	}
	// site: the environment's modulepath holds every Forge module Debian
	// packages, whose plugins and custom facts (apt's run apt-get) come
	// with pluginsync; lean: only the modules the node uses.
	b.Run("site", func(b *testing.B) { benchAgents(b, s, acoreEnv) })
	b.Run("lean", func(b *testing.B) { benchAgents(b, s, acoreLeanEnv) })
	// native: issue 34's check, native types only, Debian's stdlib, ssh,
	// systemd, host_core and cron_core, whose custom facts pippet
	// resolves natively (no Ruby in the receiver's run).
	b.Run("native", func(b *testing.B) { benchAgents(b, s, anativeEnv) })
}

// samples are a benchmark's measures, by metric, one per op.
type samples map[string][]float64

func (s samples) add(metric string, v float64) { s[metric] = append(s[metric], v) }

// median is the median of the metric's samples (the mean of the middle
// two for an even count).
func (s samples) median(metric string) float64 {
	v := append([]float64(nil), s[metric]...)
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// report reports every metric's median, per op.
func (s samples) report(b *testing.B) {
	for k := range s {
		b.ReportMetric(s.median(k), k+"/op")
	}
}

// agentPhases are the report's time metrics benchAgents reports, by
// the name it reports them under.
var agentPhases = []struct{ metric, name string }{
	{"fact_generation", "facts"}, {"plugin_sync", "pluginsync"}, {"node_retrieval", "node"},
	{"config_retrieval", "catalog"}, {"catalog_application", "apply"},
}

func benchAgents(b *testing.B, s *server, env string) {
	// Two nodes (certnames) of the same catalog, one per agent, so that
	// the server's access log tells their report requests apart.
	np := benchNode(b, s, "acore-bench-"+env+"-pippet")
	nr := benchNode(b, s, "acore-bench-"+env+"-puppet")
	np.env, nr.env = env, env
	pvar := filepath.Join(np.dir, "pippet-var")
	rvar := filepath.Join(nr.dir, "puppet-var")
	pconf := np.benchConf(b, s, "pippet", pvar)
	rconf := nr.benchConf(b, s, "puppet", rvar)
	pippet := func() (time.Duration, map[string]float64) {
		start := time.Now()
		code, out, errs := benchReceiverAgent(np, pconf)
		wall := time.Since(start)
		if code != 0 {
			b.Fatalf("receiver agent: exit %d (want 0: converged)\n%s%s", code, out, errs)
		}
		return wall, reportTimes(b, pvar)
	}
	puppet := func() (time.Duration, map[string]float64) {
		start := time.Now()
		code, out := benchPuppetAgent(nr, rconf)
		wall := time.Since(start)
		if code != 0 {
			b.Fatalf("puppet agent: exit %d (want 0: converged)\n%s", code, out)
		}
		return wall, reportTimes(b, rvar)
	}
	// Converge first.
	benchReceiverAgent(np, pconf)
	benchPuppetAgent(nr, rconf)
	reports0 := map[string]int{"receiver": len(reportPuts(b, s, np.certname)), "puppet": len(reportPuts(b, s, nr.certname))}
	// The Ruby floor: what the modules' custom facts cost in any agent
	// that evaluates them in Ruby (start Ruby, load Puppet, evaluate
	// them: bench/agentfacts/floor.rb on the facts pluginsync brought),
	// timed beside the two agents; not for the native case, whose
	// receiver runs no Ruby.
	floorScript, err := filepath.Abs("../../bench/agentfacts/floor.rb")
	if err != nil {
		b.Fatal(err)
	}
	rubyFloor := func() time.Duration {
		// With the libdir on Ruby's load path, as in Puppet's agent: the
		// facts require the modules' Ruby (puppet_x, types) from it.
		cmd := exec.Command("ruby", "-I", filepath.Join(pvar, "lib"), "-I", "/usr/lib/ruby/vendor_ruby", floorScript,
			filepath.Join(pvar, "lib", "facter"), filepath.Join(pvar, "facts"))
		start := time.Now()
		if code, out, errs := runCmd(cmd); code != 0 {
			b.Fatalf("floor.rb: exit %d\n%s%s", code, out, errs)
		}
		return time.Since(start)
	}
	runs := []struct {
		who string
		f   func() (time.Duration, map[string]float64)
	}{{"receiver", pippet}, {"puppet", puppet}}
	m := samples{}
	peak := map[string]int64{}
	b.Cleanup(func() { removeCron(b, "anative-facts") })
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if env != anativeEnv {
			m.add("rubyfloor-s", rubyFloor().Seconds())
		}
		for j := range runs {
			// Which agent goes first alternates.
			r := runs[(i+j)%len(runs)]
			wall, times := r.f()
			peak[r.who] = max(peak[r.who], lastPeakRSS)
			m.add(r.who+"-s", wall.Seconds())
			for _, p := range agentPhases {
				m.add(r.who+"-"+p.name+"-s", times[p.metric])
			}
			m.add(r.who+"-outside-s", wall.Seconds()-times["total"])
		}
	}
	b.StopTimer()
	// The report: how long the server took to take it (its access log's
	// %D, milliseconds, for each PUT of the timed runs).
	for who, n := range map[string]*acoreNode{"receiver": np, "puppet": nr} {
		for _, ms := range reportPuts(b, s, n.certname)[reports0[who]:] {
			m.add(who+"-report-s", ms/1000)
		}
	}
	m.report(b)
	b.ReportMetric(m.median("receiver-s")/m.median("puppet-s"), "receiver/puppet")
	for who, kib := range peak {
		b.ReportMetric(float64(kib)/1024, who+"-peakrss-MiB")
	}
	b.Logf("%s, every run (s): receiver %.3f; puppet %.3f", env, m["receiver-s"], m["puppet-s"])
}

// reportPuts are the durations (ms) of the server's answers to certname's
// report requests, in order.
func reportPuts(b *testing.B, s *server, certname string) []float64 {
	time.Sleep(300 * time.Millisecond) // the line follows the answer
	raw, err := os.ReadFile(s.access)
	if err != nil {
		b.Fatal(err)
	}
	re := regexp.MustCompile(`"PUT /puppet/v3/report/` + regexp.QuoteMeta(certname) + `\?[^"]*" 200 \S+ (\d+)`)
	var out []float64
	for _, m := range re.FindAllSubmatch(raw, -1) {
		ms, _ := strconv.ParseFloat(string(m[1]), 64)
		out = append(out, ms)
	}
	return out
}

func benchNode(b testing.TB, s *server, certname string) *acoreNode {
	dir := b.TempDir()
	n := &acoreNode{certname: certname, dir: dir, ssldir: filepath.Join(dir, "ssl"), root: filepath.Join(dir, "root")}
	ssl := filepath.Join(s.dir, "puppet", "ssl")
	if _, err := os.Stat(filepath.Join(ssl, "certs", certname+".pem")); err != nil {
		if err := ca(s.confFile, "generate", "--certname", certname); err != nil {
			b.Fatal(err)
		}
	}
	for _, f := range []string{"certs/ca.pem", "crl.pem", "certs/" + certname + ".pem", "private_keys/" + certname + ".pem"} {
		if err := copyFile(filepath.Join(ssl, f), filepath.Join(n.ssldir, f), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return n
}

func (n *acoreNode) benchConf(b testing.TB, s *server, name, vardir string) string {
	confdir := filepath.Join(n.dir, name+"-conf")
	if err := write(filepath.Join(confdir, "puppet.conf"), agentConf(n, s, vardir)); err != nil {
		b.Fatal(err)
	}
	return confdir
}

func benchReceiverAgent(n *acoreNode, confdir string) (int, string, string) {
	cmd := exec.Command(receiverBin, "agent", "-t", "--confdir", confdir, "--state-dir", filepath.Join(n.dir, "pippet-state"))
	cmd.Env = append(os.Environ(), "FACTER_acore_root="+n.root+"-pippet", "HOME="+n.dir)
	return runCmd(cmd)
}

func benchPuppetAgent(n *acoreNode, confdir string) (int, string) {
	cmd := exec.Command("puppet", "agent", "-t", "--confdir", confdir)
	cmd.Env = append(os.Environ(), "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"FACTER_acore_root="+n.root+"-puppet", "HOME="+n.dir)
	code, out, errs := runCmd(cmd)
	return code, out + errs
}

// lastPeakRSS is the peak resident memory (KiB) of runCmd's last
// command and the processes it waited for (wait4's ru_maxrss).
var lastPeakRSS int64

func runCmd(cmd *exec.Cmd) (int, string, string) {
	cmd.Dir = "/"
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	err := cmd.Run()
	lastPeakRSS = 0
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			lastPeakRSS = ru.Maxrss
		}
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errs.String()
	} else if err != nil {
		return -1, out.String(), errs.String() + err.Error()
	}
	return 0, out.String(), errs.String()
}

// reportTimes are the time metrics of the agent's last_run_report.yaml,
// in seconds by name.
func reportTimes(b testing.TB, vardir string) map[string]float64 {
	raw, err := os.ReadFile(filepath.Join(vardir, "state", "last_run_report.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	var rep struct {
		Metrics map[string]struct {
			Values [][]any `yaml:"values"`
		} `yaml:"metrics"`
	}
	if err := yaml.Unmarshal(stripRubyTags(raw), &rep); err != nil {
		b.Fatal(err)
	}
	out := map[string]float64{}
	for _, v := range rep.Metrics["time"].Values {
		if len(v) == 3 {
			if f, ok := toFloat(v[2]); ok {
				out[fmt.Sprint(v[0])] = f
			}
		}
	}
	return out
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	}
	return 0, false
}
