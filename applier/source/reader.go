package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// Reading local files. A file that stat calls regular may still block a
// read forever (/proc/kmsg, a file on a hung FUSE mount) or never end
// (/proc/kcore is 128 TiB); one that was regular when examined may be a
// FIFO by the time it is opened. Every read of a local file (a source, or
// the file type's current content) therefore goes through OpenFile: the
// open never waits (O_NONBLOCK), what is opened must be a regular file,
// and the reader is bounded and ends with the context: between chunks,
// and inside a read that waits, through the runtime's poller, which
// wakes it when the context ends.

// OpenFile opens the regular file at path for reading. Unless follow, a
// symlink at path is refused (ELOOP). Anything but a regular file is
// refused before a byte is read.
func OpenFile(path string, follow bool) (*os.File, *syscall.Stat_t, error) {
	flags := syscall.O_RDONLY | syscall.O_CLOEXEC | syscall.O_NONBLOCK
	if !follow {
		flags |= syscall.O_NOFOLLOW
	}
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, flags, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return nil, nil, &os.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	// The descriptor stays non-blocking: package os puts a file that can
	// be polled (a /proc file that waits for data) in the runtime's
	// poller, so that a deadline ends a read that waits; a file on disk
	// cannot be polled and is read as usual.
	return os.NewFile(uintptr(fd), path), &st, nil
}

// ErrNotRegular: what was opened is not a regular file (a FIFO, a device,
// a socket, a directory swapped in since it was examined).
var ErrNotRegular = errors.New("not a regular file")

// Reader reads an open file until ctx ends, at most limit bytes (limit <
// 0: no bound); Close stops watching ctx and closes the file.
func Reader(ctx context.Context, f *os.File, limit int64) io.ReadCloser {
	r := &fileReader{ctx: ctx, f: f, left: limit}
	r.stop = context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Unix(1, 0)) })
	return r
}

type fileReader struct {
	ctx  context.Context
	f    *os.File
	left int64
	stop func() bool
}

func (r *fileReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, fmt.Errorf("read %s: %w", r.f.Name(), err)
	}
	if r.left == 0 {
		return 0, io.EOF
	}
	if r.left > 0 && int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.f.Read(p)
	if r.left > 0 {
		r.left -= int64(n)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		if cerr := r.ctx.Err(); cerr != nil {
			err = cerr
		}
		err = fmt.Errorf("read %s: %w", r.f.Name(), err)
	}
	return n, err
}

func (r *fileReader) Close() error {
	r.stop()
	return r.f.Close()
}
