//go:build !linux

package atomicfile

import (
	"errors"
	"os"
	"time"
)

func openTemp(dir, base string) (*os.File, string, error) { return createNamed(dir, base) }

func unnamedPath(f *os.File) string { return f.Name() }

func setTimes(f *os.File, t time.Time) error { return os.Chtimes(f.Name(), t, t) }

func linkTemp(f *os.File, path string) error {
	return errors.New("unnamed temp files are not supported here")
}

func nameTemp(f *os.File, dir, base string) (string, error) {
	return "", errors.New("unnamed temp files are not supported here")
}
