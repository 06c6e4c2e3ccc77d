//go:build unix

package serve

import "syscall"

// fdLimit returns the process's limit on open files (0: unknown). Go
// raises the soft limit to the hard one at start-up.
func fdLimit() int64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<40 {
		return 0
	}
	return int64(rl.Cur)
}
