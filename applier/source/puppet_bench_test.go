package source_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/pippet/pippet/agent/ssl"
	"github.com/pippet/pippet/applier/source"
	"github.com/pippet/pippet/applier/source/sourcetest"
)

// The puppet:// backend's cost over the floor: one file_metadata Stat
// (request, JSON decoding, checks) against a bare GET of the same answer
// with Go's client on a kept-alive connection, both to the same loopback
// TLS server with the agent's certificate.
func puppetBenchServer(b *testing.B) (*sourcetest.PuppetCA, string) {
	ca := sourcetest.NewPuppetCA(b, false)
	body := fileMeta("sha256", "{sha256}"+motdSum)
	srv := ca.Serve(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}), "")
	return ca, srv.URL
}

func BenchmarkPuppetStatKeptConnection(b *testing.B) {
	ca, u := puppetBenchServer(b)
	f := puppetFetcher(b, ca, u, 5*time.Second)
	ctx := context.Background()
	q := source.Query{Checksum: "sha256"}
	if _, err := f.Stat(ctx, "puppet:///modules/m/motd", q); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.Stat(ctx, "puppet:///modules/m/motd", q); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFloorHTTPSGetKeptConnection(b *testing.B) {
	ca, u := puppetBenchServer(b)
	cfg, err := ssl.Files{Dir: ca.SSLDir, Certname: ca.Certname}.TLSConfig()
	if err != nil {
		b.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
	url := u + "/puppet/v3/file_metadata/modules/m/motd?checksum_type=sha256&environment=production&links=follow&source_permissions=ignore"
	get := func() {
		resp, err := c.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	get()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		get()
	}
}
