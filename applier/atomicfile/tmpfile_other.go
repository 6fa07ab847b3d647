//go:build !linux

package atomicfile

import (
	"errors"
	"os"
)

func openTemp(dir, base string) (*os.File, string, error) {
	f, err := os.CreateTemp(dir, "."+base+".pippet-*")
	if err != nil {
		return nil, "", err
	}
	return f, f.Name(), nil
}

func linkTemp(f *os.File, path string) error {
	return errors.New("unnamed temp files are not supported here")
}

func nameTemp(f *os.File, dir, base string) (string, error) {
	return "", errors.New("unnamed temp files are not supported here")
}
