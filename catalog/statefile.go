package catalog

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	json "github.com/goccy/go-json"

	"github.com/pippet/pippet/applier/atomicfile"
)

// saveState writes one of the walk's state files (schedules, audited
// values, the transaction store) as JSON through a temporary file renamed
// into place, readable by its owner only; what names it in the warning a
// failure logs (the run goes on).
func saveState(file, what string, v any, log *slog.Logger) {
	data, err := json.Marshal(v)
	if err == nil {
		if err = os.MkdirAll(filepath.Dir(file), 0o750); err == nil {
			err = atomicfile.Write(context.Background(), file, data, atomicfile.Options{Mode: 0o600, UID: -1, GID: -1})
		}
	}
	if err != nil {
		log.Warn(fmt.Sprintf("could not save the %s %s: %v", what, file, err))
	}
}
