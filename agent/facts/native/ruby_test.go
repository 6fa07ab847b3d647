package native

import "testing"

func TestRubyHexDigits(t *testing.T) {
	for in, want := range map[string]string{
		"0242ac110002": "0242ac110002", "0x1F": "1F", "ff_ff": "ffff", "ff__ff": "ff", "-a": "-a", "zz": "0", "": "0", " 12g3": "12",
	} {
		if got := rubyHexDigits(in); got != want {
			t.Errorf("rubyHexDigits(%q) = %q, want %q (Ruby's to_i(16))", in, got, want)
		}
	}
}
