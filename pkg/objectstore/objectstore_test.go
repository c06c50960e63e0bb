package objectstore_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/multi-operator/multi-operator/pkg/objectstore"
	"github.com/multi-operator/multi-operator/test/framework/s3server"
)

func newStore(t *testing.T, srv *s3server.Server, prefix string) *objectstore.Store {
	t.Helper()
	s, err := objectstore.New(srv.StoreConfig(prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// generator yields n pseudo-random bytes without holding them.
type generator struct {
	rng *rand.ChaCha8
	n   int64
}

func newGenerator(seed byte, n int64) *generator {
	return &generator{rng: rand.NewChaCha8([32]byte{seed}), n: n}
}

func (g *generator) Read(p []byte) (int, error) {
	if g.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > g.n {
		p = p[:g.n]
	}
	n, _ := g.rng.Read(p)
	g.n -= int64(n)
	return n, nil
}

// sumOf is the size and hex SHA-256 of what a fresh generator yields.
func sumOf(seed byte, n int64) string {
	h := sha256.New()
	_, _ = io.Copy(h, newGenerator(seed, n))
	return hex.EncodeToString(h.Sum(nil))
}

func readAll(t *testing.T, s *objectstore.Store, name string) ([]byte, objectstore.Object, error) {
	t.Helper()
	r, obj, err := s.Open(context.Background(), name)
	if err != nil {
		return nil, obj, err
	}
	defer func() { _ = r.Close() }()
	data, err := io.ReadAll(r)
	return data, obj, err
}

func TestRoundTripSmallAndMultipart(t *testing.T) {
	t.Parallel()
	srv := s3server.Start(t, s3server.Options{})
	s := newStore(t, srv, "tenant/cluster")
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		size int64
	}{
		{"empty", 0},
		{"small", 1000},
		{"one-part", objectstore.PartSize},
		{"part-and-a-byte", objectstore.PartSize + 1},
		{"two-parts", objectstore.PartSize * 2},
		{"backup-1/multi", objectstore.PartSize*2 + 12345},
	} {
		obj, err := s.Upload(ctx, tc.name, newGenerator(1, tc.size))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want := sumOf(1, tc.size)
		if obj.Size != tc.size || obj.SHA256 != want || obj.Key != "tenant/cluster/"+tc.name {
			t.Fatalf("%s: uploaded %+v, want %d bytes with %s", tc.name, obj, tc.size, want)
		}
		data, got, err := readAll(t, s, tc.name)
		if err != nil {
			t.Fatalf("%s: reading: %v", tc.name, err)
		}
		sum := sha256.Sum256(data)
		if int64(len(data)) != tc.size || hex.EncodeToString(sum[:]) != want || got.SHA256 != want || got.Size != tc.size {
			t.Fatalf("%s: read %d bytes (%x), object %+v; want %d bytes with %s", tc.name, len(data), sum, got, tc.size, want)
		}
	}
}

func TestCorruptedObjectFailsAtEndOfRead(t *testing.T) {
	t.Parallel()
	srv := s3server.Start(t, s3server.Options{})
	s := newStore(t, srv, "p")
	ctx := context.Background()
	obj, err := s.Upload(ctx, "shard-0.rdb", strings.NewReader("REDIS0011 the real snapshot"))
	if err != nil {
		t.Fatal(err)
	}
	// Overwrite the bytes behind our back, keeping the recorded metadata:
	// same size, other content; then a longer one.
	raw := srv.Client(t)
	for _, body := range []string{"REDIS0011 the fake snapshot", "REDIS0011 the real snapshot, and more"} {
		meta := map[string]string{"Sha256": obj.SHA256, "Size": "27"}
		if _, err := raw.PutObject(ctx, srv.Bucket, obj.Key, strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{UserMetadata: meta}); err != nil {
			t.Fatal(err)
		}
		data, _, err := readAll(t, s, "shard-0.rdb")
		if !errors.Is(err, objectstore.ErrCorrupt) {
			t.Fatalf("reading %q under the metadata of the original: %v, want ErrCorrupt", body, err)
		}
		if len(data) == 0 {
			t.Fatalf("the data came before the error at the end, got none")
		}
	}
	// An object without the recorded SHA-256, such as an interrupted upload.
	if _, err := raw.PutObject(ctx, srv.Bucket, "p/bare", strings.NewReader("x"), 1, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Open(ctx, "bare"); !errors.Is(err, objectstore.ErrIncomplete) {
		t.Fatalf("opening an object without metadata: %v, want ErrIncomplete", err)
	}
}

func TestListAndDeletePrefix(t *testing.T) {
	t.Parallel()
	srv := s3server.Start(t, s3server.Options{})
	s := newStore(t, srv, "tenant")
	other := newStore(t, srv, "tenant-2")
	ctx := context.Background()
	for _, name := range []string{"b1/shard-0", "b1/shard-1", "b10/shard-0", "b2/shard-0"} {
		if _, err := s.Upload(ctx, name, strings.NewReader(name)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := other.Upload(ctx, "b1/shard-0", strings.NewReader("other tenant")); err != nil {
		t.Fatal(err)
	}
	names := func(sub string) string {
		objs, err := s.List(ctx, sub)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range objs {
			out = append(out, o.Name)
		}
		return strings.Join(out, " ")
	}
	if got := names(""); got != "b1/shard-0 b1/shard-1 b10/shard-0 b2/shard-0" {
		t.Fatalf("List(\"\") = %q", got)
	}
	if got := names("b1/"); got != "b1/shard-0 b1/shard-1" {
		t.Fatalf("List(b1/) = %q", got)
	}
	n, err := s.DeletePrefix(ctx, "b1/")
	if err != nil || n != 2 {
		t.Fatalf("DeletePrefix(b1/) = %d, %v", n, err)
	}
	if got := names(""); got != "b10/shard-0 b2/shard-0" {
		t.Fatalf("after DeletePrefix(b1/): %q", got)
	}
	if err := s.Delete(ctx, "b2/shard-0", "missing"); err != nil {
		t.Fatal(err)
	}
	if got := names(""); got != "b10/shard-0" {
		t.Fatalf("after Delete: %q", got)
	}
	if _, err := s.DeletePrefix(ctx, "../tenant-2/"); err == nil {
		t.Fatal("DeletePrefix(../tenant-2/) was accepted")
	}
	if objs, err := other.List(ctx, ""); err != nil || len(objs) != 1 {
		t.Fatalf("the other prefix holds %v, %v; want its one object", objs, err)
	}
}

func TestWrongCredentialsSayWhatFailedWithoutTheSecret(t *testing.T) {
	t.Parallel()
	srv := s3server.Start(t, s3server.Options{})
	secret := "wrong-secret-" + srv.SecretKey
	cfg := srv.StoreConfig("p")
	cfg.SecretKey = secret
	s, err := objectstore.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = s.Upload(ctx, "x", strings.NewReader("data"))
	if err == nil {
		t.Fatal("upload with a wrong secret succeeded")
	}
	msg := err.Error()
	if !strings.Contains(msg, "uploading p/x") || !strings.Contains(msg, "signature") && !strings.Contains(msg, "Signature") && !strings.Contains(msg, "denied") {
		t.Fatalf("error %q does not say what failed and why", msg)
	}
	if strings.Contains(msg, secret) || strings.Contains(msg, srv.SecretKey) {
		t.Fatalf("error %q holds the secret", msg)
	}
	if _, err := s.List(ctx, ""); err == nil {
		t.Fatal("list with a wrong secret succeeded")
	}
}

func TestHTTPSTrustsTheCABundleOnly(t *testing.T) {
	t.Parallel()
	srv := s3server.Start(t, s3server.Options{TLS: true})
	s := newStore(t, srv, "p")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.Upload(ctx, "x", strings.NewReader("over TLS")); err != nil {
		t.Fatal(err)
	}
	if data, _, err := readAll(t, s, "x"); err != nil || string(data) != "over TLS" {
		t.Fatalf("read %q, %v", data, err)
	}
	cfg := srv.StoreConfig("p")
	cfg.CABundle = nil
	noCA, err := objectstore.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer noCA.Close()
	if _, err := noCA.Upload(ctx, "y", strings.NewReader("x")); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("upload without the CA bundle: %v, want a certificate error", err)
	}
	if _, err := objectstore.New(objectstore.Config{Endpoint: srv.Endpoint, Bucket: "b", CABundle: []byte("not PEM")}); err == nil {
		t.Fatal("a CA bundle without a certificate was accepted")
	}
}

// TestUploadMemoryIsBounded uploads far more than a part from a generator
// and samples the heap meanwhile: it must stay within a few parts, not
// grow with the object.
func TestUploadMemoryIsBounded(t *testing.T) {
	const size = 200 << 20
	srv := s3server.Start(t, s3server.Options{})
	s := newStore(t, srv, "p")
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	obj, err := s.Upload(context.Background(), "big", newGenerator(7, size))
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if obj.Size != size || obj.SHA256 != sumOf(7, size) {
		t.Fatalf("uploaded %+v", obj)
	}
	growth := int64(peak.Load()) - int64(base.HeapInuse)
	const bound = 4 * objectstore.PartSize
	t.Logf("heap in use grew by %d MiB uploading %d MiB", growth>>20, size>>20)
	if growth > bound {
		t.Fatalf("heap in use grew by %d MiB uploading %d MiB, more than %d MiB", growth>>20, size>>20, bound>>20)
	}
}

// blockingReader yields one part and a bit, then signals and waits until
// released before yielding the rest.
type blockingReader struct {
	r       io.Reader
	left    int64
	reached chan struct{}
	release chan struct{}
	once    sync.Once
}

func (b *blockingReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		b.once.Do(func() { close(b.reached) })
		<-b.release
		return b.r.Read(p)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

func TestEndpointDownMidUploadFailsWithinTheTimeout(t *testing.T) {
	srv := s3server.Start(t, s3server.Options{})
	s := newStore(t, srv, "p")
	// Let the server's and the first store's idle goroutines settle first.
	before := runtime.NumGoroutine()
	r := &blockingReader{r: newGenerator(3, 3*objectstore.PartSize), left: objectstore.PartSize + 1000,
		reached: make(chan struct{}), release: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := s.Upload(ctx, "interrupted", r)
		errc <- err
	}()
	select {
	case <-r.reached:
	case err := <-errc:
		t.Fatalf("upload ended before the server stopped: %v", err)
	}
	srv.Stop()
	close(r.release)
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("upload succeeded with the server down")
		}
		if !strings.Contains(err.Error(), "uploading p/interrupted") {
			t.Fatalf("error %q does not say what failed", err)
		}
		t.Logf("failed after %s: %v", time.Since(start).Round(time.Millisecond), err)
	case <-time.After(50 * time.Second):
		t.Fatal("upload still running 50s after the server stopped")
	}
	s.Close()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines left, %d before the upload:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// DeletePrefix aborts the multipart uploads an uploader killed mid-object
// left below the folder, and not those of a sibling folder.
func TestDeletePrefixAbortsIncompleteUploads(t *testing.T) {
	t.Parallel()
	srv := s3server.Start(t, s3server.Options{})
	s := newStore(t, srv, "tenant")
	ctx := context.Background()
	client, err := minio.NewCore(srv.Endpoint, &minio.Options{
		Creds: credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, ""), Region: s3server.Region, Secure: false,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"tenant/b1/shard-0", "tenant/b10/shard-0"} {
		id, err := client.NewMultipartUpload(ctx, srv.Bucket, key, minio.PutObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.PutObjectPart(ctx, srv.Bucket, key, id, 1, strings.NewReader("part"), 4, minio.PutObjectPartOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	uploads := func() []string {
		var out []string
		for up := range client.ListIncompleteUploads(ctx, srv.Bucket, "tenant/", true) {
			if up.Err != nil {
				t.Fatal(up.Err)
			}
			out = append(out, up.Key)
		}
		return out
	}
	if got := uploads(); len(got) != 2 {
		t.Fatalf("incomplete uploads before: %v", got)
	}
	if _, err := s.DeletePrefix(ctx, "b1/"); err != nil {
		t.Fatal(err)
	}
	if got := uploads(); len(got) != 1 || got[0] != "tenant/b10/shard-0" {
		t.Fatalf("incomplete uploads after DeletePrefix(b1/): %v, want only tenant/b10/shard-0", got)
	}
}

// failingReader reads r, then fails with err where r ends.
type failingReader struct {
	r   io.Reader
	err error
}

func (f failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		err = f.err
	}
	return n, err
}

// A source that fails after the first part was sent fails the upload with
// its error, and the store keeps neither an object nor the upload's parts.
func TestFailedSourceLeavesNoObjectNorParts(t *testing.T) {
	t.Parallel()
	srv := s3server.Start(t, s3server.Options{})
	s := newStore(t, srv, "tenant")
	ctx := context.Background()
	cause := errors.New("the snapshot's connection dropped")
	_, err := s.Upload(ctx, "b1/shard-0", failingReader{r: io.LimitReader(newGenerator(5, 3*objectstore.PartSize), 2*objectstore.PartSize+100), err: cause})
	if !errors.Is(err, cause) {
		t.Fatalf("upload from a failing source: %v, want its error", err)
	}
	if objs, err := s.List(ctx, ""); err != nil || len(objs) != 0 {
		t.Fatalf("objects after a failed upload: %v, %v; want none", objs, err)
	}
	for up := range srv.Client(t).ListIncompleteUploads(ctx, srv.Bucket, "tenant/", true) {
		t.Fatalf("an incomplete upload is left: %+v", up)
	}
}

// An upload whose context ends after its first part was sent fails with
// the context's error, and the store keeps neither an object nor the
// upload's parts.
func TestCancelledUploadLeavesNoObjectNorParts(t *testing.T) {
	t.Parallel()
	srv := s3server.Start(t, s3server.Options{})
	s := newStore(t, srv, "tenant")
	r := &blockingReader{r: newGenerator(6, 3*objectstore.PartSize), left: objectstore.PartSize + 1000,
		reached: make(chan struct{}), release: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := s.Upload(ctx, "b1/shard-0", r)
		errc <- err
	}()
	<-r.reached
	cancel()
	close(r.release)
	if err := <-errc; !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "uploading tenant/b1/shard-0") {
		t.Fatalf("a cancelled upload: %v, want context.Canceled naming the object", err)
	}
	if objs, err := s.List(context.Background(), ""); err != nil || len(objs) != 0 {
		t.Fatalf("objects after a cancelled upload: %v, %v; want none", objs, err)
	}
	for up := range srv.Client(t).ListIncompleteUploads(context.Background(), srv.Bucket, "tenant/", true) {
		t.Fatalf("an incomplete upload is left: %+v", up)
	}
}

// An upload cancelled while its requests are with the store returns only
// once the store answered them: a caller that removes what it stored
// after a failure then finds every object the store went on to keep.
func TestCancelledUploadWaitsForTheStoresAnswer(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int64
		// stored says whether the upload was carried out despite the
		// cancel: the one request that carries a small object was. An
		// upload in parts is aborted, which waits for the store too.
		stored bool
	}{
		{"one request", 1000, true},
		{"in parts", objectstore.PartSize + 2000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := s3server.Start(t, s3server.Options{})
			s := newStore(t, srv, "tenant")
			r := &blockingReader{r: newGenerator(7, tc.size), left: min(tc.size, objectstore.PartSize+1000),
				reached: make(chan struct{}), release: make(chan struct{})}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type result struct {
				obj objectstore.Object
				err error
			}
			done := make(chan result, 1)
			go func() {
				obj, err := s.Upload(ctx, "b1/shard-0", r)
				done <- result{obj, err}
			}()
			<-r.reached
			thaw := srv.Pause(t)
			close(r.release)
			// The last request reaches the frozen store's socket.
			time.Sleep(300 * time.Millisecond)
			cancel()
			select {
			case res := <-done:
				t.Fatalf("the upload returned while the store still held its request: %+v", res)
			case <-time.After(2 * time.Second):
			}
			thaw()
			var res result
			select {
			case res = <-done:
			case <-time.After(time.Minute):
				t.Fatal("the upload did not return once the store answered")
			}
			if tc.stored {
				if res.err != nil || res.obj.Size != tc.size || res.obj.SHA256 != sumOf(7, tc.size) {
					t.Fatalf("the upload the store carried out: %+v, %v", res.obj, res.err)
				}
			} else if !errors.Is(res.err, context.Canceled) {
				t.Fatalf("a cancelled upload in parts: %v, want context.Canceled", res.err)
			}
			listed := func() int {
				objs, err := s.List(context.Background(), "")
				if err != nil {
					t.Fatal(err)
				}
				return len(objs)
			}
			want := 0
			if tc.stored {
				want = 1
			}
			if n := listed(); n != want {
				t.Fatalf("%d objects once the upload returned, want %d", n, want)
			}
			if _, err := s.DeletePrefix(context.Background(), "b1/"); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second)
			if n := listed(); n != 0 {
				t.Fatalf("%d objects a second after the cleanup, want none", n)
			}
			for up := range srv.Client(t).ListIncompleteUploads(context.Background(), srv.Bucket, "tenant/", true) {
				t.Fatalf("an incomplete upload is left: %+v", up)
			}
		})
	}
}
