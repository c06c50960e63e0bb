package tdset

import (
	"container/list"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/multi-operator/multi-operator/pkg/icalendar"
)

// maxParsedCalendars bounds how many parsed iCalendar files the reconciler
// keeps: each is bounded by icalendar.DefaultLimits, and a tenant may
// create many ConfigMaps.
const maxParsedCalendars = 256

// parsedCalendars keeps the parse of each ConfigMap key a TDSet imports,
// for the ConfigMap's current version only: every TDSet of a calendar
// rereads it at each reconcile, and a file parses to the same result
// until the ConfigMap changes. The least recently used entry goes first
// once maxParsedCalendars are kept. Safe for concurrent reconciles.
type parsedCalendars struct {
	parse func([]byte, icalendar.Limits) (icalendar.Result, error)
	max   int

	mu      sync.Mutex
	entries map[icsKey]*list.Element
	// recent orders the entries, most recently used first.
	recent *list.List
}

// icsKey names one key of one ConfigMap.
type icsKey struct {
	configMap types.NamespacedName
	key       string
}

// parsedCalendar is one kept parse, of one version of the ConfigMap.
type parsedCalendar struct {
	key     icsKey
	uid     types.UID
	version string
	result  icalendar.Result
	err     error
}

func newParsedCalendars() *parsedCalendars {
	return &parsedCalendars{parse: icalendar.Parse, max: maxParsedCalendars, entries: map[icsKey]*list.Element{}, recent: list.New()}
}

// get returns the parse of data, the value of key in the ConfigMap cm at
// version (its UID and resourceVersion), parsing it only when this
// version's parse is not kept. A parse error is kept too: the same bytes
// fail the same way. The result's slices are shared: callers only read them.
func (p *parsedCalendars) get(cm types.NamespacedName, uid types.UID, version, key, data string) (icalendar.Result, error) {
	if version == "" {
		// An object without a version (not read from the API server)
		// cannot tell its changes: parse it every time.
		return p.parse([]byte(data), icalendar.DefaultLimits)
	}
	k := icsKey{configMap: cm, key: key}
	p.mu.Lock()
	if e, ok := p.entries[k]; ok {
		if c := e.Value.(*parsedCalendar); c.uid == uid && c.version == version {
			p.recent.MoveToFront(e)
			p.mu.Unlock()
			return c.result, c.err
		}
	}
	p.mu.Unlock()

	// Parsed without the lock: two reconciles of the same new version may
	// both parse it, and the second keeps its equal result.
	res, err := p.parse([]byte(data), icalendar.DefaultLimits)
	p.mu.Lock()
	defer p.mu.Unlock()
	c := &parsedCalendar{key: k, uid: uid, version: version, result: res, err: err}
	if e, ok := p.entries[k]; ok {
		e.Value = c
		p.recent.MoveToFront(e)
		return res, err
	}
	p.entries[k] = p.recent.PushFront(c)
	for p.recent.Len() > p.max {
		oldest := p.recent.Back()
		delete(p.entries, oldest.Value.(*parsedCalendar).key)
		p.recent.Remove(oldest)
	}
	return res, err
}

// forget drops what is kept of a ConfigMap that is gone.
func (p *parsedCalendars) forget(cm types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, e := range p.entries {
		if k.configMap == cm {
			delete(p.entries, k)
			p.recent.Remove(e)
		}
	}
}

// len is how many parses are kept.
func (p *parsedCalendars) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.recent.Len()
}
