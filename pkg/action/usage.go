package action

import "fmt"

// UsageError reports options an action cannot run with: a value it does
// not accept or a combination it refuses. It is the caller's mistake, not
// the input's: the opm commands exit with the usage status (2) for it and
// point at --help.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a *UsageError with a formatted message (%w wraps as in
// fmt.Errorf).
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}
