package cron

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/pippet/pippet/applier"
)

func init() { Crontab.Instances = instances }

// instances lists cron jobs as Puppet's crontab provider lists them: the
// crontab of the search's user (or target) alone; without one, the
// receiver's user's and every crontab of the spool directory, as Puppet
// enumerates them (a later crontab's job of a name already listed is left
// out, as Puppet keeps the first). Each crontab is read as Get reads it
// (the spool file, else `crontab -l`), and each job listed with the state
// a find of it reports, in crontab order: a named job by its name (the
// last job of a name, the one a resource is bound to); a job without a
// `# Puppet Name:` comment as Puppet titles it, `unmanaged:COMMAND-N`
// (whitespace in the command as `_`, N counting such jobs from 1), which
// no find of that title alone can see, but which an apply of its listed
// params (command and schedule) finds, unchanged, as Puppet does.
func instances(ctx context.Context, env *applier.Env, scope *applier.Resource, add func(string) *applier.State) error {
	var users []string
	all := !scope.Given("user") && !scope.Given("target")
	if all {
		users = crontabUsers(env)
	} else {
		users = []string{scope.String("target")}
	}
	seen := map[string]bool{}
	unnamed := 0
	for _, u := range users {
		p := &crontab{user: u}
		t := p.target(env)
		err := Format.Each(ctx, &t, env, func(_ int, j *job, bound bool) {
			title := j.Name
			if j.Unmanaged {
				unnamed++
				title = fmt.Sprintf("unmanaged:%s-%d", spacesRe.ReplaceAllString(j.Command, "_"), unnamed)
			} else if !bound {
				return
			}
			if seen[title] {
				env.Logger().Debug(fmt.Sprintf("Cron[%s] found in %s's crontab too; listing the first", title, u))
				return
			}
			seen[title] = true
			report(add(title), j, u)
		})
		if err != nil && all {
			env.Logger().Warn(fmt.Sprintf("not listing %s's crontab: %v", u, err))
		} else if err != nil {
			return err
		}
	}
	return nil
}

// crontabUsers are the crontabs Puppet lists without a user: the
// receiver's user's, then each regular file of the spool directory
// (hidden ones and Gentoo's .keep_ files left out), by name.
func crontabUsers(env *applier.Env) []string {
	users := []string{currentUser()}
	entries, err := os.ReadDir(spoolDir(env))
	if err != nil {
		return users
	}
	var more []string
	for _, de := range entries {
		name := de.Name()
		if !de.Type().IsRegular() || strings.HasPrefix(name, ".") || name == currentUser() {
			continue
		}
		more = append(more, name)
	}
	sort.Strings(more)
	return append(users, more...)
}
