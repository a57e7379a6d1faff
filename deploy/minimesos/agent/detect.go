package agent

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// Mesos' fallbacks when a resource cannot be detected
// (src/slave/constants.hpp) and its default port range.
const (
	defaultCPUs   = 1
	defaultMemMB  = 1024
	defaultDiskMB = 10240
	DefaultPorts  = "[31000-32000]"
)

const (
	mib = 1 << 20
	gib = 1 << 30
)

// hostProbe reads the host's capacity; tests replace it.
type hostProbe struct {
	cpus      func() int
	memTotal  func() (uint64, error)           // bytes of physical memory
	diskTotal func(dir string) (uint64, error) // bytes of the file system holding dir
}

var host = hostProbe{cpus: runtime.NumCPU, memTotal: memTotal, diskTotal: diskTotal}

// DetectResources returns the agent's total resources as a Mesos agent
// computes them (Containerizer::resources): the resources of spec (Mesos'
// --resources syntax), plus, for each of cpus, mem, disk and ports that
// spec does not name (with any role), a detected value:
//
//   - cpus: the CPUs this process may use (runtime.NumCPU);
//   - mem: physical memory (MemTotal of /proc/meminfo) less 1 GiB for the
//     system, or half of it below 2 GiB, in MB;
//   - disk: the size of the file system holding workDir (statfs) less
//     5 GiB, or half of it below 10 GiB, in MB;
//   - ports: [31000-32000].
//
// A value that cannot be detected falls back to Mesos' default (1 cpu,
// 1024 MB, 10240 MB) and is reported through warn (which may be nil).
func DetectResources(spec, workDir string, warn func(error)) ([]mesos.Resource, error) {
	return detectResources(spec, workDir, host, warn)
}

func detectResources(spec, workDir string, p hostProbe, warn func(error)) ([]mesos.Resource, error) {
	rs, err := ParseResources(spec)
	if err != nil {
		return nil, err
	}
	named := map[string]bool{}
	for _, r := range rs {
		named[r.Name] = true
	}
	if warn == nil {
		warn = func(error) {}
	}
	if !named["cpus"] {
		cpus := p.cpus()
		if cpus <= 0 {
			warn(fmt.Errorf("agent: detected %d cpus; using %d", cpus, defaultCPUs))
			cpus = defaultCPUs
		}
		rs = append(rs, scalar("cpus", float64(cpus), nil))
	}
	if !named["mem"] {
		mem := float64(defaultMemMB)
		if total, err := p.memTotal(); err != nil || total == 0 {
			warn(fmt.Errorf("agent: detecting memory (using %d MB): %v", defaultMemMB, err))
		} else {
			if total >= 2*gib {
				total -= gib
			} else {
				total /= 2
			}
			mem = float64(total / mib)
		}
		rs = append(rs, scalar("mem", mem, nil))
	}
	if !named["disk"] {
		disk := float64(defaultDiskMB)
		if total, err := p.diskTotal(workDir); err != nil || total == 0 {
			warn(fmt.Errorf("agent: detecting disk of %s (using %d MB): %v", workDir, defaultDiskMB, err))
		} else {
			if total >= 10*gib {
				total -= 5 * gib
			} else {
				total /= 2
			}
			disk = float64(total / mib)
		}
		rs = append(rs, scalar("disk", disk, nil))
	}
	if !named["ports"] {
		ports, err := ParseResources("ports:" + DefaultPorts)
		if err != nil {
			return nil, err
		}
		rs = append(rs, ports...)
	}
	return rs, nil
}

// memTotal reads MemTotal from /proc/meminfo.
func memTotal() (uint64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("unexpected MemTotal line %q", sc.Text())
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("MemTotal: %w", err)
		}
		return kb * 1024, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no MemTotal in /proc/meminfo")
}

// diskTotal is the size of the file system holding dir, as Mesos'
// fs::size (f_blocks × f_frsize).
func diskTotal(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	bs := uint64(st.Frsize)
	if bs == 0 {
		bs = uint64(st.Bsize)
	}
	return st.Blocks * bs, nil
}
