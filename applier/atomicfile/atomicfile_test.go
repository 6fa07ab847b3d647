package atomicfile_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier/atomicfile"
	"github.com/pippet/pippet/applier/dirsync"
)

func stat(t *testing.T, path string) *syscall.Stat_t {
	t.Helper()
	var st syscall.Stat_t
	require.NoError(t, syscall.Lstat(path, &st))
	return &st
}

// names lists dir's entries: a test's way to see that no temp file is left.
func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestWrite(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		before  func(t *testing.T, path string) // nil: no file
		o       atomicfile.Options
		data    string
		mode    uint32
		wantErr string
	}{
		{name: "new file", o: atomicfile.Options{Mode: 0o640, UID: -1, GID: -1}, data: "new\n", mode: 0o640},
		{name: "set-id bits kept", o: atomicfile.Options{Mode: 0o4750, UID: -1, GID: -1}, data: "x", mode: 0o4750},
		{name: "replaces a file", before: func(t *testing.T, p string) {
			require.NoError(t, os.WriteFile(p, []byte("old old old"), 0o600))
		}, o: atomicfile.Options{Mode: 0o644, UID: -1, GID: -1}, data: "new", mode: 0o644},
		{name: "replaces a file (exists hint)", before: func(t *testing.T, p string) {
			require.NoError(t, os.WriteFile(p, []byte("old"), 0o600))
		}, o: atomicfile.Options{Mode: 0o644, UID: -1, GID: -1, Exists: true}, data: "new", mode: 0o644},
		{name: "keeps an existing file's mode", before: func(t *testing.T, p string) {
			require.NoError(t, os.WriteFile(p, []byte("old"), 0o600))
			require.NoError(t, os.Chmod(p, 0o604))
		}, o: atomicfile.Options{Mode: 0o644, UID: -1, GID: -1, KeepExisting: true}, data: "new", mode: 0o604},
		{name: "KeepExisting on a new file uses Mode", o: atomicfile.Options{Mode: 0o600, UID: -1, GID: -1, KeepExisting: true},
			data: "new", mode: 0o600},
		{name: "KeepExisting refuses a directory", before: func(t *testing.T, p string) {
			require.NoError(t, os.Mkdir(p, 0o755))
		}, o: atomicfile.Options{Mode: 0o600, UID: -1, GID: -1, KeepExisting: true}, wantErr: "not a regular file"},
		{name: "a directory is not replaced", before: func(t *testing.T, p string) {
			require.NoError(t, os.Mkdir(p, 0o755))
		}, o: atomicfile.Options{Mode: 0o600, UID: -1, GID: -1}, wantErr: "rename into place"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f")
			if tc.before != nil {
				tc.before(t, path)
			}
			err := atomicfile.Write(ctx, path, []byte(tc.data), tc.o)
			assert.Equal(t, []string{"f"}, names(t, dir), "no temp file left")
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tc.data, string(got))
			assert.Equal(t, tc.mode, stat(t, path).Mode&0o7777)
		})
	}
}

// A symlink at the target is replaced, never written through; with
// FollowLinks the file it points to is replaced and the link stays.
func TestWriteSymlink(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("secret"), 0o600))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(secret, link))

	require.NoError(t, atomicfile.Write(ctx, link, []byte("mine"), atomicfile.Options{Mode: 0o644, UID: -1, GID: -1}))
	got, _ := os.ReadFile(secret)
	assert.Equal(t, "secret", string(got), "the link's target is untouched")
	assert.Equal(t, uint32(syscall.S_IFREG), stat(t, link).Mode&syscall.S_IFMT, "the link was replaced by a file")

	// KeepExisting on a link replaces it too (with Mode, not the link's 0777).
	require.NoError(t, os.Remove(link))
	require.NoError(t, os.Symlink(secret, link))
	require.NoError(t, atomicfile.Write(ctx, link, []byte("mine"), atomicfile.Options{Mode: 0o600, UID: -1, GID: -1, KeepExisting: true}))
	assert.Equal(t, uint32(syscall.S_IFREG|0o600), stat(t, link).Mode)

	require.NoError(t, os.Remove(link))
	require.NoError(t, os.Symlink(secret, link))
	require.NoError(t, atomicfile.Write(ctx, link, []byte("followed"), atomicfile.Options{Mode: 0o644, UID: -1, GID: -1, KeepExisting: true, FollowLinks: true}))
	got, _ = os.ReadFile(secret)
	assert.Equal(t, "followed", string(got))
	assert.Equal(t, uint32(syscall.S_IFLNK), stat(t, link).Mode&syscall.S_IFMT, "the link stays")
	assert.Equal(t, uint32(0o600), stat(t, secret).Mode&0o7777, "the followed file keeps its mode")
}

// A failure anywhere leaves the old content and no temp file.
func TestWriteFailuresKeepTheOldFile(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		o    atomicfile.Options
		fill func(io.Writer) error
		ctx  func() context.Context
		want error
	}{
		{name: "fill fails", fill: func(w io.Writer) error { w.Write([]byte("half")); return boom }, want: boom},
		{name: "validate refuses", o: atomicfile.Options{Validate: func(ctx context.Context, tmp string) error {
			b, err := os.ReadFile(tmp)
			if err != nil || string(b) != "new" {
				return errors.New("validate did not see the new content")
			}
			return boom
		}}, want: boom},
		{name: "context cancelled", ctx: func() context.Context {
			c, cancel := context.WithCancel(ctx)
			cancel()
			return c
		}, want: context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f")
			require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
			fill := tc.fill
			if fill == nil {
				fill = func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }
			}
			c := ctx
			if tc.ctx != nil {
				c = tc.ctx()
			}
			o := tc.o
			o.Mode, o.UID, o.GID = 0o644, -1, -1
			err := atomicfile.WriteFunc(c, path, o, fill)
			require.ErrorIs(t, err, tc.want)
			got, _ := os.ReadFile(path)
			assert.Equal(t, "old", string(got))
			assert.Equal(t, []string{"f"}, names(t, dir))
		})
	}
}

func TestWriteMTimeAndTempDir(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	staging := filepath.Join(dir, "staging")
	require.NoError(t, os.Mkdir(staging, 0o700))
	path := filepath.Join(dir, "f")
	when := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	require.NoError(t, atomicfile.Write(ctx, path, []byte("x"), atomicfile.Options{Mode: 0o644, UID: -1, GID: -1, MTime: when, TempDir: staging}))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.True(t, fi.ModTime().Equal(when), "mtime %v", fi.ModTime())
	assert.Empty(t, names(t, staging))

	err = atomicfile.Write(ctx, filepath.Join(dir, "missing", "f"), []byte("x"), atomicfile.Options{Mode: 0o644, UID: -1, GID: -1})
	require.ErrorIs(t, err, os.ErrNotExist)
}

// The owner is given on the descriptor before the data is written.
func TestWriteOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown to another user needs root")
	}
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	require.NoError(t, atomicfile.Write(ctx, path, []byte("x"), atomicfile.Options{Mode: 0o2640, UID: 65534, GID: 65534}))
	st := stat(t, path)
	assert.Equal(t, [3]uint32{65534, 65534, 0o2640}, [3]uint32{st.Uid, st.Gid, st.Mode & 0o7777}, "set-id bits survive the chown")

	// KeepExisting keeps the owner of the file it replaces.
	require.NoError(t, atomicfile.Write(ctx, path, []byte("y"), atomicfile.Options{Mode: 0o600, UID: -1, GID: -1, KeepExisting: true}))
	st = stat(t, path)
	assert.Equal(t, [3]uint32{65534, 65534, 0o2640}, [3]uint32{st.Uid, st.Gid, st.Mode & 0o7777})
}

// Directory fsyncs go to the dirsync.Syncer: a deferred one records the
// directory until Flush.
func TestWriteMarksTheDirectory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var dirs, changes int
	ds := dirsync.New(dirsync.Options{Deferred: true, Report: func(d, c int, err error) { dirs, changes = d, c }})
	require.NoError(t, atomicfile.Write(ctx, filepath.Join(dir, "a"), []byte("a"), atomicfile.Options{Mode: 0o644, UID: -1, GID: -1, Dirs: ds}))
	require.NoError(t, atomicfile.Write(ctx, filepath.Join(dir, "a"), []byte("b"), atomicfile.Options{Mode: 0o644, UID: -1, GID: -1, Dirs: ds}))
	assert.Equal(t, 0, dirs, "nothing fsynced before Flush")
	n, err := ds.Flush(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, [2]int{1, 2}, [2]int{dirs, changes})
}

func TestFileMode(t *testing.T) {
	assert.Equal(t, os.FileMode(0o755)|os.ModeSetuid|os.ModeSetgid|os.ModeSticky, atomicfile.FileMode(0o7755))
	assert.Equal(t, os.FileMode(0o644), atomicfile.FileMode(0o644))
}

// A bind-mounted target (as /etc/hosts in a container) cannot be renamed
// over: it is rewritten in place from the complete temp file, and when
// that fails (a full file system) the old bytes are put back.
func TestInPlaceFallbackRestoresOnError(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for mount(2)")
	}
	root := t.TempDir()
	small := filepath.Join(root, "small")
	require.NoError(t, os.Mkdir(small, 0o755))
	if err := syscall.Mount("tmpfs", small, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("the kernel refuses a tmpfs here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(small, syscall.MNT_DETACH) })
	src := filepath.Join(small, "hosts")
	old := "127.0.0.1 localhost\n"
	require.NoError(t, os.WriteFile(src, []byte(old), 0o644))
	dir := filepath.Join(root, "etc")
	require.NoError(t, os.Mkdir(dir, 0o755))
	target := filepath.Join(dir, "hosts")
	require.NoError(t, os.WriteFile(target, nil, 0o644))
	if err := syscall.Mount(src, target, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("the kernel refuses a bind mount here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(target, syscall.MNT_DETACH) })
	o := atomicfile.Options{Mode: 0o644, UID: -1, GID: -1, KeepExisting: true, InPlaceFallback: true}

	// Fits: rewritten in place.
	require.NoError(t, atomicfile.Write(context.Background(), target, []byte("10.0.0.1 a\n"), o))
	b, _ := os.ReadFile(src)
	assert.Equal(t, "10.0.0.1 a\n", string(b))
	require.NoError(t, os.WriteFile(src, []byte(old), 0o644))

	// Does not fit (the temp, on another file system, is complete): the
	// write fails and the old bytes are back.
	big := []byte(strings.Repeat("10.0.0.2 big\n", 20000)) // 260 KB > 64 KB
	err := atomicfile.Write(context.Background(), target, big, o)
	require.Error(t, err)
	b, _ = os.ReadFile(target)
	assert.True(t, string(b) == old, "the old content is restored, not %d bytes of another", len(b))
	assert.Equal(t, []string{"hosts"}, names(t, dir), "no temp file left")
}
