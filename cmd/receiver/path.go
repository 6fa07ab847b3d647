package main

import (
	"os"
	"path/filepath"
	"strings"
)

// sbinDirs are the directories Puppet appends to its own PATH when they
// are missing (Puppet::Util::Platform.default_paths), so that an ordinary
// user's PATH, which has no sbin directory, still finds useradd, groupadd
// and the other system tools a provider needs.
var sbinDirs = []string{"/usr/sbin", "/sbin"}

// withSbin returns path with each of sbinDirs appended that it lacks.
func withSbin(path string) string {
	have := map[string]bool{}
	for _, d := range filepath.SplitList(path) {
		have[d] = true
	}
	parts := []string{}
	if path != "" {
		parts = append(parts, path)
	}
	for _, d := range sbinDirs {
		if !have[d] {
			parts = append(parts, d)
		}
	}
	return strings.Join(parts, string(os.PathListSeparator))
}
