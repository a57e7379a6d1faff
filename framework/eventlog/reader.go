package eventlog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/flint-mesos/flint/framework/event"
)

// maxLine bounds one event's line: a longer one is damage, not an event.
const maxLine = 16 << 20

// Report says what Replay read and what it had to skip.
type Report struct {
	Files, Events int
	// Warnings describe damage: where reading stopped and why, unknown
	// events skipped.
	Warnings []string
	// CutOff is set when the last file read ends in the middle of an
	// event: a driver still writing (or killed while writing) the log.
	CutOff bool
}

// File is one file of a log.
type File struct {
	Path  string
	Index int
	Size  int64
	Mod   int64 // modification time, Unix nanoseconds
}

// Files lists an application log's files in order.
func Files(appDir string) ([]File, error) {
	ents, err := os.ReadDir(appDir)
	if err != nil {
		return nil, fmt.Errorf("eventlog: %w", err)
	}
	var out []File
	for _, e := range ents {
		i, ok := fileIndex(e.Name())
		if !ok || e.IsDir() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		out = append(out, File{Path: filepath.Join(appDir, e.Name()), Index: i, Size: fi.Size(), Mod: fi.ModTime().UnixNano()})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Index < out[b].Index })
	return out, nil
}

// fileIndex parses events_<n>.jsonl[.zst].
func fileIndex(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "events_")
	if !ok {
		return 0, false
	}
	rest = strings.TrimSuffix(rest, ".zst")
	num, ok := strings.CutSuffix(rest, ".jsonl")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(num)
	return n, err == nil && n > 0
}

// Apps lists the application ids with a log under dir, sorted.
func Apps(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("eventlog: %w", err)
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if fs, err := Files(filepath.Join(dir, e.Name())); err == nil && len(fs) > 0 {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// Replay feeds the events of the log in appDir to l, in order. It fails
// only when the directory cannot be listed; damage in the files ends the
// replay there, with a warning.
func Replay(appDir string, l event.Listener) (Report, error) {
	files, err := Files(appDir)
	if err != nil {
		return Report{}, err
	}
	var rep Report
	if len(files) == 0 {
		rep.Warnings = append(rep.Warnings, "no event log files in "+appDir)
	}
	for i, f := range files {
		if f.Index != i+1 {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: file %d of the log is missing; events from it on are not shown", filepath.Base(f.Path), i+1))
			return rep, nil
		}
		rep.Files++
		if !replayFile(f.Path, l, &rep) {
			return rep, nil
		}
	}
	return rep, nil
}

// replayFile replays one file; false means it was damaged and the replay
// must stop.
func replayFile(path string, l event.Listener, rep *Report) bool {
	f, err := os.Open(path)
	if err != nil {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: %v", filepath.Base(path), err))
		return false
	}
	defer f.Close()
	return replayStream(filepath.Base(path), f, strings.HasSuffix(path, ".zst"), l, rep)
}

// replayStream replays one file's content, zstd-compressed or not.
func replayStream(name string, in io.Reader, compressed bool, l event.Listener, rep *Report) bool {
	if compressed {
		zr, err := zstd.NewReader(in, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(64<<20))
		if err != nil {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: %v", name, err))
			return false
		}
		defer zr.Close()
		in = zr
	}
	return replayLines(name, bufio.NewReaderSize(in, 64<<10), l, rep)
}

func replayLines(name string, r *bufio.Reader, l event.Listener, rep *Report) bool {
	unknown := 0
	for line := 1; ; line++ {
		b, err := readLine(r)
		if len(b) > 0 && err == nil {
			e, derr := Decode(b)
			switch {
			case errors.Is(derr, errUnknownEvent):
				unknown++
			case derr != nil:
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: line %d is damaged (%v); the log is shown up to line %d", name, line, derr, line-1))
				return false
			default:
				l.OnEvent(e)
				rep.Events++
			}
		}
		switch {
		case err == io.EOF:
			if unknown > 0 {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: %d events of types this Flint does not know were skipped", name, unknown))
			}
			return true
		case err != nil:
			rep.CutOff = errors.Is(err, errTruncated)
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: line %d: %v; the log is shown up to line %d", name, line, err, line-1))
			return false
		}
	}
}

var errTruncated = errors.New("the file ends in the middle of an event (the driver stopped while writing it)")

// readLine returns the next line without its newline. A last line without
// one is a cut-off write: errTruncated.
func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxLine {
			return nil, fmt.Errorf("a line longer than %d bytes", maxLine)
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(buf, []byte("\n")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(buf) == 0:
			return nil, io.EOF
		case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
			return nil, errTruncated
		default:
			return nil, err
		}
	}
}
