package benchbase

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Cost is what a run took.
type Cost struct {
	Wall, CPU time.Duration
}

// MBps is bytes per second of wall time, in MB (10^6 bytes).
func (c Cost) MBps(bytes int64) float64 { return float64(bytes) / c.Wall.Seconds() / 1e6 }

// MBperCPU is bytes per second of CPU time, in MB.
func (c Cost) MBperCPU(bytes int64) float64 { return float64(bytes) / c.CPU.Seconds() / 1e6 }

// CPUTime is the CPU time the process has used, every thread (the
// garbage collector's too).
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// CPUTimeWithChildren is CPUTime plus the CPU time of the process's
// children that have ended and been waited for (executor processes an
// in-process cluster started, once they exited).
func CPUTimeWithChildren() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return CPUTime()
	}
	return CPUTime() + time.Duration(ru.Utime.Nano()+ru.Stime.Nano())
}

// Measure runs fn and returns its cost.
func Measure(fn func() error) (Cost, error) {
	start, cpu := time.Now(), CPUTime()
	err := fn()
	return Cost{Wall: time.Since(start), CPU: CPUTime() - cpu}, err
}

const chunk = 1 << 20

// TCPCopy sends total bytes over a loopback TCP connection in 1 MiB writes
// and reads them on the other end.
func TCPCopy(total int64) (Cost, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Cost{}, err
	}
	defer lis.Close()
	return Measure(func() error {
		done := make(chan error, 1)
		go func() {
			c, err := lis.Accept()
			if err != nil {
				done <- err
				return
			}
			defer c.Close()
			n, err := io.CopyBuffer(io.Discard, c, make([]byte, chunk))
			if err == nil && n != total {
				err = fmt.Errorf("benchbase: received %d of %d bytes", n, total)
			}
			done <- err
		}()
		c, err := net.Dial("tcp", lis.Addr().String())
		if err != nil {
			return err
		}
		buf := make([]byte, chunk)
		for sent := int64(0); sent < total; {
			n := int(min(int64(len(buf)), total-sent))
			if _, err := c.Write(buf[:n]); err != nil {
				c.Close()
				return err
			}
			sent += int64(n)
		}
		if err := c.Close(); err != nil {
			return err
		}
		return <-done
	})
}

// DiskWriteRead writes total bytes to a new file in dir in 1 MiB writes,
// reads them back and removes the file.
func DiskWriteRead(dir string, total int64) (Cost, error) {
	name := filepath.Join(dir, "benchbase-copy")
	defer os.Remove(name)
	return Measure(func() error {
		f, err := os.Create(name)
		if err != nil {
			return err
		}
		defer f.Close()
		buf := make([]byte, chunk)
		for w := int64(0); w < total; {
			n := int(min(int64(len(buf)), total-w))
			if _, err := f.Write(buf[:n]); err != nil {
				return err
			}
			w += int64(n)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{f}, buf)
		if err == nil && n != total {
			err = fmt.Errorf("benchbase: re-read %d of %d bytes", n, total)
		}
		return err
	})
}
