package user_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/pippet/pippet/internal/testutil"
)

// TestMain fails the package when its tests leave one of their accounts
// behind.
func TestMain(m *testing.M) {
	os.Exit(testutil.RunLeakingNoAccounts(m, regexp.MustCompile(`^(pipu\d+|pipg4\d\d|pipv68\d|pipvg68\d|pipk\d+|pipsearch\d+)$`)))
}
