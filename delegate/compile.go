package delegate

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// Compiler is the Ruby program that compiles a manifest with Puppet.
//
//go:embed pippet-compile.rb
var Compiler string

// CompileOptions say what to compile and with which settings.
type CompileOptions struct {
	// Manifest is a manifest file; Code is manifest code (puppet apply
	// -e). One of them.
	Manifest, Code string
	// ModulePath: "" is Puppet's default.
	ModulePath string
	// Args are further Puppet settings (--certname=x, --environment=y;
	// --trace for the backtrace of an error).
	Args []string
	// Stderr receives Puppet's log as it comes (nil: discarded).
	Stderr io.Writer
}

// ErrCompileLogged is wrapped by Compile's error when Puppet's compiler
// refused the manifest and has said why on Stderr, as puppet apply says it
// ("Error: Could not parse for environment production: ..."): the caller
// has nothing to add and exits 1, as puppet apply does.
var ErrCompileLogged = errors.New("Puppet could not compile the catalog (its error is logged above)")

// exitLogged is pippet-compile.rb's EXIT_LOGGED.
const exitLogged = 65

// Compile compiles a manifest into a catalog with Puppet's own compiler
// (facts from Facter, as puppet apply gathers them) and returns the
// catalog's JSON.
func Compile(ctx context.Context, o CompileOptions) ([]byte, error) {
	inst, ok := FindPuppet()
	if !ok {
		return nil, errors.New("compiling a manifest needs Puppet (Debian: puppet-agent), and none was found")
	}
	if (o.Manifest == "") == (o.Code == "") {
		return nil, errors.New("compile: give a manifest or code, one of them")
	}
	args := []string{"-I", inst.LibDir, "-e", Compiler, "--"}
	if o.ModulePath != "" {
		args = append(args, "--modulepath="+o.ModulePath)
	}
	args = append(args, o.Args...)
	cmd := exec.CommandContext(ctx, inst.Ruby, args...)
	if o.Manifest == "" {
		cmd.Env = append(os.Environ(), "PIPPET_CODE="+o.Code)
	} else {
		cmd.Env = append(os.Environ(), "PIPPET_MANIFEST="+o.Manifest)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if o.Stderr != nil {
		cmd.Stderr = io.MultiWriter(&stderr, o.Stderr)
	}
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == exitLogged && ctx.Err() == nil {
		return nil, ErrCompileLogged
	}
	if err != nil {
		return nil, fmt.Errorf("Puppet could not compile the catalog: %w: %s", err, lastLines(stderr.String(), 5))
	}
	return stdout.Bytes(), nil
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}
