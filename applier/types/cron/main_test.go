package cron_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/pippet/pippet/internal/testutil"
)

// TestMain fails the package when its tests leave one of their accounts
// behind.
func TestMain(m *testing.M) {
	os.Exit(testutil.RunLeakingNoAccounts(m, regexp.MustCompile(`^pipcron\d+$`)))
}
