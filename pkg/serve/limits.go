package serve

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Limits on what the gRPC server holds for its clients.
//
// Answers are marshalled and queued as handlers send them; HTTP/2 flow
// control lets the transport queue up to 64 KiB per stream that the
// client has not taken, and a handler sending more then waits, holding
// its goroutine and the message being sent. A client that opens streams
// and never reads them so makes the server hold about 100 KiB per stream,
// without end: thousands of streams took RSS past a gigabyte. Hence:
//
//   - a connection may have at most MaxStreamsPerConn calls open at once
//     (HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS; gRPC clients queue the
//     others);
//   - at most MaxActiveStreams server-streaming calls run at once across
//     all connections; a call beyond waits for a turn, in arrival order,
//     at most QueueTimeout, then fails with ResourceExhausted;
//   - a client that has taken nothing of what was queued for it for
//     StallTimeout is disconnected; so is, while calls wait for a turn, a
//     client that has left two or more streams unread for StallGrace, and,
//     while more than MaxBuffered bytes wait for their clients, the
//     clients that have taken nothing for StallGrace, most bytes first.
//     Closing its connection is the one way HTTP/2 leaves a server to drop
//     what it queued for a client, and it ends the client's calls, freeing
//     their turns for others. A client that reads is never affected.
//
// What is queued for a client is counted on its connection: the size of
// every answer handed to gRPC, less the bytes written to the socket.
type Limits struct {
	// MaxStreamsPerConn is the most calls open at once on one connection.
	MaxStreamsPerConn uint32
	// MaxActiveStreams is the most server-streaming calls running at once.
	MaxActiveStreams int
	// MaxBuffered is how many bytes of answers may wait for their clients,
	// all connections together, before stalled clients are disconnected.
	MaxBuffered int64
	// QueueTimeout is how long a streaming call waits for a turn.
	QueueTimeout time.Duration
	// StallTimeout is how long a client may take nothing of what is queued
	// for it before it is disconnected.
	StallTimeout time.Duration
	// StallGrace replaces StallTimeout while calls wait for a turn (for
	// clients with two or more stalled streams) and while more than
	// MaxBuffered bytes wait.
	StallGrace time.Duration
	// MaxConnectionIdle closes a connection that has had no call for that
	// long (gRPC keepalive: a GOAWAY, then the connection is closed 5 s
	// later whatever the client does). It is grpc-go clients' own idle
	// timeout: they close an unused channel after 30 minutes too.
	MaxConnectionIdle time.Duration
	// HandshakeTimeout bounds the time a new connection has to send its
	// HTTP/2 preface and settings.
	HandshakeTimeout time.Duration
	// MaxHeaderListSize bounds a request's header block (uncompressed):
	// gRPC's default, 16 MiB, let 40 connections hold 1.4 GB.
	MaxHeaderListSize uint32
}

// DefaultLimits are the limits of NewGRPCServer.
var DefaultLimits = Limits{
	MaxStreamsPerConn: 100,
	MaxActiveStreams:  256,
	MaxBuffered:       64 << 20,
	QueueTimeout:      10 * time.Second,
	StallTimeout:      30 * time.Second,
	StallGrace:        time.Second,
	MaxConnectionIdle: 30 * time.Minute,
	HandshakeTimeout:  10 * time.Second,
	MaxHeaderListSize: 32 << 10,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	return Limits{
		MaxStreamsPerConn: cmp.Or(l.MaxStreamsPerConn, d.MaxStreamsPerConn),
		MaxActiveStreams:  cmp.Or(max(l.MaxActiveStreams, 0), d.MaxActiveStreams),
		MaxBuffered:       cmp.Or(max(l.MaxBuffered, 0), d.MaxBuffered),
		QueueTimeout:      cmp.Or(max(l.QueueTimeout, 0), d.QueueTimeout),
		StallTimeout:      cmp.Or(max(l.StallTimeout, 0), d.StallTimeout),
		StallGrace:        cmp.Or(max(l.StallGrace, 0), d.StallGrace),
		MaxConnectionIdle: cmp.Or(max(l.MaxConnectionIdle, 0), d.MaxConnectionIdle),
		HandshakeTimeout:  cmp.Or(max(l.HandshakeTimeout, 0), d.HandshakeTimeout),
		MaxHeaderListSize: cmp.Or(l.MaxHeaderListSize, d.MaxHeaderListSize),
	}
}

// connReadBuffer is the size of a connection's read buffer.
const connReadBuffer = 4 << 10

// limitsOption carries Limits through NewGRPCServer's options.
type limitsOption struct {
	grpc.EmptyServerOption
	l Limits
}

// WithLimits is a NewGRPCServer option that replaces DefaultLimits (zero
// fields keep their defaults).
func WithLimits(l Limits) grpc.ServerOption { return limitsOption{l: l} }

// limitOptions returns the server options that apply the limits given in
// opts (or the defaults), and the other options, with the guard that
// applies them.
func limitOptions(opts []grpc.ServerOption) ([]grpc.ServerOption, *guard) {
	var l Limits
	out := make([]grpc.ServerOption, 0, len(opts)+4)
	for _, o := range opts {
		if lo, ok := o.(limitsOption); ok {
			l = lo.l
			continue
		}
		out = append(out, o)
	}
	g := newGuard(l.withDefaults())
	return append(out,
		grpc.MaxConcurrentStreams(g.l.MaxStreamsPerConn),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: g.l.MaxConnectionIdle}),
		grpc.ConnectionTimeout(g.l.HandshakeTimeout),
		grpc.MaxHeaderListSize(g.l.MaxHeaderListSize),
		// Requests are small: a connection's read buffer need not be
		// gRPC's 32 KiB, which hundreds of idle connections would hold.
		grpc.ReadBufferSize(connReadBuffer),
		grpc.Creds(connCreds{insecure.NewCredentials(), g}),
		grpc.ChainUnaryInterceptor(g.unary),
		grpc.ChainStreamInterceptor(g.stream),
	), g
}

// guards maps the servers of NewGRPCServer to their guards, for Drain.
var guards sync.Map // *grpc.Server -> *guard

// drainStall is how long a client may take nothing of what is queued for
// it once the server is stopping.
const drainStall = 100 * time.Millisecond

// Drain tells srv (made by NewGRPCServer) that it is stopping: call it
// before GracefulStop. Streaming calls waiting for a turn fail with
// Unavailable, idle connections are closed, and from then on clients that
// have taken nothing of what is queued for them for 100 ms are
// disconnected, so that clients that do not read (or do not answer the
// GOAWAY's ping) cannot hold the stop up for the whole grace period;
// calls being answered to clients that read go on.
func Drain(srv *grpc.Server) {
	if v, ok := guards.LoadAndDelete(srv); ok {
		g := v.(*guard)
		g.mu.Lock()
		if !g.draining {
			g.draining = true
			close(g.stopping)
		}
		g.mu.Unlock()
		g.check()
	}
}

// connCreds is insecure transport credentials that count what each
// connection writes, and remember the connection in its AuthInfo, so that
// a call can find (and close) the connection it came on.
type connCreds struct {
	credentials.TransportCredentials
	g *guard
}

type connInfo struct {
	credentials.AuthInfo
	conn *trackedConn
}

func (c connCreds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := c.TransportCredentials.ServerHandshake(conn)
	if err != nil {
		return nil, nil, err
	}
	tc := &trackedConn{Conn: conn, g: c.g}
	tc.lastWrite.Store(time.Now().UnixNano())
	if cc, ok := conn.(*capConn); ok {
		// The listener's cap closes idle connections first.
		cc.setBusy(func() bool { return tc.calls.Load() > 0 || tc.pending() > 0 })
	}
	c.g.addConn(tc)
	return tc, connInfo{AuthInfo: info, conn: tc}, nil
}

func (c connCreds) Clone() credentials.TransportCredentials {
	return connCreds{c.TransportCredentials.Clone(), c.g}
}

// trackedConn is a client connection: what was queued for the client and
// what was written to it.
type trackedConn struct {
	net.Conn
	g         *guard
	queued    atomic.Int64 // bytes of answers handed to gRPC
	written   atomic.Int64 // bytes written to the socket
	lastWrite atomic.Int64 // when the socket last took bytes (UnixNano)
	calls     atomic.Int32 // calls being handled
	closed    atomic.Bool
}

func (c *trackedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if n > 0 {
		w := c.written.Add(int64(n))
		c.lastWrite.Store(time.Now().UnixNano())
		// Once everything queued is written, HTTP/2's own bytes (headers,
		// frame headers) are not credit for later answers.
		for q := c.queued.Load(); q < w && !c.queued.CompareAndSwap(q, w); q = c.queued.Load() {
		}
	}
	return n, err
}

func (c *trackedConn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.g.dropConn(c)
	}
	return c.Conn.Close()
}

// queue counts an answer of n bytes (its gRPC framing included).
func (c *trackedConn) queue(m any) {
	if c == nil {
		return
	}
	if pm, ok := m.(proto.Message); ok {
		c.queued.Add(int64(proto.Size(pm)) + 5)
	}
}

// pending is what is queued for the client and not written yet (framing
// and headers count as written, so it errs low).
func (c *trackedConn) pending() int64 {
	return max(c.queued.Load()-c.written.Load(), 0)
}

// stalledFor is how long the client has taken nothing while something is
// queued for it (0 when nothing is).
func (c *trackedConn) stalledFor(now int64) time.Duration {
	if c.pending() == 0 {
		return 0
	}
	return time.Duration(now - c.lastWrite.Load())
}

// connOf returns the connection of the call of ctx, or nil.
func connOf(ctx context.Context) *trackedConn {
	if p, ok := peer.FromContext(ctx); ok {
		if ci, ok := p.AuthInfo.(connInfo); ok {
			return ci.conn
		}
	}
	return nil
}

// guard applies Limits.
type guard struct {
	l Limits

	mu       sync.Mutex
	conns    map[*trackedConn]struct{}   // open connections
	streams  map[*trackedStream]struct{} // every stream being served
	running  int                         // server-streaming calls holding a turn
	queue    []*waiter                   // calls waiting for a turn, first come first served
	watching bool                        // the watchdog runs
	draining bool                        // the server is stopping (Drain)
	stopping chan struct{}               // closed by Drain: waiting calls give up
}

// waiter is a call waiting for a turn; granted is closed when it gets one.
type waiter struct{ granted chan struct{} }

func newGuard(l Limits) *guard {
	return &guard{l: l, conns: map[*trackedConn]struct{}{}, streams: map[*trackedStream]struct{}{}, stopping: make(chan struct{})}
}

func (g *guard) addConn(c *trackedConn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.conns[c] = struct{}{}
	if !g.watching {
		g.watching = true
		go g.watch()
	}
}

func (g *guard) dropConn(c *trackedConn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.conns, c)
}

// trackedStream is a server stream whose sends are timed and counted.
type trackedStream struct {
	grpc.ServerStream
	conn    *trackedConn
	sending atomic.Int64 // when the current SendMsg began (UnixNano), 0 when none
	req     atomic.Pointer[proto.Message]
}

func (s *trackedStream) SendMsg(m any) error {
	s.conn.queue(m)
	s.sending.Store(time.Now().UnixNano())
	err := s.ServerStream.SendMsg(m)
	s.sending.Store(0)
	return err
}

func (s *trackedStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	if pm, ok := m.(proto.Message); ok && err == nil {
		s.req.Store(&pm)
	}
	return err
}

// stalledFor is how long the stream's current send has waited (0 when it
// is not sending).
func (s *trackedStream) stalledFor(now int64) time.Duration {
	if t := s.sending.Load(); t != 0 {
		return time.Duration(now - t)
	}
	return 0
}

func (g *guard) unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	c := connOf(ctx)
	if c != nil {
		c.calls.Add(1)
		defer c.calls.Add(-1)
	}
	resp, err := h(ctx, req)
	if err == nil {
		c.queue(resp)
	}
	if pm, ok := req.(proto.Message); ok {
		err = shortenEcho(err, pm)
	}
	return resp, err
}

func (g *guard) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	ts := &trackedStream{ServerStream: ss, conn: connOf(ss.Context())}
	if ts.conn != nil {
		ts.conn.calls.Add(1)
		defer ts.conn.calls.Add(-1)
	}
	queued := info.IsServerStream && !info.IsClientStream // the registry's streams, not reflection's
	if queued {
		if err := g.acquire(ss.Context()); err != nil {
			return err
		}
	}
	g.mu.Lock()
	g.streams[ts] = struct{}{}
	g.mu.Unlock()
	err := h(srv, ts)
	g.mu.Lock()
	delete(g.streams, ts)
	if queued {
		g.releaseLocked()
	}
	g.mu.Unlock()
	if pm := ts.req.Load(); pm != nil {
		err = shortenEcho(err, *pm)
	}
	return err
}

// acquire waits for a turn to run a streaming call, in arrival order.
// While calls wait, the watchdog disconnects clients with several streams
// stalled for StallGrace (see check), which frees their turns.
func (g *guard) acquire(ctx context.Context) error {
	g.mu.Lock()
	if g.running < g.l.MaxActiveStreams && len(g.queue) == 0 {
		g.running++
		g.mu.Unlock()
		return nil
	}
	w := &waiter{granted: make(chan struct{})}
	g.queue = append(g.queue, w)
	g.mu.Unlock()

	deadline := time.NewTimer(g.l.QueueTimeout)
	defer deadline.Stop()
	var err error
	select {
	case <-w.granted:
		return nil
	case <-ctx.Done():
		err = status.FromContextError(ctx.Err()).Err()
	case <-g.stopping:
		err = status.Error(codes.Unavailable, "the server is stopping")
	case <-deadline.C:
		err = status.Errorf(codes.ResourceExhausted, "server busy: %d streaming calls are running and none of their clients is slow to read; try again", g.l.MaxActiveStreams)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-w.granted:
		// Granted meanwhile: pass the turn on.
		g.releaseLocked()
	default:
		for i, q := range g.queue {
			if q == w {
				g.queue = append(g.queue[:i], g.queue[i+1:]...)
				break
			}
		}
	}
	return err
}

// releaseLocked frees a turn: the first waiting call gets it.
func (g *guard) releaseLocked() {
	if len(g.queue) > 0 {
		w := g.queue[0]
		g.queue[0] = nil
		g.queue = g.queue[1:]
		close(w.granted)
		return
	}
	g.running--
}

// pressureStalled is how many streams a client must have left unread for
// StallGrace to be disconnected while calls wait for a turn: a client
// with one slow stream (one starved of CPU, say) is given StallTimeout.
const pressureStalled = 2

// watch checks the connections (check) four times per StallGrace (per
// drainStall once draining) until none is left.
func (g *guard) watch() {
	for {
		g.mu.Lock()
		if len(g.conns) == 0 {
			g.watching = false
			g.mu.Unlock()
			return
		}
		every := min(g.l.StallTimeout, g.l.StallGrace)
		if g.draining {
			every = drainStall
		}
		g.mu.Unlock()
		time.Sleep(max(every/4, time.Millisecond))
		g.check()
	}
}

// check disconnects the clients that the limits say must go: those that
// have taken nothing of what is queued for them for StallTimeout
// (drainStall once the server is stopping, when idle ones go too); while
// calls wait for a turn,
// those with pressureStalled streams stalled for StallGrace; while more
// than MaxBuffered bytes are queued, those that have taken nothing for
// StallGrace, most bytes first, until the rest is within the bound.
func (g *guard) check() {
	now := time.Now().UnixNano()
	type connStall struct {
		c       *trackedConn
		stalled time.Duration
		pending int64
		streams int // streams stalled for StallGrace
	}
	g.mu.Lock()
	draining := g.draining
	all := make([]connStall, 0, len(g.conns))
	idx := make(map[*trackedConn]int, len(g.conns))
	var total int64
	for c := range g.conns {
		idx[c] = len(all)
		p := c.pending()
		total += p
		all = append(all, connStall{c: c, stalled: c.stalledFor(now), pending: p})
	}
	pressure := len(g.queue) > 0
	if pressure {
		for ts := range g.streams {
			if i, ok := idx[ts.conn]; ok && ts.stalledFor(now) >= g.l.StallGrace {
				all[i].streams++
			}
		}
	}
	limit := g.l.StallTimeout
	if g.draining {
		limit = drainStall
	}
	g.mu.Unlock()

	var evict []*trackedConn
	if total > g.l.MaxBuffered {
		slices.SortFunc(all, func(a, b connStall) int { return cmp.Compare(b.pending, a.pending) })
	}
	for _, cs := range all {
		switch {
		case draining && cs.pending == 0 && cs.c.calls.Load() == 0:
			// Idle: closing it at once spares the stop the GOAWAY round
			// trip, which a client could delay.
			evict = append(evict, cs.c)
		case cs.stalled >= limit,
			pressure && cs.streams >= pressureStalled,
			total > g.l.MaxBuffered && cs.stalled >= g.l.StallGrace:
			evict = append(evict, cs.c)
			total -= cs.pending
		}
	}
	for _, c := range evict {
		// The transport then ends every call of the connection, and their
		// sends return.
		_ = c.Close()
	}
}

// maxEcho is the most bytes of a request's string that an error quotes.
const maxEcho = 256

// shortenEcho cuts, in err's message, the request's string fields longer
// than maxEcho to their first maxEcho bytes and says how long they were: a
// 4 MiB package name is not sent back whole.
func shortenEcho(err error, req proto.Message) error {
	if err == nil || req == nil {
		return err
	}
	st, _ := status.FromError(err)
	msg, changed := st.Message(), false
	req.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.StringKind || fd.IsList() || fd.IsMap() {
			return true
		}
		s := v.String()
		if len(s) <= maxEcho {
			return true
		}
		cut := s[:maxEcho]
		for len(cut) > 0 && !utf8.ValidString(cut) {
			cut = cut[:len(cut)-1]
		}
		tail := fmt.Sprintf("... (%d bytes in all)", len(s))
		if q := strconv.Quote(s); strings.Contains(msg, q) {
			msg, changed = strings.ReplaceAll(msg, q, strconv.Quote(cut)+tail), true
		}
		if strings.Contains(msg, s) {
			msg, changed = strings.ReplaceAll(msg, s, cut+tail), true
		}
		return true
	})
	if !changed {
		return err
	}
	return status.Error(st.Code(), msg)
}
