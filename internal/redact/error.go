package redact

import "strings"

// Error returns err with Text applied to its message and every non-empty
// value in values (a token the caller knows, which may be quoted outside a
// URL) replaced by Mask; errors.Is and errors.As still see the original
// chain. A nil err stays nil.
func Error(err error, values ...string) error {
	if err == nil {
		return nil
	}
	return redacted{err: err, values: values}
}

type redacted struct {
	err    error
	values []string
}

func (e redacted) Error() string {
	msg := e.err.Error()
	for _, v := range e.values {
		if v != "" {
			msg = strings.ReplaceAll(msg, v, Mask)
		}
	}
	return Text(msg)
}

func (e redacted) Unwrap() error { return e.err }
