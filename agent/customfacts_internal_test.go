package agent

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pippet/pippet/agent/pluginsync"
)

func TestSyncedOf(t *testing.T) {
	dirs := []string{"/v/lib/facter", "/v/facts"}
	for _, c := range []struct {
		name string
		res  *pluginsync.Result
		err  error
		want synced
	}{
		{"nothing changed", &pluginsync.Result{}, nil, synced{}},
		{"a fact file", &pluginsync.Result{Changed: []string{"/v/lib/facter/role.rb"}}, nil, synced{changed: true}},
		{"a fact file in the other directory", &pluginsync.Result{Removed: []string{"/v/facts/x.rb"}}, nil, synced{changed: true}},
		{"a pluginfact", &pluginsync.Result{Changed: []string{"/v/facts.d/role.txt"}}, nil, synced{changed: true}},
		{"a helper a fact requires", &pluginsync.Result{Changed: []string{"/v/lib/facter/util/settings.rb"}}, nil, synced{changed: true, code: true}},
		{"a provider", &pluginsync.Result{Removed: []string{"/v/lib/puppet/provider/x/y.rb"}}, nil, synced{changed: true, code: true}},
		{"a failed sync", nil, errors.New("500"), synced{changed: true, code: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, syncedOf(c.res, c.err, dirs))
		})
	}
}
