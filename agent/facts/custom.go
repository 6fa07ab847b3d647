package facts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/goccy/go-json"

	"github.com/pippet/pippet/internal/factsrb"
	"github.com/pippet/pippet/protocol"
)

// Custom facts are Ruby: only Facter can evaluate them. When a custom
// fact directory holds any *.rb file, Gather runs one Ruby process that
// loads Facter, points it at the directories (Facter.search, as Puppet's
// agent does with its factpath), resolves every custom fact they define
// and prints the values as JSON; with none, no process is started.
//
// Facter decides each custom fact's value itself, core facts included: a
// custom fact of a core fact's name whose resolution has no weight (no
// has_weight, no confine) gets the core value, one with weight its own.
// External facts are not loaded in that process (an executable one would
// run twice): Gather applies Facter's precedence between the two itself
// (an external fact has weight 10000 and wins unless a custom
// resolution's weight is higher), then FACTER_ variables override both.

// DefaultCustomTimeout bounds the Ruby process that evaluates custom facts.
const DefaultCustomTimeout = 60 * time.Second

// maxCustomOutput bounds what the custom facts' process may print.
const maxCustomOutput = 64 << 20

// externalFactWeight is Facter's weight of an external fact's resolution.
const externalFactWeight = 10000

// aioRuby is the all-in-one puppet-agent package's Ruby, which carries
// its Facter; preferred over the Ruby on PATH when present.
const aioRuby = "/opt/puppetlabs/puppet/bin/ruby"

// customScript loads Facter, evaluates the custom facts of the directories
// given as arguments (when files follow them, only those files' facts),
// and prints {"facts": {NAME: {"value": V, "weight":
// W}}, "errors": [...]}. Exit status 3: Facter cannot be loaded. What a
// fact prints goes to stderr ($stdout is pointed there), not into the
// answer.
var customScript = customScriptSetup + factsrb.Source + `
answer.write(JSON.generate({ 'facts' => pippet_custom_facts(ARGV, errors), 'errors' => errors }))
`

const customScriptSetup = `
answer = $stdout.dup
$stdout.reopen($stderr)
begin
  require 'facter'
rescue LoadError => e
  $stderr.puts "Facter cannot be loaded: #{e.message}"
  exit 3
end
require 'json'
errors = []
Facter.on_message do |level, message|
  errors << message.to_s if level == :error || level == :fatal
end
Facter::Options[:no_external_facts] = true
`

// SkippedError says custom facts were found but not evaluated, because
// Facter (or Ruby) is not installed here: a warning, the run goes on
// without them.
type SkippedError struct {
	// Facts are the names of the skipped facts, as their files name them
	// (Facter's convention: NAME.rb defines NAME).
	Facts []string
	// Reason says what is missing.
	Reason string
}

func (e *SkippedError) Error() string {
	return fmt.Sprintf("custom facts not evaluated (%s): %s", e.Reason, strings.Join(e.Facts, ", "))
}

// customFiles lists the *.rb files directly in dirs, as Facter loads them.
func customFiles(dirs []string) []string {
	var files []string
	for _, d := range dirs {
		m, _ := filepath.Glob(filepath.Join(d, "*.rb"))
		sort.Strings(m)
		for _, f := range m {
			if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
				files = append(files, f)
			}
		}
	}
	return files
}

// HasCustom says whether dirs hold a custom fact file: whether there is
// anything for Facter to evaluate (LoadCustom starts no process
// otherwise).
func HasCustom(dirs []string) bool { return len(customFiles(dirs)) > 0 }

// ExistingDirs are those of dirs that are directories: the ones Facter
// is given, and an Evaluator is called with.
func ExistingDirs(dirs []string) []string {
	var existing []string
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			existing = append(existing, d)
		}
	}
	return existing
}

// customValue is one custom fact as Facter resolved it.
type customValue struct {
	Value  any    `json:"value"`
	Weight int64  `json:"weight"`
	File   string `json:"file"`
}

// Evaluator evaluates the custom facts of dirs (those that exist) in a
// Ruby process already running (when files follow the directories in
// dirs, only those files' facts: the others are resolved natively), and returns Facter's answer as the
// Facter process prints it: {"facts": {NAME: {"value": V, "weight": W}},
// "errors": [...]}. delegate.Fallback.CustomFacts is one: the Puppet an
// agent's run starts for the types pippet lacks.
type Evaluator func(ctx context.Context, dirs []string) ([]byte, error)

// LoadCustom evaluates the custom facts of dirs with Facter, run by ruby
// ("" for the all-in-one agent's Ruby, else ruby on PATH). It returns the
// facts with a value and their resolutions' weights; nothing, and no
// process, when dirs hold no *.rb file. A *SkippedError says Facter is
// not installed; each fact file that raised is one error.
func LoadCustom(ctx context.Context, dirs []string, ruby string, timeout time.Duration) (Facts, map[string]int64, []error) {
	f, weights, _, errs := loadCustom(ctx, dirs, customFiles(dirs), false, nil, ruby, timeout)
	return f, weights, errs
}

// loadCustom is LoadCustom for files, custom fact files of dirs (only
// those when only is set: the others are resolved natively), asking eval
// first when it is not nil: its answer is taken unless it fails, and the
// Facter process then evaluates the facts, as without it. defined
// says which file defined each fact (when Facter says).
func loadCustom(ctx context.Context, dirs, files []string, only bool, eval Evaluator, ruby string, timeout time.Duration) (f Facts, weights map[string]int64, defined map[string]string, errs []error) {
	if len(files) == 0 {
		return nil, nil, nil, nil
	}
	if timeout <= 0 {
		timeout = DefaultCustomTimeout
	}
	existing := ExistingDirs(dirs)
	args := existing
	if only {
		// The directories stay searched (a fact asking Facter.value for
		// another finds it), the files say whose facts to evaluate.
		args = append(slices.Clip(existing), files...)
	}
	if eval != nil {
		ectx, cancel := context.WithTimeout(ctx, timeout)
		out, err := eval(ectx, args)
		cancel()
		if err == nil {
			return parseCustom(out, existing)
		}
		if ctx.Err() != nil {
			return nil, nil, nil, []error{fmt.Errorf("custom facts (%s): %w", strings.Join(existing, ", "), ctx.Err())}
		}
		// Said, and evaluated again by a Facter of their own.
		errs = append(errs, fmt.Errorf("custom facts (%s): %w; evaluating them with Facter instead", strings.Join(existing, ", "), err))
	}
	skipped := func(reason string) []error {
		names := make([]string, len(files))
		for i, f := range files {
			names[i] = strings.TrimSuffix(filepath.Base(f), ".rb")
		}
		return append(errs, &SkippedError{Facts: names, Reason: reason})
	}
	if ruby == "" {
		ruby = aioRuby
		if _, err := os.Stat(ruby); err != nil {
			if ruby, err = exec.LookPath("ruby"); err != nil {
				return nil, nil, nil, skipped("Ruby and Facter are not installed")
			}
		}
	} else if p, err := exec.LookPath(ruby); err != nil {
		return nil, nil, nil, skipped(fmt.Sprintf("no Ruby at %s", ruby))
	} else {
		ruby = p
	}
	out, err := runBounded(ctx, "/", timeout, maxCustomOutput, append([]string{ruby, "-e", customScript, "--"}, args...)...)
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 {
			return nil, nil, nil, skipped("Facter is not installed for " + ruby)
		}
		return nil, nil, nil, append(errs, fmt.Errorf("custom facts (%s): %w", strings.Join(existing, ", "), err))
	}
	f, weights, defined, perrs := parseCustom(out, existing)
	return f, weights, defined, append(errs, perrs...)
}

// parseCustom reads Facter's answer about the custom facts of dirs: their
// values, weights and files.
func parseCustom(out []byte, dirs []string) (Facts, map[string]int64, map[string]string, []error) {
	var answer struct {
		Facts  map[string]customValue `json:"facts"`
		Errors []string               `json:"errors"`
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(&answer); err != nil {
		return nil, nil, nil, []error{fmt.Errorf("custom facts (%s): Facter's answer: %w", strings.Join(dirs, ", "), err)}
	}
	var errs []error
	for _, e := range answer.Errors {
		errs = append(errs, errors.New("custom facts: "+e))
	}
	f, weights, defined := Facts{}, map[string]int64{}, map[string]string{}
	for name, cv := range answer.Facts {
		if cv.Value == nil {
			continue
		}
		f[name] = protocol.Numbers(cv.Value)
		weights[name] = cv.Weight
		if cv.File != "" {
			defined[name] = cv.File
		}
	}
	return f, weights, defined, errs
}

// mergeCustom puts custom facts into f with Facter's precedence over the
// external facts ext: an external fact wins unless the custom fact's
// resolution weighs more.
func mergeCustom(f, custom Facts, weights map[string]int64, ext Facts) {
	for name, v := range custom {
		if _, isExt := ext[name]; isExt && weights[name] <= externalFactWeight {
			continue
		}
		f[name] = v
	}
}
