package redisadmin

import "time"

// pacer sizes the windows of MIGRATE that one source node runs, from how
// long the windows before took. Redis runs a client's pipelined commands
// one after the other, and a MIGRATE holds the source until the
// destination has restored its keys, so while a window runs the source
// answers no other client, and a client of the cluster waits for the rest
// of the window. Large windows move keys fastest: fewer round trips, fewer
// MIGRATEs. So the pacer grows the window while windows take less than its
// budget and halves it when one takes more (additive increase,
// multiplicative decrease, as TCP paces its sends): windows hover around
// the budget whatever the machine, the values or the load. When a single
// MIGRATE of KeysPerMigrate keys takes longer than the budget (large
// values, a busy machine), the pacer also carries fewer keys per MIGRATE,
// down to a tenth.
//
// The budget bounds how long a client waits, not how often: a source that
// ran windows back to back would make nearly every read wait. So after
// each window the source rests, answering its clients, for as long as
// the window took times the pacer's rest ratio.
//
// A pacer is pure: the caller measures the windows and sleeps. It serves
// one source at a time.
type pacer struct {
	// budget is how long a window may take.
	budget time.Duration
	// rest is the source's rest after a window, per unit of the window's
	// time.
	rest float64
	// perMigrate and maxSlots are the most keys one MIGRATE carries and the
	// most slots (MIGRATEs) one window has.
	perMigrate, maxSlots int
	// keys is what the next window may carry, the pacer's state: between
	// floor and maxSlots × perMigrate.
	keys int
}

// window is what one window of MIGRATE does.
type window struct {
	// slots is how many slots it lists keys of and migrates, one MIGRATE
	// each.
	slots int
	// keys is how many keys of a slot it lists, and one MIGRATE carries,
	// at most.
	keys int
}

// newPacer returns a pacer of windows of at most migrateWindow MIGRATEs of
// at most perMigrate keys each. Its first window is a single full MIGRATE:
// a budget met grows the window within a few windows, one missed costs a
// single window's wait. A budget of zero or less turns the pacer off:
// full windows, no rest.
func newPacer(budget time.Duration, rest float64, perMigrate int) *pacer {
	perMigrate, maxSlots := max(1, perMigrate), migrateWindow
	p := &pacer{budget: budget, rest: rest, perMigrate: perMigrate, maxSlots: maxSlots, keys: perMigrate}
	if budget <= 0 {
		p.keys = maxSlots * perMigrate
	}
	return p
}

// floor is the fewest keys a window carries: a tenth of a full MIGRATE.
// Below it the MIGRATE's own round trip to the destination costs more than
// its keys.
func (p *pacer) floor() int { return max(1, (p.perMigrate+9)/10) }

// step is the additive increase: a quarter of a full MIGRATE, so that a
// window that shrank to one MIGRATE regains the full window within a few
// dozen windows.
func (p *pacer) step() int { return max(1, p.perMigrate/4) }

// next is the window to run now.
func (p *pacer) next() window {
	return window{
		slots: min(p.maxSlots, max(1, p.keys/p.perMigrate)),
		keys:  min(p.perMigrate, p.keys),
	}
}

// took records that the last window took d and returns how long the source
// is to rest before the next one.
func (p *pacer) took(d time.Duration) time.Duration {
	if p.budget <= 0 {
		return 0
	}
	if d > p.budget {
		p.keys = max(p.floor(), p.keys/2)
	} else {
		p.keys = min(p.maxSlots*p.perMigrate, p.keys+p.step())
	}
	return time.Duration(float64(d) * max(0, p.rest))
}
