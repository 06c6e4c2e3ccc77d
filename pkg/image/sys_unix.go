//go:build unix

package image

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on f without blocking; ok is
// false when another process (or descriptor) holds it.
func lockFile(f *os.File) (ok bool, err error) {
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == syscall.EWOULDBLOCK {
		return false, nil
	}
	return err == nil, err
}

// unlockFile releases lockFile's lock.
func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
