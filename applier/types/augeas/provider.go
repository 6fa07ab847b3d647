package augeas

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/command"
)

// Provider drives augtool.
var Provider = &applier.ProviderSpec{
	Name: "augeas",
	Doc: "Runs the changes through augtool (Debian's augeas-tools), a dry run deciding, as " +
		"augeas_core's provider does through ruby-augeas.",
	Confine: applier.Confine{Commands: []string{"augtool", "stdbuf"}},
	New: func(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
		return &provider{r: r, env: env}, nil
	},
}

type provider struct {
	r   *applier.Resource
	env *applier.Env
	// diffs are the dry run's diffs (show_diff), for Set's message.
	diffs []string
}

// needToRun is the value returns reads when the changes should run.
const needToRun = "need_to_run"

func (p *provider) context() string {
	c := p.r.String("context")
	if c == "" && p.r.Has("incl") {
		c = "/files" + p.r.String("incl")
	}
	return c
}

// argv is augtool's command line: the options Puppet opens Augeas with.
func (p *provider) argv() []string {
	argv := []string{"stdbuf", "-oL", "augtool"}
	if p.r.Has("incl") {
		argv = append(argv, "-A")
	} else {
		argv = append(argv, "-L")
	}
	if p.r.String("type_check") == "true" {
		argv = append(argv, "-c")
	}
	argv = append(argv, "-r", p.root())
	for _, e := range p.r.Strings("load_path") {
		for _, d := range strings.Split(e, ":") {
			if d != "" {
				argv = append(argv, "-I", d)
			}
		}
	}
	return argv
}

func (p *provider) root() string {
	if r := p.r.String("root"); r != "" {
		return r
	}
	return "/"
}

// ctxLoad is Puppet's test for a context it can restrict loading to.
var ctxLoad = regexp.MustCompile(`^/files/[^'"\[\]]+$`)

// open adds the commands that load the files: with incl, that file
// through the lens; else every transform, restricted to those that can
// hold the context when it is a plain path. It returns the step that
// lists the load's errors (see loadErrors).
func (p *provider) open(s *script) (errStep int, err error) {
	if p.r.Has("incl") {
		for _, kv := range [][2]string{{"/augeas/load/Xfm/lens", p.r.String("lens")}, {"/augeas/load/Xfm/incl", p.r.String("incl")}} {
			l, err := line("set", kv[0], kv[1])
			if err != nil {
				return 0, err
			}
			s.add(l)
		}
	} else if c := p.context(); ctxLoad.MatchString(c) {
		dir := strings.TrimSuffix(strings.TrimPrefix(c, "/files"), "/") + "/"
		// The transforms whose incl globs cannot hold the context are
		// removed, unless that would remove them all (Puppet's rule).
		cannot := "*['" + dir + "' !~ glob(incl) + regexp('/.*')]"
		l, err := line("rm", "/augeas/load[count("+cannot+") < count(*)]/"+cannot)
		if err != nil {
			return 0, err
		}
		s.add(l)
	}
	s.add("load")
	return s.add("dump-xml /augeas//error"), nil
}

// loadErrors logs what Augeas could not load, as Puppet does: a warning
// when it concerns the file the resource works on, else debug.
func (p *provider) loadErrors(st step) {
	if st.Err != "" {
		return
	}
	ns, err := nodes(st.Out)
	if err != nil || len(ns) == 0 {
		return
	}
	log := p.env.Logger()
	mine := p.r.Has("incl")
	if !mine && ctxLoad.MatchString(p.context()) {
		prefix := "/augeas/files" + strings.TrimPrefix(strings.TrimSuffix(p.context(), "/"), "/files") + "/error"
		for _, n := range ns {
			mine = mine || strings.HasPrefix(n.Path, prefix)
		}
	}
	if mine {
		log.Warn("/" + p.r.Ref() + ": Loading failed for one or more files, see debug for /augeas//error output")
	}
	for _, n := range ns {
		v := ""
		if n.Value != nil {
			v = *n.Value
		}
		log.Debug("/" + p.r.Ref() + ": " + n.Path + " = " + v)
	}
}

// Get decides whether the changes should run: onlyif, then (unless
// force) a dry run. A read (find) runs nothing and reports need_to_run.
func (p *provider) Get(ctx context.Context, cur *applier.State) error {
	if p.r.ReadAll() {
		cur.Set("returns", needToRun)
		return nil
	}
	run, err := p.needToRun(ctx)
	if err != nil {
		return err
	}
	if run {
		cur.Set("returns", needToRun)
	} else {
		cur.Set("returns", "0")
	}
	return nil
}

func (p *provider) needToRun(ctx context.Context) (bool, error) {
	p.diffs = p.diffs[:0]
	if !p.r.Has("changes") {
		return false, errors.New("no changes to make: changes is not given")
	}
	if f := p.r.String("onlyif"); f != "" {
		ok, err := p.onlyif(ctx, f)
		if err != nil || !ok {
			return false, err
		}
	}
	if p.r.Bool("force") {
		return true, nil
	}
	saved, err := p.execute(ctx, true)
	if err != nil {
		return false, err
	}
	for _, f := range saved {
		switch {
		case p.env == nil || !p.env.Options.ShowDiff || !p.r.Bool("show_diff"):
		case p.r.IsSensitive("changes"):
			// The changes are secret, so is what they do to the file
			// (Puppet's augeas would print it).
			p.env.Logger().Log(ctx, p.r.LogLevel, "/"+p.r.Ref()+"/returns: [diff redacted]")
		default:
			p.diff(ctx, f)
		}
		if err := os.Remove(f + ".augnew"); err != nil && !os.IsNotExist(err) {
			return false, fmt.Errorf("removing the dry run's %s.augnew: %w", f, err)
		}
	}
	if len(saved) == 0 {
		p.env.Logger().Debug("/" + p.r.Ref() + ": Skipping because no files were changed")
	}
	return len(saved) > 0, nil
}

// commands are the resource's changes, parsed.
func (p *provider) commands() ([]augCmd, error) {
	return parseCommands(p.r.Strings("changes"), p.context())
}

// changeLine renders one change as augtool's command.
func changeLine(c augCmd) (string, error) {
	a := c.Args
	switch c.Name {
	case "set", "setm", "clearm", "mv", "move", "rename", "defvar", "defnode":
		return line(c.Name, a...)
	case "rm", "remove":
		return line("rm", a...)
	case "clear", "touch":
		return line(c.Name, a[0])
	case "ins", "insert":
		if a[1] != "before" && a[1] != "after" {
			return "", fmt.Errorf("Invalid value '%s' for where param", a[1])
		}
		return line("ins", a[0], a[1], a[2])
	}
	return "", fmt.Errorf("Command '%s' is not supported", c.Name)
}

// execute runs the changes and saves: dryRun saves .augnew files and
// returns the files that would change; otherwise the files are
// overwritten (atomically, by Augeas).
func (p *provider) execute(ctx context.Context, dryRun bool) (saved []string, err error) {
	cmds, err := p.commands()
	if err != nil {
		return nil, err
	}
	s := newScript()
	loadStep, err := p.open(s)
	if err != nil {
		return nil, err
	}
	mode := "overwrite"
	if dryRun {
		mode = "newfile"
	}
	s.add("set /augeas/save " + mode)
	first := len(s.cmds)
	for _, c := range cmds {
		l, err := changeLine(c)
		if err != nil {
			return nil, fmt.Errorf("Error sending command '%s' with params %s/%w", c.Name, c.params(), err)
		}
		s.add(l)
	}
	saveStep := s.add("save")
	eventsStep := s.add("dump-xml /augeas/events/saved")
	errStep := s.add("dump-xml /augeas//error[. = 'put_failed']")
	steps, err := s.run(ctx, p.argv())
	if err != nil {
		return nil, err
	}
	p.loadErrors(steps[loadStep])
	for i := range first {
		if steps[i].Err != "" && i != loadStep && s.cmds[i] != "load" {
			return nil, fmt.Errorf("opening augeas: '%s': %s", s.cmds[i], errText(steps[i].Err))
		}
	}
	for i, c := range cmds {
		if e := steps[first+i].Err; e != "" {
			return nil, fmt.Errorf("Error sending command '%s' with params %s/%s", c.Name, c.params(), errText(e))
		}
	}
	if e := steps[saveStep].Err; e != "" {
		// Puppet's words, then the details it leaves to its debug log.
		var details []string
		if ns, err := nodes(steps[errStep].Out); err == nil {
			for _, n := range ns {
				d := n.Path
				if n.Value != nil {
					d += " = " + *n.Value
				}
				details = append(details, d)
			}
		}
		if m := putMessages(steps[errStep].Out); m != "" {
			details = append(details, m)
		}
		for _, d := range details {
			p.env.Logger().Debug("/" + p.r.Ref() + ": " + d)
		}
		if len(details) == 0 {
			details = append(details, errText(e))
		}
		return nil, fmt.Errorf("Save failed, see debug output for details (%s)", strings.Join(details, ": "))
	}
	ns, err := nodes(steps[eventsStep].Out)
	if err != nil {
		return nil, err
	}
	root := strings.TrimSuffix(p.root(), "/")
	seen := map[string]bool{}
	for _, n := range ns {
		if n.Value == nil {
			continue
		}
		f := root + strings.TrimPrefix(*n.Value, "/files")
		if !seen[f] {
			seen[f] = true
			saved = append(saved, f)
		}
	}
	return saved, nil
}

// putMessages are the message children of put errors in dump-xml's
// answer, one a line.
func putMessages(out string) string {
	type sub struct {
		Label string `xml:"label,attr"`
		Value string `xml:"value"`
	}
	var doc struct {
		Nodes []struct {
			Subs []sub `xml:"node"`
		} `xml:"node"`
	}
	if err := xml.Unmarshal([]byte(out), &doc); err != nil {
		return ""
	}
	var msgs []string
	for _, n := range doc.Nodes {
		for _, s := range n.Subs {
			if s.Label == "message" {
				msgs = append(msgs, strings.TrimSpace(s.Value))
			}
		}
	}
	return strings.Join(msgs, "\n")
}

// diff keeps the diff the change would make to file (diff -u, as
// Puppet's); in noop mode it is logged at the resource's loglevel, as
// the file type logs a noop content diff, since no event message will
// carry it.
func (p *provider) diff(ctx context.Context, file string) {
	res, err := command.Run(ctx, &command.Cmd{Argv: []string{"diff", "-u", "-N", file, file + ".augnew"}, Timeout: timeout})
	if err != nil {
		p.env.Logger().Debug("/" + p.r.Ref() + ": diff: " + err.Error())
		return
	}
	out := strings.TrimRight(string(res.Output), "\n")
	if res.Truncated {
		out = "(diff cut to its last " + strconv.Itoa(command.DefaultMaxOutput) + " bytes)\n" + out
	}
	if p.r.Noop {
		p.env.Logger().Log(ctx, p.r.LogLevel, "/"+p.r.Ref()+"/returns: would change (noop)\n"+out)
	}
	p.diffs = append(p.diffs, out)
}

// Set runs the changes for real.
func (p *provider) Set(ctx context.Context, c *applier.Change) error {
	if c.Property != "returns" {
		return fmt.Errorf("augeas has no property %s", c.Property)
	}
	if _, err := p.execute(ctx, false); err != nil {
		return err
	}
	if p.env != nil && p.env.Cache != nil {
		p.env.Cache.Clear() // files other resources read have changed
	}
	c.Message = "executed successfully"
	for _, d := range p.diffs {
		c.Message += "\n" + d
	}
	return nil
}
