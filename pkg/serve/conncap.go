package serve

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Connections.
//
// Every connection a server keeps costs memory (an idle HTTP/2 connection
// about 20 KiB) and a file descriptor: 15,000 idle connections took a
// server from 31 to 352 MB of RSS, and once file descriptors ran out it
// could accept nothing, health probes included. A CapListener keeps at
// most Max connections open. When one more arrives, the connection that
// has been idle longest (no call or request in flight) is closed to make
// room, then, failing that, the busy one that has read and written
// nothing for longest, if for BusySilence or more; only when every
// connection is busy and live is the new one refused. A flood of idle
// connections so pushes out the flood's oldest, and a health probe, which
// opens a new connection and asks at once, is let in: it has until the
// flood has opened Max more connections to ask (a second at 512 a
// second), which a probe needs a few milliseconds for.

// DefaultMaxConnections is the most connections a server keeps open at
// once on one listener.
const DefaultMaxConnections = 512

// BusySilence is how long a connection with a call in flight must have
// read and written nothing before it may be closed to make room.
const BusySilence = 10 * time.Second

// busySilence is BusySilence (tests shorten it).
var busySilence = BusySilence

// CapListener caps the connections open at once (see LimitListener).
type CapListener struct {
	net.Listener
	max int
	log *slog.Logger

	mu       sync.Mutex
	conns    map[*capConn]struct{}
	evicted  int64
	refused  int64
	lastNote time.Time
}

// LimitListener returns l capped at max connections (DefaultMaxConnections
// when max <= 0). log, when not nil, receives a warning when the cap is
// reached (at most one a minute, with counts).
func LimitListener(l net.Listener, max int, log *slog.Logger) *CapListener {
	if max <= 0 {
		max = DefaultMaxConnections
	}
	return &CapListener{Listener: l, max: max, log: log, conns: map[*capConn]struct{}{}}
}

// Max returns the cap.
func (l *CapListener) Max() int { return l.max }

// Open returns the number of connections open.
func (l *CapListener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// Counts returns how many connections were closed to make room, and how
// many new ones were refused.
func (l *CapListener) Counts() (evicted, refused int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.evicted, l.refused
}

// Accept waits for a connection it can admit.
func (l *CapListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		cc := &capConn{Conn: c, l: l}
		cc.last.Store(time.Now().UnixNano())
		if l.admit(cc) {
			return cc, nil
		}
		_ = c.Close()
	}
}

// admit adds c, closing another connection to make room if needed; it
// reports false when c must be refused.
func (l *CapListener) admit(c *capConn) bool {
	now := time.Now().UnixNano()
	l.mu.Lock()
	if len(l.conns) < l.max {
		l.conns[c] = struct{}{}
		l.mu.Unlock()
		return true
	}
	var idle, silent *capConn
	for o := range l.conns {
		last := o.last.Load()
		if o.idle() {
			if idle == nil || last < idle.last.Load() {
				idle = o
			}
		} else if time.Duration(now-last) >= busySilence && (silent == nil || last < silent.last.Load()) {
			silent = o
		}
	}
	victim := idle
	if victim == nil {
		victim = silent
	}
	if victim == nil {
		l.refused++
	} else {
		delete(l.conns, victim)
		l.conns[c] = struct{}{}
		l.evicted++
	}
	note := l.log != nil && time.Since(l.lastNote) >= time.Minute
	if note {
		l.lastNote = time.Now()
	}
	evicted, refused := l.evicted, l.refused
	l.mu.Unlock()
	if victim != nil {
		victim.closeConn()
	}
	if note {
		l.log.Warn("connection limit reached: closing the connections idle longest to make room", "addr", l.Addr().String(), "max", l.max, "closed", evicted, "refused", refused)
	}
	return victim != nil
}

func (l *CapListener) drop(c *capConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// ConnState is an http.Server ConnState hook that tells the listener
// which of its connections are serving a request: the others are idle.
func (l *CapListener) ConnState(c net.Conn, s http.ConnState) {
	if cc, ok := c.(*capConn); ok {
		cc.httpState.Store(int32(s) + 1)
	}
}

// capConn is an admitted connection: when it last read or wrote, and
// whether a call or request is in flight on it.
type capConn struct {
	net.Conn
	l         *CapListener
	last      atomic.Int64 // UnixNano of the last read or write that moved bytes
	busy      atomic.Pointer[func() bool]
	httpState atomic.Int32 // http.ConnState + 1, 0 when unknown
	closed    atomic.Bool
}

func (c *capConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.last.Store(time.Now().UnixNano())
	}
	return n, err
}

func (c *capConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if n > 0 {
		c.last.Store(time.Now().UnixNano())
	}
	return n, err
}

// idle reports whether no call or request is in flight: as the gRPC
// guard counts calls (setBusy), else as the HTTP server's ConnState says
// (a new connection, before its first request, is idle).
func (c *capConn) idle() bool {
	if f := c.busy.Load(); f != nil {
		return !(*f)()
	}
	return c.httpState.Load() != int32(http.StateActive)+1
}

// setBusy installs the function telling whether a call is in flight.
func (c *capConn) setBusy(f func() bool) { c.busy.Store(&f) }

func (c *capConn) closeConn() {
	if c.closed.CompareAndSwap(false, true) {
		_ = c.Conn.Close()
	}
}

func (c *capConn) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return net.ErrClosed
	}
	c.l.drop(c)
	return c.Conn.Close()
}
