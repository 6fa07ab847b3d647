package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Timeouts. Options.HTTPTimeout bounds idle time, as Puppet's
// http_read_timeout does, never a whole transfer: connecting, the TLS
// handshake and the wait for the response's headers are each bounded by
// it, and so is every wait for the body's next bytes; a large body that
// keeps arriving is read however long it takes. There is no bound on a
// request's total time: the request's context (a cancelled resource, the
// receiver's second signal, the controller's own timeout) ends it.

// ErrIdle is the cause of a request ended because no byte came for the
// idle timeout.
var ErrIdle = errors.New("no data within the timeout (--http-timeout)")

// idleRequest sends req with a context that ends when the response's body
// waits longer than timeout for its next bytes, and returns the response
// with its body watched; closing the body releases the watch.
func idleRequest(c *http.Client, req *http.Request, timeout time.Duration) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	resp, err := c.Do(req.WithContext(ctx))
	if err != nil {
		cancel(nil)
		return nil, err
	}
	b := &idleBody{rc: resp.Body, ctx: ctx, cancel: cancel, timeout: timeout}
	b.timer = time.AfterFunc(timeout, func() { cancel(ErrIdle) })
	b.timer.Stop()
	resp.Body = b
	return resp, nil
}

// idleBody counts a read's wait as idle: the timer runs while Read waits
// and stops when it returns, so the time the caller spends between reads
// (writing to disk) is not counted.
type idleBody struct {
	rc      io.ReadCloser
	ctx     context.Context
	cancel  context.CancelCauseFunc
	timeout time.Duration
	timer   *time.Timer
	once    sync.Once
}

func (b *idleBody) Read(p []byte) (int, error) {
	b.timer.Reset(b.timeout)
	n, err := b.rc.Read(p)
	b.timer.Stop()
	if err != nil && errors.Is(context.Cause(b.ctx), ErrIdle) {
		// The transport may end a body cut by the cancel with a plain
		// EOF: a body ended by the idle timeout is never whole.
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		err = fmt.Errorf("%w (%v): %w", ErrIdle, b.timeout, err)
	}
	return n, err
}

func (b *idleBody) Close() error {
	err := b.rc.Close()
	b.once.Do(func() {
		b.timer.Stop()
		b.cancel(nil)
	})
	return err
}
