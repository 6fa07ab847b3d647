package applier_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
)

type oneFile string

func (f oneFile) Managed(typ, title string) bool { return typ == "file" && title == string(f) }
func (f oneFile) Resources(typ string) []applier.RunResource {
	if typ != "file" {
		return nil
	}
	return []applier.RunResource{{Type: "file", Title: string(f)}}
}

func TestRunTravelsInTheContext(t *testing.T) {
	require.Nil(t, applier.RunFrom(context.Background()), "a request applied alone has no run")
	ctx := applier.WithRun(context.Background(), oneFile("/etc/a"))
	run := applier.RunFrom(ctx)
	require.NotNil(t, run)
	require.True(t, run.Managed("file", "/etc/a"))
	require.False(t, run.Managed("file", "/etc/b"))
	require.Len(t, run.Resources("file"), 1)
}
