package redisadmin

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// NumSlots is the number of hash slots of every Redis Cluster.
const NumSlots = 16384

// Peer is one line of a node's CLUSTER NODES: what that node believes about
// a node of the cluster, itself included.
type Peer struct {
	// ID is the node's 40-character name.
	ID string
	// Addr is host:port for clients, empty while the node does not know it.
	Addr string
	// Flags are the node's flags: myself, master, slave, fail?, fail,
	// handshake, noaddr, ...
	Flags []string
	// MasterID is the master a replica follows, empty for a master.
	MasterID string
	// Slots are the slots the line says the node serves.
	Slots []int
	// Migrating maps a slot to the node it is being migrated to; only the
	// myself line carries it.
	Migrating map[int]string
	// Importing maps a slot to the node it is being imported from; only the
	// myself line carries it.
	Importing map[int]string
}

// Has reports whether the peer carries flag.
func (p Peer) Has(flag string) bool {
	for _, f := range p.Flags {
		if f == flag {
			return true
		}
	}
	return false
}

// IsMaster reports whether the peer is a master.
func (p Peer) IsMaster() bool { return p.Has("master") }

// Failed reports whether the peer is considered failing or has no address.
func (p Peer) Failed() bool { return p.Has("fail") || p.Has("fail?") || p.Has("noaddr") }

// parseNodes parses the reply of CLUSTER NODES.
func parseNodes(text string) ([]Peer, error) {
	var peers []Peer
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		p, err := parseNodeLine(line)
		if err != nil {
			return nil, err
		}
		peers = append(peers, p)
	}
	return peers, nil
}

// parseNodeLine parses
// "<id> <ip:port@cport[,hostname]> <flags> <master> <ping> <pong> <epoch> <link> <slot>...".
func parseNodeLine(line string) (Peer, error) {
	f := strings.Fields(line)
	if len(f) < 8 {
		return Peer{}, fmt.Errorf("malformed CLUSTER NODES line %q", line)
	}
	p := Peer{ID: f[0], Flags: strings.Split(f[2], ","), Addr: peerAddr(f[1])}
	if f[3] != "-" {
		p.MasterID = f[3]
	}
	for _, s := range f[8:] {
		if err := p.addSlots(s); err != nil {
			return Peer{}, fmt.Errorf("CLUSTER NODES line %q: %w", line, err)
		}
	}
	return p, nil
}

// peerAddr turns CLUSTER NODES' "ip:port@cport[,hostname]" into host:port
// as net.JoinHostPort writes it, or "" while the node has no address
// (":0@0"). Redis writes an IPv6 address without brackets
// ("fd00::5:6379@16379"), so the port follows the last colon.
func peerAddr(field string) string {
	addr, _, _ := strings.Cut(field, ",")
	addr, _, _ = strings.Cut(addr, "@")
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return ""
	}
	host, port := addr[:i], addr[i+1:]
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "" {
		return ""
	}
	return net.JoinHostPort(host, port)
}

func (p *Peer) addSlots(s string) error {
	if strings.HasPrefix(s, "[") {
		body := strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
		if i := strings.Index(body, "->-"); i >= 0 {
			slot, err := strconv.Atoi(body[:i])
			if err != nil {
				return err
			}
			if p.Migrating == nil {
				p.Migrating = map[int]string{}
			}
			p.Migrating[slot] = body[i+3:]
			return nil
		}
		if i := strings.Index(body, "-<-"); i >= 0 {
			slot, err := strconv.Atoi(body[:i])
			if err != nil {
				return err
			}
			if p.Importing == nil {
				p.Importing = map[int]string{}
			}
			p.Importing[slot] = body[i+3:]
			return nil
		}
		return fmt.Errorf("unknown slot state %q", s)
	}
	lo, hi, isRange := strings.Cut(s, "-")
	from, err := strconv.Atoi(lo)
	if err != nil {
		return err
	}
	to := from
	if isRange {
		if to, err = strconv.Atoi(hi); err != nil {
			return err
		}
	}
	if from < 0 || to >= NumSlots || from > to {
		return fmt.Errorf("slot range %q out of bounds", s)
	}
	for slot := from; slot <= to; slot++ {
		p.Slots = append(p.Slots, slot)
	}
	return nil
}

// parseInfo parses the "key:value" lines of CLUSTER INFO.
func parseInfo(text string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok {
			out[k] = v
		}
	}
	return out
}

// SlotRange is an inclusive range of slots.
type SlotRange struct{ From, To int }

// ranges groups sorted slots into contiguous ranges.
func ranges(slots []int) []SlotRange {
	var out []SlotRange
	for _, s := range slots {
		if n := len(out); n > 0 && out[n-1].To == s-1 {
			out[n-1].To = s
			continue
		}
		out = append(out, SlotRange{From: s, To: s})
	}
	return out
}
