package serve

import (
	"context"
	"fmt"
	"net"
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
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Limits on what the gRPC server holds for its clients.
//
// A server stream's messages are marshalled and queued as the handler
// sends them; HTTP/2 flow control lets the transport queue up to 64 KiB per
// stream that the client has not taken, and a handler sending more then
// waits, holding its goroutine and the message being sent. A client that
// opens streams and never reads them so makes the server hold about
// 100 KiB per stream, without end: thousands of streams took RSS past a
// gigabyte. Hence:
//
//   - a connection may have at most MaxStreamsPerConn calls open at once
//     (HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS; gRPC clients queue the
//     others);
//   - at most MaxActiveStreams server-streaming calls run at once across
//     all connections; a call beyond waits for a turn, at most
//     QueueTimeout, then fails with ResourceExhausted;
//   - a client that has not taken any message of a stream for
//     StallTimeout (or for StallGrace while calls wait for a turn) is
//     disconnected: closing its connection is the one way HTTP/2 leaves a
//     server to drop what it queued for that client, and it ends the
//     client's calls, freeing their turns for others. A client that reads
//     its streams is never affected.
//
// Unary calls are not queued: each holds one answer.
type Limits struct {
	// MaxStreamsPerConn is the most calls open at once on one connection.
	MaxStreamsPerConn uint32
	// MaxActiveStreams is the most server-streaming calls running at once.
	MaxActiveStreams int
	// QueueTimeout is how long a streaming call waits for a turn.
	QueueTimeout time.Duration
	// StallTimeout is how long a stream may wait for its client to read
	// before the client is disconnected.
	StallTimeout time.Duration
	// StallGrace replaces StallTimeout while calls wait for a turn.
	StallGrace time.Duration
}

// DefaultLimits are the limits of NewGRPCServer.
var DefaultLimits = Limits{
	MaxStreamsPerConn: 100,
	MaxActiveStreams:  256,
	QueueTimeout:      10 * time.Second,
	StallTimeout:      30 * time.Second,
	StallGrace:        time.Second,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxStreamsPerConn > 0 {
		d.MaxStreamsPerConn = l.MaxStreamsPerConn
	}
	if l.MaxActiveStreams > 0 {
		d.MaxActiveStreams = l.MaxActiveStreams
	}
	if l.QueueTimeout > 0 {
		d.QueueTimeout = l.QueueTimeout
	}
	if l.StallTimeout > 0 {
		d.StallTimeout = l.StallTimeout
	}
	if l.StallGrace > 0 {
		d.StallGrace = l.StallGrace
	}
	return d
}

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
		grpc.Creds(connCreds{insecure.NewCredentials()}),
		grpc.ChainUnaryInterceptor(g.unary),
		grpc.ChainStreamInterceptor(g.stream),
	), g
}

// guards maps the servers of NewGRPCServer to their guards, for Drain.
var guards sync.Map // *grpc.Server -> *guard

// drainStall is how long a stream may wait for its client to read once
// the server is stopping.
const drainStall = 200 * time.Millisecond

// Drain tells srv (made by NewGRPCServer) that it is stopping: call it
// before GracefulStop. Streaming calls waiting for a turn fail with
// Unavailable, and from then on clients that have not read a stream for
// 200 ms are disconnected, so that clients that do not read cannot hold
// the stop up for the whole grace period.
func Drain(srv *grpc.Server) {
	if v, ok := guards.LoadAndDelete(srv); ok {
		g := v.(*guard)
		g.mu.Lock()
		if !g.draining {
			g.draining = true
			close(g.stopping)
		}
		g.mu.Unlock()
		g.evictStalled(drainStall)
	}
}

// connCreds is insecure transport credentials that remember each
// connection in its AuthInfo, so that a call can find (and close) the
// connection it came on.
type connCreds struct {
	credentials.TransportCredentials
}

type connInfo struct {
	credentials.AuthInfo
	conn net.Conn
}

func (c connCreds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := c.TransportCredentials.ServerHandshake(conn)
	if err != nil {
		return nil, nil, err
	}
	return conn, connInfo{AuthInfo: info, conn: conn}, nil
}

func (c connCreds) Clone() credentials.TransportCredentials {
	return connCreds{c.TransportCredentials.Clone()}
}

// connOf returns the connection of the call of ctx, or nil.
func connOf(ctx context.Context) net.Conn {
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
	streams  map[*trackedStream]struct{} // every stream being served
	running  int                         // server-streaming calls holding a turn
	queue    []*waiter                   // calls waiting for a turn, first come first served
	watching bool                        // the stall watchdog runs
	draining bool                        // the server is stopping (Drain)
	stopping chan struct{}               // closed by Drain: waiting calls give up
}

// waiter is a call waiting for a turn; granted is closed when it gets one.
type waiter struct{ granted chan struct{} }

func newGuard(l Limits) *guard {
	return &guard{l: l, streams: map[*trackedStream]struct{}{}, stopping: make(chan struct{})}
}

// trackedStream is a server stream whose sends are timed.
type trackedStream struct {
	grpc.ServerStream
	conn    net.Conn
	sending atomic.Int64 // when the current SendMsg began (UnixNano), 0 when none
	req     atomic.Pointer[proto.Message]
}

func (s *trackedStream) SendMsg(m any) error {
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
	resp, err := h(ctx, req)
	if pm, ok := req.(proto.Message); ok {
		err = shortenEcho(err, pm)
	}
	return resp, err
}

func (g *guard) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	ts := &trackedStream{ServerStream: ss, conn: connOf(ss.Context())}
	queued := info.IsServerStream && !info.IsClientStream // the registry's streams, not reflection's
	if queued {
		if err := g.acquire(ss.Context()); err != nil {
			return err
		}
	}
	g.track(ts)
	err := h(srv, ts)
	g.untrack(ts, queued)
	if pm := ts.req.Load(); pm != nil {
		err = shortenEcho(err, *pm)
	}
	return err
}

// acquire waits for a turn to run a streaming call, in arrival order.
// While calls wait, clients whose streams have stalled for StallGrace are
// disconnected, which frees their turns.
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
	poll := time.NewTicker(max(g.l.StallGrace/4, time.Millisecond))
	defer poll.Stop()
	var err error
	for err == nil {
		g.evictStalled(g.l.StallGrace)
		select {
		case <-w.granted:
			return nil
		case <-poll.C:
			continue
		case <-ctx.Done():
			err = status.FromContextError(ctx.Err()).Err()
		case <-g.stopping:
			err = status.Error(codes.Unavailable, "the server is stopping")
		case <-deadline.C:
			err = status.Errorf(codes.ResourceExhausted, "server busy: %d streaming calls are running and none of their clients is slow to read; try again", g.l.MaxActiveStreams)
		}
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

func (g *guard) track(ts *trackedStream) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.streams[ts] = struct{}{}
	if !g.watching {
		g.watching = true
		go g.watch()
	}
}

func (g *guard) untrack(ts *trackedStream, queued bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.streams, ts)
	if queued {
		g.releaseLocked()
	}
}

// watch disconnects the clients of streams stalled for StallTimeout (or
// StallGrace while calls wait for a turn), until no stream is left.
func (g *guard) watch() {
	tick := time.NewTicker(max(min(g.l.StallTimeout, g.l.StallGrace, drainStall)/4, 10*time.Millisecond))
	defer tick.Stop()
	for range tick.C {
		g.mu.Lock()
		if len(g.streams) == 0 {
			g.watching = false
			g.mu.Unlock()
			return
		}
		limit := g.l.StallTimeout
		if len(g.queue) > 0 {
			limit = g.l.StallGrace
		}
		if g.draining {
			limit = min(limit, drainStall)
		}
		g.mu.Unlock()
		g.evictStalled(limit)
	}
}

// evictStalled closes the connections of the streams whose current send
// has waited for limit or longer.
func (g *guard) evictStalled(limit time.Duration) {
	now := time.Now().UnixNano()
	var conns []net.Conn
	g.mu.Lock()
	for ts := range g.streams {
		if ts.conn != nil && ts.stalledFor(now) >= limit {
			conns = append(conns, ts.conn)
		}
	}
	g.mu.Unlock()
	for _, c := range conns {
		// Closing twice is harmless; the transport then ends every call
		// of the connection, and their sends return.
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
