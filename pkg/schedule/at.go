package schedule

import "time"

// Result is what a calendar asks for at one instant, and what comes next.
type Result struct {
	// Replicas is the effective count now.
	Replicas int32
	// Rule is the rule Replicas comes from: the rule that applies now, or,
	// when Early, the upcoming rule whose scale-up is applied early.
	Rule Rule
	// Early reports that Replicas comes from a scale-up applied early by
	// the lead time; Rule is then the rule that takes over when it is due.
	Early bool
	// Next is the first instant after now at which (Replicas, Rule, Early)
	// changes, in the calendar's location; the zero time means never.
	Next time.Time
	// NextReplicas, NextRule and NextEarly are what applies from Next on;
	// when Next is zero they equal Replicas, Rule and Early.
	NextReplicas int32
	NextRule     Rule
	NextEarly    bool
}

const (
	secondsPerDay = 24 * 60 * 60
	// farSeconds is how far (3 days) the wall clock must be from every
	// exception boundary before the search skips the zone's offset changes:
	// UTC offsets stay within a day, so across 3 days no offset change can
	// bring the wall clock back to a boundary already passed.
	farSeconds = 3 * secondsPerDay
	// searchBudget bounds the candidate instants one At visits. Calendars
	// within the API's limits (64 windows, 400 exceptions) need at most a
	// few thousand; see the package documentation.
	searchBudget = 1 << 15
)

// state is a raw count and the rule that sets it.
type state struct {
	replicas int32
	rule     Rule
}

// effective is a count after the lead time is applied.
type effective struct {
	state
	early bool
}

// At returns what the calendar asks for at now, and when and to what that
// changes next. It is defined for every calendar, also one that Validate
// rejects (see the package documentation). It is cheap enough for every
// reconcile and allocates nothing unless more than 32 raw changes fall
// within the lead time.
func (c *Calendar) At(now time.Time) Result {
	e := evaluator{c: c, loc: c.Location, budget: searchBudget}
	if e.loc == nil {
		e.loc = time.UTC
	}
	for _, w := range c.Windows {
		if w.valid() {
			e.windows = true
			break
		}
	}
	lead := min(max(c.LeadTime, 0), MaxLeadTime)

	// q holds the raw segments from the one at t on, through t+lead and one
	// beyond (unless the raw count never changes again).
	var q queue
	r0 := e.raw(now)
	q.push(segment{now, r0})
	g := generator{t: now, s: r0}
	e.fill(&q, &g, now.Add(lead))

	cur := q.effective(now, lead)
	res := Result{Replicas: cur.replicas, Rule: cur.rule, Early: cur.early, NextReplicas: cur.replicas, NextRule: cur.rule, NextEarly: cur.early}
	// The effective count changes only where a raw segment starts (it takes
	// over, or the one before it stops counting) or lead before that (it
	// comes into view): visit those instants in order.
	t := now
	for {
		next, ok := q.candidate(t, lead)
		if !ok {
			return res
		}
		t = next
		q.advance(t)
		e.fill(&q, &g, t.Add(lead))
		if v := q.effective(t, lead); v != cur {
			res.Next = t.In(e.loc)
			res.NextReplicas, res.NextRule, res.NextEarly = v.replicas, v.rule, v.early
			return res
		}
	}
}

// segment is a raw state from an instant on.
type segment struct {
	at time.Time
	s  state
}

// queue is the raw segments still of interest, oldest first: live ones are
// those from head to n. They are kept in an array on the caller's stack
// while it is large enough, and only then in a slice.
type queue struct {
	small   [32]segment
	big     []segment // when not nil, holds the segments instead of small
	head, n int
}

func (q *queue) seg(i int) segment {
	if q.big != nil {
		return q.big[i]
	}
	return q.small[i]
}

func (q *queue) push(s segment) {
	if q.big == nil && q.n == len(q.small) {
		if q.head > 0 {
			q.n = copy(q.small[:], q.small[q.head:q.n])
			q.head = 0
		} else {
			q.big = append(make([]segment, 0, 2*len(q.small)), q.small[:]...)
		}
	}
	if q.big == nil {
		q.small[q.n] = s
	} else {
		if q.head > 0 && q.head >= q.n/2 {
			q.big = q.big[:copy(q.big, q.big[q.head:q.n])]
			q.n, q.head = len(q.big), 0
		}
		q.big = append(q.big[:q.n], s)
	}
	q.n++
}

func (q *queue) last() segment { return q.seg(q.n - 1) }

// advance drops the segments that ended at or before t, so that the first
// one holds t.
func (q *queue) advance(t time.Time) {
	for q.head+1 < q.n && !q.seg(q.head+1).at.After(t) {
		q.head++
	}
}

// candidate is the first instant after t at which a known segment starts or
// comes within lead.
func (q *queue) candidate(t time.Time, lead time.Duration) (time.Time, bool) {
	var best time.Time
	ok := false
	if q.head+1 < q.n {
		best, ok = q.seg(q.head+1).at, true
	}
	for i := q.head + 1; i < q.n; i++ {
		if early := q.seg(i).at.Add(-lead); early.After(t) {
			if !ok || early.Before(best) {
				best, ok = early, true
			}
			break
		}
	}
	return best, ok
}

// effective is the largest raw count in [t, t+lead]: the segment holding t
// unless a later one in reach has more, and then the first such.
func (q *queue) effective(t time.Time, lead time.Duration) effective {
	v := effective{state: q.seg(q.head).s}
	until := t.Add(lead)
	for i := q.head + 1; i < q.n; i++ {
		s := q.seg(i)
		if s.at.After(until) {
			break
		}
		if s.s.replicas > v.replicas {
			v = effective{state: s.s, early: true}
		}
	}
	return v
}

// generator is where the raw search stands: the last change found and its
// state, or done when the raw count never changes again.
type generator struct {
	t    time.Time
	s    state
	done bool
}

// fill adds raw segments until one starts after until or there are no more.
func (e *evaluator) fill(q *queue, g *generator, until time.Time) {
	for !g.done && !q.last().at.After(until) {
		t, s, ok := e.nextRaw(g.t, g.s)
		if !ok {
			g.done = true
			return
		}
		g.t, g.s = t, s
		q.push(segment{t, s})
	}
}

// evaluator evaluates one calendar for one call of At.
type evaluator struct {
	c       *Calendar
	loc     *time.Location
	windows bool // some window covers something
	budget  int  // candidate instants left to visit
}

// raw is the raw state at t.
func (e *evaluator) raw(t time.Time) state {
	if ov := e.c.Override; ov != nil && t.Before(ov.Until) {
		return state{ov.Replicas, Rule{Kind: RuleOverride}}
	}
	ws, _ := e.wall(t)
	return e.wallState(ws)
}

// wall is t's local wall-clock time as seconds since 1970-01-01 00:00 local,
// and t's UTC offset in seconds.
func (e *evaluator) wall(t time.Time) (int64, int) {
	_, off := t.In(e.loc).Zone()
	return t.Unix() + int64(off), off
}

// wallState is the state at a local wall-clock time when no override
// applies: the first exception on its date, else the first window holding
// it, else the default.
func (e *evaluator) wallState(ws int64) state {
	day := floorDiv(ws, secondsPerDay)
	if len(e.c.Exceptions) > 0 {
		y, m, d := civil(day)
		for i, x := range e.c.Exceptions {
			if int64(x.Date.Year) == y && x.Date.Month == m && x.Date.Day == d {
				return state{x.Replicas, Rule{Kind: RuleException, Index: i}}
			}
		}
	}
	wd, minute := weekday(day), int(floorMod(ws, secondsPerDay)/60)
	for i, w := range e.c.Windows {
		if w.covers(wd, minute) {
			return state{w.Replicas, Rule{Kind: RuleWindow, Index: i}}
		}
	}
	return state{e.c.Default, Rule{}}
}

// nextRaw is the first instant after t at which the raw state differs from
// cur, which holds at t; ok is false when it never does (or the search
// budget is spent).
//
// It steps through the zone's offset periods: within one, the wall clock is
// t plus a fixed offset, so the next local wall-clock point at which a
// window or exception can begin or end is an exact instant, unless the
// period ends first; at the period's end the wall clock jumps (skipped or
// repeated time) and the state is evaluated there. Override, wall-clock
// points and offset changes are the only places the raw state can change.
func (e *evaluator) nextRaw(t time.Time, cur state) (time.Time, state, bool) {
	for ; e.budget > 0; e.budget-- {
		var c time.Time
		if ov := e.c.Override; ov != nil && t.Before(ov.Until) {
			// Nothing else counts until the override ends.
			c = ov.Until
		} else {
			ws, off := e.wall(t)
			p, ok := e.nextWall(ws)
			var pc time.Time
			if ok {
				pc = time.Unix(p-int64(off), 0)
			}
			end, hasEnd := e.zoneEnd(t, off)
			switch {
			case hasEnd && (!ok || end.Before(pc)):
				// The offset changes first. Far from every wall-clock point
				// (only exceptions have far ones) the change cannot matter,
				// nor can those that follow until shortly before the point.
				if !e.windows && off >= -secondsPerDay && off <= secondsPerDay && e.farFromPrevious(ws) {
					if !ok {
						return time.Time{}, cur, false
					}
					if j := pc.Add(-farSeconds * time.Second); j.After(end) {
						t = j
						continue
					}
				}
				c = end
			case ok:
				c = pc
			default:
				return time.Time{}, cur, false
			}
		}
		if s := e.raw(c); s != cur {
			return c, s, true
		}
		t = c
	}
	return time.Time{}, cur, false
}

// nextWall is the first local wall-clock point after ws at which a window
// or an exception date begins or ends.
func (e *evaluator) nextWall(ws int64) (int64, bool) {
	var best int64
	ok := false
	day, sod := floorDiv(ws, secondsPerDay), floorMod(ws, secondsPerDay)
	if e.windows {
		// Every weekday occurs within the next 7 days, and a valid window
		// begins on at least one of them.
		for k := int64(0); k <= 7 && !ok; k++ {
			d := day + k
			wd := weekday(d)
			bm := -1
			try := func(m int) {
				if (k > 0 || int64(m)*60 > sod) && (bm < 0 || m < bm) {
					bm = m
				}
			}
			for _, w := range e.c.Windows {
				if !w.valid() {
					continue
				}
				if w.MultiDay {
					// Only its start and its end: it covers the days
					// between whole.
					if s, _ := w.startDay(); s == wd {
						try(w.Start)
					}
					if w.EndDay == wd {
						try(w.End)
					}
					continue
				}
				if w.Days.Has(wd) {
					try(w.Start)
					if w.Start < w.End {
						try(w.End)
					}
				}
				if w.End < w.Start && w.Days.Has((wd+6)%7) {
					try(w.End)
				}
			}
			if bm >= 0 {
				best, ok = d*secondsPerDay+int64(bm)*60, true
			}
		}
	}
	for _, x := range e.c.Exceptions {
		start := daysFromCivil(int64(x.Date.Year), x.Date.Month, x.Date.Day) * secondsPerDay
		for _, p := range [2]int64{start, start + secondsPerDay} {
			if p > ws && (!ok || p < best) {
				best, ok = p, true
			}
		}
	}
	return best, ok
}

// farFromPrevious reports whether every exception boundary at or before ws
// lies at least farSeconds before it. Only used without windows.
func (e *evaluator) farFromPrevious(ws int64) bool {
	for _, x := range e.c.Exceptions {
		start := daysFromCivil(int64(x.Date.Year), x.Date.Month, x.Date.Day) * secondsPerDay
		for _, p := range [2]int64{start, start + secondsPerDay} {
			if p <= ws && ws-p < farSeconds {
				return false
			}
		}
	}
	return true
}

// zoneEnd is the end of the offset period holding t (whose offset is off),
// or false when the period lasts forever. Where the zone's rules are a
// POSIX TZ rule (after the last listed transition, 2037 in Go's database),
// ZoneBounds returns Dec 31 00:00 UTC as the end of a period that holds
// Dec 31 of a leap year, which is not after t; then the next offset change
// within a day is found by bisection, or a day later is taken as an
// artificial end (where nothing changes and the search goes on).
func (e *evaluator) zoneEnd(t time.Time, off int) (time.Time, bool) {
	_, end := t.In(e.loc).ZoneBounds()
	if end.IsZero() {
		return end, false
	}
	if end.After(t) {
		return end, true
	}
	offsetAt := func(sec int64) int {
		_, o := time.Unix(sec, 0).In(e.loc).Zone()
		return o
	}
	lo, hi := t.Unix(), t.Unix()+secondsPerDay
	if offsetAt(hi) == off {
		return time.Unix(hi, 0), true
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if offsetAt(mid) == off {
			lo = mid
		} else {
			hi = mid
		}
	}
	return time.Unix(hi, 0), true
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// weekday is the weekday of a day counted from 1970-01-01, a Thursday.
func weekday(day int64) time.Weekday { return time.Weekday(floorMod(day+4, 7)) }

// civil is the proleptic Gregorian date of a day counted from 1970-01-01
// (Howard Hinnant's civil_from_days).
func civil(day int64) (int64, time.Month, int) {
	z := day + 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := int(doy - (153*mp+2)/5 + 1)
	m := int(mp + 3)
	if m > 12 {
		m -= 12
	}
	y := yoe + era*400
	if m <= 2 {
		y++
	}
	return y, time.Month(m), d
}

// daysFromCivil is the day, counted from 1970-01-01, of a date; dates that
// do not exist give some day nearby, which is harmless for a candidate.
func daysFromCivil(y int64, m time.Month, d int) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := (int64(m) + 9) % 12
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}
