package manager

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// releaseQuantum is how often the manager's throttled requests go out. A
// request that has to wait for a token waits until the first multiple of
// releaseQuantum (from the bucket's start) at or after its token's own
// moment, so that at 20 requests per second the waiting ones go out five
// at a time, four times a second, instead of one every 50 ms. The rate and
// the burst stay as set (no group is larger than the burst: the quantum
// shrinks to the time the bucket takes to refill it). What changes is how
// often the manager wakes up: once per group for the requests, their
// answers and the watch events they set off, instead of once per request,
// which costs less CPU per custom resource (docs/scale.md).
const releaseQuantum = 250 * time.Millisecond

// quantizedLimiter is a token bucket (golang.org/x/time/rate, as client-go's
// own) whose waits end on multiples of its quantum. It implements
// client-go's flowcontrol.RateLimiter.
type quantizedLimiter struct {
	limiter *rate.Limiter
	qps     float32
	// epoch is where the quantum boundaries are counted from.
	epoch   time.Time
	quantum time.Duration
	// mu makes reading the clock and handing that time to the bucket one
	// step (reserving, taking or giving back a token), so that the bucket,
	// which keeps the time of its last change, never sees time go back.
	mu sync.Mutex
}

// newQuantizedLimiter returns a bucket of qps tokens per second, holding at
// most burst, whose waits end on multiples of quantum. The quantum is
// shortened to the time the bucket takes to refill its burst, so that no
// group let out at a boundary is larger than the burst.
func newQuantizedLimiter(qps float32, burst int, quantum time.Duration) *quantizedLimiter {
	if refill := float64(burst) / float64(qps); refill < quantum.Seconds() {
		quantum = time.Duration(refill * float64(time.Second))
	}
	return &quantizedLimiter{limiter: rate.NewLimiter(rate.Limit(qps), burst), qps: qps, epoch: time.Now(), quantum: quantum}
}

// reservation is a token taken from the bucket, with when its holder may go.
type reservation struct {
	*rate.Reservation
	// now is when the token was taken.
	now time.Time
	// own is how long until the token's own moment; delay, how long until
	// the quantum boundary at or after it (both 0 while the bucket holds
	// a token).
	own, delay time.Duration
}

// reserve takes a token at the time clock tells.
func (l *quantizedLimiter) reserve(clock func() time.Time) reservation {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := clock()
	r := l.limiter.ReserveN(now, 1)
	own := r.DelayFrom(now)
	out := reservation{Reservation: r, now: now, own: own, delay: own}
	// A rate so low that the token never comes is left as it is: its
	// boundary would overflow.
	if own > 0 && l.quantum > 0 && own < rate.InfDuration-2*l.quantum {
		quanta := (now.Add(own).Sub(l.epoch) + l.quantum - 1) / l.quantum
		out.delay = l.epoch.Add(quanta * l.quantum).Sub(now)
	}
	return out
}

// Wait takes a token and waits until its quantum boundary. When the
// context's deadline comes before the boundary, it waits only until the
// token's own moment, if the deadline allows that. When the context ends
// first, it returns the context's error, and the token goes back to the
// bucket unless its own moment has passed.
func (l *quantizedLimiter) Wait(ctx context.Context) error {
	r := l.reserve(time.Now)
	if !r.OK() {
		return fmt.Errorf("the client-side limit's burst of %d allows no request", l.limiter.Burst())
	}
	delay := r.delay
	if delay == 0 {
		return nil
	}
	if deadline, ok := ctx.Deadline(); ok && deadline.Before(r.now.Add(delay)) {
		if deadline.Before(r.now.Add(r.own)) {
			l.cancel(r)
			return fmt.Errorf("the client-side limit would hold the request for %v, past the context's deadline", r.own)
		}
		delay = r.own
	}
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		l.cancel(r)
		return ctx.Err()
	}
}

// cancel gives r's token back to the bucket unless its moment has passed.
func (l *quantizedLimiter) cancel(r reservation) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r.CancelAt(time.Now())
}

// Accept takes a token, waiting as long as it takes. Wait fails without a
// context's end only for a burst below 1, which ClientConfig never sets.
func (l *quantizedLimiter) Accept() { _ = l.Wait(context.Background()) }

// TryAccept takes a token if the bucket holds one now.
func (l *quantizedLimiter) TryAccept() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.limiter.AllowN(time.Now(), 1)
}

// Stop does nothing: the bucket holds no goroutine or timer of its own.
func (l *quantizedLimiter) Stop() {}

// QPS is the bucket's rate.
func (l *quantizedLimiter) QPS() float32 { return l.qps }
