package tdset

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/multi-operator/multi-operator/pkg/icalendar"
)

// countingCalendars is a parsedCalendars of at most max entries that
// counts the parses it makes.
func countingCalendars(max int) (*parsedCalendars, func() int) {
	p := newParsedCalendars()
	p.max = max
	var mu sync.Mutex
	parses := 0
	p.parse = func(data []byte, lim icalendar.Limits) (icalendar.Result, error) {
		mu.Lock()
		parses++
		mu.Unlock()
		return icalendar.Parse(data, lim)
	}
	return p, func() int { mu.Lock(); defer mu.Unlock(); return parses }
}

const holidays = "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20261225\r\nSUMMARY:Christmas\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"

func TestParsedCalendarsParseEachVersionOnce(t *testing.T) {
	p, parses := countingCalendars(4)
	cm := types.NamespacedName{Namespace: "team-a", Name: "holidays"}
	for range 3 {
		res, err := p.get(cm, "uid-1", "10", "holidays.ics", holidays)
		if err != nil || len(res.Events) != 1 || res.Events[0].Summary != "Christmas" {
			t.Fatalf("got %+v, %v", res, err)
		}
	}
	if n := parses(); n != 1 {
		t.Fatalf("3 reads of one version parsed %d times, want 1", n)
	}
	// A new version of the ConfigMap parses again, and replaces the old.
	changed := strings.Replace(holidays, "Christmas", "Xmas", 1)
	if res, _ := p.get(cm, "uid-1", "11", "holidays.ics", changed); len(res.Events) != 1 || res.Events[0].Summary != "Xmas" {
		t.Fatalf("the new version's events: %+v", res.Events)
	}
	// A ConfigMap deleted and created again at the same resourceVersion
	// text (another UID) is another object.
	if _, _ = p.get(cm, "uid-2", "11", "holidays.ics", holidays); parses() != 3 || p.len() != 1 {
		t.Fatalf("parses %d, kept %d: want 3 and 1", parses(), p.len())
	}
	// Another key of the same ConfigMap is kept apart.
	_, _ = p.get(cm, "uid-2", "11", "school.ics", holidays)
	if p.len() != 2 {
		t.Fatalf("kept %d, want 2", p.len())
	}
	// A parse error is kept as well: the same bytes fail the same way.
	broken := strings.Repeat("X", icalendar.DefaultLimits.MaxBytes+1)
	for range 2 {
		if _, err := p.get(cm, "uid-2", "11", "broken.ics", broken); err == nil {
			t.Fatal("a file over the limits parsed")
		}
	}
	if parses() != 5 {
		t.Fatalf("parses %d, want 5", parses())
	}
	p.forget(cm)
	if p.len() != 0 {
		t.Fatalf("kept %d after forget", p.len())
	}
	// No version: never kept.
	_, _ = p.get(cm, "", "", "holidays.ics", holidays)
	_, _ = p.get(cm, "", "", "holidays.ics", holidays)
	if parses() != 7 || p.len() != 0 {
		t.Fatalf("parses %d, kept %d: want 7 and 0", parses(), p.len())
	}
}

// A tenant with many ConfigMaps cannot grow the kept parses past the
// bound; the least recently used goes first.
func TestParsedCalendarsStayWithinTheirBound(t *testing.T) {
	p, parses := countingCalendars(3)
	cm := func(i int) types.NamespacedName { return types.NamespacedName{Namespace: "t", Name: fmt.Sprint(i)} }
	for i := range 10 {
		_, _ = p.get(cm(i), "u", "1", "k", holidays)
		if p.len() > 3 {
			t.Fatalf("kept %d after %d ConfigMaps, bound 3", p.len(), i+1)
		}
	}
	// Kept now: 7, 8, 9. Using 7 makes 8 the least recently used.
	_, _ = p.get(cm(7), "u", "1", "k", holidays)
	_, _ = p.get(cm(10), "u", "1", "k", holidays)
	before := parses()
	_, _ = p.get(cm(7), "u", "1", "k", holidays)
	if parses() != before {
		t.Fatal("the recently used entry was evicted")
	}
	_, _ = p.get(cm(8), "u", "1", "k", holidays)
	if parses() != before+1 {
		t.Fatal("the least recently used entry was kept")
	}
}

// Concurrent reconciles share the kept parses safely (run with -race).
func TestParsedCalendarsConcurrently(t *testing.T) {
	p, _ := countingCalendars(8)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				cm := types.NamespacedName{Namespace: "t", Name: fmt.Sprint((g + i) % 12)}
				if res, err := p.get(cm, "u", fmt.Sprint(i%3), "k", holidays); err != nil || len(res.Events) != 1 {
					t.Errorf("got %+v, %v", res, err)
					return
				}
				if i%50 == 0 {
					p.forget(cm)
				}
			}
		}()
	}
	wg.Wait()
	if p.len() > 8 {
		t.Fatalf("kept %d, bound 8", p.len())
	}
}
