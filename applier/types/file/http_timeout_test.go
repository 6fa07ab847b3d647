package file_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// trickle serves size bytes of 'x' in chunks of chunk bytes, one every
// gap, after a pause before the first (a download that is slow but
// never idle for long), announcing its length and sha256.
func trickle(size, chunk int, gap, pause time.Duration) http.HandlerFunc {
	data := strings.Repeat("x", size)
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		w.Header().Set("X-Checksum-Sha256", sha256hex(data))
		if r.Method == http.MethodHead {
			return
		}
		w.WriteHeader(http.StatusOK)
		for off := 0; off < size; off += chunk {
			if off == chunk {
				time.Sleep(pause)
			}
			if _, err := w.Write([]byte(data[off:min(off+chunk, size)])); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			time.Sleep(gap)
		}
	}
}

// Issue 26 item 15: --http-timeout bounds idle time, not the whole
// request: a body that takes several times the timeout to arrive, at a
// steady rate, is installed; a body that stops for longer than the
// timeout fails, naming the timeout, and installs nothing.
func TestHTTPTimeoutIsIdleTime(t *testing.T) {
	mux := http.NewServeMux()
	// 32 chunks of 8 KiB, 25 ms apart: 0.8 s in all, never 0.2 s idle.
	mux.Handle("/steady", trickle(256<<10, 8<<10, 25*time.Millisecond, 0))
	// The same, stalled for 0.6 s after the first chunk.
	mux.Handle("/stall", trickle(64<<10, 8<<10, 0, 600*time.Millisecond))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	e := newEngine(t, withTimeout(200*time.Millisecond))
	dir := t.TempDir()

	start := time.Now()
	res := apply(t, e, filepath.Join(dir, "steady"), "{source: '"+srv.URL+"/steady'}")
	assert.Equal(t, changed, outcomeOf(res), "%+v", res)
	assert.Greater(t, time.Since(start), 600*time.Millisecond, "the download took longer than the timeout")
	assert.Equal(t, 256<<10, len(readFile(t, filepath.Join(dir, "steady"))))

	res = apply(t, e, filepath.Join(dir, "stall"), "{source: '"+srv.URL+"/stall'}")
	require.Equal(t, failed, outcomeOf(res), "%+v", res)
	assert.Contains(t, res.Exception, "http-timeout")
	assert.NoFileExists(t, filepath.Join(dir, "stall"))
	assert.Empty(t, listDir(t, dir)[1:], "no temp file left: %v", listDir(t, dir))
}
