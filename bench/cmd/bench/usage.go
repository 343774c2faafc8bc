package main

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// usage is what a process has consumed so far, from /proc: the figures a
// throughput ratio hides. On a shared machine requests/s move with whatever
// else runs; the CPU time and the write syscalls a request costs the server
// do not, or much less.
type usage struct {
	cpu, sys time.Duration // user + system time, and system time alone, every thread
	writes   int64         // write-like syscalls (syscw of /proc/PID/io)
	at       time.Time
}

// clockTick is the unit of /proc/PID/stat's times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// readUsage reads pid's usage ("self" for this process); zero when /proc
// is not there.
func readUsage(pid string) usage {
	u := usage{at: time.Now()}
	if data, err := os.ReadFile("/proc/" + pid + "/stat"); err == nil {
		// The fields after the command, which is in parentheses and may
		// hold spaces: state is the 3rd field, utime the 14th, stime 15th.
		s := string(data)
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			f := strings.Fields(s[i+1:])
			if len(f) > 12 {
				ut, _ := strconv.ParseInt(f[11], 10, 64)
				st, _ := strconv.ParseInt(f[12], 10, 64)
				u.cpu, u.sys = time.Duration(ut+st)*clockTick, time.Duration(st)*clockTick
			}
		}
	}
	if data, err := os.ReadFile("/proc/" + pid + "/io"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "syscw:"); ok {
				u.writes, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			}
		}
	}
	return u
}

// spent is what a process consumed over a stretch of wall time.
type spent struct {
	cpu, sys time.Duration
	writes   int64
	wall     time.Duration
}

// since is what was consumed between then and u.
func (u usage) since(then usage) spent {
	return spent{cpu: u.cpu - then.cpu, sys: u.sys - then.sys, writes: u.writes - then.writes, wall: u.at.Sub(then.at)}
}

// perOp is the CPU time in µs (all, and in the kernel) and the write
// syscalls of each of n operations.
func (s spent) perOp(n int64) (cpuMicros, sysMicros, writes float64) {
	if n <= 0 {
		return 0, 0, 0
	}
	return float64(s.cpu.Microseconds()) / float64(n), float64(s.sys.Microseconds()) / float64(n), float64(s.writes) / float64(n)
}

// busy is the share of one CPU used over the wall time.
func (s spent) busy() float64 {
	if s.wall <= 0 {
		return 0
	}
	return float64(s.cpu) / float64(s.wall)
}
