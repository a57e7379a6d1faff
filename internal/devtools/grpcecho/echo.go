package grpcecho

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/flint-mesos/flint/proto/flintpb"
)

const method = "/flint.bench.Echo/Echo"

// desc is the echo service: one bidirectional stream answering every
// ExecutorMessage with a DriverMessage carrying a launch.
var desc = grpc.ServiceDesc{
	ServiceName: "flint.bench.Echo",
	HandlerType: (*any)(nil),
	Streams: []grpc.StreamDesc{{StreamName: "Echo", ServerStreams: true, ClientStreams: true,
		Handler: func(_ any, s grpc.ServerStream) error {
			for {
				in := new(flintpb.ExecutorMessage)
				if err := s.RecvMsg(in); err != nil {
					return nil
				}
				out := &flintpb.DriverMessage{Message: &flintpb.DriverMessage_LaunchTask{LaunchTask: &flintpb.TaskDescription{
					TaskId: in.GetStatusUpdate().GetTaskId(), Function: "noop", Codec: "gob", Input: []byte{3, 4, 0, 0}}}}
				if err := s.SendMsg(out); err != nil {
					return nil
				}
			}
		}}},
}

// Server is a running echo server.
type Server struct {
	srv  *grpc.Server
	lis  net.Listener
	done chan struct{}
}

// Listen starts an echo server on a loopback port.
func Listen() (*Server, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("grpcecho: listen: %w", err)
	}
	s := &Server{srv: grpc.NewServer(grpc.ForceServerCodec(flintpb.Codec{})), lis: lis, done: make(chan struct{})}
	s.srv.RegisterService(&desc, struct{}{})
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(lis)
	}()
	return s, nil
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.lis.Addr().String() }

// Close stops the server and waits for it.
func (s *Server) Close() {
	s.srv.Stop()
	<-s.done
}

// Client is one echo stream.
type Client struct {
	cc     *grpc.ClientConn
	s      grpc.ClientStream
	cancel context.CancelFunc
	uuid   []byte
	done   chan struct{} // one value per answer
	recv   chan struct{} // closed when the receive loop ends
}

// Dial opens an echo stream to addr.
func Dial(addr string, window int) (*Client, error) {
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(flintpb.Codec{})))
	if err != nil {
		return nil, fmt.Errorf("grpcecho: dial %s: %w", addr, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s, err := cc.NewStream(ctx, &desc.Streams[0], method)
	if err != nil {
		cancel()
		_ = cc.Close()
		return nil, fmt.Errorf("grpcecho: open stream to %s: %w", addr, err)
	}
	c := &Client{cc: cc, s: s, cancel: cancel, uuid: make([]byte, 16), done: make(chan struct{}, window), recv: make(chan struct{})}
	go c.receive()
	return c, nil
}

func (c *Client) receive() {
	defer close(c.recv)
	for {
		if err := c.s.RecvMsg(new(flintpb.DriverMessage)); err != nil {
			return
		}
		c.done <- struct{}{}
	}
}

// Run makes n round trips keeping at most window in flight (window must not
// exceed the one given to Dial).
func (c *Client) Run(n, window int) error {
	outstanding := 0
	for i := range n {
		if outstanding == window {
			if err := c.wait(); err != nil {
				return err
			}
			outstanding--
		}
		if err := c.Send(uint64(i + 1)); err != nil {
			return err
		}
		outstanding++
	}
	for ; outstanding > 0; outstanding-- {
		if err := c.wait(); err != nil {
			return err
		}
	}
	return nil
}

// Send starts one round trip; Answers delivers its end. Use Send with
// Answers, or Run, not both at once.
func (c *Client) Send(taskID uint64) error {
	m := &flintpb.ExecutorMessage{Message: &flintpb.ExecutorMessage_StatusUpdate{StatusUpdate: &flintpb.StatusUpdate{
		TaskId: taskID, ExecutorId: "1", State: flintpb.TaskState_TASK_FINISHED, Uuid: c.uuid,
		Result: &flintpb.TaskResult{Value: &flintpb.TaskResult_Inline{Inline: []byte{3, 4, 0, 0}}}}}}
	if err := c.s.SendMsg(m); err != nil {
		return fmt.Errorf("grpcecho: send: %w", err)
	}
	return nil
}

// Answers receives a value per answer from the server.
func (c *Client) Answers() <-chan struct{} { return c.done }

func (c *Client) wait() error {
	select {
	case <-c.done:
		return nil
	case <-c.recv:
		return errors.New("grpcecho: stream ended")
	}
}

// Close ends the stream and waits for its receive loop.
func (c *Client) Close() {
	_ = c.s.CloseSend()
	c.cancel()
	<-c.recv
	_ = c.cc.Close()
}

// ClientMain is a child process's echo client: it dials addr, then for each
// line "N" read from in makes N round trips with at most window in flight
// and writes "done" to out. It returns when in ends.
func ClientMain(addr string, window int, in io.Reader, out io.Writer) error {
	c, err := Dial(addr, window)
	if err != nil {
		return err
	}
	defer c.Close()
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		n, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
		if err != nil {
			return fmt.Errorf("grpcecho: bad command %q: %w", sc.Text(), err)
		}
		if err := c.Run(n, window); err != nil {
			return err
		}
		if _, err := fmt.Fprintln(out, "done"); err != nil {
			return fmt.Errorf("grpcecho: report: %w", err)
		}
	}
	return sc.Err()
}
