package file

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
)

// isNumericMode is the hand-written form of `^0?[0-7]{1,4}$`.
func TestIsNumericModeMatchesPattern(t *testing.T) {
	re := regexp.MustCompile(`^0?[0-7]{1,4}$`)
	for _, s := range []string{"", "0", "7", "8", "644", "0644", "00644", "10644", "06444", "4755", "04755",
		"0o644", "64a", "u+x", " 644", "644 ", "-644", "777777", "0000", "00000", "000000"} {
		assert.Equal(t, re.MatchString(s), isNumericMode(s), "%q", s)
	}
}
