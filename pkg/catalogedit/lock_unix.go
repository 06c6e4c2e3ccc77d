//go:build unix

package catalogedit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// tryLock takes f's flock without waiting; ok is false when another open
// file holds a conflicting one.
func tryLock(f *os.File, exclusive bool) (ok bool, err error) {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	for {
		err = unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

func unlockFile(f *os.File) { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// lockHolder names the process holding a flock on f's inode, from
// /proc/locks (Linux; "" elsewhere or when not found): "pid N: COMMAND".
func lockHolder(f *os.File) string {
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		return ""
	}
	dev := uint64(sys.Dev)
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(dev), unix.Minor(dev), sys.Ino)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// 1: FLOCK  ADVISORY  WRITE 1234 00:2a:5678 0 EOF
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" || fields[5] != want {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		if err != nil || pid <= 0 {
			continue
		}
		if pid == os.Getpid() {
			return fmt.Sprintf("pid %d: this process", pid)
		}
		cmd, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		cmdline := strings.TrimSpace(strings.Map(func(r rune) rune {
			if r < ' ' || r == 0x7f {
				return ' ' // NULs between arguments; no control sequence reaches a terminal
			}
			return r
		}, string(cmd)))
		if err != nil || cmdline == "" {
			return fmt.Sprintf("pid %d", pid)
		}
		if len(cmdline) > 200 {
			cmdline = cmdline[:200] + "..."
		}
		return fmt.Sprintf("pid %d: %s", pid, cmdline)
	}
	return ""
}
