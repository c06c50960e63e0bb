package redissnapshot_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/multi-operator/multi-operator/pkg/rdb"
	"github.com/multi-operator/multi-operator/pkg/redissnapshot"
)

// A snapshot parsed as it arrives, through a pipe: neither side holds more
// than a buffer and the current key.
func ExampleTake() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	pr, pw := io.Pipe()
	go func() {
		_, err := redissnapshot.Take(ctx, "10.0.0.7:6379", pw, redissnapshot.Options{
			Username: "backup", Password: "secret", MaxBytes: 8 << 30,
		})
		pw.CloseWithError(err) // nil: the parser then sees the file's end
	}()
	p := rdb.NewParser(pr, rdb.Options{})
	for {
		e, err := p.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			// Stop the transfer along with the parse.
			_ = pr.CloseWithError(err)
			fmt.Println(err)
			return
		}
		if k, ok := e.(*rdb.Key); ok {
			_ = k // RESTORE k.Key with k.Payload, ABSTTL k.ExpireAtMs
		}
	}
}
